"""The Plan page's "Programme" group: a programme preset, each stage's own numbers, adding and removing stages, and
the programme's start date.

As the other controls (`dashboard.ui.plan_controls`, whose `load` fills these too), every widget's state lives in
`st.session_state`, in display units: `w.programme.<index>.<field>` for a stage's field and `w.start_date`. A
field's bounds and help are the stage model's own (`dashboard.core.programme.STAGE_TYPES`). `read` applies the
fields one at a time, so a value the validator refuses is left out, with the validator's message, and every other
field still applies. A preset, adding and removing a stage go through the page's `apply` callback
(`plan_state.apply_changes`: the widgets reload from the new plan, with an undo).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, get_args

import streamlit as st

from dashboard.core.programme import KIND_LABELS, PRESETS, STAGE_TYPES, label
from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_dict
from dashboard.safe_text import markdown_text

GROUP_TITLE = "Programme"
PREFIX = "w.programme."
START_DATE = "w.start_date"
PRESET = "plan.programme.preset"
ADD = "plan.programme.add"
PERSIST: Final = "session"  # as in plan_controls: a closed group keeps its values
FIRST_DATE = dt.date(2000, 1, 1)  # the date box's range, widened to hold a date a file or link brought
LAST_DATE = dt.date(2100, 12, 31)
# Inference stages run on the main run's GPUs' count of hours: a GPU count per run means nothing there.
NO_GPU_COUNT = frozenset({"data_preparation", "evaluation"})
Apply = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class FieldSpec:
    label: str  # with its unit
    scale: float = 1.0  # the stage's value = box value × scale (0.01: the box shows percent)
    step: float | None = None
    placeholder: str = ""  # an empty box (the field unset) means this

    def to_widget(self, value: Any, integer: bool) -> Any:
        if value is None:
            return None
        shown = value / self.scale if self.scale >= 1 else value * round(1 / self.scale)
        return int(round(shown)) if integer else float(shown)

    def to_stage(self, shown: Any, integer: bool) -> Any:
        if shown is None:
            return None
        value = shown * self.scale if self.scale >= 1 else shown / round(1 / self.scale)
        return int(round(value)) if integer else float(value)


FIELDS = {
    "processed_multiple": FieldSpec("Tokens read (× the main run's training tokens)", step=0.5),
    "scorer_params": FieldSpec("Scoring model (millions of parameters)", 1e6, step=10.0),
    "scored_share": FieldSpec("Tokens scored (% of those read)", 0.01, step=10.0),
    "runs": FieldSpec("Runs", step=1),
    "top_compute_fraction": FieldSpec("Largest rung (× the main run's compute)", step=0.001),
    "span_decades": FieldSpec("Span (decades of compute)", step=0.5),
    "compute_fraction": FieldSpec("Compute per run (× the main run's)", step=0.001),
    "tokens_per_param": FieldSpec("Tokens per parameter", step=1.0),
    "token_fraction": FieldSpec("Tokens (× the main run's)", step=0.01),
    "seq_len": FieldSpec("Sequence length (tokens)", step=1024, placeholder="the main run's"),
    "context_parallel": FieldSpec("Context parallel (CP degree)", step=1),
    "every_nth_checkpoint": FieldSpec("Evaluate every n-th checkpoint", step=1),
    "benchmark_tokens": FieldSpec("Tokens per evaluation (millions)", 1e6, step=10.0),
    "inference_mfu": FieldSpec("Inference MFU (%)", 0.01, step=1.0),
    "repeat_allowance": FieldSpec("Repeats (% of the stage's GPU-hours)", 0.01, step=5.0),
    "gpu_count": FieldSpec("GPUs per run", step=8, placeholder="the main run's, up to what the batch can use"),
}
LABEL_OF_KIND = {("scaling_ladder", "runs"): "Model sizes (runs)"}


def fields(kind: str) -> tuple[str, ...]:
    """The fields a stage of `kind` shows, in `FIELDS` order (its own numbers first, then repeats and GPUs)."""
    own = STAGE_TYPES[kind].model_fields
    return tuple(name for name in FIELDS if name in own and not (name == "gpu_count" and kind in NO_GPU_COUNT))


def widget_key(index: int, field: str) -> str:
    return f"{PREFIX}{index}.{field}"


def field_label(kind: str, field: str) -> str:
    return LABEL_OF_KIND.get((kind, field), FIELDS[field].label)


def _integer(kind: str, field: str) -> bool:
    annotation = STAGE_TYPES[kind].model_fields[field].annotation
    return annotation is int or int in get_args(annotation)


def bounds(kind: str, field: str) -> tuple[float | None, float | None]:
    """The field's lower and upper bounds from the stage model (a strict bound `gt` is given as its value: the
    validator refuses it with its message)."""
    found: dict[str, float] = {}
    for meta in STAGE_TYPES[kind].model_fields[field].metadata:
        found |= {attr: value for attr in ("ge", "gt", "le", "lt") if (value := getattr(meta, attr, None)) is not None}
    return found.get("ge", found.get("gt")), found.get("le", found.get("lt"))


def widget_values(scenario: Scenario) -> dict[str, Any]:
    """Session-state values of the stage fields and the start date, in display units, from a scenario."""
    values: dict[str, Any] = {}
    for index, stage in enumerate(scenario.programme):
        for field in fields(stage.kind):
            values[widget_key(index, field)] = FIELDS[field].to_widget(getattr(stage, field),
                                                                       _integer(stage.kind, field))
    values[START_DATE] = None if scenario.start_date is None else dt.date.fromisoformat(scenario.start_date)
    return values


def clear() -> None:
    """Forget every stage field's widget state (before loading a plan: a removed stage's boxes must not come back)."""
    state = st.session_state
    for key in [key for key in state if str(key).startswith(PREFIX)]:
        del state[key]


def read(base: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The `programme` and `start_date` the widgets describe over `base` (the plan's dict), and the fields whose
    value was not applied (widget key → the validator's message). A field still showing the plan's value keeps it
    exactly; each changed field is tried on its own, with the plan's other keys."""
    state = st.session_state
    stages = [dict(stage) for stage in base["programme"]]
    invalid: dict[str, str] = {}
    for index in range(len(stages)):
        kind = stages[index]["kind"]
        for field in fields(kind):
            key, integer = widget_key(index, field), _integer(kind, field)
            spec = FIELDS[field]
            if key not in state or state[key] == spec.to_widget(stages[index][field], integer):
                continue
            trial = [*stages[:index], {**stages[index], field: spec.to_stage(state[key], integer)}, *stages[index + 1:]]
            try:
                scenario_from_dict({**base, "programme": trial}, strict=False)
            except ScenarioError as error:
                invalid[key] = str(error)
                continue
            stages = trial
    start = state.get(START_DATE, base["start_date"])
    start_date = start.isoformat() if isinstance(start, dt.date) else start
    return {"programme": stages, "start_date": start_date}, invalid


