"""The Retrospective's data: the billing and run exports chosen (a bundled sample, an upload, a file handed over by
Import usage, a local path or a workspace dataset), the bundled quarter's parts a bill of the user's own replaces,
and the run's `RetroView` made from them once (bound to the query engine, amortised, joined and filtered).

A refused upload (an unreadable file, an empty or header-only CSV) leaves the view as it was: the side's last import
that was read is used again, and the refusal is said at the top of the page (`Lines.errors`). So does the run without
any file the browser makes when a file is replaced in its uploader (`_left`): an upload removed with its × gives way
to the sample a moment later, and the page says so.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from dashboard import settings
from dashboard.format import money, number
from dashboard.ingest.formats import FORMATS
from dashboard.ingest.schema import ReadOptions
from dashboard.retro.amortise import Amortisation
from dashboard.retro.filters import FilterOptions
from dashboard.retro.view import EXPORT_BUDGET_USD, Filters, RetroView, Rollups, filtered
from dashboard.safe_text import markdown_text
from dashboard.ui import retro_cache as cache
from dashboard.ui import retro_view as view
from dashboard.ui import upload_store, workspace_view
from dashboard.ui.retro_plan import PLAN_CHOICE, PLAN_NONE, REPLACED, SAMPLE_PLAN, chosen_plan, plan_words
from dashboard.ui.retro_report_view import data_line as report_data_line
from dashboard.ui.sources import (
    DEFAULT_ZONE,
    IMPORT_SLOT,
    RETRO_SLOTS,
    SAMPLES,
    SOURCE_LABELS,
    UPLOAD_TYPES,
    Imported,
    choose_local,
    import_once,
    local_path_help,
    sample_names,
    upload_key,
    zone_select,
)
from dashboard.workspace.datasets import Metadata

RUN_SAMPLES = ("slurm_sample.txt", "wandb_sample.csv")
DEFAULT_BILLING = "focus_sample.csv"
NONE = "(none)"
# A bill of the user's own (uploaded, handed over by Import usage, a local path or a workspace dataset) replaces the
# bundled quarter's run export, plan and budget, unless the user keeps them.
OWN_KINDS = ("upload", "handoff", "path", "workspace")  # a bill of the user's own, not a bundled sample
KEEP = {"runs": "retro.keep_runs", "plan": "retro.keep_plan", "budget": "retro.keep_budget"}
KEEP_LABELS = {"runs": "Keep the sample's run export", "plan": "Keep the sample's plan",
               "budget": "Keep the sample's budget"}
OWN_BILL = "retro.own_bill"  # True while the bill is the user's own (set by each run, read by the ticks)
PENDING = "retro.pending"  # "replace" or "restore": applied at the top of the next run, before the widgets
DATES_FOR = "retro.dates_for"  # the export's first and last day when the dates were chosen (other data: all)
BUDGET_DEFAULT = "retro.budget_default"  # the whole export's budget when none is typed (0 once replaced)
# slot -> {"key", "filename"} of an import on the Import usage page, set by its "Open in Retrospective"
HANDOFF = "retro.handoff"
MOVED = "retro.moved"  # slot -> key of a file the user moved to the other slot
UPLOADED = "retro.uploaded"  # prefix -> the name of the file its uploader held in the last run
WENT = "retro.went"  # prefix -> an upload that left its uploader: {"filename", "settled_on", "armed"} (see _left)
READ = "retro.read"  # side -> the last choice whose import was read: {"key", "filename", "import_key", "kind"}
FIGURE_NOTES = re.compile(r"commitment|actual-cost|reservation|savings plan|amorti[sz]", re.IGNORECASE)
Choice = tuple[Any, str | None, Any]  # (key, file name, how to read it), (None, None, None) for none


@dataclass(frozen=True)
class Lines:
    """The page's lines above the tiles, filled as the data are read: the refusals (``errors``, at the top), the
    data line (``summary``), a workspace dataset's size and a run export that misses the bill's days."""

    errors: Any
    summary: Any
    dataset: Any
    overlap: Any


@dataclass
class Chosen:
    """The imports of this run by side ("billing", "runs"; None: none), where each came from as the data line says
    it, the import this page holds itself by side (store slot, key), the Slurm time zone and the "Change data"
    box."""

    imported: dict[str, Imported | None]
    kinds: dict[str, str | None]
    own_slots: dict[str, tuple[str, Hashable] | None]
    zone: str
    box: Any
    choices: dict[str, Choice] = field(default_factory=dict)


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
        key = upload_key(upload, f"retro.{prefix}_upload")
        st.session_state.setdefault(UPLOADED, {})[prefix] = upload.name
        st.session_state.setdefault(WENT, {}).pop(prefix, None)
        return key, upload.name, upload.getvalue
    kept = _left(prefix, sample, replaced)
    if kept is not None:
        return kept
    if handed is not None:
        replaced.caption(f"Replaced by **{markdown_text(handed['filename'])}** from Import usage.")
        st.button("Use the choice above instead", key=f"retro.drop_handoff.{prefix}",
                  on_click=lambda: st.session_state[HANDOFF].pop(prefix, None))
        return ("handoff", handed["key"]), handed["filename"], None
    if sample == NONE:
        return None, None, None
    return ("sample", sample), sample, (SAMPLES / sample).read_bytes


def _left(prefix: str, sample: str, line) -> Choice | None:
    """The choice of a run without an upload right after one with (None: none to keep). The browser replaces a file
    in an uploader in two runs, one without any file then the new file's, and removes one with its × in the first
    alone: that run keeps the view as it was (the side's last import that was read, no sample read and nothing of
    the sample brought back) and a fragment reruns the page ``PLANNER_UPLOAD_SETTLE_MS`` later. The next run that
    still has no upload counts it removed: the sample comes back, and ``line`` says so while it is chosen."""
    state = st.session_state
    uploaded, went = state.setdefault(UPLOADED, {}).pop(prefix, None), state.setdefault(WENT, {})
    back = f"**{markdown_text(sample)}**" if sample != NONE else "no file"
    if uploaded is not None:
        went[prefix] = {"filename": uploaded, "settled_on": None, "armed": False}
        last = state.get(READ, {}).get(prefix)
        if last is not None and upload_store.get(f"retro.{prefix}_data", last["import_key"]) is not None:
            line.caption(f"**{markdown_text(uploaded)}** left the uploader: the view keeps "
                         f"**{markdown_text(last['filename'])}** a moment, in case a new file is replacing it, then "
                         f"goes back to {back}.")
            st.fragment(_settle, run_every=settings.limit(settings.UPLOAD_SETTLE_MS) / 1000)(prefix)
            return last["key"], last["filename"], _held_only
    elif prefix in went and went[prefix]["settled_on"] is None:
        went[prefix]["settled_on"] = sample
    if prefix in went and went[prefix]["settled_on"] == sample:
        line.caption(f"Your upload **{markdown_text(went[prefix]['filename'])}** was removed, so the view is back "
                     f"on {back}.")
    return None


def _settle(prefix: str) -> None:
    """Drawn by a run that kept an upload gone from its uploader: on its first timed run, rerun the page (which then
    finds the uploader still empty, or holding the file that replaced it)."""
    went = st.session_state.get(WENT, {}).get(prefix)
    if went is None or went["settled_on"] is not None:
        return
    if went["armed"]:
        st.rerun(scope="app")
    went["armed"] = True


def _held_only() -> bytes:
    """The reader of an import the store holds: never called (`import_once` returns the held import)."""
    raise RuntimeError("the kept import is no longer held")


def _titles(kind: str) -> str:
    """The titles of the registered formats of this kind, as a Markdown list."""
    return "\n".join(f"- {fmt.title}" for fmt in FORMATS.values() if fmt.kind == kind)


def _move(side: str, key) -> None:
    """Remember that the file in ``side``'s slot is to be used in the other slot."""
    st.session_state.setdefault(MOVED, {})[side] = key


