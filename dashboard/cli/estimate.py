"""`scenario_outputs`: every output of the plan model for one scenario, optionally with Monte Carlo ranges."""

from __future__ import annotations

import argparse
from typing import Any

from dashboard.cli.output import fail, from_catalogue, print_json, print_table
from dashboard.cli.scenario_args import add_scenario_arguments, load_scenario


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("estimate", help="GPU-hours, dollars, storage and risk of a scenario")
    add_scenario_arguments(parser, positional=True)
    parser.add_argument("--monte-carlo", type=int, metavar="N",
                        help="add P10/P50/P90, the chance of exceeding the budget and the tornado from N draws "
                             "over the scenario's range_* keys; the budget status then follows that chance, as on "
                             "the Plan page ('at risk' above the page's threshold)")
    parser.add_argument("--seed", type=int, default=0, help="random seed for --monte-carlo (default 0)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dashboard.core.engine import scenario_outputs
    from dashboard.core.risk import budget_verdict
    from dashboard.core.scenario import ScenarioError

    try:
        scenario = load_scenario(args)
    except ScenarioError as error:
        return fail(str(error))
    result: dict[str, Any] = {**scenario_outputs(scenario)}  # the Monte Carlo summary's keys join the plan's
    summary = None
    if args.monte_carlo is not None:
        from dashboard.core.uncertainty import monte_carlo

        try:
            summary = monte_carlo(scenario, args.monte_carlo, args.seed).summary()
        except ValueError as error:
            return fail(f"--monte-carlo: {error}")
        result.update(summary)
    result["budget_status"] = budget_verdict(result, summary)  # the Plan tile's, Compare's and the report's verdict
    if args.json:
        print_json(result)
    else:
        print_table(result, _describe)
    return 0


def _describe(name: str, value: Any) -> tuple[str, str]:
    """The catalogue's label and text; a programme stage on one line: its cost, then label, GPU-hours and days."""
    if name != "programme.stages[]":
        return from_catalogue(name, value)
    from dashboard.core.compare import stage_text

    return (f"{value['label']}: {stage_text('gpu_hours', value['gpu_hours'])} GPU-hours, "
            f"{stage_text('calendar_days', value['calendar_days'])}"), stage_text("cost_usd", value["cost_usd"])
