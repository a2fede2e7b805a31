"""The pandas day spreading the query layer's ``periods.day_pieces`` replaced (``dashboard/retro/periods.py`` as it
was), shared by the pandas oracles of the tests. Frozen with them: see ``retro_pandas_reference``."""

from __future__ import annotations

import numpy as np
import pandas as pd

NS_PER_DAY = 86_400 * 10**9


def epoch_ns(timestamps: pd.Series) -> np.ndarray:
    """UTC timestamps as int64 nanoseconds since 1970-01-01 (NaT becomes the minimum int64)."""
    return timestamps.dt.as_unit("ns").array.asi8


def spread_by_day(usage: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, day, fraction) triples: row position ``row`` spends ``fraction`` of its duration in UTC day ``day``.

    ``day`` counts days since 1970-01-01 and each row's fractions sum to 1. A row with no duration (period_end
    missing or not after period_start) is one piece on its start day. Vectorised: rows are repeated once per
    day they touch, so a quarter of daily and hourly lines costs about one entry per row.
    """
    start = epoch_ns(usage["period_start"])
    end = np.maximum(epoch_ns(usage["period_end"]), start)  # NaT (minimum int64) or end < start: no duration
    timed = end > start
    first_day = start // NS_PER_DAY
    days_touched = np.where(timed, (end - 1) // NS_PER_DAY, first_day) - first_day + 1
    if (days_touched == 1).all():
        return np.arange(len(usage)), first_day, np.ones(len(usage))
    rows = np.repeat(np.arange(len(usage)), days_touched)
    day = first_day[rows] + np.arange(len(rows)) - np.repeat(np.cumsum(days_touched) - days_touched, days_touched)
    overlap = np.minimum(end[rows], (day + 1) * NS_PER_DAY) - np.maximum(start[rows], day * NS_PER_DAY)
    duration = (end - start)[rows]
    fraction = np.where(timed[rows], overlap / np.where(duration > 0, duration, 1), 1.0)
    return rows, day, fraction
