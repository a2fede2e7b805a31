"""AppTest: the Plan page shows the engine's numbers and keeps its state on a bad scenario upload."""

import json

from dashboard.core.engine import estimate
from dashboard.core.scenario import Scenario, default_scenario
from dashboard.ui.format import count, usd


def _metric(at, label):
    return next(m for m in at.metric if m.label == label)


def test_plan_page_shows_the_default_scenario(app):
    at = app.run()
    assert not at.exception
    expected = estimate(default_scenario())
    assert _metric(at, "Total cost").value == usd(expected["cost_total_usd"])
    assert _metric(at, "GPU-hours").value == count(expected["gpu_hours_total"])
    assert _metric(at, "Budget").value == expected["budget_status"]


def test_uploading_a_scenario_changes_the_numbers(app):
    at = app.run()
    before = _metric(at, "Total cost").value
    llama = Scenario(name="Llama 3.1 405B", total_params=405e9, tokens=15.6e12, gpu_count=16384, budget_usd=1e9)
    at.sidebar.file_uploader[0].set_value(("llama.json", json.dumps(llama.to_json_dict()).encode(), "application/json"))
    at.run()
    assert not at.exception
    after = _metric(at, "Total cost").value
    assert after != before
    assert after == usd(estimate(llama)["cost_total_usd"])


def test_bad_scenario_upload_shows_an_error_and_keeps_the_previous_state(app):
    at = app.run()
    before = _metric(at, "Total cost").value
    at.sidebar.file_uploader[0].set_value(("bad.json", b'{"schema": 1, "mfu": 7}', "application/json"))
    at.run()
    assert not at.exception
    assert any("mfu = 7 is out of range" in e.value for e in at.error)
    assert _metric(at, "Total cost").value == before
