"""Test oracle: the pandas join of a billing export with a run export (``dashboard/retro/join.py`` as it was when the
join moved to the query layer, ``dashboard.retro.join``), its days spread by ``pandas_days``. Pandas frames
only. See ``dashboard.retro.join`` for the method. Frozen: see ``retro_pandas_reference``."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas_days import spread_by_day

from dashboard.ingest.schema import CANONICAL_COLUMNS, empty_usage

JOIN_KEYS: tuple[str, ...] = ("run_id", "project")

PRICED = ("gpu_hours", "cost", "billed_cost")


def _day_pieces(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (row position, UTC day) a row touches, with the share of its duration in that day."""
    rows, day, share = spread_by_day(frame)
    return pd.DataFrame({"row": rows, "day": day, "share": share})


def _share(part: float, whole: float) -> float | None:
    return float(part / whole) if whole > 0 else None


def _positive_gpu_hours(usage: pd.DataFrame) -> float:
    """GPU-hours of ``usage`` with negative hours (corrections) read as 0."""
    return float(usage["gpu_hours"].clip(lower=0).sum())


def _stats(on: str, billing: pd.DataFrame | None, runs: pd.DataFrame | None) -> dict:
    """Stats skeleton: which side is missing, totals of the sides present, shares left None."""
    return {
        "on": on,
        "billing_missing": billing is None,
        "runs_missing": runs is None,
        "billing_gpu_hours": None if billing is None else _positive_gpu_hours(billing),
        "runs_gpu_hours": None if runs is None else _positive_gpu_hours(runs),
        "billing_gpu_hours_matched_share": None,
        "billing_cost_matched_share": None,
        "runs_gpu_hours_matched_share": None,
        "keys_matched": 0,
        "billing_keys_unmatched": [],
        "runs_keys_unmatched": [],
        "runs_gpu_hours_beyond_billing": 0.0,
        "runs_without_bill_gpu_hours": 0.0,
        "runs_without_bill_rows": 0,
    }


def _billed(billing_rows: pd.DataFrame, on: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Day pieces of the matched billing GPU rows (with their hours and costs) and their sums per (key, day)."""
    source = billing_rows[[on, *PRICED]].reset_index(drop=True).fillna({"cost": 0, "billed_cost": 0})
    pieces = _day_pieces(billing_rows)
    pieces["key"] = source[on].to_numpy(dtype=object)[pieces["row"]]
    for column in PRICED:
        pieces[column] = source[column].to_numpy(dtype=float)[pieces["row"]] * pieces["share"]
    return pieces, pieces.groupby(["key", "day"])[list(PRICED)].sum()


def _priced_runs(
    runs: pd.DataFrame, on: str, billed_by_day: pd.DataFrame
) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """The matched run rows with their hours capped at the bill of their key and day, priced at that day's
    price; their capped GPU-hours per (key, day) and the run hours cut off per (key, day)."""
    runs = runs.reset_index(drop=True)
    pieces = _day_pieces(runs)
    pieces["key"] = runs[on].astype("string").to_numpy(dtype=object)[pieces["row"]]
    hours = runs["gpu_hours"].clip(lower=0).fillna(0).to_numpy(dtype=float)
    pieces["gpu_hours"] = hours[pieces["row"]] * pieces["share"]
    cells = pd.MultiIndex.from_frame(pieces[["key", "day"]])
    run_by_day = pieces.groupby(["key", "day"])["gpu_hours"].sum()
    day = billed_by_day.reindex(cells).fillna(0)
    billed_hours = day["gpu_hours"].to_numpy()
    run_hours = run_by_day.reindex(cells).to_numpy()
    scale = np.where(run_hours > 0, np.minimum(1.0, billed_hours / np.where(run_hours > 0, run_hours, 1.0)), 0.0)
    pieces["gpu_hours"] = pieces["gpu_hours"] * scale
    per_hour_base = np.where(billed_hours > 0, billed_hours, 1.0)
    for column in ("cost", "billed_cost"):
        pieces[column] = pieces["gpu_hours"] * day[column].to_numpy() / per_hour_base
    priced = pieces.groupby("row")[["gpu_hours", "cost", "billed_cost"]].sum().reindex(range(len(runs)),
                                                                                        fill_value=0)
    for column in ("gpu_hours", "cost", "billed_cost"):
        runs[column] = priced[column].to_numpy()
    covered = pieces.groupby(["key", "day"])["gpu_hours"].sum()
    return runs, covered, run_by_day - covered


def _uncovered(
    billing_rows: pd.DataFrame, pieces: pd.DataFrame, billed_by_day: pd.DataFrame, run_by_day: pd.Series
) -> pd.DataFrame:
    """The part of each matched billing row the run export does not cover: hours and costs scaled by
    1 - capped run hours / billed hours of its key on each of its days; fully covered rows are dropped."""
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
    ``keys_matched``; sorted ``billing_keys_unmatched`` / ``runs_keys_unmatched``;
    ``runs_gpu_hours_beyond_billing`` (run-export hours above the billed hours of the same key and day, cut off);
    ``runs_without_bill_gpu_hours`` / ``runs_without_bill_rows`` (run-export rows whose key has no bill). A share
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

    bill_pieces, billed_by_day = _billed(billing_gpu.loc[billing_matched], on)
    matched_runs, run_by_day, beyond = _priced_runs(runs.loc[runs_matched], on, billed_by_day)
    currencies = billing_gpu["currency"].dropna()
    matched_runs["currency"] = pd.array([currencies.iloc[0] if len(currencies) else pd.NA] * len(matched_runs),
                                        dtype="string")
    tiers = billing_gpu.loc[billing_matched].groupby(billing_keys[billing_matched])["pricing"].agg(
        lambda values: values.iloc[0] if values.nunique(dropna=False) == 1 else pd.NA
    )
    matched_runs["pricing"] = pd.array(tiers.reindex(matched_runs[on].astype("string")).to_numpy(), dtype="string")
    residual = _uncovered(billing_gpu.loc[billing_matched], bill_pieces, billed_by_day, run_by_day)
    stats["runs_gpu_hours_beyond_billing"] = float(beyond.clip(lower=0).sum())
    stats["runs_without_bill_gpu_hours"] = float(run_hours[~runs_matched].sum())
    stats["runs_without_bill_rows"] = int((~runs_matched).sum())
    parts = [
        (matched_runs, "both"),
        (residual, "billing"),
        (billing_gpu.loc[~billing_matched], "billing"),
        (billing.loc[~gpu], "billing"),
    ]
    frames = [part[list(CANONICAL_COLUMNS)].assign(join_side=side) for part, side in parts if len(part)]
    joined = pd.concat(frames, ignore_index=True) if frames else empty_usage().assign(join_side="")
    return joined.astype(CANONICAL_COLUMNS | {"join_side": "string"}), stats
