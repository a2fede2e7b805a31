"""Human-readable numbers for tiles, tables and chart labels: dollars and large counts (pure, no streamlit)."""

from __future__ import annotations

import math

USD_STEPS = ((1e9, "B"), (1e6, "M"), (1e3, "k"))
COUNT_STEPS = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"))


def usd(value: float, digits: int = 2) -> str:
    """Dollars with a k/M/B suffix and the sign in front: -$1.25M."""
    if not math.isfinite(value):
        return "n/a"
    sign = "-" if value < 0 else ""
    for limit, suffix in USD_STEPS:
        if abs(value) >= limit:
            return f"{sign}${abs(value) / limit:,.{digits}f}{suffix}"
    return f"{sign}${abs(value):,.2f}"


def count(value: float, digits: int = 2) -> str:
    """A large count with a k/M/B/T suffix: 26.62M; small values keep one decimal."""
    if not math.isfinite(value):
        return "n/a"
    for limit, suffix in COUNT_STEPS:
        if abs(value) >= limit:
            return f"{value / limit:,.{digits}f}{suffix}"
    return f"{value:,.1f}"


def short(value: float) -> str:
    """Three significant digits and a suffix, for slider labels: 405B, 1.5B, 15.6T, 512."""
    for limit, suffix in COUNT_STEPS:
        if abs(value) >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def _three_figures(value: float) -> str:
    """Three significant figures with a k/M/B/T suffix and no trailing zeros: 951k, 1.21M, 7.58, 640."""
    rounded = float(f"{value:.3g}")
    for limit, suffix in COUNT_STEPS:
        if abs(rounded) >= limit:
            return f"{float(f'{rounded / limit:.3g}'):g}{suffix}"
    if not rounded:
        return "0"
    text = f"{rounded:,.{max(0, 2 - math.floor(math.log10(abs(rounded))))}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def usd_sig(value: float | None) -> str:
    """Dollars to three significant figures, as on the Plan page: $951k, -$25k, $1.21M, $7.58 (n/a if unknown)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{'-' if value < 0 else ''}${_three_figures(abs(value))}"


def count_sig(value: float | None) -> str:
    """A count to three significant figures: 105k, 82.6k, 640, 12.5 (n/a if unknown)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    return _three_figures(value)
