"""How good were our plans: keep a Plan vs actual comparison in the store, and show the last ones kept.

``record_button`` sits on the Retrospective's Plan vs actual tab, under the waterfall: it keeps the chosen saved
plan's outcome (`dashboard.core.plan_accuracy.outcome_from` of the decomposition the tab shows, over the dates
shown) in the store's ``plan_outcomes`` table, as the signed-in user. ``summary`` (the Compare page and the same tab)
says how close the last plans came ("Our last 4 plans were within 12 % on GPU-hours and 18 % on cost.") with one
row per kept comparison. Names are shown as text; numbers written by `dashboard.format`.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.core import engine
from dashboard.core.plan_accuracy import PlanOutcome, accuracy, accuracy_sentence, keep_flags, outcome_from
from dashboard.core.scenario import Scenario
from dashboard.format import count_sig, money, signed, usd_sig
from dashboard.retro.results import GapResult
from dashboard.retro.view import RetroView
from dashboard.safe_text import markdown_text
from dashboard.store.errors import StoreError
from dashboard.store.plan_outcomes import DEFAULT_OUTCOMES, RecordedOutcome
from dashboard.ui import identity
from dashboard.ui.store_access import scenario_store

KEEP_LABEL = "Keep this comparison"
KEEP_ANYWAY = "Keep it anyway"
REMOVE_LABEL = "Remove this comparison"
PENDING = "retro.keep_pending"  # (outcome, flags) waiting for the user's confirmation
TITLE = "How good were our plans?"
GROUPING = ("Price is the price part (paid per GPU-hour against the plan's price); quantity is scale + "
            "experiments + idle / unattributed (GPU-hours bought beyond or below the plan); efficiency is "
            "efficiency + failures and restarts (GPU-hours per token and work lost). Cost is compared for bills in "
            "US dollars with costs, the plans' currency.")


def _day(value: Any) -> date:
    return pd.Timestamp(value).date()


def _period(start: date, end: date) -> str:
    return f"{start:%Y-%m-%d} – {end:%Y-%m-%d}"


def record_button(view: RetroView, compared: GapResult, saved_name: str | None) -> None:
    """*Keep this comparison*: the outcome of the view's plan (saved in the store as ``saved_name``; None for a plan
    that is not), ``compared`` as the tab drew it (`retro_view.gap_section`), against the view's rows over its
    dates (the first and last day shown), in the bill's currency. Disabled, saying why, for a plan that is not a
    saved scenario, data without dates or a store that cannot be used; a message says what was kept, or why not."""
    plan, currency, period = view.plan, view.currency, (view.filters.start, view.filters.end)
    if plan is None or compared.parts is None or compared.summary is None:
        return
    dated = all(value is not None and not pd.isna(value) for value in period)
    start, end = (_day(period[0]), _day(period[1])) if dated else (None, None)
    store, why_not, keep_help = None, None, ""
    if saved_name is None:
        why_not = ("Only a plan saved in the scenario store can be kept: save it on the Compare page, then choose it "
                   "here as “Saved: …”.")
    elif start is None or end is None:
        why_not = "These actuals have no dates, so the comparison has no period to be kept under."
    else:
        try:
            store = scenario_store()
        except StoreError as error:
            why_not = f"The scenario store cannot be used: {markdown_text(error)}"
    if why_not is None and start is not None and end is not None:
        keep_help = (f"Keep this plan's GPU-hours and cost against the actuals of {_period(start, end)} (as "
                     f"filtered here) for *{TITLE}* on the Compare page; keeping the same plan and dates again "
                     "replaces it.")
    clicked = st.button(KEEP_LABEL, key="retro.keep_outcome", disabled=why_not is not None,
                        icon=":material/bookmark_add:", help=why_not or keep_help)
    state = st.session_state
    if store is None or saved_name is None or start is None or end is None:
        state.pop(PENDING, None)
        return
    if clicked:
        try:
            outcome = outcome_from(compared.summary, compared.parts, scenario_name=saved_name, period_start=start,
                                   period_end=end, currency=currency)
        except ValueError as error:
            st.error(f"The comparison was not kept: {markdown_text(error)}", icon=":material/error:")
            return
        flags = keep_flags(outcome, *_plan_days(plan))
        if not flags:
            state.pop(PENDING, None)
            _keep(store, outcome)
            return
        state[PENDING] = (outcome, flags)
    pending = state.get(PENDING)
    if pending is None:
        return
    outcome, flags = pending
    if (outcome.scenario_name, outcome.period_start, outcome.period_end) != (saved_name, start, end):
        state.pop(PENDING, None)  # another plan or other dates chosen since: ask again on the next keep
        return
    with st.container(key="retro-keep-confirm"):
        st.warning("Look before keeping this comparison:  \n" + "  \n".join(markdown_text(f) for f in flags),
                   icon=":material/compare_arrows:")
        row = st.container(horizontal=True)
        if row.button(KEEP_ANYWAY, key="retro.keep_anyway", icon=":material/bookmark_add:"):
            state.pop(PENDING, None)
            _keep(store, outcome)
        if row.button("Don't keep it", key="retro.keep_cancel", icon=":material/close:"):
            state.pop(PENDING, None)
            st.rerun()


def _plan_days(plan: Scenario) -> tuple[date | None, float | None]:
    """The plan's first day (its ``start_date``; None without one) and how many days it runs."""
    if plan.start_date is None:
        return None, None
    return date.fromisoformat(plan.start_date), float(engine.scenario_outputs(plan)["wall_clock_days"])


