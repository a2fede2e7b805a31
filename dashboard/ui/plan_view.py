"""The Plan page's outputs: metric tiles with deltas and ranges, the baseline chips, the chart tabs and the risks.

Labels, formats and formulas come from `dashboard.core.catalogue`; risk sentences from `dashboard.core.risk`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal, TypedDict, get_args

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard.core import catalogue, evidence, provenance, risk, switches
from dashboard.core.engine import PlanResult
from dashboard.core.scenario import Scenario
from dashboard.figures.throughput import TITLE as STEP_TITLE
from dashboard.figures.throughput import mfu_line, region_line
from dashboard.format import SAME, change, number, usd_sig
from dashboard.safe_text import markdown_text
from dashboard.ui import plan_charts_view
from dashboard.ui.cache import plan_result

Tile = Literal["cost_total_usd", "gpu_hours_total", "wall_clock_days", "cost_per_million_tokens", "predicted_loss"]
TILES: tuple[Tile, ...] = get_args(Tile)
CHIP_LIMIT = 6  # differences shown as chips; the rest are counted


class MetricDelta(TypedDict, total=False):
    """`st.metric`'s delta arguments."""

    delta: str | None
    delta_color: Literal["inverse", "off"]
    delta_arrow: Literal["off"]


def _delta(text: str | None) -> MetricDelta:
    """`st.metric`'s delta arguments: red when it costs more, "≈ same" in grey with no arrow (`format.change`)."""
    if text is None:
        return {"delta": None}
    if text == SAME:
        return {"delta": text, "delta_color": "off", "delta_arrow": "off"}
    return {"delta": text, "delta_color": "inverse"}


def _change(name: str, value: float, base: float) -> str:
    """The tile's delta against the baseline, as Compare and the report write it."""
    return catalogue.entry(name).change(value, base)


def _help(name: str, value: float) -> str:
    entry = catalogue.entry(name)
    return markdown_text(f"{entry.formula}. Exact: {entry.exact(value)}.")  # literal: formulas hold _ * $


def tiles(result: PlanResult, base: PlanResult | None) -> list[DeltaGenerator]:
    """Five point-estimate tiles; each delta is against the pinned baseline (red when it costs more). Returns the
    six columns, the last one left for `risk_tiles`, so these reach the browser before the Monte Carlo runs."""
    columns = st.columns(len(TILES) + 1)
    for column, name in zip(columns, TILES, strict=False):
        value = result[name]
        column.metric(catalogue.label(name), catalogue.text(name, value),
                      **_delta(None if base is None else _change(name, value, base[name])), help=_help(name, value))
    programme_captions(columns[0], columns[TILES.index("wall_clock_days")], result["programme"])
    return columns


def programme_captions(total: DeltaGenerator, wall_clock: DeltaGenerator, programme: dict[str, Any]) -> None:
    """Under the total: the final run's share of the programme (the total is the programme's); under the
    wall-clock: the programme's calendar and, with a start date, its end date."""
    share = catalogue.text("programme.final_run_share", programme["final_run_share"])
    total.caption(markdown_text(f"final run {share} of the programme"), help=markdown_text(
        f"{catalogue.label('programme.final_run_usd')} "
        f"{catalogue.text('programme.final_run_usd', programme['final_run_usd'])} of "
        f"{catalogue.text('programme.total_usd', programme['total_usd'])}: "
        f"{catalogue.entry('programme.final_run_share').formula}. The Programme chart tab shows every stage."))
    calendar = f"programme {catalogue.text('programme.calendar_days', programme['calendar_days'])}"
    if programme["end_date"] is not None:
        calendar += f", ends {catalogue.text('programme.end_date', programme['end_date'])}"
    wall_clock.caption(markdown_text(calendar), help=markdown_text(
        f"{catalogue.label('programme.calendar_days')}: {catalogue.entry('programme.calendar_days').formula}. "
        "The tile above is the main run alone."))


