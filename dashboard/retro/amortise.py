"""Commitments amortised onto the GPU usage they cover, so every export's $/GPU-hour means the same thing.

Amortised exports (FOCUS EffectiveCost, AWS CUR's savings-plan effective cost, Azure's amortized dataset) already
put the commitment on the usage it covers: their reserved GPU rows carry cost and what is left on commitment lines
is capacity nobody used. Actual-cost exports (GCP commitment fees, Azure's actual-cost dataset) bill the
commitment on lines of its own and show the reserved usage at $0, which makes reserved capacity look free and the
$/GPU-hour impossibly low. ``amortise_commitments`` turns the second kind into the first. Method:

1. Commitment charges are the rows ``gap.commitment_mask`` finds (``charge_kind`` "commitment" where the import
   sets it); covered usage is the reserved GPU rows with no cost. Nothing changes unless both exist and every
   reserved GPU row has no cost (an amortised export is left as it is).
2. Each charge covers a window: its own [period_start, period_end) when that is longer than a day's line; for
   charges that recur (the same resource_id, or all unnamed charges together) until the next one starts, the
   last one for the median interval between them; a single short charge from its start to the end of the export.
3. The charge is spread evenly over the days of its window. The part on days after the export ends belongs to a
   later period and leaves the figures (``after_export_usd``). On each day in the export, that day's part is
   shared among the covered rows in proportion to their GPU-hours that day; on a day with no covered usage it
   stays on the charge's line, as unused commitment (idle capacity).

So the covered rows' cost plus what is left on the lines equals the charges less the part after the export.
``billed_cost`` (what was invoiced) is never changed. For a dataset queried where it lies (an Ibis table), which
of these applies (step 1) is one query (``commitment_status``, the same rules; tests pin that both agree), and
since spreading the charges (steps 2 and 3) needs the rows in memory, such a dataset reports "needs_rows" instead.
Rows in memory are checked directly: a query over an upload's table here made every later filter change of a
1,000,000-row upload about 100 ms slower (measured when the choice was made).
"""

from __future__ import annotations

from typing import Any

import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.query import tables
from dashboard.query import waste as waste_query
from dashboard.retro.gap import commitment_is_unused, commitment_mask, gpu_mask
from dashboard.retro.labels import epoch_ns
from dashboard.retro.periods import NS_PER_DAY, spread_by_day

STATUSES: tuple[str, ...] = ("none", "provider", "amortised", "excluded", "needs_rows")
LABELS: dict[str, str] = {
    "none": "",
    "provider": "commitments amortised",
    "amortised": "commitments amortised",
    "excluded": "excluding commitments",
    "needs_rows": "excluding commitments",
}


def _window_ends(charges: pd.DataFrame, export_end_ns: int) -> np.ndarray:
    """End (ns since 1970) of the window each commitment charge covers (step 2 of the module docstring)."""
    start = epoch_ns(charges["period_start"])
    end = np.maximum(epoch_ns(charges["period_end"]), start)
    window_end = end.copy()
    codes = pd.factorize(charges["resource_id"].fillna(""))[0]
    for code in np.unique(codes):
        members = np.flatnonzero(codes == code)
        members = members[np.argsort(start[members], kind="stable")]
        starts = start[members]
        if len(members) >= 2:
            following = np.append(starts[1:], starts[-1] + int(np.median(np.diff(starts))))
        else:
            following = np.array([export_end_ns])
        short = end[members] - starts <= NS_PER_DAY
        window_end[members] = np.where(short, np.maximum(end[members], following), end[members])
    return window_end


def _info(status: str, **figures: float) -> dict[str, Any]:
    base = {"status": status, "label": LABELS[status], "commitment_usd": 0.0, "spread_usd": 0.0,
            "unused_usd": 0.0, "after_export_usd": 0.0, "covered_gpu_hours": 0.0}
    return base | figures