def _sample_value(part: str):
    """What the bundled quarter gives ``part`` when nothing else was chosen."""
    return {"runs": RUN_SAMPLES[0], "plan": SAMPLE_PLAN, "budget": EXPORT_BUDGET_USD}[part]


def _current(part: str):
    state = st.session_state
    if part == "runs":
        return state.get("retro.runs", RUN_SAMPLES[0])
    if part == "plan":
        return state.get(PLAN_CHOICE, SAMPLE_PLAN)
    return state.get("retro.budget", state.get(BUDGET_DEFAULT, EXPORT_BUDGET_USD))


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


def apply_pending() -> None:
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


def budget_words(currency: str | None) -> str:
    """The whole export's budget as the data line names it."""
    budget = _current("budget")
    if not budget:
        return "no budget"
    if budget == EXPORT_BUDGET_USD and BUDGET_DEFAULT not in st.session_state:
        return f"the sample's budget ({money(budget, currency)})"
    return f"budget {money(budget, currency)}"


def data_line(parts: list[tuple[str, str]]) -> str:
    """Markdown: each file with where it came from ("uploaded: **bill.csv** + bundled sample: **runs.txt**"), the
    kinds said once when they are the same."""
    kinds = {kind for kind, _ in parts}
    if len(kinds) == 1:
        (kind,) = kinds
        return f"{kind[0].upper()}{kind[1:]}: " + " + ".join(f"**{markdown_text(name)}**" for _, name in parts)
    text = " + ".join(f"{kind}: **{markdown_text(name)}**" for kind, name in parts)
    return text[0].upper() + text[1:]


