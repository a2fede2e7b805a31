"""The rows of each batch an import writes sorted by team, project and start (``SORTED_BY``) before they are written
as row groups of ``writer.ROW_GROUP_ROWS`` rows, so a filter on a team, a project or a date range skips the row groups
whose minimum and maximum exclude it.

The sort is of the batch in memory (Arrow's sort, NULLs last), as it is written: no pass reads the rows back. A
month of many batches is sorted batch by batch, not as a whole, so a team's rows are a few row groups of each batch
(``SORTED_WITHIN`` says so in ``dataset.json``).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

SORTED_BY: tuple[str, ...] = ("team", "project", "period_start")
SORTED_WITHIN = "batch"  # the rows are sorted within each batch written, not across a month


def sorted_rows(rows: pa.Table) -> pa.Table:
    """``rows`` sorted by ``SORTED_BY`` (ascending, NULLs last; rows of equal keys keep their order)."""
    order = pc.sort_indices(rows, sort_keys=[(column, "ascending") for column in SORTED_BY])
    return rows.take(order)
