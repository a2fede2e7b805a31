"""AppTest: a PLANNER_ENGINE_URL the planner cannot use stops the Retrospective with a message naming it, not a
traceback."""

import pytest
from shown_text import shown


@pytest.mark.parametrize(("value", "named"), [
    ("nonsense", "PLANNER_ENGINE_URL must be one of"),
    ("local[0]", "PLANNER_ENGINE_URL must be one of"),
    ("nosuchengine://user:secret@host/db", "could not be opened"),
], ids=["not-a-url", "no-cores", "unknown-backend"])
def test_bad_engine_setting_is_explained(app, monkeypatch, value, named):
    monkeypatch.setenv("PLANNER_ENGINE_URL", value)
    at = app.run()
    at.switch_page("app_pages/retro.py")
    at.run()
    assert not at.exception
    messages = " ".join(shown(error.value) for error in at.error)
    assert named in messages
    assert "secret" not in messages
