"""The Plan page's "Where the step goes": the plan's step time by part and how it scales with the GPU count.

The parts are the step-time model's (`dashboard.core.step_time.PARTS`, in `engine.scenario_outputs(...)
["throughput"]`). `scaling_curve` prices the plan again at other GPU counts (powers of two times the node size up
to the batch limit, `max_useful_gpus`, and the plan's own count) with the engine, every other input as it is; a
count the layout cannot divide is skipped. `step_figure` draws both: the plan's step as one horizontal stacked bar
in seconds, and the curve as GPU-seconds per step by part (step time × GPUs: level while adding GPUs pays, rising
where traffic and the bubble eat the gain, grey where GPUs beyond the batch limit idle) with the whole job's
tokens per second on a second axis. `mfu_line` and `region_line` are the sentences the page shows beside the MFU.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dashboard.core import catalogue, engine
from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_dict
from dashboard.core.step_time import PARTS
from dashboard.figures import palette
from dashboard.figures.plan import DECADES, figure, layout_of
from dashboard.format import number

TITLE = "Where the step goes"
VALIDATION_DOC = "docs/throughput-validation.md"
MAX_DOUBLINGS = 24  # node × 2²⁴ GPUs at most: a bound on the curve's points whatever the batch limit
IDLE = "idle_s"  # GPUs beyond the batch limit: billed, and idle for the whole step
IDLE_LABEL = "Idle GPUs (beyond the batch limit)"
PLAN_MARK = "this plan"


def part_label(part: str) -> str:
    """A part's label from the catalogue ("Tensor-parallel traffic")."""
    return IDLE_LABEL if part == IDLE else catalogue.label(f"throughput.{part}")


def _finite(value: Any) -> bool:
    return value is not None and math.isfinite(float(value))


def _with_band(rates: dict[str, Any], value: float) -> str:
    """"40.3 % (38.3–42.3 %)": a predicted MFU and the range its validated error (a share of it) spans."""
    low, high = (catalogue.text("throughput.mfu_as_input", value * (1 + sign * rates["mfu_error"]))
                 for sign in (-1, 1))
    return f"{catalogue.text('throughput.mfu_as_input', value)} ({low.removesuffix(' %')}–{high})"


def _published_range(rates: dict[str, Any]) -> str:
    """"40.5 % (38–43 %)": the published runs' median and their span, or the median alone when they agree."""
    median, (low, high) = rates["mfu_published"], rates["mfu_band"]
    text = catalogue.text("mfu_used", median)
    if catalogue.text("mfu_used", low) == catalogue.text("mfu_used", high):
        return text
    return f"{text} ({catalogue.text('mfu_used', low).removesuffix(' %')}–{catalogue.text('mfu_used', high)})"


def mfu_line(result: Mapping[str, Any]) -> str:
    """The MFU the plan prices with, its evidence and the layout's prediction, in one line: "MFU 40 % entered; the
    layout predicts 34.7 % (33–36.4 %)", "MFU 34.7 % (33–36.4 %) predicted from the layout (step 2.2 s, 8.17k
    tokens/s per GPU)", or, outside every validated region with comparable published runs, "MFU 40.5 % (38–43 %)
    from published runs (Llama 3 405B), as the plan lies outside every validated region; the layout's prediction,
    29.1 % (25.1–33.1 %), is a note, not priced"; the range is the prediction ± its validated error.

    Both are in the `mfu` key's convention (`throughput.mfu_as_input`); where that differs from the model-FLOPs
    MFU (full recompute counts its extra forward), the model-FLOPs figure is added.
    """
    rates = result["throughput"]
    predicted = rates["mfu_as_input"]
    model = rates["mfu_predicted"]
    convention = ""
    if _finite(predicted) and _finite(model) and abs(predicted - model) > 1e-9:
        convention = f"; {catalogue.text('throughput.mfu_predicted', model)} in model FLOPs"
    source = rates["mfu_source"]
    if source in ("entered", "measured"):
        if not _finite(predicted):
            return f"MFU {catalogue.text('mfu_used', result['mfu_used'])} {source}; the layout gives no prediction"
        return (f"MFU {catalogue.text('mfu_used', result['mfu_used'])} {source}; the layout predicts "
                f"{_with_band(rates, predicted)}{convention}")
    if source == "published":
        note = (f"the layout's prediction, {_with_band(rates, predicted)}{convention}, is a note, not priced"
                if _finite(predicted) else "the layout gives no prediction")
        return (f"MFU {_published_range(rates)} from published runs ({', '.join(rates['mfu_published_runs'])}), as "
                f"the plan lies outside every validated region; {note}")
    return (f"MFU {_with_band(rates, result['mfu_used'])} predicted from the layout (step "
            f"{catalogue.text('step_time_s', result['step_time_s'])}, "
            f"{catalogue.text('tokens_per_s_per_gpu', result['tokens_per_s_per_gpu'])} per GPU"
            f"{convention})")


