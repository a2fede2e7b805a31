"""The Plan page's charts: two columns of tabs (`plan_tabs`), the what-ifs beside the TST and storage charts, the
save-for-comparison and copy-link buttons, and the layout for narrow windows."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import pandas as pd
import streamlit as st

from dashboard.core.scenario import Scenario
from dashboard.core.sweeps import retention_what_ifs
from dashboard.figures import uncertainty
from dashboard.format import number, signed
from dashboard.safe_text import markdown_text
from dashboard.store.errors import StoreError
from dashboard.ui import compare_state, plan_state
from dashboard.ui.cache import chart, plan_result, range_chart
from dashboard.ui.plan_controls import CONTROLS, DRAWS, SEED
from dashboard.ui.plan_tabs import CHART_TABS, TAB_KEYS
from dashboard.ui.store_access import scenario_store

TST_WHAT_IF_KEYS = ("tst_speedup", "tst_token_multiplier", "tst_pilot_fraction")
RETENTION_KEYS = {
    "keep_last_checkpoints": ("Hot checkpoints kept", 1, 100_000, 1, "%d"),
    "archive_every_nth": ("Archive every n-th (0 = never)", 0, 100_000, 1, "%d"),
    "storage_retention_months": ("Kept after training (months)", 0.0, 1200.0, 1.0, "%.1f"),
}
SAVE_MESSAGE = "plan.save_message"
COPY_LINK = "plan.copy_link"  # the Copy link popover's open state
# Below about 1,100 px the two chart columns stack; the six tiles wrap to three a row, and a tile's value may
# shrink but is never cut off.
NARROW_LAYOUT_CSS = """
<style>
@media (max-width: 1100px) {
  .st-key-plan-charts [data-testid="stHorizontalBlock"] { flex-wrap: wrap; }
  .st-key-plan-charts [data-testid="stHorizontalBlock"] > [data-testid="stColumn"] {
    flex: 1 1 100% !important; width: 100% !important; min-width: 100% !important;
  }
}
@media (max-width: 1400px) {
  .st-key-plan-tiles [data-testid="stHorizontalBlock"] { flex-wrap: wrap; row-gap: 0.75rem; }
  .st-key-plan-tiles [data-testid="stHorizontalBlock"] > [data-testid="stColumn"] {
    flex: 1 1 calc(33.3% - 1rem) !important; min-width: calc(33.3% - 1rem) !important;
  }
}
.st-key-plan-tiles [data-testid="stMetricValue"], .st-key-plan-tiles [data-testid="stMetricValue"] * {
  font-size: clamp(1.1rem, 2.2vw, 2rem); overflow: visible; text-overflow: clip; white-space: nowrap;
}
</style>
"""


def narrow_layout() -> None:
    """The style rules that wrap the tiles and stack the chart columns in narrow windows (once per run)."""
    st.html(NARROW_LAYOUT_CSS)


def _control(key: str):
    return next(control for control in CONTROLS if control.key == key)


def _copy_tst_what_if(key: str) -> None:
    st.session_state[_control(key).widget] = st.session_state[f"plan.what_if.{key}"]


def _tst_what_if(scenario: Scenario) -> None:
    """Speedup, raw tokens and pilot beside the TST chart: the plan's own TST settings, editable under either method.

    They are the sidebar's controls' values (copied both ways), so the link and the file carry them.
    """
    state = st.session_state
    row = st.container(horizontal=True)
    for key in TST_WHAT_IF_KEYS:
        control = _control(key)
        what_if = f"plan.what_if.{key}"
        state[what_if] = state[control.widget]
        row.number_input(control.label, min_value=float(control.low), max_value=max(float(control.high),
                         state[what_if]), step=control.step, format=control.fmt, key=what_if, help=control.help,
                         on_change=_copy_tst_what_if, args=(key,))
    if scenario.method == "baseline":
        st.caption("The plan uses the baseline method: these settings only move this chart. Choose TST under "
                   "*Training method* to price the plan with it.")


def _set_retention(key: str) -> None:
    state = st.session_state
    data = json.loads(state[plan_state.SCENARIO])
    value = state[f"plan.what_if.{key}"]
    data[key] = float(value) if key == "storage_retention_months" else int(value)
    state[plan_state.SCENARIO] = json.dumps(data)


@st.cache_data(max_entries=64, show_spinner=False)
def _retention_effects(scenario_json: str) -> pd.DataFrame:
    return retention_what_ifs(Scenario.model_validate_json(scenario_json))


def _retention_what_if(scenario: Scenario, result: dict[str, Any]) -> None:
    """Retention settings beside the storage chart, and what each nearby change would do to the total."""
    state = st.session_state
    row = st.container(horizontal=True)
    for key, (label, low, high, step, fmt) in RETENTION_KEYS.items():
        what_if = f"plan.what_if.{key}"
        value = getattr(scenario, key)
        state[what_if] = value
        row.number_input(label, min_value=low, max_value=max(high, value), step=step, format=fmt, key=what_if,
                         on_change=_set_retention, args=(key,))
    effects = _retention_effects(scenario.model_dump_json(by_alias=True))
    st.caption(markdown_text(  # literal: two "$" would start maths
        f"Storage {number(result['storage_cost_usd'], '$')}: {number(result['storage_retention_usd'], '$')} of it "
        f"for keeping {number(result['storage_retained_gb'], 'GB')} for {scenario.storage_retention_months:g} "
        "months after training. What a change would do to the total:"
    ))
    st.dataframe(
        {"what if": list(effects["what_if"]),
         "total cost": [signed(delta, "$") for delta in effects["delta_total_usd"]]},
        hide_index=True, width="stretch", key="plan.what_if.retention_effects",
    )


def charts(scenario: Scenario) -> None:
    """Two columns of chart tabs; only the open tab of each is computed."""
    with st.container(key="plan-charts"):
        for column, names, key in zip(st.columns(2), CHART_TABS, TAB_KEYS, strict=True):
            with column:
                for tab, name in zip(st.tabs(names, key=key, on_change="rerun"), names, strict=True):
                    if tab.open is False:
                        continue
                    with tab:
                        _chart(name, scenario)


def _chart(name: str, scenario: Scenario) -> None:
    if name in uncertainty.CHARTS:
        draws, seed = st.session_state[DRAWS], int(st.session_state[SEED])
        figure = range_chart(scenario, name, draws, seed)
        st.caption(f"{draws:,} draws, seed {seed}, over the ranges in the sidebar's *Uncertainty ranges* group. "
                   "Fewer draws redraw faster while you explore; use 100,000 for the numbers you present.")
    else:
        figure = chart(scenario, name)
    st.plotly_chart(figure, width="stretch", key=f"plan.chart.{name}")
    if name == "TST vs baseline":
        _tst_what_if(scenario)
    elif name == "Storage growth":
        _retention_what_if(scenario, plan_result(scenario))


def save_for_comparison() -> None:
    """Save the Plan's scenario under its name in the store the Compare page reads, and pick it there."""
    state = st.session_state
    scenario = Scenario.model_validate_json(state[plan_state.SCENARIO])
    try:
        scenario_store().save(scenario.name, scenario)
    except StoreError as error:
        state[SAVE_MESSAGE] = ("error", f"Not saved: {error}.")
        return
    chosen = [name for name in state.get(compare_state.SELECTED, []) if name != scenario.name]
    state[compare_state.SELECTED] = [*chosen, scenario.name][-4:]
    state[SAVE_MESSAGE] = ("success", f"Saved “{scenario.name}” for comparison: the Compare page shows it.")


def share_buttons(link: dict[str, str]) -> None:
    """"Save for comparison" and "Copy link" (the page address with every setting and the open tabs)."""
    row = st.container(horizontal=True)
    row.button("Save for comparison", on_click=save_for_comparison, icon=":material/bookmark_add:",
               key="plan.save_for_comparison",
               help="Saves this scenario under its name in the scenario store; compare it on the Compare page.")
    # Filled only while open (a rerun opens it): two fewer messages and renders on every other rerun.
    copy_link = row.popover("Copy link", icon=":material/link:", key=COPY_LINK, on_change="rerun")
    if copy_link.open:
        page = urlsplit(st.context.url or "")
        address = urlunsplit((page.scheme, page.netloc, page.path or "/", urlencode(link), ""))
        copy_link.caption("The address of this exact view (every setting, the baseline and the open charts). "
                          "Copy it with the button at the right of the box.")
        copy_link.code(address, language=None, wrap_lines=True)
    message = st.session_state.pop(SAVE_MESSAGE, None)
    if message:
        kind, text = message
        (st.success if kind == "success" else st.error)(markdown_text(text))
