"""Counts and amounts in the import's messages, written as a sentence would: "1 row", "3 rows", "2.50 USD"."""

from __future__ import annotations


def count_text(count: int, noun: str) -> str:
    """``1 row`` / ``1,204 rows``: the count with the noun in the right number (plural by adding "s")."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def amount_text(amount: float, currency: str | None) -> str:
    """``1,234.50 USD``; without a currency, the figure alone."""
    return f"{amount:,.2f} {currency}" if currency else f"{amount:,.2f}"
