"""Human-readable numbers for tiles and tables: dollars, hours, days, large counts."""

from __future__ import annotations

import math


def usd(value: float) -> str:
    if not math.isfinite(value):
        return "n/a"
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"${value / limit:,.2f}{suffix}"
    return f"${value:,.2f}"


def count(value: float) -> str:
    if not math.isfinite(value):
        return "n/a"
    for limit, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:,.2f}{suffix}"
    return f"{value:,.1f}"
