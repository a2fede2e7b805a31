"""Commitments amortised onto the GPU usage they cover, so every export's $/GPU-hour means the same thing.

The import marks each bill row from what the bill says (``charge_kind``, ``dashboard.ingest.charges``): a commitment
purchase or fee billed at what was paid ("commitment"), the provider's line of commitment nobody used
("unused_commitment"), or usage (covered usage included). Amortised exports (FOCUS EffectiveCost, AWS CUR's effective
costs, Azure's amortized dataset) already put the commitment on the usage it covers and state the unused part on its
own lines; they carry no paid commitment with a cost. Actual-cost exports (GCP commitment fees, Azure's actual-cost
dataset) bill the commitment on lines of its own and show the reserved usage at $0, which makes reserved capacity
look free and the $/GPU-hour impossibly low. ``amortise_commitments`` turns the second kind into the first. Method:

1. Commitment charges are the paid commitment lines with a cost; covered usage is the reserved GPU rows. A bill with
   no GPU rows is "no_gpu"; without paid lines the export amortises itself ("provider", or "none" without any
   commitment line); paid lines are spread only when reserved GPU rows exist and none has a cost, else they are
   "excluded" from the $/GPU-hour.
2. Each charge covers a window: its own [period_start, period_end) when that is longer than a day's line; for
   charges that recur (the same resource_id, or all unnamed charges together) until the next one starts, the
   last one for the median interval between them; a single short charge from its start to the end of the export.
3. The charge is spread evenly over the days of its window. The part on days after the export ends belongs to a
   later period and leaves the figures (``after_export_usd``). On each day in the export, that day's part is
   shared among the covered rows in proportion to their GPU-hours that day; on a day with no covered usage it
   stays on the charge's line, which becomes an unused-commitment line (idle capacity).

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

from dashboard.ingest.charges import COMMITMENT, UNUSED_COMMITMENT
from dashboard.query import tables
from dashboard.query import waste as waste_query
from dashboard.retro.labels import epoch_ns
from dashboard.retro.periods import NS_PER_DAY, spread_by_day

STATUSES: tuple[str, ...] = ("none", "no_gpu", "provider", "amortised", "excluded", "needs_rows")
LABELS: dict[str, str] = {
    "none": "",
    "no_gpu": "no GPU usage in this bill",
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


def _status(gpu: bool, paid_usd: float | None, unused_usd: float | None, reserved_gpu: bool,
            reserved_gpu_priced: bool) -> dict[str, Any]:
    """Step 1 of the method: ``_info`` of "no_gpu", "none", "provider" or "excluded", or of "needs_rows" when the
    paid lines are to be spread over the reserved GPU usage (``paid_usd``/``unused_usd`` None: no such line)."""
    figures = {"commitment_usd": (paid_usd or 0.0) + (unused_usd or 0.0), "unused_usd": unused_usd or 0.0}
    if not gpu:
        return _info("no_gpu", **figures)
    if paid_usd is None:
        return _info("none") if unused_usd is None else _info("provider", **figures)
    if reserved_gpu and not reserved_gpu_priced:
        return _info("needs_rows", **figures)
    return _info("excluded", **figures)


def commitment_status(usage: pd.DataFrame | ir.Table) -> dict[str, Any]:
    """Step 1 of the method as one query (``amortise_commitments`` spreads the paid lines on the rows)."""
    facts = waste_query.idle_capacity(tables.table_of(usage))
    return _status(facts["gpu"], facts["paid_usd"] if facts["paid"] else None,
                   facts["commitment_usd"] if facts["commitment"] else None, facts["reserved_gpu"],
                   facts["reserved_gpu_priced"])


def _lines(usage: pd.DataFrame, kind: str) -> np.ndarray:
    """The rows of charge_kind ``kind`` with a non-zero cost (``columns.paid_commitment``, ``unused_commitment``)."""
    return (usage["charge_kind"].eq(kind).fillna(False).to_numpy(dtype=bool)
            & usage["cost"].fillna(0).ne(0).to_numpy(dtype=bool))


def amortise_commitments(usage: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The usage table with commitment charges spread over the reserved GPU usage they cover, and what was done.

    Returns ``(usage, info)``; the table is the input itself unless ``info["status"]`` is "amortised", where the
    paid lines become unused-commitment lines carrying what was left on them. ``info``: ``status`` ("no_gpu": the
    bill has no GPU rows; "none": no commitment lines; "provider": the export amortises commitments itself;
    "amortised": done here; "excluded": paid lines but no unpriced reserved GPU usage to put them on, so the
    $/GPU-hour excludes them), ``label`` (for the $/GPU-hour tile), ``commitment_usd`` (the cost on commitment
    lines), ``spread_usd`` (put on GPU rows), ``unused_usd`` (left on the lines: days without covered usage, or
    the unused part the export states), ``after_export_usd`` (belongs to days after the export) and
    ``covered_gpu_hours``.
    """
    gpu = (usage["gpu_hours"] > 0).to_numpy(dtype=bool)
    reserved_gpu = gpu & usage["pricing"].eq("reserved").fillna(False).to_numpy(dtype=bool)
    paid, unused = _lines(usage, COMMITMENT), _lines(usage, UNUSED_COMMITMENT)
    cost = usage["cost"].to_numpy(dtype=float)
    info = _status(bool(gpu.any()), float(cost[paid].sum()) if paid.any() else None,
                   float(cost[unused].sum()) if unused.any() else None, bool(reserved_gpu.any()),
                   bool(np.nan_to_num(cost[reserved_gpu]).any()))
    if info["status"] != "needs_rows":
        return usage, info

    export_end = max(usage["period_end"].max(), usage["period_start"].max()).ceil("D")  # midnight after the data
    export_end_day = (int(export_end.value) - 1) // NS_PER_DAY
    charges = usage.loc[paid]
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
    idle_day = inside & ~np.isin(day, hours_by_day.index[hours_by_day.to_numpy() > 0])
    left = np.bincount(rows[idle_day], weights=amount[idle_day], minlength=len(charges))

    result = usage.copy()
    cost = cost.copy()
    cost[np.flatnonzero(reserved_gpu)] = np.nan_to_num(cost[reserved_gpu]) + row_cost
    cost[np.flatnonzero(paid)] = left
    result["cost"] = cost
    result.loc[paid, "charge_kind"] = UNUSED_COMMITMENT
    return result, _info(
        "amortised", commitment_usd=info["commitment_usd"], spread_usd=float(row_cost.sum()),
        unused_usd=info["unused_usd"] + float(left.sum()),
        after_export_usd=float(amount[~inside].sum()), covered_gpu_hours=float(covered["gpu_hours"].sum()),
    )
