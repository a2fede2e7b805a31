"""The Compare page's actions on the scenario store: save, import, rename, duplicate, delete, open in Plan.

Each action is a widget callback: it runs before the page script, does one store transaction and leaves a
one-line message (`MESSAGE`) for the page to show. Store and validation errors become that message; nothing
is half-done, because every store operation is one transaction.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import streamlit as st

from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario, ScenarioError
from dashboard.core.scenario_bundle import read_bundle
from dashboard.format import counted
from dashboard.report.html import DEFAULT_APP_URL
from dashboard.store.errors import StoreError
from dashboard.ui import identity, plan_controls, plan_state
from dashboard.ui.store_access import scenario_store

MESSAGE = "compare.message"
SELECTED = "compare.selected"
SAVE_NAME = "compare.save_name"
OVERWRITE = "compare.overwrite"
UPLOAD = "compare.upload"
UPLOAD_ROUND = "compare.upload_round"
MANAGED = "compare.managed"
NEW_NAME = "compare.new_name"
GO_TO_PLAN = "compare.go_to_plan"
PRESENTATION = "compare.presentation"
MISSING = "compare.missing"  # names a shared link asked for that the store lacks
NAME_CHARS = 120
# The Plan page's live scenario and pinned baseline as options; "▸" is not allowed in a saved name, so these never
# clash with one.
PLAN_OPTION = "▸ Plan page's scenario"
BASELINE_OPTION = "▸ Plan page's baseline"


def pinned_baseline() -> Scenario | None:
    """The Plan page's pinned baseline, None when none is pinned."""
    baseline: Scenario | None = st.session_state.get(plan_state.BASELINE)
    return baseline


def plan_options() -> dict[str, Scenario]:
    """The Plan page's pinned baseline (when there is one) and its scenario, in that order: deltas read against
    the baseline, as on the Plan page."""
    baseline = pinned_baseline()
    plan = {PLAN_OPTION: _named(plan_scenario(), "Plan")}
    return plan if baseline is None else {BASELINE_OPTION: _named(baseline, "Baseline"), **plan}


def _named(scenario: Scenario, role: str) -> Scenario:
    """The scenario named after its role on the Plan page, so the two live options never share a name."""
    return scenario.model_copy(update={"name": f"{role}: {scenario.name}"[:NAME_CHARS]})


def start_selection(options: list[str]) -> None:
    """Default to the Plan page's baseline and scenario (with no baseline pinned, the scenario and the first saved
    one) unless the link or the session chose; drop names that vanished. The names a shared link asks for that
    this store lacks are kept in `MISSING` for `missing_note`."""
    state = st.session_state
    if SELECTED not in state:
        if SELECTED not in st.query_params:
            state[SELECTED] = options[:2]
        else:
            state[MISSING] = [name for name in st.query_params.get_all(SELECTED) if name not in options]
        return
    kept = [name for name in state[SELECTED] if name in options]
    if kept != list(state[SELECTED]):
        state[SELECTED] = kept


def missing_note(options: list[str]) -> str | None:
    """What a shared link named that this store still lacks, and how to add it; None when nothing is missing."""
    missing = [name for name in st.session_state.get(MISSING, []) if name not in options]
    if not missing:
        return None
    listed = ", ".join(f"“{name}”" for name in missing)
    many = len(missing) > 1
    return (f"The link asks for {listed}, which {'are' if many else 'is'} not in this store. Ask whoever shared "
            f"the link to export {'them' if many else 'it'} (Compare → Saved scenarios → Export as JSON) and import "
            "the file with *Import scenario JSON files* in the sidebar, or to send the Plan link of each "
            f"and save {'them' if many else 'it'} here; then pick {'them' if many else 'it'} above.")


def app_url() -> str:
    """This app's own address (scheme and host), which the report's Plan links start with."""
    parts = urlsplit(st.context.url or "")
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else DEFAULT_APP_URL


def plan_scenario() -> Scenario:
    """The scenario on the Plan page in this session (the default one before the Plan page has run)."""
    return plan_state.current()


def _say(kind: str, text: str) -> None:
    st.session_state[MESSAGE] = (kind, text)


