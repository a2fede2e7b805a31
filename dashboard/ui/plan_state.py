"""The Plan page's session state: one scenario object, where it comes from and how edits reach it.

`st.session_state["plan.scenario"]` holds the plan as a `Scenario` (always valid) and `"plan.baseline"` the pinned
baseline (or None). Each rerun, `update` reads the widgets (their state lives in `dashboard.ui.plan_controls`)
into the scenario before any widget is drawn: every control whose value fits is applied, and a control whose
value does not fit is left out and listed in `"plan.invalid"` with the reason, so one bad value never freezes
the others (a programme stage's fields are tried one at a time, `dashboard.ui.programme_controls.read`). Until
the user types a name, the name follows the inputs. Other pages (Compare, Retrospective) read the plan with
`current` and hand the Plan page a scenario with `hand_over` ("open in Plan"); `start` takes it on the next run.
Callbacks here run before the page script, so they may set widget values.
"""

from __future__ import annotations

import datetime
import math
import re
from typing import Any

import streamlit as st

from dashboard import settings
from dashboard.core import catalogue as plan_catalogue
from dashboard.core import provenance, work
from dashboard.core.hardware import CUSTOM, catalogue
from dashboard.core.presets import presets
from dashboard.core.scenario import (
    Scenario,
    ScenarioError,
    default_scenario,
    scenario_from_dict,
    scenario_from_json,
)
from dashboard.core.scenario_query import BASELINE_PREFIX, scenario_from_query, scenario_to_query
from dashboard.core.uncertainty import DEFAULT_DRAWS, DEFAULT_SEED
from dashboard.format import compact
from dashboard.store.names import NAME_PUNCTUATION
from dashboard.ui import plan_controls as controls
from dashboard.ui import plan_tabs, programme_controls

PLAN = "plan.scenario"
HANDED = "plan.handed"  # a Scenario another page hands the Plan page (`hand_over`), taken by `start`
BASELINE = "plan.baseline"
ORIGIN = "plan.origin"  # the scenario as last loaded (default, link, preset, file): names follow edits of it
NAMED = "plan.named"  # the user typed the name: it no longer follows the inputs
SOURCE = "plan.origin_is_source"  # the origin is a saved plan or a file: edits of it read "(edited: …)"
WRITTEN = "plan.names_written"  # the names the page put in the name box, latest last (see `name_typed`)
WRITTEN_MAX = 64
INVALID = "plan.invalid"  # control key → why its value was not applied
UNDO = "plan.undo"  # the plan before the last preset, for its undo button
OFFER_PIN = "plan.offer_pin"  # the plan before a file or "open in Plan", offered as the baseline
NOTICES = "plan.notices"
UPLOAD_ERROR = "plan.upload_error"
PRESET = "plan.preset"
# The inputs measured from a quarter's imports ({key: provenance.Provenance}) and that quarter's first and last day:
# set by the Retrospective's "Plan the next run from this quarter" or read from a link's `measured.` parameters.
MEASURED = "plan.measured"
MEASURED_PERIOD = "plan.measured_period"
MEASURED_HANDED = "plan.measured_handed"  # (measured, period) another page hands over with its scenario
CARRIED = "plan.carried"  # (banner, comparison rows) of the overrun the Retrospective carried into this plan
EDITED = " (edited)"
EDITED_PATTERN = r" \(edited(: .*)?\)$"
NAME_LINK_KEY = "name"


def current() -> Scenario:
    """The plan in this session, for other pages: one handed over and not yet opened, else the Plan page's, else the
    default (before the Plan page has run)."""
    state = st.session_state
    for key in (HANDED, PLAN):
        if (scenario := state.get(key)) is not None:
            return scenario
    return default_scenario()


def hand_over(scenario: Scenario) -> None:
    """Make `scenario` the plan the Plan page opens on its next run (as "Opened …", the previous plan offered as the
    baseline)."""
    st.session_state[HANDED] = scenario


