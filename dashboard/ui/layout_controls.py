"""The Plan page's "Layout and memory" controls and the model-shape controls: scenario keys with an "auto".

Like `dashboard.ui.plan_controls` (which calls `widget_values` and `read` from its `load` and `read`), every
widget's state lives in `st.session_state` under `w.<key>` in display units. A key the planner may leave unset
(TP, PP, ZeRO stage, global batch, unique tokens, memory reserve, the model's shape) is an empty number box,
or "auto" in a choice, and reaches the scenario as None. Each control's help is the scenario key's own
description (`dashboard.core.scenario`), so it names where its default comes from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

import streamlit as st

from dashboard.core.scenario import Scenario
from dashboard.safe_text import markdown_text

AUTO = "auto"  # the choice that leaves a key unset (None) in a select control
PERSIST: Final = "session"  # as in plan_controls: a closed group keeps its values
GROUP_TITLE = "Layout and memory"
Kind = Literal["number", "select"]


@dataclass(frozen=True)
class LayoutControl:
    key: str  # scenario key
    label: str  # with its unit
    kind: Kind
    scale: float = 1.0  # scenario value = box value × scale
    low: float = 1
    high: float = 1_000_000
    step: float = 1
    integer: bool = True
    optional: bool = False  # an empty box (or "auto") leaves the key unset: the planner's or the model's default
    auto: str = ""  # what an empty box means, shown in it
    options: tuple[Any, ...] = ()
    labels: tuple[str, ...] = ()  # one per option

    @property
    def widget(self) -> str:
        return f"w.{self.key}"

    def help(self) -> str:
        """The scenario key's description (what "unset" means and where the default comes from)."""
        described = Scenario.model_fields[self.key].description or ""
        if self.optional:
            return f"An empty box leaves it unset. {described}"
        return f"“{self.format(AUTO)}” leaves it unset. {described}" if AUTO in self.options else described

    def to_widget(self, value: Any) -> Any:
        if self.kind == "select":
            return AUTO if value is None else value
        if value is None:
            return None
        shown = value / self.scale
        return int(round(shown)) if self.integer else float(shown)

    def to_scenario(self, shown: Any) -> Any:
        if self.kind == "select":
            return None if shown == AUTO else shown
        if shown is None:
            return None
        value = shown * self.scale
        return int(round(value)) if self.integer else float(value)

    def format(self, option: Any) -> str:
        return self.labels[self.options.index(option)] if option in self.options else str(option)


def _number(key: str, label: str, auto: str = "", **kwargs: Any) -> LayoutControl:
    return LayoutControl(key, label, "number", optional=bool(auto), auto=auto, **kwargs)


ZERO_LABELS = ("auto (the planner's)", "0: nothing sharded", "1: optimizer sharded", "2: + gradients",
               "3: + weights (FSDP)")
CONTROLS: tuple[LayoutControl, ...] = (
    _number("seq_len", "Sequence length (tokens)", high=10_000_000, step=1024),
    LayoutControl("attention", "Attention kernel", "select", options=("flash", "eager"),
                  labels=("Fused (FlashAttention)", "Eager (scores kept)")),
    LayoutControl("activation_recompute", "Activation recomputation", "select",
                  options=("none", "selective", "full"),
                  labels=("None", "Selective (attention)", "Full (+33 % compute)")),
    _number("tensor_parallel", "Tensor parallel (TP)", "auto", high=1024),
    _number("pipeline_parallel", "Pipeline parallel (PP stages)", "auto", high=1024),
    _number("virtual_pipeline_stages", "Virtual stages per pipeline stage (interleaved 1F1B)", high=64),
    _number("context_parallel", "Context parallel (CP)", high=1024),
    _number("expert_parallel", "Expert parallel (EP)", high=4096),
    LayoutControl("zero_stage", "ZeRO stage", "select", options=(AUTO, 0, 1, 2, 3), labels=ZERO_LABELS),
    _number("micro_batch_size", "Micro-batch (sequences per GPU)", high=100_000),
    _number("global_batch_tokens", "Global batch (million tokens per step)", "auto: the batch law", scale=1e6,
            low=0.001, high=1e6, step=1.0, integer=False),
    _number("unique_tokens", "Unique tokens available (billions)", "unlimited", scale=1e9, low=0.001,
            high=1e7, step=100.0, integer=False),
    _number("memory_reserve_gb", "Memory reserve (GB per GPU)", "auto: the default", low=0.0, high=100_000,
            step=1.0, integer=False),
)
# The model's shape: empty boxes follow the parameter count (the shape table of `dashboard.core.shape`).
SHAPE_CONTROLS: tuple[LayoutControl, ...] = (
    _number("n_layers", "Layers", "from the size", high=1000),
    _number("d_model", "Hidden size (d_model)", "from the size", high=1_000_000, step=256),
    _number("n_heads", "Attention heads", "from the size", high=100_000),
    _number("n_kv_heads", "Key-value heads (GQA)", "from the size", high=100_000),
    _number("ffn_hidden_size", "FFN hidden size", "from the size", high=10_000_000, step=256),
    LayoutControl("ffn_type", "FFN kind", "select", options=(AUTO, "gated", "plain"),
                  labels=("from the size", "Gated (SwiGLU, 3 matrices)", "Plain (GeLU, 2 matrices)")),
    _number("vocab_size", "Vocabulary (tokens)", "from the size", high=10_000_000, step=1024),
)


