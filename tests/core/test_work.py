"""The work a Plan rerun asks of the engine, predicted by hand: 2 rows per priced run per main row."""

import pytest

from dashboard.core import work
from dashboard.core.scenario import default_scenario, scenario_from_dict

SETTING = "PLANNER_RERUN_MAX_ROWS"


def _plan(*stages: dict):
    return scenario_from_dict(default_scenario().to_json_dict() | {"programme": list(stages)})


LADDER_10 = {"kind": "scaling_ladder", "runs": 10}


@pytest.mark.parametrize(("plan", "baseline", "fits", "rows"), [
    (default_scenario(), None, None, 0),  # no programme: nothing beyond the main run
    (_plan(LADDER_10), None, True, 2 * 10 * 23),  # 10 runs, twice, for the plan and its Monte Carlo's 23 rows
    (_plan(LADDER_10), None, False, 2 * 10 * (23 + 48)),  # and the 48 fixes "Can it run?" may price
    (_plan(LADDER_10), None, None, 2 * 10 * (23 + 48)),  # not known to fit: the fixes counted
    (_plan(LADDER_10, {"kind": "ablations", "runs": 500}, {"kind": "evaluation"}), None, True, 2 * 11 * 23),
    (_plan(LADDER_10), _plan({"kind": "scaling_ladder", "runs": 40}), True, 2 * 10 * 23 + 2 * 40),
])
def test_the_rows_of_a_plan_are_its_priced_runs_twice_per_main_row(plan, baseline, fits, rows):
    assert work.plan_rows(plan, baseline, fits) == rows


def test_a_plan_over_the_budget_is_refused_with_its_runs_named():
    plan = _plan({"kind": "scaling_ladder", "runs": 30})  # 2 × 30 × (23 + 48) = 4,260 rows, fitting or not
    assert work.plan_refusal(plan, None, 4_260, SETTING) is None
    assert work.plan_refusal(plan, None, 4_259, SETTING) == (
        "the programme's 30 priced runs would price 4,260 engine rows in one rerun; at most 4,259 a rerun "
        "(PLANNER_RERUN_MAX_ROWS): fewer ladder runs or stages")


def test_the_costliest_open_charts_are_refused_until_the_rerun_fits():
    plan = _plan(LADDER_10)  # the plan: 460 rows; checkpoint 2 × 10 × 121 = 2,420; step 220; spot 1,860
    assert work.refused_charts(plan, None, True, ["Where the step goes", "Checkpoint interval"], 3_100, SETTING) == {}
    refused = work.refused_charts(plan, None, True, ["Where the step goes", "Checkpoint interval"], 3_099, SETTING)
    assert list(refused) == ["Checkpoint interval"]
    assert refused["Checkpoint interval"] == (
        "Not drawn: this chart prices the plan 121 times, and with the programme's 10 priced runs that is 2,420 "
        "engine rows beside the plan's 460; at most 3,099 a rerun (PLANNER_RERUN_MAX_ROWS). Fewer ladder runs or "
        "stages draw it.")
    three = ["Spot share", "Where the step goes", "Checkpoint interval"]
    assert set(work.refused_charts(plan, None, True, three, 680, SETTING)) == {"Checkpoint interval", "Spot share"}
    assert set(work.refused_charts(plan, None, True, three, 679, SETTING)) == set(three)  # 460 + 220 is over too


def test_a_chart_that_prices_nothing_again_is_drawn_even_past_the_budget():
    plan = _plan(LADDER_10)  # the plan alone (460 rows) is past a budget lowered since it was applied
    assert set(work.refused_charts(plan, None, True, ["Budget", "Checkpoint interval"], 400, SETTING)) == {
        "Checkpoint interval"}
