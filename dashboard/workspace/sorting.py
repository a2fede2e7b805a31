"""The rows of a month partition sorted at import by team, project and start (``SORTED_BY``), so a filter on a team,
a project or a date range skips whole row groups by their minimum and maximum.

The sort is a query of the engine layer (DuckDB at import: it spills past its memory limit,
``PLANNER_DUCKDB_MEMORY_LIMIT``, so memory stays bounded); the month's files are replaced by one sorted file.
"""

from __future__ import annotations

from pathlib import Path

from ibis.backends import BaseBackend

SORTED_BY: tuple[str, ...] = ("team", "project", "period_start")
SORTED_FILE = "sorted-0.parquet"
ROW_GROUP_ROWS = 122_880  # DuckDB's row group: a filter skips the groups whose minimum and maximum exclude it


def sort_month(backend: BaseBackend, month_folder: Path) -> None:
    """Replace the Parquet files of ``month_folder`` by one file of their rows sorted by ``SORTED_BY``."""
    parts = sorted(month_folder.glob("*.parquet"))
    if not parts:
        return
    rows = backend.read_parquet([str(p) for p in parts])
    staged = month_folder / f".{SORTED_FILE}"
    backend.to_parquet(rows.order_by(list(SORTED_BY)), str(staged), compression="zstd",
                       compression_level=1, row_group_size=ROW_GROUP_ROWS)  # the writer's level
    for part in parts:
        part.unlink()
    staged.rename(month_folder / SORTED_FILE)