def risk_tiles(columns: list[DeltaGenerator], result: PlanResult, base: PlanResult | None,
               headline: risk.Headline) -> None:
    """The total's P10–P90 under its tile, and the budget tile with the chance of overrun."""
    columns[0].caption(markdown_text(headline.range_text))  # literal: "$" would start maths
    share = result["cost_total_usd"] / result["budget_usd"]
    budget = catalogue.entry("budget_usd")
    base_share = None if base is None else base["cost_total_usd"] / base["budget_usd"]
    columns[-1].metric(
        f"Budget: {number(share, 'fraction')} used", headline.status,
        **_delta(None if base_share is None else change(share, base_share, "fraction")),
        help=markdown_text(f"Total / budget ({budget.text(result['budget_usd'])}): 'warning' above the warning "
                           "share, 'over' above 100 %, 'at risk' when the Monte Carlo chance of overrun passes "
                           f"{catalogue.text('prob_over_budget', risk.AT_RISK_PROBABILITY)}; 'infeasible' when the "
                           "plan cannot run (see Can it run?)."))
    columns[-1].caption(markdown_text(headline.overrun_text))


def baseline_line(scenario: Scenario, baseline: Scenario | None) -> None:
    """Which baseline the deltas are against, and chips with the inputs that differ from it."""
    if baseline is None:
        st.caption(f"**{markdown_text(scenario.name)}** — no baseline pinned, so the tiles show no deltas: "
                   "*Pin as baseline* keeps this plan to compare edits against.")
        return
    chips = differences(baseline, scenario)
    shown = " ".join(f":gray-badge[{markdown_text(chip)}]" for chip in chips[:CHIP_LIMIT])
    more = f" and {len(chips) - CHIP_LIMIT} more" if len(chips) > CHIP_LIMIT else ""
    st.caption(f"**{markdown_text(scenario.name)}** against the baseline **{markdown_text(baseline.name)}**: "
               + (f"{shown}{more}" if chips else "same inputs."))


def differences(baseline: Scenario, scenario: Scenario) -> list[str]:
    """ "tokens 2T → 3T" for every input (but the name) that differs, in the scenario file's order."""
    old, new = baseline.model_dump(), scenario.model_dump()
    chips = []
    for key, value in new.items():
        if key == "name" or old[key] == value:
            continue
        entry = catalogue.INPUTS[key]
        chips.append(f"{entry.label} {_input_text(key, getattr(baseline, key))} → "
                     f"{_input_text(key, getattr(scenario, key))}")
    return chips


def _input_text(key: str, value: Any) -> str:
    """An input's value for a chip: an unset MFU is the layout's prediction."""
    return "predicted" if key == "mfu" and value is None else catalogue.INPUTS[key].text(value)


def switch_notes(scenario: Scenario, origin: Scenario, result: PlanResult) -> None:
    """Under the tiles: a sentence for each structural switch since the plan's origin (programme stages in place of
    the overheads, a method in place of the other), with what it moves (`dashboard.core.switches`)."""
    lines = []
    for kind in switches.switched(origin, scenario):
        old = switches.before(origin, scenario, kind)
        lines.append(markdown_text(switches.sentence(kind, old, scenario, plan_result(old), result)))
    if lines:
        with st.container(key="plan-switches"):
            st.caption("  \n".join(f":material/swap_horiz: {line}" for line in lines))


def mfu_notes(result: PlanResult, measured_keys: Iterable[str] = ()) -> None:
    """Under the tiles: the MFU the plan prices with beside the layout's prediction (`figures.throughput.mfu_line`),
    the headline numbers' evidence grades (`evidence.line`; `measured_keys` are the inputs that still hold the
    team's measured values) and, right under them in orange, a caveat when the plan leaves the step-time model's
    validated region (its notes as plain text). A caption, not an alert box: most plans on today's GPUs leave the
    region, and a box on every plan would drown the warnings that call for action."""
    marked = evidence.mark_measured(dict(result), measured_keys)
    caveat = region_line(marked)
    line = f"{markdown_text(mfu_line(marked))}  \n{markdown_text(evidence.line(marked['evidence']))}"
    if caveat:
        line += f"  \n:orange[:material/science: {markdown_text(caveat)}]"
    st.caption(line, help=markdown_text(
        f"Predicted MFU: {catalogue.entry('throughput.mfu_predicted').formula}; ± is the "
        f"{catalogue.entry('throughput.mfu_error').formula}. The chart tab “{STEP_TITLE}” shows the step's parts."))


