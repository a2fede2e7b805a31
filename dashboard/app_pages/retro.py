"""Retrospective page: where last quarter's GPU-hours and dollars went, what was waste, why the plan was missed."""

import re

import streamlit as st

from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_json
from dashboard.format import money, number
from dashboard.ingest.formats import FORMATS
from dashboard.ingest.schema import ReadOptions
from dashboard.safe_text import markdown_text
from dashboard.store.errors import StoreError
from dashboard.ui import calibrate_view, link_check, plan_state, upload_store, workspace_view
from dashboard.ui import plan_outcomes_view as outcomes_view
from dashboard.ui import retro_cache as cache
from dashboard.ui import retro_view as view
from dashboard.ui.retro_report_view import render_download as report_download
from dashboard.ui.sources import (
    DEFAULT_ZONE,
    IMPORT_SLOT,
    RETRO_SLOTS,
    SAMPLES,
    SOURCE_LABELS,
    UPLOAD_TYPES,
    choose_local,
    import_once,
    local_path_help,
    sample_names,
    zone_select,
)
from dashboard.ui.store_access import scenario_store

RUN_SAMPLES = ("slurm_sample.txt", "wandb_sample.csv")
DEFAULT_BILLING = "focus_sample.csv"
NONE = "(none)"
PLAN_NONE = "(none)"
PLAN_PAGE = "Scenario on the Plan page"
PLAN_UPLOAD = "Upload a scenario JSON"
SAVED = "Saved: "  # in front of the names of the scenarios saved in the store (the Compare page's list)
SAMPLE_PLAN = next(name for name in presets() if name.startswith("Sample organisation"))
PLAN_UPLOADED = "retro.plan_uploaded"  # the uploaded scenario file, read once: {"id", "name", "scenario", "error"}
# A bill of the user's own (uploaded, handed over by Import usage, a local path or a workspace dataset) replaces the
# bundled quarter's run export, plan and budget, unless the user keeps them.
OWN_KINDS = ("upload", "handoff", "path", "workspace")  # a bill of the user's own, not a bundled sample
KEEP = {"runs": "retro.keep_runs", "plan": "retro.keep_plan", "budget": "retro.keep_budget"}
KEEP_LABELS = {"runs": "Keep the sample's run export", "plan": "Keep the sample's plan",
               "budget": "Keep the sample's budget"}
OWN_BILL = "retro.own_bill"  # True while the bill is the user's own (set by each run, read by the ticks)
REPLACED = "retro.replaced"  # {"key": the own bill's key, part: the sample's value it replaced}
PENDING = "retro.pending"  # "replace" or "restore": applied at the top of the next run, before the widgets
DATES_FOR = "retro.dates_for"  # the export's first and last day when the dates were chosen (other data: all)
BUDGET_DEFAULT = "retro.budget_default"  # the whole export's budget when none is typed (0 once replaced)
# slot -> {"key", "filename"} of an import on the Import usage page, set by its "Open in Retrospective"
HANDOFF = "retro.handoff"
MOVED = "retro.moved"  # slot -> key of a file the user moved to the other slot
PLAN_CHOICE = "retro.plan_choice"  # the plan picked, kept while the Plan vs actual tab is closed
TAB_NAMES = ["Spend", "Attribution", "Plan vs actual", "Waste", "Load profile", "Purchase mix", "Unit costs"]
SLOW = "Computing the {} view…"  # shown only when a tab takes more than half a second (`cache.busy`)
FIGURE_NOTES = re.compile(r"commitment|actual-cost|reservation|savings plan|amorti[sz]", re.IGNORECASE)


def _plan_page_scenario() -> Scenario:
    """The Plan page's scenario (`plan_state.current`)."""
    return plan_state.current()


