"""Test oracle: the pandas amortisation of commitments (``dashboard/retro/amortise.py`` as it was when the method
moved to the query layer, ``dashboard.retro.amortise``), its days spread by ``pandas_days``. Pandas frames only. See
``dashboard.retro.amortise`` for the method. Frozen: see ``retro_pandas_reference``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pandas_days import NS_PER_DAY, epoch_ns, spread_by_day
from retro_pandas_reference import gpu_mask, kind_mask

from dashboard.ingest.charges import COMMITMENT, UNUSED_COMMITMENT

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
    gpu = gpu_mask(usage)
    reserved_gpu = gpu & usage["pricing"].eq("reserved").fillna(False).to_numpy(dtype=bool)
    paid, unused = kind_mask(usage, COMMITMENT), kind_mask(usage, UNUSED_COMMITMENT)
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