def region_line(result: Mapping[str, Any]) -> str | None:
    """Where the plan leaves the step-time model's validated region, or None inside it. The notes are plain
    text: the page escapes them before showing them."""
    rates = result["throughput"]
    if rates["validated"]:
        return None
    return f"Outside the validated region: {'; '.join(rates['region_notes'])} — see {VALIDATION_DOC}"


def gpu_counts(gpu_count: int, gpus_per_node: int, limit: float) -> list[int]:
    """Powers of two times the node size up to `limit` (the batch limit), and the plan's own count, ascending."""
    counts = {int(gpu_count)}
    if _finite(limit):
        for doubling in range(MAX_DOUBLINGS + 1):
            count = gpus_per_node * 2**doubling
            if count > limit:
                break
            counts.add(count)
    return sorted(counts)


def _row(count: int, out: dict[str, Any], plan: bool) -> dict[str, Any] | None:
    rates = out["throughput"]
    if not _finite(rates["step_time_s"]):
        return None  # no step time at this count (a custom GPU without its bandwidths)
    busy = float(out["busy_gpus"])
    layout = out["layout"]
    return {
        "gpu_count": count,
        "plan": plan,
        "fits": bool(out["memory"]["fits"]) and bool(out["layout_valid"]),
        "busy_gpus": busy,
        **{part: float(rates[part] or 0.0) for part in PARTS},
        "step_time_s": float(rates["step_time_s"]),
        "tokens_per_s_per_gpu": float(rates["tokens_per_s_per_gpu"]),
        "tokens_per_s": float(rates["tokens_per_s_per_gpu"]) * busy,
        "mfu_used": float(out["mfu_used"]),
        "layout": (f"TP {layout['tensor_parallel']} · PP {layout['pipeline_parallel']} · "
                   f"DP {layout['data_parallel']:,}"),
    }


def scaling_curve(scenario: Scenario, result: engine.PlanResult) -> pd.DataFrame:
    """The plan priced at each of `gpu_counts` (every other input as it is: a given TP or PP stays given, an unset
    one is proposed again for the count), one row per count: whether it fits, the step's parts, tokens per second
    per GPU and in all, the layout. Counts the layout cannot divide are left out, and so are counts below the
    smallest that fits in memory; the plan's own row (`result`) is always kept."""
    data = scenario.to_json_dict()
    rows = []
    for count in gpu_counts(scenario.gpu_count, scenario.gpus_per_node, result["max_useful_gpus"]):
        if count == scenario.gpu_count:
            out: dict[str, Any] = dict(result)
        else:
            try:
                out = dict(engine.scenario_outputs(scenario_from_dict({**data, "gpu_count": count})))
            except ScenarioError:
                continue
        row = _row(count, out, count == scenario.gpu_count)
        if row is not None:
            rows.append(row)
    frame = pd.DataFrame(rows, columns=["gpu_count", "plan", "fits", "busy_gpus", *PARTS, "step_time_s",
                                        "tokens_per_s_per_gpu", "tokens_per_s", "mfu_used", "layout"])
    return frame[frame["fits"] | frame["plan"]].reset_index(drop=True)


def _count_label(count: float) -> str:
    return f"{int(count):,}"