def _choose(label: str, samples: list[str], prefix: str, help_text: str):
    """A bundled sample (bound to the URL), an upload that replaces it, a file handed over by the Import usage
    page, and for billing a local path."""
    sample = st.selectbox(label, [*samples, NONE], key=f"retro.{prefix}", bind="query-params", help=help_text)
    replaced = st.empty()
    upload = st.file_uploader(f"…or upload a {label.lower()}", type=UPLOAD_TYPES, key=f"retro.{prefix}_upload")
    handed = st.session_state.get(HANDOFF, {}).get(prefix)
    if upload is not None:
        if sample != NONE:
            replaced.caption(f"Replaced by your upload **{markdown_text(upload.name)}**; remove it to use "
                             f"{sample} again.")
        return ("upload", upload.file_id), upload.name, upload.getvalue
    if handed is not None:
        replaced.caption(f"Replaced by **{markdown_text(handed['filename'])}** from Import usage.")
        st.button("Use the choice above instead", key=f"retro.drop_handoff.{prefix}",
                  on_click=lambda: st.session_state[HANDOFF].pop(prefix, None))
        return ("handoff", handed["key"]), handed["filename"], None
    if sample == NONE:
        return None, None, None
    return ("sample", sample), sample, (SAMPLES / sample).read_bytes


def _titles(kind: str) -> str:
    """The titles of the registered formats of this kind, as a Markdown list."""
    return "\n".join(f"- {fmt.title}" for fmt in FORMATS.values() if fmt.kind == kind)


def _move(side: str, key) -> None:
    """Remember that the file in ``side``'s slot is to be used in the other slot."""
    st.session_state.setdefault(MOVED, {})[side] = key


def _remember_plan() -> None:
    st.session_state[PLAN_CHOICE] = st.session_state["retro.plan"]


def _sample_value(part: str):
    """What the bundled quarter gives ``part`` when nothing else was chosen."""
    return {"runs": RUN_SAMPLES[0], "plan": SAMPLE_PLAN, "budget": view.EXPORT_BUDGET_USD}[part]


def _current(part: str):
    state = st.session_state
    if part == "runs":
        return state.get("retro.runs", RUN_SAMPLES[0])
    if part == "plan":
        return state.get(PLAN_CHOICE, SAMPLE_PLAN)
    return state.get("retro.budget", state.get(BUDGET_DEFAULT, view.EXPORT_BUDGET_USD))


def _drop(part: str) -> None:
    """Set ``part`` to none when it is the sample's, remembering the sample's value in REPLACED."""
    state = st.session_state
    value = _current(part)
    if part == "runs" and value not in RUN_SAMPLES or part != "runs" and value != _sample_value(part):
        return  # the user's own choice stays
    state.setdefault(REPLACED, {})[part] = value
    if part == "runs":
        state["retro.runs"] = NONE
    elif part == "plan":
        state[PLAN_CHOICE] = PLAN_NONE
    else:
        state[BUDGET_DEFAULT] = 0.0
        state["retro.budget"] = 0.0


def _bring_back(part: str) -> None:
    """Give ``part`` the sample's value again when it is still none (the user chose nothing else meanwhile)."""
    state = st.session_state
    replaced = state.get(REPLACED, {})
    if part not in replaced and not state.get(KEEP[part]):
        return
    value = replaced.pop(part, _sample_value(part))
    if part == "runs" and _current("runs") == NONE:
        state["retro.runs"] = value
    elif part == "plan" and _current("plan") == PLAN_NONE:
        state[PLAN_CHOICE] = value
    elif part == "budget":
        state.pop(BUDGET_DEFAULT, None)
        if not _current("budget"):
            state["retro.budget"] = value


def _apply_pending() -> None:
    """Replace the sample's parts for a new bill of the user's own, or bring them back after it went (set by the
    run before, applied before any widget is drawn)."""
    state = st.session_state
    pending = state.pop(PENDING, None)
    if pending is None:
        return
    kind, key = pending
    if kind == "replace":
        state.setdefault(REPLACED, {})["key"] = key
        for part, tick in KEEP.items():
            if not state.get(tick):
                _drop(part)
    else:
        for part in KEEP:
            if part in state.get(REPLACED, {}):
                _bring_back(part)
        state.pop(REPLACED, None)


