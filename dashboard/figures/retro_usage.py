"""Plotly figures for the Retrospective page's usage views: spend over time against the budget, attribution
by team / project / run, concurrent GPUs and their weekly pattern, and the purchase mix.

Pure builders over the frames of ``dashboard.retro``: each returns a ``go.Figure`` and never imports
streamlit. Costs are in the bill's currency (``currency``, the usage table's code; "USD" when not given): every
axis title, tick, hover and label writes it as ``dashboard.format.money`` does ("$1.2k", "1.2k NOK"). Axes of
concurrent GPUs never repeat a tick label: a few whole GPUs are ticked one by one, fractions keep their decimals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.axes import COUNT_AXIS
from dashboard.figures.plan import figure
from dashboard.format import USD, count_sig, gpu_count, money, money_affixes, table_decimals
from dashboard.retro.labels import UNKNOWN_PRICING, UNTAGGED
from dashboard.retro.load import LoadSummary
from dashboard.safe_text import plotly_text

MS_PER_DAY = 86_400_000
METRICS: tuple[str, ...] = ("cost", "gpu_hours")
PRICING_LABELS: dict[str, str] = {"reserved": "Reserved", "on_demand": "On-demand", "spot": "Spot"}
PRICING_COLOURS: dict[str, str] = {"reserved": "#4c78a8", "on_demand": "#f58518", "spot": "#54a24b"}
UNTAGGED_COLOUR = "#bab0ac"
NA_GROUPS: tuple[str, ...] = (UNTAGGED, UNKNOWN_PRICING)
GROUP_COLOURS: dict[str, str] = {**PRICING_COLOURS, **dict.fromkeys(NA_GROUPS, UNTAGGED_COLOUR)}
PALETTE: tuple[str, ...] = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692",
                             "#b6e880", "#ff97ff", "#fecb52")  # plotly's default colours
OTHER_COLOUR = "#7f7f7f"
MAX_GROUPS = len(PALETTE)  # named groups drawn as their own bars, one colour each
SMALL_GPU_AXIS = 5  # a GPU axis whose values are whole and at most this is ticked at every GPU (0, 1, 2)
BARS_DOMAIN, RUNNING_DOMAIN = [0.5, 1.0], [0.0, 0.42]  # two panels over one date axis
FORECAST_COLOUR = "#7f7f7f"
FORECAST_FILL = "rgba(127, 127, 127, 0.25)"
CAPACITY_COLOUR = "#4c78a8"
IDLE_FILL = "rgba(214, 39, 40, 0.18)"
LEGEND = {"orientation": "h", "yanchor": "top", "y": -0.25, "x": 0}  # below the x-axis title


def money_axis(currency: str | None = USD) -> dict[str, str]:
    """A value axis in the bill's currency: k/M/B ticks ("B", as ``axes.USD_AXIS``) with "$" before them for US
    dollars, the code after them for another currency ("500k NOK")."""
    prefix, suffix = money_affixes(currency)
    return {**({"tickprefix": prefix} if prefix else {}), **({"ticksuffix": suffix} if suffix else {}),
            "exponentformat": "B"}


def money_hover(field: str, currency: str | None, values) -> str:
    """A hover template's figure in the bill's currency: cents while every value is below 1,000, whole units
    after (``table_decimals``), so a bill of 0.3 NOK does not read "0 NOK"."""
    prefix, suffix = money_affixes(currency)
    return f"{prefix}%{{{field}:,.{table_decimals(values)}f}}{suffix}"


def _value_format(metric: str, currency: str | None, values) -> str:
    if metric == "cost":
        return money_hover("y", currency, values)
    return f"%{{y:,.{table_decimals(values)}f}} GPU-hours"


def _metric_axis(metric: str, currency: str | None) -> tuple[str, str, dict[str, str]]:
    """A metric's per-period axis unit, cumulative axis title and ticks."""
    if metric == "cost":
        cumulative = f"Cumulative cost ({currency})" if currency else "Cumulative cost"
        return (currency or "Cost"), cumulative, money_axis(currency)
    return "GPU-hours", "Cumulative GPU-hours", COUNT_AXIS