def labels(scenario: Scenario) -> dict[str, str]:
    """Widget key → "Stage 1 (Scaling ladder): Runs", for the page's "not applied" line."""
    named = {"programme": "Programme stages", "start_date": "Programme start date"}
    for index, stage in enumerate(scenario.programme):
        for field in fields(stage.kind):
            named[widget_key(index, field)] = f"Stage {index + 1} ({label(stage)}): {field_label(stage.kind, field)}"
    return named


def _stages(scenario: Scenario) -> list[dict[str, Any]]:
    return [stage.model_dump() for stage in scenario.programme]


def _apply_preset(apply: Apply) -> None:
    state = st.session_state
    choice = state.get(PRESET)
    state[PRESET] = None
    if choice is not None:
        apply(f"programme preset “{choice}”", PRESETS[choice])


def _add(apply: Apply, scenario: Scenario) -> None:
    state = st.session_state
    kind = state.get(ADD)
    state[ADD] = None
    if kind is not None:
        apply(f"add the stage {KIND_LABELS[kind]}", {"programme": [*_stages(scenario), {"kind": kind}]})


def _remove(apply: Apply, scenario: Scenario, index: int) -> None:
    stages = _stages(scenario)
    del stages[index]
    apply(f"remove stage {index + 1} ({label(scenario.programme[index])})", {"programme": stages})