def _keep(part: str) -> None:
    """A "keep the sample's …" tick changed: beside the user's own bill, bring the sample's part back or drop it."""
    if not st.session_state.get(OWN_BILL):
        return  # read when a bill of the user's own arrives
    if st.session_state[KEEP[part]]:
        _bring_back(part)
    else:
        _drop(part)


def _saved_scenarios() -> tuple[dict[str, Scenario], str | None]:
    """The scenarios saved in the store, as the Compare page lists them (what the store lets this user read),
    by their label here; and a line saying why there are none when the store cannot be used."""
    try:
        entries = scenario_store().entries()
    except StoreError as error:
        return {}, (f"The scenario store cannot be used ({markdown_text(error)}), so its saved scenarios are not "
                    "listed here.")
    return {f"{SAVED}{entry.name}": entry.scenario for entry in entries if entry.scenario is not None}, None


def _uploaded_plan() -> Scenario | None:
    """The scenario file uploaded for the plan (kept in the session, so Unit costs reads it too); None after
    saying why it was not loaded, or before one is uploaded."""
    state = st.session_state
    uploaded = st.file_uploader("Scenario JSON", type=["json"], key="retro.plan_upload")
    held = state.get(PLAN_UPLOADED)
    if uploaded is not None and (held is None or held["id"] != uploaded.file_id):
        try:
            held = {"id": uploaded.file_id, "name": uploaded.name, "scenario": scenario_from_json(uploaded.getvalue()),
                    "error": None}
        except ScenarioError as error:
            held = {"id": uploaded.file_id, "name": uploaded.name, "scenario": None, "error": str(error)}
        state[PLAN_UPLOADED] = held
    if held is None:
        st.info("Upload a scenario JSON (the Plan page's download) to compare with.")
        return None
    if held["error"]:
        st.error(f"{markdown_text(held['name'])} was not loaded: {markdown_text(held['error'])}.")
        return None
    if uploaded is None:
        st.caption(f"Using **{markdown_text(held['name'])}**, uploaded earlier; upload another file to replace it.")
    return held["scenario"]


def _plan_picker() -> tuple[Scenario | None, str]:
    """The one plan Plan vs actual and Unit costs read, with its picker: none, the Plan page's scenario, the
    presets, the scenarios saved in the store, or an uploaded scenario file. The choice is kept in PLAN_CHOICE
    while neither tab is open."""
    state = st.session_state
    saved, problem = _saved_scenarios()
    choices = [PLAN_NONE, PLAN_PAGE, *presets(), *saved, PLAN_UPLOAD]
    chosen = state.get(PLAN_CHOICE, SAMPLE_PLAN)
    gone = chosen not in choices
    state["retro.plan"] = PLAN_NONE if gone else chosen
    choice = st.selectbox("Plan to compare with", choices, key="retro.plan", on_change=_remember_plan,
                          help="One plan for Plan vs actual and Unit costs: the Plan page's current scenario, a "
                          "preset, a scenario saved on the Compare page, or a scenario file. Opens on the bundled "
                          "quarter's own plan; an uploaded bill starts with none.")
    if gone:
        st.caption(f"**{markdown_text(chosen)}** is no longer in the store; choose another plan.")
    if problem:
        st.caption(problem)
    if choice == PLAN_NONE:
        return None, choice
    if choice == PLAN_UPLOAD:
        return _uploaded_plan(), choice
    if choice == PLAN_PAGE:
        return _plan_page_scenario(), choice
    return (presets() | saved)[choice], choice


def _chosen_plan() -> Scenario | None:
    """The plan Plan vs actual and Unit costs read, without drawing the picker (for a reader outside those tabs,
    such as the report): None when none is chosen, or the chosen one cannot be had."""
    state = st.session_state
    choice = state.get(PLAN_CHOICE, SAMPLE_PLAN)
    if choice == PLAN_PAGE:
        return _plan_page_scenario()
    if choice == PLAN_UPLOAD:
        held = state.get(PLAN_UPLOADED)
        return held["scenario"] if held else None
    if choice in presets():
        return presets()[choice]
    return _saved_scenarios()[0].get(choice) if choice.startswith(SAVED) else None


