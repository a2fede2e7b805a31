"""Importing a file into a workspace dataset: in memory when it is small, streamed in bounded batches when large.

A file under ``STREAM_MIN_BYTES`` goes through today's in-memory import (``ingest.import_path``), so small
exports keep its speed; a larger one through ``ingest.stream``, whose memory does not grow with the file.
A file the streamed reader cannot read row for row (blank lines, cells with line breaks, a zip, another
encoding) falls back to the in-memory import when it is within ``PLANNER_MAX_IMPORT_MB``, and is refused with
the reason otherwise. The dataset is built in a hidden folder and moved into place when complete, so a failed
import leaves the workspace as it was.
"""

from __future__ import annotations

import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path

from dashboard import settings
from dashboard.ingest import import_path
from dashboard.ingest.load import DEFAULT_OPTIONS, Progress
from dashboard.ingest.schema import ImportReport, ReadOptions, UnreadableFile
from dashboard.ingest.stream import NotStreamable, stream_import
from dashboard.workspace.datasets import USAGE, DatasetError, Metadata, checked_name, folder, root, write_metadata
from dashboard.workspace.writer import MonthWriter

STREAM_MIN_BYTES = 64_000_000


def _source_bytes(source: Path) -> int:
    if source.is_dir():
        return sum(p.stat().st_size for p in source.rglob("*.parquet") if p.is_file())
    return source.stat().st_size


def _in_memory(source: Path, writer: MonthWriter, format: str | None, options: ReadOptions, batch_rows: int,
               progress: Progress | None) -> ImportReport:
    usage, report = import_path(source, format=format, options=options, progress=progress)
    for start in range(0, len(usage), batch_rows):
        writer.write(usage.iloc[start:start + batch_rows])
    return report


def _metadata(name: str, source: Path, size: int, writer: MonthWriter, report: ImportReport,
              streamed: bool) -> Metadata:
    usage = writer.folder
    months = sorted(p.name.split("=", 1)[1] for p in usage.glob("*=*") if p.is_dir()) if usage.is_dir() else []
    return Metadata(
        name=name, source=source.name, source_bytes=size, imported_at=datetime.now(UTC).isoformat(timespec="seconds"),
        rows=writer.rows, bytes=sum(p.stat().st_size for p in usage.rglob("*.parquet")) if usage.is_dir() else 0,
        start=writer.start.isoformat() if writer.start is not None else None,
        end=writer.end.isoformat() if writer.end is not None else None, months=months, streamed=streamed,
        report={"format": report.format, "rows_read": report.rows_read, "rows_used": report.rows_used,
                "rows_excluded": report.rows_excluded, "rows_rejected": report.rows_rejected,
                "warnings": list(report.warnings)},
    )


def import_to_workspace(source: str | Path, name: str, *, format: str | None = None,
                        options: ReadOptions = DEFAULT_OPTIONS, batch_rows: int | None = None,
                        progress: Progress | None = None, replace: bool = False,
                        stream_min_bytes: int = STREAM_MIN_BYTES) -> Metadata:
    """Import the file or Parquet folder ``source`` into the workspace dataset ``name``; its metadata.

    Raises DatasetError for a bad or taken name (unless ``replace``), UnreadableFile as the import does.
    """
    source = Path(source)
    target = folder(checked_name(name))
    if target.exists() and not replace:
        raise DatasetError(f"The workspace already has a dataset {name}; choose another name or replace it.")
    if not source.exists():
        raise UnreadableFile(f"{source.name} does not exist.")
    batch_rows = batch_rows or settings.limit(settings.STREAM_BATCH_ROWS)
    size = _source_bytes(source)
    building = root() / f".import-{name}-{uuid.uuid4().hex[:8]}"
    building.mkdir(parents=True)
    writer = MonthWriter(building / USAGE)
    try:
        streamed = size >= stream_min_bytes
        if streamed:
            try:
                report = stream_import(source, writer.write, format=format, options=options,
                                       batch_rows=batch_rows, progress=progress)
            except NotStreamable as reason:
                writer.close()
                shutil.rmtree(building / USAGE, ignore_errors=True)
                writer = MonthWriter(building / USAGE)
                if size > settings.megabytes(settings.MAX_IMPORT_MB):
                    raise UnreadableFile(
                        f"{source.name} cannot be imported in batches ({reason}), and at {size / 1e6:,.0f} MB it "
                        f"is larger than the {settings.limit(settings.MAX_IMPORT_MB):,} MB read in one piece "
                        f"({settings.MAX_IMPORT_MB}). Export it as a UTF-8 CSV with one row per line, or as "
                        "Parquet, or split it into parts.") from None
                streamed = False
        if not streamed:
            report = _in_memory(source, writer, format, options, batch_rows, progress)
        writer.close()
        info = _metadata(name, source, size, writer, report, streamed)
        write_metadata(building, info, report)
        if target.exists():
            old = root() / f".replaced-{name}-{uuid.uuid4().hex[:8]}"
            target.rename(old)
            building.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            building.rename(target)
        return info
    finally:
        writer.close()
        if building.exists():
            shutil.rmtree(building, ignore_errors=True)
