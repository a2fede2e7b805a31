"""Who spent it, as a query: cost and GPU-hours of every (team, project, run) cell, untagged levels labelled."""

from __future__ import annotations

import ibis.expr.types as ir
import pandas as pd

from dashboard.query.columns import label
from dashboard.query.compiled import built, execute, query

LEVELS: tuple[str, ...] = ("team", "project", "run_id")


@built
def _cells_expr(usage: ir.Table) -> ir.Table:
    return usage.group_by(**{level: label(usage, level) for level in LEVELS}).agg(
        gpu_hours=usage.gpu_hours.sum(), cost=usage.cost.sum(),
        gpu_hours_null=usage.gpu_hours.isnull().any(), cost_null=usage.cost.isnull().any())


@query
def attribution_cells(usage: ir.Table) -> pd.DataFrame:
    """One row per labelled (team, project, run_id) with its ``gpu_hours`` and ``cost`` (NaN when a row of the
    cell has none, as a pandas sum over it would be); unordered."""
    frame = execute(_cells_expr(usage))
    table = pd.DataFrame({level: frame[level].astype("string") for level in LEVELS})
    for metric in ("gpu_hours", "cost"):
        table[metric] = frame[metric].astype(float).where(~frame[f"{metric}_null"].astype(bool)).to_numpy(dtype=float)
    return table
