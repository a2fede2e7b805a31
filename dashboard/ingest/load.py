"""Import one file or a folder of Parquet parts: decode, detect the format, read it, account for every row."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pandas as pd

from dashboard.ingest import budget, parquet_size
from dashboard.ingest.billing import single_currency
from dashboard.ingest.bounded import LimitExceeded, checked_parts, checked_size, read_regular_file
from dashboard.ingest.decode import Decoded, decode, decode_arrow, refuse_decimal_comma
from dashboard.ingest.detect import detect_format
from dashboard.ingest.engine import column_plan, read_table
from dashboard.ingest.formats import FORMAT_IDS, FORMATS
from dashboard.ingest.schema import ColumnPlan, ImportReport, ReadOptions, UnreadableFile, issues_frame

Progress = Callable[[float, str], None]
DEFAULT_OPTIONS = ReadOptions()


def _no_progress(fraction: float, stage: str) -> None:
    """Progress sink used when the caller passes none."""


def _import_decoded(
    decoded: Decoded, filename: str, format: str | None, options: ReadOptions, progress: Progress
) -> tuple[pd.DataFrame, ImportReport]:
    """Detect, read and account for a decoded table (refused when the decimal commas asked for contradict it)."""
    table = decoded.table
    if options.decimal_comma:
        refuse_decimal_comma(table, decoded.delimiter, filename)
    progress(0.35, "detecting format")
    format_id = format or detect_format(list(table.columns), filename)
    if format_id not in FORMATS:
        raise UnreadableFile(f"Unknown format {format_id!r}. Known formats: {', '.join(FORMAT_IDS)}.")
    options = replace(options, decimal_comma=options.decimal_comma or decoded.decimal_comma)
    progress(0.45, f"reading {format_id} rows")
    result = read_table(FORMATS[format_id], table, options, filename)
    progress(0.9, "checking totals")
    usage = result.usage
    single_currency(usage["currency"], filename)  # a backstop for formats that do not check it themselves
    rejected = (
        pd.concat([decoded.rejected, result.rejected], ignore_index=True)
        if len(decoded.rejected)
        else result.rejected
    )
    rejected = issues_frame(rejected["line"], rejected["reason"]).sort_values("line", ignore_index=True)
    report = ImportReport(
        format=format_id,
        rows_read=len(table) + len(decoded.rejected),
        rows_used=len(usage),
        excluded=result.excluded,
        rejected=rejected,
        warnings=decoded.warnings + result.warnings,
        model_params=result.model_params,
        run_layout=result.run_layout,
    )
    if not report.balanced:
        raise RuntimeError(f"{format_id} reader lost rows: {report}")
    progress(1.0, "done")
    return usage, report


def import_bytes(
    data: bytes,
    *,
    filename: str = "",
    format: str | None = None,
    options: ReadOptions = DEFAULT_OPTIONS,
    progress: Progress | None = None,
) -> tuple[pd.DataFrame, ImportReport]:
    """Import one uploaded file (CSV/TSV/Parquet, optionally .gz/.zip) into ``(usage, report)``.

    ``format`` overrides detection (one of ``FORMAT_IDS``); ``progress(fraction, stage)`` is called as work
    proceeds. Raises ``UnreadableFile`` with a one-paragraph message when the file cannot be imported.
    The import holds a share of the process's import memory budget until it returns (``budget``): it waits up
    to ``PLANNER_IMPORT_WAIT_S`` for other imports to give memory back, and is refused (``LimitExceeded``, its
    ``ImportsBusy`` kind when others hold the memory) when its estimate does not fit.
    """
    progress = progress or _no_progress
    with budget.reserved(filename, waiting=lambda stage: progress(0.0, stage)):
        return _import_bytes(data, filename, format, options, progress)


def _import_bytes(data: bytes, filename: str, format: str | None, options: ReadOptions, progress: Progress
                  ) -> tuple[pd.DataFrame, ImportReport]:
    progress(0.0, "decoding file")
    detected: dict[str, str] = {}

    def select(columns: list[str]) -> ColumnPlan | None:
        try:
            detected["format"] = format or detect_format(columns, filename)
        except UnreadableFile:
            return None  # read everything; the refusal comes after decode's own checks (e.g. no data rows)
        fmt = FORMATS.get(detected["format"])
        return column_plan(fmt, columns) if fmt else None

    decoded = decode(data, filename, select)
    return _import_decoded(decoded, filename, format or detected.get("format"), options, progress)


def import_path(
    path: str | Path,
    *,
    format: str | None = None,
    options: ReadOptions = DEFAULT_OPTIONS,
    progress: Progress | None = None,
) -> tuple[pd.DataFrame, ImportReport]:
    """Import a file, or a folder of Parquet parts (read as one table, rows numbered across parts), within the
    process's import memory budget as ``import_bytes``."""
    path = Path(path)
    progress = progress or _no_progress
    with budget.reserved(path.name, waiting=lambda stage: progress(0.0, stage)):
        return _import_path(path, format, options, progress)


def _import_path(path: Path, format: str | None, options: ReadOptions, progress: Progress
                 ) -> tuple[pd.DataFrame, ImportReport]:
    if path.is_dir():
        import pyarrow as pa

        parts = checked_parts(path.rglob("*.parquet"), path)
        if not parts:
            raise UnreadableFile(
                f"The folder {path.name} holds no .parquet files. Upload a file, or a folder "
                "of Parquet parts of one export."
            )
        progress(0.0, "reading Parquet parts")
        name = f"The Parquet parts in {path.name}"
        readers = [parquet_size.file_reader(part) for part in parts]
        try:
            files = [(parquet_size.open_checked(part, read_at, part.stat().st_size, name), read_at)
                     for part, (read_at, _) in zip(parts, readers, strict=True)]
            parquet_size.measured(files, name)
            allocated = parquet_size.AllocationWatch(name)
            table = pa.concat_tables([parquet.read() for parquet, _ in files])  # strings as dictionaries
            allocated.check()
        except LimitExceeded:
            raise
        except (OSError, ValueError) as exc:
            raise UnreadableFile(
                f"The Parquet parts in {path.name} cannot be read together ({exc}). Check that "
                "they come from one export with one schema."
            ) from None
        finally:
            for _, close in readers:
                close()
        return _import_decoded(decode_arrow(table), path.name, format, options, progress)
    if not path.exists():
        raise UnreadableFile(f"{path} does not exist.")
    budget.need(checked_size(path), path.name, "reading the file")
    return import_bytes(
        read_regular_file(path), filename=path.name, format=format, options=options, progress=progress
    )