def gpu_axis(values) -> dict[str, object]:
    """Ticks of an axis of concurrent GPUs that never repeat a label: whole GPUs up to `SMALL_GPU_AXIS` ticked
    one by one (0, 1, 2, not "0 0 0 1 1 1"); other whole counts as integers (",d", whose ticks plotly spaces at
    least a GPU apart from ten on); fractions below ten in plotly's own decimals."""
    array = np.asarray(values, dtype=float)
    array = array[np.isfinite(array)]
    top = float(np.abs(array).max()) if len(array) else 0.0
    whole = bool(np.allclose(array, np.round(array)))
    if whole and top <= SMALL_GPU_AXIS:
        return {"tickmode": "linear", "tick0": 0, "dtick": 1, "tickformat": ",d"}
    if top >= 2 * SMALL_GPU_AXIS:
        return {"tickformat": ",d"}
    return {}


def gpu_hover(values) -> str:
    """d3 format of concurrent GPUs in a hover, as ``format.gpu_count`` writes them: whole from 10 on, two
    significant figures below."""
    array = np.asarray(values, dtype=float)
    array = array[np.isfinite(array)]
    return ",.0f" if len(array) and float(np.abs(array).max()) >= 10 else ".2~r"


def _period_days(spend_frame: pd.DataFrame) -> int:
    """Length of the spend frame's periods in days: its ``attrs["freq"]`` ("W" is 7), else 7 when the periods
    are a week or more apart, else 1."""
    if "freq" in spend_frame.attrs:
        return 7 if spend_frame.attrs["freq"] == "W" else 1
    steps = pd.Series(spend_frame["period"].unique()).sort_values().diff().dropna()
    return 7 if len(steps) and steps.min() >= pd.Timedelta(days=7) else 1


def _plain(values: pd.Series) -> np.ndarray:
    """A column as the array plotly's check makes of it: UTC times as naive wall-clock times, others as they are."""
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        values = values.dt.tz_convert("UTC").dt.tz_localize(None)
    return values.to_numpy()


def _top_groups(spend_frame: pd.DataFrame, metric: str, max_groups: int) -> tuple[pd.DataFrame, dict[str, str]]:
    """The spend frame with all but the ``max_groups`` largest groups (by total ``metric``) summed into one
    "other" group per period ("(untagged)" and "(unknown)" are kept as they are), and a colour per group."""
    totals = spend_frame.groupby("group", sort=False)[metric].sum()
    ranked = totals.drop([label for label in NA_GROUPS if label in totals.index]).sort_values(ascending=False)
    colours = {**GROUP_COLOURS}
    for position, group in enumerate(ranked.index[:max_groups]):
        colours.setdefault(group, PALETTE[position % len(PALETTE)])
    if len(ranked) <= max_groups:
        return spend_frame, colours
    folded = set(ranked.index[max_groups:])
    other = f"other ({len(folded)} groups)"
    colours[other] = OTHER_COLOUR
    group = spend_frame["group"].where(~spend_frame["group"].isin(folded), other)
    return spend_frame.groupby(["period", group], sort=False)[["gpu_hours", "cost"]].sum().reset_index(), colours


