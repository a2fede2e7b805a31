"""The Plan page's controls: one table of widgets over scenario keys, loaded from and read back into a scenario.

Every widget's state lives in `st.session_state` under `w.<key>` (and `w.<key>.n` for the number box beside a
log-scaled slider), in display units (billions, percent). `load` fills them from a scenario (preset, upload, link);
`read` turns them back into a scenario dict for validation (`load` fills the Programme group's boxes too,
`dashboard.ui.programme_controls`). MFU has a "Predict MFU from the layout" toggle
(`MFU_PREDICTED`): on, the scenario's `mfu` is None (the step-time model's prediction prices the plan) and the
slider, disabled, shows the prediction; off, the slider sets `mfu`, starting from the prediction.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final, Literal

import numpy as np
import streamlit as st

from dashboard.core.engine import peak_tflops_of
from dashboard.core.feasibility import gpu_memory_gb_of
from dashboard.core.hardware import CUSTOM, catalogue
from dashboard.core.references import LLAMA3_405B_FAILURES, TST_RUN
from dashboard.core.scaling import FITS
from dashboard.core.scenario import Scenario
from dashboard.figures.throughput import mfu_line
from dashboard.format import compact
from dashboard.safe_text import markdown_text
from dashboard.ui import layout_controls, programme_controls
from dashboard.ui.cache import plan_result

Kind = Literal["log", "slider", "number", "select", "toggle", "range", "mix"]
MANTISSAS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0)
EXACT_FIGURES = 6
MIX = "purchase_mix"  # the three-part control that sets reserved_share and spot_share (on-demand is the rest)
MIX_KEYS = ("reserved_share", "spot_share")


def log_grid(low: float, high: float) -> tuple[float, ...]:
    """Eleven steps per decade (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8) from `low` to `high` (both kept)."""
    decades = range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1)
    values = {m * 10.0**d for d in decades for m in MANTISSAS}
    return tuple(sorted(v for v in values | {low, high} if low <= v <= high))


@dataclass(frozen=True)
class Control:
    key: str  # scenario key (a range control's key is the prefix of its `_low` and `_high` keys)
    label: str  # with its unit
    kind: Kind
    scale: float = 1.0  # scenario value = widget value × scale
    low: float = 0.0
    high: float = 1.0
    step: float | None = None
    options: tuple[Any, ...] = ()
    help: str = ""
    fmt: str = "%.2f"  # printf format of the number box
    integer: bool = False  # whole numbers: the box shows no decimals and the scenario gets an int
    placeholder: str = ""  # a number box that may be empty (the key unset), this text saying what empty means

    def to_scenario(self, shown: float) -> float:
        """Widget units to scenario units; percent divides by 100 so 35 % is exactly 0.35."""
        return shown * self.scale if self.scale >= 1 else shown / round(1 / self.scale)

    def to_widget(self, value: float) -> float:
        shown = value / self.scale if self.scale >= 1 else value * round(1 / self.scale)
        return int(round(shown)) if self.integer else shown

    @property
    def widget(self) -> str:
        return f"w.{self.key}"

    @property
    def number(self) -> str:
        return f"w.{self.key}.n"


def _gpu_label(key: str) -> str:
    if key == CUSTOM:
        return "Custom (enter peak)"
    accelerator = catalogue()[key]
    return f"{accelerator.label} · {accelerator.peak_bf16_dense_tflops:,.0f} TFLOP/s"


GPU_TYPES = (*catalogue(), CUSTOM)
GROUPS: dict[str, tuple[Control, ...]] = {
    "Model and data": (
        Control("total_params", "Total parameters (billions)", "log", 1e9, 0.1, 2000,
                options=log_grid(1e8, 2e12), help="Every weight, experts included. Sets checkpoint size."),
        Control("active_params", "Active parameters per token (billions)", "log", 1e9, 0.1, 2000,
                options=log_grid(1e8, 2e12), help="MoE only: parameters used per token; drives FLOPs (6·N_active·D)."),
        Control("tokens", "Training tokens (billions)", "log", 1e9, 1, 100_000,
                options=log_grid(1e9, 1e14), fmt="%.1f",
                help="D in 6·N·D; the TST method reads more raw tokens than this."),
    ),
    "Hardware": (
        Control("gpu_type", "GPU type", "select", options=GPU_TYPES,
                help="Dense BF16 peak from data/hardware.csv (never the sparse figure)."),
        Control("peak_tflops", "Custom peak (dense BF16 TFLOP/s per GPU)", "number", 1.0, 1, 100_000, 1.0,
                help="Used only with the custom GPU type."),
        Control("gpu_memory_gb", "Custom memory (GB per GPU)", "number", 1.0, 1, 100_000, 1.0, fmt="%.0f",
                placeholder="not given: the plan cannot be checked",
                help="Used only with the custom GPU type: until it is given, no plan on that GPU is said to run."),
        Control("gpu_count", "GPU count", "log", 1.0, 1, 10_000_000, 1,
                options=tuple(float(2**k) for k in range(18)), fmt="%d", integer=True,
                help="GPUs in the main run; sets wall-clock days."),
        Control("mfu", "MFU (%)", "slider", 0.01, 1, 80, 0.5,
                help="Model FLOPs utilisation (hardware FLOPs with full recompute). Llama 3 405B: 38-43 %; "
                     "small-active MoE runs: ~6 %. Used when *Predict MFU from the layout* is off."),
    ),
    "Reliability and checkpoints": (
        Control("checkpoint_interval_min", "Checkpoint interval (minutes)", "log", 1.0, 1, 100_000, 1.0,
                options=log_grid(1.0, 1440.0), fmt="%.1f",
                help="Wall-clock between checkpoints. The checkpoint chart marks the Young/Daly optimum."),
        Control("checkpoint_write_gb_per_s", "Checkpoint write bandwidth (GB/s)", "number", 1.0, 0.1, 100_000, 1.0,
                help="Aggregate write speed to storage; checkpoint size / bandwidth is the stall per write."),
        Control("checkpoint_async", "Asynchronous checkpoints (no stall)", "toggle"),
        Control("node_failures_per_1000_node_days", "Node failures per 1,000 node-days", "slider", 1.0, 0, 50, 0.01,
                help=f"{LLAMA3_405B_FAILURES.label}: {LLAMA3_405B_FAILURES.per_1000_node_days:.2f} "
                     f"({LLAMA3_405B_FAILURES.interruptions} interruptions in {LLAMA3_405B_FAILURES.days:g} days on "
                     f"{LLAMA3_405B_FAILURES.nodes:,} nodes)."),
        Control("spot_interruptions_per_1000_node_days", "Spot interruptions per 1,000 node-days", "slider", 1.0,
                0, 100, 0.1, help="Reclaims on the spot share of nodes; assumed 3.3 (AWS advisor band 5-10 %/month)."),
    ),
    "Purchase mix and prices": (
        Control(MIX, "Purchase mix (% of GPU-hours): reserved | spot | on-demand", "mix", 0.01, 0, 100, 1.0,
                help="One control for the three shares: reserved runs from 0 to the left handle, spot between the "
                     "handles and on-demand from the right handle to 100 %, so they always add up to 100 %. Spot "
                     "adds spot interruptions to the failure rate."),
        Control("price_reserved_per_gpu_hour", "Reserved price ($/GPU-hour)", "number", 1.0, 0, 1000, 0.01,
                help="Default: H100 1-year contract index, Jun 2026 (SemiAnalysis, as quoted)."),
        Control("price_on_demand_per_gpu_hour", "On-demand price ($/GPU-hour)", "number", 1.0, 0, 1000, 0.01,
                help="Default: AWS p5.48xlarge on-demand after the 2025 cut, per GPU."),
        Control("price_spot_per_gpu_hour", "Spot price ($/GPU-hour)", "number", 1.0, 0, 1000, 0.01,
                help="Default: H100 spot index, late Jun 2026 (SemiAnalysis, as quoted)."),
    ),
    "Project": (
        Control("experiment_overhead", "Experiment overhead (× main run)", "slider", 1.0, 0, 5, 0.05,
                help="Ablations and failed runs as a multiple of the main run's GPU-hours (seeds: often several ×)."),
        Control("budget_usd", "Budget ($)", "number", 1.0, 1, 1e13, 10_000.0, fmt="%.0f",
                help="Budget line for the whole project; the status turns 'warning' at 90 % of it."),
        Control("scaling_fit", "Scaling-law fit", "select", options=tuple(FITS),
                help="Chinchilla loss fit used for predicted loss and the compute-optimal point."),
    ),
    "Training method": (
        Control("method", "Method", "select", options=("baseline", "tst"),
                help="Token Superposition Training (arXiv 2605.06546), compared with the baseline at matched loss."),
        Control("tst_speedup", "TST speedup (× fewer GPU-hours)", "number", 1.0, 1, 100, 0.01,
                help=f"Published: {TST_RUN.baseline_gpu_hours:,.0f} / {TST_RUN.tst_gpu_hours:,.0f} "
                     f"{TST_RUN.gpu_type}-hours = {TST_RUN.speedup:.2f}× on a "
                     f"{TST_RUN.label.removeprefix('published ')}. Validate with a pilot."),
        Control("tst_token_multiplier", "TST raw tokens (× baseline)", "number", 1.0, 1, 100, 0.01,
                help=f"Published: {TST_RUN.tst_tokens / 1e12:g}T / {TST_RUN.baseline_tokens / 1e12:g}T = "
                     f"{TST_RUN.token_multiplier:.2f}× more raw tokens read, which costs data processing."),
        Control("tst_pilot_fraction", "TST pilot (% of baseline run cost)", "number", 0.01, 0, 1000, 1.0,
                help="Assumed 5 %: a short run that checks the speedup holds at your scale before committing."),
        Control("tst_switching_cost_usd", "TST switching cost ($)", "number", 1.0, 0, 1e12, 1000.0, fmt="%.0f",
                help="Assumed: one-off engineering cost of adopting the method."),
    ),
}


def _range(name: str, label: str) -> Control:
    """A low-high slider of multiples of the plan's value; the help quotes both ends' sources."""
    fields = Scenario.model_fields
    sources = " ".join((fields[f"range_{name}_{end}"].description or "").split(". ", 1)[1].split(" Bounds:")[0]
                       for end in ("low", "high"))
    return Control(f"range_{name}", f"{label} (× plan value)", "range", 1.0, 0.1, 3.0, 0.01, fmt="×%.2f",
                   help=f"Low and high ends as multiples of the plan's own value. {sources}")


GROUPS["Uncertainty ranges"] = (
    Control("range_shape", "Distribution", "select", options=("triangular", "lognormal"),
            help="Triangular: low, likely (the plan's value) and high. Log-normal: low and high are the 5th and "
                 "95th percentiles. Inputs are drawn independently."),
    _range("mfu", "MFU"),
    _range("price_reserved", "Reserved price"),
    _range("price_on_demand", "On-demand price"),
    _range("price_spot", "Spot price"),
    _range("node_failures", "Node failure rate"),
    _range("spot_interruptions", "Spot interruption rate"),
    _range("tokens", "Training tokens"),
    _range("experiments", "Experiment overhead"),
    _range("tst_speedup", "TST speedup"),
)
CONTROLS: tuple[Control, ...] = tuple(c for group in GROUPS.values() for c in group)
RANGE_KEYS = {f"{c.key}_{end}": c.key for c in CONTROLS if c.kind == "range" for end in ("low", "high")}
RANGE_KEYS.update(dict.fromkeys(MIX_KEYS, MIX))
MOE_TOGGLE = "w.moe"
MFU_PREDICTED = "w.mfu.predicted"  # on: the scenario's mfu is None, predicted from the layout
MFU_FALLBACK = 0.40  # where the slider starts when the layout gives no prediction
EXACT_BOX_PX: Final = 76  # the number box beside a log slider (as wide as its column was)
PERSIST: Final = "session"  # closed groups and other pages do not drop a control's value
GROUPS_SHOWN: Final = "plan.groups"  # the control groups drawn in the sidebar (`shown_groups`)
DEFAULT_SHOWN: Final = ("Model and data", "Hardware")
METHOD_LABELS = {"baseline": "Baseline", "tst": "Token Superposition Training"}
SHAPE_LABELS = {"triangular": "Triangular (low, likely, high)", "lognormal": "Log-normal (90 % interval)"}
DRAW_OPTIONS = (1_000, 10_000, 100_000)
DRAWS = "plan.mc_draws"
SEED = "plan.mc_seed"


def _fit_label(key: str) -> str:
    return FITS[key].label


def _method_label(key: str) -> str:
    return METHOD_LABELS[key]


def _shape_label(key: str) -> str:
    return SHAPE_LABELS[key]


FORMATS = {"gpu_type": _gpu_label, "scaling_fit": _fit_label, "method": _method_label, "range_shape": _shape_label}


def widget_values(scenario: Scenario) -> dict[str, Any]:
    """Session-state values for every widget, in display units, from a scenario."""
    data = scenario.to_json_dict()
    data["active_params"] = scenario.active
    data["peak_tflops"] = peak_tflops_of(scenario)  # a catalogue GPU's own, shown in the disabled box
    if data["gpu_memory_gb"] is None and scenario.gpu_type != CUSTOM:
        data["gpu_memory_gb"] = gpu_memory_gb_of(scenario)
    values: dict[str, Any] = {MOE_TOGGLE: scenario.active_params is not None, MFU_PREDICTED: scenario.mfu is None}
    if data["mfu"] is None:
        data["mfu"] = predicted_mfu(scenario)
    for control in CONTROLS:
        if control.kind == "range":
            values[control.widget] = (data[f"{control.key}_low"], data[f"{control.key}_high"])
            continue
        if control.kind == "mix":
            values[control.widget] = mix_handles(scenario.reserved_share, scenario.spot_share)
            continue
        value = data[control.key]
        if control.kind == "log":
            values[control.number] = control.to_widget(float(value))
            values[control.widget] = float(value)
        elif control.kind in ("slider", "number"):
            values[control.widget] = None if value is None and control.placeholder else control.to_widget(float(value))
        else:
            values[control.widget] = value
    return values | layout_controls.widget_values(scenario) | programme_controls.widget_values(scenario)


def predicted_mfu(scenario: Scenario) -> float:
    """The layout's predicted MFU as the `mfu` key reads it, on the slider's steps and within its bounds (the
    slider's start when the toggle is turned off; 40 % when the layout gives no prediction)."""
    control = _mfu_control()
    predicted = plan_result(scenario)["throughput"]["mfu_as_input"]
    if predicted is None or not np.isfinite(predicted):
        return MFU_FALLBACK
    step = control.step or 1.0
    shown = round(control.to_widget(predicted) / step) * step
    return control.to_scenario(min(max(shown, control.low), 100.0))


def load(scenario: Scenario) -> None:
    """Set every widget from a scenario (a preset, an upload or a link); a removed stage's boxes are forgotten."""
    programme_controls.clear()
    st.session_state.update(widget_values(scenario))
    st.session_state["w.name"] = scenario.name


def control_of(key: str) -> str:
    """The control that sets a scenario key (a range control sets two: `range_mfu_low`, `range_mfu_high`)."""
    return RANGE_KEYS.get(key, key)


def read(base: dict[str, Any]) -> dict[str, Any]:
    """The scenario dict the widgets describe: `base` (keys without a widget) overlaid with widget values."""
    state = st.session_state
    data = dict(base)
    for control in CONTROLS:
        if control.kind == "log":
            value = control.to_scenario(state[control.number])
            data[control.key] = int(round(value)) if control.integer else value
        elif control.key == "mfu" and state.get(MFU_PREDICTED, base.get("mfu") is None):
            data["mfu"] = None
        elif control.kind in ("slider", "number"):
            shown = state[control.widget]
            data[control.key] = None if shown is None and control.placeholder else control.to_scenario(shown)
        elif control.kind == "range":
            data[f"{control.key}_low"], data[f"{control.key}_high"] = state[control.widget]
        elif control.kind == "mix":
            data["reserved_share"], data["spot_share"] = mix_shares(state[control.widget])
        else:
            data[control.key] = state[control.widget]
    data.update(layout_controls.read(base))
    if not state[MOE_TOGGLE]:
        data["active_params"] = None
    if data["gpu_type"] != CUSTOM:
        data["peak_tflops"] = None
        data["gpu_memory_gb"] = base["gpu_memory_gb"]  # a catalogue GPU keeps its file's override, if any
    data["name"] = state["w.name"] or base["name"]
    return data


def _mfu_toggled(scenario: Scenario | None) -> None:
    """Turned off, the MFU slider starts from the layout's prediction for the plan as it was priced."""
    state = st.session_state
    if not state[MFU_PREDICTED] and scenario is not None:
        mfu = _mfu_control()
        state[mfu.widget] = mfu.to_widget(predicted_mfu(scenario))


def _mfu_control() -> Control:
    return next(control for control in GROUPS["Hardware"] if control.key == "mfu")


def _slider_moved(control: Control) -> None:
    st.session_state[control.number] = control.to_widget(st.session_state[control.widget])


def _number_typed(control: Control) -> None:
    st.session_state[control.widget] = float(control.to_scenario(st.session_state[control.number]))


MIX_DIGITS = 9  # percent handles are rounded here, so 0.8 shows as 80 and not 80.00000000000001


def mix_handles(reserved_share: float, spot_share: float) -> tuple[float, float]:
    """The purchase-mix control's two handles, in percent: reserved ends at the left one, spot at the right one."""
    return round(100 * reserved_share, MIX_DIGITS), round(100 * (reserved_share + spot_share), MIX_DIGITS)


def mix_shares(handles: tuple[float, float]) -> tuple[float, float]:
    """Reserved and spot shares (fractions) from the two handles; on-demand is what is left of 100 %."""
    left, right = sorted(handles)
    # shares to the handles' precision, so a share of 0.0343 reads back as 0.0343, not 0.034300000000000004
    return round(left / 100, MIX_DIGITS + 2), round((right - left) / 100, MIX_DIGITS + 2)


def mix_text(reserved_share: float, spot_share: float) -> str:
    """ "Reserved 80 % · spot 0 % · on-demand 20 %" of a plan's applied mix."""
    on_demand = max(0.0, 1.0 - reserved_share - spot_share)
    return (f"Reserved {100 * reserved_share:.3g} % · spot {100 * spot_share:.3g} % · "
            f"on-demand {100 * on_demand:.3g} %")


WHOLE_LABEL_BELOW = 1e6  # a whole number under this is written out (2,048 GPUs, not 2.048k)


@lru_cache(maxsize=4096)
def exact_label(value: float) -> str:
    """A log slider's value as it is (not the nearest step): 671B, 13.37B with a suffix, a whole number under a
    million written out with thousands separators (2,048, 16,384)."""
    if abs(value) < WHOLE_LABEL_BELOW and float(value).is_integer():
        return f"{value:,.0f}"
    return compact(value, EXACT_FIGURES)


def exact_name(label: str) -> str:
    """A label after "Exact": lower-cased at its start unless it opens with an acronym ("GPU count", "MFU (%)")."""
    return label if label[:2].isupper() else f"{label[0].lower()}{label[1:]}"


def _bounds(control: Control, value: float) -> tuple[float, float]:
    """The widget's range, widened to hold a value a file or link brought in (validation already passed it)."""
    low, high = min(float(control.low), value), max(float(control.high), value)
    return (int(low), int(high)) if control.integer else (low, high)


def log_options(steps: tuple[float, ...], value: float) -> tuple[float, ...]:
    """A log slider's steps with its exact value among them, so it shows 671B rather than the nearest 700B."""
    return steps if value in steps else tuple(sorted((*steps, value)))


def render(control: Control, disabled: bool = False) -> None:
    """Draw one control (a log slider gets a number box beside it for exact values)."""
    state = st.session_state
    if control.kind == "log":
        low, high = _bounds(control, state[control.number])
        row = st.container(horizontal=True, wrap=False, vertical_alignment="bottom")  # not columns: 2 elements fewer
        row.select_slider(control.label, options=log_options(control.options, state[control.widget]),
                          key=control.widget, help=control.help, format_func=exact_label, on_change=_slider_moved,
                          args=(control,), disabled=disabled, persist_state=PERSIST)
        row.number_input(f"Exact {exact_name(control.label)}", min_value=low, max_value=high,
                         step=control.step, format=control.fmt, key=control.number, on_change=_number_typed,
                         args=(control,), disabled=disabled, label_visibility="collapsed", persist_state=PERSIST,
                         width=EXACT_BOX_PX)
    elif control.kind == "slider":
        low, high = _bounds(control, state[control.widget])
        st.slider(control.label, min_value=low, max_value=high, step=control.step, key=control.widget,
                  help=control.help, disabled=disabled, persist_state=PERSIST, on_change="rerun")
    elif control.kind == "mix":  # one widget, no callback moving another: what it shows is what is read and priced
        st.slider(control.label, min_value=0.0, max_value=100.0, step=control.step, format="%g %%",
                  key=control.widget, help=control.help, disabled=disabled, persist_state=PERSIST, on_change="rerun")
    elif control.kind == "number":
        shown = state[control.widget]
        low, high = _bounds(control, control.low if shown is None else shown)
        st.number_input(control.label, min_value=low, max_value=high, step=control.step, format=control.fmt,
                        key=control.widget, help=control.help, disabled=disabled, persist_state=PERSIST,
                        placeholder=control.placeholder or None)
    elif control.kind == "range":
        low_value, high_value = state[control.widget]
        st.slider(control.label, min_value=min(control.low, low_value), max_value=max(control.high, high_value),
                  step=control.step, format=control.fmt, key=control.widget, help=control.help, disabled=disabled,
                  persist_state=PERSIST)
    elif control.kind == "select":
        st.selectbox(control.label, control.options, key=control.widget, help=control.help,
                     format_func=FORMATS.get(control.key, str), disabled=disabled, persist_state=PERSIST)
    else:
        st.toggle(control.label, key=control.widget, help=control.help, disabled=disabled, persist_state=PERSIST)


def _mfu_toggle(control: Control, scenario: Scenario | None) -> None:
    """The "Predict MFU from the layout" toggle above the MFU slider; while it is on, the (disabled) slider shows
    the prediction for the plan as priced."""
    state = st.session_state
    st.toggle("Predict MFU from the layout", key=MFU_PREDICTED, on_change=_mfu_toggled, args=(scenario,),
              persist_state=PERSIST,
              help="On: the step-time model predicts the MFU from the model's shape, the GPUs, the layout and the "
                   "batch (dashboard/core/step_time.py, docs/throughput-validation.md), and the plan is priced with "
                   "it. Off: the slider below sets the MFU, starting from the prediction.")
    if state[MFU_PREDICTED] and scenario is not None:
        state[control.widget] = control.to_widget(predicted_mfu(scenario))


def _show_in_use(control: Control, scenario: Scenario) -> None:
    """A disabled control shows the value the plan is priced with (the total of a dense model, the catalogue GPU's
    peak and memory), not the last value typed there; it is where the control starts when enabled again."""
    in_use = {"active_params": lambda: scenario.active, "peak_tflops": lambda: peak_tflops_of(scenario),
              "gpu_memory_gb": lambda: gpu_memory_gb_of(scenario)}.get(control.key)
    value = None if in_use is None else float(in_use())
    if value is None or not np.isfinite(value):
        return
    state = st.session_state
    if control.kind == "log":
        state[control.number] = control.to_widget(value)
        state[control.widget] = value
    else:
        state[control.widget] = control.to_widget(value)


def group_titles() -> tuple[str, ...]:
    """Every control group's title in the sidebar's order: the layout's after Hardware, the programme's after
    Project."""
    after = {"Hardware": layout_controls.GROUP_TITLE, "Project": programme_controls.GROUP_TITLE}
    return tuple(title for group in GROUPS for title in (group, after.get(group)) if title is not None)


def shown_groups() -> list[str]:
    """One row of pills naming the control groups: the groups picked are drawn, in the sidebar's order, and the others
    keep their values. Pills, not an expander a group: the browser redraws every element on each rerun."""
    state = st.session_state
    if GROUPS_SHOWN not in state:
        state[GROUPS_SHOWN] = list(DEFAULT_SHOWN)
    return st.pills("Control groups", group_titles(), selection_mode="multi", key=GROUPS_SHOWN, persist_state=PERSIST,
                    help="Pick the groups of controls to show; a hidden group's controls keep their values.") or []


def render_group(title: str, invalid: dict[str, str] | None = None, scenario: Scenario | None = None) -> None:
    """One labelled group of controls, drawn only while it is shown (`shown_groups`; values persist when hidden).

    Controls that do not apply right now (active parameters of a dense model, the peak of a catalogue GPU,
    TST settings under the baseline method) are shown disabled; a control whose value was not applied
    (`invalid`: control key → reason) says why under it. Under the purchase mix, the shares of `scenario` (the plan
    as priced this run) are written out.
    """
    state = st.session_state
    invalid = invalid or {}
    st.markdown(f"**{title}**")
    if title == "Model and data":
        st.toggle("Mixture of experts (active < total)", key=MOE_TOGGLE, persist_state=PERSIST)
    for control in GROUPS[title]:
        if control.key == "mfu":
            _mfu_toggle(control, scenario)
        disabled = (
            (control.key == "mfu" and state[MFU_PREDICTED])
            or (control.key == "active_params" and not state[MOE_TOGGLE])
            or (control.key in ("peak_tflops", "gpu_memory_gb") and state["w.gpu_type"] != CUSTOM)
            or (control.key.startswith(("tst_", "range_tst_")) and state["w.method"] != "tst")
        )
        if disabled and scenario is not None:
            _show_in_use(control, scenario)
        render(control, disabled=disabled)
        if control.key in invalid:
            st.caption(f":red[:material/error: Not applied: {markdown_text(invalid[control.key])}.]")
        if control.key == "mfu" and scenario is not None:
            st.caption(markdown_text(mfu_line(plan_result(scenario))))
        if control.kind == "mix" and scenario is not None:
            st.caption(f"Priced: {mix_text(scenario.reserved_share, scenario.spot_share)}",
                       help="The mix in the numbers and the link; the handles above show the same mix.")
    if title == "Uncertainty ranges":
        st.select_slider("Monte Carlo draws", DRAW_OPTIONS, key=DRAWS, format_func="{:,}".format,
                         persist_state=PERSIST,
                         help="More draws give steadier percentiles; 100,000 take about four times as long.")
        st.number_input("Seed", min_value=0, max_value=2**32 - 1, step=1, key=SEED, persist_state=PERSIST,
                        help="The same seed and settings give the same numbers.")
