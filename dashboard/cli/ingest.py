"""`python -m dashboard ingest FILE`: import a billing export or run log and print the import summary."""

from __future__ import annotations

import argparse
from pathlib import Path

from dashboard.cli.output import fail, print_json, print_table
from dashboard.ingest.schema import FORMATS, ReadOptions, UnreadableFile
from dashboard.safe_text import preview


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


_DOT_DECIMAL = r"^\s*-?\d+\.(\d{1,2}|\d{4,})\s*$"  # a point that cannot be a thousands separator
_SAMPLE_BYTES = 1 << 20


def _refuse_dot_decimals(data: bytes, filename: str) -> None:
    """UnreadableFile when ``--decimal-comma`` meets a file whose numbers plainly use decimal points.

    Read with decimal commas, ``105.1372`` becomes 1,051,372: a column whose cells (in the first MiB) mostly
    have a point followed by other than three digits is evidence enough to refuse rather than inflate.
    """
    from dashboard.ingest.decode import decode

    if data[:4] == b"PAR1":
        raise UnreadableFile(f"--decimal-comma applies to delimited text, and {filename} is Parquet (its numbers "
                             "are stored as numbers). Drop --decimal-comma.")
    sample = data[:_SAMPLE_BYTES]
    try:
        table = decode(sample[: sample.rfind(b"\n") + 1] or sample, filename).table
    except UnreadableFile:
        return  # the whole file's import gives the real message
    for column in table.columns:
        cells = table[column].dropna()
        if len(cells) and cells.str.match(_DOT_DECIMAL).mean() >= 0.5:
            example = cells[cells.str.match(_DOT_DECIMAL)].iloc[0].strip()
            raise UnreadableFile(
                f"--decimal-comma reads '.' as a thousands separator, but column {preview(column)!r} of {filename} "
                f"holds numbers with decimal points (e.g. {preview(example)!r}), which it would inflate. Drop "
                "--decimal-comma."
            )


def run(args: argparse.Namespace) -> int:
    """Import ``args.file`` and print its summary; 2 with a one-line message when it cannot be read."""
    from dashboard.ingest import import_bytes, import_path
    from dashboard.ingest.bounded import inflate, read_regular_file
    from dashboard.retro.summary import describe, summarize

    path = Path(args.file)
    if not path.exists():
        return fail(f"{args.file}: no such file or folder")
    if args.map and args.format != "generic":
        return fail("--map applies only with --format generic (it names the columns of a table in no known "
                    "format); add --format generic, or drop --map to read a known export.")
    try:
        options = ReadOptions(
            timezone=args.timezone, decimal_comma=args.decimal_comma, mapping=_mapping(args.map)
        )
        if args.decimal_comma and not path.is_dir():
            data, filename = inflate(read_regular_file(path), path.name)
            _refuse_dot_decimals(data, filename)
            usage, report = import_bytes(data, filename=filename, format=args.format, options=options)
        else:
            usage, report = import_path(path, format=args.format, options=options)
    except (UnreadableFile, ValueError, OSError) as exc:
        return fail(" ".join(str(exc).split()))
    except MemoryError:
        return fail(f"{path.name} needs more memory than this machine has free. Export a shorter period or split "
                    "the export into parts and import them one by one.")
    summary = summarize(usage, report)
    if args.json:
        print_json(summary)
    else:
        print_table(
            {k: v for k, v in summary.items() if k not in ("rejected_sample", "warnings") and v != {}},
            describe(summary),
        )
        for item in summary["rejected_sample"]:
            print(f"rejected line {item['line']}: {item['reason']}")
        for warning in summary["warnings"]:
            print(f"warning: {warning}")
    return 0
