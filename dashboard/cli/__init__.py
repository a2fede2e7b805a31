"""Command-line interface: thin argparse wrappers over the engine and the import layer.

Every subcommand prints one JSON object with --json, a readable table otherwise, and exits with
status 2 and a one-line message on bad input (never a traceback). Subcommands import the engine or the
import layer inside `run`, so a command only pays for the libraries it uses at start-up.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from dashboard.cli import calibrate, estimate, ingest, optimal, report, workspace

SUBCOMMANDS = (estimate, optimal, ingest, report, workspace, calibrate)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m dashboard", description="Pretraining cost planner.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in SUBCOMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, as Python's docs recommend.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
