"""Purchase mix in hindsight: GPU-hours and cost by pricing tier, the realised $/GPU-hour of each tier, and
what the same GPU-hours would have cost at another reserved / spot / on-demand mix.

GPU rows are rows with non-zero gpu_hours. Rows with none (storage, support, tax, credits, commitment or
reservation fees) are not GPU usage: they are left out of every share and $/GPU-hour here and reported
once as ``non_gpu_cost``. Where a provider bills a commitment separately from the usage it covers (GCP
commitment fees, Azure actual-cost purchases), the reserved tier's realised $/GPU-hour therefore excludes
the commitment and reads low. The sums are queries (the queries in this module); tiers and prices are worked out here
on the few rows they return.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.core.purchase import blended_price_per_gpu_hour, on_demand_share
from dashboard.ingest.schema import PRICING_VALUES
from dashboard.query import tables
from dashboard.query.columns import flag, label, nonzero_gpu, number, rows_where
from dashboard.query.compiled import built, query, table_result
from dashboard.retro.labels import UNKNOWN_PRICING

SHARE_TOLERANCE = 1e-9


def has_prices(usage: pd.DataFrame | ir.Table) -> bool:
    """Whether the table carries prices: Slurm and W&B exports have no currency and read as cost 0."""
    return price_facts(tables.table_of(usage)).has_prices


def non_gpu_cost(usage: pd.DataFrame | ir.Table) -> float:
    """Total cost of the rows that carry no GPU-hours (storage, support, tax, credits, commitment fees)."""
    return price_facts(tables.table_of(usage)).non_gpu_cost


def mix_shares(usage: pd.DataFrame | ir.Table) -> pd.DataFrame:
    """GPU-hours and cost of the GPU rows by pricing tier.

    One row per tier: reserved, on_demand and spot always (zeros when unused), then "(unknown)" when some
    GPU rows carry no pricing (or a value outside the canonical three). Columns ``pricing``, ``gpu_hours``,
    ``cost``, ``gpu_hours_share`` and ``cost_share`` (fractions 0..1 of the GPU rows' totals, NaN when that
    total is 0) and
    ``usd_per_gpu_hour`` (realised cost / GPU-hours of the tier, NaN without GPU-hours). Non-GPU rows are
    excluded (module docstring; see ``non_gpu_cost``). A table without prices (``has_prices`` false) has NaN
    costs, cost shares and prices.
    """
    usage = tables.table_of(usage)
    sums = tier_totals(usage)
    other = len(PRICING_VALUES)  # position of UNKNOWN_PRICING, which also takes non-canonical values
    tier = np.array([PRICING_VALUES.index(label) if label in PRICING_VALUES else other for label in sums["pricing"]],
                    dtype=np.int64)
    n_tiers = other + 1 if (tier == other).any() else other
    table = pd.DataFrame({"pricing": pd.array([*PRICING_VALUES, UNKNOWN_PRICING][:n_tiers], dtype="string")})
    for metric in ("gpu_hours", "cost"):
        weights = sums[metric].to_numpy(dtype=float)
        table[metric] = np.bincount(tier, weights=weights, minlength=other + 1)[:n_tiers].astype(float)
    for metric in ("gpu_hours", "cost"):
        total = table[metric].sum()
        table[f"{metric}_share"] = table[metric] / total if total != 0 else np.nan
    if not has_prices(usage):
        table[["cost", "cost_share"]] = np.nan
    hours = table["gpu_hours"]
    table["usd_per_gpu_hour"] = (table["cost"] / hours.where(hours != 0)).astype(float)
    return table


@dataclass(frozen=True)
class MixCost:
    """The GPU cost at another purchase mix (`cost_at_mix`), in the table's currency: the mix asked for
    (``reserved_share``, ``spot_share``, ``on_demand_share``), the actual shares of the priced GPU-hours
    (``actual_reserved_share``, ``actual_spot_share``) and those GPU-hours (``priced_gpu_hours``), the tier prices
    used (``usd_per_gpu_hour``, by tier), ``blended_usd_per_gpu_hour``, ``gpu_cost_at_mix``, ``actual_gpu_cost``,
    ``saving`` (actual minus at-mix; positive means the mix would have been cheaper), the GPU-hours and cost of
    unknown pricing (``unknown_pricing_gpu_hours``, ``unknown_pricing_cost``) and ``reason`` (None, or why the cost
    is NaN)."""

    reserved_share: float
    spot_share: float
    on_demand_share: float
    actual_reserved_share: float
    actual_spot_share: float
    priced_gpu_hours: float
    usd_per_gpu_hour: dict[str, float]
    blended_usd_per_gpu_hour: float
    gpu_cost_at_mix: float
    actual_gpu_cost: float
    saving: float
    unknown_pricing_gpu_hours: float
    unknown_pricing_cost: float
    reason: str | None


def cost_at_mix(
    usage: pd.DataFrame | ir.Table,
    reserved_share: float,
    spot_share: float,
    fallback_usd_per_gpu_hour: Mapping[str, float] | None = None,
) -> MixCost:
    """What the GPU-hours with a known pricing tier would have cost at another mix, plus the rest unchanged.

    Each tier is priced at its realised $/GPU-hour (``mix_shares``) and blended with the engine's
    ``dashboard.core.purchase.blended_price_per_gpu_hour`` (on-demand takes what reserved and spot leave).
    GPU-hours of unknown pricing keep their actual cost; non-GPU rows are not part of either figure. At the
    actual mix the result equals the actual GPU cost. A tier the data never used has no realised price:
    give it in ``fallback_usd_per_gpu_hour`` (keyed "reserved" / "on_demand" / "spot", e.g. the scenario's
    prices), otherwise a mix that needs it gives NaN with a ``reason``.

    Returns a `MixCost`.
    """
    for name, share in (("reserved_share", reserved_share), ("spot_share", spot_share)):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name} must be between 0 and 1, not {share}")
    if reserved_share + spot_share > 1.0 + SHARE_TOLERANCE:
        raise ValueError(f"reserved_share + spot_share must not exceed 1 (got {reserved_share + spot_share})")
    usage = tables.table_of(usage)
    table = mix_shares(usage).set_index("pricing")
    priced = table.loc[list(PRICING_VALUES)]
    priced_hours = float(priced["gpu_hours"].sum())
    fallback = dict(fallback_usd_per_gpu_hour or {})
    prices = {tier: float(priced.at[tier, "usd_per_gpu_hour"]) for tier in PRICING_VALUES}
    prices = {tier: fallback.get(tier, price) if np.isnan(price) else price for tier, price in prices.items()}
    shares = {
        "reserved": reserved_share,
        "spot": spot_share,
        "on_demand": float(on_demand_share(reserved_share, spot_share)),
    }
    missing = [tier for tier in PRICING_VALUES if shares[tier] > 0 and np.isnan(prices[tier])]
    usable = {tier: 0.0 if shares[tier] == 0 and np.isnan(price) else price for tier, price in prices.items()}
    blended = float(
        blended_price_per_gpu_hour(
            reserved_share, spot_share, usable["reserved"], usable["on_demand"], usable["spot"]
        )
    )
    unknown = table.loc[UNKNOWN_PRICING] if UNKNOWN_PRICING in table.index else None
    unknown_hours = float(unknown["gpu_hours"]) if unknown is not None else 0.0
    unknown_cost = float(unknown["cost"]) if unknown is not None else 0.0
    actual_gpu_cost = float(table["cost"].sum(min_count=1))
    reason = None
    if priced_hours + unknown_hours == 0:
        reason = "no rows with GPU-hours"
    elif not has_prices(usage):
        reason = "the export carries no prices (no currency)"
    elif priced_hours == 0:
        reason = "no GPU-hours with a known pricing tier (reserved, on_demand or spot) to re-price"
    elif missing:
        reason = (f"no realised price for {', '.join(missing)}: the data has no GPU-hours on that tier; "
                  "give a fallback $/GPU-hour")
    at_mix = np.nan if reason else priced_hours * blended + unknown_cost
    return MixCost(
        reserved_share=reserved_share,
        spot_share=spot_share,
        on_demand_share=shares["on_demand"],
        actual_reserved_share=float(priced.at["reserved", "gpu_hours"]) / priced_hours if priced_hours else np.nan,
        actual_spot_share=float(priced.at["spot", "gpu_hours"]) / priced_hours if priced_hours else np.nan,
        priced_gpu_hours=priced_hours,
        usd_per_gpu_hour=prices,
        blended_usd_per_gpu_hour=np.nan if reason else blended,
        gpu_cost_at_mix=at_mix,
        actual_gpu_cost=actual_gpu_cost,
        saving=actual_gpu_cost - at_mix,
        unknown_pricing_gpu_hours=unknown_hours,
        unknown_pricing_cost=unknown_cost,
        reason=reason,
    )


@built
def _tier_expr(usage: ir.Table) -> ir.Table:
    gpu = rows_where(usage, nonzero_gpu(usage))
    return gpu.group_by(pricing=label(gpu, "pricing")).agg(
        gpu_hours=gpu.gpu_hours.sum(), cost=gpu.cost.sum(), cost_null=gpu.cost.isnull().any())


@query
def tier_totals(usage: ir.Table) -> pd.DataFrame:
    """One row per pricing label of the GPU rows: ``pricing``, ``gpu_hours`` and ``cost`` (NaN when a row has none)."""
    frame = table_result(_tier_expr(usage))
    return pd.DataFrame({"pricing": frame["pricing"].astype("string"),
                         "gpu_hours": frame["gpu_hours"].to_numpy(dtype=float),
                         "cost": frame["cost"].astype(float).where(~frame["cost_null"].astype(bool))
                         .to_numpy(dtype=float)})


@built
def _price_expr(usage: ir.Table) -> ir.Table:
    other = ~nonzero_gpu(usage)
    return usage.aggregate(priced=usage.currency.notnull().any(), cost=usage.cost.sum(where=other),
                           cost_null=usage.cost.isnull().any(where=other))


@dataclass(frozen=True)
class PriceFacts:
    """Whether the table carries prices (``has_prices``: some currency present; Slurm and W&B exports carry none)
    and the cost of its rows without GPU-hours (``non_gpu_cost``; NaN when one of them has no cost)."""

    has_prices: bool
    non_gpu_cost: float


@query
def price_facts(usage: ir.Table) -> PriceFacts:
    """The table's `PriceFacts`, in one query."""
    row = table_result(_price_expr(usage)).iloc[0]
    return PriceFacts(has_prices=flag(row["priced"]),
                      non_gpu_cost=np.nan if flag(row["cost_null"]) else number(row["cost"]))
