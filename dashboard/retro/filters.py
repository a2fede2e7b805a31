"""Row selection for the retrospective: what the filter widgets offer, and the labels they use.

Missing tags are never dropped: an NA team, project or run is shown and selected as ``UNTAGGED``
("(untagged)"), an NA pricing tier as ``UNKNOWN_PRICING`` ("(unknown)"); the labels are the query layer's
(``dashboard.query.columns``). The filtered view itself is a query, ``dashboard.query.view.filtered``: the page, the
CLI's export and the report all read that expression, never a filtered copy of the rows.
"""

from __future__ import annotations

import ibis.expr.types as ir
import pandas as pd

from dashboard.query import tables, view
from dashboard.query.labels import NA_LABELS, UNKNOWN_PRICING, UNTAGGED
from dashboard.query.view import ONE_DAY, utc_day

__all__ = ["NA_LABELS", "ONE_DAY", "UNKNOWN_PRICING", "UNTAGGED", "filter_options", "utc_day"]


def filter_options(usage: pd.DataFrame | ir.Table) -> dict:
    """What the filter widgets offer: the distinct labels and the first and last day of period_start.

    Returns ``{"teams": [...], "projects": [...], "pricing": [...], "start": date | None, "end": date | None}``;
    teams and projects are sorted with "(untagged)" last, pricing in the order reserved, on_demand, spot,
    "(unknown)" (only values present). ``start``/``end`` are None for an empty table. A query
    (``dashboard.query.view.filter_options``).
    """
    return view.filter_options(tables.table_of(usage))
