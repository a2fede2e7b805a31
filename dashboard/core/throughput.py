"""Throughput of a plan from its step time (`dashboard.core.step_time`): tokens per second per GPU, the predicted
MFU with its validated error, and the MFU the plan uses (the scenario's `mfu` when given, else the predicted one).

The predicted MFU follows the plan's convention: model FLOPs per token (6·N_active, plus attention when
`attention_flops` is on) times the tokens of a step, over the step time × the busy GPUs × the dense BF16 peak.
The engine reads `mfu` as HFU with full recompute (8ND hardware FLOPs), so `mfu_as_input` is the predicted MFU
in that convention, the one the `mfu` key would take.

`VALIDATED` is the region the measured runs cover (`dashboard.core.throughput_validation` checks it against the
file): outside it the prediction is extrapolated and `region_notes` says which way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dashboard.format import compact

# The band printed beside a predicted MFU and the Monte Carlo's default width around it: the mean error on
# Korthikanti et al.'s K-1 to K-8 with the constants fitted on the other six runs (4.4 %, rounded up; 1.7 % over
# all 14 rows with the constants fitted on them all, docs/throughput-validation.md).
MFU_ERROR = 0.05
FITTED_MEAN_ERROR = 0.017  # over the 14 runs the constants were fitted on (a test recomputes it)
HELD_OUT_MEAN_ERROR = 0.044  # K-1 to K-8 with the constants fitted on the other runs (`--fit` recomputes it)


@dataclass(frozen=True)
class Region:
    """What the validation rows span: GPU generations, precision, model size (parameters) and GPU count."""

    generations: tuple[str, ...]
    precisions: tuple[str, ...]
    params_low: float
    params_high: float
    gpus_low: int
    gpus_high: int


VALIDATED = Region(("ampere",), ("bf16",), 22.07e9, 1008e9, 8, 2240)


def validation_sentence() -> str:
    """One sentence on how close the predicted MFU comes, for the page, the report and the CLI."""
    region = VALIDATED
    return (f"The step-time model predicts the MFU within {FITTED_MEAN_ERROR:.1%} on average on the 14 measured runs "
            f"it covers ({', '.join(region.generations).title()} GPUs, {region.params_low / 1e9:,.0f}B–"
            f"{region.params_high / 1e12:,.0f}T parameters, {region.gpus_low:,}–{region.gpus_high:,} GPUs) and within "
            f"{HELD_OUT_MEAN_ERROR:.1%} on runs it was not fitted on; outside that region it extrapolates "
            "(docs/throughput-validation.md).").replace("%", " %")


def outputs(arrays: dict[str, Any], plan: dict[str, Any], flops_model, flops_total) -> dict[str, Any]:
    """The `throughput` outputs of arrays of scenarios at their plans (`feasibility.plan_arrays`)."""
    seconds = plan["step_seconds"]
    step_s = seconds["step_time_s"]
    step_tokens = plan["global_batch_sequences"] * arrays["seq_len"]
    busy = plan["busy_gpus"]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_token = flops_model / arrays["tokens"]
        mfu = per_token * step_tokens / (step_s * busy * arrays["peak_tflops"] * 1e12)
        as_input = mfu * flops_total / flops_model
    return {
        **seconds,
        "tokens_per_s_per_gpu": step_tokens / (step_s * busy),
        "mfu_predicted": mfu,
        "mfu_as_input": as_input,
        "mfu_error": np.broadcast_to(MFU_ERROR, np.shape(step_s)),
    }


def used_mfu(arrays: dict[str, Any], predicted_as_input) -> np.ndarray:
    """The MFU the plan prices with: the scenario's own where given, else the layout's prediction."""
    given = np.asarray(arrays["mfu"])
    dtype = given.dtype if given.dtype.kind == "f" else np.float64  # Monte Carlo's float32 draws stay float32
    return np.where(np.isnan(given), np.asarray(predicted_as_input).astype(dtype, copy=False), given)


def region_notes(generation: str, precision: str, total_params: float, gpu_count: int, moe: bool = False
                 ) -> list[str]:
    """Where a plan leaves the validated region, one phrase each (empty inside it)."""
    region, notes = VALIDATED, []
    if moe:
        notes.append("no MoE run was measured (expert all-to-all is priced without overlap, so the MFU is low "
                     "for schedules that hide it, as DeepSeek-V3's DualPipe)")
    if generation not in region.generations:
        notes.append(f"no measured run on this GPU generation ({generation}); the constants fitted on "
                     f"{', '.join(region.generations).title()} runs are used")
    if precision not in region.precisions:
        notes.append(f"{precision.upper()} runs were not measured")
    if total_params < region.params_low or total_params > region.params_high:
        notes.append(f"{compact(total_params)} parameters is outside the measured {compact(region.params_low)}–"
                     f"{compact(region.params_high)}")
    if gpu_count < region.gpus_low or gpu_count > region.gpus_high:
        notes.append(f"{gpu_count:,} GPU{'s' if gpu_count != 1 else ''} is outside the measured "
                     f"{region.gpus_low:,}–{region.gpus_high:,}")
    return notes


def scalar(result: dict[str, Any], generation: str, precision: str, total_params: float, gpu_count: int,
           mfu_given: float | None, moe: bool = False) -> dict[str, Any]:
    """One scenario's `throughput` object: plain numbers (None where unknown), the MFU's source, the validated
    region's notes."""
    out = {key: (None if not math.isfinite(value) else value) for key, value in result.items()}
    notes = region_notes(generation, precision, total_params, gpu_count, moe)
    out["validated"] = not notes
    out["region_notes"] = notes
    out["mfu_source"] = "entered" if mfu_given is not None else "predicted"
    return out

