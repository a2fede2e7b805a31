"""AppTest: a Plan rerun prices no more than `dashboard.core.work` predicts, and what would take it past the
session's budget (PLANNER_RERUN_MAX_ROWS) is refused before it runs, with a message naming the programme."""

import json

import pytest
from plan_groups import show_group
from shown_text import shown

from dashboard.core import programme, work
from dashboard.ui.plan_tabs import CHART_TABS, TAB_SLUGS
from dashboard.ui.programme_controls import GROUP_TITLE, widget_key

LADDER_10 = json.dumps([{"kind": "scaling_ladder", "runs": 10}], separators=(",", ":"))


@pytest.fixture
def priced_rows(monkeypatch) -> list[int]:
    """The rows the page prices for programmes: each block of runs handed to the engine."""
    rows: list[int] = []
    real = programme._stacked_cost

    def counted(blocks, cost_arrays, output):
        rows.append(sum(block["gpu_count"].size for block in blocks))
        return real(blocks, cost_arrays, output)

    monkeypatch.setattr(programme, "_stacked_cost", counted)
    return rows


def test_every_chart_that_prices_the_plan_again_is_a_tab():
    assert set(work.CHART_ROWS) <= {name for names in CHART_TABS for name in names}


@pytest.mark.parametrize("left", CHART_TABS[0])
@pytest.mark.parametrize("right", ["TST vs baseline", "Checkpoint interval", "Spot share"])
def test_a_rerun_prices_at_most_the_predicted_rows_and_not_far_below(app, priced_rows, left, right):
    app.query_params["programme"] = LADDER_10
    app.query_params["charts"] = f"{TAB_SLUGS[left]},{TAB_SLUGS[right]}"
    at = app.run()
    assert not at.exception
    predicted = work.plan_rows(at.session_state["plan.scenario"], None, fits=True) + sum(
        2 * 10 * work.CHART_ROWS.get(name, 0) for name in (left, right))
    assert sum(priced_rows) <= predicted
    assert sum(priced_rows) >= 0.9 * predicted  # the prediction follows the page: a new sweep shows here


@pytest.mark.parametrize(("size", "gpus"), [("1e12", "64"), ("3e11", "16")])
def test_a_plan_that_does_not_fit_prices_at_most_its_fixes_more(app, priced_rows, size, gpus):
    app.query_params["programme"] = LADDER_10
    app.query_params["total_params"], app.query_params["gpu_count"] = size, gpus
    at = app.run()
    assert not at.exception
    assert at.session_state["plan.scenario"].programme != ()
    fitting = work.plan_rows(at.session_state["plan.scenario"], None, fits=True)
    assert fitting < sum(priced_rows) <= work.plan_rows(at.session_state["plan.scenario"], None, fits=False)


def test_a_chart_past_the_budget_is_not_drawn_and_says_why(app, priced_rows, monkeypatch):
    monkeypatch.setenv("PLANNER_RERUN_MAX_ROWS", "2000")  # the link: 2 × 10 × (23 + 48) = 1,420
    app.query_params["programme"] = LADDER_10  # the plan: 2 × 10 × 23 = 460 rows
    app.query_params["charts"] = "step,checkpoint"  # 220 rows and 2,420 rows
    at = app.run()
    assert not at.exception
    assert [shown(box.value) for box in at.info] == [
        "Not drawn: this chart prices the plan 121 times, and with the programme's 10 priced runs that is 2,420 "
        "engine rows beside the plan's 460; at most 2,000 a rerun (PLANNER_RERUN_MAX_ROWS). Fewer ladder runs or "
        "stages draw it."]
    titles = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in at.get("plotly_chart")]
    assert not any("checkpoint" in title.lower() for title in titles)
    assert 0 < sum(priced_rows) <= 2000  # the step chart drawn, the refused one never priced


def test_a_link_whose_programme_is_past_the_budget_opens_without_it(app, priced_rows, monkeypatch):
    monkeypatch.setenv("PLANNER_RERUN_MAX_ROWS", "1000")
    app.query_params["programme"] = json.dumps([{"kind": "scaling_ladder", "runs": 30}])  # 2 × 30 × (23 + 48)
    app.query_params["mfu"] = "0.35"
    at = app.run()
    assert not at.exception
    assert ("Link: ignored programme: the programme's 30 priced runs would price 4,260 engine rows in one rerun; "
            "at most 1,000 a rerun (PLANNER_RERUN_MAX_ROWS): fewer ladder runs or stages") in shown(at.warning[0].value)
    plan = at.session_state["plan.scenario"]
    assert plan.programme == () and plan.mfu == 0.35
    assert sum(priced_rows) == 0


def test_a_control_that_takes_the_programme_past_the_budget_is_not_applied(app, monkeypatch):
    monkeypatch.setenv("PLANNER_RERUN_MAX_ROWS", "2000")
    app.query_params["programme"] = LADDER_10  # 2 × 10 × (23 + 48) = 1,420 rows: within
    show_group(app, GROUP_TITLE)
    at = app.run()
    next(box for box in at.number_input if box.key == widget_key(0, "runs")).set_value(30)  # 4,260 rows
    at.run()
    assert not at.exception
    assert at.session_state["plan.scenario"].programme[0].runs == 10
    assert "Programme stages" in shown(at.error[0].value)
    assert any("the programme's 30 priced runs would price 4,260 engine rows in one rerun; at most 2,000 a rerun "
               "(PLANNER_RERUN_MAX_ROWS)" in shown(caption.value) for caption in at.caption)
