"""Unit costs in hindsight: $ per GPU-hour, $ per million tokens and achieved MFU from the usage table.

Only GPU rows (non-zero gpu_hours, see ``dashboard.retro.mix``) count; non-GPU cost is reported beside them.
Token-based figures use only the rows that carry a token count (W&B runs), over those rows' own GPU-hours
and cost, so numerator and denominator describe the same work. The sums are one query
(the queries in this module); the catalogue's peaks are looked up here once per GPU type.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.core import compute
from dashboard.core.hardware import catalogue, resolve_gpu_type
from dashboard.format import money_symbol
from dashboard.ingest.gpus import gpu_name
from dashboard.query import tables
from dashboard.query.columns import found, holds, nonzero_gpu, number, rows_where
from dashboard.query.compiled import built, query, table_result

TOKENS_PER_MILLION = 1e6
LABELS: dict[str, str] = {"usd_per_gpu_hour": "$ per GPU-hour", "usd_per_million_tokens": "$ per million tokens",
                          "mfu": "Achieved MFU"}


def labels(currency: str | None = "USD") -> dict[str, str]:
    """``LABELS`` in the bill's currency: "$ per GPU-hour" for US dollars, "NOK per GPU-hour" for another code,
    "Cost per GPU-hour" when the table names none (``format.money_symbol``)."""
    symbol = money_symbol(currency)
    return {"usd_per_gpu_hour": f"{symbol} per GPU-hour", "usd_per_million_tokens": f"{symbol} per million tokens",
            "mfu": LABELS["mfu"]}


NEEDS_PRICES = "needs a billing export (FOCUS, AWS CUR, GCP or Azure): a Slurm or W&B export carries no prices"
NEEDS_TOKENS = ("needs a run export with tokens: load the W&B sample (wandb_sample.csv) or upload a W&B runs "
                "table; billing exports and Slurm do not count tokens")


def catalogue_peak_tflops(gpu_type: object) -> float:
    """Dense BF16 peak TFLOP/s of a gpu_type cell from the hardware catalogue ("H100 80GB HBM3" → H100 SXM);
    NaN when the cell is missing or names an accelerator the catalogue does not hold."""
    for name in (gpu_type, gpu_name(gpu_type)):
        if isinstance(name, str):
            try:
                return catalogue()[resolve_gpu_type(name)].peak_bf16_dense_tflops
            except (ValueError, KeyError):  # KeyError: "custom" resolves but has no catalogue entry
                continue
    return np.nan


def _row_peaks(gpu_types: pd.Series) -> np.ndarray:
    """Catalogue peak TFLOP/s of every cell, looked up once per distinct gpu_type."""
    codes, uniques = pd.factorize(gpu_types, use_na_sentinel=True)
    lookup = np.array([catalogue_peak_tflops(value) for value in uniques] + [np.nan])
    return lookup[np.where(codes < 0, len(uniques), codes)]


@dataclass(frozen=True)
class UnitCosts:
    """Unit costs of a view (`unit_costs`), in the table's currency (NaN when it has none): the view's ``rows``;
    the GPU rows' ``gpu_hours``, ``gpu_cost`` and cost per GPU-hour (``usd_per_gpu_hour``) and the other rows'
    ``non_gpu_cost``; the rows with tokens' ``tokens``, ``token_gpu_hours``, ``token_cost`` and cost per million
    tokens (``usd_per_million_tokens``); the ``peak_tflops`` used for ``mfu`` (a fraction 0..1; NaN when none);
    and ``reasons``: metric name → what it needs, in words for the reader, to follow its label in ``LABELS``
    (empty when all are known)."""

    rows: int
    gpu_hours: float
    gpu_cost: float
    non_gpu_cost: float
    usd_per_gpu_hour: float
    tokens: float
    token_gpu_hours: float
    token_cost: float
    usd_per_million_tokens: float
    peak_tflops: float
    mfu: float
    reasons: dict[str, str]

    @property
    def cost(self) -> float:
        """The view's whole cost: its GPU rows' and the others'."""
        return self.gpu_cost + self.non_gpu_cost


