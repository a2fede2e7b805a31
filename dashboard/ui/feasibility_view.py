"""The Plan page's "Can it run?" panel: the model's shape, memory per GPU, the layout, steps, the batch's GPU limit,
data epochs and the fixes, each with an Apply button.

Numbers and sentences come from `engine.scenario_outputs`, the fixes from `dashboard.core.fix_choice.offered` and the
shape from `dashboard.core.shape`; this module only lays them out. Apply sets the fix's keys in the plan and in the
sidebar's widgets (`plan_state.apply_changes`, a callback, so it runs before the widgets are drawn).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard.core import catalogue, fix_choice, shape
from dashboard.core.engine import PlanResult
from dashboard.core.scenario import Scenario
from dashboard.figures.feasibility import memory_figure
from dashboard.safe_text import markdown_text
from dashboard.ui import layout_controls, plan_state
from dashboard.ui.cache import SCENARIO_HASH, DrawnChart
from dashboard.validation.memory_validation import validation_note

SHAPE_EXPANDER = "plan.shape"


@st.cache_resource(max_entries=64, show_spinner=False)
def _figure(memory: dict[str, Any], layout: dict[str, int]) -> DrawnChart:
    """Keyed by what it draws, not by the scenario: moving MFU, a price or a share draws the same bar again."""
    return DrawnChart(memory_figure(memory, layout))


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=SCENARIO_HASH)
def _offered(scenario: Scenario) -> tuple[list[fix_choice.Offered], list[fix_choice.Offered]]:
    """The fixes offered and those only considered (a resource: the page only reads them)."""
    return fix_choice.offered(scenario)


def _layout_text(layout: dict[str, int], scenario: Scenario) -> str:
    """ "TP 8 · PP 16 (× 2 virtual) · CP 2 · DP 64 · ZeRO-1 · EP 8": degrees of 1 beyond TP and PP are left out."""
    virtual = layout.get("virtual_pipeline_stages", scenario.virtual_pipeline_stages)
    context = layout.get("context_parallel", scenario.context_parallel)
    parts = [f"TP {layout['tensor_parallel']}",
             f"PP {layout['pipeline_parallel']}" + (f" (× {virtual} virtual)" if virtual > 1 else ""),
             *([f"CP {context}"] if context > 1 else []),
             f"DP {layout['data_parallel']:,}", f"ZeRO-{layout['zero_stage']}",
             *([f"EP {layout['expert_parallel']}"] if layout["expert_parallel"] > 1 else [])]
    return " · ".join(parts)


def shape_text(model: shape.ModelShape) -> str:
    """ "Assumed shape: 126 layers × 16,384, 128 heads (8 KV) — from the size" (or "Shape: … as given")."""
    described = shape.describe(model)
    if model.from_the_size:
        return f"Assumed shape: {described} — from the size"
    if model.assumed:
        return f"Shape: {described} — as given, the rest from the size"
    return f"Shape: {described} — as given"


def _shape(scenario: Scenario, invalid: dict[str, str]) -> None:
    """The model's shape in one line, and an expander with a box per shape key (empty boxes follow the size)."""
    model = shape.model_shape(scenario)
    text, _, source = shape_text(model).partition(" — ")
    label, _, described = text.partition(": ")
    st.markdown(f"**{label}:** {markdown_text(described)} — {source}", help=markdown_text(model.source))
    expander = st.expander("Change the model shape", key=SHAPE_EXPANDER, on_change="rerun",
                           expanded=any(control.key in invalid for control in layout_controls.SHAPE_CONTROLS))
    if expander.open is False:
        return
    with expander:
        layout_controls.render_shape(invalid, {key: getattr(model, key) for key in model.assumed})
        st.caption("Empty boxes follow the parameter count (the shape shown in grey); the memory and the layout "
                   "use the shape above.")


