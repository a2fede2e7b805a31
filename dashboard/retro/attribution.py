"""Who spent it: cost and GPU-hours by team, project and run, with untagged spend kept as its own bucket.

The cells are summed by a query (the queries in this module); their order and shares are computed here on
the one row per cell it returns.
"""

from __future__ import annotations

import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.ingest.rows import take_strings
from dashboard.query import tables
from dashboard.query.columns import label
from dashboard.query.compiled import built, query, table_result
from dashboard.retro.labels import group_codes

LEVELS: tuple[str, ...] = ("team", "project", "run_id")


def _label_rank(labels: list[str]) -> np.ndarray:
    """Alphabetical rank of each label, indexed by its code."""
    rank = np.empty(len(labels), dtype=np.int64)
    rank[np.argsort(np.asarray(labels, dtype=object), kind="stable")] = np.arange(len(labels))
    return rank


def attribution_table(usage: pd.DataFrame | ir.Table) -> pd.DataFrame:
    """One row per (team, project, run_id) with its ``gpu_hours``, ``cost`` and shares of the totals.

    NA at any level is the "(untagged)" bucket of that level (an untagged run inside a tagged project, an
    untagged project inside a tagged team, and the fully untagged spend), so every row of ``usage`` is
    counted once and the table's totals equal the usage totals. ``cost_share`` and ``gpu_hours_share`` are
    fractions (0..1) of the table's total cost and GPU-hours (NaN when that total is 0; credits can make a
    share negative). Rows are ordered by team cost, then project cost within the team, then run cost,
    largest first (names break ties).
    """
    summed = attribution_cells(tables.table_of(usage))
    level_codes, level_labels = zip(*(group_codes(summed, level) for level in LEVELS), strict=True)
    sizes = [len(labels) for labels in level_labels]
    key = np.ravel_multi_index(level_codes, sizes) if len(summed) else np.zeros(0, dtype=np.int64)
    inverse, cells = pd.factorize(key)
    team, project, run = np.unravel_index(np.asarray(cells, dtype=np.int64), sizes)
    sums = {
        metric: np.bincount(inverse, weights=summed[metric].to_numpy(dtype=float), minlength=len(cells)).astype(float)
        for metric in ("gpu_hours", "cost")
    }
    team_cost = np.bincount(team, weights=sums["cost"], minlength=sizes[0])[team]
    project_of_cell = pd.factorize(team * sizes[1] + project)[0]
    project_cost = np.bincount(project_of_cell, weights=sums["cost"])[project_of_cell]
    team_rank, project_rank, run_rank = (_label_rank(labels) for labels in level_labels)
    order = np.lexsort(
        (run_rank[run], -sums["cost"], project_rank[project], -project_cost, team_rank[team], -team_cost)
    )
    index = pd.RangeIndex(len(order))
    table = pd.DataFrame(
        {level: take_strings(codes[order], list(labels), index)
         for level, labels, codes in zip(LEVELS, level_labels, (team, project, run), strict=True)}
    )
    for metric in ("gpu_hours", "cost"):
        table[metric] = sums[metric][order]
    for metric in ("cost", "gpu_hours"):
        total = table[metric].sum()
        table[f"{metric}_share"] = table[metric] / total if total != 0 else np.nan
    return table


@built
def _cells_expr(usage: ir.Table) -> ir.Table:
    return usage.group_by(**{level: label(usage, level) for level in LEVELS}).agg(
        gpu_hours=usage.gpu_hours.sum(), cost=usage.cost.sum(),
        gpu_hours_null=usage.gpu_hours.isnull().any(), cost_null=usage.cost.isnull().any())


@query
def attribution_cells(usage: ir.Table) -> pd.DataFrame:
    """One row per labelled (team, project, run_id) with its ``gpu_hours`` and ``cost`` (NaN when a row of the
    cell has none, as a pandas sum over it would be); unordered."""
    frame = table_result(_cells_expr(usage))
    table = pd.DataFrame({level: frame[level].astype("string") for level in LEVELS})
    for metric in ("gpu_hours", "cost"):
        table[metric] = frame[metric].astype(float).where(~frame[f"{metric}_null"].astype(bool)).to_numpy(dtype=float)
    return table