NAME_MAX_CHARS = 120  # the scenario file's and the store's limit
# Inputs the description's head already names ("7B dense, 2T tokens on 512 H100, TST"); every other input that
# differs is named after it.
DESCRIBED_KEYS = frozenset({"name", "total_params", "active_params", "tokens", "gpu_count", "gpu_type", "method"})
SHARE_KEYS = ("reserved_share", "spot_share")
# Short labels for the differences a name lists first (the rest use the catalogue's labels).
NAME_LABELS = {"mfu": "MFU", "price_reserved_per_gpu_hour": "reserved", "price_on_demand_per_gpu_hour": "on-demand",
               "price_spot_per_gpu_hour": "spot"}
# The inputs a difference list names first (what the plan is), then MFU, the prices and the mix, then the rest.
FIRST_KEYS = ("total_params", "active_params", "tokens", "gpu_count", "gpu_type", "method", "programme")
REPLACED_BY_STAGES = frozenset({"experiment_overhead", "eval_overhead"})
# A programme's stages in a name ("+ programme: ladder, ablations, evals").
STAGE_WORDS = {"data_preparation": "data prep", "scaling_ladder": "ladder", "ablations": "ablations",
               "mid_training": "mid-training", "long_context": "long context", "evaluation": "evals"}
# Characters a store name cannot hold (dashboard.store.names), as words.
NAME_SAFE = str.maketrans({";": ",", "$": "USD ", "/": " or ", "×": "x", "·": ",", "≤": "", "≥": "", "→": "", "₀": ""})
NOT_IN_NAMES = re.compile(r"[^\w " + re.escape(NAME_PUNCTUATION) + r"]")  # anything else the store refuses
EDITED_BASE_CHARS = 70  # an edited plan's name keeps this much of its origin's: room is left for what was edited
REL_TOL = 1e-9  # a value a widget round trip moved less than this is the same (0.15 and 0.15000000000000002)


def _head(scenario: Scenario) -> str:
    size = compact(scenario.total_params)
    shape = "dense" if scenario.active_params is None else f"MoE ({compact(scenario.active)} active)"
    method = ", TST" if scenario.method == "tst" else ""
    return f"{size} {shape}, {compact(scenario.tokens)} tokens on {scenario.gpu_count:,} {_gpu(scenario)}{method}"


def _gpu(scenario: Scenario) -> str:
    gpu = "custom GPUs" if scenario.gpu_type == CUSTOM else catalogue()[scenario.gpu_type].label.split(" (")[0]
    return gpu.removesuffix(" SXM").removeprefix("AMD ")


def _usd(value: float) -> str:
    return f"{value:,.2f} USD".replace(".00 USD", " USD")


def _mfu_name(value: float | None) -> str:
    """ "MFU 35 %", or "MFU predicted" when the layout predicts it (the key unset)."""
    return "MFU predicted" if value is None else f"MFU {100 * value:.3g} %"


def _programme_name(stages: Any) -> str:
    """ "+ programme: ladder, ablations, evals", or "no programme"."""
    if not stages:
        return "no programme"
    return "+ programme: " + ", ".join(dict.fromkeys(STAGE_WORDS.get(stage.kind, stage.kind) for stage in stages))


# Inputs whose name reads better as a phrase than as "label value".
PHRASES: dict[str, Any] = {
    "attention": lambda value: f"attention {value}",
    "activation_recompute": lambda value: "no recompute" if value == "none" else f"{value} recompute",
    "programme": _programme_name,
    "method": lambda value: f"method {'TST' if value == 'tst' else value}",
    "gpu_count": lambda value: f"{value:,} GPUs",
    "tokens": lambda value: f"{compact(value)} tokens",
    "total_params": lambda value: f"size {compact(value)}",
    "active_params": lambda value: "dense" if value is None else f"{compact(value)} active",
    "precision": lambda value: f"{value.upper()} linear layers",
}


def _short_label(label: str) -> str:
    """A catalogue label in a name: its acronym when it has one ("Tensor parallel (TP)" -> "TP"), else the label
    without its parenthesis, lower case unless its first word is a name ("Checkpoint interval" -> "checkpoint
    interval", "ZeRO stage" stays)."""
    acronym = re.search(r"\(([A-Z0-9-]{2,})\)$", label)
    if acronym:
        return acronym.group(1)
    label = re.sub(r"\s*\([^)]*\)", "", label).strip()
    first_word = label.split(" ")[0]
    return label[:1].lower() + label[1:] if first_word[1:].islower() else label


