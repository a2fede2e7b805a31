"""The "Can it run?" figure: memory per GPU by part (weights, gradients, optimizer, activations) against the GPU's.

Takes the `memory` and `layout` sub-dicts of `engine.scenario_outputs`; plain plotly dicts, one horizontal stacked bar.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from dashboard.core import catalogue
from dashboard.figures.plan import BUDGET_COLOUR, figure, layout_of

PARTS = (
    ("weights_gb", "weights (bf16)", "#1f77b4"),
    ("gradients_gb", "gradients (fp32)", "#9467bd"),
    ("optimizer_gb", "optimizer (fp32 master, Adam m, v)", "#ff7f0e"),
    ("activations_gb", "activations (Korthikanti et al. 2022)", "#2ca02c"),
    ("logits_gb", "logits and loss (last stage)", "#17becf"),
    ("reserve_gb", "reserve (CUDA context, buffers, fragmentation)", "#7f7f7f"),
)


def memory_figure(memory: dict[str, Any], layout: dict[str, int]) -> go.Figure:
    """One bar per GPU: the memory parts the result has stacked, the GPU's memory as a red line (when known)."""
    row = f"TP {layout['tensor_parallel']} · PP {layout['pipeline_parallel']} · ZeRO-{layout['zero_stage']}"
    traces = [
        {
            "type": "bar", "orientation": "h", "name": name, "x": [memory[key]], "y": [row],
            "marker": {"color": colour},
            "hovertemplate": f"{name}: %{{x:,.1f}} GB per GPU<extra></extra>",
        }
        for key, name, colour in PARTS if key in memory  # a result without a part (no logits line) skips it
    ]
    limit = memory["gpu_memory_gb"]
    axis_top = 1.1 * max(memory["total_gb"], limit or 0.0)
    # The label runs away from the nearer edge of the plot: left of the line when the line is in the right half,
    # right of it when the line is in the left half (a plan needing many times the GPU's memory), so it is never cut.
    anchor = "right" if limit is not None and limit >= axis_top / 2 else "left"
    marks = {} if limit is None else {
        "shapes": [{"type": "line", "x0": limit, "x1": limit, "y0": -0.5, "y1": 0.5, "xref": "x", "yref": "y",
                    "line": {"color": BUDGET_COLOUR, "width": 3}}],
        # Beside the line, inside the plot: centred on it, the label ran past the axis's right end (the line sits
        # near it whenever the plan fits); ending at it, past the left end when the plan needs far more memory.
        "annotations": [{"x": limit, "y": 0.5, "xref": "x", "yref": "y", "xanchor": anchor, "yanchor": "bottom",
                         "showarrow": False, "text": f"GPU memory {catalogue.text('memory.gpu_memory_gb', limit)}",
                         "font": {"color": BUDGET_COLOUR}}],
    }
    verdict = "fits" if memory["fits"] else "does not fit"
    subtitle = f"{row}: {catalogue.text('memory.total_gb', memory['total_gb'])} per GPU — {verdict}" + (
        "" if limit is None else f" in {catalogue.text('memory.gpu_memory_gb', limit)}")
    return figure(traces, layout_of(
        "Memory per GPU", "GB per GPU (2³⁰ bytes)", "", subtitle=subtitle, barmode="stack", height=330,
        **marks, template="plotly_white", yaxis={"showticklabels": False},
        legend={"y": -0.45, "traceorder": "normal"}, margin={"l": 20, "b": 110},
        xaxis={"range": [0, axis_top]},
    ))
