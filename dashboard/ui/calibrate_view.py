"""The Retrospective's "Measured inputs for the next plan": what last quarter's imports measure, and the button that
opens the Plan page with them (`dashboard.retro.calibrate`; provenance in `dashboard.core.provenance`)."""

from __future__ import annotations

import datetime
from collections.abc import Hashable, Mapping

import pandas as pd
import streamlit as st

from dashboard.core import catalogue, provenance
from dashboard.core.scenario import Scenario, default_scenario
from dashboard.query.opened import Table
from dashboard.retro import calibrate, carry
from dashboard.retro.gap import GapSummary
from dashboard.retro.view import Rollups
from dashboard.safe_text import markdown_text
from dashboard.ui import plan_state
from dashboard.ui import retro_cache as cache

BUTTON = "Plan the next run from this quarter"




def as_provenance(measured: calibrate.Measured) -> provenance.Provenance | None:
    """A measured input as the Plan page's provenance (None when it has no value); a spread that does not hold the
    value is left out."""
    if measured.value is None:
        return None
    low, high = measured.low, measured.high
    if low is None or high is None or not low <= measured.value <= high:
        low = high = None
    return provenance.Provenance(measured.key, float(measured.value), low, high, int(measured.count),
                                 measured.exposure, bool(measured.thin))


def table(measured: dict[str, calibrate.Measured]) -> pd.DataFrame:
    """One row per input: its label, the measured value and spread as the Plan page writes them, what it was
    observed over, and the caveat (or why it cannot be measured)."""
    rows = []
    for key in provenance.KEYS:
        item = measured.get(key)
        if item is None:
            continue
        has = item.value is not None
        spread = (f"{catalogue.text(key, item.low)}–{catalogue.text(key, item.high)}"
                  if has and item.low is not None and item.high is not None else "")
        if not has and item.low is not None and item.high is not None:
            spread = f"{catalogue.text(key, item.low)}–{catalogue.text(key, item.high)}"  # what no event rules out
        use = "plan's value stays" if not has else (THIN_USE if item.thin else "applied")
        rows.append({"input": catalogue.label(key), "measured": catalogue.text(key, item.value) if has else "—",
                     "spread": spread, "basis": item.basis, "next_plan": use, "caveat": item.caveat or ""})
    return pd.DataFrame(rows, columns=["input", "measured", "spread", "basis", "next_plan", "caveat"])


THIN_USE = "only if ticked below"


def _chosen_thin(measured: dict[str, calibrate.Measured]) -> tuple[str, ...]:
    """A checkbox per thin measured input (few observations): applied to the next plan only when ticked."""
    thin = [item for key in provenance.KEYS if (item := measured.get(key)) is not None
            and item.value is not None and item.thin]
    if not thin:
        return ()
    st.caption("Thin measurements (few observations) are a hint, not a measurement to rely on: tick one to apply "
               "it to the next plan anyway.")
    chosen = []
    for item in thin:
        spread = (f", {catalogue.text(item.key, item.low)}–{catalogue.text(item.key, item.high)}"
                  if item.low is not None and item.high is not None else "")
        label = f"Apply {catalogue.label(item.key)} {catalogue.text(item.key, item.value)}{spread}"
        if st.checkbox(label, key=f"retro.use_thin.{item.key}", value=False,
                       help=markdown_text(item.caveat) if item.caveat else None):
            chosen.append(item.key)
    return tuple(chosen)


GO_TO_PLAN = "retro.go_to_plan"  # the Plan page's link, set by the button; the next run switches to it


def _hand_over(measured: dict[str, calibrate.Measured], plan: Scenario | None,
               period: tuple[datetime.date, datetime.date] | None, use_thin: tuple[str, ...] = (),
               carried: carry.NextPlan | None = None) -> None:
    """The button's callback: hand the calibrated scenario (thin inputs only those ticked; with ``carried``, the
    next plan that carries last quarter's overrun, and its banner), its provenance and the compared plan (as the
    baseline) to the Plan page, which `switch_if_asked` opens at the top of the next run."""
    state = st.session_state
    if carried is not None:
        scenario, applied = carried.scenario, carried.applied
        state[plan_state.CARRIED] = (carry.banner(carried), carry.comparison(carried))
    else:
        scenario, applied = calibrate.scenario_from(measured, plan or default_scenario(), use_thin)
        state.pop(plan_state.CARRIED, None)
    items = {key: item for key, m in applied.items() if (item := as_provenance(m)) is not None}
    plan_state.hand_over(scenario)
    state[plan_state.BASELINE] = plan
    state[plan_state.MEASURED_HANDED] = (items, period)
    state[GO_TO_PLAN] = plan_state.link_of(scenario, plan, items, period)


