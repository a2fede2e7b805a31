"""Retrospective page: where last quarter's GPU-hours and dollars went, what was waste, why the plan was missed."""

import re

import streamlit as st

from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario, ScenarioError, default_scenario, scenario_from_json
from dashboard.format import number
from dashboard.ingest.formats import FORMATS
from dashboard.ingest.schema import ReadOptions
from dashboard.safe_text import markdown_text
from dashboard.ui import link_check, plan_state, upload_store, workspace_view
from dashboard.ui import retro_cache as cache
from dashboard.ui import retro_view as view
from dashboard.ui.sources import (
    IMPORT_SLOT,
    RETRO_SLOTS,
    SAMPLES,
    UPLOAD_TYPES,
    choose_local,
    import_once,
    local_path_help,
    sample_names,
)

RUN_SAMPLES = ("slurm_sample.txt", "wandb_sample.csv")
DEFAULT_BILLING = "focus_sample.csv"
NONE = "(none)"
ZONES = ["UTC", "America/Los_Angeles", "America/New_York", "Europe/London", "Europe/Berlin", "Asia/Shanghai",
         "Asia/Singapore", "Asia/Tokyo"]
PLAN_PAGE = "Scenario on the Plan page"
PLAN_UPLOAD = "Upload a scenario JSON"
SAMPLE_PLAN = next(name for name in presets() if name.startswith("Sample organisation"))
# slot -> {"key", "filename"} of an import on the Import usage page, set by its "Open in Retrospective"
HANDOFF = "retro.handoff"
MOVED = "retro.moved"  # slot -> key of a file the user moved to the other slot
PLAN_CHOICE = "retro.plan_choice"  # the plan picked, kept while the Plan vs actual tab is closed
TAB_NAMES = ["Spend", "Attribution", "Plan vs actual", "Waste", "Load profile", "Purchase mix", "Unit costs"]
SLOW = "Computing the {} view…"  # shown only when a tab takes more than half a second (`cache.busy`)
FIGURE_NOTES = re.compile(r"commitment|actual-cost|reservation|savings plan|amorti[sz]", re.IGNORECASE)


def _plan_page_scenario() -> Scenario:
    """The Plan page's scenario as an object: the one it holds, else the text it hands other pages, else the
    default (before the Plan page has run)."""
    state = st.session_state
    if isinstance(state.get(plan_state.PLAN), Scenario):
        return state[plan_state.PLAN]
    text = state.get(plan_state.SCENARIO)
    return default_scenario() if text is None else Scenario.model_validate_json(text)


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


link_values = link_check.given("retro.")  # the link's values, before the widgets below read them
st.title("Retrospective")
link_note = st.empty()
st.caption("Last quarter from its billing export and, optionally, its job or run export: where the GPU-hours "
           "and dollars went, what was waste, and why actual differed from plan. Starts on the bundled sample "
           "quarter; every chart follows the filters in the sidebar.")

summary_line = st.empty()
dataset_line = st.empty()
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
    zone = st.selectbox("Time zone of Slurm times", ZONES, key="retro.zone",
                        help="sacct prints the cluster's local time without an offset; the samples use UTC.")

if dataset is not None:
    dataset_line.caption(workspace_view.size_line(dataset))
    billing_choice = workspace_view.dataset_key(dataset), dataset.name, dataset
elif local is not None:
    billing_choice = local.key, local.filename, local.path

options = ReadOptions(timezone=zone)
imported = {}
for side, (key, filename, read) in (("billing", billing_choice), ("runs", runs_choice)):
    import_key = (key, zone) if side == "runs" else key  # only Slurm's local times depend on the zone
    if key is not None and key[0] == "workspace":
        imported[side] = workspace_view.open_dataset(f"retro.{side}_data", read)
    elif key is not None and key[0] == "handoff":
        imported[side] = upload_store.get(IMPORT_SLOT, key[1])
        if imported[side] is None:
            st.session_state[HANDOFF].pop(side, None)
            st.warning(f"The {side} import handed over from Import usage is no longer held (the server keeps a "
                       "bounded amount of imported data). Import it again there, or choose a file here.")
    else:
        imported[side] = None if key is None else import_once(f"retro.{side}_data", import_key, filename, read,
                                                              options=options)
for side, other in (("billing", "runs"), ("runs", "billing")):
    part = imported[side]
    fmt = part and FORMATS.get(part.summary["format"])
    if not fmt or fmt.kind != other:  # a generic file ("either") fits both
        continue
    if st.session_state.get(MOVED, {}).get(side) == part.key:
        imported[other], imported[side] = part, None
        continue
    data_box.warning(f"**{markdown_text(part.filename)}** is {fmt.noun}, not a {RETRO_SLOTS[side]}: it is not used "
                     "in this slot.", icon=":material/swap_horiz:")
    data_box.button(f"Use it as the {RETRO_SLOTS[other]}", key=f"retro.move.{side}",
                    on_click=_move, args=(side, part.key))
    imported[side] = None
billing, runs = imported["billing"], imported["runs"]
if billing is None and runs is None:
    summary_line.info("Choose or upload a billing export or a run export to begin (open “Change data”).")
    link_check.say_ignored(link_note, link_values, "retro.")
    st.stop()
cache.require_engine()
amortisation = {"status": "none", "label": ""}
billing_usage = None
if billing is not None:
    billing_usage, amortisation = cache.amortised(billing.key, billing.usage)
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
if billing is not None and runs is not None and (cache.queried(billing_usage) or cache.queried(runs.usage)):
    queried_part = billing if cache.queried(billing_usage) else runs
    data_box.warning(f"**{markdown_text(runs.filename)}** is not joined: the join with a run export needs the billing "
                     f"and run rows in memory, and **{markdown_text(queried_part.filename)}** is queried where it "
                     f"lies. The figures are the billing export's alone; to join them, {view.needs_rows()}",
                     icon=":material/link_off:")
    runs = None
