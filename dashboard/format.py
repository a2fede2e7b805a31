"""Human-readable numbers for tiles, tables, chart labels and the CLI (pure, no streamlit).

`number(value, unit)` is the one display format: three significant figures with a k/M/B/T suffix ($441k, $903,
$69, 26.6M), powers of ten for FLOPs (8.4×10²² FLOPs), GB/TB/PB for storage; a loss in nats to three decimals
(2.065: options are compared at equal loss, and 0.01 nats matter). `exact(value, unit)` is the same
number in full (hover text, downloads). `signed` is `number` with its sign, for differences; `change` is the one
delta text of the tiles, Compare, the presentation layout and the report ("≈ same" below the displayed precision
or half a percent). The units are the keys of `UNITS`; `dashboard.core.catalogue` gives every output and input its
unit.

`short` labels sliders; `usd_sig` and `count_sig` are the Retrospective's three-figure forms of `number`.
`money` is the one amount of a bill, in the bill's currency ("$1.2k" for US dollars, "1.2k NOK" for any other
code, the bare figure when the bill names none); `money_affixes` and `money_symbol` are its parts for chart ticks,
hover text and column labels. `gpu_count` writes concurrent GPUs: whole GPUs from 10 on, two significant figures
below (a 1-GPU bill's mean of 0.0087 GPUs is not "0").
`table_decimals` is the rule for a table column of sums: whole units once any entry reaches 1,000.
A fraction beyond ±1,000 % reads "more than 10×" (or "less than -10×") in `number`, `exact`, `signed` and `change`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

COUNT_STEPS = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"))
SIGNIFICANT = 3
EXACT_SIGNIFICANT = 10
WHOLE_UNITS_FROM = 1_000.0  # a table column of sums drops its decimals once an entry reaches this
SCIENTIFIC_FROM = 1e15  # counts from here on are written as a power of ten
SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
STORAGE_STEPS = ((1e6, "PB"), (1e3, "TB"), (1.0, "GB"))
BYTE_STEPS = ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"))


DENOISE_FIGURES = 12  # a float sum's last bits depend on its order: cut them before rounding for display


def _denoised(value: float) -> float:
    """``value`` to ``DENOISE_FIGURES`` significant figures, so that sums of the same numbers in another order
    (another engine's) round to the same text: 300.50000000000006 and 300.49999999999994 both read as 300.5."""
    return float(f"{value:.{DENOISE_FIGURES}g}")


def _round(value: float, figures: int) -> float:
    return float(f"{_denoised(value):.{figures}g}")


def significant(value: float, figures: int = SIGNIFICANT) -> str:
    """`value` to `figures` significant figures, thousands separated, trailing zeros dropped: 441, 0.221, 1,230."""
    rounded = _round(value, figures)
    if rounded == 0:
        return "0"
    decimals = max(0, figures - 1 - math.floor(math.log10(abs(rounded))))
    text = f"{rounded:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def power_of_ten(value: float, figures: int = SIGNIFICANT) -> str:
    """`value` as mantissa ×10 to a power, the exponent in superscript: 8.4×10²²."""
    mantissa, exponent = f"{value:.{figures - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}×10{str(int(exponent)).translate(SUPERSCRIPTS)}"


def compact(value: float, figures: int = SIGNIFICANT) -> str:
    """Three significant figures with a k/M/B/T suffix: 441k, 26.6M, 2T, 903; a power of ten from 10¹⁵."""
    rounded = _round(value, figures)
    if abs(rounded) >= SCIENTIFIC_FROM:
        return power_of_ten(value, figures)
    for limit, suffix in COUNT_STEPS:
        if abs(rounded) >= limit:
            return f"{significant(rounded / limit, figures)}{suffix}"
    return significant(rounded, figures)


def _money(value: float) -> str:
    return f"{'-' if value < 0 else ''}${compact(abs(value))}"


def _stepped(steps: tuple[tuple[float, str], ...], below: Callable[[float], str]) -> Callable[[float], str]:
    """Three significant figures in the largest step's unit the value reaches; `below` writes smaller values."""
    def text(value: float) -> str:
        rounded = _round(value, SIGNIFICANT)
        for limit, suffix in steps:
            if abs(rounded) >= limit:
                return f"{significant(rounded / limit)} {suffix}"
        return below(rounded)

    return text


_storage = _stepped(STORAGE_STEPS, lambda gb: f"{significant(gb)} GB")  # 98.2 GB, 18.7 TB, 2.5 PB
_bytes = _stepped(BYTE_STEPS, lambda count: f"{count:,.0f} bytes")  # a file's size: 20.3 kB, 1.9 GB, 512 bytes


def _suffixed(unit_text: str) -> Callable[[float], str]:
    return lambda value: f"{significant(value)}{unit_text}"


PERCENT_UP_TO = 10.0  # a fraction beyond ±1,000 % reads as a multiple ("more than 10×"), never a 400-digit figure


def _beyond_percent(fraction: float, sign: str = "") -> str | None:
    """For a fraction above 1,000 %: "more than 10×" ("more than +10×" with ``sign``); below -1,000 %: "less than
    -10×"; None within."""
    if fraction > PERCENT_UP_TO:
        return f"more than {sign}{PERCENT_UP_TO:g}×"
    if fraction < -PERCENT_UP_TO:
        return f"less than -{PERCENT_UP_TO:g}×"
    return None


def _percent(fraction: float) -> str:
    return _beyond_percent(fraction) or f"{significant(100 * fraction)} %"


def _flops(value: float) -> str:
    return f"{power_of_ten(value) if abs(value) >= 1e4 else significant(value)} FLOPs"


DAYS_PER_YEAR = 365.25


def _days(value: float) -> str:
    """Days, and from a year on years: "64.1 years" says at a glance what "23,400 days" hides, and fits a tile."""
    if abs(value) < DAYS_PER_YEAR:
        return f"{significant(value)} days"
    years = value / DAYS_PER_YEAR
    return f"{years:.1f} years" if abs(years) < 100 else f"{years:,.0f} years"


def _integer(value: float) -> str:
    return f"{value:,.0f}"


# unit → display formatter. "$" covers every dollar amount ($/GPU-hour included: the label says per what).
UNITS: dict[str, Callable[[float], str]] = {
    "$": _money,
    "count": compact,
    "integer": _integer,
    "FLOPs": _flops,
    "fraction": _percent,
    "pp": _suffixed(" pp"),
    "days": _days,
    "h": _suffixed(" h"),
    "min": _suffixed(" min"),
    "months": _suffixed(" months"),
    "s": _suffixed(" s"),
    "GB": _storage,
    "bytes": _bytes,
    "GB/s": _suffixed(" GB/s"),
    "TB/s": _suffixed(" TB/s"),
    "tokens/s": lambda value: f"{compact(value)} tokens/s",
    "TFLOP/s": lambda value: f"{compact(value)} TFLOP/s",
    "×": _suffixed("×"),
    "nats": lambda loss: f"{loss:.3f}",
    "": significant,
}


def _check(unit: str) -> None:
    if unit not in UNITS:
        raise KeyError(f"unknown unit {unit!r}: use one of {', '.join(repr(u) for u in UNITS)}")


def _special(value: float | bool | None) -> str | None:
    """The text of a value that is not an ordinary number (missing, NaN, a boolean, infinite), else None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return None


def number(value: float | None, unit: str = "") -> str:
    """The display text of a number in its unit (see the module docstring); "n/a" for NaN or a missing value."""
    _check(unit)
    special = _special(value)
    if special is not None or value is None:
        return special or "n/a"
    return UNITS[unit](float(value))


def signed(value: float, unit: str = "") -> str:
    """A difference with its sign in front: +$12.3k, -1.5 days, +0 when nothing changed; a fraction beyond
    ±1,000 % as "more than +10×" or "less than -10×"."""
    if unit == "fraction" and math.isfinite(value) and _beyond_percent(value):
        return _beyond_percent(value, "+") or ""
    text = number(abs(value), unit) if math.isfinite(value) else number(value, unit)
    return ("-" if value < 0 else "+") + text.lstrip("-") if math.isfinite(value) else text


SAME = "≈ same"  # a difference too small to read as a change: grey, no arrow
SAME_SHARE = 0.005  # below half a percent of the value compared against


def is_same(value: float, base: float, unit: str = "") -> bool:
    """True when `value` and `base` read as the same: they display alike in `unit`, or differ by less than
    `SAME_SHARE` of `base` (non-finite values only when equal)."""
    if not (math.isfinite(value) and math.isfinite(base)):
        return value == base
    if number(value, unit) == number(base, unit):
        return True
    return abs(value - base) < SAME_SHARE * abs(base)


def change(value: float, base: float, unit: str = "") -> str:
    """The difference `value` − `base` as every delta shows it: `SAME` when it is below the displayed precision
    or half a percent (`is_same`), else signed in `unit` (a fraction's difference in percentage points)."""
    if is_same(value, base, unit):
        return SAME
    if unit == "fraction":
        return signed(value - base, "fraction") if _beyond_percent(value - base) else signed(100 * (value - base), "pp")
    return signed(value - base, unit)


def exact(value: float | None, unit: str = "") -> str:
    """The full value for hover text: ten significant figures, thousands separated, in the same unit."""
    _check(unit)
    special = _special(value)
    if special is not None or value is None:
        return special or "n/a"
    value = float(value)
    if unit == "FLOPs":
        return f"{power_of_ten(value, EXACT_SIGNIFICANT)} FLOPs"
    if unit == "$":
        sign = "-" if value < 0 else ""
        return f"{sign}${abs(value):,.2f}" if abs(value) >= 1 else f"{sign}${abs(value):.4g}"
    if unit == "fraction":
        return _beyond_percent(value) or f"{significant(100 * value, EXACT_SIGNIFICANT)} %"
    if unit in ("count", "integer"):
        return significant(value, EXACT_SIGNIFICANT)
    text = significant(value, EXACT_SIGNIFICANT)
    tail = {"nats": "", "": "", "×": "×"}.get(unit, f" {unit}")
    return f"{text}{tail}"


def short(value: float) -> str:
    """Three significant digits and a suffix, for slider labels: 405B, 1.5B, 15.6T, 512."""
    for limit, suffix in COUNT_STEPS:
        if abs(value) >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def _three_figures(value: float) -> str:
    """Three significant figures with a k/M/B/T suffix and no trailing zeros: 951k, 1.21M, 7.58, 640; a power of
    ten from 10¹⁵."""
    rounded = float(f"{_denoised(value):.3g}")
    if abs(rounded) >= SCIENTIFIC_FROM:
        return power_of_ten(value)
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


def table_decimals(values: Iterable[object]) -> int:
    """Decimals for a table column of sums ($ or GPU-hours): 0 once any finite entry reaches 1,000, else 2.

    One rule per column, so the digits line up: "$951,204" and "$1,880" rather than "$951,204.37"."""
    largest = 0.0
    for value in values:
        try:
            magnitude = abs(float(value))  # type: ignore[arg-type]  # a cell of any type; non-numbers are skipped below
        except (TypeError, ValueError):
            continue
        if math.isfinite(magnitude):
            largest = max(largest, magnitude)
    return 0 if largest >= WHOLE_UNITS_FROM else 2


USD = "USD"
GPU_WHOLE_FROM = 10.0  # concurrent GPUs from here on are whole; below, two significant figures


def money(value: float | None, currency: str | None = USD) -> str:
    """An amount in its bill's currency, three significant figures: US dollars as `usd_sig` writes them ($1.2k,
    -$25k), another currency with its code after the figure (1.2k NOK, -25k EUR), no currency as the figure alone
    (1.2k); "n/a" when unknown."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if currency == USD:
        return usd_sig(value)
    figure = f"{'-' if value < 0 else ''}{_three_figures(abs(value))}"
    return f"{figure} {currency}" if currency else figure


def money_affixes(currency: str | None = USD) -> tuple[str, str]:
    """What goes before and after a figure in ``currency``, as `money` writes it: ("$", "") for US dollars,
    ("", " NOK") for another code, ("", "") without one (a chart's tickprefix / ticksuffix, a hover template)."""
    if currency == USD:
        return "$", ""
    return "", (f" {currency}" if currency else "")


def money_symbol(currency: str | None = USD) -> str:
    """The currency at the head of a label: "$" for US dollars ("$ per GPU-hour"), else its code ("NOK per
    GPU-hour"), "Cost" when the bill names none ("Cost per GPU-hour")."""
    if currency == USD:
        return "$"
    return currency or "Cost"


def gpu_count(value: float | None) -> str:
    """Concurrent GPUs: whole from `GPU_WHOLE_FROM` on (1,024), two significant figures below (4.5, 0.0087, 1);
    "n/a" when unknown."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if abs(_round(value, 2)) < GPU_WHOLE_FROM:
        return significant(value, 2)
    return f"{value:,.0f}"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """A count with its noun in the right number: "1 preset", "2 presets", "1,024 runs" (``plural`` for irregular
    nouns: counted(3, "body", "bodies"))."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