def _fix_list(scenario: Scenario) -> None:
    """The fixes that make the plan run within its batch and a sane count of GPUs (`dashboard.core.fix_choice`),
    cheapest first, each with its price, wall-clock, what it changes and an Apply button; the rest folded under
    "also considered" with why. A plan that fits has none."""
    shown, considered = _offered(scenario)
    if not shown and not considered:
        return
    if shown:
        st.markdown("**Fixes, cheapest first:**")
    else:
        st.markdown(f"**No fix makes it run** within the batch and {fix_choice.gpu_bound(scenario):,} GPUs.")
    for index, item in enumerate(shown):
        words, button = st.columns([6, 1], vertical_alignment="center")
        words.markdown(f"Use {markdown_text(item.fix.label)}: "
                       f"{catalogue.text('memory.total_gb', item.fix.memory_gb)} per GPU, total "
                       f"{markdown_text(item.cost_text)}, wall-clock {markdown_text(item.days_text)}  \n"
                       f":gray[changes {markdown_text(item.changes_text)}]")
        button.button("Apply", key=f"plan.fix.{index}", on_click=plan_state.apply_changes,
                      args=(item.fix.label, dict(item.fix.changes)), help="Sets these keys in the plan and the "
                      "sidebar; the notice above offers an undo.")
    if considered:
        with st.expander(f"Also considered ({len(considered)}), not offered", key="plan.fixes_considered"):
            st.markdown("\n".join(
                f"- {markdown_text(item.fix.label)}: {catalogue.text('memory.total_gb', item.fix.memory_gb)} per "
                f"GPU, total {markdown_text(item.cost_text)} — {markdown_text(item.reason)}" for item in considered))


def panel(scenario: Scenario, result: PlanResult) -> None:
    """The panel under the tiles; the budget reads "infeasible" here when the plan cannot run."""
    invalid = st.session_state.get(plan_state.INVALID) or {}
    with st.container(border=True, key="plan.feasibility"):
        st.subheader("Can it run?")
        if result["feasible"]:
            st.success(f"Runs on {scenario.gpu_count:,} GPUs: "
                       f"{catalogue.text('memory.total_gb', result['memory']['total_gb'])} per GPU.",
                       icon=":material/check_circle:")
        else:
            st.error("Cannot run as planned, so the budget is infeasible: the cost above buys a run that does "
                     "not fit.", icon=":material/block:")
        _shape(scenario, invalid)
        chart, numbers = st.columns([3, 2])
        chart.plotly_chart(_figure(result["memory"], result["layout"]), width="stretch", key="plan.chart.memory")
        chart.caption(markdown_text(validation_note()))
        with numbers:
            epochs = result["epochs"]
            bubble = catalogue.text("pipeline_bubble_fraction", result["pipeline_bubble_fraction"])
            # Plain lines, not metric tiles: they fit the narrow column at any window width. One block, as every
            # element is a message and a render on each rerun.
            st.markdown("\n".join((
                f"**Layout:** {_layout_text(result['layout'], scenario)}",
                "",
                f"- **Optimizer steps:** {catalogue.text('optimizer_steps', result['optimizer_steps'])}, each of "
                f"{result['global_batch_sequences']:,.0f} sequences",
                f"- **Max useful GPUs:** {result['max_useful_gpus']:,.0f} (GPUs beyond this would idle)",
                f"- **Data epochs:** {'unlimited data' if epochs is None else f'{epochs:,.2f}'}",
                f"- **Pipeline bubble:** {bubble} of each step",
            )), help="Data parallel = GPUs / (TP · PP · CP); keys left unset are proposed by the planner "
               "(set them under *Layout and memory* in the sidebar).")
            st.caption("Steps = tokens / global batch; max useful GPUs = batch sequences / micro-batch × TP × PP; "
                       "epochs = tokens read / unique tokens (repeats count less, Muennighoff et al. 2023); "
                       "bubble = (PP − 1) / (m + PP − 1) with m micro-batches per step, divided by v with v virtual "
                       "stages (interleaved 1F1B).")
        for sentence in result["feasibility_problems"]:
            st.error(markdown_text(sentence), icon=":material/error:")
        for sentence in result["feasibility_warnings"]:
            st.warning(markdown_text(sentence), icon=":material/warning:")
        _fix_list(scenario)
        if result["feasibility_notes"]:
            st.caption("  \n".join(markdown_text(sentence) for sentence in result["feasibility_notes"]))