def unit_costs(usage: pd.DataFrame | ir.Table, active_params: float | None = None,
               peak_tflops: float | None = None) -> UnitCosts:
    """$ per GPU-hour, $ per million tokens and achieved MFU, each NaN with a reason when it cannot be known
    (`UnitCosts`).

    - ``usd_per_gpu_hour`` = GPU rows' cost / their GPU-hours, over the rows whose cost is known (a joined
      table leaves run-export rows without a billing match at NaN cost).
    - ``usd_per_million_tokens`` = cost of the rows with tokens / their tokens × 1e6, over rows with a known cost.
    - ``mfu`` = 6·N_active·tokens / (GPU-hours · 3600 · peak) over the rows with tokens, computed as
      ``compute.gpu_hours(compute.model_flops(N_active, tokens), peak, 1.0)`` / GPU-hours, i.e. the GPU-hours
      the tokens need at 100 % utilisation over those used. ``peak_tflops`` (dense BF16 TFLOP/s) applies to
      every row; without it each row's peak comes from its gpu_type in the hardware catalogue, and the
      peak used is the GPU-hour-weighted mean (so mixed GPU types give achieved / available FLOPs).

    Costs are NaN when the table has no currency (Slurm and W&B exports carry no prices and read as cost 0).
    ``usage`` may be a workspace dataset's rollup read as rows (``rolled``) by ``SUMS_GRAIN`` (when no row has tokens)
    or ``TOKENS_GRAIN``: the same figures from its sums (``rollup_unit_sums``).
    """
    reasons: dict[str, str] = {}
    usage = tables.table_of(usage)
    sums = rollup_unit_sums(usage) if rolled(usage) else unit_sums(usage)
    if sums is None:
        raise ValueError("a rollup not by gpu_type and tokens_sign cannot give the unit costs of rows with tokens")
    priced = sums.has_prices
    gpu_hours, priced_hours = sums.gpu_hours, sums.priced_gpu_hours
    gpu_cost = sums.gpu_cost if priced else np.nan
    usd_per_gpu_hour = gpu_cost / priced_hours if priced_hours and priced else np.nan
    no_prices = NEEDS_PRICES
    if not gpu_hours:
        reasons["usd_per_gpu_hour"] = "needs rows with GPU-hours: this view has none"
    elif not priced:
        reasons["usd_per_gpu_hour"] = no_prices

    tokens, token_gpu_hours, priced_tokens = sums.tokens, sums.token_gpu_hours, sums.priced_tokens
    token_cost = sums.token_cost if priced else np.nan
    no_tokens = NEEDS_TOKENS
    usd_per_million_tokens = token_cost / priced_tokens * TOKENS_PER_MILLION if priced_tokens and priced else np.nan
    if not tokens:
        reasons["usd_per_million_tokens"] = no_tokens
    elif not priced:
        reasons["usd_per_million_tokens"] = no_prices

    peak_used = np.nan
    if peak_tflops is not None:
        peak_used = float(peak_tflops)
    elif tokens:
        by_type = token_hours_by_gpu_type(usage)
        peaks = _row_peaks(by_type["gpu_type"])
        peak_used = float(np.sum(peaks * by_type["gpu_hours"].to_numpy(dtype=float)) / token_gpu_hours)
        if np.isnan(peak_used):
            unknown = sorted({str(name) for name in by_type["gpu_type"][np.isnan(peaks)].fillna("(missing)")})
            reasons["mfu"] = (f"needs the peak speed of {', '.join(unknown)}, which the hardware catalogue does not "
                              "list")
    mfu = np.nan
    if not tokens:
        reasons["mfu"] = no_tokens
    elif active_params is None:
        reasons["mfu"] = "needs the model's active parameters: choose a plan"
    elif "mfu" not in reasons:
        ideal_gpu_hours = compute.gpu_hours(compute.model_flops(active_params, tokens), peak_used, 1.0)
        mfu = float(ideal_gpu_hours / token_gpu_hours)
    return UnitCosts(
        rows=sums.rows, gpu_hours=gpu_hours, gpu_cost=gpu_cost, non_gpu_cost=sums.non_gpu_cost if priced else np.nan,
        usd_per_gpu_hour=usd_per_gpu_hour, tokens=tokens, token_gpu_hours=token_gpu_hours, token_cost=token_cost,
        usd_per_million_tokens=usd_per_million_tokens, peak_tflops=peak_used, mfu=mfu, reasons=reasons)


SUMS: tuple[str, ...] = ("gpu_hours", "priced_gpu_hours", "gpu_cost", "tokens", "token_gpu_hours", "priced_tokens",
                         "token_cost")


def _with_tokens(usage: ir.Table) -> ir.BooleanColumn:
    return nonzero_gpu(usage) & holds(usage.tokens > 0)


