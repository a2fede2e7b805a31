"""The sentence beside a total that moved because the plan's structure switched, not a number: the programme's
stages in place of the single run's overheads, or one training method in place of the other.

A switch is found against a reference plan (the Plan page's origin: the preset, file or saved plan it came from).
The plan is priced again with the reference's structure (`before`) and every other input as it is, so the amounts
are what the switch alone moves: "The programme's stages ($97.2k) replace the 1× experiment and 0.05× evaluation
overheads ($217k): total −$120k."
"""

from __future__ import annotations

from typing import Any

from dashboard.core import catalogue
from dashboard.core.scenario import Scenario
from dashboard.format import change, signed

# The keys each switch sets: a programme preset sets the stages and the overheads they replace.
SWITCH_KEYS = {
    "programme": ("programme", "experiment_overhead", "eval_overhead", "debug_overhead"),
    "method": ("method",),
}
OVERHEADS = {"experiment_overhead": ("experiment", "experiments"), "eval_overhead": ("evaluation", "evaluation"),
             "debug_overhead": ("debugging", "debugging")}  # key: (its words, its cost line)
MAIN_RUN_LINES = ("main_compute", "failure_rework", "checkpoint_stalls")
TST_LINES = ("tst_pilot", "tst_switching")
METHOD_NAMES = {"baseline": "the baseline method", "tst": "TST"}


def switched(reference: Scenario, scenario: Scenario) -> list[str]:
    """The switches between `reference` and `scenario`: "programme" when the stages differ, "method" when the
    method does."""
    kinds = []
    if reference.programme != scenario.programme:
        kinds.append("programme")
    if reference.method != scenario.method:
        kinds.append("method")
    return kinds


def before(reference: Scenario, scenario: Scenario, kind: str) -> Scenario:
    """`scenario` with the reference's keys of one switch: what the plan would be without it."""
    return scenario.model_copy(update={key: getattr(reference, key) for key in SWITCH_KEYS[kind]})


def _usd(value: float) -> str:
    return catalogue.text("cost_total_usd", value)


def _lines(result: Any, names: tuple[str, ...]) -> float:
    return sum(result["cost_breakdown"][name] for name in names)


def _overheads(old: Scenario, new: Scenario) -> tuple[str, float, tuple[str, ...]]:
    """The overheads `new` lowers from `old`: ("1× experiment and 0.05× evaluation overheads", count, cost lines)."""
    lowered = [key for key in OVERHEADS if getattr(new, key) < getattr(old, key)]
    words = [f"{getattr(old, key):g}× {OVERHEADS[key][0]}" for key in lowered]
    text = " and ".join([", ".join(words[:-1]), words[-1]] if len(words) > 2 else words)
    return f"{text} overhead{'s' if len(words) > 1 else ''}", len(words), tuple(OVERHEADS[key][1] for key in lowered)


def _programme(old: Scenario, new: Scenario, old_result: Any, new_result: Any, total: str) -> str:
    """The stages' cost against the overheads they replace (or that replace them)."""
    stages_old, stages_new = (_lines(result, ("programme_stages",)) for result in (old_result, new_result))
    adding = bool(new.programme)
    gained, lost = (old, new) if adding else (new, old)
    words, count, lines = _overheads(gained, lost)
    stages = f"The programme's stages ({_usd(stages_new if adding else stages_old)})"
    if not count:
        verb = "add to" if adding else "leave"
        return f"{stages} {verb} the plan: total {total}."
    replaced = _lines(old_result if adding else new_result, lines) - _lines(new_result if adding else old_result, lines)
    overheads = f"the {words} ({_usd(replaced)})"
    if adding:
        return f"{stages} replace {overheads}: total {total}."
    return f"{overheads[:1].upper()}{overheads[1:]} replace{'s' if count == 1 else ''} " \
           f"{stages[:1].lower()}{stages[1:]}: total {total}."


def _method(old: Scenario, new: Scenario, old_result: Any, new_result: Any, total: str) -> str:
    """The main run with each method, and TST's pilot and switching."""
    main = f"main run {_usd(_lines(old_result, MAIN_RUN_LINES))} → {_usd(_lines(new_result, MAIN_RUN_LINES))}"
    tst = _lines(new_result if new.method == "tst" else old_result, TST_LINES)
    extra = f", TST's pilot and switching {signed(tst if new.method == 'tst' else -tst, '$')}" if tst else ""
    return f"{METHOD_NAMES[new.method][:1].upper()}{METHOD_NAMES[new.method][1:]} in place of " \
           f"{METHOD_NAMES[old.method]}: {main}{extra}: total {total}."


def sentence(kind: str, old: Scenario, new: Scenario, old_result: Any, new_result: Any) -> str:
    """One switch in words with its amounts; `old` is `before(...)` of `new`, the results their engine outputs."""
    total = change(new_result["cost_total_usd"], old_result["cost_total_usd"], "$")
    describe = _programme if kind == "programme" else _method
    return describe(old, new, old_result, new_result, total)
