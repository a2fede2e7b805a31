"""Unit costs as a query: the sums behind $ per GPU-hour, $ per million tokens and achieved MFU, and the GPU-hours
with tokens by GPU type (each type's peak comes from the hardware catalogue)."""

from __future__ import annotations

import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.query.columns import holds, nonzero_gpu, number, rows_where
from dashboard.query.compiled import built, execute, query

SUMS: tuple[str, ...] = ("gpu_hours", "priced_gpu_hours", "gpu_cost", "tokens", "token_gpu_hours", "priced_tokens",
                         "token_cost")


def _with_tokens(usage: ir.Table) -> ir.BooleanColumn:
    return nonzero_gpu(usage) & holds(usage.tokens > 0)


@query
def unit_sums(usage: ir.Table) -> dict[str, object]:
    """The view's ``rows``, GPU rows' ``gpu_hours``, ``priced_gpu_hours`` and ``gpu_cost`` (cost known), the rows
    with tokens' ``tokens``, ``token_gpu_hours``, ``priced_tokens`` and ``token_cost`` (0 when no row qualifies),
    and ``has_prices`` (some row has a currency) and ``non_gpu_cost`` as ``mix.price_facts`` gives them. One query:
    the tiles of a filter change read the rows once (a non-GPU row without a cost is counted)."""
    row = execute(_unit_sums_expr(usage)).iloc[0]
    return {name: number(row[name]) for name in SUMS} | {
        "rows": int(number(row["rows"])),
        "has_prices": number(row["priced_rows"]) > 0,
        "non_gpu_cost": np.nan if number(row["non_gpu_costless"]) else number(row["non_gpu_cost"])}


@built
def _unit_sums_expr(usage: ir.Table) -> ir.Table:
    rows = usage.select("gpu_hours", "cost", "tokens", gpu=nonzero_gpu(usage), tokens_known=_with_tokens(usage),
                        known=usage.cost.notnull(), priced=usage.currency.notnull())  # each row test once
    gpu, tokens, known = rows.gpu, rows.tokens_known, rows.known
    return rows.aggregate(
        rows=rows.count(), priced_rows=rows.count(where=rows.priced),
        non_gpu_cost=rows.cost.sum(where=~gpu), non_gpu_costless=rows.count(where=~gpu & ~known),
        gpu_hours=rows.gpu_hours.sum(where=gpu),
        priced_gpu_hours=rows.gpu_hours.sum(where=gpu & known),
        gpu_cost=rows.cost.sum(where=gpu),  # a sum skips the rows without a cost
        tokens=rows.tokens.sum(where=tokens),
        token_gpu_hours=rows.gpu_hours.sum(where=tokens),
        priced_tokens=rows.tokens.sum(where=tokens & known),
        token_cost=rows.cost.sum(where=tokens))


@built
def _token_hours_expr(usage: ir.Table) -> ir.Table:
    rows = rows_where(usage, _with_tokens(usage))
    return rows.group_by("gpu_type").agg(gpu_hours=rows.gpu_hours.sum())


@query
def token_hours_by_gpu_type(usage: ir.Table) -> pd.DataFrame:
    """``gpu_type`` (NA kept) and ``gpu_hours`` of the GPU rows with tokens."""
    frame = execute(_token_hours_expr(usage))
    return pd.DataFrame({"gpu_type": frame["gpu_type"].astype("string"),
                         "gpu_hours": frame["gpu_hours"].to_numpy(dtype=float)})
