"""Plan page figures: cost waterfall, storage over the run, baseline vs TST, and the three trade-off curves.

Each builder takes engine outputs or `dashboard.core.sweeps` curves and returns a plotly Figure built
from plain dicts (no plotly.express), with a few hundred to a few thousand points.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from dashboard.core import engine
from dashboard.core.references import TST_RUN
from dashboard.core.storage import TIERS
from dashboard.figures import palette
from dashboard.figures.axes import USD_AXIS
from dashboard.format import PERCENT_UP_TO, exact, number, signed

# The published TST run (dashboard.core.references), as the chart and the report read it.
TST_REFERENCE_RUN = TST_RUN.as_dict()

_usd = partial(number, unit="$")  # the one format: $446k, $10.4k, $69
_count = partial(number, unit="count")  # 59.6k, 2T
_share = partial(number, unit="fraction")  # 88.3 %, 1,080 % (as the budget tile)
LABELS = {"tst_pilot": "TST pilot", "tst_switching": "TST switching", "archived_checkpoints": "archives"}
BUDGET_COLOUR = palette.BUDGET
WARNING_COLOUR = palette.WARNING
MARKER_DASHES = {"Young": "dot", "Daly": "dash", "current": "solid"}
GB_PER_TB = 1000.0
# Room above the tallest bar or line for its label, as a factor of the axis range.
HEADROOM = 1.12
# Bars smaller than this share of the total carry no text label (hover still has it).
MIN_LABEL_SHARE = 0.01
# Storage at or above this share of the total cost is called a cost driver.
STORAGE_DRIVER_SHARE = 0.05
# Neutral colours: storage tiers are not good or bad, so none is red or green (`dashboard.figures.palette`).
NEUTRAL_DARK = palette.NEUTRAL_DARK
NEUTRAL_LIGHT = palette.NEUTRAL_LIGHT
TIER_COLOURS = palette.TIERS
BASELINE_COLOUR = palette.BASELINE
TST_COLOUR = palette.TST
REFERENCE_COLOUR = palette.REFERENCE
# Checkpoint counts change at writes and hold in between (a step after each point); logs grow linearly.
STEPPED = {"hot_checkpoints": "hv", "archived_checkpoints": "hv"}
# Log axes are labelled at whole decades only (1, 10, 100, ...).
DECADES = {"type": "log", "dtick": 1}


def figure(traces: list[dict[str, Any]], layout: dict[str, Any]) -> go.Figure:
    """A Figure of the plain dicts the builders here write, without plotly's check of every property on the way in.

    The check costs about ten times the building (3 ms a chart, 20 ms for a named template such as
    "plotly_white", rebuilt on every slider move); these dicts are checked against plotly's schema once, in
    tests/figures/test_figure_dicts.py, for every chart of every preset. A named template is looked up in
    `plotly.io.templates` as plotly's own check would.
    """
    template = layout.get("template")
    if isinstance(template, str):
        layout = {**layout, "template": pio.templates[template]}
    return go.Figure({"data": traces, "layout": layout}, _validate=False)


def _label(key: str) -> str:
    return LABELS.get(key, key.replace("_", " "))


# Plotly never wraps a title: a line longer than the chart is cut. A 17 px title on a half-width chart of a 1440 px
# window holds about 70 characters, a 13 px subtitle about 95; lines are broken before that.
TITLE_WRAP_CHARS = 64
SUBTITLE_WRAP_CHARS = 90
TITLE_LINE_PX, SUBTITLE_LINE_PX, TITLE_PAD_PX = 22, 17, 40


def wrapped(text: str, width: int) -> str:
    """`text` broken at spaces into lines of at most `width` characters, joined by plotly's `<br>`; the breaks
    already in it are kept, and a word longer than `width` stays whole."""
    return "<br>".join(line for part in text.split("<br>")
                       for line in textwrap.wrap(part, width, break_long_words=False, break_on_hyphens=False) or [""])


def layout_of(title: str, x_title: str, y_title: str, subtitle: str = "", **extra: Any) -> dict[str, Any]:
    """A chart's layout: the title and subtitle wrapped to the chart (the top margin grows with their lines), the
    axis titles, the app's colours; `extra` keys are merged into the defaults."""
    title, subtitle = wrapped(title, TITLE_WRAP_CHARS), wrapped(subtitle, SUBTITLE_WRAP_CHARS)
    layout: dict[str, Any] = {
        "title": {"text": title, "subtitle": {"text": subtitle}},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}},
        "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
        "legend": {"orientation": "h", "y": -0.2},
        "colorway": list(palette.COLORWAY),  # the app's theme and the report's template draw the same colours
    }
    for key, value in extra.items():
        layout[key] = {**layout[key], **value} if key in layout else value
    title_px = (title.count("<br>") + 1) * TITLE_LINE_PX
    subtitle_px = (subtitle.count("<br>") + 1) * SUBTITLE_LINE_PX if subtitle else 0
    top_px = max(layout["margin"].get("t", 0), TITLE_PAD_PX + title_px + subtitle_px)
    layout["margin"] = {**layout["margin"], "t": top_px}
    return layout


