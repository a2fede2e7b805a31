"""Throughput of a plan from its step time (`dashboard.core.step_time`): tokens per second per GPU, the predicted
MFU with its validated error, and the MFU the plan uses, which follows the evidence (`used_mfu`): a number the
scenario's `mfu` holds (entered, or measured from the team's runs) wins; else the prediction inside a validated
region; else the median of comparable published runs (`mfu_reference.published_mfu`), the prediction a note beside
it; else the prediction, extrapolated. The plan's step time and tokens per second follow the MFU used
(`follow_used`); the `throughput` object keeps the layout's own prediction and its parts.

The predicted MFU follows the plan's convention: model FLOPs per token (6·N_active, plus attention when
`attention_flops` is on) times the tokens of a step, over the step time × the busy GPUs × the dense BF16 peak.
The engine reads `mfu` as HFU with full recompute (8ND hardware FLOPs), so `mfu_as_input` is the predicted MFU
in that convention, the one the `mfu` key would take.

`VALIDATED` is the region the measured runs cover (`dashboard.validation.throughput_validation` checks it against the
file): outside it the prediction is extrapolated and `region_notes` says which way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dashboard.core.mfu_reference import PublishedMfu, published_mfu
from dashboard.format import compact

# The band printed beside a predicted MFU, per validation region (GPU generation · precision · dense / MoE): the
# mean error with each source family's runs held out of the fit and predicted (leave one source out,
# docs/throughput-validation.md; a test recomputes it), rounded up. A region is validated when it is at most
# `VALIDATED_LIMIT`. Outside every region the band is the widest of them (`MFU_ERROR`), and the Monte Carlo's
# default width around a predicted MFU is that too.
REGION_ERRORS = {"ampere · bf16 · dense": 0.047, "hopper · bf16 · dense": 0.137, "hopper · fp8 · dense": 0.119}
VALIDATED_LIMIT = 0.15
MFU_ERROR = max(REGION_ERRORS.values())
FITTED_MEAN_ERROR = 0.065  # over the 49 runs the constants were fitted on (a test recomputes it)
FITTED_RUNS = 49


@dataclass(frozen=True)
class Region:
    """What the validation rows span: GPU generations, precision, model size (parameters) and GPU count."""

    generations: tuple[str, ...]
    precisions: tuple[str, ...]
    params_low: float
    params_high: float
    gpus_low: int
    gpus_high: int


VALIDATED = Region(("ampere", "hopper"), ("bf16", "fp8"), 0.76031e9, 1008e9, 4, 6144)


def region_key(generation: str, precision: str, moe: bool) -> str:
    """The validation region a plan lies in, as the validation page names it ("hopper · bf16 · dense")."""
    return f"{generation} · {precision} · {'moe' if moe else 'dense'}"


def _region_label(key: str) -> str:
    """"hopper · fp8 · dense" as "Hopper FP8"."""
    generation, precision, kind = key.split(" · ")
    return f"{generation.title()} {precision.upper()}" + (" MoE" if kind == "moe" else "")


def validation_sentence() -> str:
    """One sentence on how close the predicted MFU comes, for the page, the report and the CLI."""
    region = VALIDATED
    bands = [f"{value:.1%} ({_region_label(key)})" for key, value in REGION_ERRORS.items()]
    held = ", ".join(bands[:-1]) + " and " + bands[-1]
    generations = " and ".join(generation.title() for generation in region.generations)
    return (f"The step-time model predicts the MFU within {FITTED_MEAN_ERROR:.1%} on average on the "
            f"{FITTED_RUNS} measured runs it was fitted on ({generations} GPUs, "
            f"{region.params_low / 1e9:,.2g}B–{region.params_high / 1e12:,.0f}T parameters, {region.gpus_low:,}–"
            f"{region.gpus_high:,} GPUs) and, with each source's runs left out of the fit, within {held}; outside "
            "that region it extrapolates (docs/throughput-validation.md).").replace("%", " %")


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


def used_mfu(arrays: dict[str, Any], predicted_as_input, published_as_input) -> np.ndarray:
    """The MFU the plan prices with: the scenario's own where given (entered or measured), else the published
    median where the plan lies outside every validated region and comparable runs exist (NaN elsewhere), else the
    layout's prediction."""
    given = np.asarray(arrays["mfu"])
    dtype = given.dtype if given.dtype.kind == "f" else np.float64  # Monte Carlo's float32 draws stay float32
    published = np.asarray(published_as_input).astype(dtype, copy=False)
    fallback = np.where(np.isnan(published), np.asarray(predicted_as_input).astype(dtype, copy=False), published)
    return np.where(np.isnan(given), fallback, given)