def _no_plan_note() -> str:
    """What the page says while no plan is chosen."""
    dropped = "plan" in st.session_state.get(REPLACED, {})
    return ("No plan chosen" + (" (the sample's plan went with your bill; tick *Keep the sample's plan* under "
                                "*Change data* to use it)" if dropped else "")
            + ": pick the Plan page's scenario, a scenario saved on the Compare page, a preset, or upload a "
            "scenario JSON above.")


def _plan_words() -> str:
    """The plan as the data line names it."""
    choice = st.session_state.get(PLAN_CHOICE, SAMPLE_PLAN)
    if choice == PLAN_NONE:
        return "no plan"
    if choice == SAMPLE_PLAN:
        return "the sample's plan"
    if choice == PLAN_UPLOAD:
        held = st.session_state.get(PLAN_UPLOADED)
        return f"plan uploaded: **{markdown_text(held['name'])}**" if held else "no plan"
    return f"plan: **{markdown_text(choice.removeprefix(SAVED))}**"


def _budget_words(currency: str | None) -> str:
    """The whole export's budget as the data line names it."""
    budget = _current("budget")
    if not budget:
        return "no budget"
    if budget == view.EXPORT_BUDGET_USD and BUDGET_DEFAULT not in st.session_state:
        return f"the sample's budget ({money(budget, currency)})"
    return f"budget {money(budget, currency)}"


def _data_line(parts: list[tuple[str, str]]) -> str:
    """Markdown: each file with where it came from ("uploaded: **bill.csv** + bundled sample: **runs.txt**"), the
    kinds said once when they are the same."""
    kinds = {kind for kind, _ in parts}
    if len(kinds) == 1:
        (kind,) = kinds
        return f"{kind[0].upper()}{kind[1:]}: " + " + ".join(f"**{markdown_text(name)}**" for _, name in parts)
    text = " + ".join(f"{kind}: **{markdown_text(name)}**" for kind, name in parts)
    return text[0].upper() + text[1:]


calibrate_view.switch_if_asked()
_apply_pending()
link_values = link_check.given("retro.")  # the link's values, before the widgets below read them
st.title("Retrospective")
link_note = st.empty()
st.caption("Last quarter from its billing export and, optionally, its job or run export: where the GPU-hours "
           "and dollars went, what was waste, and why actual differed from plan. Starts on the bundled sample "
           "quarter; every chart follows the filters in the sidebar.")

summary_line = st.empty()
dataset_line = st.empty()
overlap_line = st.empty()
data_box = st.expander("Change data: samples, uploads, time zone, notes", key="retro.data_open")
billing_column, runs_column = data_box.columns(2)
with billing_column:
    billing_samples = sorted((n for n in sample_names() if n not in RUN_SAMPLES), key=lambda n: n != DEFAULT_BILLING)
    billing_choice = _choose("Billing export", billing_samples, "billing", _titles("billing"))
    with st.expander("Large export on this machine"):
        typed_path = st.text_input("File or folder of Parquet parts (replaces the choice above)",
                                   key="retro.billing_path", help=local_path_help()).strip()
        local = choose_local(typed_path) if typed_path else None
        workspace_view.import_controls(local, "retro.workspace")
        dataset = workspace_view.choose_dataset()
with runs_column:
    runs_choice = _choose("Run export", list(RUN_SAMPLES), "runs", _titles("runs"))
    zone = zone_select("retro.zone")  # UTC assumed, as on the Import usage page
keep_box = data_box.container()
keep_box.caption("A bill of your own (uploaded, a file on this machine, a workspace dataset, or opened from Import "
                 "usage) starts without "
                 "the bundled quarter's run export, plan and budget, so nothing of the sample is mixed into your "
                 "quarter. Tick to keep them:")
for part, column in zip(KEEP, keep_box.columns(len(KEEP)), strict=True):
    column.checkbox(KEEP_LABELS[part], key=KEEP[part], on_change=_keep, args=(part,))

if dataset is not None:
    dataset_line.caption(workspace_view.size_line(dataset))
    billing_choice = workspace_view.dataset_key(dataset), dataset.name, dataset