def _phrase(key: str, scenario: Scenario) -> str:
    value = getattr(scenario, key)
    if key in PHRASES:
        return PHRASES[key](value)
    if key == "gpu_type":
        return _gpu(scenario)
    entry = plan_catalogue.INPUTS[key]
    if isinstance(value, bool):
        return f"{_short_label(entry.label)} {'on' if value else 'off'}"
    text = entry.text(value)
    if text.startswith("$"):
        text = f"{text[1:]} USD"
    return f"{_short_label(entry.label)} {text}"


def _same(old: Any, new: Any) -> bool:
    """Equal, floats within `REL_TOL` (nested in lists and dicts too)."""
    if isinstance(old, float) and isinstance(new, float):
        return math.isclose(old, new, rel_tol=REL_TOL)
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_same(old[key], new[key]) for key in old)
    if isinstance(old, list | tuple) and isinstance(new, list | tuple):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new, strict=True))
    return bool(old == new)


def name_differences(reference: Scenario, scenario: Scenario, skip: frozenset[str] = frozenset({"name"})) -> list[str]:
    """The inputs of `scenario` that differ from `reference`, in short words a store name may hold: size, tokens,
    GPUs, method and programme first, then MFU, the prices and the purchase mix, then the rest in the scenario
    file's order ("method TST", "+ programme: ladder, evals", "MFU 35 %", "MFU predicted", "spot 2.10 USD",
    "mix 50 % reserved, 30 % spot", "attention eager", "full recompute")."""
    old, new = reference.model_dump(), scenario.model_dump()
    changed = [key for key in new if key not in skip and not _same(old[key], new[key])]
    if "programme" in changed:  # a programme preset sets the overheads its stages replace: the stages say it
        changed = [key for key in changed if key not in REPLACED_BY_STAGES]
    parts = [_phrase(key, scenario) for key in FIRST_KEYS if key in changed]
    for key in NAME_LABELS:
        if key in changed:
            value = new[key]
            parts.append(_mfu_name(value) if key == "mfu" else f"{NAME_LABELS[key]} {_usd(value)}")
    if any(key in changed for key in SHARE_KEYS):
        parts.append(f"mix {100 * scenario.reserved_share:.3g} % reserved, {100 * scenario.spot_share:.3g} % spot")
    parts += [_phrase(key, scenario).translate(NAME_SAFE) for key in changed
              if key not in NAME_LABELS and key not in SHARE_KEYS and key not in FIRST_KEYS]
    return [" ".join(NOT_IN_NAMES.sub(" ", part).split()) for part in parts]


def _cut(text: str, limit: int) -> str:
    """`text` within `limit` characters, cut at a word."""
    if len(text) <= limit:
        return text
    return text[:limit + 1].rsplit(" ", 1)[0].rstrip(" ,-–—:(") if " " in text[:limit + 1] else text[:limit]


def _listed(prefix: str, parts: list[str], suffix: str) -> str:
    """`prefix` + the parts joined + `suffix`, within the name limit: the parts that do not fit are counted ("and 2
    more"). Two plans may then share a name: saving one where the other is saved offers "name (2)"."""
    full = f"{prefix}{', '.join(parts)}{suffix}"
    if len(full) <= NAME_MAX_CHARS:
        return full
    shown: list[str] = []
    for part in parts:
        rest = len(parts) - len(shown) - 1
        if len(f"{prefix}{', '.join([*shown, part])} and {rest} more{suffix}") > NAME_MAX_CHARS:
            break
        shown.append(part)
    more = f"{len(parts) - len(shown)} more"
    listed = f"{', '.join(shown)} and {more}" if shown else more
    return _cut(f"{prefix}{listed}{suffix}", NAME_MAX_CHARS)