def _hline(y: float, text: str, colour: str, dash: str, text_above: bool) -> dict[str, Any]:
    """A labelled horizontal line across the plot at data height `y`, its label at the left end (a waterfall rises
    from left to right, so the top left is clear of bars)."""
    return {
        "type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": y, "y1": y,
        "line": {"color": colour, "dash": dash, "width": 2},
        "label": {"text": text, "textposition": "start", "yanchor": "bottom" if text_above else "top",
                  "font": {"color": colour}},
    }


def _of(fraction: float) -> str:
    """"88.2 % of the budget", but "more than 10× the budget" (`format.PERCENT_UP_TO`)."""
    return "" if abs(fraction) > PERCENT_UP_TO else " of"


def budget_figure(cost_breakdown: dict[str, float], budget_usd: float, warning_fraction: float) -> go.Figure:
    """Waterfall of the non-zero line items ending in their total, with the budget and warning lines.

    Items under `MIN_LABEL_SHARE` of the total carry no text label (they would overlap their neighbours); their
    value stays in the hover. The budget and warning labels sit at the left end, one above and one below.
    """
    items = [(key, value) for key, value in cost_breakdown.items() if value != 0]
    values = [value for _, value in items]
    total = sum(values)
    warning_usd = budget_usd * warning_fraction
    labelled = [abs(value) >= MIN_LABEL_SHARE * abs(total) for value in values]
    bar = {
        "type": "waterfall",
        "name": "cost",
        "x": [_label(key) for key, _ in items] + ["total"],
        "y": values + [total],
        "measure": ["relative"] * len(values) + ["total"],
        "text": [_usd(value) if shown else "" for value, shown in zip(values, labelled, strict=True)] + [_usd(total)],
        "customdata": [exact(value, "$") for value in values + [total]],
        "textposition": "outside",
        "hovertemplate": "%{x}: %{customdata}<extra></extra>",
        "connector": {"line": {"color": NEUTRAL_LIGHT}},
        "increasing": {"marker": {"color": NEUTRAL_LIGHT}},
        "decreasing": {"marker": {"color": NEUTRAL_LIGHT}},
        "totals": {"marker": {"color": NEUTRAL_DARK}},
    }
    layout = layout_of(
        "Cost by line item", "", "cost (USD)",
        subtitle=f"{_usd(total)}: {_share(total / budget_usd)}{_of(total / budget_usd)} the {_usd(budget_usd)} "
                 "budget; items under "
                 f"{_share(MIN_LABEL_SHARE)} of the total are labelled on hover only",
        yaxis={**USD_AXIS, "range": [0.0, max(total, budget_usd) * HEADROOM]},
        xaxis={"automargin": True},
        showlegend=False,
        shapes=[
            _hline(budget_usd, f"budget {_usd(budget_usd)}", BUDGET_COLOUR, "solid", text_above=True),
            _hline(warning_usd, f"warning at {_share(warning_fraction)}: {_usd(warning_usd)}", WARNING_COLOUR, "dash",
                   text_above=False),
        ],
    )
    return figure([bar], layout)


def _gb_unit(peak_gb: float) -> tuple[str, float]:
    return ("TB", GB_PER_TB) if peak_gb >= GB_PER_TB else ("GB", 1.0)


def archives_text(archive_count: int, archive_gb: float) -> str:
    """ "10 weight archives of 14 GB (140 GB)", or "no weight archives"."""
    if archive_count <= 0:
        return "no weight archives"
    plural = "s" if archive_count != 1 else ""
    total = f" ({number(archive_count * archive_gb, 'GB')})" if archive_count > 1 else ""
    return f"{archive_count:,} weight archive{plural} of {number(archive_gb, 'GB')}{total}"