elif local is not None:
    billing_choice = local.key, local.filename, local.path

options = ReadOptions(timezone=zone)
imported = {}
own_slots = {}  # side -> (store slot, key) of an import this page made and holds itself
kinds = {}  # side -> where its file came from, as the data line says it
for side, (key, filename, read) in (("billing", billing_choice), ("runs", runs_choice)):
    kinds[side] = None if key is None else key[0]
    if kinds[side] == "handoff":
        handed_source = st.session_state.get(HANDOFF, {}).get(side, {}).get("source")
        kinds[side] = SOURCE_LABELS[handed_source] + " via Import usage" if handed_source else SOURCE_LABELS["handoff"]
    elif kinds[side] is not None:
        kinds[side] = SOURCE_LABELS.get(kinds[side], kinds[side])
    import_key = (key, zone) if side == "runs" else key  # only Slurm's local times depend on the zone
    if key is not None and key[0] == "workspace":
        imported[side] = workspace_view.open_dataset(f"retro.{side}_data", read)
    elif key is not None and key[0] == "handoff":
        imported[side] = upload_store.get(IMPORT_SLOT, key[1])
        if imported[side] is None:
            st.session_state[HANDOFF].pop(side, None)
            st.warning(f"The {side} import handed over from Import usage is no longer held (the server keeps a "
                       "bounded amount of imported data). Import it again there, or choose a file here.")
    elif key is not None:
        imported[side] = import_once(f"retro.{side}_data", import_key, filename, read, options=options)
        own_slots[side] = (f"retro.{side}_data", import_key)
    else:
        imported[side] = None
for side, other in (("billing", "runs"), ("runs", "billing")):
    part = imported[side]
    fmt = part and FORMATS.get(part.summary["format"])
    if not fmt or fmt.kind != other:  # a generic file ("either") fits both
        continue
    if st.session_state.get(MOVED, {}).get(side) == part.key:
        imported[other], imported[side] = part, None
        own_slots[other], own_slots[side] = own_slots.get(side), None
        kinds[other] = kinds[side]
        continue
    data_box.warning(f"**{markdown_text(part.filename)}** is {fmt.noun}, not a {RETRO_SLOTS[side]}: it is not used "
                     "in this slot.", icon=":material/swap_horiz:")
    data_box.button(f"Use it as the {RETRO_SLOTS[other]}", key=f"retro.move.{side}",
                    on_click=_move, args=(side, part.key))
    imported[side] = None
del part  # the page's globals outlive the run: an import is held by the store and `imported` only
billing, runs = imported["billing"], imported["runs"]
own_bill = billing_choice[0] is not None and billing_choice[0][0] in OWN_KINDS
st.session_state[OWN_BILL] = own_bill
if (own_bill and billing is not None and billing.summary.get("rows_used", 1)
        and st.session_state.get(REPLACED, {}).get("key") != billing.key):
    st.session_state[PENDING] = ("replace", billing.key)  # a new bill of the user's own: the sample's parts go
    st.rerun()
if not own_bill and (billing_choice[0] is None or billing_choice[0][0] == "sample") and REPLACED in st.session_state:
    st.session_state[PENDING] = ("restore", None)  # back on the bundled quarter: its parts come back
    st.rerun()
if billing is None and runs is None:
    summary_line.info("Choose or upload a billing export or a run export to begin (open “Change data”).")
    link_check.say_ignored(link_note, link_values, "retro.")
    st.stop()
cache.require_engine()
for side, slot in own_slots.items():  # the page's own imports hold their rows in the engine only
    if slot and imported[side] is not None:
        imported[side] = cache.moved_to_engine(*slot, imported[side])
billing, runs = imported["billing"], imported["runs"]
input_rows = sum(int(part.summary.get("rows_used") or 0) for part in (billing, runs) if part)  # the spinners' size
amortisation = {"status": "none", "label": ""}
billing_usage = runs_usage = None
if billing is not None:
    billing_usage, amortisation = cache.amortised(billing.key, cache.bound("billing", billing.key, billing.usage),
                                                  input_rows)
