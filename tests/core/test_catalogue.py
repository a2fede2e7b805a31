"""The catalogue: every output the engine returns, every Monte Carlo figure and every input has one entry."""

from typing import get_type_hints

import pytest

from dashboard.core import catalogue
from dashboard.core.engine import LINE_ITEMS, PlanResult, TstComparison, scenario_outputs
from dashboard.core.presets import presets
from dashboard.core.questions import optimal_for_budget, optimal_for_target_loss
from dashboard.core.scenario import Scenario, default_scenario
from dashboard.core.storage import TIERS
from dashboard.core.uncertainty import monte_carlo

SCENARIOS = {"default": default_scenario(), **presets()}


def _dotted(result):
    return {name for name, _ in catalogue.flatten(result)}


def _with_parents(names):
    """Leaf names and the names of the dicts that hold them (`cost_breakdown` for `cost_breakdown.people`; `evidence`
    and `evidence.cost_total_usd` for `evidence.cost_total_usd.grade`)."""
    parts = [name.split(".") for name in names]
    return {".".join(part[:end]) for part in parts for end in range(1, len(part) + 1)}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_engine_output_has_an_entry_and_every_entry_is_an_output(name):
    produced = _with_parents(_dotted(scenario_outputs(SCENARIOS[name])))
    assert produced == set(catalogue.OUTPUTS)


def test_the_typed_result_names_the_same_outputs():
    assert set(get_type_hints(PlanResult)) == {name for name in catalogue.OUTPUTS if "." not in name}
    assert {f"tst.{key}" for key in get_type_hints(TstComparison)} == {
        name for name in catalogue.OUTPUTS if name.startswith("tst.")}
    assert {f"cost_breakdown.{key}" for key in LINE_ITEMS} == {
        name for name in catalogue.OUTPUTS if name.startswith("cost_breakdown.")}
    assert {f"storage_cost_by_tier.{key}" for key in TIERS} == {
        name for name in catalogue.OUTPUTS if name.startswith("storage_cost_by_tier.")}


def test_every_monte_carlo_figure_has_an_entry_and_every_entry_is_one():
    summary = monte_carlo(default_scenario(), 200, 0).summary()
    produced = _dotted(summary)
    tornado = {name for name in produced if name.startswith("tornado.")}
    assert produced - tornado == set(catalogue.MONTE_CARLO)
    for name in tornado:  # tornado bars are spelled out from their input's entry
        assert catalogue.entry(name).label.startswith(catalogue.INPUTS[name.split(".")[1]].label)


def test_every_answer_of_the_three_questions_has_an_entry_and_every_entry_is_one():
    budget = optimal_for_budget(default_scenario(), 1e6)
    loss = optimal_for_target_loss(default_scenario(), 2.0)
    for answer in (budget, loss):
        for name in _dotted(answer):
            catalogue.entry(name)  # KeyError names a key the readable table would print without a label
    repeated = set(catalogue.OUTPUTS) | set(catalogue.INPUTS)
    assert (_dotted(budget) | _dotted(loss)) - _with_parents(repeated) == set(catalogue.ANSWERS)


def test_every_scenario_key_has_an_entry_and_every_entry_is_a_key():
    keys = set(Scenario.model_fields) | {"schema"}  # the file spells schema_ as "schema"
    assert set(catalogue.INPUTS) == keys


def test_every_entry_has_a_label_and_a_known_unit():
    from dashboard.format import UNITS

    tables = (catalogue.OUTPUTS, catalogue.MONTE_CARLO, catalogue.ANSWERS, catalogue.INPUTS)
    entries = [entry for table in tables for entry in table.values()]
    assert all(entry.label for entry in entries)
    assert {entry.unit for entry in entries} <= set(UNITS) | {catalogue.TEXT}
    outputs = [entry for entry in catalogue.OUTPUTS.values() if entry.unit != catalogue.TEXT]
    assert all(entry.formula for entry in outputs)


def test_labels_are_unique_within_outputs():
    labels = [entry.label for entry in catalogue.OUTPUTS.values()]
    assert len(labels) == len(set(labels))


# Hand-computed display texts of named numbers.
@pytest.mark.parametrize(("name", "value", "text"), [
    ("cost_total_usd", 441_234.5, "$441k"),
    ("cost_per_million_tokens", 0.2206, "$0.221"),
    ("cost_breakdown.storage", 69.02, "$69"),
    ("model_flops", 8.4e22, "8.4×10²² FLOPs"),
    ("wall_clock_days", 4.83, "4.83 days"),
    ("storage_peak_gb", 18_720.0, "18.7 TB"),
    ("overhead_fraction", 0.00982, "0.982 %"),
    ("p90.cost_total_usd", 650_400.0, "$650k"),
    ("prob_over_budget", 0.48, "48 %"),
    ("gpu_count", 1024, "1,024"),
    ("mfu", 0.4, "40 %"),
    ("budget_status", "within", "within"),
    ("tornado.mfu.input_low", 0.26, "26 %"),
    ("tornado.mfu.high", 402_000.0, "$402k"),
])
def test_text(name, value, text):
    assert catalogue.text(name, value) == text


@pytest.mark.parametrize(("name", "difference", "text"), [
    ("cost_total_usd", -12_345.0, "-$12.3k"),
    ("overhead_fraction", 0.012, "+1.2 pp"),
    ("gpu_count", 512, "+512"),
])
def test_delta(name, difference, text):
    assert catalogue.entry(name).delta(difference) == text


def test_an_unknown_name_is_a_key_error():
    with pytest.raises(KeyError, match="no catalogue entry"):
        catalogue.entry("tornado.not_an_input.low")
