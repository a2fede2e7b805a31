"""Where a plan's measured inputs came from: each value's spread and support, carried in a link and said in a line.

The Retrospective measures inputs from last quarter's imports (`dashboard.retro.calibrate`) and opens the Plan page
with them. The page marks each input that still holds its measured value ("MFU 34.8 % — measured over 19 jobs,
31.2–35.6 %") and says when the data behind one is thin. The link carries only numbers, one parameter per input
(`measured.mfu=0.348_0.312_0.356_19__0`: value, low, high, count, exposure, thin) and the quarter's first and last
day (`measured.period=2025-04-01_2025-06-30`); the sentences are written here from those numbers, so nothing from a
link or a file is shown but numbers. Reading never raises: a bad parameter is dropped with a warning.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dashboard.core import catalogue
from dashboard.format import count_sig, counted
from dashboard.safe_text import preview

PREFIX = "measured."
PERIOD = PREFIX + "period"
# The inputs a quarter's imports can measure: scenario keys, in the order the Plan page lists them.
KEYS: tuple[str, ...] = (
    "mfu", "node_failures_per_1000_node_days", "spot_interruptions_per_1000_node_days",
    "experiment_overhead", "eval_overhead", "debug_overhead", "price_reserved_per_gpu_hour",
    "price_on_demand_per_gpu_hour", "price_spot_per_gpu_hour", "reserved_share", "spot_share",
    "checkpoint_interval_min", "restart_min",
)
# What each input was observed over, as the line says it: the count's noun and the exposure's words.
_COUNTED = {"mfu": "job", "checkpoint_interval_min": "segment", "restart_min": "restart"}
_RATES = ("node_failures_per_1000_node_days", "spot_interruptions_per_1000_node_days")
_OVERHEADS = ("experiment_overhead", "eval_overhead", "debug_overhead")
MAX_COUNT = 10**9
MAX_VALUE = 1e12
FIELDS = 6
SAME_REL = 1e-9  # a scenario value this close to the measured one still is the measured one
THIN = "few observations: a hint, not a measurement to rely on"


@dataclass(frozen=True)
class Provenance:
    """A measured input: its value, the spread observed (None when there is none), how many observations and
    over what exposure (node-days for rates, GPU-hours for prices, shares and overheads), and whether the data is
    too thin to rely on."""

    key: str
    value: float
    low: float | None = None
    high: float | None = None
    count: int = 0
    exposure: float | None = None
    thin: bool = False


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def to_link(measured: Mapping[str, Provenance], period: tuple[datetime.date, datetime.date] | None) -> dict[str, str]:
    """The link parameters of ``measured`` (and the quarter ``period``), in KEYS order."""
    link = {PREFIX + key: "_".join((_number(p.value), _number(p.low), _number(p.high), str(p.count),
                                   _number(p.exposure), "1" if p.thin else "0"))
            for key in KEYS if (p := measured.get(key)) is not None}
    if link and period is not None:
        link[PERIOD] = f"{period[0].isoformat()}_{period[1].isoformat()}"
    return link


def _parse_number(text: str, optional: bool) -> float | None:
    if text == "" and optional:
        return None
    value = float(text)  # ValueError for anything but a number
    if not math.isfinite(value) or not 0 <= value <= MAX_VALUE:
        raise ValueError("out of range")
    return value


def _parse(key: str, text: str) -> Provenance:
    parts = text.split("_")
    if len(parts) != FIELDS:
        raise ValueError(f"{FIELDS} fields")
    value, low, high = _parse_number(parts[0], False), _parse_number(parts[1], True), _parse_number(parts[2], True)
    if not parts[3].isdigit() or int(parts[3]) > MAX_COUNT or parts[5] not in ("0", "1"):
        raise ValueError("count or thin flag")
    assert value is not None
    if (low is not None and low > value) or (high is not None and high < value):
        raise ValueError("spread does not hold the value")
    return Provenance(key, value, low, high, int(parts[3]), _parse_number(parts[4], True), parts[5] == "1")


def _period(text: str) -> tuple[datetime.date, datetime.date]:
    first, _, last = text.partition("_")
    start, end = datetime.date.fromisoformat(first), datetime.date.fromisoformat(last)
    if len(first) != 10 or len(last) != 10 or end < start:
        raise ValueError("period")
    return start, end


def from_link(params: Mapping[str, Sequence[str]]
              ) -> tuple[dict[str, Provenance], tuple[datetime.date, datetime.date] | None, list[str]]:
    """The measured inputs and period a link's ``measured.`` parameters give, and a warning for each one dropped
    (unknown, repeated or not six numbers in order)."""
    measured: dict[str, Provenance] = {}
    period = None
    warnings: list[str] = []
    for name, values in params.items():
        if not name.startswith(PREFIX):
            continue
        key = name.removeprefix(PREFIX)
        if len(values) != 1:
            warnings.append(f"Ignored {preview(name)}: given {len(values)} times.")
            continue
        try:
            if name == PERIOD:
                period = _period(values[0])
            elif key in KEYS:
                measured[key] = _parse(key, values[0])
            else:
                warnings.append(f"Ignored {preview(name)}: not a measured input.")
        except ValueError:
            warnings.append(f"Ignored {preview(name)}={preview(values[0])}: not a measured input's figures "
                            "(value_low_high_count_exposure_thin).")
    return measured, (period if measured else None), warnings


def holds(measured: Provenance, value: object) -> bool:
    """Whether a scenario's ``value`` still is the measured one (an edited input loses its provenance)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return math.isclose(float(value), measured.value, rel_tol=SAME_REL, abs_tol=1e-12)


def basis(measured: Provenance) -> str:
    """What the value was observed over, in words: "19 jobs", "2 interruptions over 1.38k node-days", "10.8k GPU-h
    in 63 runs" (an overhead: the other runs' GPU-hours)."""
    key = measured.key
    exposure = measured.exposure
    if key in _RATES:
        words = counted(measured.count, "interruption")
        return words + (f" over {count_sig(exposure)} node-days" if exposure is not None else "")
    if key in _COUNTED:
        return counted(measured.count, _COUNTED[key])
    if key in _OVERHEADS and exposure is not None:
        return f"{count_sig(exposure)} GPU-h in {counted(measured.count, 'run')}"
    return f"{count_sig(exposure)} GPU-h" if exposure is not None else counted(measured.count, "row")


def line(measured: Provenance) -> str:
    """One input's provenance: "MFU 34.8 % — measured over 19 jobs, 31.2–35.6 %" (plain text)."""
    key = measured.key
    text = f"{catalogue.label(key)} {catalogue.text(key, measured.value)} — measured over {basis(measured)}"
    if measured.low is not None and measured.high is not None and measured.high > measured.low:
        spread = "90 % interval" if key in _RATES else "observed"
        text += f", {spread} {catalogue.text(key, measured.low)}–{catalogue.text(key, measured.high)}"
    return text


def period_line(period: tuple[datetime.date, datetime.date] | None) -> str:
    """The heading of the measured inputs: the quarter they were measured over."""
    if period is None:
        return "Measured from a quarter's imports"
    return f"Measured from the imports of {period[0].isoformat()} to {period[1].isoformat()}"
