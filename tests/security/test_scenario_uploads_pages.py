"""AppTest: hostile scenario files uploaded on the Plan page, the Compare import and the Retrospective's plan upload.

Each is refused with a readable message naming the file, nothing changes, and no exception box appears.
"""

import pytest
from shown_text import shown

from dashboard.core.json_input import MAX_DEPTH

HOSTILE = {
    "100000-deep": ("[" * 100_000 + "]" * 100_000, "nested 100,000 levels deep"),
    "5000-digit-int": ('{"gpu_count": ' + "9" * 5_000 + "}", "has 5,000 digits: at most 40 are read"),
    "duplicate-key": ('{"gpu_count": 8, "gpu_count": 4096}', "the key 'gpu_count' appears twice"),
    "true-gpu-count": ('{"gpu_count": true}', "gpu_count = True: Input should be a valid integer"),
}
assert MAX_DEPTH < 100_000


def _errors(at) -> list[str]:
    return [shown(element.value) for element in at.error]


@pytest.mark.parametrize(("text", "message"), HOSTILE.values(), ids=list(HOSTILE))
def test_the_plan_upload_refuses_it_and_keeps_the_scenario(app, text, message):
    at = app.run()
    before = at.session_state["plan.scenario"]
    at.sidebar.file_uploader(key="plan.upload").set_value(("plan.json", text.encode(), "application/json")).run()
    assert not at.exception
    assert any(error.startswith("plan.json was not loaded: ") and message in error for error in _errors(at))
    assert at.session_state["plan.scenario"] == before


@pytest.mark.parametrize(("text", "message"), HOSTILE.values(), ids=list(HOSTILE))
def test_the_compare_import_refuses_it_and_saves_nothing(app, text, message):
    at = app.run().switch_page("app_pages/compare.py").run()
    at.sidebar.file_uploader(key="compare.upload.0").set_value(("plans.json", text.encode(), "application/json"))
    at.run()
    assert not at.exception
    assert any(error.startswith("Nothing imported: plans.json: ") and message in error for error in _errors(at))
    assert "No saved scenarios yet" in at.info[0].value


@pytest.mark.parametrize(("text", "message"), HOSTILE.values(), ids=list(HOSTILE))
def test_the_retrospective_plan_upload_refuses_it(app, text, message):
    at = app.run().switch_page("app_pages/retro.py")
    at.query_params["retro.view"] = "Plan vs actual"
    at.run()
    at.selectbox(key="retro.plan").set_value("Upload a scenario JSON").run()
    at.file_uploader(key="retro.plan_upload").set_value(("plan.json", text.encode(), "application/json")).run()
    assert not at.exception
    assert any(error.startswith("plan.json was not loaded: ") and message in error for error in _errors(at))
