"""Formula-injection-safe CSV export of tables (cells starting with = + - @ are prefixed with a quote)."""

from __future__ import annotations

import pandas as pd

FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")


def _escape(column: pd.Series) -> pd.Series:
    """Text cells that a spreadsheet would run as a formula, prefixed with a single quote."""
    if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_datetime64_any_dtype(column.dtype):
        return column
    text = column.astype("string")
    risky = text.str.startswith(FORMULA_PREFIXES).fillna(False).astype(bool)
    return text.mask(risky, "'" + text)


def to_safe_csv(df: pd.DataFrame) -> bytes:
    """The frame as UTF-8 CSV bytes (no index) with formula-like text cells escaped.

    Numbers are written as numbers, so a negative cost stays ``-12.5``; only text cells are escaped.
    """
    safe = df.apply(_escape)
    safe.columns = [str(c) for c in _escape(pd.Series(df.columns, dtype="string"))]
    return safe.to_csv(index=False).encode("utf-8")
