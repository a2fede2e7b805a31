"""Plausibility at the boundary: the physical bounds every imported row must meet, declared once.

The engine (``engine.read_table``) applies ``implausible`` to the canonical columns every format's cost rule
builds, so the in-memory and the streamed import reject the same rows with the same reasons, and
``retro.calibrate`` refuses to measure from a table that holds such rows (its query uses these bounds too).

A row is implausible when its cost, billed cost or GPU-hours are not finite numbers; when its cost or GPU-hours
are negative on a row the export does not mark as a credit, refund, discount or correction (charge kind
"adjustment": there a negative amount is normal); when one row's cost is beyond ``MAX_ROW_COST_USD``; when it
paid more than ``MAX_PRICE_PER_GPU_HOUR_USD`` per GPU-hour; when its GPU-hours are more than its GPUs could run in
its period (the GPU count the export gives for the row, else ``MAX_ROW_GPUS``). Amounts are bounded in the bill's
currency: the US-dollar bound times ``UNITS_PER_USD`` (a rate rounded up, so a plausible amount is never refused);
a currency not in the table, or none, takes the table's largest rate (the loosest bound).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dashboard.format import SIGNIFICANT, compact, money

if TYPE_CHECKING:
    from dashboard.ingest.rows import Rows

# Bounds (physical, like the scenario's field bounds; not an operator's resource limit).
# The dearest GPU list price is about $14 per GPU-hour (B200 / H100 on demand, 2025-26: AWS p5.48xlarge $98.32 per
# hour for 8 GPUs); $1,000 is 70× that, and the scenario's price inputs stop at the same $1,000
# (core/scenario.py: "100× any list price"; tests/ingest/test_plausible.py checks they agree).
MAX_PRICE_PER_GPU_HOUR_USD = 1_000.0
# One bill line of $10¹² is a thousand times the largest cloud contract announced (about $300 billion over five
# years) and more than the world's yearly spend on data centres; no row of a real bill comes near it.
MAX_ROW_COST_USD = 1e12
# The largest GPU clusters announced hold a few hundred thousand GPUs (xAI Colossus: 200,000 in 2025); a row's
# GPU-hours beyond a million GPUs running its whole period are not a reading of any real cluster.
MAX_ROW_GPUS = 1_000_000.0
# A row without a period (no end, or an end at its start) is bounded as if it ran a billing month: 31 days.
UNKNOWN_PERIOD_H = 31 * 24.0
# Times: no cloud bill or job log predates 1970 (the Unix epoch) or reaches 2200; a duration beyond a century is no
# job's. Inside these, every period fits pandas' nanosecond times (1677-2262).
EARLIEST = pd.Timestamp("1970-01-01", tz="UTC")
LATEST = pd.Timestamp("2200-01-01", tz="UTC")
MAX_DURATION_S = 100 * 365.25 * 86_400.0
# Currency units per US dollar, rounded up from the 2025 rates (ECB / central-bank reference rates).
UNITS_PER_USD: dict[str, float] = {
    "USD": 1.0, "EUR": 1.0, "GBP": 1.0, "CHF": 1.0, "CAD": 1.5, "AUD": 1.6, "NZD": 1.8, "SGD": 1.4, "HKD": 8.0,
    "CNY": 7.5, "JPY": 160.0, "KRW": 1_500.0, "INR": 90.0, "IDR": 17_000.0, "VND": 27_000.0, "TWD": 33.0,
    "THB": 37.0, "MYR": 4.8, "PHP": 60.0, "BRL": 6.2, "MXN": 21.0, "ZAR": 19.0, "NOK": 11.5, "SEK": 11.5,
    "DKK": 7.5, "PLN": 4.3, "CZK": 25.0, "HUF": 400.0, "ILS": 4.0, "AED": 3.7, "SAR": 3.8, "TRY": 45.0,
}
LOOSEST_RATE = max(UNITS_PER_USD.values())
# Below a billionth of a currency unit a negative amount is float noise (a GCP cost less credits that equal it, summed
# in binary), finer than any bill states, not a negative charge.
NEGATIVE_SLACK = 1e-9
ADJUSTMENT = "adjustment"  # charges.ADJUSTMENT: credits, refunds, discounts, corrections
_SECONDS_SLACK = 1.0  # an export's elapsed seconds may run one second past its rounded start and end



def bounds() -> dict[str, object]:
    """The bounds a row is checked with (``implausible``), as a workspace dataset records them at import: a
    dataset whose record equals today's holds no implausible row (``retro.calibrate`` skips its scan)."""
    return {"max_price_per_gpu_hour_usd": MAX_PRICE_PER_GPU_HOUR_USD, "max_row_cost_usd": MAX_ROW_COST_USD,
            "max_row_gpus": MAX_ROW_GPUS, "unknown_period_h": UNKNOWN_PERIOD_H, "negative_slack": NEGATIVE_SLACK,
            "adjustment": ADJUSTMENT, "units_per_usd": dict(UNITS_PER_USD)}

