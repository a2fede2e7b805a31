"""`python -m dashboard workspace import|list|export|delete`: the workspace's datasets from a terminal.

``import`` reads a large export in bounded batches into a named dataset (what the Retrospective's "Import to
workspace" does; ``--append`` adds its rows to a dataset), ``list`` prints every dataset's size, date range and
owner, ``export`` writes a dataset, or the rows of it that pass the Retrospective's filters, as one formula-safe
CSV, a batch at a time (no row cap), ``delete`` removes one. The command line acts as the anonymous local user
(`dashboard.identity.LOCAL`): it replaces and deletes datasets without an owner (its own, and those imported with
sign-in off), never a signed-in user's (refused and audited like the page's refusals: `dashboard.workspace.owners`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dashboard.cli.format_arg import add_format_argument, checked_timezone
from dashboard.cli.output import fail, print_json
from dashboard.format import number
from dashboard.ingest.schema import ReadOptions, UnreadableFile
from dashboard.safe_text import preview

EXPORT_BATCH_ROWS = 200_000


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``workspace`` subcommand and its three actions."""
    parser = sub.add_parser("workspace", help="import, list and export workspace datasets",
                            description="Datasets kept as Parquet in PLANNER_WORKSPACE_DIR.")
    actions = parser.add_subparsers(dest="action", required=True, parser_class=type(parser))
    load = actions.add_parser("import", help="import an export into a dataset, in batches when it is large")
    load.add_argument("file", help="CSV/TSV (optionally .gz), Parquet file or folder of Parquet parts")
    load.add_argument("name", help="dataset name: letters, digits, '.', '_' or '-'")
    add_format_argument(load)
    load.add_argument("--timezone", help="IANA time zone of naive local times")
    change = load.add_mutually_exclusive_group()
    change.add_argument("--replace", action="store_true",
                        help="replace a dataset of that name (one without an owner: not a signed-in user's)")
    change.add_argument("--append", action="store_true",
                        help="add the file's rows to the dataset of that name (only the months they fall in are "
                             "sorted and rolled up again)")
    load.set_defaults(func=_import)
    listing = actions.add_parser("list", help="the datasets with their rows, size, date range and owner")
    listing.set_defaults(func=_list)
    export = actions.add_parser("export", help="write a dataset (optionally filtered) as one CSV")
    export.add_argument("name")
    export.add_argument("out", help="the CSV file to write ('-' for standard output)")
    export.add_argument("--start", help="first UTC day (YYYY-MM-DD) of period_start")
    export.add_argument("--end", help="last UTC day (YYYY-MM-DD) of period_start")
    for field in ("team", "project", "pricing"):
        export.add_argument(f"--{field}", action="append", metavar=field.upper(),
                            help=f"keep this {field} (repeatable; '(untagged)' for none)")
    export.set_defaults(func=_export)
    remove = actions.add_parser("delete", help="delete a dataset (one without an owner: not a signed-in user's)")
    remove.add_argument("name")
    remove.set_defaults(func=_delete)


def _import(args: argparse.Namespace) -> int:
    from dashboard.workspace.datasets import DatasetError
    from dashboard.workspace.imports import import_to_workspace

    try:
        info = import_to_workspace(Path(args.file), args.name, format=args.format,
                                   options=ReadOptions(timezone=checked_timezone(args.timezone)),
                                   replace=args.replace, append=args.append)
    except (DatasetError, UnreadableFile, OSError, ValueError) as error:
        return fail(" ".join(str(error).split()))
    except MemoryError:
        return fail(f"{Path(args.file).name} needs more memory than this machine has free: it has blank lines or "
                    "multi-line cells, which are read whole. Export it with one row per line.")
    print_json({"name": info.name, "rows": info.rows, "bytes": info.bytes, "start": info.start, "end": info.end,
                "streamed": info.streamed, **info.report,
                "rollups": {entry["name"]: entry["rows"] for entry in info.rollups}})
    return 0


def _list(args: argparse.Namespace) -> int:
    from dashboard.workspace import datasets, owners

    for name in datasets.names():
        try:
            info = datasets.metadata(name)
        except datasets.DatasetError as error:
            print(f"{name}: {error}")
            continue
        print(f"{name}: {info.rows:,} rows, {number(info.bytes, 'bytes')}, {info.start or '-'} to {info.end or '-'}, "
              f"from {info.source}, owner {owners.owner_of(info)}")
    return 0


def _delete(args: argparse.Namespace) -> int:
    from dashboard.workspace.datasets import DatasetError
    from dashboard.workspace.imports import delete_dataset

    try:
        delete_dataset(args.name)
    except (DatasetError, OSError) as error:
        return fail(" ".join(str(error).split()))
    print(f"deleted {args.name}", file=sys.stderr)
    return 0


def _export(args: argparse.Namespace) -> int:
    import pyarrow as pa

    from dashboard.core.safe_csv import to_safe_csv
    from dashboard.query import engine
    from dashboard.retro import filters as view
    from dashboard.workspace import datasets

    try:
        at = datasets.current(args.name)  # one version throughout, while another import may replace it
        datasets.metadata(args.name, at)
        sink = sys.stdout.buffer if args.out == "-" else open(args.out, "wb")  # noqa: SIM115 - closed below
    except (datasets.DatasetError, OSError) as error:
        return fail(" ".join(str(error).split()))
    rows, header = 0, False
    try:
        try:
            backend = engine.default()
            kept_view = view.filtered(datasets.open_table(backend, args.name, at), args.start, args.end, args.team,
                                      args.project, args.pricing)
            for batch in backend.to_pyarrow_batches(kept_view, chunk_size=EXPORT_BATCH_ROWS):
                kept = datasets.to_frame(pa.Table.from_batches([batch]))
                if header and not len(kept):
                    continue
                text = to_safe_csv(kept)
                sink.write(text.split(b"\n", 1)[1] if header else text)
                header = True
                rows += len(kept)
        finally:
            if sink is not sys.stdout.buffer:
                sink.close()  # flushes: a full disk may raise here
            else:
                sink.flush()
    except ValueError as error:
        return fail(" ".join(str(error).split()))
    except OSError as error:
        return fail(_write_failure(args.out, error))
    print(f"{rows:,} rows written", file=sys.stderr)
    return 0


def _write_failure(out: str, error: OSError) -> str:
    """One line for a CSV that could not be written: a full device, or another error by its name."""
    import errno

    target = "standard output" if out == "-" else preview(out)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return (f"No space left on the device of {target}: the CSV is incomplete. Free some space or write it "
                "elsewhere, and export again.")
    return f"{target} could not be written ({error.strerror or type(error).__name__}): the CSV is incomplete."
