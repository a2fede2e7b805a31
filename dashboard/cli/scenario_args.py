"""Shared CLI arguments that describe a scenario: an optional JSON file and KEY=VALUE overrides."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dashboard.core.scenario import Scenario


def add_scenario_arguments(parser: argparse.ArgumentParser, *, positional: bool) -> None:
    if positional:
        parser.add_argument("scenario", nargs="?", help="scenario JSON file (default: data/scenarios/default.json)")
    else:
        parser.add_argument("--scenario", help="scenario JSON file (default: data/scenarios/default.json)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override one scenario key")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def load_scenario(args: argparse.Namespace) -> Scenario:
    """The scenario named on the command line, with --set overrides; ScenarioError on any problem."""
    from dashboard.core.json_input import JSONLimitError, read_json_file
    from dashboard.core.scenario import ScenarioError, default_scenario, scenario_from_json, with_overrides

    if args.scenario is None:
        scenario = default_scenario()
    else:
        path = Path(args.scenario)
        try:
            text = read_json_file(path)
        except JSONLimitError as error:
            raise ScenarioError(str(error)) from None
        except OSError as error:
            raise ScenarioError(f"cannot read {path}: {error.strerror or error}") from None
        scenario = scenario_from_json(text)
    return with_overrides(scenario, args.set)
