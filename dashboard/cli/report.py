"""`report`: one self-contained HTML file comparing 1–4 scenarios for a review meeting."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from dashboard.cli.output import fail

if TYPE_CHECKING:
    from dashboard.core.scenario import Scenario


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "report",
        help="write an HTML report comparing 1-4 scenarios (numbers, ranges, charts, caveats, method)",
        description="Write one self-contained HTML file (no network needed to open it) comparing the scenarios. "
        "Each file holds one scenario object or a JSON array of them.",
    )
    parser.add_argument("scenarios", nargs="+", metavar="SCENARIO.json", help="scenario file or bundle")
    parser.add_argument("-o", "--output", required=True, metavar="REPORT.html", help="where to write the report")
    parser.add_argument("--draws", type=int, default=None, help="Monte Carlo draws per scenario (default 10,000)")
    parser.add_argument("--seed", type=int, default=None, help="Monte Carlo random seed (default 0)")
    parser.add_argument("--title", default=None, help="report title (default 'Pretraining budget options')")
    parser.add_argument("--author", default=None, help="who prepared the report (printed beside the date)")
    parser.add_argument("--app-url", default=None, metavar="URL",
                        help="the planner's address each option's Plan link starts with (default "
                             "http://127.0.0.1:8501, the address `make run` serves)")
    parser.set_defaults(func=run)


def _read(path: Path) -> list[Scenario]:
    """The scenarios in one file; ScenarioError whose message starts with the file name."""
    from dashboard.core.json_input import JSONLimitError, read_json_file
    from dashboard.core.scenario import ScenarioError
    from dashboard.core.scenario_bundle import read_bundle

    try:
        text = read_json_file(path)
    except JSONLimitError as error:
        raise ScenarioError(str(error)) from None
    except OSError as error:
        raise ScenarioError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        return read_bundle(text)
    except ScenarioError as error:
        raise ScenarioError(f"{path}: {error}") from None


def run(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from dashboard.core import uncertainty
    from dashboard.core.compare import MAX_SCENARIOS
    from dashboard.core.scenario import ScenarioError

    draws = uncertainty.DEFAULT_DRAWS if args.draws is None else args.draws
    seed = uncertainty.DEFAULT_SEED if args.seed is None else args.seed
    if not 1 <= draws <= uncertainty.MAX_DRAWS:
        return fail(f"--draws {draws}: use 1 to {uncertainty.MAX_DRAWS:,}")
    if seed < 0:
        return fail(f"--seed {seed}: use a whole number of 0 or more")
    output = Path(args.output)
    if not output.parent.is_dir():
        return fail(f"cannot write {output}: folder {output.parent} does not exist")
    scenarios = []
    try:
        for name in args.scenarios:
            scenarios.extend(_read(Path(name)))
    except ScenarioError as error:
        return fail(str(error))
    if len(scenarios) > MAX_SCENARIOS:
        return fail(f"{len(scenarios)} scenarios given: a report compares at most {MAX_SCENARIOS}")

    from dashboard.report.html import DEFAULT_APP_URL, DEFAULT_TITLE, build_report

    document = build_report(scenarios, generated_at=datetime.now(UTC), draws=draws, seed=seed,
                            title=DEFAULT_TITLE if args.title is None else args.title, author=args.author,
                            app_url=DEFAULT_APP_URL if args.app_url is None else args.app_url)
    data = document.encode("utf-8")
    try:
        output.write_bytes(data)
    except OSError as error:
        return fail(f"cannot write {output}: {error.strerror or error}")
    plural = "" if len(scenarios) == 1 else "s"
    print(f"wrote {output} ({len(data) / 1e6:.1f} MB, {len(data):,} bytes; {len(scenarios)} scenario{plural})")
    return 0
