"""The server benches' websocket client (`bench.websocket_client`) against real `streamlit run` servers: it moves a
widget as a browser does and reads what the rerun drew. No time is asserted."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from served_app import free_port, served

from bench.websocket_client import Session, connection, multiselect, slider

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def serve(tmp_path):
    def start(app: Path):
        env = {**os.environ, "PLANNER_STORE_URL": f"sqlite:///{tmp_path / 'scenarios.db'}"}
        port = free_port()
        command = [sys.executable, "-m", "streamlit", "run", str(app), "--server.headless", "true",
                   "--server.address", "127.0.0.1", "--server.port", str(port)]
        return served(command, port, ROOT, env)

    return start


def _metric(rerun) -> str:
    return next(element.metric.body for element in rerun.elements if element.WhichOneof("type") == "metric")


def test_a_slider_move_reruns_the_tuned_reference_page_with_the_new_value(serve):
    with serve(ROOT / "bench" / "tuned_reference_app.py") as url, connection(url) as socket_:
        session = Session(socket_)
        frequency = session.rerun().widget("slider", "Frequency")
        moved = session.rerun(slider(frequency, 37))
    x = np.linspace(0.0, 1.0, 100)  # the reference page's sum of |sin(2π·37·x) + 3.7·x| over 100 points
    assert _metric(moved) == f"{float(np.abs(np.sin(2 * np.pi * 37 * x) + x * 3.7).sum()):,.1f}"
    assert not any(element.WhichOneof("type") == "exception" for element in moved.elements)
    assert moved.tile_s <= moved.finished_s


def test_the_retrospective_filters_the_bench_moves_are_found_and_applied(serve):
    with serve(ROOT / "dashboard" / "app.py") as url, connection(url) as socket_:
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
