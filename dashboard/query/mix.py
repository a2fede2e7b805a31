"""Purchase mix as a query: GPU-hours and cost of the GPU rows (GPU-hours present and non-zero) by pricing label,
whether the table carries prices, and the cost of the rows without GPU-hours."""

from __future__ import annotations

import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.query.columns import flag, label, nonzero_gpu, number, rows_where
from dashboard.query.compiled import built, execute, query


@built
def _tier_expr(usage: ir.Table) -> ir.Table:
    gpu = rows_where(usage, nonzero_gpu(usage))
    return gpu.group_by(pricing=label(gpu, "pricing")).agg(
        gpu_hours=gpu.gpu_hours.sum(), cost=gpu.cost.sum(), cost_null=gpu.cost.isnull().any())


@query
def tier_totals(usage: ir.Table) -> pd.DataFrame:
    """One row per pricing label of the GPU rows: ``pricing``, ``gpu_hours`` and ``cost`` (NaN when a row has none)."""
    frame = execute(_tier_expr(usage))
    return pd.DataFrame({"pricing": frame["pricing"].astype("string"),
                         "gpu_hours": frame["gpu_hours"].to_numpy(dtype=float),
                         "cost": frame["cost"].astype(float).where(~frame["cost_null"].astype(bool))
                         .to_numpy(dtype=float)})


@built
def _price_expr(usage: ir.Table) -> ir.Table:
    other = ~nonzero_gpu(usage)
    return usage.aggregate(priced=usage.currency.notnull().any(), cost=usage.cost.sum(where=other),
                           cost_null=usage.cost.isnull().any(where=other))


@query
def price_facts(usage: ir.Table) -> dict[str, object]:
    """``has_prices`` (some currency present: Slurm and W&B exports carry none) and ``non_gpu_cost`` (cost of the
    rows without GPU-hours; NaN when one of them has no cost)."""
    row = execute(_price_expr(usage)).iloc[0]
    return {"has_prices": flag(row["priced"]),
            "non_gpu_cost": np.nan if flag(row["cost_null"]) else number(row["cost"])}