def _select(*names: str) -> None:
    """Add names to the comparison (first four kept)."""
    chosen = [n for n in st.session_state.get(SELECTED, []) if n not in names]
    st.session_state[SELECTED] = [*chosen, *names][-4:]


def save_plan() -> None:
    state = st.session_state
    scenario = plan_scenario()
    name = (state.get(SAVE_NAME) or "").strip() or scenario.name
    try:
        scenario_store().save(name, scenario, overwrite=bool(state.get(OVERWRITE)), actor=identity.actor())
    except StoreError as error:
        _say("error", f"Not saved: {error}.")
        return
    _select(name)
    _say("success", f"Saved the Plan's scenario as “{name}”.")


def import_files() -> None:
    """Save every scenario in the uploaded files in one transaction, or none if any file or name is bad."""
    state = st.session_state
    files = state.get(f"{UPLOAD}.{state.get(UPLOAD_ROUND, 0)}") or []
    if not files:
        return
    scenarios: list[Scenario] = []
    for uploaded in files:
        try:
            scenarios.extend(read_bundle(uploaded.getvalue()))
        except ScenarioError as error:
            _say("error", f"Nothing imported: {uploaded.name}: {error}.")
            return
    try:
        names = scenario_store().import_scenarios(scenarios, overwrite=bool(state.get(OVERWRITE)),
                                                  actor=identity.actor())
    except StoreError as error:
        _say("error", f"Nothing imported: {error}.")
        return
    state[UPLOAD_ROUND] = state.get(UPLOAD_ROUND, 0) + 1  # a fresh, empty uploader
    _select(*names[:4])
    _say("success", f"Imported {len(names)} scenario{'s' * (len(names) != 1)}: {', '.join(names)}.")


def add_presets() -> None:
    """Save the bundled presets that are not in the store yet."""
    try:
        store = scenario_store()
        taken = set(store.names())
        names = store.import_scenarios([scenario for name, scenario in presets().items() if name not in taken],
                                       actor=identity.actor())
    except StoreError as error:
        _say("error", f"Presets not added: {error}.")
        return
    _select(*names[:2])
    _say("success", f"Added {counted(len(names), 'preset')}." if names else "Every preset is already saved.")


def rename() -> None:
    state = st.session_state
    old, new = state[MANAGED], (state.get(NEW_NAME) or "").strip()
    try:
        scenario_store().rename(old, new, actor=identity.actor())
    except StoreError as error:
        _say("error", f"Not renamed: {error}.")
        return
    state[SELECTED] = [new if n == old else n for n in state.get(SELECTED, [])]
    state[MANAGED] = new
    _say("success", f"Renamed “{old}” to “{new}”.")


def duplicate() -> None:
    state = st.session_state
    name, new = state[MANAGED], (state.get(NEW_NAME) or "").strip()
    try:
        scenario_store().duplicate(name, new, actor=identity.actor())
    except StoreError as error:
        _say("error", f"Not duplicated: {error}.")
        return
    _select(new)
    _say("success", f"Saved a copy of “{name}” as “{new}”.")


def delete() -> None:
    state = st.session_state
    name = state[MANAGED]
    try:
        scenario_store().delete(name, actor=identity.actor())
    except StoreError as error:
        _say("error", f"Not deleted: {error}.")
        return
    state[SELECTED] = [n for n in state.get(SELECTED, []) if n != name]
    state.pop(MANAGED, None)
    _say("success", f"Deleted “{name}”.")


def adopt() -> None:
    """Make the signed-in administrator the owner of the managed scenario (one saved before sign-in existed)."""
    name = st.session_state[MANAGED]
    try:
        scenario_store().adopt(name, actor=identity.actor())
    except StoreError as error:
        _say("error", f"Not adopted: {error}.")
        return
    _say("success", f"“{name}” is now yours.")


def open_in_plan() -> None:
    """Load the managed scenario into the Plan page's controls; the page then switches to Plan."""
    state = st.session_state
    name = state[MANAGED]
    try:
        scenario = scenario_store().load(name)
    except StoreError as error:
        _say("error", f"Not opened: {error}.")
        return
    plan_controls.load(scenario)
    plan_state.hand_over(scenario)
    state[plan_state.NOTICES] = [f"Opened “{name}” from the scenario store."]
    state[GO_TO_PLAN] = True