def storage_verdict(storage_usd: float, total_usd: float, archive_count: int | None = None,
                    archive_gb: float = 0.0) -> str:
    """The storage chart's title: its cost, its share of the total, whether it drives the cost and, when given,
    the weight archives' count and size."""
    share = storage_usd / total_usd if total_usd > 0 else 0.0
    verdict = "a cost driver" if share >= STORAGE_DRIVER_SHARE else "not a cost driver"
    archives = "" if archive_count is None else f"<br>{archives_text(archive_count, archive_gb)}"
    return f"Storage: {_usd(storage_usd)}, {100 * share:.2g} % of the total — {verdict}{archives}"


def storage_figure(timeline: pd.DataFrame, cost_by_tier: dict[str, float], retention_usd: float,
                   total_usd: float, retention_months: float, hot_start: pd.DataFrame | None = None,
                   archive_count: int | None = None, archive_gb: float = 0.0) -> go.Figure:
    """Stored volume: the hot tier on its own axes at the top, the archives, datasets and logs stacked below over
    the run (days); the legend carries each tier's cost over the run.

    `timeline` is `storage.storage_timeline`'s long frame for the whole run; `hot_start`, the same for the first
    few checkpoints, draws the hot tier in hours so that its keep-last-K sawtooth shows (over a whole run of
    hundreds of writes the teeth are narrower than a pixel); without it the hot tier is drawn over the run.
    `retention_usd` is what keeping the run's leftovers for `retention_months` after training costs; `archive_count`
    weight archives of `archive_gb` each, when given, are named in the title. Each y axis is in TB when its peak
    reaches 1,000 GB, else in GB.
    """
    days = timeline["hours"].to_numpy(dtype=float) / 24.0
    tiers = timeline["tier"].to_numpy()
    gb = timeline["gb"].to_numpy(dtype=float)
    masks = {tier: tiers == tier for tier in TIERS if (tiers == tier).any()}
    hot_frame = timeline if hot_start is None else hot_start
    hot_frame = hot_frame[hot_frame["tier"] == "hot_checkpoints"]
    hot_x = hot_frame["hours"].to_numpy(dtype=float) / (24.0 if hot_start is None else 1.0)
    hot_gb = hot_frame["gb"].to_numpy(dtype=float)
    hot_unit, hot_scale = _gb_unit(hot_gb.max() if len(hot_gb) else 0.0)
    rest_unit, rest_scale = _gb_unit(sum(gb[mask].max() for tier, mask in masks.items() if tier != "hot_checkpoints"))
    time_unit = "day" if hot_start is None else "hour"
    traces = []
    for tier, mask in masks.items():
        if tier == "hot_checkpoints":
            traces.append({
                "type": "scatter", "mode": "lines", "name": f"{_label(tier)} — {_usd(cost_by_tier[tier])}",
                "x": hot_x, "y": hot_gb / hot_scale, "xaxis": "x2", "yaxis": "y2", "fill": "tozeroy",
                "line": {"width": 1.5, "color": TIER_COLOURS[tier], "shape": STEPPED[tier]},
                "hovertemplate": f"{_label(tier)}<br>{time_unit} %{{x:.2f}}: %{{y:,.2f}} {hot_unit}<extra></extra>",
            })
            continue
        traces.append({
            "type": "scatter", "mode": "lines", "name": f"{_label(tier)} — {_usd(cost_by_tier[tier])}",
            "x": days[mask], "y": gb[mask] / rest_scale, "stackgroup": "storage",
            "line": {"width": 1, "color": TIER_COLOURS[tier], "shape": STEPPED.get(tier, "linear")},
            "hovertemplate": f"{_label(tier)}<br>day %{{x:.2f}}: %{{y:,.2f}} {rest_unit}<extra></extra>",
        })
    run_usd = sum(cost_by_tier.values())
    subtitle = f"{_usd(run_usd)} during the run + {_usd(retention_usd)} kept {retention_months:g} months after it"
    hot_title = "hot tier over the run (days)" if hot_start is None else "hot tier, first checkpoints (hours)"
    layout = layout_of(
        storage_verdict(run_usd + retention_usd, total_usd, archive_count, archive_gb), "time since start (days)",
        f"archives, data, logs ({rest_unit})", subtitle=subtitle,
        yaxis={"domain": [0.0, 0.5], "rangemode": "tozero"},
        xaxis2={"title": {"text": hot_title}, "anchor": "y2"},
        yaxis2={"title": {"text": f"hot ({hot_unit})"}, "domain": [0.68, 1.0], "anchor": "x2", "rangemode": "tozero"},
        margin={"t": 80 if archive_count is None else 100},
    )
    return figure(traces, layout)


