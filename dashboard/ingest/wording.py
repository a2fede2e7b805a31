"""Counts and amounts in the import's messages, written as a sentence would: "1 row", "3 rows", "$73.2k"."""

from __future__ import annotations

from dashboard.format import number


def count_text(count: int, noun: str) -> str:
    """``1 row`` / ``1,204 rows``: the count with the noun in the right number (plural by adding "s")."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def amount_text(amount: float, currency: str | None) -> str:
    """An amount in the app's three-significant-figure format: dollars as ``$73.2k``, another currency as
    ``12.3k EUR``, without a currency the figure alone (``12.3k``)."""
    if currency == "USD":
        return number(amount, "$")
    figure = number(amount, "count")
    return f"{figure} {currency}" if currency else figure