if runs is not None:
    runs_usage = cache.bound("runs", runs.key, runs.usage)
all_notes = [view.import_note(part.filename, warning)
             for part in (billing, runs) if part for warning in part.summary["warnings"]]
figure_notes = [note for note in all_notes if FIGURE_NOTES.search(note)]
notes = [note for note in all_notes if note not in figure_notes]
if amortisation["status"] == "amortised":
    figure_notes = []  # the amortisation caption beside the tiles says what became of the commitments
if notes:
    with data_box:
        st.markdown("\n".join(f"- {note}" for note in notes))

join_on = st.sidebar.selectbox("Join billing and runs on", ["run_id", "project"], key="retro.join",
                               bind="query-params", help="Billing tags (run or project) matched against the run "
                               "export's run ids (Slurm job names) or projects.")
if billing is not None and runs is not None:
    overlap = view.overlap_warning((billing.key, "period"), billing_usage, (runs.key, "period"), runs_usage)
    if overlap:
        overlap_line.warning(overlap, icon=":material/date_range:")
data_key = (billing and billing.key, runs and runs.key, join_on)
usage, stats = cache.joined(data_key, billing_usage, runs_usage, join_on, input_rows)
currencies = view.bill_currency(data_key, usage)  # every amount on the page is in the bill's currency
currency = view.currency_of(currencies)
matched = stats["billing_gpu_hours_matched_share"]
shown_parts = [(kinds[side], part.filename) for side, part in (("billing", billing), ("runs", runs)) if part]
slurm_runs = runs is not None and runs.summary["format"] == "slurm"
summary_line.markdown(_data_line(shown_parts)
                      + (" · no run export" if runs is None else "")
                      + (f" · {number(matched, 'fraction')} matched" if matched is not None else "")
                      + f" · {_plan_words()} · {_budget_words(currency)}"
                      + (f" · Slurm times in {markdown_text(zone)}" + (" (assumed)" if zone == DEFAULT_ZONE else "")
                         if slurm_runs else "")
                      + " · change below" + (f" · {len(notes)} import notes" if notes else ""))
data_box.caption(" · ".join(f"**{markdown_text(p.filename)}**: {p.summary['rows_used']:,} rows used of "
                            f"{p.summary['rows_read']:,}" for p in (billing, runs) if p) + ". "
                 + view.match_caption(stats))

bounds = cache.options(data_key, usage)
with st.sidebar:
    st.header("Filters")
    start, end = bounds["start"], bounds["end"]
    chosen = st.session_state.get("retro.dates")
    other_data = st.session_state.get(DATES_FOR, (start, end)) != (start, end)  # chosen over other data
    if chosen and (other_data or not (start and end and start <= chosen[0] <= chosen[1] <= end)):
        del st.session_state["retro.dates"]
    st.session_state[DATES_FOR] = (start, end)
    if start and end and start < end:
        start, end = st.slider("Dates (UTC)", min_value=start, max_value=end, value=(start, end), format="YYYY-MM-DD",
                               key="retro.dates", bind="query-params")
    teams = st.multiselect("Teams", bounds["teams"], key="retro.teams", bind="query-params", placeholder="All teams")
    projects = st.multiselect("Projects", bounds["projects"], key="retro.projects", bind="query-params",
                              placeholder="All projects")
    pricing = st.multiselect("Pricing", bounds["pricing"], key="retro.pricing", bind="query-params",
                             placeholder="All pricing")

filters = (start, end, tuple(teams) or None, tuple(projects) or None, tuple(pricing) or None)
narrowed = any(filters[2:]) or (start, end) != (bounds["start"], bounds["end"])
view_key = (data_key, filters)
shown = cache.filtered(usage, *filters) if narrowed else usage
dates_narrowed = (start, end) != (bounds["start"], bounds["end"])
budget_view = view.budget_view(teams, projects, pricing, (start, end) if dates_narrowed else None)
mixed = view.mixed_currency_error(currencies)
if mixed:
    st.error(mixed, icon=":material/currency_exchange:")
