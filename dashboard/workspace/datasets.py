"""Datasets of the workspace: their names, their metadata file, listing them and opening them.

A dataset is the folder ``<workspace>/<name>/`` holding ``usage/`` (the canonical table, partitioned by month),
``dataset.json`` (rows, bytes, date range, source file and the import report's counts and notes) and the
report's excluded and rejected rows as ``excluded.parquet`` and ``rejected.parquet``. Names are short words
of letters, digits, ``.``, ``_`` and ``-`` that start with a letter or digit, so no name reaches outside the
workspace folder; a name is checked before any path is built from it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dashboard import settings
from dashboard.ingest.schema import ImportReport, issues_frame
from dashboard.workspace.writer import PARTITION, SCHEMA, to_frame

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
METADATA = "dataset.json"
USAGE = "usage"
EXCLUDED = "excluded.parquet"
REJECTED = "rejected.parquet"
VERSION = 1


class DatasetError(ValueError):
    """A dataset name that is not allowed, or a dataset that is missing or damaged; the message says which."""


@dataclass(frozen=True)
class Metadata:
    """What ``dataset.json`` says about a dataset."""

    name: str
    source: str  # the imported file's name
    source_bytes: int
    imported_at: str  # ISO 8601, UTC
    rows: int
    bytes: int  # Parquet bytes of the usage table
    start: str | None  # earliest period_start (ISO 8601), None without times
    end: str | None  # latest period_end
    months: list[str]
    streamed: bool  # read in batches (False: the in-memory import)
    report: dict = field(default_factory=dict)  # format, rows_read, rows_used, rows_excluded, rows_rejected, warnings
    version: int = VERSION

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Metadata:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise DatasetError("The dataset's dataset.json is not one this version wrote; import the file again.")
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)


def checked_name(name: str) -> str:
    """``name`` when it is an allowed dataset name; DatasetError otherwise."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or ".." in name:
        shown = repr(name[:40]) if isinstance(name, str) else type(name).__name__
        raise DatasetError(f"{shown} is not a dataset name: use 1 to 64 letters, digits, '.', '_' or '-', starting "
                           "with a letter or digit (for example q2-2025_focus).")
    return name


def root() -> Path:
    """The workspace folder (``PLANNER_WORKSPACE_DIR``)."""
    return settings.workspace_dir()


def folder(name: str) -> Path:
    """The folder of dataset ``name`` (checked), inside the workspace folder."""
    base = root()
    path = base / checked_name(name)
    if path.resolve().parent != base.resolve():
        raise DatasetError(f"The dataset {name} leads outside the workspace folder, so it is not opened.")
    return path


def write_metadata(path: Path, metadata: Metadata, report: ImportReport) -> None:
    """``dataset.json`` and the report's excluded and rejected rows, in the dataset folder ``path``."""
    report.excluded.to_parquet(path / EXCLUDED, index=False)
    report.rejected.to_parquet(path / REJECTED, index=False)
    (path / METADATA).write_text(metadata.to_json(), encoding="utf-8")


def metadata(name: str) -> Metadata:
    """The metadata of dataset ``name``; DatasetError when it is missing or damaged."""
    path = folder(name) / METADATA
    try:
        return Metadata.from_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"There is no dataset {name} in the workspace {root()}.") from None
    except (OSError, ValueError, TypeError) as error:
        if isinstance(error, DatasetError):
            raise
        raise DatasetError(f"The metadata of dataset {name} cannot be read ({type(error).__name__}); import the "
                           "file again.") from None


def report(name: str) -> ImportReport:
    """The import report of dataset ``name``, with its excluded and rejected rows."""
    info = metadata(name).report
    path = folder(name)
    issues = []
    for file in (EXCLUDED, REJECTED):
        frame = pd.read_parquet(path / file)
        issues.append(issues_frame(frame["line"], frame["reason"]))
    return ImportReport(format=info["format"], rows_read=info["rows_read"], rows_used=info["rows_used"],
                        excluded=issues[0], rejected=issues[1], warnings=list(info["warnings"]))


def names() -> list[str]:
    """The datasets of the workspace, by name (folders with a metadata file and an allowed name)."""
    base = root()
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir()
                  if p.is_dir() and NAME.fullmatch(p.name) and ".." not in p.name and (p / METADATA).is_file())


def usage_folder(name: str) -> Path:
    """The month-partitioned Parquet folder of dataset ``name``."""
    return folder(name) / USAGE


def open_table(backend, name: str):
    """Dataset ``name`` as an Ibis table of ``backend`` (its ``read_parquet``), the canonical columns only.

    DuckDB reads the month folders with ``hive_partitioning``; other engines (Spark) find them themselves.
    """
    path = usage_folder(name)
    metadata(name)  # a clear message for a missing dataset
    if getattr(backend, "name", "") == "duckdb":
        table = backend.read_parquet(str(path / "**" / "*.parquet"), hive_partitioning=True)
    else:
        table = backend.read_parquet(str(path))
    return table.drop(PARTITION) if PARTITION in table.columns else table


def batches(name: str, batch_rows: int) -> Iterator[pd.DataFrame]:
    """Dataset ``name`` as canonical frames of at most ``batch_rows`` rows, month by month (bounded memory)."""
    for part in sorted(usage_folder(name).rglob("*.parquet")):
        for batch in pq.ParquetFile(part).iter_batches(batch_size=batch_rows):
            yield to_frame(pa.Table.from_batches([batch]))


def read_frame(name: str, max_rows: int) -> pd.DataFrame:
    """Dataset ``name`` as a canonical pandas frame, refused with a DatasetError above ``max_rows`` rows."""
    info = metadata(name)
    if info.rows > max_rows:
        raise DatasetError(f"The dataset {name} holds {info.rows:,} rows, more than the {max_rows:,} read into "
                           "memory here; its figures are computed where it lies.")
    parts = sorted(usage_folder(name).rglob("*.parquet"))
    if not parts:
        return to_frame(SCHEMA.empty_table())
    return to_frame(pq.read_table([str(p) for p in parts], partitioning=None))