def _keep(store: Any, outcome: PlanOutcome) -> None:
    try:
        store.record_outcome(outcome, actor=identity.actor())
    except (StoreError, ValueError) as error:
        st.error(f"The comparison was not kept: {markdown_text(error)}", icon=":material/error:")
        return
    st.success(f"Kept: **{markdown_text(outcome.scenario_name)}** against the actuals of "
               f"{_period(outcome.period_start, outcome.period_end)} ({_error_text(outcome)}).",
               icon=":material/bookmark_added:")


def _error_text(outcome: PlanOutcome) -> str:
    cost = outcome.cost_error
    return (f"GPU-hours {signed(outcome.gpu_hours_error, 'fraction')}"
            + (f", cost {signed(cost, 'fraction')}" if cost is not None else ", cost not compared"))


def _signed_money(value: float | None, currency: str | None) -> str:
    if value is None:
        return f"not compared (bill in {currency or 'no stated currency'})"
    return ("+" if value >= 0 else "-") + usd_sig(abs(value))


def _hours(value: float) -> str:
    return signed(value, "count") + " GPU-h"


def rows(records: list[RecordedOutcome]) -> pd.DataFrame:
    """One row per kept comparison: the plan (its name, as text), the period, plan and actual GPU-hours and money,
    the errors and the three groups, who kept it and when; every number as `dashboard.format` writes it."""
    table = []
    for record in records:
        o = record.outcome
        cost = o.cost_error
        table.append({
            "Plan": o.scenario_name,
            "Period (UTC)": _period(o.period_start, o.period_end),
            "GPU-h planned": count_sig(o.plan_gpu_hours),
            "GPU-h actual": count_sig(o.actual_gpu_hours),
            "GPU-h error": signed(o.gpu_hours_error, "fraction"),
            "Cost planned": usd_sig(o.plan_usd),
            "Cost actual": money(o.actual_usd, o.currency) + ("" if o.cost_known else " (no costs: plan price)"),
            "Cost error": signed(cost, "fraction") if cost is not None else "not compared",
            "Price": _signed_money(o.price_usd, o.currency),
            "Quantity": _hours(o.quantity_gpu_hours) + (f" · {_signed_money(o.quantity_usd, o.currency)}"
                                                          if o.quantity_usd is not None else ""),
            "Efficiency": _hours(o.efficiency_gpu_hours) + (f" · {_signed_money(o.efficiency_usd, o.currency)}"
                                                              if o.efficiency_usd is not None else ""),
            "Not known": ", ".join(o.unknown_parts),
            "Kept": f"{record.recorded_at:%Y-%m-%d %H:%M} UTC by {record.recorded_by}",
        })
    return pd.DataFrame(table)


def summary(where: str, limit: int = DEFAULT_OUTCOMES) -> None:
    """*How good were our plans?*: the sentence over the last ``limit`` comparisons kept, then one row each (in an
    expander). ``where`` ("compare", "retro") keys the table."""
    st.subheader(TITLE)
    try:
        records = scenario_store().outcomes(limit)
    except StoreError as error:
        st.caption(f"The kept comparisons cannot be read: {markdown_text(error)}.")
        return
    acc = accuracy([record.outcome for record in records])
    st.markdown(accuracy_sentence(acc))
    if not records:
        return
    st.caption(f"Over {len(records)} kept comparison{'s' if len(records) != 1 else ''}, each kept from the "
               f"Retrospective's Plan vs actual tab (*{KEEP_LABEL}*).")
    with st.expander(f"The {len(records)} comparison{'s' if len(records) != 1 else ''} kept", expanded=False,
                     icon=":material/fact_check:"):
        st.dataframe(rows(records), hide_index=True, width="stretch", key=f"{where}.plan_outcomes")
        st.caption(f"Error = (actual − plan) / plan; the sentence gives the median and the largest. {GROUPING}")
        _remove(where, records)


def _remove(where: str, records: list[RecordedOutcome]) -> None:
    """Remove a kept comparison: those the signed-in user kept (all of them for an administrator), audited."""
    actor = identity.actor()
    removable = {record.outcome_id: record for record in records if record.outcome_id is not None
                 and actor.may_change(record.recorded_by_issuer, record.recorded_by_subject)}
    if not removable:
        return
    row = st.container(horizontal=True, vertical_alignment="bottom")
    chosen = row.selectbox("Comparison to remove", list(removable), key=f"{where}.remove_outcome_choice",
                           format_func=lambda outcome_id: _label(removable[outcome_id]),
                           help="Those you kept (an administrator: all). The removal is recorded in the audit.")
    if not row.button(REMOVE_LABEL, key=f"{where}.remove_outcome", icon=":material/delete:") or chosen is None:
        return
    try:
        scenario_store().remove_outcome(int(chosen), actor=actor)
    except StoreError as error:
        st.error(f"The comparison was not removed: {markdown_text(error)}", icon=":material/error:")
        return
    st.rerun()


def _label(record: RecordedOutcome) -> str:
    """A kept comparison in a choice (plain text: a selectbox shows its options as text)."""
    o = record.outcome
    return f"{o.scenario_name} · {_period(o.period_start, o.period_end)} · {_error_text(o)}"
