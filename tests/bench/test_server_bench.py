"""The server benches' websocket client (`bench.websocket_client`) against real `streamlit run` servers started by
the shared helper (`bench.served`): it moves a widget as a browser does and reads what the rerun drew. No time is
asserted."""

import numpy as np
import pytest

from bench.served import ROOT, ServerDidNotStart, serve
from bench.websocket_client import Session, connection, multiselect, slider


def _metric(rerun) -> str:
    return next(element.metric.body for element in rerun.elements if element.WhichOneof("type") == "metric")


def test_a_slider_move_reruns_the_tuned_reference_page_with_the_new_value():
    with serve(ROOT / "bench" / "tuned_reference_app.py") as server, connection(server.url) as socket_:
        session = Session(socket_)
        frequency = session.rerun().widget("slider", "Frequency")
        moved = session.rerun(slider(frequency, 37))
    x = np.linspace(0.0, 1.0, 100)  # the reference page's sum of |sin(2π·37·x) + 3.7·x| over 100 points
    assert _metric(moved) == f"{float(np.abs(np.sin(2 * np.pi * 37 * x) + x * 3.7).sum()):,.1f}"
    assert not any(element.WhichOneof("type") == "exception" for element in moved.elements)
    assert moved.tile_s <= moved.finished_s


def test_the_retrospective_filters_the_bench_moves_are_found_and_applied():
    with serve(ROOT / "dashboard" / "app.py") as server, connection(server.url) as socket_:
        session = Session(socket_, page="retrospective")
        drawn = session.rerun()
        teams, dates = drawn.widget("multiselect", "Teams"), drawn.widget("slider", "Dates (UTC)")
        assert "llm-eval" in teams.options
        everyone = _metric(drawn)
        one_team = session.rerun(multiselect(teams, ["llm-eval"]))
        shorter = session.rerun(slider(dates, dates.min, dates.max - 30 * dates.step))
    assert _metric(one_team) != everyone  # the first tile (cost) of one team's rows
    assert _metric(shorter) != _metric(one_team)  # 30 fewer days of that team
    with pytest.raises(SystemExit, match="no multiselect labelled"):
        drawn.widget("multiselect", "Nothing")


def test_a_server_that_cannot_start_is_reported_with_its_stderr(tmp_path):
    app = tmp_path / "missing.py"
    with pytest.raises(ServerDidNotStart, match="missing.py"), serve(app):
        pass