def _scarcity_text(tst: Mapping[str, Any]) -> str:
    """With repeated data (`dashboard.core.data_supply`): how much longer TST trains and its saving then."""
    factor = tst.get("scarcity_factor", 1.0)
    if factor == 1.0:
        return ""
    if not math.isfinite(factor):
        return "; with the scenario's unique data TST cannot reach the baseline's loss"
    net = tst["net_savings_with_scarcity_usd"]
    return (f"; with the scenario's unique data TST trains {factor:.2f}× longer: it "
            f"{'saves' if net >= 0 else 'costs'} {_usd(abs(net))}")


def tst_title(net_usd: float, baseline_total_usd: float) -> str:
    """The TST chart's answer: what switching the whole plan saves (or costs), total(baseline) − total(TST)."""
    share = abs(net_usd) / baseline_total_usd if baseline_total_usd > 0 else 0.0
    verb = "saves" if net_usd >= 0 else "costs"
    return (f"Switching to TST {verb} {_usd(abs(net_usd))} ({100 * share:.0f} % of the plan's total), "
            "pilot and switching included")


def saving_split_text(tst: Mapping[str, Any]) -> str:
    """The saving's parts as one line: "main run +$128k, experiments, evaluation, debugging +$140k, …"."""
    return ", ".join(f"{label} {signed(value, '$')}" for label, value in engine.saving_parts(tst))


TST_METRICS = (  # (bar label, baseline key, TST key, format, hover unit): every label says whose GPU-hours
    ("main-run GPU-hours", "baseline_gpu_hours", "tst_gpu_hours", _count, " GPU-hours of the main run"),
    ("plan GPU-hours", "baseline_plan_gpu_hours", "tst_plan_gpu_hours", _count,
     " GPU-hours of the plan (main run, experiments, evaluation, debugging)"),
    ("plan total $", "baseline_cost_usd", "tst_cost_usd", _usd, " for the whole plan"),
    ("raw tokens", "baseline_tokens", "tst_tokens", _count, " raw tokens read"),
)