def _kind_label(side: str, key: Any) -> str | None:
    """Where a choice's file came from, as the data line says it ("uploaded", "bundled sample", …)."""
    kind = None if key is None else key[0]
    if kind == "handoff":
        handed_source = st.session_state.get(HANDOFF, {}).get(side, {}).get("source")
        return SOURCE_LABELS[handed_source] + " via Import usage" if handed_source else SOURCE_LABELS["handoff"]
    return None if kind is None else SOURCE_LABELS.get(kind, kind)


def _import(side: str, choice: Choice, zone: str, lines: Lines) -> tuple[Imported | None, Choice, str | None]:
    """The import of ``choice`` for ``side``, the choice it came from and where that came from. A file this page
    imports and refuses leaves the side's last import that was read (still held by the store) in its place, and
    says so at the top of the page. That import stays held while another is read, and an import a rerun stops
    leaves it held too: a file replaced in the uploader goes through a run without it (the sample chosen again),
    which the new file's run interrupts and may overlap."""
    key, filename, read = choice
    slot = f"retro.{side}_data"
    import_key = (key, zone) if side == "runs" else key  # only Slurm's local times depend on the zone
    last = st.session_state.setdefault(READ, {}).get(side)
    kept = None
    if last is not None and last["import_key"] != import_key:
        kept = upload_store.get(slot, last["import_key"]), upload_store.held_nbytes(slot, last["import_key"])
    try:
        with lines.errors:
            result = import_once(slot, import_key, filename or "", read, options=ReadOptions(timezone=zone),
                                 release_first=False)
    except BaseException:  # a rerun stopped this run mid-import: the last import that was read stays held
        if last is not None and kept is not None and kept[0] is not None:
            upload_store.put(slot, last["import_key"], kept[0], kept[1])
        raise
    if result is not None:
        st.session_state[READ][side] = {"key": key, "filename": filename, "import_key": import_key,
                                        "kind": _kind_label(side, key)}
        return result, choice, _kind_label(side, key)
    if last is None or kept is None or kept[0] is None:
        return None, choice, _kind_label(side, key)
    upload_store.put(slot, last["import_key"], kept[0], kept[1])
    lines.errors.info(f"**{markdown_text(filename)}** was not loaded, so the view still shows "
                      f"**{markdown_text(last['filename'])}** ({last['kind']}). Choose or upload another "
                      f"{RETRO_SLOTS[side]} under *Change data*.", icon=":material/undo:")
    return kept[0], (last["key"], last["filename"], None), last["kind"]


def choose(lines: Lines) -> Chosen:
    """The "Change data" box (samples, uploads, a large export on this machine, the time zone, the ticks keeping
    the sample's parts) and this run's imports."""
    data_box = st.expander("Change data: samples, uploads, time zone, notes", key="retro.data_open")
    billing_column, runs_column = data_box.columns(2)
    with billing_column:
        billing_samples = sorted((n for n in sample_names() if n not in RUN_SAMPLES),
                                 key=lambda n: n != DEFAULT_BILLING)
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
    keep_box.caption("A bill of your own (uploaded, a file on this machine, a workspace dataset, or opened from "
                     "Import usage) starts without the bundled quarter's run export, plan and budget, so nothing of "
                     "the sample is mixed into your quarter. Tick to keep them:")
    for part, column in zip(KEEP, keep_box.columns(len(KEEP)), strict=True):
        column.checkbox(KEEP_LABELS[part], key=KEEP[part], on_change=_keep, args=(part,))
    if dataset is not None:
        lines.dataset.caption(workspace_view.size_line(dataset))
        billing_choice = workspace_view.dataset_key(dataset), dataset.name, dataset
    elif local is not None:
        billing_choice = local.key, local.filename, local.path

    chosen = Chosen({}, {}, {}, zone, data_box)
    for side, choice in (("billing", billing_choice), ("runs", runs_choice)):
        key, _, read = choice
        chosen.choices[side], chosen.kinds[side], chosen.own_slots[side] = choice, _kind_label(side, key), None
        if key is not None and key[0] == "workspace":
            chosen.imported[side] = workspace_view.open_dataset(f"retro.{side}_data", read)
        elif key is not None and key[0] == "handoff":
            chosen.imported[side] = upload_store.get(IMPORT_SLOT, key[1])
            if chosen.imported[side] is None:
                st.session_state[HANDOFF].pop(side, None)
                st.warning(f"The {side} import handed over from Import usage is no longer held (the server keeps a "
                           "bounded amount of imported data). Import it again there, or choose a file here.")
        elif key is not None:
            held, chosen.choices[side], chosen.kinds[side] = _import(side, choice, zone, lines)
            chosen.imported[side] = held
            if held is not None:
                chosen.own_slots[side] = (f"retro.{side}_data", held.key)  # the key it was imported under
        else:
            chosen.imported[side] = None
    _sort_slots(chosen)
    return chosen