def spend_figure(
    spend_frame: pd.DataFrame,
    cumulative_frame: pd.DataFrame,
    budget_usd: float | None,
    metric: str = "cost",
    max_groups: int = MAX_GROUPS,
    currency: str | None = USD,
) -> go.Figure:
    """Two panels over one date axis: stacked bars of ``metric`` per period by group, and below them the running
    total with its forecast band and the budget.

    ``spend_frame`` is ``spend_over_time`` output, ``cumulative_frame`` ``cumulative_with_forecast`` of the same
    metric per day. Bars (top panel, axis y): the ``max_groups`` largest groups, the rest summed as "other",
    untagged always shown; group names are data, shown as text. Bottom panel (axis y2): the running total
    (solid), the forecast as a shaded band between its low and high ends (only when the frame has one, i.e. the
    period is open) and the budget (dotted; only for cost and when given; ``budget_usd`` is in the bill's
    ``currency``). Both value axes use round ticks ($500k, 1M; 500k NOK). The running total of a day is drawn at
    the day's end.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, not {metric!r}")
    unit, cumulative_title, ticks = _metric_axis(metric, currency)
    period_days = _period_days(spend_frame)
    spend_frame, colours = _top_groups(spend_frame, metric, max_groups)
    per = "week" if period_days == 7 else "day"
    value = _value_format(metric, currency, spend_frame[metric])
    running = _value_format(metric, currency, cumulative_frame["cumulative"])
    groups = list(spend_frame.groupby("group", sort=False)[metric].sum().sort_values(ascending=False).index)
    data: list[dict] = []
    for group in groups:
        rows = spend_frame[spend_frame["group"] == group]
        data.append({
            "type": "bar", "x": _plain(rows["period"]), "y": _plain(rows[metric]), "name": plotly_text(group),
            "xperiod": period_days * MS_PER_DAY, "xperiodalignment": "middle", "marker": {"color": colours[group]},
            "yaxis": "y", "hovertemplate": f"%{{fullData.name}}<br>{per} of %{{x|%Y-%m-%d}}<br>{value}<extra></extra>",
        })
    day_end = cumulative_frame["day"] + pd.Timedelta(days=1)
    day_label = cumulative_frame["day"].dt.strftime("%Y-%m-%d")
    shown = cumulative_frame["cumulative"].notna()
    data.append({
        "type": "scatter", "x": _plain(day_end[shown]), "y": _plain(cumulative_frame.loc[shown, "cumulative"]),
        "name": "Cumulative", "mode": "lines", "line": {"color": "#222222"}, "customdata": _plain(day_label[shown]),
        "yaxis": "y2",
        "hovertemplate": f"Cumulative to end of %{{customdata}}<br>{running}<extra></extra>",
    })
    band = cumulative_frame["forecast"].notna()
    rate = _value_format(metric, currency, cumulative_frame.loc[band, "forecast"]).replace("{y:", "{customdata[1]:")
    if band.any():
        for name, column, fill in (("Forecast low", "forecast_low", "none"),
                                   ("Forecast (80 % band)", "forecast_high", "tonexty")):
            data.append({
                "type": "scatter", "x": _plain(day_end[band]), "y": _plain(cumulative_frame.loc[band, column]),
                "name": name, "mode": "lines", "fill": fill, "line": {"width": 0, "color": FORECAST_COLOUR},
                "fillcolor": FORECAST_FILL, "showlegend": fill != "none", "yaxis": "y2",
                "customdata": np.column_stack([day_label[band], cumulative_frame.loc[band, "forecast"]]),
                "hovertemplate": f"{name} to end of %{{customdata[0]}}<br>{running}<br>"
                                 f"run rate: {rate}<extra></extra>",
            })
    if metric == "cost" and budget_usd is not None and len(cumulative_frame) > 0:
        start = spend_frame["period"].min() if len(spend_frame) else cumulative_frame["day"].min()
        data.append({
            "type": "scatter", "x": [min(start, cumulative_frame["day"].min()), day_end.max()],
            "y": [budget_usd, budget_usd], "name": f"Budget {money(budget_usd, currency)}", "mode": "lines",
            "line": {"color": "#d62728", "dash": "dot"}, "yaxis": "y2",
            "hovertemplate": f"Budget {money(budget_usd, currency)}<extra></extra>",
        })
    layout = {
        "title": {"text": f"{'Spend' if metric == 'cost' else 'GPU-hours'} per {per}, and the running total"},
        "barmode": "relative",
        "xaxis": {"title": {"text": "Date (UTC)"}, "anchor": "y2"},
        "yaxis": {"title": {"text": f"{unit} per {per}"}, **ticks, "domain": BARS_DOMAIN},
        "yaxis2": {"title": {"text": cumulative_title}, **ticks, "rangemode": "tozero",
                   "domain": RUNNING_DOMAIN},
        "legend": LEGEND,
        "hovermode": "closest",
    }
    return figure(data, layout)  # unchecked on the way in (drawn on every filter change); tests check it


def attribution_figure(table: pd.DataFrame, metric: str = "cost", currency: str | None = USD) -> go.Figure:
    """Treemap of ``metric`` by team → project → run from ``attribution_table``; "(untagged)" is a box of its
    own at every level. Areas are the positive part of each run's ``metric`` (a run whose credits exceed its
    charges has no area); the hover shows the net figures, cost in the bill's ``currency``, and the share of the
    total."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, not {metric!r}")
    leaves = table.assign(size=table[metric].clip(lower=0.0))
    columns = ["size", "cost", "gpu_hours"]
    nodes = [pd.DataFrame({"id": ["all"], "label": ["All teams"], "parent": [""],
                           **{column: [leaves[column].sum()] for column in columns}})]
    path: list[str] = []
    for level in ("team", "project", "run_id"):
        grouped = leaves.groupby([*path, level], sort=False)[columns].sum().reset_index()
        parent = pd.Series("all", index=grouped.index)
        for ancestor in path:
            parent = parent + "\x1f" + grouped[ancestor].astype(str)
        label = grouped[level].astype(str)
        nodes.append(grouped[columns].assign(id=parent + "\x1f" + label, label=label, parent=parent))
        path.append(level)
    frame = pd.concat(nodes, ignore_index=True)
    total = frame.at[0, metric]
    share = frame[metric] / total if total else np.full(len(frame), np.nan)
    fig = go.Figure(
        go.Treemap(
            ids=frame["id"], labels=frame["label"].map(plotly_text), parents=frame["parent"], values=frame["size"],
            branchvalues="total",
            marker={"colors": [UNTAGGED_COLOUR if str(label) == UNTAGGED else None for label in frame["label"]]},
            customdata=np.column_stack([frame["cost"], frame["gpu_hours"], share]),
            hovertemplate=f"%{{label}}<br>{money_hover('customdata[0]', currency, frame['cost'])} · "
                          f"%{{customdata[1]:,.{table_decimals(frame['gpu_hours'])}f}} GPU-hours"
                          "<br>%{customdata[2]:.1%} of total<extra></extra>",
            textinfo="label+percent root",
        )
    )
    noun = (f"cost ({currency})" if currency else "cost") if metric == "cost" else "GPU-hours"
    fig.update_layout(title={"text": f"Who used it: {noun} by team → project → run"},
                      margin={"t": 50, "l": 10, "r": 10, "b": 10})
    return fig


