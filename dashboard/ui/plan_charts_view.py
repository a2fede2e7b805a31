"""The Plan page's charts: two columns, each a chart switcher (`plan_tabs`), the what-ifs beside the TST and storage
charts, the save-for-comparison (with overwrite or "save as … (2)" in place) and copy-link buttons, and the layout
for narrow windows."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import pandas as pd
import streamlit as st

from dashboard import settings
from dashboard.core import catalogue, work
from dashboard.core.engine import PlanResult
from dashboard.core.scenario import Scenario
from dashboard.core.sweeps import retention_keeps, retention_what_ifs
from dashboard.figures import throughput, uncertainty
from dashboard.figures.plan_charts import PROGRAMME_CHARTS
from dashboard.format import number, signed
from dashboard.safe_text import markdown_text
from dashboard.store.errors import NameTakenError, StoreError
from dashboard.ui import compare_state, identity, plan_state
from dashboard.ui.cache import SCENARIO_HASH, chart, plan_result, range_chart, step_chart
from dashboard.ui.plan_controls import CONTROLS, DRAWS, PERSIST, SEED
from dashboard.ui.plan_tabs import CHART_TABS, PROGRAMME_TAB, TAB_KEYS, TAB_LABELS
from dashboard.ui.store_access import scenario_store

TST_WHAT_IF_KEYS = ("tst_speedup", "tst_token_multiplier", "tst_pilot_fraction")
RETENTION_KEYS = {
    "keep_last_checkpoints": ("Hot checkpoints kept", 1, 100_000, 1, "%d"),
    "weight_archives": ("Weight archives over the run", 0, 100_000, 1, "%d"),
    "archive_every_nth": ("Full checkpoints archived: every n-th (0 = never)", 0, 100_000, 1, "%d"),
    "storage_retention_months": ("Kept after training (months)", 0.0, 1200.0, 1.0, "%.1f"),
}
SAVE_MESSAGE = "plan.save_message"
SAVE_CONFLICT = "plan.save_conflict"  # a name already saved: overwrite it, or save as "name (2)"
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
    value = state[f"plan.what_if.{key}"]
    plan_state.hand_over(state[plan_state.PLAN].model_copy(
        update={key: float(value) if key == "storage_retention_months" else int(value)}))


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=SCENARIO_HASH)
def _retention_effects(scenario: Scenario) -> pd.DataFrame:
    return retention_what_ifs(scenario)


def _retention_what_if(scenario: Scenario, result: PlanResult) -> None:
    """Retention settings beside the storage chart, and what each nearby change would do to the total."""
    state = st.session_state
    row = st.container(horizontal=True)
    for key, (label, low, high, step, fmt) in RETENTION_KEYS.items():
        what_if = f"plan.what_if.{key}"
        value = getattr(scenario, key)
        state[what_if] = value
        row.number_input(label, min_value=low, max_value=max(high, value), step=step, format=fmt, key=what_if,
                         on_change=_set_retention, args=(key,))
    effects = _retention_effects(scenario)
    kept = (f"{number(result['storage_retention_usd'], '$')} of it for keeping "
            f"{number(result['storage_retained_gb'], 'GB')} {retention_keeps(scenario, result['wall_clock_days'] * 24)}"
            if scenario.storage_retention_months else "nothing kept after training")
    st.caption(markdown_text(  # literal: two "$" would start maths
        f"Storage {number(result['storage_cost_usd'], '$')}: {kept}. Weight archives hold the weights only (no "
        "optimizer state). What a change would do to the total, and what each change keeps:"
    ))
    st.dataframe(
        {"what if": list(effects["what_if"]),
         "what it keeps": list(effects["keeps"]),
         "total cost": [signed(delta, "$") for delta in effects["delta_total_usd"]]},
        hide_index=True, width="stretch", key="plan.what_if.retention_effects",
    )


def charts(scenario: Scenario) -> None:
    """Two columns, each a switcher over its charts (`plan_tabs`) and the chosen chart alone: only it is computed and
    sent, and not one whose predicted work would take the rerun past the session's budget (`dashboard.core.work`: it
    says why instead). A switcher, not `st.tabs`: every tab is an element the browser redraws on each rerun."""
    state = st.session_state
    with st.container(key="plan-charts"):
        shown = []
        for column, names, key, label in zip(st.columns(2), CHART_TABS, TAB_KEYS, TAB_LABELS, strict=True):
            if state.get(key) not in names:  # a new session, or a link's choice (`plan_tabs.tabs_from_link`)
                state[key] = names[0]
            with column:
                st.segmented_control(label, names, required=True, key=key, label_visibility="collapsed",
                                     persist_state=PERSIST, width="stretch")
                shown.append((column, state[key]))
        refused = work.refused_charts(scenario, state.get(plan_state.BASELINE),
                                      bool(plan_result(scenario)["feasible"]), [name for _, name in shown],
                                      settings.limit(settings.RERUN_MAX_ROWS), settings.RERUN_MAX_ROWS)
        for column, name in shown:
            with column:
                if name in refused:
                    st.info(markdown_text(refused[name]), icon=":material/block:")
                else:
                    _chart(name, scenario)


def _programme(scenario: Scenario) -> None:
    """The Programme tab: where its money and GPU-hours go, its timeline, and a row per stage with its note."""
    for title in PROGRAMME_CHARTS:
        st.plotly_chart(chart(scenario, title), width="stretch", key=f"plan.chart.{title}")
    stages = plan_result(scenario)["programme"]["stages"]
    st.dataframe(
        {"stage": [stage["label"] for stage in stages],
         "cost (USD)": [number(stage["cost_usd"], "$") for stage in stages],
         "GPU-hours": [number(stage["gpu_hours"], "count") for stage in stages],
         "calendar": [number(stage["calendar_days"], "days") for stage in stages],
         "from day": [number(stage["start_day"], "") for stage in stages],
         "what it is": [stage["note"] for stage in stages]},
        hide_index=True, width="stretch", key="plan.programme.stages",
    )


def _chart(name: str, scenario: Scenario) -> None:
    if name == PROGRAMME_TAB:
        _programme(scenario)
        return
    if name in uncertainty.CHARTS:
        draws, seed = st.session_state[DRAWS], int(st.session_state[SEED])
        figure = range_chart(scenario, name, draws, seed)
        st.caption(f"{draws:,} draws, seed {seed}, over the ranges in the sidebar's *Uncertainty ranges* group. "
                   "Fewer draws redraw faster while you explore; use 100,000 for the numbers you present.")
    elif name == throughput.TITLE:
        figure = step_chart(scenario)
    else:
        figure = chart(scenario, name)
    st.plotly_chart(figure, width="stretch", key=f"plan.chart.{name}")
    if name == throughput.TITLE:
        _step_caption(plan_result(scenario))
    elif name == "TST vs baseline":
        _tst_what_if(scenario)
    elif name == "Storage growth":
        _retention_what_if(scenario, plan_result(scenario))


def _step_caption(result: PlanResult) -> None:
    """Under "Where the step goes": how far to trust it (predicted ± band, inside the validated region or not) and
    how to read the curve."""
    rates = result["throughput"]
    region = ("inside the step-time model's validated region" if rates["validated"] else
              f"outside the validated region: {'; '.join(rates['region_notes'])} — see {throughput.VALIDATION_DOC}")
    st.caption(markdown_text(  # literal: the region notes are text, and "×" or "*" would turn into emphasis
        "Predicted by the step-time model, its MFU within "
        f"± {catalogue.text('throughput.mfu_error', rates['mfu_error'])} of the prediction on measured runs left out "
        "of its fit; "
        f"{region}. Below, the plan priced again at other GPU counts (every other "
        "input as it is): GPU-seconds per step stay level while adding GPUs pays and rise where traffic, the bubble "
        f"or idle GPUs eat the gain; the batch allows {result['max_useful_gpus']:,.0f} busy GPUs."))


def next_free_name(name: str, taken: list[str] | set[str]) -> str:
    """ "Name (2)", or the next number free in the store ("Name (3)" when "(2)" is taken; "Name (2)" itself moves
    on to "Name (3)"), within the name limit."""
    folded = {existing.casefold() for existing in taken}
    match = re.fullmatch(r"(.*) \((\d+)\)", name)
    base, number_ = (match.group(1), int(match.group(2)) + 1) if match else (name, 2)
    while True:
        suffix = f" ({number_})"
        candidate = f"{base[:plan_state.NAME_MAX_CHARS - len(suffix)]}{suffix}"
        if candidate.casefold() not in folded:
            return candidate
        number_ += 1


def _saved(state: Any, name: str) -> None:
    """After a save: pick the scenario on Compare and say so."""
    chosen = [picked for picked in state.get(compare_state.SELECTED, []) if picked != name]
    state[compare_state.SELECTED] = [*chosen, name][-4:]
    state.pop(SAVE_CONFLICT, None)
    state[SAVE_MESSAGE] = ("success", f"Saved “{name}” for comparison: the Compare page shows it.")


def _save(name: str, *, overwrite: bool) -> bool:
    """Save the Plan's scenario under `name`; on a store error, say why. True when it was saved."""
    state = st.session_state
    scenario: Scenario = state[plan_state.PLAN]
    if name != scenario.name:
        scenario = scenario.model_copy(update={"name": name})
    try:
        scenario_store().save(name, scenario, overwrite=overwrite, actor=identity.actor())
    except NameTakenError:
        state[SAVE_CONFLICT] = name  # offered in place: overwrite it, or save as "name (2)"
        return False
    except StoreError as error:
        state[SAVE_MESSAGE] = ("error", f"Not saved: {error}.")
        return False
    _saved(state, name)
    plan_state.saved_as(scenario)
    return True