def all_controls() -> tuple[LayoutControl, ...]:
    return CONTROLS + SHAPE_CONTROLS


def labels() -> dict[str, str]:
    """Scenario key → control label, for the page's "not applied" line."""
    return {control.key: control.label for control in all_controls()}


def widget_values(scenario: Scenario) -> dict[str, Any]:
    """Session-state values of these controls, in display units, from a scenario."""
    data = scenario.to_json_dict()
    return {control.widget: control.to_widget(data[control.key]) for control in all_controls()}


def read(base: dict[str, Any]) -> dict[str, Any]:
    """The scenario keys these controls set. A control still showing the value of `base` (or not in the state yet)
    keeps that value exactly: 16,777,216 tokens shown as 16.777216 million do not come back as 16,777,216.000000002."""
    state = st.session_state
    data = {}
    for control in all_controls():
        value = base[control.key]
        if control.widget in state and state[control.widget] != control.to_widget(value):
            value = control.to_scenario(state[control.widget])
        data[control.key] = value
    return data


def _placeholder(control: LayoutControl, assumed: dict[str, Any]) -> str:
    value = assumed.get(control.key)
    if value is None:
        return control.auto
    return f"{value:,} ({control.auto})" if isinstance(value, int) else f"{value} ({control.auto})"


def render(control: LayoutControl, invalid: dict[str, str], assumed: dict[str, Any] | None = None) -> None:
    """One control; an optional number is an empty box when unset, its placeholder saying what that means."""
    state = st.session_state
    assumed = assumed or {}
    if control.kind == "select":
        options = control.options if state.get(control.widget) in control.options else (
            *control.options, state.get(control.widget))

        def shown(option: Any) -> str:  # "from the size: gated" when the size gives the key
            text = control.format(option)
            return f"{text}: {assumed[control.key]}" if option == AUTO and control.key in assumed else text

        st.selectbox(control.label, options, key=control.widget, help=control.help(), format_func=shown,
                     persist_state=PERSIST)
    else:
        value = state.get(control.widget)
        number: Callable[[float], Any] = int if control.integer else float  # int or float box: overloads cannot tell
        low = number(control.low if value is None else min(control.low, value))
        high = number(control.high if value is None else max(control.high, value))
        st.number_input(control.label, min_value=low, max_value=high, step=number(control.step),
                        format="%d" if control.integer else "%g", key=control.widget, help=control.help(),
                        placeholder=_placeholder(control, assumed),
                        value=None if control.optional else "min", persist_state=PERSIST)
    if control.key in invalid:
        st.caption(f":red[:material/error: Not applied: {markdown_text(invalid[control.key])}.]")


def render_group(invalid: dict[str, str] | None = None) -> None:
    """The sidebar's "Layout and memory" group, drawn only while shown (values persist when hidden)."""
    st.markdown(f"**{GROUP_TITLE}**")
    for control in CONTROLS:
        render(control, invalid or {})
    st.caption("Empty boxes and “auto” are left to the planner; the panel “Can it run?” shows what it chose.")


def render_shape(invalid: dict[str, str], assumed: dict[str, Any]) -> None:
    """The model-shape boxes (inside the panel's expander); empty ones follow the size, shown in grey."""
    left, right = st.columns(2)
    for position, control in enumerate(SHAPE_CONTROLS):
        with left if position % 2 == 0 else right:
            render(control, invalid, assumed)
