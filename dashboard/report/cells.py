"""Table cells of the comparison as text: scenario inputs, headline outputs and differences, with units.

The report and the Compare page show the same text for the same number by calling these.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dashboard.core import compare
from dashboard.format import count, usd

NONE_TEXT = {"active_params": "= total", "peak_tflops": "catalogue", "checkpoint_write_s": "size ÷ bandwidth",
             "tensor_parallel": "proposed", "pipeline_parallel": "proposed", "zero_stage": "proposed",
             "global_batch_tokens": "DeepSeek law", "n_heads": "d_model / 128", "gpu_memory_gb": "catalogue",
             "unique_tokens": "unlimited"}
DOLLAR_INPUT_MARKERS = ("price_", "_per_gb", "_per_billion_tokens", "_usd")
COUNT_INPUTS = {"total_params", "active_params", "tokens", "egress_gb", "global_batch_tokens", "unique_tokens"}
RANGE_SUFFIXES = ("_p10", "_p90")


def _days(value: float) -> str:
    return f"{value:,.1f}"


def _loss(value: float) -> str:
    return f"{value:.3f}"


def _percent(value: float) -> str:
    return f"{100 * value:.2f} %"


OUTPUT_FORMATS: dict[str, Callable[[float], str]] = {
    "cost_total_usd": usd,
    "gpu_hours_total": count,
    "wall_clock_days": _days,
    "cost_per_million_tokens": usd,
    "predicted_loss": _loss,
    "storage_peak_gb": count,
    "overhead_fraction": _percent,
}


def _plain_number(value: float) -> str:
    """Whole numbers and anything from 1,000 up with thousands separators; the rest to four significant digits."""
    return f"{value:,.0f}" if value == int(value) or abs(value) >= 1000 else f"{value:.4g}"


def _dollars(value: float) -> str:
    return usd(value) if abs(value) >= 1000 else f"{'-' if value < 0 else ''}${abs(value):.4g}"


def format_input(key: str, value: Any) -> str:
    """A scenario input for a table: yes/no, text, dollars, a large count or a plain number."""
    if value is None:
        return NONE_TEXT.get(key, "—")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if any(marker in key for marker in DOLLAR_INPUT_MARKERS):
        return _dollars(value)
    if key in COUNT_INPUTS:
        return count(value)
    return _plain_number(value)


def _output_key(key: str) -> str:
    for suffix in RANGE_SUFFIXES:
        if key.endswith(suffix):
            return key.removesuffix(suffix)
    return key


def format_output(key: str, value: Any) -> str:
    """A headline output (or its P10 / P90 row) for a table."""
    fmt = OUTPUT_FORMATS.get(_output_key(key))
    return str(value) if fmt is None else fmt(value)


def format_delta(section: str, key: str, value: float) -> str:
    """A difference against the first scenario with its sign; blank where there is none."""
    if math.isnan(value):
        return ""
    if value == 0:
        return "0"
    if section == compare.OUTPUT_SECTION and _output_key(key) == "overhead_fraction":
        return f"{100 * value:+.2f} pp"
    text = format_output(key, value) if section == compare.OUTPUT_SECTION else format_input(key, value)
    return f"+{text}" if value > 0 else text