def follow_used(rates: dict[str, Any], mfu_used) -> dict[str, Any]:
    """The step time and tokens per second per GPU at the MFU the plan uses (one MFU per plan): the layout's
    predicted figures (`rates`, whose parts sum to its step) scaled by predicted / used MFU."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = rates["mfu_as_input"] / mfu_used
    return {"step_time_s": rates["step_time_s"] * ratio, "tokens_per_s_per_gpu": rates["tokens_per_s_per_gpu"] / ratio}


def published_fallback(generation: str, precision: str, total_params: float, gpu_count: int, moe: bool = False
                       ) -> PublishedMfu | None:
    """The published runs a plan is priced at when its MFU is not given: None inside a validated region (the
    prediction is priced there) or when no published run is comparable (the prediction, extrapolated)."""
    if not region_notes(generation, precision, total_params, gpu_count, moe):
        return None
    return published_mfu(generation, precision, moe, total_params)


def region_notes(generation: str, precision: str, total_params: float, gpu_count: int, moe: bool = False
                 ) -> list[str]:
    """Where a plan leaves the validated region, one phrase each (empty inside it)."""
    region, notes = VALIDATED, []
    if moe:
        notes.append("no MoE run was measured (expert all-to-all is priced without overlap, so the MFU is low "
                     "for schedules that hide it, as DeepSeek-V3's DualPipe)")
    if generation not in region.generations:
        notes.append(f"no measured run on this GPU generation ({generation}); the constants fitted on "
                     f"{' and '.join(g.title() for g in region.generations)} runs are used")
    elif REGION_ERRORS.get(region_key(generation, precision, False), 1.0) > VALIDATED_LIMIT:
        notes.append(f"{precision.upper()} runs were not measured on {generation.title()} GPUs")
    if total_params < region.params_low or total_params > region.params_high:
        notes.append(f"{compact(total_params)} parameters is outside the measured {compact(region.params_low)}–"
                     f"{compact(region.params_high)}")
    if gpu_count < region.gpus_low or gpu_count > region.gpus_high:
        notes.append(f"{gpu_count:,} GPU{'s' if gpu_count != 1 else ''} is outside the measured "
                     f"{region.gpus_low:,}–{region.gpus_high:,}")
    return notes


def scalar(result: dict[str, Any], generation: str, precision: str, total_params: float, gpu_count: int,
           mfu_given: float | None, moe: bool = False, hfu_per_mfu: float = 1.0,
           mfu_measured: bool = False) -> dict[str, Any]:
    """One scenario's `throughput` object: plain numbers (None where unknown), the MFU's evidence grade
    (`mfu_source`), the validated region's notes, its band (the region's held-out error, else the widest), the
    published runs' median priced outside every validated region (`mfu_published`, and their names) and the range
    of the MFU used (`mfu_band`, as the `mfu` key reads it: the prediction ± its band, or the published runs'
    span; None for a given MFU). `hfu_per_mfu` is hardware / model FLOPs (4/3 with full recompute), the `mfu`
    key's convention; `mfu_measured`: the given MFU is the team's measured one (`Scenario.mfu_is_measured`)."""
    out = {key: (None if not math.isfinite(value) else value) for key, value in result.items()}
    notes = region_notes(generation, precision, total_params, gpu_count, moe)
    out["validated"] = not notes
    out["region_notes"] = notes
    band = error_band(generation, precision, total_params, gpu_count, moe)
    out["mfu_error"] = band
    published = None if mfu_given is not None else published_fallback(generation, precision, total_params,
                                                                       gpu_count, moe)
    out["mfu_source"] = evidence_grade(mfu_given is not None, not notes, published is not None, mfu_measured)
    out["mfu_published"] = None if published is None else published.median * hfu_per_mfu
    out["mfu_published_runs"] = [] if published is None else list(published.runs)
    predicted = out.get("mfu_as_input")
    if mfu_given is not None:
        out["mfu_band"] = None
    elif published is not None:
        out["mfu_band"] = [published.low * hfu_per_mfu, published.high * hfu_per_mfu]
    else:
        out["mfu_band"] = None if predicted is None else [predicted * (1.0 - band), predicted * (1.0 + band)]
    return out


def error_band(generation: str, precision: str, total_params: float, gpu_count: int, moe: bool = False) -> float:
    """The band around a predicted MFU: the plan's region's held-out error inside it, else the widest."""
    if region_notes(generation, precision, total_params, gpu_count, moe):
        return MFU_ERROR
    return REGION_ERRORS.get(region_key(generation, precision, moe), MFU_ERROR)


# The evidence under a number, as `mfu_source` and `evidence` name it: measured from the team's runs, predicted
# inside a validated region (± its held-out error), comparable published runs, predicted outside every validated
# region, entered by the user, a default nobody set (`assumed`: the prices of `dashboard.core.evidence`).
EVIDENCE_GRADES = ("measured", "validated", "published", "extrapolated", "entered", "assumed")


def evidence_grade(given: bool, validated: bool, published: bool = False, measured: bool = False) -> str:
    """How strong the evidence under the MFU a plan uses is, in the order it is chosen: a number in the scenario's
    `mfu` wins (`measured` when it still holds the team's measured value, else `entered`); else the prediction,
    `validated` inside a region whose held-out error is at most `VALIDATED_LIMIT`; else `published` when
    comparable published runs price it; else the prediction, `extrapolated`."""
    if given:
        return "measured" if measured else "entered"
    if validated:
        return "validated"
    return "published" if published else "extrapolated"
