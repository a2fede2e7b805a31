"""Which memory fixes the "Can it run?" panel offers: only those that make the plan run, within its batch and a sane
count of GPUs, each with what it costs and what it changes; the others are kept, with the reason, as "also
considered".

`dashboard.core.memory_fixes.fixes` finds every change that lowers the memory per GPU; this module judges each one
by pricing the plan with it (the engine's total, every line item, so a layout's longer pipeline bubble costs what
it costs):

- it **fits**: the fixed plan's memory per GPU is within the GPU's;
- it stays **within the batch**: GPUs it adds have work (GPUs ≤ the batch's max useful GPUs), and pipeline stages it
  adds get at least one micro-batch each per step (fewer leave over half of each step idle: the bubble
  (PP − 1) / (m + PP − 1), Narayanan et al. 2021, arXiv 2104.04473 §2.2);
- it needs **at most** `GPU_GROWTH` × the plan's GPUs and at most the largest published training cluster
  (`references.LARGEST_TRAINING_CLUSTER`: Llama 3 405B on 16,384 H100).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dashboard.core import catalogue, engine
from dashboard.core.memory_fixes import Evaluation, Fix, fixes
from dashboard.core.references import LARGEST_TRAINING_CLUSTER
from dashboard.core.scenario import Scenario, scenario_from_dict
from dashboard.format import change, number

GPU_GROWTH = 8  # a fix may multiply the plan's GPUs by at most this


@dataclass(frozen=True)
class Offered:
    """A fix as the panel shows it: the fix, the engine's total cost with it and without, its wall-clock in days,
    what it changes in words ("Attention kernel eager → flash") and, for one only considered, why ("" when
    offered)."""

    fix: Fix
    total_usd: float
    base_total_usd: float
    wall_clock_days: float
    changes_text: str
    reason: str

    @property
    def extra_cost_usd(self) -> float:
        return self.total_usd - self.base_total_usd

    @property
    def cost_text(self) -> str:
        """ "+$12.3k", "−$4k" or "≈ same" (below the total's displayed precision), as the tiles' deltas."""
        return change(self.total_usd, self.base_total_usd, "$")

    @property
    def days_text(self) -> str:
        return number(self.wall_clock_days, "days")


def gpu_bound(scenario: Scenario) -> int:
    """The most GPUs a fix may ask for: the plan's × `GPU_GROWTH` or the largest published cluster, the smaller."""
    return min(scenario.gpu_count * GPU_GROWTH, LARGEST_TRAINING_CLUSTER.gpus)


def _value_text(key: str, value: Any) -> str:
    if value is None:
        return "proposed"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else catalogue.INPUTS[key].text(value)


def changes_text(scenario: Scenario, changes: dict[str, Any]) -> str:
    """The inputs a fix sets, from → to: "Attention kernel eager → flash; GPUs 512 → 1,024"."""
    return "; ".join(f"{catalogue.INPUTS[key].label.split(' (')[0]} {_value_text(key, getattr(scenario, key))} → "
                     f"{_value_text(key, value)}" for key, value in changes.items())


def _reason(scenario: Scenario, fix: Fix, fixed: Evaluation, base: Evaluation) -> str:
    """Why a fix is only considered, or "" when it is offered. The batch's limits judge what the fix changes: GPUs it
    adds must have work, stages it adds must get micro-batches (a plan whose own batch idles GPUs keeps them)."""
    gpus = int(fix.changes.get("gpu_count", scenario.gpu_count))  # type: ignore[call-overload]
    if not fix.fits:
        return "still does not fit"
    if gpus > gpu_bound(scenario):
        largest = LARGEST_TRAINING_CLUSTER
        return (f"{gpus:,} GPUs is more than {GPU_GROWTH} × the plan's {scenario.gpu_count:,} or the largest "
                f"published training cluster ({largest.gpus:,} GPUs, {largest.label}), the smaller")
    if gpus > scenario.gpu_count and gpus > fixed.max_useful_gpus:
        return (f"the batch keeps only {fixed.max_useful_gpus:,.0f} of its {gpus:,} GPUs busy "
                "(the rest would idle, billed)")
    stages = fixed.layout["pipeline_parallel"]
    if stages > max(base.layout["pipeline_parallel"], fixed.micro_batches):
        return (f"{fixed.micro_batches:,.0f} micro-batches per step for {stages:,.0f} "
                "pipeline stages: over half of each step idles in the bubble")
    return ""


def offered(scenario: Scenario) -> tuple[list[Offered], list[Offered]]:
    """(the fixes offered, cheapest first; the fixes only considered, with why) for a plan that does not fit;
    two empty lists for one that does."""
    found = fixes(scenario, engine.evaluate)
    if not found:
        return [], []
    base = engine.evaluate(scenario)
    shown: list[Offered] = []
    considered: list[Offered] = []
    for fix in found:
        fixed = engine.evaluate(scenario_from_dict(scenario.to_json_dict() | fix.changes))
        item = Offered(fix, fixed.cost_usd, base.cost_usd, fixed.wall_clock_days,
                       changes_text(scenario, fix.changes), _reason(scenario, fix, fixed, base))
        (considered if item.reason else shown).append(item)
    shown.sort(key=lambda item: item.extra_cost_usd)
    return shown, considered