def save_for_comparison() -> None:
    """Save the Plan's scenario under its name in the store the Compare page reads, and pick it there; a name that
    is already saved is offered for overwriting, or for saving as "name (2)", right under the button."""
    state = st.session_state
    state.pop(SAVE_CONFLICT, None)
    _save(state[plan_state.PLAN].name, overwrite=False)


def overwrite_saved() -> None:
    """Replace the saved scenario of the same name with this plan."""
    name = st.session_state.get(SAVE_CONFLICT)
    if name:
        _save(name, overwrite=True)


def save_as_next() -> None:
    """Save this plan as "name (2)" (the next free number) and name the plan so."""
    state = st.session_state
    name = state.get(SAVE_CONFLICT)
    if not name:
        return
    try:
        new = next_free_name(name, scenario_store().names())
    except StoreError as error:
        state[SAVE_MESSAGE] = ("error", f"Not saved: {error}.")
        return
    _save(new, overwrite=False)  # the plan is now known by the name it was saved under


def cancel_save() -> None:
    st.session_state.pop(SAVE_CONFLICT, None)


def _save_conflict(scenario: Scenario) -> None:
    """The choice a taken name leaves: overwrite it, or save as the next free "name (n)"."""
    state = st.session_state
    name = state.get(SAVE_CONFLICT)
    if name is None:
        return
    if name != scenario.name:
        state.pop(SAVE_CONFLICT)  # the plan was renamed since: the question no longer applies
        return
    try:
        new = next_free_name(name, scenario_store().names())
    except StoreError as error:
        st.error(markdown_text(f"Not saved: {error}."))
        return
    with st.container(key="plan-save-conflict"):
        st.warning(markdown_text(f"A scenario named “{name}” is already saved. Overwrite it with this plan, or save "
                                 f"this plan as “{new}”?"), icon=":material/warning:")
        row = st.container(horizontal=True)
        row.button(f"Overwrite “{name}”", on_click=overwrite_saved, key="plan.save_overwrite",
                   icon=":material/save_as:")
        row.button(f"Save as “{new}”", on_click=save_as_next, key="plan.save_as", icon=":material/library_add:")
        row.button("Cancel", on_click=cancel_save, key="plan.save_cancel")