with cache.busy("Adding up the view…", input_rows):
    view.tiles(view_key, shown, stats, amortisation, figure_notes, currency)
    shown_rows = cache.row_count(view_key, shown)
if not shown_rows:
    link_check.say_ignored(link_note, link_values, "retro.")
    if narrowed:
        st.warning("No rows match these filters. Widen the date range or clear a filter in the sidebar.")
    else:
        st.warning(view.no_rows_message(billing, runs, NONE))
    st.stop()



def tokens_note() -> str | None:
    return view.unmatched_tokens(runs, runs and runs.key, runs_usage, view_key, shown, join_on)


def _narrowed(side):
    """One side's table (billing or runs) under the sidebar's filters."""
    return side if side is None or not narrowed else cache.filtered(side, *filters)


tabs = st.tabs(TAB_NAMES, key="retro.view", bind="query-params")
with tabs[0], cache.busy(SLOW.format(TAB_NAMES[0]), input_rows):
    if tabs[0].open:
        quarters, data_end = cache.periods(data_key, usage)
        view.spend_section(view_key, shown, budget_view, quarters, data_end, (start, end) if dates_narrowed else None,
                           currency, st.session_state.get(BUDGET_DEFAULT, view.EXPORT_BUDGET_USD))
with tabs[1], cache.busy(SLOW.format(TAB_NAMES[1]), input_rows):
    if tabs[1].open:
        view.attribution_section(view_key, shown, currency)
with tabs[2], cache.busy(SLOW.format(TAB_NAMES[2]), input_rows):
    if tabs[2].open:
        plan, plan_choice = _plan_picker()
        decomposed = None
        if plan is not None:
            decomposed = view.gap_section(view_key, shown, plan, plan.name, join_on, tokens_note(),
                                          currency)
            outcomes_view.record_button(view_key, shown, plan, plan_choice.removeprefix(SAVED)
                                        if plan_choice.startswith(SAVED) else None, join_on, currency, (start, end))
        elif plan_choice == PLAN_NONE:
            st.info(_no_plan_note())
        outcomes_view.summary("retro")
        calibrate_view.section((view_key, "calibration"), _narrowed(billing_usage), _narrowed(runs_usage), plan,
                               join_on, (start, end) if start and end else None, decomposed,
                               runs.model_params if runs is not None else None)
with tabs[3], cache.busy(SLOW.format(TAB_NAMES[3]), input_rows):
    if tabs[3].open:
        view.waste_section(view_key, shown, currency, _chosen_plan())
billing_key = billing and (billing.key, filters)
with tabs[4], cache.busy(SLOW.format(TAB_NAMES[4]), input_rows):
    if tabs[4].open:
        view.load_section(view_key, shown, billing and (cache.filtered(billing_usage, *filters)
                                                        if narrowed else billing_usage))
with tabs[5], cache.busy(SLOW.format(TAB_NAMES[5]), input_rows):
    if tabs[5].open and billing is not None:
        view.mix_section(billing_key, cache.filtered(billing_usage, *filters) if narrowed
                         else billing_usage, currency)
    elif tabs[5].open:
        st.info("Pricing tiers come from a billing export: choose or upload one above.")
with tabs[6], cache.busy(SLOW.format(TAB_NAMES[6]), input_rows):
    if tabs[6].open:
        plan, plan_choice = _plan_picker()  # the plan of Plan vs actual: MFU needs its model
        if plan is None and plan_choice == PLAN_NONE:
            st.caption(_no_plan_note())
        view.units_section(view_key, shown, plan, tokens_note(), currency)

workspace_view.download_button(shown, shown_rows)
report_download(data_key, usage, filters, shown, stats=stats, amortisation=amortisation, notes=figure_notes,
                currency=currency, billing=billing, runs=runs, join_on=join_on,
                plan=_chosen_plan(),
                budget_default=st.session_state.get(BUDGET_DEFAULT, view.EXPORT_BUDGET_USD))
link_check.say_ignored(link_note, link_values, "retro.")
