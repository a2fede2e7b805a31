"""The Compare page's outputs: the saved list, the comparison table, the grouped charts and the presentation layout."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from dashboard.core.scenario import Scenario
from dashboard.format import count, usd
from dashboard.safe_text import markdown_text
from dashboard.ui import compare_cache, compare_state
from dashboard.ui.cache import cached_estimate, cached_monte_carlo, plan_figure
from dashboard.ui.compare_state import OVERWRITE, SAVE_NAME, UPLOAD, UPLOAD_ROUND
from dashboard.ui.plan_state import scenario_json

HIGHLIGHT = "background-color: #fff3bf"
# Large numbers for a projector: metric values and labels in the presentation layout.
PRESENTATION_CSS = """<style>
[data-testid="stMetricValue"] { font-size: 2.8rem; }
[data-testid="stMetricLabel"] p { font-size: 1.15rem; }
</style>"""


def store_controls(display_url: str) -> None:
    """Save the Plan's scenario, import files, add the presets; the store's address underneath."""
    state = st.session_state
    st.subheader("Save and import")
    st.text_input("Save the Plan's scenario as", key=SAVE_NAME, max_chars=120,
                  placeholder=compare_state.plan_scenario().name,
                  help="1–120 characters: letters, digits, spaces and - – — _ . , ( ) + & # ' % :")
    st.checkbox("Overwrite a saved scenario with the same name", key=OVERWRITE)
    st.button("Save", on_click=compare_state.save_plan, icon=":material/save:", type="primary")
    st.file_uploader("Import scenario JSON files", type=["json"], accept_multiple_files=True,
                     key=f"{UPLOAD}.{state.get(UPLOAD_ROUND, 0)}", on_change=compare_state.import_files,
                     help="One scenario per file, or an array of them (as exported here). All or nothing: a bad "
                          "file or a name already taken imports none.")
    st.button("Add the bundled presets", on_click=compare_state.add_presets, icon=":material/library_add:")
    st.caption(f"Store: `{display_url}`")


def saved_table(scenarios: dict[str, Scenario]) -> None:
    """Every saved scenario with its headline numbers."""
    rows = []
    for name, scenario in scenarios.items():
        result = cached_estimate(scenario_json(scenario))
        rows.append({"Scenario": name, "Total cost": usd(result["cost_total_usd"]),
                     "GPU-hours": count(result["gpu_hours_total"]), "Wall-clock (days)": result["wall_clock_days"],
                     "Method": scenario.method, "Budget": result["budget_status"]})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"Wall-clock (days)": st.column_config.NumberColumn(format="%.1f")})


def table(jsons: tuple[str, ...]) -> None:
    """The comparison table, cells that differ from the first scenario highlighted, and its CSV export."""
    shown, mask = compare_cache.display(jsons)
    styled = shown.style.apply(lambda _: mask.map(lambda differs: HIGHLIGHT if differs else ""), axis=None)
    st.subheader("Inputs that differ and headline outputs")
    st.dataframe(styled, hide_index=True, width="stretch", height=min(38 * (len(shown) + 1), 900))
    st.download_button("Download the table (CSV)", data=partial(compare_cache.csv_bytes, jsons),
                       file_name="comparison.csv",
                       mime="text/csv", on_click="ignore", icon=":material/table_view:",
                       help="Raw values, one column per scenario and one Δ column per scenario after the first; "
                            "text cells that a spreadsheet would run as a formula are escaped.")


def charts(jsons: tuple[str, ...], scenarios: list[Scenario]) -> None:
    """Cost breakdown, timeline and P10–P90 ranges per scenario, then the TST view of each TST scenario."""
    left, right = st.columns(2)
    left.plotly_chart(compare_cache.figure(jsons, "cost"), width="stretch", key="compare.chart.cost")
    right.plotly_chart(compare_cache.figure(jsons, "timeline"), width="stretch", key="compare.chart.timeline")
    st.plotly_chart(compare_cache.figure(jsons, "range"), width="stretch", key="compare.chart.range")
    tst = [(text, scenario) for text, scenario in zip(jsons, scenarios, strict=True) if scenario.method == "tst"]
    for position, (text, scenario) in enumerate(tst):
        st.subheader(f"TST against baseline: {scenario.name}")
        st.plotly_chart(plan_figure(text, "TST vs baseline"), width="stretch", key=f"compare.chart.tst.{position}")


def presentation(jsons: tuple[str, ...]) -> None:
    """One column per option: large headline numbers with their P10–P90 range, then the range chart."""
    st.html(PRESENTATION_CSS)
    for column, text in zip(st.columns(len(jsons), border=True), jsons, strict=True):
        result = cached_estimate(text)
        mc = cached_monte_carlo(text, *compare_cache.DRAWS_AND_SEED)
        with column:
            st.subheader(result["name"])
            st.metric("Total cost", usd(result["cost_total_usd"]))
            st.caption(f"P10–P90 {usd(mc.percentile('cost_total_usd', 10))} – "
                       f"{usd(mc.percentile('cost_total_usd', 90))}; "
                       f"{mc.prob_over_budget:.0%} chance of exceeding the {usd(result['budget_usd'])} budget")
            st.metric("GPU-hours", count(result["gpu_hours_total"]))
            st.metric("Wall-clock", f"{result['wall_clock_days']:,.1f} days")
            st.metric("$ per million tokens", f"${result['cost_per_million_tokens']:,.3f}")
            st.metric("Predicted loss", f"{result['predicted_loss']:.3f}")
            st.metric("Budget", result["budget_status"] if result["feasible"] else "infeasible",
                      help=markdown_text("; ".join(result["feasibility_problems"])) or None)
    st.plotly_chart(compare_cache.figure(jsons, "range"), width="stretch", key="compare.chart.range")