def commitment_status(usage: pd.DataFrame | ir.Table) -> dict[str, Any]:
    """Step 1 of the method as one query: ``_info`` of "none", "excluded" or "provider", or of "needs_rows" when
    the charges are to be spread over the reserved usage (``amortise_commitments`` does it on the rows)."""
    facts = waste_query.idle_capacity(tables.table_of(usage))
    charges_usd = facts["commitment_usd"]
    if not facts["commitment"]:
        return _info("none")
    if not facts["reserved_gpu"]:
        return _info("excluded", commitment_usd=charges_usd)
    if facts["unused"]:
        return _info("provider", commitment_usd=charges_usd, unused_usd=charges_usd)
    return _info("needs_rows", commitment_usd=charges_usd)


def amortise_commitments(usage: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The usage table with commitment charges spread over the reserved GPU usage they cover, and what was done.

    Returns ``(usage, info)``; the table is the input itself unless ``info["status"]`` is "amortised". ``info``:
    ``status`` ("none": no commitment charges; "provider": the export amortises them itself; "amortised": done
    here; "excluded": charges but no reserved GPU usage to put them on, so the $/GPU-hour excludes them),
    ``label`` (for the $/GPU-hour tile), ``commitment_usd`` (the charges), ``spread_usd`` (put on GPU rows),
    ``unused_usd`` (left on the lines: days without covered usage, or the unused part an amortised export
    reports), ``after_export_usd`` (belongs to days after the export) and ``covered_gpu_hours``.
    """
    commitment = commitment_mask(usage)
    if not commitment.any():
        return usage, _info("none")
    charges_usd = float(usage.loc[commitment, "cost"].sum())
    reserved_gpu = gpu_mask(usage) & usage["pricing"].eq("reserved").fillna(False).to_numpy(dtype=bool)
    if not reserved_gpu.any():
        return usage, _info("excluded", commitment_usd=charges_usd)
    if commitment_is_unused(usage):
        return usage, _info("provider", commitment_usd=charges_usd, unused_usd=charges_usd)

    export_end = max(usage["period_end"].max(), usage["period_start"].max()).ceil("D")  # midnight after the data
    export_end_day = (int(export_end.value) - 1) // NS_PER_DAY
    charges = usage.loc[commitment]
    windows = pd.DataFrame({"period_start": charges["period_start"],
                            "period_end": pd.to_datetime(_window_ends(charges, int(export_end.value)), utc=True)})
    rows, day, share = spread_by_day(windows)
    amount = charges["cost"].to_numpy(dtype=float)[rows] * share
    inside = day <= export_end_day

    covered = usage.loc[reserved_gpu]
    cover_rows, cover_day, cover_share = spread_by_day(covered)
    cover_hours = covered["gpu_hours"].to_numpy(dtype=float)[cover_rows] * cover_share
    hours_by_day = pd.Series(cover_hours).groupby(cover_day).sum()
    usd_by_day = pd.Series(amount[inside]).groupby(day[inside]).sum()
    spread_by = usd_by_day.reindex(hours_by_day.index, fill_value=0.0) / hours_by_day
    row_cost = np.bincount(cover_rows, weights=cover_hours * spread_by.reindex(cover_day).to_numpy(),
                           minlength=len(covered))
    unused = inside & ~np.isin(day, hours_by_day.index[hours_by_day.to_numpy() > 0])
    left = np.bincount(rows[unused], weights=amount[unused], minlength=len(charges))

    result = usage.copy()
    cost = result["cost"].to_numpy(dtype=float, copy=True)
    cost[np.flatnonzero(reserved_gpu)] = np.nan_to_num(cost[reserved_gpu]) + row_cost
    cost[np.flatnonzero(commitment)] = left
    result["cost"] = cost
    return result, _info(
        "amortised", commitment_usd=charges_usd, spread_usd=float(row_cost.sum()), unused_usd=float(left.sum()),
        after_export_usd=float(amount[~inside].sum()), covered_gpu_hours=float(covered["gpu_hours"].sum()),
    )
