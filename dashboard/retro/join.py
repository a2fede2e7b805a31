"""Join a billing export with a run export (Slurm, W&B) so every GPU-hour carries its run, state, tokens and cost.

Method (``join_usage``), for the chosen key (``run_id`` or ``project``):

- Both sides are spread over UTC days in proportion to the time each row spends in each day (a 3-day job puts
  a third of its GPU-hours on each day; a daily billing line stays on its day).
- For each key and day, the billing price is that day's billing cost / billing GPU-hours of the key (billing
  rows with GPU-hours only). Each matching run-export row gets cost = its GPU-hours on each day x that day's
  price, summed over its days; on a day with no billed GPU-hours for the key the key's price over the whole
  period is used. ``billed_cost`` is priced the same way. Matched run rows keep their run, state and tokens,
  take the billing currency, and take the key's pricing tier when all its billing GPU rows share one.
- Billing GPU-hours the run export does not cover stay as their own rows with state NA: all of an unmatched
  key's rows, and, for a matched key, each billing row scaled by max(0, 1 - run hours / billed hours) of its
  key and day (hours and both costs). So a key's billed cost on a day is kept exactly while the run export shows
  no more hours than the bill; hours beyond the bill are still priced, so the joined cost then exceeds the bill
  (``runs_gpu_hours_beyond_billing`` in the stats says by how much).
- Run-export rows whose key is not in the billing GPU rows keep cost and billed_cost NA.
- Billing rows with no GPU-hours (storage, CPU, fees, credits, tax) are kept unchanged.

The result has the canonical columns plus ``join_side``: "both" (run-export row priced from billing),
"billing" (billing row, or the part of it the run export does not cover) or "runs" (run-export row, no price).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.ingest.schema import CANONICAL_COLUMNS, empty_usage
from dashboard.retro.periods import spread_by_day

JOIN_KEYS: tuple[str, ...] = ("run_id", "project")
JOIN_SIDES: tuple[str, ...] = ("both", "billing", "runs")
PRICED = ("gpu_hours", "cost", "billed_cost")


def _day_pieces(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (row position, UTC day) a row touches, with the share of its duration in that day."""
    rows, day, share = spread_by_day(frame)
    return pd.DataFrame({"row": rows, "day": day, "share": share})


def _share(part: float, whole: float) -> float | None:
    return float(part / whole) if whole > 0 else None


def _stats(on: str, billing: pd.DataFrame | None, runs: pd.DataFrame | None) -> dict:
    """Stats skeleton: which side is missing, totals of the sides present, shares left None."""
    return {
        "on": on,
        "billing_missing": billing is None,
        "runs_missing": runs is None,
        "billing_gpu_hours": None if billing is None else float(billing["gpu_hours"].clip(lower=0).sum()),
        "runs_gpu_hours": None if runs is None else float(runs["gpu_hours"].clip(lower=0).sum()),
        "billing_gpu_hours_matched_share": None,
        "billing_cost_matched_share": None,
        "runs_gpu_hours_matched_share": None,
        "keys_matched": 0,
        "billing_keys_unmatched": [],
        "runs_keys_unmatched": [],
        "runs_gpu_hours_beyond_billing": 0.0,
    }