def describe(scenario: Scenario) -> str:
    """A name that says what the plan is and how it differs from the default: "7B dense, 2T tokens on 512 H100",
    "7B dense, 2T tokens on 512 H100, MFU 35 %, mix 50 % reserved, 30 % spot"."""
    parts = name_differences(default_scenario(), scenario, DESCRIBED_KEYS)
    return _listed(f"{_head(scenario)}, ", parts, "") if parts else _head(scenario)


_KEYS_LONGEST_FIRST = sorted((key for key in plan_catalogue.INPUTS if key not in {"schema", "schema_"}), key=len,
                             reverse=True)
_KEYED_VALUE = re.compile(r"\b(" + "|".join(_KEYS_LONGEST_FIRST) + r") = ([-+]?[0-9][0-9.e+-]*)")
_KEY = re.compile(r"\b(" + "|".join(_KEYS_LONGEST_FIRST) + r")\b")


def _keyed_value(match: re.Match) -> str:
    entry = plan_catalogue.INPUTS[match.group(1)]
    try:
        return f"{entry.label} {entry.text(float(match.group(2)))}"
    except (TypeError, ValueError):
        return f"{entry.label} {match.group(2)}"


def plain_message(message: str) -> str:
    """A validation message in the Plan page's words: scenario keys become their labels and their values are
    written as the page writes them ("active_params = 3.7e+10 exceeds total_params = 2e+10" -> "Active parameters
    (MoE) 37B exceeds Total parameters 20B")."""
    message = _KEYED_VALUE.sub(_keyed_value, message)
    return _KEY.sub(lambda match: plan_catalogue.INPUTS[match.group(1)].label, message)


def _same_inputs(a: Scenario, b: Scenario) -> bool:
    return _same(a.model_dump(exclude={"name"}), b.model_dump(exclude={"name"}))


def follow_name(origin: Scenario, scenario: Scenario, *, source: bool = False) -> str:
    """The name of a plan nobody has named: the origin's name while its inputs are the origin's (a fix that returns
    the plan to them drops the "(edited: …)"); a description of the inputs when the origin's name was one (or is
    the default's, which fits only the default's inputs) unless the origin is a `source` (a saved plan); else the
    origin's name with what differs from it ("Llama 3.1 405B … (edited: MFU 30 %, attention eager)")."""
    default = default_scenario()
    if origin.name == default.name:  # the default's name fits the default's inputs only
        return default.name if _same_inputs(default, scenario) else describe(scenario)
    if _same_inputs(origin, scenario):
        return origin.name
    if not source and origin.name == describe(origin):
        return describe(scenario)
    base = _cut(re.sub(EDITED_PATTERN, "", origin.name), EDITED_BASE_CHARS)
    return _listed(f"{base} (edited: ", name_differences(origin, scenario), ")")


def _load(scenario: Scenario, notice: str, *, offer_pin: bool = False, undo: bool = False,
          source: bool = False) -> None:
    """Make `scenario` the plan and set every widget from it; keep the previous plan for undo or as a baseline."""
    state = st.session_state
    previous = state.get(PLAN)
    state[UNDO] = previous if undo else None
    state[OFFER_PIN] = previous if offer_pin and previous is not None and not _same_inputs(previous, scenario) else None
    controls.load(scenario)
    st.session_state[PLAN] = scenario
    state[ORIGIN] = scenario
    state[SOURCE] = source
    state[NAMED] = False
    state[INVALID] = {}
    state[NOTICES] = [notice]