def switch_if_asked() -> None:
    """At the top of the Retrospective, before any widget binds the link: open the Plan page when the button
    asked for it."""
    link = st.session_state.pop(GO_TO_PLAN, None)
    if link:  # the Plan page's own link: replacing the parameters, not clearing them, leaves the bound ones behind
        st.switch_page("app_pages/plan.py", query_params=link)


def _rows_behind(key: Hashable, bill: Table | None, runs: Table | None,
                 measured: dict[str, calibrate.Measured]) -> None:
    """An expander with the rows one measured input came from, chosen from those that have rows."""
    with_rows = [k for k in provenance.KEYS if k in measured and measured[k].source_rows]
    if not with_rows:
        return
    with st.expander("Rows behind a measured input"):
        chosen = st.selectbox("Input", with_rows, format_func=catalogue.label, key="retro.calibration_rows")
        item = measured[chosen]
        table = bill if chosen in calibrate.BILL_KEYS or runs is None else runs
        if table is None:
            return
        rows = cache.calibration_rows((key, chosen), table, item)
        more = ", the first the query found; there are more" if len(item.source_rows) >= calibrate.SOURCE_ROWS else ""
        st.caption(f"{len(rows):,} rows of the {'bill' if table is bill else 'run export'}{more} "
                   "(line numbers in the source file under source_row).")
        st.dataframe(rows, hide_index=True, width="stretch")


def _carry(measured: dict[str, calibrate.Measured], plan: Scenario | None, use_thin: tuple[str, ...],
           decomposed: tuple[pd.DataFrame, GapSummary] | None) -> carry.NextPlan | None:
    """The choice to carry last quarter's overrun into the next plan (``carry.next_plan``), each part's line shown;
    None without a compared plan and its decomposition, or when the user leaves it out."""
    if plan is None or decomposed is None:
        return None
    carried = carry.next_plan(decomposed[0], decomposed[1], measured, plan, use_thin)
    if not st.checkbox("Carry last quarter's overrun into the next plan", value=True, key="retro.carry_overrun",
                       help="Each part of Plan vs actual above becomes an input change of the next plan or an "
                       "explicit line of dollars beside it (docs/calibration.md)."):
        return None
    st.markdown("\n".join(f"- {markdown_text(part.text)}" for part in carried.parts))
    st.caption(markdown_text(carry.banner(carried)))
    return carried


def section(key: Hashable, bill: Table | None, runs: Table | None, plan: Scenario | None, join_on: str,
            period: tuple[datetime.date, datetime.date] | None,
            decomposed: tuple[pd.DataFrame, GapSummary] | None = None,
            run_params: Mapping[int, float] | None = None, rollups: Rollups | None = None) -> None:
    """The measured inputs of the shown view, and the button to plan the next run from them (carrying last
    quarter's overrun when the compared plan's ``decomposed`` parts and summary are given); MFU at each job's model
    size as the run export logs it (``run_params``), else the compared plan's; ``rollups``: the chooser of the workspace
    dataset whose own rows ``bill`` is (None under a filter), which the sums are read from."""
    chosen = st.session_state.get(f"retro.main_runs.{join_on}")
    main_runs = tuple(chosen) if chosen else None
    base = plan or default_scenario()
    measured = cache.calibration(key, bill, runs, main_runs, None if plan is None else float(plan.active),
                                 base.gpus_per_node, None if plan is None else plan.gpu_type, run_params, rollups)
    st.subheader("Measured inputs for the next plan")
    st.caption("What this quarter's imports measure of the Plan page's inputs (method: docs/calibration.md). "
               + ("The main run is the one chosen above; " if main_runs else "")
               + ("MFU uses each job's model size as the run export logs it, else " if run_params else "MFU uses ")
               + "the model size of the plan compared and prices its GPU type"
               + (f" ({markdown_text(plan.name)})." if plan is not None else
                  (" (choose a plan above for the jobs that log none)." if run_params else
                   ": choose a plan above to measure it.")))
    st.dataframe(table(measured), hide_index=True, width="stretch", column_config={
        "input": st.column_config.TextColumn("Input"), "measured": st.column_config.TextColumn("Measured"),
        "spread": st.column_config.TextColumn("Spread"), "basis": st.column_config.TextColumn("Measured over"),
        "next_plan": st.column_config.TextColumn("Next plan"), "caveat": st.column_config.TextColumn("Caveat"),
    })
    _rows_behind(key, bill, runs, measured)
    use_thin = _chosen_thin(measured)
    carried = _carry(measured, plan, use_thin, decomposed)
    usable = [item for item in measured.values() if calibrate.usable(item, use_thin)]
    st.button(BUTTON, key="retro.plan_next", icon=":material/model_training:", disabled=not usable,
              on_click=_hand_over, args=(measured, plan, period, use_thin, carried),
              help="Opens the Plan page with the measured values (each marked with where it came from), the "
              "uncertainty ranges set from the observed spread and the plan compared pinned as the baseline."
              if usable else "Nothing could be measured from these imports.")
