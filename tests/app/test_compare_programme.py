"""AppTest: scenarios with programmes are saved, read back, exported and compared; the page's table has the
programme rows, a stage's user-given name shown as text.

The plans are the default 7B on 2T tokens, whose main run does not change between them; "Ladder" adds a scaling
ladder (named by its user) whose cost the "Stage cost: Scaling ladder" row carries, $0 for the single run.
"""

from streamlit.testing.v1 import AppTest

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import default_scenario, scenario_from_dict
from dashboard.core.scenario_bundle import export_bundle, read_bundle
from dashboard.store.scenario_store import ScenarioStore

PAGE = "app_pages/compare.py"
HOSTILE = "<b>ladder</b> [x](https://e.x)"
SINGLE = default_scenario().model_copy(update={"name": "Single"})
LADDER = scenario_from_dict(default_scenario().to_json_dict() | {
    "name": "Ladder", "start_date": "2027-01-04", "experiment_overhead": 0.0,
    "programme": [{"kind": "scaling_ladder", "name": HOSTILE, "runs": 4}, {"kind": "evaluation"}]})


def _outputs(at: AppTest):
    return next(frame.value for frame in at.dataframe if "item" in frame.value.columns)


def _inputs(at: AppTest):
    return [frame.value for frame in at.dataframe if "item" in frame.value.columns][1]


def test_programmes_round_trip_through_the_store_and_the_export():
    assert read_bundle(export_bundle([LADDER, SINGLE])) == [LADDER, SINGLE]
    assert read_bundle(export_bundle([LADDER])) == [LADDER]
    assert LADDER.programme[0].name == HOSTILE and LADDER.start_date == "2027-01-04"


def test_the_store_keeps_the_programme(store_url):
    with ScenarioStore(store_url) as store:
        store.save(LADDER.name, LADDER)
    with ScenarioStore(store_url) as store:
        assert store.load(LADDER.name) == LADDER


def test_the_comparison_table_has_the_programme_rows(app, store_url):
    with ScenarioStore(store_url) as store:
        for scenario in (SINGLE, LADDER):
            store.save(scenario.name, scenario)
    at = app.run().switch_page(PAGE).run()
    at = at.multiselect(key="compare.selected").set_value(["Single", "Ladder"]).run()
    assert not at.exception
    table = _outputs(at).set_index("item")
    single, ladder = (scenario_outputs(scenario)["programme"] for scenario in (SINGLE, LADDER))
    rung_cost = next(stage["cost_usd"] for stage in ladder["stages"] if stage["kind"] == "scaling_ladder")
    # The ladder's programme is the single run's with its experiment overhead (1 × the main run) swapped for the
    # ladder and the evaluations: the same final run, so the totals differ by exactly those stages.
    stage_sum = sum(stage["cost_usd"] for stage in ladder["stages"] if stage["kind"] != "main")
    assert single["final_run_usd"] == ladder["final_run_usd"]
    assert ladder["total_usd"] == single["final_run_usd"] + stage_sum
    rows = {"Programme total": ("programme.total_usd", single["total_usd"], ladder["total_usd"]),
            "Stage cost: Scaling ladder": ("programme.total_usd", 0.0, rung_cost),
            "Final run's share of the programme": ("programme.final_run_share", single["final_run_share"],
                                                   ladder["final_run_share"])}
    for item, (key, first, second) in rows.items():
        assert list(table.loc[item].iloc[:2]) == [catalogue.text(key, first), catalogue.text(key, second)]
    assert "Stage cost: Other experiments" in table.index and "Stage cost: Evaluations" in table.index
    # The inputs that differ show the programme as text (a dataframe cell): the stage's name as its user typed it.
    programme_row = _inputs(at).set_index("item").loc["Programme"]
    assert programme_row.iloc[1] == f"{HOSTILE} (4 runs); Evaluations"