def tst_figure(tst: Mapping[str, Any], reference: dict[str, Any] | None) -> go.Figure:
    """The plan with the baseline method against the same plan with TST, as % of the baseline: main-run and plan
    GPU-hours, the plan's total and the raw tokens; bars carry the absolute values.

    `tst` is the `tst` sub-dict of `engine.scenario_outputs`. The title's saving is total(baseline) − total(TST),
    the same number as the difference of the Total cost tiles; the subtitle splits it into its parts.
    `reference` (e.g. `TST_REFERENCE_RUN`) adds the published run as a marker at its own TST share (it reports no
    dollars), not as bars of another run's size.
    """
    metrics = [label for label, *_ in TST_METRICS]
    baseline = np.array([tst[key] for _, key, _, _, _ in TST_METRICS], dtype=float)
    planned = np.array([tst[key] for _, _, key, _, _ in TST_METRICS], dtype=float)
    formats = [fmt for *_, fmt, _ in TST_METRICS]
    units = [unit for *_, unit in TST_METRICS]
    with np.errstate(divide="ignore", invalid="ignore"):
        planned_pct = np.where(baseline > 0, planned / baseline * 100.0, np.nan)
    hover = "%{x}<br>%{customdata}<br>%{y:.1f} % of the baseline<extra>%{fullData.name}</extra>"

    def bars(name: str, pct: list[float | None], text: list[str], hover_text: list[str], colour: str):
        return {
            "type": "bar", "name": name, "x": metrics, "y": pct, "text": text, "customdata": hover_text,
            "textposition": "outside", "hovertemplate": hover, "marker": {"color": colour},
        }

    baseline_text = [fmt(v) for fmt, v in zip(formats, baseline, strict=True)]
    planned_text = [fmt(v) for fmt, v in zip(formats, planned, strict=True)]
    traces = [
        bars("baseline", [100.0 if b > 0 else None for b in baseline], baseline_text,
             [f"{b}{unit}" for b, unit in zip(baseline_text, units, strict=True)], BASELINE_COLOUR),
        bars("TST", [None if math.isnan(p) else float(p) for p in planned_pct], planned_text,
             [f"{t}{unit} vs baseline {b}" for t, b, unit in zip(planned_text, baseline_text, units, strict=True)],
             TST_COLOUR),
    ]
    if reference is not None:
        gpu = reference["gpu_type"]
        traces.append({
            "type": "scatter", "mode": "markers", "name": f"published run ({reference['source']})",
            "x": [metrics[0], metrics[-1]],
            "y": [reference["tst_gpu_hours"] / reference["baseline_gpu_hours"] * 100.0,
                  reference["tst_tokens"] / reference["baseline_tokens"] * 100.0],
            "offsetgroup": "TST", "marker": {"symbol": "line-ew-open", "size": 28, "color": REFERENCE_COLOUR,
                                             "line": {"width": 3, "color": REFERENCE_COLOUR}},
            "customdata": [
                f"{reference['label']}: {reference['tst_gpu_hours']:,.0f} {gpu}-hours of the main run vs baseline "
                f"{reference['baseline_gpu_hours']:,.0f}",
                f"{reference['label']}: {_count(reference['tst_tokens'])} tokens vs baseline "
                f"{_count(reference['baseline_tokens'])}",
            ],
            "hovertemplate": "%{customdata}<br>%{y:.1f} % of its baseline<extra>published run</extra>",
        })
        traces[1]["offsetgroup"] = "TST"
        traces[0]["offsetgroup"] = "baseline"
    break_even = tst["break_even_speedup"]
    if math.isfinite(break_even):
        verdict = (f"Breaks even at a {break_even:.2f}× speedup; this plan assumes {tst['speedup']:.2f}×"
                   f"{_scarcity_text(tst)}.")
    else:
        verdict = (f"No speedup breaks even: the {_usd(tst['pilot_cost_usd'])} pilot, "
                   f"{_usd(tst['switching_cost_usd'])} switching and extra data cost more than the GPU-hours"
                   f"{_scarcity_text(tst)}.")
    subtitle = f"Saving by part: {saving_split_text(tst)}.<br>{verdict}"
    layout = layout_of(tst_title(tst["net_savings_usd"], tst["baseline_cost_usd"]), "", "% of the baseline",
                       subtitle=subtitle, barmode="group", scattermode="group", yaxis={"ticksuffix": " %"},
                       margin={"t": 100})
    return figure(traces, layout)


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
                     "overhead (% of compute GPU-hours)", xaxis=DECADES, yaxis={"rangemode": "tozero"})
    return figure(traces, layout)


# Below this share of the current cost, another spot share "saves" nothing worth a verdict.
SPOT_SAVING_SHARE = 0.005
P90_DASH = "dash"
COST_COLOUR = "#1f77b4"
TIME_COLOUR = NEUTRAL_DARK


def spot_verdict(curve: pd.DataFrame, current_spot_share: float, p90: pd.DataFrame | None = None) -> str:
    """The spot chart's answer: the cheapest share by expected cost against the current one, and what it does to the
    P90 wall-clock (the point estimate's wall-clock when no P90 is given)."""
    share = curve["spot_share"].to_numpy(dtype=float)
    cost = curve["cost_total_usd"].to_numpy(dtype=float)
    current_usd = float(np.interp(current_spot_share, share, cost))
    best = int(np.nanargmin(cost))
    saving = current_usd - float(cost[best])
    if saving <= SPOT_SAVING_SHARE * abs(current_usd):
        return f"The current {_share(current_spot_share)} spot is the cheapest mix: {_usd(current_usd)}"
    if p90 is not None:
        days_share, days = p90["spot_share"].to_numpy(dtype=float), p90["wall_clock_p90_days"].to_numpy(dtype=float)
        label = "P90 wall-clock"
    else:
        days_share, days = share, curve["wall_clock_days"].to_numpy(dtype=float)
        label = "wall-clock"
    more_days = float(np.interp(share[best], days_share, days) - np.interp(current_spot_share, days_share, days))
    longer = signed(more_days, "days") if abs(more_days) >= 1 else signed(more_days * 24.0, "h")
    return (f"{_share(float(share[best]))} spot saves {_usd(saving)} ({_share(saving / current_usd)}) against "
            f"{_share(current_spot_share)} now<br>{label} {longer} — if the spot capacity is there")


def spot_capacity_text(gpu_count: int, nodes: float, interruptions_per_1000_node_days: float) -> str:
    """What the chart does not price: getting (and keeping) that much spot capacity at once."""
    return (f"Capacity risk, not priced: spot capacity for {gpu_count:,} GPUs ({nodes:,.0f} nodes) at once is not "
            f"guaranteed,<br>and a reclaim can leave the run waiting; the curves price reclaims only "
            f"({interruptions_per_1000_node_days:g} per 1,000 node-days).")


