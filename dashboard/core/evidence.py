"""The evidence grade of every headline number: what it rests on, in the grades of `throughput.EVIDENCE_GRADES`.

GPU-hours, wall-clock, step time and tokens per second rest on the MFU the plan uses, graded by
`throughput.evidence_grade` (`mfu_source`). The dollar figures rest on that MFU and on the GPU-hour prices: those
are `assumed` while every price and purchase share is the schema's default, else `entered`; the Plan page marks
inputs the team measured (`dashboard.core.provenance`) `measured` with `with_measured`. The predicted loss rests
on a published scaling-law fit. An output's `grade` is the grade of the input it rests on most (the MFU for
every figure of time and money); its `inputs` say each input's grade.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dashboard.core.scenario import Scenario

PRICE_KEYS = ("price_reserved_per_gpu_hour", "price_on_demand_per_gpu_hour", "price_spot_per_gpu_hour",
              "reserved_share", "spot_share")
# Headline outputs and the inputs each rests on, the first the one that sets its grade.
RESTS_ON = {
    "cost_total_usd": ("mfu", "price"),
    "gpu_hours_total": ("mfu",),
    "wall_clock_days": ("mfu",),
    "cost_per_million_tokens": ("mfu", "price"),
    "step_time_s": ("mfu",),
    "tokens_per_s_per_gpu": ("mfu",),
    "predicted_loss": ("scaling_fit",),
}


def price_grade(scenario: Scenario) -> str:
    """`assumed` while every GPU-hour price and purchase share is the schema's default, else `entered`."""
    fields = Scenario.model_fields
    defaults = all(getattr(scenario, key) == fields[key].default for key in PRICE_KEYS)
    return "assumed" if defaults else "entered"


def outputs(scenario: Scenario, mfu_grade: str) -> dict[str, dict[str, Any]]:
    """Each headline output's evidence: `{"grade": ..., "inputs": {input: grade}}`."""
    inputs = {"mfu": mfu_grade, "price": price_grade(scenario), "scaling_fit": "published"}
    return {key: {"grade": inputs[rests[0]], "inputs": {name: inputs[name] for name in rests}}
            for key, rests in RESTS_ON.items()}


def with_measured(evidence: dict[str, dict[str, Any]], measured_keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The evidence with the inputs that still hold the team's measured values graded `measured` (`mfu` for the
    scenario key `mfu`, `price` when any price or share key is measured)."""
    keys = set(measured_keys)
    measured = {"mfu"} & keys | ({"price"} if keys & set(PRICE_KEYS) else set())
    out = {}
    for output, item in evidence.items():
        inputs = {name: ("measured" if name in measured else grade) for name, grade in item["inputs"].items()}
        first = next(iter(inputs))
        out[output] = {"grade": inputs[first], "inputs": inputs}
    return out


def line(evidence: dict[str, dict[str, Any]]) -> str:
    """The grades in one quiet caption: "Evidence — GPU-hours, wall-clock: validated MFU · cost: validated MFU,
    assumed prices · loss: published scaling-law fit"."""
    cost = evidence["cost_total_usd"]["inputs"]
    return (f"Evidence — GPU-hours, wall-clock: {evidence['gpu_hours_total']['grade']} MFU · cost: {cost['mfu']} "
            f"MFU, {cost['price']} prices · loss: {evidence['predicted_loss']['grade']} scaling-law fit")


def mark_measured(result: dict[str, Any], measured_keys: Iterable[str]) -> dict[str, Any]:
    """A plan's result with the inputs that still hold the team's measured values graded `measured`: its
    `evidence` and, when `mfu` is one, the MFU's own grade (`throughput.mfu_source`). The result is not changed."""
    keys = set(measured_keys)
    marked = {**result, "evidence": with_measured(result["evidence"], keys)}
    if "mfu" in keys and result["throughput"]["mfu_source"] == "entered":
        marked["throughput"] = {**result["throughput"], "mfu_source": "measured"}
    return marked


def short(evidence: dict[str, dict[str, Any]]) -> str:
    """The total cost's evidence in a table cell: "published MFU, entered prices"."""
    cost = evidence["cost_total_usd"]["inputs"]
    return f"{cost['mfu']} MFU, {cost['price']} prices"