data_key = (billing and billing.key, runs and runs.key, join_on)
usage, stats = cache.joined(data_key, billing_usage, runs and runs.usage, join_on)
currencies = view.bill_currency(data_key, usage)  # every amount on the page is in the bill's currency
currency = view.currency_of(currencies)
matched = stats["billing_gpu_hours_matched_share"]
summary_line.markdown(" + ".join(f"**{markdown_text(p.filename)}**" for p in (billing, runs) if p)
                      + (f" · {number(matched, 'fraction')} matched" if matched is not None else "")
                      + " · change below" + (f" · {len(notes)} import notes" if notes else ""))
data_box.caption(" · ".join(f"**{markdown_text(p.filename)}**: {p.summary['rows_used']:,} rows used of "
                            f"{p.summary['rows_read']:,}" for p in (billing, runs) if p) + ". "
                 + view.match_caption(stats))

bounds = cache.options(data_key, usage)
with st.sidebar:
    st.header("Filters")
    start, end = bounds["start"], bounds["end"]
    chosen = st.session_state.get("retro.dates")
    if chosen and not (start and end and start <= chosen[0] <= chosen[1] <= end):  # another export's dates
        del st.session_state["retro.dates"]
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
shown = cache.filtered(view_key, usage, *filters) if narrowed else usage
dates_narrowed = (start, end) != (bounds["start"], bounds["end"])
budget_view = view.budget_view(teams, projects, pricing, (start, end) if dates_narrowed else None)
mixed = view.mixed_currency_error(currencies)
if mixed:
    st.error(mixed, icon=":material/currency_exchange:")
with cache.busy("Adding up the view…", shown):
    view.tiles(view_key, shown, stats, amortisation, figure_notes, currency)
    shown_rows = cache.row_count(view_key, shown)
if not shown_rows:
    link_check.say_ignored(link_note, link_values, "retro.")
    if narrowed:
        st.warning("No rows match these filters. Widen the date range or clear a filter in the sidebar.")
    else:
        st.warning(view.no_rows_message(billing, runs, NONE))
    st.stop()

tabs = st.tabs(TAB_NAMES, key="retro.view", bind="query-params")
plan_choices = [PLAN_PAGE, *presets(), PLAN_UPLOAD]
with tabs[0], cache.busy(SLOW.format(TAB_NAMES[0]), shown):
    if tabs[0].open:
        quarter_end, data_end = cache.periods(data_key, usage)
        if dates_narrowed and quarter_end and data_end:
            quarter_end, data_end = min(quarter_end, end), min(data_end, end)  # the chosen dates are the period
        view.spend_section(view_key, shown, budget_view, (quarter_end, data_end), currency)
with tabs[1], cache.busy(SLOW.format(TAB_NAMES[1]), shown):
    if tabs[1].open:
        view.attribution_section(view_key, shown, currency)
with tabs[2], cache.busy(SLOW.format(TAB_NAMES[2]), shown):
    if tabs[2].open:
        st.session_state["retro.plan"] = st.session_state.get(PLAN_CHOICE, SAMPLE_PLAN)
        plan_choice = st.selectbox("Plan to compare with", plan_choices, key="retro.plan", on_change=_remember_plan,
                                   help="The Plan page's current scenario, a preset, or a scenario file. Opens "
                                   "on the bundled quarter's own plan and keeps your choice after an upload.")
        plan: Scenario | None = _plan_page_scenario()
        if plan_choice == PLAN_UPLOAD:
            uploaded = st.file_uploader("Scenario JSON", type=["json"], key="retro.plan_upload")
            try:
                plan = scenario_from_json(uploaded.getvalue()) if uploaded else None
            except ScenarioError as error:
                st.error(f"{markdown_text(uploaded.name)} was not loaded: {markdown_text(error)}.")
                plan = None
        elif plan_choice != PLAN_PAGE:
            plan = presets()[plan_choice]
        if plan is not None:
            view.gap_section(view_key, shown, plan, plan.name, join_on, view.unmatched_tokens(runs, shown, join_on),
                             currency)
        else:
            st.info("Upload a scenario JSON (the Plan page's download) to compare with.")
with tabs[3], cache.busy(SLOW.format(TAB_NAMES[3]), shown):
    if tabs[3].open:
        view.waste_section(view_key, shown, currency)
billing_key = billing and (billing.key, filters)
with tabs[4], cache.busy(SLOW.format(TAB_NAMES[4]), shown):
    if tabs[4].open:
        view.load_section(view_key, shown, billing and (cache.filtered(billing_key, billing_usage, *filters)
                                                        if narrowed else billing_usage))
with tabs[5], cache.busy(SLOW.format(TAB_NAMES[5]), shown):
    if tabs[5].open and billing is not None:
        view.mix_section(billing_key, cache.filtered(billing_key, billing_usage, *filters) if narrowed
                         else billing_usage, currency)
    elif tabs[5].open:
        st.info("Pricing tiers come from a billing export: choose or upload one above.")
with tabs[6], cache.busy(SLOW.format(TAB_NAMES[6]), shown):
    if tabs[6].open:
        choice = st.session_state.get(PLAN_CHOICE, SAMPLE_PLAN)  # MFU needs the model of the plan compared with
        plan = presets()[choice] if choice in presets() else _plan_page_scenario()
        view.units_section(view_key, shown, plan, view.unmatched_tokens(runs, shown, join_on), currency)

workspace_view.download_button(shown, shown_rows)
link_check.say_ignored(link_note, link_values, "retro.")
