"""AppTest: a new session's first Plan run in a server draws the tiles alone, and the next run the whole page
(`dashboard.ui.first_paint`; the browser asks for that run once the tiles are on screen, tests/browser)."""

import pytest

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import default_scenario
from dashboard.ui import first_paint

TILES = ["Total cost", "GPU-hours", "Wall-clock", "$ per million tokens", "Predicted loss"]


@pytest.fixture
def in_a_server(monkeypatch):
    monkeypatch.setattr(first_paint, "in_server", lambda: True)


def _texts(at) -> list[str]:
    return [element.value for element in [*at.caption, *at.markdown]]


def test_first_run_in_a_server_draws_the_tiles_and_says_what_is_loading(app, in_a_server):
    at = app.run()
    assert not at.exception
    expected = scenario_outputs(default_scenario())
    assert [m.label for m in at.metric][:5] == TILES
    assert at.metric[0].value == catalogue.text("cost_total_usd", expected["cost_total_usd"])
    assert at.metric[5].label.startswith("Budget:")  # the Monte Carlo's tile is on the first screen too
    assert first_paint.LOADING in _texts(at)
    # Nothing below the tiles, nor a sidebar control, is sent yet.
    assert not at.sidebar.selectbox and not at.sidebar.slider and not at.button
    assert "Can it run?" not in [header.value for header in at.subheader]


def test_the_next_run_draws_the_whole_page(app, in_a_server):
    at = app.run()
    at.run()
    assert not at.exception
    assert first_paint.LOADING not in _texts(at)
    assert "Can it run?" in [header.value for header in at.subheader]
    assert [box.label for box in at.sidebar.selectbox][:1] == ["Preset"]
    assert [m.label for m in at.metric][:5] == TILES


def test_outside_a_server_the_first_run_draws_the_whole_page(app):
    at = app.run()
    assert not at.exception
    assert first_paint.LOADING not in _texts(at)
    assert "Can it run?" in [header.value for header in at.subheader]
