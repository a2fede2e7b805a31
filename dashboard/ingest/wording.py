"""Counts and amounts in the import's messages, written as a sentence would: "1 row", "3 rows", "2.50 USD"."""

from __future__ import annotations

from dashboard.format import table_decimals


def count_text(count: int, noun: str) -> str:
    """``1 row`` / ``1,204 rows``: the count with the noun in the right number (plural by adding "s")."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def amount_text(amount: float, currency: str | None) -> str:
    """``5,120 USD`` (no cents from 1,000 on, `format.table_decimals`), ``1.14 USD``; without a currency, the figure."""
    figure = f"{amount:,.{table_decimals([amount])}f}"
    return f"{figure} {currency}" if currency else figure
