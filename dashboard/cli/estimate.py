"""`estimate`: every output of the plan model for one scenario."""

from __future__ import annotations

import argparse

from dashboard.cli.output import fail, print_json, print_table
from dashboard.cli.scenario_args import add_scenario_arguments, load_scenario


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("estimate", help="GPU-hours, dollars, storage and risk of a scenario")
    add_scenario_arguments(parser, positional=True)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dashboard.core.engine import estimate
    from dashboard.core.scenario import ScenarioError

    try:
        scenario = load_scenario(args)
    except ScenarioError as error:
        return fail(str(error))
    result = estimate(scenario)
    (print_json if args.json else print_table)(result)
    return 0
