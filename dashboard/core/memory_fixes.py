"""The changes that lower a plan's memory per GPU, each priced, and the sentence that names the cheapest that fit.

Pricing a change means running the engine on the changed plan, so the engine's single-plan evaluation is passed in
(`Evaluate`, `dashboard.core.engine.evaluate`): this module imports nothing above the verdict
(`dashboard.core.feasibility`), and the engine can name the fix in its "does not fit" sentence with no import
circle. `dashboard.core.fix_choice` judges which of these fixes the "Can it run?" panel offers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dashboard.core import layout, memory, shape
from dashboard.core.feasibility import gpu_memory_gb_of, layout_text, recipe_of
from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_dict
from dashboard.format import number

FULL_RECOMPUTE_EXTRA = 8.0 / 6.0 - 1.0  # one more forward pass: 8ND hardware FLOPs for 6ND
MAX_GPU_DOUBLINGS = 20
FREE_TEXT = "no extra compute"


@dataclass(frozen=True)
class Evaluation:
    """One plan as the engine prices it (no sentences): memory per GPU, whether it fits, the total cost, the
    wall-clock, the batch's most useful GPUs and micro-batches per step, and the layout's degrees."""

    total_gb: float
    fits: bool
    cost_usd: float
    wall_clock_days: float
    max_useful_gpus: float
    micro_batches: float
    layout: dict[str, int]


Evaluate = Callable[[Scenario], Evaluation]


@dataclass(frozen=True)
class Fix:
    """One change that lowers the memory per GPU: its label in user words, the scenario keys it sets (apply with
    `scenario.model_copy(update=changes)`), the memory per GPU and verdict with it, the extra compute it costs (a
    fraction of the FLOPs) and the extra dollars (the engine's total with the change minus without), in words."""

    label: str
    changes: dict[str, object]
    memory_gb: float
    fits: bool
    extra_compute_fraction: float
    extra_cost_usd: float
    cost_text: str


def _changed(scenario: Scenario, changes: dict[str, object]) -> Scenario | None:
    """The scenario with the changes, validated; None when the changes make it invalid."""
    try:
        return scenario_from_dict(scenario.to_json_dict() | changes)
    except ScenarioError:
        return None


def proposed_layout(scenario: Scenario, evaluate: Evaluate) -> dict[str, Any]:
    """The layout the planner proposes when every layout key is left unset, with its memory per GPU."""
    free = _changed(scenario, {"tensor_parallel": None, "pipeline_parallel": None, "zero_stage": None})
    found = evaluate(free if free is not None else scenario)
    lay = found.layout
    return {"tensor_parallel": lay["tensor_parallel"], "pipeline_parallel": lay["pipeline_parallel"],
            "zero_stage": lay["zero_stage"], "fits": found.fits, "total_gb": found.total_gb}


def _powers_above(value: int, limit: float) -> list[int]:
    return [2**exponent for exponent in range(1, 31) if value < 2**exponent <= limit]


def _options(scenario: Scenario, evaluate: Evaluate) -> list[tuple[str, list[tuple[str, dict[str, object]]]]]:
    """Each kind of fix with its options, mildest first: (kind, [(label, changes), …]); kind "free" costs no FLOPs."""
    kinds: list[tuple[str, list[tuple[str, dict[str, object]]]]] = []
    if scenario.zero_stage is not None and scenario.zero_stage < 3:
        stages = range(scenario.zero_stage + 1, 4)
        kinds.append(("free", [(f"ZeRO-{stage}", {"zero_stage": stage}) for stage in stages]))
    if scenario.attention == "eager":
        kinds.append(("free", [("fused (flash) attention", {"attention": "flash"})]))
    if scenario.activation_recompute == "none" and scenario.attention == "eager":
        kinds.append(("free", [("selective activation recompute", {"activation_recompute": "selective"})]))
    if scenario.tensor_parallel is not None:
        kinds.append(("free", [(f"TP {tp}", {"tensor_parallel": tp})
                               for tp in _powers_above(scenario.tensor_parallel, scenario.gpus_per_node)]))
    if scenario.pipeline_parallel is not None:
        layers = shape.model_shape(scenario).n_layers
        kinds.append(("free", [(f"PP {pp}", {"pipeline_parallel": pp}) for pp in
                               _powers_above(scenario.pipeline_parallel, layers / layout.MIN_LAYERS_PER_STAGE)]))
    if any(getattr(scenario, key) is not None for key in ("tensor_parallel", "pipeline_parallel", "zero_stage")):
        proposal = proposed_layout(scenario, evaluate)
        changes = {key: proposal[key] for key in ("tensor_parallel", "pipeline_parallel", "zero_stage")
                   if proposal[key] != getattr(scenario, key)}
        label = layout_text(proposal["tensor_parallel"], proposal["pipeline_parallel"], proposal["zero_stage"])
        kinds.append(("free", [(label, changes)] if changes else []))
    if scenario.micro_batch_size > 1:
        kinds.append(("free", [("micro-batch 1", {"micro_batch_size": 1})]))
    if scenario.activation_recompute != "full":
        kinds.append(("recompute", [("full activation recompute", {"activation_recompute": "full"})]))
    counts = [scenario.gpu_count * 2**doubling for doubling in range(1, MAX_GPU_DOUBLINGS + 1)]
    kinds.append(("gpus", [(f"{count:,} GPUs", {"gpu_count": count}) for count in counts]))
    return kinds


def _priced(kind: str, label: str, changes: dict[str, object], found: Evaluation, base: Evaluation,
            scenario: Scenario) -> Fix:
    if kind == "free":
        return Fix(label, changes, found.total_gb, found.fits, 0.0, 0.0, FREE_TEXT)
    extra = found.cost_usd - base.cost_usd
    money = f"{'+' if extra >= 0 else '−'}{number(abs(extra), '$')}"
    if kind == "recompute":
        return Fix(label, changes, found.total_gb, found.fits, FULL_RECOMPUTE_EXTRA, extra,
                   f"+{FULL_RECOMPUTE_EXTRA:.0%} compute, {money}".replace("%", " %"))
    added = int(changes["gpu_count"]) - scenario.gpu_count  # type: ignore[call-overload]
    return Fix(label, changes, found.total_gb, found.fits, 0.0, extra, f"+{added:,} GPUs, {money}")


def fixes(scenario: Scenario, evaluate: Evaluate) -> list[Fix]:
    """Every change that lowers the plan's memory per GPU, priced, fitting fixes first and cheapest first.

    Free fixes (a higher ZeRO stage, fused attention, selective recompute, more TP or PP, the planner's layout,
    micro-batch 1) cost no FLOPs; full recompute adds a forward pass (+33 % compute, priced by re-running the
    engine with it); more GPUs say how many and their price. Of each kind the mildest option that fits is listed
    (else the one that saves the most); more GPUs only when some count up to 2²⁰ × fits. A plan that fits has none.
    """
    if math.isnan(gpu_memory_gb_of(scenario)):  # nothing to fit against: the GPU's memory must be given first
        return []
    base = evaluate(scenario)
    if base.fits:
        return []
    found_fixes: list[Fix] = []
    for kind, options in _options(scenario, evaluate):
        chosen = None
        for label, changes in options:
            changed = _changed(scenario, changes)
            if changed is None:
                continue
            chosen = _priced(kind, label, changes, evaluate(changed), base, scenario)
            if chosen.fits:
                break
        if chosen is not None and (chosen.fits or kind != "gpus") and all(
                chosen.changes != fix.changes for fix in found_fixes):
            found_fixes.append(chosen)
    return sorted(found_fixes, key=lambda fix: (not fix.fits, max(fix.extra_cost_usd, 0.0),
                                                fix.extra_compute_fraction > 0 or "gpu_count" in fix.changes))


def fix_sentence(scenario: Scenario, evaluate: Evaluate) -> str:
    """The fixes that fit, in words (at most three, cheapest first), or what no layout of these GPUs can do."""
    fitting = [fix for fix in fixes(scenario, evaluate) if fix.fits]
    words = [f"{fix.label} ({fix.memory_gb:,.0f} GB, {fix.cost_text})" for fix in fitting
             if "gpu_count" not in fix.changes][:3]
    if words:
        return "use " + ", or ".join(words)
    limit = gpu_memory_gb_of(scenario)
    states_gb = sum(recipe_of(scenario)) * scenario.total_params / memory.GB
    gpus = math.ceil(states_gb / limit / scenario.gpus_per_node) * scenario.gpus_per_node
    sentence = (f"no layout of {scenario.gpu_count:,} GPUs fits; the model states alone ({states_gb:,.0f} GB) need at "
                f"least {gpus:,} GPUs of {limit:,.0f} GB with ZeRO-3, or GPUs with more memory")
    more = [fix for fix in fitting if "gpu_count" in fix.changes]
    if more:
        sentence += f" — {more[0].label} fit ({more[0].memory_gb:,.0f} GB, {more[0].cost_text})"
    return sentence