COPY_BUTTON_HTML = """
<div class="plan-copy-link">
  <button type="button" class="plan-copy-link-button"
    title="Copies the address of this exact view: every setting, the baseline and the open charts">Copy link</button>
  <span class="plan-copy-link-note" role="status" aria-live="polite"></span>
</div>
<style>
.plan-copy-link { display: flex; align-items: center; gap: 0.5rem; }
.plan-copy-link-button {
  font: inherit; font-size: 1rem; line-height: 1.6; padding: 0.25rem 0.75rem; min-height: 2.5rem;
  border: 1px solid rgba(49, 51, 63, 0.2); border-radius: 0.5rem; background: transparent; color: inherit;
  cursor: pointer;
}
.plan-copy-link-button:hover, .plan-copy-link-button:focus-visible { border-color: #ff4b4b; color: #ff4b4b; }
.plan-copy-link-note { font-size: 0.875rem; opacity: 0.75; }
</style>
<script>
(() => {
  const copied = "Copied: the address of this exact view";
  const blocked = "Not copied: the browser blocked the clipboard. Use Show link and copy the address there.";
  const fallback = (text) => {
    const box = document.createElement("textarea");
    box.value = text;
    box.setAttribute("readonly", "");
    box.style.position = "fixed";
    box.style.opacity = "0";
    document.body.appendChild(box);
    box.select();
    let done = false;
    try { done = document.execCommand("copy"); } catch (error) { done = false; }
    box.remove();
    return done;
  };
  for (const button of document.querySelectorAll(".plan-copy-link-button")) {
    const note = button.parentElement.querySelector(".plan-copy-link-note");
    button.onclick = async () => {
      const address = window.location.href;
      let done = false;
      try {
        await navigator.clipboard.writeText(address);
        done = true;
      } catch (error) {
        done = fallback(address);
      }
      note.textContent = done ? copied : blocked;
      clearTimeout(button.copiedTimer);
      button.copiedTimer = setTimeout(() => { note.textContent = ""; }, 6000);
    };
  }
})();
</script>
"""


def share_buttons(link: dict[str, str], scenario: Scenario | None = None) -> None:
    """"Save for comparison", "Copy link" (a visible button that copies the page address, with every setting and
    the open tabs, and says "Copied") and "Show link" (the same address in a box)."""
    row = st.container(horizontal=True, vertical_alignment="center")
    row.button("Save for comparison", on_click=save_for_comparison, icon=":material/bookmark_add:",
               key="plan.save_for_comparison",
               help="Saves this scenario under its name in the scenario store; compare it on the Compare page.")
    row.html(COPY_BUTTON_HTML, width="content", unsafe_allow_javascript=True)
    # Filled only while open (a rerun opens it): two fewer messages and renders on every other rerun.
    show_link = row.popover("Show link", icon=":material/link:", key=COPY_LINK, on_change="rerun")
    if show_link.open:
        page = urlsplit(st.context.url or "")
        address = urlunsplit((page.scheme, page.netloc, page.path or "/", urlencode(link), ""))
        show_link.caption("The address of this exact view (every setting, the baseline and the open charts).")
        show_link.code(address, language=None, wrap_lines=True)
    if scenario is not None:
        _save_conflict(scenario)
    message = st.session_state.pop(SAVE_MESSAGE, None)
    if message:
        kind, text = message
        (st.success if kind == "success" else st.error)(markdown_text(text))
