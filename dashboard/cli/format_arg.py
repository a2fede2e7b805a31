"""The ``--format`` option of the commands that import a file: every registered format, by id, with its title; the
``--timezone`` value checked before any file is read (a bad one quoted in a short preview)."""

from __future__ import annotations

import argparse
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dashboard.ingest.formats import FORMATS
from dashboard.safe_text import preview


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    """``--format ID``, one of the registered formats, whose help names each with its title."""
    listed = "; ".join(f"{fid}: {fmt.title}" for fid, fmt in FORMATS.items()).replace("%", "%%")
    parser.add_argument("--format", choices=FORMATS, help=f"skip detection and read the file as this format — {listed}")


def checked_timezone(value: str | None) -> str | None:
    """``value`` when it is None or a known IANA time zone; ValueError quoting at most a preview of it otherwise
    (a 100 KB value is not echoed whole)."""
    if value is None:
        return None
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"--timezone {preview(value)!r} is not a known time zone name; give an IANA name such as "
                         "Europe/Berlin, America/New_York or UTC.") from None
    return value
