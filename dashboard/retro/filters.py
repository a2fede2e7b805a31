"""Row selection for the retrospective: date, team, project and pricing filters, and the labels they use.

Missing tags are never dropped: an NA team, project or run is shown and selected as ``UNTAGGED``
("(untagged)"), an NA pricing tier as ``UNKNOWN_PRICING`` ("(unknown)"). The helpers that turn a column into
those labels (``group_labels``, ``group_codes``) and timestamps into integers (``epoch_ns``) are shared by
the other retro modules.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

import numpy as np
import pandas as pd

from dashboard.ingest.schema import PRICING_VALUES

UNTAGGED = "(untagged)"
UNKNOWN_PRICING = "(unknown)"
NA_LABELS: dict[str, str] = {
    "team": UNTAGGED,
    "project": UNTAGGED,
    "run_id": UNTAGGED,
    "pricing": UNKNOWN_PRICING,
}
ONE_DAY = pd.Timedelta(days=1)


def group_labels(usage: pd.DataFrame, column: str) -> pd.Series:
    """``usage[column]`` as strings with NA replaced by its label ("(untagged)", or "(unknown)" for pricing)."""
    return usage[column].astype("string").fillna(NA_LABELS[column])


def group_codes(usage: pd.DataFrame, column: str) -> tuple[np.ndarray, list[str]]:
    """Integer codes (0..k-1) of ``column``'s labelled values and the k labels, one factorize for any size."""
    codes, uniques = pd.factorize(usage[column], use_na_sentinel=True)
    labels = [str(value) for value in uniques]
    if (codes < 0).any():
        label = NA_LABELS[column]
        if label not in labels:
            labels.append(label)
        codes = np.where(codes < 0, labels.index(label), codes)
    return codes, labels


def epoch_ns(timestamps: pd.Series) -> np.ndarray:
    """UTC timestamps as int64 nanoseconds since 1970-01-01 (NaT becomes the minimum int64)."""
    return timestamps.dt.as_unit("ns").array.asi8


def utc_day(value: date | str | pd.Timestamp) -> pd.Timestamp:
    """Midnight UTC of the day ``value`` falls on (naive values are read as UTC)."""
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return stamp.normalize()


def filter_usage(
    usage: pd.DataFrame,
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
    are exact sums of the rows kept.
    """
    keep = np.ones(len(usage), dtype=bool)
    if start is not None:
        keep &= (usage["period_start"] >= utc_day(start)).to_numpy(dtype=bool)
    if end is not None:
        keep &= (usage["period_start"] < utc_day(end) + ONE_DAY).to_numpy(dtype=bool)
    for column, chosen in (("team", teams), ("project", projects), ("pricing", pricing)):
        if chosen is not None:
            keep &= group_labels(usage, column).isin(list(chosen)).to_numpy(dtype=bool)
    return usage.loc[keep]


def _ordered(labels: list[str], first: Iterable[str] = ()) -> list[str]:
    """``first`` (in that order, when present), then the other labels sorted, with NA labels last."""
    first = [label for label in first if label in labels]
    rest = sorted(set(labels) - set(first) - set(NA_LABELS.values()))
    missing = sorted(set(labels) & set(NA_LABELS.values()))
    return first + rest + missing


def filter_options(usage: pd.DataFrame) -> dict:
    """What the filter widgets offer: the distinct labels and the first and last day of period_start.

    Returns ``{"teams": [...], "projects": [...], "pricing": [...], "start": date | None, "end": date | None}``;
    teams and projects are sorted with "(untagged)" last, pricing in the order reserved, on_demand, spot,
    "(unknown)" (only values present). ``start``/``end`` are None for an empty table.
    """
    starts = usage["period_start"]
    return {
        "teams": _ordered(group_codes(usage, "team")[1]),
        "projects": _ordered(group_codes(usage, "project")[1]),
        "pricing": _ordered(group_codes(usage, "pricing")[1], first=PRICING_VALUES),
        "start": starts.min().tz_convert("UTC").date() if len(usage) else None,
        "end": starts.max().tz_convert("UTC").date() if len(usage) else None,
    }