def start() -> None:
    """Fill the state: from the link on a session's first run, from another page's hand-off, or after a page
    switch (Streamlit drops a page's widget state when another page is shown, so the controls are reloaded)."""
    state = st.session_state
    state.setdefault(controls.DRAWS, DEFAULT_DRAWS)
    state.setdefault(controls.SEED, DEFAULT_SEED)
    handed_measured: tuple[dict[str, provenance.Provenance], tuple[datetime.date, datetime.date] | None] = (
        state.pop(MEASURED_HANDED, None) or ({}, None))
    if PLAN not in state:
        params = {key: st.query_params.get_all(key) for key in st.query_params}
        tab_values = params.pop(plan_tabs.TABS_PARAM, [])
        # A repeated `charts` parameter is refused like any other repeated parameter (the empty value is invalid).
        tab_value = (tab_values[0] if len(tab_values) == 1 else "") if tab_values else None
        tab_warnings = plan_tabs.tabs_from_link(tab_value)
        measured_params = {key: params.pop(key) for key in list(params) if key.startswith(provenance.PREFIX)}
        link = scenario_from_query(params)
        handed: Scenario | None = state.pop(HANDED, None)
        measured_warnings: list[str] = []
        if handed is None:
            state[MEASURED], state[MEASURED_PERIOD], measured_warnings = provenance.from_link(measured_params)
        else:  # a hand-off brings its own measured inputs, or none
            state[MEASURED], state[MEASURED_PERIOD] = handed_measured
        scenario = link.scenario if handed is None else handed
        pinned = any(key.startswith(BASELINE_PREFIX) for key in params)
        refusal = work.plan_refusal(scenario, link.baseline if pinned else None,
                                    settings.limit(settings.RERUN_MAX_ROWS), settings.RERUN_MAX_ROWS)
        if refusal:  # refused before it is priced
            link.warnings.append(f"{'Link' if handed is None else 'Opened plan'}: ignored programme: {refusal}")
            scenario = scenario.model_copy(update={"programme": ()})
        controls.load(scenario)
        st.session_state[PLAN] = scenario
        state[ORIGIN] = scenario
        state[SOURCE] = handed is not None
        state[NAMED] = False
        state[INVALID] = {}
        state[BASELINE] = link.baseline if pinned else state.get(BASELINE)
        state[NOTICES] = link.warnings + tab_warnings + measured_warnings
    elif (opened := state.pop(HANDED, None)) is not None:
        _load(opened, f"Opened “{opened.name}”.", offer_pin=True, source=True)
        state[MEASURED], state[MEASURED_PERIOD] = handed_measured
    elif controls.MOE_TOGGLE not in state:
        controls.load(state[PLAN])
    state.setdefault(BASELINE, None)


def update() -> Scenario:
    """Apply the widgets to the plan (see the module docstring) and return it; call before drawing widgets."""
    state = st.session_state
    plan: Scenario = state[PLAN]
    current = plan.to_json_dict()
    wanted = controls.read(current)
    staged, invalid = programme_controls.read(current)  # each stage field tried on its own
    wanted |= staged
    wanted["name"] = current["name"]
    try:
        scenario = scenario_from_dict(wanted, strict=False)  # sliders give 512.0 for a count
    except ScenarioError:
        data = dict(current)
        for key, value in wanted.items():
            if data[key] == value:
                continue
            trial = {**data, key: value}
            try:
                scenario_from_dict(trial, strict=False)
            except ScenarioError as error:
                invalid[controls.control_of(key)] = plain_message(str(error))
                continue
            data = trial
        scenario = scenario_from_dict(data, strict=False)
    refusal = work.plan_refusal(scenario, state.get(BASELINE), settings.limit(settings.RERUN_MAX_ROWS),
                                settings.RERUN_MAX_ROWS)
    if refusal and scenario.programme != plan.programme:  # refused before it is priced: the last programme stays
        invalid["programme"] = refusal
        scenario = scenario.model_copy(update={"programme": plan.programme})
    typed = (state.get("w.name") or "").strip()
    if state.get(NAMED) and typed:
        name = typed
    else:
        name = follow_name(state[ORIGIN], scenario, source=bool(state.get(SOURCE)))
        state["w.name"] = name
        written = [item for item in state.get(WRITTEN, []) if item != name]
        state[WRITTEN] = [*written, name][-WRITTEN_MAX:]
    if name != scenario.name:
        scenario = scenario.model_copy(update={"name": name})
    if scenario != plan:
        st.session_state[PLAN] = scenario
    state[INVALID] = invalid
    return scenario


def name_typed() -> None:
    """The user edited the name box: a name of their own stops following the inputs; an empty box resumes it.

    A name the page itself wrote there is not the user's: when key presses come fast, the browser sends the box's
    value from a rerun or two ago with the next one, which Streamlit reports as a change of the box (this froze the
    name: "…on 512 H100, 1 % spot" while the page priced 15 % spot)."""
    state = st.session_state
    typed = (state.get("w.name") or "").strip()
    state[NAMED] = bool(typed) and typed not in state.get(WRITTEN, [])