def _sort_slots(chosen: Chosen) -> None:
    """A file in the other kind's slot is not used there: the page says so and offers to move it."""
    imported = chosen.imported
    for side, other in (("billing", "runs"), ("runs", "billing")):
        part = imported[side]
        fmt = FORMATS.get(part.summary.format) if part else None
        if part is None or not fmt or fmt.kind != other:  # a generic file ("either") fits both
            continue
        if st.session_state.get(MOVED, {}).get(side) == part.key:
            imported[other], imported[side] = part, None
            chosen.own_slots[other], chosen.own_slots[side] = chosen.own_slots.get(side), None
            chosen.kinds[other] = chosen.kinds[side]
            continue
        chosen.box.warning(f"**{markdown_text(part.filename)}** is {fmt.noun}, not a {RETRO_SLOTS[side]}: it is not "
                           "used in this slot.", icon=":material/swap_horiz:")
        chosen.box.button(f"Use it as the {RETRO_SLOTS[other]}", key=f"retro.move.{side}",
                          on_click=_move, args=(side, part.key))
        imported[side] = None


def follow_the_bill(chosen: Chosen) -> None:
    """A new bill of the user's own drops the sample's parts, and going back to the bundled quarter brings them
    back: both on a rerun, before any widget is drawn (`apply_pending`)."""
    state, billing = st.session_state, chosen.imported["billing"]
    key = chosen.choices["billing"][0]
    own_bill = key is not None and key[0] in OWN_KINDS
    state[OWN_BILL] = own_bill
    if (own_bill and billing is not None and billing.summary.rows_used
            and state.get(REPLACED, {}).get("key") != billing.key):
        state[PENDING] = ("replace", billing.key)  # a new bill of the user's own: the sample's parts go
        st.rerun()
    if not own_bill and (key is None or key[0] == "sample") and REPLACED in state:
        state[PENDING] = ("restore", None)  # back on the bundled quarter: its parts come back
        st.rerun()


def _filters(bounds: FilterOptions) -> Filters:
    """The sidebar's filters over what the data offer (dates chosen over other data are dropped)."""
    with st.sidebar:
        st.header("Filters")
        start, end = bounds.start, bounds.end
        dates = st.session_state.get("retro.dates")
        other_data = st.session_state.get(DATES_FOR, (start, end)) != (start, end)  # chosen over other data
        if dates and (other_data or not (start and end and start <= dates[0] <= dates[1] <= end)):
            del st.session_state["retro.dates"]
        st.session_state[DATES_FOR] = (start, end)
        if start and end and start < end:
            start, end = st.slider("Dates (UTC)", min_value=start, max_value=end, value=(start, end),
                                   format="YYYY-MM-DD", key="retro.dates", bind="query-params")
        teams = st.multiselect("Teams", bounds.teams, key="retro.teams", bind="query-params",
                               placeholder="All teams")
        projects = st.multiselect("Projects", bounds.projects, key="retro.projects", bind="query-params",
                                  placeholder="All projects")
        pricing = st.multiselect("Pricing", bounds.pricing, key="retro.pricing", bind="query-params",
                                 placeholder="All pricing")
    return Filters(start, end, tuple(teams) or None, tuple(projects) or None, tuple(pricing) or None)


def _rollups(chosen: Chosen) -> Rollups | None:
    """A workspace dataset's rollups when the bill is one and no run export is joined: its rows are the view's
    unless its commitments are spread (what is to be done with them is read from its rollups too)."""
    billing, (key, _, info) = chosen.imported["billing"], chosen.choices["billing"]
    if billing is None or chosen.imported["runs"] is not None or key != billing.key or not isinstance(info, Metadata):
        return None
    return workspace_view.rollups_of(info)


