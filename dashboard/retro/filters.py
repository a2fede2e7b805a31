"""Row selection for the retrospective: date, team, project and pricing filters, and the labels they use.

Missing tags are never dropped: an NA team, project or run is shown and selected as ``UNTAGGED``
("(untagged)"), an NA pricing tier as ``UNKNOWN_PRICING`` ("(unknown)"); the labels are the query layer's
(``dashboard.query.columns``). ``filter_options`` is a query; ``filter_usage`` selects the rows of an in-memory
table (the page keeps them for its download), and ``dashboard.query.view.filtered`` is the same selection as a
query. The pandas helpers that turn a column into labels and timestamps into integers are in
``dashboard.retro.labels`` (re-exported here), which loads no engine.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from datetime import date

import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.query import tables, view
from dashboard.query.labels import NA_LABELS, UNKNOWN_PRICING, UNTAGGED
from dashboard.query.view import ONE_DAY, utc_day
from dashboard.retro.labels import epoch_ns, group_codes, group_labels

_CODES: dict[tuple[int, str], tuple[np.ndarray, list[str]]] = {}
_CODES_GUARD = threading.Lock()

__all__ = ["NA_LABELS", "ONE_DAY", "UNKNOWN_PRICING", "UNTAGGED", "epoch_ns", "filter_options", "filter_usage",
           "group_codes", "group_labels", "utc_day"]


def filter_usage(
    usage: pd.DataFrame | ir.Table,
    start: date | str | pd.Timestamp | None = None,
    end: date | str | pd.Timestamp | None = None,
    teams: Iterable[str] | None = None,
    projects: Iterable[str] | None = None,
    pricing: Iterable[str] | None = None,
) -> pd.DataFrame:
    """The rows of ``usage`` whose period_start falls on a UTC day from ``start`` to ``end`` (both inclusive)
    and whose team, project and pricing are among those given.

    None means no filter on that field; an empty collection selects nothing. Untagged teams and projects are
    selected with ``UNTAGGED``, unknown pricing with ``UNKNOWN_PRICING``. A row is kept or dropped whole (a
    monthly line starting on the 1st is kept by a filter that includes the 1st), so totals of the result
    are exact sums of the rows kept. An Ibis table gives the same selection as a query (``query.view.filtered``).
    """
    if isinstance(usage, ir.Table):
        return view.filtered(usage, start, end, teams, projects, pricing)
    keep = np.ones(len(usage), dtype=bool)
    if start is not None:
        keep &= (usage["period_start"] >= utc_day(start)).to_numpy(dtype=bool)
    if end is not None:
        keep &= (usage["period_start"] < utc_day(end) + ONE_DAY).to_numpy(dtype=bool)
    for column, chosen in (("team", teams), ("project", projects), ("pricing", pricing)):
        if chosen is not None:
            codes, labels = _label_codes(usage, column)
            chosen = {str(value) for value in chosen}
            keep &= np.isin(codes, [code for code, label in enumerate(labels) if label in chosen])
    return usage.take(np.flatnonzero(keep))


def _forget(key: tuple[int, str]) -> None:
    with _CODES_GUARD:
        _CODES.pop(key, None)


def _label_codes(usage: pd.DataFrame, column: str) -> tuple[np.ndarray, list[str]]:
    """``group_codes(usage, column)``, computed once per frame and column while the frame lives (a frame is not
    changed after its import), so that a filter change compares integers."""
    key = (id(usage), column)
    with _CODES_GUARD:
        known = _CODES.get(key)
    if known is None:
        known = group_codes(usage, column)
        with _CODES_GUARD:
            _CODES[key] = known
        weakref.finalize(usage, _forget, key)
    return known


def filter_options(usage: pd.DataFrame | ir.Table) -> dict:
    """What the filter widgets offer: the distinct labels and the first and last day of period_start.

    Returns ``{"teams": [...], "projects": [...], "pricing": [...], "start": date | None, "end": date | None}``;
    teams and projects are sorted with "(untagged)" last, pricing in the order reserved, on_demand, spot,
    "(unknown)" (only values present). ``start``/``end`` are None for an empty table. A query
    (``dashboard.query.view.filter_options``).
    """
    return view.filter_options(tables.table_of(usage))
