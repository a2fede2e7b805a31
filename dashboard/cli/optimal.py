"""`optimal`: the compute-optimal plan for a budget (question a) or for a target loss (question b)."""

from __future__ import annotations

import argparse
import math

from dashboard.cli.output import fail, print_json, print_table
from dashboard.cli.scenario_args import add_scenario_arguments, load_scenario


def _finite(text: str) -> float:
    """A finite number for argparse: `nan`, `inf` and 400-digit overflows are refused with a short quote."""
    from dashboard.safe_text import preview

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{preview(text, 20)!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{preview(text, 20)!r} is not a finite number")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("optimal", help="compute-optimal model size and tokens for a budget or a target loss")
    goal = parser.add_mutually_exclusive_group(required=True)
    goal.add_argument("--budget-usd", type=_finite, help="whole-project budget in US dollars (the scenario's "
                      "budget_usd bounds)")
    goal.add_argument("--target-loss", type=_finite, help="target training loss (nats per token)")
    add_scenario_arguments(parser, positional=False)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dashboard.core.questions import optimal_for_budget, optimal_for_target_loss
    from dashboard.core.scenario import ScenarioError, budget_bounds

    try:
        scenario = load_scenario(args)
        if args.budget_usd is not None:
            low, high = budget_bounds()
            if not low <= args.budget_usd <= high:
                return fail(f"--budget-usd {args.budget_usd:.6g} is out of range (allowed: ≥ {low:g} and ≤ {high:g})")
            result = optimal_for_budget(scenario, args.budget_usd)
        else:
            result = optimal_for_target_loss(scenario, args.target_loss)
    except (ScenarioError, ValueError) as error:
        return fail(str(error))
    (print_json if args.json else print_table)(result)
    return 0
