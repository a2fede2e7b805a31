"""Plan page figures: cost waterfall, storage over the run, baseline vs TST, and the three trade-off curves.

Each builder takes engine outputs or `dashboard.core.sweeps` curves and returns a plotly Figure built
from plain dicts (no plotly.express), with a few hundred to a few thousand points.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.core.storage import TIERS
from dashboard.format import count, usd

# The published TST run (Peng, Gigant, Quesnelle, "Efficient Pre-Training with Token Superposition",
# arXiv 2605.06546): a 10B-total / 1B-active MoE on B200, both methods reaching the same loss.
TST_REFERENCE_RUN = {
    "label": "published 10B-A1B MoE",
    "source": "arXiv 2605.06546",
    "gpu_type": "B200",
    "baseline_gpu_hours": 12_311.0,
    "tst_gpu_hours": 4_768.0,
    "baseline_tokens": 1.05e12,
    "tst_tokens": 2.0e12,
}

_usd = partial(usd, digits=1)
LABELS = {"tst_pilot": "TST pilot", "tst_switching": "TST switching"}
BUDGET_COLOUR = "#d62728"
WARNING_COLOUR = "#ff7f0e"
MARKER_DASHES = {"Young": "dot", "Daly": "dash", "current": "solid"}
GB_PER_TB = 1000.0
# Room above the tallest bar or line for its label, as a factor of the axis range.
HEADROOM = 1.12


def _label(key: str) -> str:
    return LABELS.get(key, key.replace("_", " "))


def layout_of(title: str, x_title: str, y_title: str, subtitle: str = "", **extra: Any) -> dict[str, Any]:
    layout = {
        "title": {"text": title, "subtitle": {"text": subtitle}},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}},
        "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
        "legend": {"orientation": "h", "y": -0.2},
    }
    for key, value in extra.items():
        layout[key] = {**layout[key], **value} if key in layout else value
    return layout


def _hline(y: float, text: str, colour: str, dash: str, text_above: bool) -> dict[str, Any]:
    """A labelled horizontal line across the plot at data height `y`, its label at the left end."""
    return {
        "type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": y, "y1": y,
        "line": {"color": colour, "dash": dash, "width": 2},
        "label": {"text": text, "textposition": "start", "yanchor": "bottom" if text_above else "top",
                  "font": {"color": colour}},
    }


def budget_figure(cost_breakdown: dict[str, float], budget_usd: float, warning_fraction: float) -> go.Figure:
    """Waterfall of the non-zero line items ending in their total, with the budget and warning lines."""
    items = [(key, value) for key, value in cost_breakdown.items() if value != 0]
    values = [value for _, value in items]
    total = sum(values)
    warning_usd = budget_usd * warning_fraction
    bar = {
        "type": "waterfall",
        "name": "cost",
        "x": [_label(key) for key, _ in items] + ["total"],
        "y": values + [total],
        "measure": ["relative"] * len(values) + ["total"],
        "text": [_usd(value) for value in values + [total]],
        "textposition": "outside",
        "hovertemplate": "%{x}: %{text}<extra></extra>",
    }
    layout = layout_of(
        "Cost by line item", "line item", "cost (USD)",
        subtitle=f"{_usd(total)}: {total / budget_usd:.0%} of the {_usd(budget_usd)} budget",
        yaxis={"tickprefix": "$", "range": [0.0, max(total, budget_usd) * HEADROOM]},
        showlegend=False,
        shapes=[
            _hline(budget_usd, f"budget {_usd(budget_usd)}", BUDGET_COLOUR, "solid", text_above=True),
            _hline(warning_usd, f"warning at {warning_fraction:.0%}: {_usd(warning_usd)}", WARNING_COLOUR, "dash",
                   text_above=False),
        ],
    )
    return go.Figure(data=[bar], layout=layout)


def storage_figure(timeline: pd.DataFrame, cost_by_tier: dict[str, float]) -> go.Figure:
    """Stacked stored volume per tier over the run (days), the legend carrying each tier's cost.

    `timeline` is `storage.storage_timeline`'s long frame; the y axis is in TB when the tiers' peaks add up
    to 1,000 GB or more, else in GB.
    """
    days = timeline["hours"].to_numpy(dtype=float) / 24.0
    tiers = timeline["tier"].to_numpy()
    gb = timeline["gb"].to_numpy(dtype=float)
    masks = {tier: tiers == tier for tier in TIERS}
    peak_gb = sum(gb[mask].max() for mask in masks.values() if mask.any())
    unit, scale = ("TB", GB_PER_TB) if peak_gb >= GB_PER_TB else ("GB", 1.0)
    traces = [
        {
            "type": "scatter",
            "mode": "lines",
            "stackgroup": "storage",
            "name": f"{_label(tier)} — {_usd(cost_by_tier[tier])}",
            "x": days[mask],
            "y": gb[mask] / scale,
            "line": {"width": 1},
            "hovertemplate": f"{_label(tier)}<br>day %{{x:.2f}}: %{{y:,.2f}} {unit}<extra></extra>",
        }
        for tier, mask in masks.items()
        if mask.any()
    ]
    total_usd = sum(cost_by_tier.values())
    layout = layout_of(f"Storage over the run: {_usd(total_usd)} in total", "time since start (days)",
                     f"stored ({unit}, stacked)")
    return go.Figure(data=traces, layout=layout)


def _scarcity_text(tst: dict[str, float]) -> str:
    """With repeated data (`dashboard.core.data_supply`): how much longer TST trains and its net saving then."""
    factor = tst.get("scarcity_factor", 1.0)
    if factor == 1.0:
        return ""
    if not math.isfinite(factor):
        return "; with the scenario's unique data TST cannot reach the baseline's loss"
    net = tst["net_savings_with_scarcity_usd"]
    return (f"; with the scenario's unique data TST trains {factor:.2f}× longer: net "
            f"{'saving' if net >= 0 else 'loss'} {_usd(abs(net))}")


def tst_figure(tst: dict[str, float], reference: dict[str, Any] | None) -> go.Figure:
    """Baseline vs TST as % of the baseline for GPU-hours, $ and raw tokens; bars carry the absolute values.

    `tst` is the `tst` sub-dict of `engine.estimate`; `reference` (e.g. `TST_REFERENCE_RUN`) adds the
    published run's TST bars for GPU-hours and tokens (it reports no dollars). The title gives the net
    saving after the pilot and switching costs.
    """
    metrics = ("GPU-hours of the main run", "cost of run + data (USD)", "raw tokens read")
    baseline = np.array([tst["baseline_gpu_hours"], tst["baseline_cost_usd"], tst["baseline_tokens"]])
    planned = np.array([tst["tst_gpu_hours"], tst["tst_cost_usd"], tst["tst_tokens"]])
    formats = (count, _usd, count)
    units = (" GPU-hours", "", " tokens")
    with np.errstate(divide="ignore", invalid="ignore"):
        planned_pct = np.where(baseline > 0, planned / baseline * 100.0, np.nan)
    hover = "%{x}<br>%{customdata}<br>%{y:.1f} % of the baseline<extra>%{fullData.name}</extra>"

    def bars(name: str, pct: list[float | None], text: list[str], hover_text: list[str]) -> dict[str, Any]:
        return {
            "type": "bar", "name": name, "x": list(metrics), "y": pct, "text": text, "customdata": hover_text,
            "textposition": "outside", "hovertemplate": hover,
        }

    baseline_text = [fmt(v) for fmt, v in zip(formats, baseline, strict=True)]
    planned_text = [fmt(v) for fmt, v in zip(formats, planned, strict=True)]
    traces = [
        bars("baseline, this plan", [100.0 if b > 0 else None for b in baseline], baseline_text,
             [f"{b}{unit}" for b, unit in zip(baseline_text, units, strict=True)]),
        bars("TST, this plan", [None if math.isnan(p) else float(p) for p in planned_pct], planned_text,
             [f"{t}{unit} vs baseline {b}" for t, b, unit in zip(planned_text, baseline_text, units, strict=True)]),
    ]
    if reference is not None:
        gpu = reference["gpu_type"]
        traces.append(bars(
            f"TST, {reference['label']} on {gpu} ({reference['source']})",
            [reference["tst_gpu_hours"] / reference["baseline_gpu_hours"] * 100.0, None,
             reference["tst_tokens"] / reference["baseline_tokens"] * 100.0],
            [count(reference["tst_gpu_hours"]), "", count(reference["tst_tokens"])],
            [f"{reference['tst_gpu_hours']:,.0f} {gpu}-hours vs baseline {reference['baseline_gpu_hours']:,.0f}",
             "", f"{count(reference['tst_tokens'])} tokens vs baseline {count(reference['baseline_tokens'])}"],
        ))
    net = tst["net_savings_usd"]
    subtitle = (
        f"Net {'saving' if net >= 0 else 'loss'} {_usd(abs(net))} "
        f"after a {_usd(tst['pilot_cost_usd'])} pilot and {_usd(tst['switching_cost_usd'])} switching"
    ) + _scarcity_text(tst)
    layout = layout_of("TST against baseline at matched loss", "", "% of the baseline (baseline = 100 %)",
                     subtitle=subtitle, barmode="group", yaxis={"ticksuffix": " %"})
    return go.Figure(data=traces, layout=layout)


def checkpoint_figure(curve: pd.DataFrame, young_min: float, daly_min: float, current_min: float) -> go.Figure:
    """Stall, rework and total overhead against the checkpoint interval (log x), Young, Daly and current marked."""
    interval_min = curve["interval_min"].to_numpy(dtype=float)
    series = (("total overhead", "overhead_pct", 3), ("checkpoint stalls", "stall_pct", 1.5),
              ("failure rework", "rework_pct", 1.5))
    traces = [
        {
            "type": "scatter", "mode": "lines", "name": name, "x": interval_min,
            "y": curve[column].to_numpy(dtype=float), "line": {"width": width},
            "hovertemplate": f"{name}<br>every %{{x:.1f}} min: %{{y:.2f}} %<extra></extra>",
        }
        for name, column, width in series
    ]
    top_pct = float(np.nanmax(curve[["overhead_pct", "stall_pct", "rework_pct"]].to_numpy(dtype=float))) * 1.05 or 1.0
    for label, value in (("Young", young_min), ("Daly", daly_min), ("current", current_min)):
        if math.isfinite(value) and value > 0:
            traces.append({
                "type": "scatter", "mode": "lines", "name": f"{label}: {value:,.1f} min", "x": [value, value],
                "y": [0.0, top_pct], "line": {"dash": MARKER_DASHES[label], "width": 1.5, "color": "gray"},
                "hovertemplate": f"{label} interval: %{{x:.1f}} min<extra></extra>",
            })
    layout = layout_of("Checkpoint interval: stalls against rework", "checkpoint interval (min, log scale)",
                     "overhead (% of compute GPU-hours)", xaxis={"type": "log"}, yaxis={"rangemode": "tozero"})
    return go.Figure(data=traces, layout=layout)


def spot_figure(curve: pd.DataFrame, current_spot_share: float) -> go.Figure:
    """Expected total cost and its compute and rework parts against the spot share, the current share marked."""
    share = curve["spot_share"].to_numpy(dtype=float)
    share_pct = share * 100.0
    total_usd = curve["cost_total_usd"].to_numpy(dtype=float)
    current_usd = float(np.interp(current_spot_share, share, total_usd))
    top_rework_usd = float(np.nanmax(curve["rework_usd"].to_numpy(dtype=float)))
    series = (("expected total", "cost_total_usd", "y", 3), ("compute", "compute_usd", "y", 1.5),
              ("failure rework (right axis)", "rework_usd", "y2", 1.5))
    traces = [
        {
            "type": "scatter", "mode": "lines", "name": name, "x": share_pct,
            "y": curve[column].to_numpy(dtype=float), "yaxis": axis, "line": {"width": width},
            "hovertemplate": f"{name}<br>%{{x:.0f}} % spot: $%{{y:,.0f}}<extra></extra>",
        }
        for name, column, axis, width in series
    ]
    traces.append({
        "type": "scatter", "mode": "markers", "name": f"current: {current_spot_share:.0%} spot",
        "x": [current_spot_share * 100.0], "y": [current_usd], "marker": {"size": 12, "symbol": "diamond"},
        "hovertemplate": "current plan<br>%{x:.0f} % spot: $%{y:,.0f}<extra></extra>",
    })
    layout = layout_of(
        f"Expected cost against spot share: {_usd(current_usd)} now", "spot share (% of GPU-hours)",
        "expected cost (USD)", yaxis={"tickprefix": "$"},
        yaxis2={"title": {"text": "failure rework (USD)"}, "overlaying": "y", "side": "right", "tickprefix": "$",
                "tickmode": "auto", "showgrid": False,
                "range": [0.0, top_rework_usd * HEADROOM] if top_rework_usd > 0 else None},
        margin={"r": 70},
    )
    return go.Figure(data=traces, layout=layout)


def scaling_figure(curve: pd.DataFrame, points: dict[str, Any]) -> go.Figure:
    """Predicted loss against active parameters (billions, log x) at the plan's compute, optimum and plan marked.

    `curve` and `points` are what `sweeps.scaling_curve` returns.
    """
    hover = (
        "N = %{x:,.2f}B active params<br>D = %{customdata:,.1f}B tokens<br>loss %{y:.4f}"
        "<extra>%{fullData.name}</extra>"
    )
    traces = [{
        "type": "scatter", "mode": "lines", "name": "same compute, other sizes",
        "x": curve["active_params"].to_numpy(dtype=float) / 1e9, "y": curve["predicted_loss"].to_numpy(dtype=float),
        "customdata": curve["tokens"].to_numpy(dtype=float) / 1e9, "hovertemplate": hover,
    }]
    for name, key, symbol in (("compute-optimal", "optimal", "star"), ("this plan", "plan", "diamond")):
        point = points[key]
        traces.append({
            "type": "scatter", "mode": "markers", "name": name, "x": [point["active_params"] / 1e9],
            "y": [point["predicted_loss"]], "customdata": [point["tokens"] / 1e9],
            "marker": {"size": 13, "symbol": symbol}, "hovertemplate": hover,
        })
    subtitle = (
        f"This plan {points['plan']['predicted_loss']:.3f}, compute-optimal {points['optimal']['predicted_loss']:.3f}"
    )
    layout = layout_of(f"Predicted loss at C = {points['model_flops']:.3g} FLOPs",
                     "active parameters (billions, log scale)", "predicted loss (nats per token)", subtitle=subtitle,
                     xaxis={"type": "log"})
    return go.Figure(data=traces, layout=layout)