def saved_as(scenario: Scenario) -> None:
    """The plan was saved as `scenario`: it is the plan's source now, so later edits read "(edited: …)"."""
    state = st.session_state
    state[ORIGIN] = scenario
    state[SOURCE] = True
    state[NAMED] = False
    state["w.name"] = scenario.name


def load_preset() -> None:
    state = st.session_state
    choice = state.get(PRESET)
    if choice is None:
        return
    scenario = presets()[choice]
    _load(scenario, f"Loaded preset: {scenario.name}.", undo=True)
    forget_measured()
    state[PRESET] = None


def apply_changes(label: str, changes: dict[str, Any]) -> None:
    """A callback: set some of the plan's keys (a fix from the "Can it run?" panel) and every widget to match,
    with an undo. Keys without a widget reach the plan directly; the name follows the edit as any other."""
    state = st.session_state
    previous: Scenario = state[PLAN]
    try:
        scenario = scenario_from_dict({**previous.to_json_dict(), **changes}, strict=False)
    except ScenarioError as error:
        state[NOTICES] = [f"Not applied: {label}: {error}."]
        return
    controls.load(scenario)
    st.session_state[PLAN] = scenario
    state[UNDO] = previous
    state[OFFER_PIN] = None
    state[NOTICES] = [f"Applied: {label}."]


def undo_preset() -> None:
    previous = st.session_state.get(UNDO)
    if previous is not None:
        _load(previous, f"Back to {previous.name}.")


def load_upload() -> None:
    state = st.session_state
    uploaded = state["plan.upload"]
    if uploaded is None:
        return
    try:
        scenario = scenario_from_json(uploaded.getvalue())
    except ScenarioError as error:
        state[UPLOAD_ERROR] = f"{uploaded.name} was not loaded: {error}. The previous scenario is kept."
        return
    state.pop(UPLOAD_ERROR, None)
    _load(scenario, f"Loaded {uploaded.name}: {scenario.name}.", offer_pin=True, source=True)
    forget_measured()


def forget_measured() -> None:
    """Drop the measured inputs' provenance (another plan was loaded)."""
    st.session_state[MEASURED] = {}
    st.session_state[MEASURED_PERIOD] = None
    st.session_state.pop(CARRIED, None)


def measured_now(scenario: Scenario) -> dict[str, provenance.Provenance]:
    """The measured inputs the plan still holds (an input edited since has lost its provenance)."""
    values = scenario.to_json_dict()
    return {key: item for key, item in (st.session_state.get(MEASURED) or {}).items()
            if provenance.holds(item, values.get(key))}


def pin_baseline() -> None:
    st.session_state[BASELINE] = st.session_state[PLAN]


def pin_previous() -> None:
    state = st.session_state
    state[BASELINE] = state.get(OFFER_PIN)
    state[OFFER_PIN] = None


def unpin_baseline() -> None:
    st.session_state[BASELINE] = None


def dismiss_notices() -> None:
    state = st.session_state
    state[NOTICES] = []
    state[UNDO] = state[OFFER_PIN] = None


def link_of(scenario: Scenario, baseline: Scenario | None, measured: dict[str, provenance.Provenance],
            period) -> dict[str, str]:
    """The Plan page's address parameters: the scenario, the baseline with its name, and the measured inputs."""
    link = {**scenario_to_query(scenario, baseline), **provenance.to_link(measured, period)}
    if baseline is not None:
        link[BASELINE_PREFIX + NAME_LINK_KEY] = baseline.name
    return link


def sync_link(scenario: Scenario, baseline: Scenario | None) -> None:
    """Write the scenario, the baseline, the measured inputs and the open chart tabs into the page address (only
    when they changed)."""
    link = {**link_of(scenario, baseline, measured_now(scenario), st.session_state.get(MEASURED_PERIOD)),
            **plan_tabs.tabs_to_link()}
    if link != st.query_params.to_dict():
        st.query_params.from_dict(link)
