"""`python -m dashboard ingest FILE`: import a billing export or run log and print the import summary."""

from __future__ import annotations

import argparse
from pathlib import Path

from dashboard.cli.output import fail, print_json, print_table
from dashboard.ingest.schema import FORMATS, ReadOptions, UnreadableFile


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
    parser.add_argument("--format", choices=FORMATS, help="skip detection and read the file as this format")
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


def run(args: argparse.Namespace) -> int:
    """Import ``args.file`` and print its summary; 2 with a one-line message when it cannot be read."""
    from dashboard.ingest import import_path
    from dashboard.retro.summary import summarize

    path = Path(args.file)
    if not path.exists():
        return fail(f"{args.file}: no such file or folder")
    try:
        options = ReadOptions(
            timezone=args.timezone, decimal_comma=args.decimal_comma, mapping=_mapping(args.map)
        )
        usage, report = import_path(path, format=args.format, options=options)
    except (UnreadableFile, ValueError, OSError) as exc:
        return fail(" ".join(str(exc).split()))
    summary = summarize(usage, report)
    if args.json:
        print_json(summary)
    else:
        print_table(
            {k: v for k, v in summary.items() if k not in ("rejected_sample", "warnings") and v != {}}
        )
        for item in summary["rejected_sample"]:
            print(f"rejected line {item['line']}: {item['reason']}")
        for warning in summary["warnings"]:
            print(f"warning: {warning}")
    return 0
