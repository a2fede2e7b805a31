"""Table cells of the comparison as text: scenario inputs, headline outputs and differences, with units.

Labels, units and formats come from `dashboard.core.catalogue` (three significant figures, one money format, a
loss to three decimals); the report and the Compare page show the same text for the same number by calling these.
"""

from __future__ import annotations

import math
from typing import Any

from dashboard import format as fmt
from dashboard.core import catalogue, compare

NONE_TEXT = {"active_params": "= total", "peak_tflops": "catalogue", "checkpoint_write_s": "size ÷ bandwidth",
             "tensor_parallel": "proposed", "pipeline_parallel": "proposed", "zero_stage": "proposed",
             "global_batch_tokens": "DeepSeek law", "n_heads": "from the size", "gpu_memory_gb": "catalogue",
             "unique_tokens": "unlimited", "n_layers": "from the size", "d_model": "from the size",
             "n_kv_heads": "from the size", "ffn_hidden_size": "from the size", "ffn_type": "from the size",
             "vocab_size": "from the size", "n_experts": "dense", "experts_per_token": "dense",
             "memory_reserve_gb": "1 + 1 GB + 5 %", "mfu": "predicted", "hbm_tb_per_s": "catalogue",
             "nvlink_gb_per_s": "catalogue", "network_gb_per_s": "catalogue"}
DOLLAR_INPUT_MARKERS = ("price_", "_per_gb", "_per_billion_tokens", "_usd")
COUNT_INPUTS = {"total_params", "active_params", "tokens", "egress_gb", "global_batch_tokens", "unique_tokens"}
RANGE_SUFFIXES = ("_p10", "_p90")


def money(value: float) -> str:
    """The one money format: three significant figures, $257k, $1.25M, $903."""
    return fmt.number(value, "$")


def count(value: float) -> str:
    """A count to three significant figures with a suffix: 26.6M GPU-hours, 2T tokens."""
    return fmt.number(value, "count")


def loss(value: float) -> str:
    """A predicted loss to three decimals (nats per token), as every page writes it."""
    return fmt.number(value, "nats")


def format_input(key: str, value: Any) -> str:
    """A scenario input for a table, in its catalogue unit (MFU 40 %, $2.5 per GPU-hour, 2T tokens)."""
    if value is None:
        return NONE_TEXT.get(key, "—")
    return catalogue.entry(key).text(value)


def _output_key(key: str) -> str:
    """The catalogue entry of an output row: a P10 / P90 row's point estimate's, a stage kind's cost the programme's."""
    for suffix in RANGE_SUFFIXES:
        if key.endswith(suffix):
            return key.removesuffix(suffix)
    return compare.entry_name(key)


def format_output(key: str, value: Any) -> str:
    """A headline output (or its P10 / P90 row) for a table."""
    return catalogue.entry(_output_key(key)).text(value)


def format_delta(section: str, key: str, value: Any, first: Any) -> str:
    """`value` against the first scenario's `first` with its sign (fractions in percentage points), "≈ same" when
    the difference is below the displayed precision or half a percent (`dashboard.format.change`, as the Plan
    tiles); blank where either is not a number."""
    if not (_is_number(value) and _is_number(first)) or math.isnan(value) or math.isnan(first):
        return ""
    base = _output_key(key) if section == compare.OUTPUT_SECTION else key
    return catalogue.entry(base).change(float(value), float(first))


def is_same(text: str) -> bool:
    """True for a delta that reads "≈ same" (drawn grey, with no arrow)."""
    return text == fmt.SAME


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
