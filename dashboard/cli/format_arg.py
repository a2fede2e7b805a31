"""The ``--format`` option of the commands that import a file: every registered format, by id, with its title."""

from __future__ import annotations

import argparse

from dashboard.ingest.formats import FORMATS


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    """``--format ID``, one of the registered formats, whose help names each with its title."""
    listed = "; ".join(f"{fid}: {fmt.title}" for fid, fmt in FORMATS.items()).replace("%", "%%")
    parser.add_argument("--format", choices=FORMATS, help=f"skip detection and read the file as this format — {listed}")
