"""The Plan page's "Can it run?" panel: memory per GPU, the layout, steps, the batch's GPU limit and data epochs.

Numbers and sentences come from `engine.scenario_outputs` (`dashboard.core.feasibility`); this module only lays
them out.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard.core import catalogue
from dashboard.core.scenario import Scenario
from dashboard.figures.feasibility import memory_figure
from dashboard.safe_text import markdown_text
from dashboard.ui.cache import DrawnChart


@st.cache_resource(max_entries=64, show_spinner=False)
def _figure(memory: dict[str, Any], layout: dict[str, int]) -> DrawnChart:
    """Keyed by what it draws, not by the scenario: moving MFU, a price or a share draws the same bar again."""
    return DrawnChart(memory_figure(memory, layout))


def _layout_text(layout: dict[str, int]) -> str:
    return (f"TP {layout['tensor_parallel']} · PP {layout['pipeline_parallel']} · DP {layout['data_parallel']:,} · "
            f"ZeRO-{layout['zero_stage']}" + (f" · EP {layout['expert_parallel']}"
                                              if layout["expert_parallel"] > 1 else ""))


def panel(scenario: Scenario, result: dict[str, Any]) -> None:
    """The panel under the tiles; the budget reads "infeasible" here when the plan cannot run."""
    with st.container(border=True, key="plan.feasibility"):
        st.subheader("Can it run?")
        if result["feasible"]:
            st.success(f"Runs on {scenario.gpu_count:,} GPUs: "
                       f"{catalogue.text('memory.total_gb', result['memory']['total_gb'])} per GPU.",
                       icon=":material/check_circle:")
        else:
            st.error("Cannot run as planned, so the budget is infeasible: the cost above buys a run that does "
                     "not fit.", icon=":material/block:")
        chart, numbers = st.columns([3, 2])
        chart.plotly_chart(_figure(result["memory"], result["layout"]), width="stretch", key="plan.chart.memory")
        with numbers:
            epochs = result["epochs"]
            bubble = catalogue.text("pipeline_bubble_fraction", result["pipeline_bubble_fraction"])
            # Plain lines, not metric tiles: they fit the narrow column at any window width. One block, as every
            # element is a message and a render on each rerun.
            st.markdown("\n".join((
                f"**Layout:** {_layout_text(result['layout'])}",
                "",
                f"- **Optimizer steps:** {catalogue.text('optimizer_steps', result['optimizer_steps'])}, each of "
                f"{result['global_batch_sequences']:,.0f} sequences",
                f"- **Max useful GPUs:** {result['max_useful_gpus']:,.0f} (GPUs beyond this would idle)",
                f"- **Data epochs:** {'unlimited data' if epochs is None else f'{epochs:,.2f}'}",
                f"- **Pipeline bubble:** {bubble} of each step",
            )), help="Data parallel = GPUs / (TP · PP); keys left unset are proposed by the planner.")
            st.caption("Steps = tokens / global batch; max useful GPUs = batch sequences / micro-batch × TP × PP; "
                       "epochs = tokens read / unique tokens (repeats count less, Muennighoff et al. 2023); "
                       "bubble = (PP − 1) / (m + PP − 1) with m micro-batches per step.")
        for sentence in result["feasibility_problems"]:
            st.error(markdown_text(sentence), icon=":material/error:")
        for sentence in result["feasibility_warnings"]:
            st.warning(markdown_text(sentence), icon=":material/warning:")
        if result["feasibility_notes"]:
            st.caption("  \n".join(markdown_text(sentence) for sentence in result["feasibility_notes"]))