def duration_s(rows: Rows, seconds: pd.Series, column: str) -> pd.Series:
    """``seconds`` with the durations beyond ``MAX_DURATION_S`` rejected (naming ``column``) and set to NaN, so a
    format may add them to a start."""
    too_long = (seconds > MAX_DURATION_S).fillna(False).to_numpy(dtype=bool)
    rows.reject(too_long, f"{column}: a duration of more than a century")
    return seconds.where(~too_long)


def _factorized(values: object, index: pd.Index) -> tuple[np.ndarray, list[str | None]]:
    """Codes and distinct values (trimmed, upper-cased; the last one None, for missing cells: code -1) of a text
    column or a scalar the cost rule gave every row."""
    series = values if isinstance(values, pd.Series) else pd.Series(values, index=index, dtype="object")
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    texts: list[str | None] = [str(value).strip().upper() for value in uniques]
    return codes, [*texts, None]


def rates(codes: np.ndarray, currencies: list[str | None]) -> np.ndarray:
    """Units of each row's currency per US dollar (``UNITS_PER_USD``; the loosest rate where unknown or missing),
    from the codes and distinct values of its currency column (``_factorized``)."""
    lookup = np.array([UNITS_PER_USD.get(code or "", LOOSEST_RATE) for code in currencies])
    return lookup[codes]


def period_hours(start: object, end: object, rows: int) -> np.ndarray:
    """Each row's period in hours (``start`` and ``end`` Series of UTC times); ``UNKNOWN_PERIOD_H`` where it has no
    length or either is not given."""
    if not (isinstance(start, pd.Series) and isinstance(end, pd.Series)):
        return np.full(rows, UNKNOWN_PERIOD_H)
    hours = ((end - start).dt.total_seconds() / 3600).to_numpy(dtype="float64", na_value=np.nan)
    return np.where(np.isfinite(hours) & (hours > 0), hours, UNKNOWN_PERIOD_H)


def _shown(values: np.ndarray) -> np.ndarray:
    """Numbers to the three significant figures a reason writes (``format.SIGNIFICANT``); other keys as they are."""
    if values.dtype.kind != "f":
        return values
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 10.0 ** (np.floor(np.log10(np.abs(values))) - (SIGNIFICANT - 1))
        rounded = np.round(values / scale) * scale
    return np.where(np.isfinite(rounded) & (values != 0), rounded, values)


