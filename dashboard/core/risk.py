"""Risk in words: the headline's range and budget status, plausibility warnings, what a plan risks, its top lever.

Everything here is a sentence or a badge built from engine and Monte Carlo outputs, so the page and the CLI say
the same thing. Numbers are formatted by the catalogue.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dashboard.core import catalogue
from dashboard.core.engine import PlanResult
from dashboard.core.references import PUBLISHED_DENSE_MFU_MAX
from dashboard.core.scenario import Scenario
from dashboard.core.uncertainty import MonteCarlo

AT_RISK_PROBABILITY = 0.2  # a chance of overrun above this makes a "within" or "warning" budget "at risk"
OPTIMISTIC_BELOW_PERCENTILE = 10.0  # a point estimate below this percentile of the draws is called optimistic
OVERHEAD_MAX = 0.10  # checkpoint stalls plus failure rework above this share of compute is flagged
AT_RISK = "at risk"
INFEASIBLE = "infeasible"


def _text(name: str, value: float) -> str:
    return catalogue.text(name, value)


@dataclass(frozen=True)
class Headline:
    """What the total-cost and budget tiles carry besides the point estimate."""

    p10_usd: float
    p90_usd: float
    prob_over_budget: float
    point_percentile: float
    status: str  # within, warning, at risk, over, infeasible

    @property
    def range_text(self) -> str:
        return f"P10–P90 {_text('cost_total_usd', self.p10_usd)}–{_text('cost_total_usd', self.p90_usd)}"

    @property
    def overrun_text(self) -> str:
        return f"{_text('prob_over_budget', self.prob_over_budget)} chance of overrun"

    @property
    def optimism(self) -> str | None:
        """A warning when the point estimate sits low among the draws; None otherwise."""
        if self.point_percentile >= OPTIMISTIC_BELOW_PERCENTILE:
            return None
        return f"The estimate is optimistic: it is at P{self.point_percentile:.0f} of the range."


def budget_status(engine_status: str, prob_over_budget: float | None = None, *, feasible: bool = True,
                  threshold: float = AT_RISK_PROBABILITY) -> str:
    """The budget status every page, the report and the CLI show: "infeasible" when the plan cannot run (its cost
    buys no run), else the engine's status, or "at risk" when it is not over but the chance of overrun (when a Monte
    Carlo gave one) passes `threshold`."""
    if not feasible:
        return INFEASIBLE
    if engine_status != "over" and prob_over_budget is not None and prob_over_budget > threshold:
        return AT_RISK
    return engine_status


# The verdict's groups in the order a summary lists them, each with its heading.
VERDICT_HEADINGS = {"within": "Within budget", "warning": "Near the budget (warning)", AT_RISK: "At risk",
                    "over": "Over", INFEASIBLE: "Cannot run"}


def budget_verdict(result: Mapping[str, Any], summary: dict | None = None) -> str:
    """The one budget verdict of a plan (the Plan tile's rule, `budget_status`): its engine `result` and, when a
    Monte Carlo ran, its `summary()` (for the chance of overrun). Compare, the presentation layout, the report and
    `estimate --monte-carlo` all call this."""
    return budget_status(result["budget_status"], None if summary is None else summary["prob_over_budget"],
                         feasible=result["feasible"])


def verdict_line(names: list[str], verdicts: list[str], probabilities: list[float]) -> str:
    """The options grouped by verdict, in `VERDICT_HEADINGS`' order, each "at risk" option with its chance of
    overrun: "Within budget: B. At risk: A (49.6 %), D (30.3 %). Over: C."."""
    groups = []
    for verdict, heading in VERDICT_HEADINGS.items():
        members = [f"{name} ({_text('prob_over_budget', probability)})" if verdict == AT_RISK else name
                   for name, given, probability in zip(names, verdicts, probabilities, strict=True)
                   if given == verdict]
        if members:
            groups.append(f"{heading}: {', '.join(members)}.")
    return " ".join(groups)


def headline(result: PlanResult, mc: MonteCarlo, threshold: float = AT_RISK_PROBABILITY) -> Headline:
    probability = mc.prob_over_budget
    return Headline(
        p10_usd=mc.percentile("cost_total_usd", 10),
        p90_usd=mc.percentile("cost_total_usd", 90),
        prob_over_budget=probability,
        point_percentile=mc.point_rank("cost_total_usd"),
        status=budget_status(result["budget_status"], probability, feasible=result["feasible"], threshold=threshold),
    )


@dataclass(frozen=True)
class Note:
    """A badge ("Failures · MTBF 14.2 h") and the sentence that explains it."""

    topic: str
    badge: str
    sentence: str
    colour: str = "gray"  # a Streamlit badge colour: gray for context, orange for a warning


def plausibility(scenario: Scenario, result: PlanResult) -> list[Note]:
    """Soft warnings where the inputs leave published experience, each naming the lever that brings it back."""
    notes = []
    mfu = result["mfu_used"]
    if scenario.active_params is None and mfu > PUBLISHED_DENSE_MFU_MAX:
        notes.append(Note(
            "MFU", f"{_text('mfu', mfu)} MFU",
            f"MFU {_text('mfu', mfu)} is above any published dense training run (about "
            f"{_text('mfu', PUBLISHED_DENSE_MFU_MAX)} at most; Llama 3 405B ran at 38–43 %): the GPU-hours may be "
            "too low. Check the figure against a profiled step of your own model.", "orange"))
    overhead = result["overhead_fraction"]
    if overhead > OVERHEAD_MAX:
        stall, rework = result["stall_fraction"], result["rework_fraction"]
        if stall >= rework:
            write_s = _text("checkpoint_write_s", result["checkpoint_write_s"])
            bandwidth = _text("checkpoint_write_gb_per_s", scenario.checkpoint_write_gb_per_s)
            lever = (f"each checkpoint stalls training for {write_s}: raise the write bandwidth (now {bandwidth}), "
                     "switch on asynchronous checkpoints, or lengthen the interval")
        else:
            lever = (f"failures cost {_text('rework_fraction', rework)} in rework: move the checkpoint interval "
                     f"({_text('checkpoint_interval_min', scenario.checkpoint_interval_min)}) towards the Daly optimum "
                     f"({_text('checkpoint_interval_daly_min', result['checkpoint_interval_daly_min'])})")
        notes.append(Note(
            "Overhead", f"{_text('overhead_fraction', overhead)} stalls + rework",
            f"Checkpoint stalls plus failure rework are {_text('overhead_fraction', overhead)} of compute, above the "
            f"{_text('overhead_fraction', OVERHEAD_MAX)} that published large runs report: {lever}.", "orange"))
    return notes


def risks(scenario: Scenario, result: PlanResult) -> list[Note]:
    """What the plan's savings risk, one note per risk that applies (no spot note at 0 % spot, no TST note
    under the baseline method)."""
    notes = [Note(
        "Failures", f"MTBF {_text('job_mtbf_hours', result['job_mtbf_hours'])}",
        f"A failure every {_text('job_mtbf_hours', result['job_mtbf_hours'])} on "
        f"{_text('node_count', result['node_count'])} nodes; each checkpoint is "
        f"{_text('checkpoint_size_gb', result['checkpoint_size_gb'])}, written in "
        f"{_text('checkpoint_write_s', result['checkpoint_write_s'])}. Stalls and rework add "
        f"{_text('overhead_fraction', result['overhead_fraction'])} at a "
        f"{_text('checkpoint_interval_min', scenario.checkpoint_interval_min)} interval (Daly optimum "
        f"{_text('checkpoint_interval_daly_min', result['checkpoint_interval_daly_min'])}).")]
    if scenario.spot_share > 0:
        notes.append(Note(
            "Spot", f"{_text('spot_share', scenario.spot_share)} spot",
            f"{_text('spot_share', scenario.spot_share)} of GPU-hours on spot adds "
            f"{_text('spot_interruptions_per_1000_node_days', scenario.spot_interruptions_per_1000_node_days)} "
            "interruptions per 1,000 node-days on that share: cheaper hours buy more rework and a less predictable "
            "wall-clock."))
    if scenario.method == "tst":
        tst = result["tst"]
        notes.append(Note(
            "TST", f"{_text('tst.speedup', tst['speedup'])} unproven at scale",
            f"{_text('tst.speedup', tst['speedup'])} fewer GPU-hours at matched loss rests on one published "
            f"10B-A1B MoE result; a pilot ({_text('tst.pilot_cost_usd', tst['pilot_cost_usd'])}) should confirm it "
            f"at your scale before the plan relies on it. TST reads "
            f"{_text('tst.speedup', tst['tst_tokens'] / tst['baseline_tokens'])} the raw tokens.", "orange"))
    notes.append(Note(
        "Storage", f"peak {_text('storage_peak_gb', result['storage_peak_gb'])}",
        f"Storage peaks at {_text('storage_peak_gb', result['storage_peak_gb'])} and costs "
        f"{_text('storage_cost_usd', result['storage_cost_usd'])} {_storage_period(scenario, result)}; keeping "
        f"the last {scenario.keep_last_checkpoints:,} checkpoints bounds the hot tier."))
    return notes


def _storage_period(scenario: Scenario, result: PlanResult) -> str:
    """What the storage cost covers: the run, and the months its checkpoints and data are kept after it."""
    months = scenario.storage_retention_months
    if months == 0:
        return "over the run"
    after = _text("storage_retention_usd", result["storage_retention_usd"])
    kept = f"{months:g} month" if months == 1 else f"{months:g} months"
    return f"over the run and the {kept} kept after it ({after} of it after training)"


def top_lever(mc: MonteCarlo) -> str | None:
    """The tornado's widest bar as a sentence; None when no input moves the total."""
    if not mc.tornado or mc.tornado[0].swing_usd <= 0:
        return None
    bar = mc.tornado[0]
    entry = catalogue.INPUTS[bar.input.key]
    low, high = sorted((bar.cost_low_usd, bar.cost_high_usd))
    return (f"The biggest lever is {bar.input.label}: over {entry.text(bar.input_low)}–{entry.text(bar.input_high)} "
            f"the total moves by {_text('cost_total_usd', bar.swing_usd)} "
            f"({_text('cost_total_usd', low)} to {_text('cost_total_usd', high)}).")