def make_view(chosen: Chosen, lines: Lines) -> RetroView:
    """The run's view: each import bound to the query engine (the page's own moved into it), the bill's
    commitments amortised, the two joined on the sidebar's key, the data line written and the filters drawn."""
    imported = chosen.imported
    for side, slot in chosen.own_slots.items():  # the page's own imports hold their rows in the engine only
        part = imported[side]
        if slot and part is not None:
            imported[side] = cache.moved_to_engine(*slot, part)
    billing, runs = imported["billing"], imported["runs"]
    input_rows = sum(part.summary.rows_used for part in (billing, runs) if part)  # spinners' size
    amortisation = Amortisation()
    billing_usage = runs_usage = None
    own_rollups = _rollups(chosen)
    if billing is not None:
        billing_usage, amortisation = cache.amortised(billing.key, cache.bound("billing", billing.key,
                                                                                billing.usage), input_rows, own_rollups)
    if runs is not None:
        runs_usage = cache.bound("runs", runs.key, runs.usage)
    all_notes = [view.import_note(part.filename, warning)
                 for part in (billing, runs) if part for warning in part.summary.warnings]
    figure_notes = [note for note in all_notes if FIGURE_NOTES.search(note)]
    notes = [note for note in all_notes if note not in figure_notes]
    if amortisation.status == "amortised":
        figure_notes = []  # the amortisation caption beside the tiles says what became of the commitments
    if notes:
        with chosen.box:
            st.markdown("\n".join(f"- {note}" for note in notes))
    join_on = st.sidebar.selectbox("Join billing and runs on", ["run_id", "project"], key="retro.join",
                                   bind="query-params", help="Billing tags (run or project) matched against the "
                                   "run export's run ids (Slurm job names) or projects.")
    if billing is not None and runs is not None and billing_usage is not None and runs_usage is not None:
        overlap = view.overlap_warning((billing.key, "period"), billing_usage, (runs.key, "period"), runs_usage)
        if overlap:
            lines.overlap.warning(overlap, icon=":material/date_range:")
    data_key = (billing and billing.key, runs and runs.key, join_on)
    # the view's rows are the dataset's own (nothing amortised, no run export): its rollups answer for them
    rollups = own_rollups if billing is not None and billing_usage is billing.usage else None
    usage, stats = cache.joined(data_key, billing_usage, runs_usage, join_on, input_rows, rollups)
    currencies = view.bill_currency(data_key, usage, rollups)  # every amount on the page is in the bill's currency
    matched = stats.billing_gpu_hours_matched_share
    zone = chosen.zone
    shown_parts = [(chosen.kinds[side] or "", part.filename) for side, part in imported.items() if part]
    slurm_runs = runs is not None and runs.summary.format == "slurm"
    lines.summary.markdown(
        data_line(shown_parts) + (" · no run export" if runs is None else "")
        + (f" · {number(matched, 'fraction')} matched" if matched is not None else "")
        + f" · {plan_words()} · {budget_words('+'.join(currencies) or None)}"
        + (f" · Slurm times in {markdown_text(zone)}" + (" (assumed)" if zone == DEFAULT_ZONE else "")
           if slurm_runs else "")
        + " · change below" + (f" · {len(notes)} import notes" if notes else ""))
    chosen.box.caption(" · ".join(f"**{markdown_text(p.filename)}**: {p.summary.rows_used:,} rows used of "
                                  f"{p.summary.rows_read:,}" for p in (billing, runs) if p) + ". "
                       + view.match_caption(stats))
    bounds = cache.options(data_key, usage, rollups)
    chosen_filters = _filters(bounds)
    narrowed = any(chosen_filters.as_tuple()[2:]) or (chosen_filters.start, chosen_filters.end) != (
        bounds.start, bounds.end)
    budget_default = st.session_state.get(BUDGET_DEFAULT, EXPORT_BUDGET_USD)
    return RetroView(
        data_key=data_key, usage=usage, shown=filtered(usage, chosen_filters, narrowed), billing=billing_usage,
        runs=runs_usage, bounds=bounds, filters=chosen_filters, join_on=join_on, stats=stats,
        amortisation=amortisation, currencies=currencies, notes=tuple(figure_notes),
        files=tuple(report_data_line(billing, runs, join_on)), runs_file=runs.filename if runs else None,
        run_params=runs.model_params if runs else None,
        plan=chosen_plan(), choices=view.page_choices(join_on, budget_default), budget_default=budget_default,
        input_rows=input_rows, rollups=rollups)
