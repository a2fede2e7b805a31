"""Plan page: the current scenario's headline numbers, line items and TST comparison."""

import json

import pandas as pd
import streamlit as st

from dashboard.core.scenario import Scenario, ScenarioError, default_scenario, scenario_from_json
from dashboard.ui.cache import cached_estimate
from dashboard.ui.format import count, usd

if "scenario_json" not in st.session_state:
    st.session_state.scenario_json = json.dumps(default_scenario().to_json_dict())

st.title("Plan")
with st.sidebar:
    uploaded = st.file_uploader("Load a scenario (JSON)", type=["json"], key="scenario_upload")
    if uploaded is not None:
        try:
            loaded = scenario_from_json(uploaded.getvalue())
        except ScenarioError as error:
            st.error(f"{uploaded.name} was not loaded: {error}. The previous scenario is kept.")
        else:
            st.session_state.scenario_json = json.dumps(loaded.to_json_dict())

scenario = Scenario.model_validate_json(st.session_state.scenario_json)
result = cached_estimate(st.session_state.scenario_json)
st.caption(f"Scenario: **{scenario.name}**")

tiles = st.columns(6)
tiles[0].metric("Total cost", usd(result["cost_total_usd"]), help="Sum of every line item below, in US dollars.")
tiles[1].metric("GPU-hours", count(result["gpu_hours_total"]),
                help="6·N_active·D / (peak · MFU · 3600), plus checkpoint stalls, failure rework and experiments.")
tiles[2].metric("Wall-clock", f"{result['wall_clock_days']:,.1f} days",
                help="Main-run GPU-hours / GPU count / 24.")
tiles[3].metric("$ per million tokens", f"${result['cost_per_million_tokens']:,.3f}",
                help="Total cost / (training tokens / 1e6).")
tiles[4].metric("Predicted loss", f"{result['predicted_loss']:.3f}",
                help=f"L = E + A/N^α + B/D^β with the {scenario.scaling_fit} fit, N = active parameters.")
tiles[5].metric("Budget", result["budget_status"], help=(
    f"Total against the budget of {usd(scenario.budget_usd)}; 'warning' above "
    f"{scenario.budget_warning_fraction:.0%} of it."))

left, right = st.columns(2)
with left:
    st.subheader("Cost by line item")
    breakdown = pd.DataFrame(
        {"line item": list(result["cost_breakdown"]), "cost (USD)": list(result["cost_breakdown"].values())}
    )
    st.dataframe(breakdown, hide_index=True, width="stretch", height="content",
                 column_config={"cost (USD)": st.column_config.NumberColumn(format="dollar")})
with right:
    st.subheader("Baseline vs Token Superposition Training")
    tst = result["tst"]
    st.dataframe(
        pd.DataFrame({
            "": ["GPU-hours (main run)", "Cost (USD, run + data)", "Raw tokens read"],
            "baseline": [count(tst["baseline_gpu_hours"]), usd(tst["baseline_cost_usd"]),
                         count(tst["baseline_tokens"])],
            "TST": [count(tst["tst_gpu_hours"]), usd(tst["tst_cost_usd"]), count(tst["tst_tokens"])],
        }),
        hide_index=True, width="stretch",
    )
    st.caption(
        f"Net saving after a pilot of {usd(tst['pilot_cost_usd'])} and switching cost of "
        f"{usd(tst['switching_cost_usd'])}: **{usd(tst['net_savings_usd'])}**, compared at matched loss "
        f"(speedup {tst['speedup']:.2f}×, from the published 10B-A1B MoE run; validate with a pilot first)."
    )

with st.expander("Risk and storage"):
    st.dataframe(pd.DataFrame({
        "quantity": ["Job MTBF (h)", "Checkpoint size (GB)", "Checkpoint write (s)", "Young interval (min)",
                     "Daly interval (min)", "Overhead (stall + rework)", "Peak storage (GB)", "Storage cost (USD)"],
        "value": [result["job_mtbf_hours"], result["checkpoint_size_gb"], result["checkpoint_write_s"],
                  result["checkpoint_interval_young_min"], result["checkpoint_interval_daly_min"],
                  result["overhead_fraction"], result["storage_peak_gb"], result["storage_cost_usd"]],
    }), hide_index=True, width="stretch")

st.download_button("Download scenario JSON", data=json.dumps(scenario.to_json_dict(), indent=2),
                   file_name="scenario.json", mime="application/json")