def step_figure(result: engine.PlanResult, curve: pd.DataFrame, gpu_count: int) -> go.Figure:
    """Top: the plan's step as one horizontal stacked bar of its parts (seconds, summing to the step time).
    Bottom: GPU-seconds per step by part at each GPU count of `curve` (`scaling_curve`), the plan's count
    marked, and the job's tokens per second on the right axis (log)."""
    rates = result["throughput"]
    traces: list[dict[str, Any]] = []
    subtitle = mfu_line(result)
    if not _finite(rates["step_time_s"]):
        layout = layout_of(TITLE, "", "", subtitle=f"{subtitle}: the step-time model needs the GPU's memory, "
                           "NVLink and network bandwidths", template="plotly_white", height=300)
        return figure(traces, layout)
    step_s = float(rates["step_time_s"])
    counts = curve["gpu_count"].to_numpy(dtype=float)
    labels = [_count_label(count) for count in counts]
    idle_s = (curve["step_time_s"] * (curve["gpu_count"] - curve["busy_gpus"]).clip(lower=0.0)).to_numpy()
    shown = [part for part in PARTS if rates[part] or (curve[part] > 0).any()]
    if (idle_s > 0).any():
        shown.append(IDLE)
    for part in shown:
        label, colour = part_label(part), palette.STEP_PARTS[part]
        seconds = 0.0 if part == IDLE else float(rates[part] or 0.0)
        share = seconds / step_s if step_s > 0 else math.nan
        traces.append({
            "type": "bar", "orientation": "h", "name": label, "x": [seconds], "y": [PLAN_MARK],
            "xaxis": "x", "yaxis": "y", "legendgroup": part, "marker": {"color": colour},
            "customdata": [f"{label}: {number(seconds, 's')} of {number(step_s, 's')} "
                           f"({number(share, 'fraction')})"],
            "hovertemplate": "%{customdata}<extra></extra>",
        })
        gpu_seconds = idle_s if part == IDLE else (curve[part] * curve["busy_gpus"]).to_numpy()
        traces.append({
            "type": "bar", "name": label, "x": labels, "y": gpu_seconds, "xaxis": "x2", "yaxis": "y2",
            "legendgroup": part, "showlegend": False, "marker": {"color": colour},
            "customdata": [f"{text} GPUs ({layout}): {label} {number(value, 'count')} GPU-seconds per step"
                           for text, layout, value in zip(labels, curve["layout"], gpu_seconds, strict=True)],
            "hovertemplate": "%{customdata}<extra></extra>",
        })
    traces.append({
        "type": "scatter", "mode": "lines+markers", "name": "tokens per second, all GPUs", "x": labels,
        "y": curve["tokens_per_s"].to_numpy(), "xaxis": "x2", "yaxis": "y3",
        "line": {"color": palette.TOKENS_PER_S, "width": 2}, "marker": {"size": 7},
        "customdata": [f"{text} GPUs: {number(total, 'count')} tokens/s in all, "
                       f"{catalogue.text('throughput.tokens_per_s_per_gpu', per_gpu)} per GPU, step "
                       f"{catalogue.text('throughput.step_time_s', step)}"
                       for text, total, per_gpu, step in zip(labels, curve["tokens_per_s"],
                                                              curve["tokens_per_s_per_gpu"], curve["step_time_s"],
                                                              strict=True)],
        "hovertemplate": "%{customdata}<extra></extra>",
    })
    totals = (curve["step_time_s"] * curve["gpu_count"]).to_numpy()
    marks = []
    plan_rows = curve.index[curve["gpu_count"] == gpu_count]
    if len(plan_rows):
        row = int(plan_rows[0])
        # By position: plotly reads a category name that looks like a number ("512") as a position on the axis.
        marks.append({"x": row, "y": float(totals[row]), "xref": "x2", "yref": "y2", "showarrow": True,
                      "arrowhead": 2, "ax": 0, "ay": -30, "text": f"{PLAN_MARK}: {_count_label(gpu_count)} GPUs",
                      "bgcolor": "rgba(255, 255, 255, 0.8)",
                      "font": {"color": palette.REFERENCE}})
    layout = layout_of(
        TITLE, "seconds per step, on each GPU", "", subtitle=subtitle, barmode="stack", height=640,
        template="plotly_white", annotations=marks,
        xaxis={"anchor": "y", "rangemode": "tozero"},
        yaxis={"domain": [0.8, 1.0], "showticklabels": False},
        xaxis2={"title": {"text": "GPUs (powers of two × the node, and this plan's)"}, "type": "category",
                "anchor": "y2"},
        yaxis2={"title": {"text": "GPU-seconds per step"}, "domain": [0.0, 0.62], "anchor": "x2",
                "rangemode": "tozero", "exponentformat": "B"},
        yaxis3={**DECADES, "title": {"text": "tokens/s, all GPUs"}, "overlaying": "y2", "side": "right",
                "anchor": "x2", "showgrid": False, "exponentformat": "B"},
        # Below the axis title, which rotated tick labels push down in a narrow column.
        legend={"y": -0.2, "yanchor": "top", "traceorder": "normal"}, margin={"t": 90, "r": 70, "b": 130},
    )
    return figure(traces, layout)