def spot_figure(curve: pd.DataFrame, current_spot_share: float, p90: pd.DataFrame | None = None,
                capacity: str = "") -> go.Figure:
    """Cost (top) and wall-clock (bottom) against the spot share, each on its own axis (no dual axis): expected
    values as solid lines, P90 of the plan's Monte Carlo ranges (`sweeps.spot_share_p90`) dashed, the current
    share marked and labelled inside the plot. `capacity` (the risk the curves do not price) is the subtitle."""
    share = curve["spot_share"].to_numpy(dtype=float)
    share_pct = share * 100.0
    total_usd = curve["cost_total_usd"].to_numpy(dtype=float)
    days = curve["wall_clock_days"].to_numpy(dtype=float)
    current_usd = float(np.interp(current_spot_share, share, total_usd))
    current_days = float(np.interp(current_spot_share, share, days))
    usd_hover = "%{fullData.name}<br>%{x:.0f} % spot: $%{y:,.0f}<extra></extra>"
    days_hover = "%{fullData.name}<br>%{x:.0f} % spot: %{y:,.2f} days<extra></extra>"

    def line(name: str, x: np.ndarray, y: np.ndarray, axis: str, colour: str, dash: str, hover: str):
        return {"type": "scatter", "mode": "lines", "name": name, "x": x, "y": y, "xaxis": "x",
                "yaxis": axis, "line": {"width": 2.5 if dash == "solid" else 1.5, "color": colour, "dash": dash},
                "hovertemplate": hover}

    traces = [line("expected cost", share_pct, total_usd, "y", COST_COLOUR, "solid", usd_hover),
              line("expected wall-clock", share_pct, days, "y2", TIME_COLOUR, "solid", days_hover)]
    if p90 is not None:
        p90_pct = p90["spot_share"].to_numpy(dtype=float) * 100.0
        traces += [line("P90 cost", p90_pct, p90["cost_p90_usd"].to_numpy(dtype=float), "y", COST_COLOUR,
                        P90_DASH, usd_hover),
                   line("P90 wall-clock", p90_pct, p90["wall_clock_p90_days"].to_numpy(dtype=float), "y2",
                        TIME_COLOUR, P90_DASH, days_hover)]
    marker_text = f"now: {_share(current_spot_share)} spot"
    for axis, value, hover in (("y", current_usd, usd_hover), ("y2", current_days, days_hover)):
        traces.append({
            "type": "scatter", "mode": "markers+text", "name": marker_text, "x": [current_spot_share * 100.0],
            "y": [value], "xaxis": "x", "yaxis": axis, "text": [marker_text],
            "textposition": "top right" if current_spot_share < 0.5 else "top left",
            "marker": {"size": 11, "symbol": "diamond", "color": REFERENCE_COLOUR},
            "showlegend": axis == "y", "legendgroup": "current", "hovertemplate": hover,
        })
    cost_top = max(float(np.nanmax(total_usd)), float(np.nanmax(p90["cost_p90_usd"])) if p90 is not None else 0.0)
    days_top = max(float(np.nanmax(days)),
                   float(np.nanmax(p90["wall_clock_p90_days"])) if p90 is not None else 0.0)
    layout = layout_of(
        spot_verdict(curve, current_spot_share, p90), "spot share (% of GPU-hours)", "total cost (USD)",
        subtitle=capacity,
        xaxis={"anchor": "y2", "range": [-2.0, 102.0]},
        yaxis={**USD_AXIS, "domain": [0.56, 1.0], "range": [0.0, cost_top * HEADROOM]},
        yaxis2={"title": {"text": "wall-clock (days)"}, "domain": [0.0, 0.44], "anchor": "x",
                "range": [0.0, days_top * HEADROOM]},
        margin={"t": 120},
    )
    return figure(traces, layout)


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
        f"This plan {number(points['plan']['predicted_loss'], 'nats')}, compute-optimal "
        f"{number(points['optimal']['predicted_loss'], 'nats')}"
    )
    layout = layout_of(f"Predicted loss at C = {number(points['model_flops'], 'FLOPs')}",
                     "active parameters (billions, log scale)", "predicted loss (nats per token)", subtitle=subtitle,
                     xaxis=DECADES)
    return figure(traces, layout)
