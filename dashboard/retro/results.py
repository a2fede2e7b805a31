"""A query's result as the frame it is: `dashboard.query.compiled.execute` types any expression's result loosely
(a scalar, a column or a table), and a table expression gives a frame."""

from __future__ import annotations

import ibis.expr.types as ir
import pandas as pd

from dashboard.query.compiled import execute


def table_result(expr: ir.Expr) -> pd.DataFrame:
    """The result of the table expression ``expr`` (`execute`: inside a ``query`` function, its cached SQL)."""
    result = execute(expr)
    if not isinstance(result, pd.DataFrame):
        raise TypeError(f"a table expression gave {type(result).__name__}, not a frame")
    return result