def _not_applied(message: str) -> None:
    st.caption(f":red[:material/error: Not applied: {markdown_text(message)}.]")


def _field(index: int, kind: str, field: str) -> None:
    """One stage field's number box: bounds from the model, widened to hold the value shown; empty when unset
    (the placeholder says what that means)."""
    state = st.session_state
    spec, integer = FIELDS[field], _integer(kind, field)

    def number(bound: float | None) -> Any:  # an int or a float box as the field is: no overload can tell which
        return None if bound is None else (int(bound) if integer else float(bound))

    key = widget_key(index, field)
    value = state.get(key)
    low, high = (None if bound is None else spec.to_widget(bound, integer) for bound in bounds(kind, field))
    if value is not None:
        low = value if low is None else min(low, value)
        high = value if high is None else max(high, value)
    st.number_input(field_label(kind, field), min_value=number(low), max_value=number(high), step=number(spec.step),
                    format="%d" if integer else "%g",
                    key=key, help=STAGE_TYPES[kind].model_fields[field].description,
                    placeholder=spec.placeholder or None, value=None if spec.placeholder else "min",
                    persist_state=PERSIST)


def render_group(scenario: Scenario, invalid: dict[str, str], apply: Apply) -> None:
    """The sidebar's "Programme" group, drawn only while shown (values persist when hidden): the preset, one box
    per stage with its fields and a remove button, the stage picker and the start date. A field not applied says
    why under it."""
    st.markdown(f"**{GROUP_TITLE}**")
    st.selectbox("Programme preset", list(PRESETS), index=None, key=PRESET, on_change=_apply_preset,
                 args=(apply,), placeholder="Choose a programme…",
                 help="Sets the stages, and the experiment and evaluation shares they replace, with an undo.")
    if not scenario.programme:
        st.caption("No stages: the main run alone, other experiments as a share of it (Project group).")
    for index, stage in enumerate(scenario.programme):
        with st.container(border=True, key=f"plan-programme-stage-{index}"):
            head = st.container(horizontal=True, vertical_alignment="center")
            head.markdown(f"**{index + 1}. {markdown_text(label(stage))}**")
            head.button("Remove", key=f"plan.programme.remove.{index}", icon=":material/delete:",
                        on_click=_remove, args=(apply, scenario, index),
                        help="Removes this stage from the programme, with an undo.")
            for field in fields(stage.kind):
                _field(index, stage.kind, field)
                if widget_key(index, field) in invalid:
                    _not_applied(invalid[widget_key(index, field)])
    st.selectbox("Add a stage", tuple(STAGE_TYPES), index=None, key=ADD, on_change=_add, args=(apply, scenario),
                 format_func=KIND_LABELS.__getitem__, placeholder="Choose a kind of stage…",
                 help="Appends a stage with its assumed defaults; the calendar orders stages by kind.")
    if "programme" in invalid:
        _not_applied(invalid["programme"])
    shown = st.session_state.get(START_DATE)
    st.date_input("Programme start date (optional)", key=START_DATE, value=None, format="YYYY-MM-DD",
                  min_value=min(FIRST_DATE, shown or FIRST_DATE), max_value=max(LAST_DATE, shown or LAST_DATE),
                  help=Scenario.model_fields["start_date"].description, persist_state=PERSIST)
    if "start_date" in invalid:
        _not_applied(invalid["start_date"])
