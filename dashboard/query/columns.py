"""The canonical table's labels and row tests as Ibis expressions, the one place they are written for every query.

Missing tags are never dropped: an NA team, project or run reads as ``UNTAGGED`` ("(untagged)") and an NA pricing
tier as ``UNKNOWN_PRICING`` ("(unknown)"). SQL's NULL is pandas' NA and NaN: a test on a NULL is false here, as
a pandas mask on NA is after ``fillna(False)``.
"""

from __future__ import annotations

from typing import SupportsFloat

import ibis
import ibis.expr.operations as ops
import ibis.expr.types as ir
import pandas as pd

from dashboard.ingest.charges import COMMITMENT, UNUSED_COMMITMENT
from dashboard.query.labels import NA_LABELS, UNKNOWN_PRICING, UNTAGGED

__all__ = ["NA_LABELS", "UNKNOWN_PRICING", "UNTAGGED", "commitment", "failed", "flag", "gpu", "has_null", "holds",
           "label", "nonzero_cost", "nonzero_gpu", "number", "paid_commitment", "reserved", "rows_where", "total",
           "unused_commitment"]


def label(usage: ir.Table, column: str) -> ir.StringColumn:
    """``usage[column]`` with NULL replaced by its label."""
    return usage[column].cast("string").fill_null(NA_LABELS[column])


def label_in(usage: ir.Table, column: str, labels: list[str]) -> ir.BooleanValue:
    """Whether ``label(usage, column)`` is one of ``labels``, written on the column itself (NULL when not; a filter
    drops that): a bare test DuckDB evaluates in its scan and skips row groups with, unlike one on the label."""
    values = usage[column].cast("string")
    test = values.isin(labels)
    return test | values.isnull() if NA_LABELS[column] in labels else test


def holds(test: ir.BooleanValue) -> ir.BooleanValue:
    """``test`` with NULL read as false."""
    return test.fill_null(False)


def _bare(test: ops.Value) -> ops.Value:
    """``test`` without the ``holds`` of its AND-ed terms."""
    if isinstance(test, ops.And):
        return ops.And(_bare(test.left), _bare(test.right))
    if (isinstance(test, ops.Coalesce) and len(test.arg) == 2 and isinstance(test.arg[1], ops.Literal)
            and test.arg[1].value is False):
        return test.arg[0]
    return test


def rows_where(usage: ir.Table, test: ir.BooleanValue) -> ir.Table:
    """The rows of ``usage`` for which ``test`` holds. A filter drops a NULL test as false already, so the ``holds``
    of its AND-ed terms are dropped: a bare comparison is one an engine tests while it scans, and skips whole row
    groups by their statistics (``tokens > 0`` on a bill without tokens reads none of them)."""
    return usage.filter(_bare(test.op()).to_expr())


def gpu(usage: ir.Table) -> ir.BooleanColumn:
    """Rows with GPU-hours > 0 (the plan-vs-actual, waste and load tests)."""
    return holds(usage.gpu_hours > 0)


def nonzero_gpu(usage: ir.Table) -> ir.BooleanColumn:
    """Rows with GPU-hours present and non-zero (the purchase mix's and unit costs' GPU rows)."""
    return holds(usage.gpu_hours != 0)


def nonzero_cost(usage: ir.Table) -> ir.BooleanColumn:
    """Rows with a cost present and non-zero."""
    return holds(usage.cost != 0)


def reserved(usage: ir.Table) -> ir.BooleanColumn:
    return holds(usage.pricing == "reserved")


def reserved_gpu(usage: ir.Table) -> ir.BooleanColumn:
    """The reserved tier's GPU rows."""
    return gpu(usage) & reserved(usage)


def reserved_gpu_priced(usage: ir.Table) -> ir.BooleanColumn:
    """Reserved GPU rows with a non-zero cost (none of them has one in an actual-cost view)."""
    return reserved_gpu(usage) & nonzero_cost(usage)


def failed(usage: ir.Table, failed_states: tuple[str, ...]) -> ir.BooleanColumn:
    """Rows whose run_state is one of ``failed_states``."""
    return holds(usage.run_state.isin(list(failed_states))) if failed_states else ibis.literal(False)


def paid_commitment(usage: ir.Table) -> ir.BooleanColumn:
    """Commitment purchases and fees billed on their own lines at what was paid, with a cost (charge_kind
    "commitment", as the import marks what the bill says: ``dashboard.ingest.charges``)."""
    return holds(usage.charge_kind == COMMITMENT) & nonzero_cost(usage)


def unused_commitment(usage: ir.Table) -> ir.BooleanColumn:
    """The provider's lines of commitment nobody used, with a cost (charge_kind "unused_commitment")."""
    return holds(usage.charge_kind == UNUSED_COMMITMENT) & nonzero_cost(usage)


def commitment(usage: ir.Table) -> ir.BooleanColumn:
    """Commitment lines: paid commitments and unused-commitment lines, with a cost. Covered usage is usage."""
    return holds(usage.charge_kind.isin([COMMITMENT, UNUSED_COMMITMENT])) & nonzero_cost(usage)


def storage_test(usage: ir.Table) -> ir.BooleanColumn:
    """Storage lines (Waste's storage growth): no GPU-hours, no run, a positive cost, not a commitment line, and a
    name (``storage_name``)."""
    named = usage.resource_id.notnull() | (usage.team.notnull() & usage.project.notnull())
    return ~gpu(usage) & usage.run_id.isnull() & ~commitment(usage) & holds(usage.cost > 0) & named


def storage_name(usage: ir.Table) -> ir.StringColumn:
    """A storage line's name: its resource id, else "team / project"; NULL for a row that is not one
    (``storage_test``). The storage rollup groups by it (``dashboard.workspace.rollups``)."""
    name = ibis.coalesce(usage.resource_id, usage.team.concat(" / ", usage.project))
    return ibis.ifelse(storage_test(usage), name, ibis.null().cast("string"))


def found(usage: ir.Table, tests: dict[str, ir.BooleanValue]) -> ir.Table:
    """One ``name`` row for each of ``tests`` some row of ``usage`` passes, from the first such row: an engine stops
    reading there, where an ``any`` over the rows reads every one (4 s on 100M rows for three flags)."""
    firsts = [rows_where(usage, test).select(name=ibis.literal(name)).limit(1) for name, test in tests.items()]
    return firsts[0] if len(firsts) == 1 else ibis.union(*firsts, distinct=False)


def total(value: ir.NumericValue, where: ir.BooleanValue | None = None) -> ir.NumericScalar:
    """Sum of ``value`` over the rows ``where`` holds, NULLs skipped (numpy's nansum; NULL for no rows)."""
    return value.sum(where=where)


def has_null(value: ir.Value, where: ir.BooleanValue | None = None) -> ir.BooleanScalar:
    """Whether ``value`` is NULL on any row ``where`` holds (a pandas sum over them would be NaN)."""
    return value.isnull().any(where=where)


def number(value: object, missing: float = 0.0) -> float:
    """A scalar result as a float: ``missing`` for NULL (an empty sum)."""
    if pd.isna(value):
        return missing
    if not isinstance(value, SupportsFloat):
        raise TypeError(f"a query's scalar is not a number: {value!r}")
    return float(value)


def flag(value: object) -> bool:
    """A boolean result: false for NULL (``any`` over no rows)."""
    return False if pd.isna(value) else bool(value)