@dataclass(frozen=True)
class UnitSums:
    """The sums unit costs are divided from: the view's ``rows``; GPU rows' ``gpu_hours``, ``priced_gpu_hours`` and
    ``gpu_cost`` (cost known); the rows with tokens' ``tokens``, ``token_gpu_hours``, ``priced_tokens`` and
    ``token_cost`` (0 when no row qualifies); ``has_prices`` (some row has a currency) and ``non_gpu_cost`` (NaN
    when a non-GPU row has no cost), as ``mix.price_facts`` gives them."""

    rows: int
    gpu_hours: float
    priced_gpu_hours: float
    gpu_cost: float
    tokens: float
    token_gpu_hours: float
    priced_tokens: float
    token_cost: float
    has_prices: bool
    non_gpu_cost: float


@query
def unit_sums(usage: ir.Table) -> UnitSums:
    """The view's `UnitSums`. Two queries: the sums in one pass (a non-GPU row without a cost is counted), and the
    first row with a currency, where an engine stops reading (a count of such rows reads the text column whole)."""
    row = table_result(_unit_sums_expr(usage)).iloc[0]
    return UnitSums(
        rows=int(number(row["rows"])), **{name: number(row[name]) for name in SUMS},
        has_prices=not table_result(_priced_expr(usage)).empty,
        non_gpu_cost=np.nan if number(row["non_gpu_costless"]) else number(row["non_gpu_cost"]))


SUMS_GRAIN = ("gpu_sign", "cost_sign")  # the columns a rollup groups by for ``rollup_unit_sums`` to be exact
# ... and for rows with tokens: which GPU rows carry them, and their GPU types' peaks (achieved MFU)
TOKENS_GRAIN = ("gpu_type", *SUMS_GRAIN, "tokens_sign")
ROLLED = "row_count"  # the column of a rollup read as rows (``rollup_rows.as_rows``) a usage table does not have


def rolled(usage: ir.Table) -> bool:
    """Whether ``usage`` is a rollup read as rows (``rollup_rows.as_rows``), not rows."""
    return ROLLED in usage.columns


@query
def rollup_unit_sums(rolled: ir.Table) -> UnitSums | None:
    """``unit_sums`` of the rows a rollup by ``SUMS_GRAIN`` stands in for, from the rollup read as rows
    (``rollup_rows.as_rows``): the same queries over its rows of sums, whose row tests read as the rows' (a group's
    GPU-hours and cost are all above, below or at zero, or all missing, as its sums are), and its ``row_count`` summed
    for the rows; None when some row has tokens and the rollup is not by ``TOKENS_GRAIN`` (it keeps their sum, not
    which GPU rows carry them)."""
    sums = rolled.filter(rolled.row_count > 0)  # without the rows of NULL: the signs tell a missing sum already
    row = table_result(sums.aggregate(rows=sums.row_count.sum(), tokens=sums.tokens.count()))
    if number(row["tokens"].iloc[0]) and not set(TOKENS_GRAIN) <= set(rolled.columns):
        return None
    return dataclasses.replace(unit_sums(sums), rows=int(number(row["rows"].iloc[0])))


@built
def _unit_sums_expr(usage: ir.Table) -> ir.Table:
    rows = usage.select("gpu_hours", "cost", "tokens", gpu=nonzero_gpu(usage), tokens_known=_with_tokens(usage),
                        known=usage.cost.notnull())  # each row test once
    gpu, tokens, known = rows.gpu, rows.tokens_known, rows.known
    return rows.aggregate(
        rows=rows.count(),
        non_gpu_cost=rows.cost.sum(where=~gpu), non_gpu_costless=rows.count(where=~gpu & ~known),
        gpu_hours=rows.gpu_hours.sum(where=gpu),
        priced_gpu_hours=rows.gpu_hours.sum(where=gpu & known),
        gpu_cost=rows.cost.sum(where=gpu),  # a sum skips the rows without a cost
        tokens=rows.tokens.sum(where=tokens),
        token_gpu_hours=rows.gpu_hours.sum(where=tokens),
        priced_tokens=rows.tokens.sum(where=tokens & known),
        token_cost=rows.cost.sum(where=tokens))


@built
def _priced_expr(usage: ir.Table) -> ir.Table:
    return found(usage, {"priced": usage.currency.notnull()})


@built
def _token_hours_expr(usage: ir.Table) -> ir.Table:
    rows = rows_where(usage, _with_tokens(usage))
    return rows.group_by("gpu_type").agg(gpu_hours=rows.gpu_hours.sum())


@query
def token_hours_by_gpu_type(usage: ir.Table) -> pd.DataFrame:
    """``gpu_type`` (NA kept) and ``gpu_hours`` of the GPU rows with tokens."""
    frame = table_result(_token_hours_expr(usage))
    return pd.DataFrame({"gpu_type": frame["gpu_type"].astype("string"),
                         "gpu_hours": frame["gpu_hours"].to_numpy(dtype=float)})