def measured_inputs(measured: dict[str, provenance.Provenance], period, result: PlanResult) -> None:
    """In the sidebar: the inputs measured from a quarter's imports that the plan still holds, each with what it was
    observed over and its spread, a thin one with its caveat, and the MFU the layout predicts beside the measured
    one. Nothing when no input holds its measured value."""
    if not measured:
        return
    lines = []
    for key in provenance.KEYS:
        item = measured.get(key)
        if item is None:
            continue
        text = markdown_text(provenance.line(item))
        if key == "mfu":
            predicted = result["throughput"]["mfu_as_input"]
            if isinstance(predicted, float) and math.isfinite(predicted) and not provenance.holds(item, predicted):
                text += markdown_text(f"; the throughput model predicts {catalogue.text('mfu', predicted)} for "
                                      "this layout")
        if item.thin:
            text += f"  \n:orange[:material/warning: {markdown_text(provenance.THIN)}]"
        lines.append(f"- {text}")
    with st.container(key="plan-measured"):
        st.markdown(f"**{markdown_text(provenance.period_line(period))}**  \n" + "\n".join(lines),
                    help="Set by the Retrospective's “Plan the next run from this quarter”. An input you change "
                    "loses its line; the uncertainty ranges were set from the observed spread.")


def carried_banner(carried: tuple[str, pd.DataFrame] | None, result: PlanResult) -> None:
    """Above the tiles, after the Retrospective carried last quarter's overrun into this plan: how far the last plan
    missed, which parts this one carries, and the old plan, the actual and this plan (as handed over, and as the
    inputs now stand) side by side in GPU dollars."""
    if not carried:
        return
    text, rows = carried
    now = (float(result["gpu_hours_main_run"]) + float(result["gpu_hours_experiments"])) * float(
        result["blended_price_per_gpu_hour"])
    lines = float(rows.loc[rows["what"] == "Next plan (explicit lines)", "usd"].iloc[0])
    table = pd.concat([rows, pd.DataFrame([{"what": "This plan as it now stands (with the lines)",
                                            "usd": now + lines}])], ignore_index=True)
    with st.container(key="plan-carried"):
        st.info(markdown_text(text), icon=":material/history:")
        st.dataframe(table.assign(usd=[usd_sig(v) for v in table["usd"]]), hide_index=True,
                     column_config={"what": st.column_config.TextColumn("GPU dollars"),
                                    "usd": st.column_config.TextColumn("$")})


def headline_notes(scenario: Scenario, result: PlanResult, headline: risk.Headline, lever: str | None) -> None:
    """Under the tiles: an optimistic point estimate, plausibility warnings and the top tornado driver."""
    if headline.optimism:
        st.warning(markdown_text(headline.optimism), icon=":material/trending_up:")
    for note in risk.plausibility(scenario, result):
        st.warning(markdown_text(note.sentence), icon=":material/report:")
    if lever:
        st.markdown(markdown_text(lever))


def charts(scenario: Scenario) -> None:
    """Two columns, each a chart switcher and its chosen chart (see `dashboard.ui.plan_charts_view`)."""
    plan_charts_view.charts(scenario)


def risks(scenario: Scenario, result: PlanResult) -> None:
    """What the plan's savings risk: a row of badges, then one sentence per badge (only the risks that apply)."""
    notes = risk.risks(scenario, result)
    badges = " ".join(f":{note.colour}-badge[{markdown_text(f'{note.topic} · {note.badge}')}]" for note in notes)
    sentences = "\n".join(f"- **{note.topic}:** {markdown_text(note.sentence)}" for note in notes)
    st.markdown(f"{badges}\n\n{sentences}")  # one block: every element is a message and a render per rerun
