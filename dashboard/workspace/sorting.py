"""The rows of a month partition sorted at import by team, project and start (``SORTED_BY``), so a filter on a team,
a project or a date range skips whole row groups by their minimum and maximum.

The sort is a query of the engine layer (DuckDB at import: it spills past its memory limit,
``PLANNER_DUCKDB_MEMORY_LIMIT``, so memory stays bounded); its rows stream out a row group at a time into the
writer's own Parquet writer (``writer.SCHEMA``, zstd level 1: the same file the import writes, and cheaper than the
engine's writer). The month's files are replaced by one sorted file.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from ibis.backends import BaseBackend

from dashboard.workspace.writer import SCHEMA

SORTED_BY: tuple[str, ...] = ("team", "project", "period_start")
SORTED_FILE = "sorted-0.parquet"
ROW_GROUP_ROWS = 122_880  # DuckDB's row group: a filter skips the groups whose minimum and maximum exclude it


def sort_month(backend: BaseBackend, month_folder: Path) -> None:
    """Replace the Parquet files of ``month_folder`` by one file of their rows sorted by ``SORTED_BY``."""
    parts = sorted(month_folder.glob("*.parquet"))
    if not parts:
        return
    rows = backend.read_parquet([str(p) for p in parts], hive_partitioning=False).select(*SCHEMA.names)
    staged = month_folder / f".{SORTED_FILE}"
    batches = backend.to_pyarrow_batches(rows.order_by(list(SORTED_BY)), chunk_size=ROW_GROUP_ROWS)
    with pq.ParquetWriter(staged, SCHEMA, compression="zstd", compression_level=1) as sink:
        for batch in batches:
            sink.write_table(pa.Table.from_batches([batch]).cast(SCHEMA), row_group_size=ROW_GROUP_ROWS)
    for part in parts:
        part.unlink()
    staged.rename(month_folder / SORTED_FILE)