def load_figure(series: pd.Series, summary: LoadSummary, reserved: pd.Series | None = None,
                capacity_gpus: float | None = None) -> go.Figure:
    """Concurrent GPUs per hour (``hourly_concurrency``) as a step line, with the peak and mean of
    ``load_summary`` as horizontal lines, written as ``format.gpu_count`` does (whole GPUs from ten on, two
    significant figures below: a 1-GPU bill's mean is 0.0087, not 0). With ``reserved`` (the reserved tier's hourly
    GPUs over the commitment's hours) and ``capacity_gpus`` (``load.reserved_capacity``), the reserved capacity is
    drawn over those hours and the gap between it and the reserved GPUs in use is shaded as idle. The GPU axis
    never repeats a tick label (``gpu_axis``)."""
    hourly = [series.to_numpy(dtype=float)]  # the GPUs drawn hour by hour; peak and mean are lines over them
    if reserved is not None and capacity_gpus and len(reserved):
        hourly += [reserved.to_numpy(dtype=float), np.array([capacity_gpus], dtype=float)]
    values = np.concatenate(hourly)
    hover = gpu_hover(values)
    fig = go.Figure(
        go.Scatter(
            x=series.index, y=series.to_numpy(), name="GPUs in use", mode="lines", line={"shape": "hv"},
            hovertemplate=f"%{{x|%Y-%m-%d %H:00}} UTC<br>%{{y:{hover}}} GPUs<extra></extra>",
        )
    )
    if reserved is not None and capacity_gpus and len(reserved):
        fig.add_trace(go.Scatter(
            x=reserved.index, y=reserved.to_numpy(), name="Reserved GPUs in use", mode="lines",
            line={"shape": "hv", "color": CAPACITY_COLOUR, "width": 1},
            hovertemplate=f"%{{x|%Y-%m-%d %H:00}} UTC<br>%{{y:{hover}}} reserved GPUs in use<extra></extra>",
        ))
        fig.add_trace(go.Scatter(
            x=reserved.index, y=np.full(len(reserved), capacity_gpus), mode="lines", fill="tonexty",
            name=f"Reserved capacity {gpu_count(capacity_gpus)} GPUs (idle shaded)", fillcolor=IDLE_FILL,
            line={"shape": "hv", "color": CAPACITY_COLOUR, "dash": "dash"},
            hovertemplate=f"Reserved capacity {gpu_count(capacity_gpus)} GPUs<extra></extra>",
        ))
    span = [series.index.min(), series.index.max()] if len(series) else []
    for name, level, dash in (("Peak", summary.peak_gpus, "dash"), ("Mean", summary.mean_gpus, "dot")):
        fig.add_trace(
            go.Scatter(
                x=span, y=[level] * len(span), name=f"{name} {gpu_count(level)} GPUs", mode="lines",
                line={"dash": dash}, hovertemplate=f"{name} {gpu_count(level)} GPUs<extra></extra>",
            )
        )
    ratio = summary.peak_to_mean
    fig.update_layout(
        title={"text": f"Concurrent GPUs per hour (peak / mean {'n/a' if np.isnan(ratio) else f'{ratio:.2f}×'})"},
        xaxis={"title": {"text": "Hour (UTC)"}},
        yaxis={"title": {"text": "GPUs in use (hourly mean)"}, "rangemode": "tozero", **gpu_axis(values)},
        legend=LEGEND,
    )
    return fig


