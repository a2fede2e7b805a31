"""`python -m dashboard ingest FILE`: import a billing export or run log and print the import summary."""

from __future__ import annotations

import argparse
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from dashboard.cli.format_arg import add_format_argument, checked_timezone
from dashboard.cli.output import fail, print_json, print_table
from dashboard.ingest.bounded import checked_parts, checked_size
from dashboard.ingest.schema import ReadOptions, UnreadableFile

if TYPE_CHECKING:
    from dashboard.retro.summary import ImportSummary


def _mapping(pairs: list[str]) -> dict[str, str] | None:
    """``FIELD=COLUMN`` pairs as a dict; ValueError naming the malformed pair."""
    mapping = {}
    for pair in pairs:
        field, sep, column = pair.partition("=")
        if not sep or not field.strip() or not column.strip():
            raise ValueError(f"--map expects FIELD=COLUMN, got {pair!r}")
        mapping[field.strip()] = column.strip()
    return mapping or None


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``ingest`` subcommand."""
    parser = sub.add_parser(
        "ingest",
        help="import a billing export or run log and summarise it",
        description="Import a billing export (FOCUS, AWS CUR, GCP, Azure) or run log "
        "(Slurm sacct, W&B) and print totals with an account of every row.",
    )
    parser.add_argument(
        "file", help="CSV/TSV/Parquet file (optionally .gz or .zip), or a folder of Parquet parts"
    )
    add_format_argument(parser)
    parser.add_argument("--timezone", help="IANA time zone of naive local times (required for Slurm)")
    parser.add_argument("--decimal-comma", action="store_true", help="numbers are written like 1.234,5")
    parser.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="FIELD=COLUMN",
        help="generic format: which source column holds a canonical field (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _checked_bytes(path: Path) -> int:
    """The bytes of a regular file, or of the Parquet parts of a folder, refused (``LimitExceeded``) before anything
    is read when they pass ``PLANNER_MAX_IMPORT_MB``."""
    if path.is_dir():
        return sum(part.stat().st_size for part in checked_parts(path.rglob("*.parquet"), path))
    return checked_size(path)


def _summary(path: Path, format: str | None, options: ReadOptions) -> ImportSummary:
    """The import summary of ``path``. From ``STREAM_MIN_BYTES`` on, as the workspace import does, the file is read
    in batches and only the sums the summary needs are kept, so memory does not grow with the rows; a file the
    batches cannot read (``NotStreamable``: blank lines, a zip, a run log) is read whole."""
    from dashboard import settings
    from dashboard.ingest import import_path
    from dashboard.ingest.stream import NotStreamable, Totals, stream_import
    from dashboard.retro.summary import summarize
    from dashboard.workspace.imports import STREAM_MIN_BYTES

    if _checked_bytes(path) >= STREAM_MIN_BYTES:
        totals = Totals()
        with suppress(NotStreamable):  # read whole below, its sums so far dropped
            report = stream_import(path, totals.add, format=format, options=options,
                                   batch_rows=settings.limit(settings.STREAM_BATCH_ROWS))
            return summarize(totals.table, report)
    return summarize(*import_path(path, format=format, options=options))


def run(args: argparse.Namespace) -> int:
    """Import ``args.file`` and print its summary; 2 with a one-line message when it cannot be read."""
    from dashboard.retro.summary import describe

    path = Path(args.file)
    if not path.exists():
        return fail(f"{args.file}: no such file or folder")
    if args.map and args.format != "generic":
        return fail("--map applies only with --format generic (it names the columns of a table in no known "
                    "format); add --format generic, or drop --map to read a known export.")
    try:
        options = ReadOptions(
            timezone=checked_timezone(args.timezone), decimal_comma=args.decimal_comma, mapping=_mapping(args.map)
        )
        summary = _summary(path, args.format, options)
    except (UnreadableFile, ValueError, OSError) as exc:
        return fail(" ".join(str(exc).split()))
    except MemoryError:
        return fail(f"{path.name} needs more memory than this machine has free. Export a shorter period or split "
                    "the export into parts and import them one by one.")
    if args.json:
        print_json(summary.as_json())
    else:
        print_table(
            {k: v for k, v in summary.as_json().items() if k not in ("rejected_sample", "warnings") and v != {}},
            describe(summary),
        )
        for item in summary.rejected_sample:
            print(f"rejected line {item.line}: {item.reason}")
        for warning in summary.warnings:
            print(f"warning: {warning}")
    return 0
