"""What a widget offers, as a query: the distinct values a column of the canonical table holds (the Plan vs actual
tab's run ids), so a dataset queried where it lies is never read into memory for them."""

from __future__ import annotations

import ibis.expr.types as ir

from dashboard.query.compiled import built, execute, query


@built
def _distinct_expr(usage: ir.Table, column: str) -> ir.Table:
    rows = usage.filter(usage[column].notnull())
    return rows.select(value=rows[column].cast("string")).distinct()


@query
def distinct_values(usage: ir.Table, column: str) -> list[str]:
    """The distinct non-NULL values of ``column`` as text, sorted."""
    return sorted(str(value) for value in execute(_distinct_expr(usage, column))["value"])