def _billed(billing_rows: pd.DataFrame, on: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Day pieces of the matched billing GPU rows (with their hours and costs), their sums per (key, day) and
    per key over the whole period."""
    source = billing_rows[[on, *PRICED]].reset_index(drop=True).fillna({"cost": 0, "billed_cost": 0})
    pieces = _day_pieces(billing_rows)
    pieces["key"] = source[on].to_numpy(dtype=object)[pieces["row"]]
    for column in PRICED:
        pieces[column] = source[column].to_numpy(dtype=float)[pieces["row"]] * pieces["share"]
    return pieces, pieces.groupby(["key", "day"])[list(PRICED)].sum(), source.groupby(on)[list(PRICED)].sum()


def _priced_runs(
    runs: pd.DataFrame, on: str, billed_by_day: pd.DataFrame, billed_by_key: pd.DataFrame
) -> tuple[pd.DataFrame, pd.Series]:
    """The matched run rows with cost and billed_cost at their key's price each day (the period price on days
    without billed hours), and their GPU-hours per (key, day)."""
    runs = runs.reset_index(drop=True)
    pieces = _day_pieces(runs)
    pieces["key"] = runs[on].astype("string").to_numpy(dtype=object)[pieces["row"]]
    hours = runs["gpu_hours"].clip(lower=0).fillna(0).to_numpy(dtype=float)
    pieces["gpu_hours"] = hours[pieces["row"]] * pieces["share"]
    day = billed_by_day.reindex(pd.MultiIndex.from_frame(pieces[["key", "day"]])).fillna(0)
    period = billed_by_key.reindex(pieces["key"])
    has_day = day["gpu_hours"].to_numpy() > 0
    day_hours = np.where(has_day, day["gpu_hours"].to_numpy(), 1.0)
    for column in ("cost", "billed_cost"):
        per_hour = np.where(has_day, day[column].to_numpy() / day_hours,
                            period[column].to_numpy() / period["gpu_hours"].to_numpy())
        pieces[column] = pieces["gpu_hours"] * per_hour
    priced = pieces.groupby("row")[["cost", "billed_cost"]].sum().reindex(range(len(runs)), fill_value=0)
    runs["cost"] = priced["cost"].to_numpy()
    runs["billed_cost"] = priced["billed_cost"].to_numpy()
    return runs, pieces.groupby(["key", "day"])["gpu_hours"].sum()


def _uncovered(
    billing_rows: pd.DataFrame, pieces: pd.DataFrame, billed_by_day: pd.DataFrame, run_by_day: pd.Series
) -> pd.DataFrame:
    """The part of each matched billing row the run export does not cover: hours and costs scaled by
    max(0, 1 - run hours / billed hours) of its key on each of its days; fully covered rows are dropped."""
    covered = run_by_day.reindex(billed_by_day.index, fill_value=0)
    left_share = (1 - covered / billed_by_day["gpu_hours"]).clip(lower=0)
    share = left_share.reindex(pd.MultiIndex.from_frame(pieces[["key", "day"]])).to_numpy()
    left = pieces[list(PRICED)].mul(share, axis=0).groupby(pieces["row"]).sum()
    residual = billing_rows.reset_index(drop=True)
    for column in PRICED:
        residual[column] = left[column].reindex(range(len(residual)), fill_value=0).to_numpy()
    return residual.loc[residual["gpu_hours"].to_numpy() > 0]


def join_usage(
    billing: pd.DataFrame | None, runs: pd.DataFrame | None, on: str = "run_id"
) -> tuple[pd.DataFrame, dict]:
    """Combine a billing usage frame and a run-export frame (both canonical) on ``on`` ("run_id" or "project").

    Returns ``(joined, stats)``. ``joined`` has the canonical columns plus ``join_side`` (see the module
    docstring for the method). ``stats``: ``on``; ``billing_missing`` / ``runs_missing``; ``billing_gpu_hours``
    and ``runs_gpu_hours`` (totals); ``billing_gpu_hours_matched_share`` and ``billing_cost_matched_share``
    (shares 0..1 of the billing GPU rows' hours and cost whose key is in the run export);
    ``runs_gpu_hours_matched_share`` (share of run-export GPU-hours whose key is in the billing GPU rows);
    ``keys_matched``; sorted ``billing_keys_unmatched`` / ``runs_keys_unmatched``; and
    ``runs_gpu_hours_beyond_billing`` (run-export hours above the billed hours of the same key and day). A share
    is None when its total is 0. When either side is None the other is returned unchanged (None when both are).
    """
    if on not in JOIN_KEYS:
        raise ValueError(f"join key must be one of {', '.join(JOIN_KEYS)}, not {on!r}")
    stats = _stats(on, billing, runs)
    if billing is None or runs is None:
        return (runs if billing is None else billing), stats

    gpu = (billing["gpu_hours"] > 0).to_numpy(dtype=bool)
    billing_gpu = billing.loc[gpu].reset_index(drop=True)
    billing_keys = billing_gpu[on].astype("string")
    run_keys = runs[on].astype("string")
    matched_keys = set(billing_keys.dropna()) & set(run_keys.dropna())
    billing_matched = billing_keys.isin(matched_keys).fillna(False).to_numpy(dtype=bool)
    runs_matched = run_keys.isin(matched_keys).fillna(False).to_numpy(dtype=bool)

    billed_hours = billing_gpu["gpu_hours"].to_numpy(dtype=float)
    billed_cost = billing_gpu["cost"].fillna(0).to_numpy(dtype=float)
    run_hours = runs["gpu_hours"].clip(lower=0).fillna(0).to_numpy(dtype=float)
    stats.update(
        billing_gpu_hours_matched_share=_share(billed_hours[billing_matched].sum(), billed_hours.sum()),
        billing_cost_matched_share=_share(billed_cost[billing_matched].sum(), billed_cost.sum()),
        runs_gpu_hours_matched_share=_share(run_hours[runs_matched].sum(), run_hours.sum()),
        keys_matched=len(matched_keys),
        billing_keys_unmatched=sorted(set(billing_keys.dropna()) - matched_keys),
        runs_keys_unmatched=sorted(set(run_keys.dropna()) - matched_keys),
    )

    bill_pieces, billed_by_day, billed_by_key = _billed(billing_gpu.loc[billing_matched], on)
    matched_runs, run_by_day = _priced_runs(runs.loc[runs_matched], on, billed_by_day, billed_by_key)
    currencies = billing_gpu["currency"].dropna()
    matched_runs["currency"] = pd.array([currencies.iloc[0] if len(currencies) else pd.NA] * len(matched_runs),
                                        dtype="string")
    tiers = billing_gpu.loc[billing_matched].groupby(billing_keys[billing_matched])["pricing"].agg(
        lambda values: values.iloc[0] if values.nunique(dropna=False) == 1 else pd.NA
    )
    matched_runs["pricing"] = pd.array(tiers.reindex(matched_runs[on].astype("string")).to_numpy(), dtype="string")
    residual = _uncovered(billing_gpu.loc[billing_matched], bill_pieces, billed_by_day, run_by_day)
    stats["runs_gpu_hours_beyond_billing"] = float(
        (run_by_day - billed_by_day["gpu_hours"].reindex(run_by_day.index, fill_value=0)).clip(lower=0).sum()
    )

    unmatched_runs = runs.loc[~runs_matched].copy()
    unmatched_runs["cost"] = np.nan
    unmatched_runs["billed_cost"] = np.nan
    parts = [
        (matched_runs, "both"),
        (residual, "billing"),
        (billing_gpu.loc[~billing_matched], "billing"),
        (unmatched_runs, "runs"),
        (billing.loc[~gpu], "billing"),
    ]
    frames = [part[list(CANONICAL_COLUMNS)].assign(join_side=side) for part, side in parts if len(part)]
    joined = pd.concat(frames, ignore_index=True) if frames else empty_usage().assign(join_side="")
    return joined.astype(CANONICAL_COLUMNS | {"join_side": "string"}), stats