def _values(series: object, index: pd.Index) -> np.ndarray:
    if isinstance(series, pd.Series):
        return pd.to_numeric(series, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    return np.full(len(index), float(series))  # type: ignore[arg-type]  # a scalar the cost rule gave every row


def implausible(columns: dict[str, object], index: pd.Index, gpus: pd.Series | None = None) -> pd.Series:
    """Per row (an object Series), why its canonical ``columns`` (cost, billed_cost, gpu_hours, period_start,
    period_end, currency, charge_kind) are not plausible, or None when they are. ``gpus``: the GPUs the export says
    the row ran on, where it says so (a job's allocation), which bounds its GPU-hours by its period more tightly
    than ``MAX_ROW_GPUS``."""
    cost = _values(columns.get("cost", 0.0), index)
    billed = _values(columns.get("billed_cost", 0.0), index)
    gpu_hours = _values(columns.get("gpu_hours", 0.0), index)
    count = _values(gpus, index) if gpus is not None else np.full(len(index), np.nan)
    currency, currencies = _factorized(columns.get("currency"), index)
    kind, kinds = _factorized(columns.get("charge_kind"), index)
    adjustment = np.array([text == ADJUSTMENT.upper() for text in kinds])[kind]
    rate = rates(currency, currencies)
    hours = period_hours(columns.get("period_start"), columns.get("period_end"), len(index))
    reasons = np.full(len(index), None, dtype=object)
    open_rows = np.ones(len(index), dtype=bool)

    def mark(hit: np.ndarray, text: Callable[[int], str], *keys: np.ndarray) -> None:
        """Give the rows in ``hit`` that have no reason yet the reason ``text(row)``, written once per distinct value
        of the ``keys`` it quotes as the reason shows them (three significant figures: a million bad rows of costs
        from $1 to $1M format a few thousand)."""
        hit = hit & open_rows
        if not hit.any():
            return
        positions = np.flatnonzero(hit)
        groups = np.zeros(len(positions), dtype=np.int64)
        for key in keys:
            codes, uniques = pd.factorize(_shown(key[positions]), use_na_sentinel=False)
            groups = pd.factorize(groups * (len(uniques) + 1) + codes)[0]
        _, firsts = np.unique(groups, return_index=True)
        texts = np.array([text(int(positions[first])) for first in firsts], dtype=object)
        reasons[positions] = texts[groups]
        open_rows[positions] = False

    def amount(values: np.ndarray | float, i: int) -> str:
        value = float(values[i]) if isinstance(values, np.ndarray) else values * float(rate[i])
        return money(value, currencies[currency[i]])

    def figure(values: np.ndarray, i: int) -> str:
        return compact(float(values[i]))

    def dated(name: str) -> None:
        times = columns.get(name)
        if isinstance(times, pd.Series):
            outside = ((times < EARLIEST) | (times >= LATEST)).fillna(False).to_numpy(dtype=bool)
            if outside.any():
                days = times.dt.strftime("%Y-%m-%d").to_numpy(dtype=object, na_value=None)
                words = name.replace("_", " ")
                mark(outside, lambda i: f"{words} {days[i]} is outside {EARLIEST.year}–{LATEST.year}", days)

    dated("period_start")
    dated("period_end")
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        mark(~np.isfinite(cost), lambda i: "cost is not a finite number")
        mark(~np.isfinite(billed), lambda i: "billed cost is not a finite number")
        mark(~np.isfinite(gpu_hours), lambda i: "GPU-hours are not a finite number")
        largest = np.where(np.abs(cost) >= np.abs(billed), cost, billed)
        mark(np.abs(largest) > MAX_ROW_COST_USD * rate, lambda i: (
            f"a cost of {amount(largest, i)} on one row is beyond the plausible {amount(MAX_ROW_COST_USD, i)} "
            "(a thousand times the largest cloud contract)"), largest, currency)
        smallest = np.minimum(cost, billed)
        mark((smallest < -NEGATIVE_SLACK) & ~adjustment, lambda i: (
            f"a negative cost ({amount(smallest, i)}) on a {(kinds[kind[i]] or 'usage').lower()} "
            "row: only credits, refunds, discounts and corrections the export marks as such may be negative"),
            smallest, currency, kind)
        mark((gpu_hours < -NEGATIVE_SLACK) & ~adjustment, lambda i: (
            f"negative GPU-hours ({figure(gpu_hours, i)}): only a correction the export marks as such may be "
            "negative"), gpu_hours)
        mark(count > MAX_ROW_GPUS, lambda i: (
            f"{figure(count, i)} GPUs on one row is more than the {compact(MAX_ROW_GPUS)} of any cluster"), count)
        mark(gpu_hours > count * (hours + _SECONDS_SLACK / 3600) * (1 + 1e-9), lambda i: (
            f"{figure(gpu_hours, i)} GPU-hours on {figure(count, i)} GPUs in {figure(hours, i)} h: more than the "
            "GPUs can run in the row's period"), gpu_hours, count, hours)
        mark(gpu_hours > MAX_ROW_GPUS * hours, lambda i: (
            f"{figure(gpu_hours, i)} GPU-hours in {figure(hours, i)} h: more than {compact(MAX_ROW_GPUS)} GPUs "
            "running the whole period"), gpu_hours, hours)
        price = np.maximum(cost, billed) / gpu_hours
        mark((gpu_hours > 0) & (price > MAX_PRICE_PER_GPU_HOUR_USD * rate), lambda i: (
            f"{amount(price, i)} per GPU-hour is above the plausible {amount(MAX_PRICE_PER_GPU_HOUR_USD, i)} "
            "(70× the dearest list price)"), price, currency)
    return pd.Series(reasons, index=index, dtype=object)