def hour_of_week_figure(frame: pd.DataFrame) -> go.Figure:
    """Heatmap of mean concurrent GPUs by weekday (rows, Monday on top) and UTC hour (``hour_of_week``)."""
    fig = go.Figure(
        go.Heatmap(
            z=frame.to_numpy(dtype=float), x=list(frame.columns), y=list(frame.index), colorscale="Blues",
            colorbar={"title": {"text": "GPUs"}},
            hovertemplate="%{y} %{x}:00 UTC<br>%{z:,.1f} GPUs on average<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": "Mean concurrent GPUs by hour of week"},
        xaxis={"title": {"text": "Hour of day (UTC)"}, "dtick": 3},
        yaxis={"title": {"text": "Day of week"}, "autorange": "reversed"},
    )
    return fig


def mix_figure(shares: pd.DataFrame, currency: str | None = USD) -> go.Figure:
    """GPU-hour and cost shares by pricing tier (``mix_shares``) as two 100 % stacked bars, with the realised
    price per GPU-hour of each tier (in the bill's ``currency``) in the hover."""
    fig = go.Figure()
    for row in shares.itertuples(index=False):
        name = PRICING_LABELS.get(row.pricing, str(row.pricing))
        price = money(row.usd_per_gpu_hour, currency)
        fig.add_trace(
            go.Bar(
                x=[row.gpu_hours_share * 100, row.cost_share * 100], y=["GPU-hours", "Cost"], orientation="h",
                name=name, marker={"color": PRICING_COLOURS.get(row.pricing, UNTAGGED_COLOUR)},
                customdata=[f"{count_sig(row.gpu_hours)} GPU-hours", money(row.cost, currency)],
                hovertemplate=f"{name}: %{{x:.1f}} % of %{{y}} (%{{customdata}})<br>{price} per GPU-hour"
                              "<extra></extra>",
            )
        )
    fig.update_layout(
        title={"text": "Purchase mix: share of GPU-hours and of GPU cost by pricing tier"},
        barmode="relative",
        xaxis={"title": {"text": "Share (%)"}},
        yaxis={"title": {"text": "Measure"}, "autorange": "reversed"},
        legend=LEGEND,
    )
    return fig
