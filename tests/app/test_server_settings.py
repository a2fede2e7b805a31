"""The server's start-up thread (`dashboard.ui.warm`) and its freeze of the objects alive after start-up
(`dashboard.ui.server`), which keeps them out of every later garbage collection pass; the thread starts in a
`streamlit run` server only, and its exit hook stops it. (tests/app/test_warm_up_exit.py exits processes amid it.)"""

import gc
import logging
import os
import sys
import threading
import time

from streamlit.testing.v1 import AppTest

from bench.served import serve
from bench.websocket_client import Session, connection
from dashboard.ui import server, warm


def test_the_freeze_loads_the_pages_modules_and_freezes_what_is_alive(monkeypatch):
    monkeypatch.delitem(sys.modules, "dashboard.ui.compare_view", raising=False)
    alive = [[]]
    try:
        server.freeze_start_up()
        later = [[]]
        walked = gc.get_objects()  # what a collection pass walks
        assert "dashboard.ui.compare_view" in sys.modules
        assert not any(item is alive for item in walked)  # frozen: never walked again
        assert any(item is later for item in walked)  # made after the freeze: still collected when garbage
    finally:
        gc.unfreeze()


def test_the_start_up_thread_warms_up_then_freezes(monkeypatch):
    done = []
    monkeypatch.setattr(warm.warm, "warm_up", lambda stop: done.append("warm-up"))
    monkeypatch.setattr(warm.server, "freeze_start_up", lambda: done.append("freeze"))
    warm.start_up(threading.Event())
    assert done == ["warm-up", "freeze"]


def test_a_stopped_start_up_does_not_freeze(monkeypatch):
    done = []
    stop = threading.Event()
    monkeypatch.setattr(warm.warm, "warm_up", lambda stop: (done.append("warm-up"), stop.set()))
    monkeypatch.setattr(warm.server, "freeze_start_up", lambda: done.append("freeze"))
    warm.start_up(stop)
    assert done == ["warm-up"]


def test_the_exit_hook_stops_the_thread_and_waits_for_it(monkeypatch):
    stop = threading.Event()
    monkeypatch.setattr(warm, "_STOP", stop)
    thread = threading.Thread(target=lambda: stop.wait(10) and time.sleep(0.2), daemon=True)
    thread.start()
    warm.stop_start_up(thread, timeout=10)
    assert stop.is_set() and not thread.is_alive()


def test_a_failed_freeze_is_logged_not_raised(monkeypatch, caplog):
    def fail():
        raise RuntimeError("no")

    monkeypatch.setattr(warm.warm, "warm_up", lambda stop: None)
    monkeypatch.setattr(warm.server, "freeze_start_up", fail)
    with caplog.at_level(logging.WARNING):
        warm.start_up(threading.Event())
    assert "freezing the start-up objects failed" in caplog.text


def test_no_thread_when_the_setting_is_off(monkeypatch):
    monkeypatch.setenv("PLANNER_WARM_UP", "0")
    warm.start_warm_up.clear()
    assert warm.start_warm_up() is None


def test_no_thread_outside_a_server(monkeypatch):
    """Bare mode (no Runtime) and AppTest (a mock Runtime, ``global.appTest`` set) start none, warm-up on."""
    monkeypatch.setenv("PLANNER_WARM_UP", "1")
    warm.start_warm_up.clear()
    assert not warm.in_server()
    assert warm.start_warm_up() is None
    at = AppTest.from_string("""
import threading
import streamlit as st
from dashboard.ui import warm
st.write(f"in server: {warm.in_server()}; thread: {warm.start_warm_up()}")
""", default_timeout=30).run()
    assert [text.value for text in at.markdown] == ["in server: False; thread: None"]
    assert not any(thread.name == "planner-start-up" for thread in threading.enumerate())


WARMED_APP = """
import runpy
import sys
from pathlib import Path

sys.path.insert(0, {root!r})
from dashboard.query import compiled
from dashboard.retro import warm as query_warm

if not hasattr(query_warm, "real_warm_up"):  # once per process: the script reruns for each session
    query_warm.real_warm_up = query_warm.warm_up

    def marked(*args, **kwargs):
        query_warm.real_warm_up(*args, **kwargs)
        Path({marker!r}).write_text(str(len(compiled._COMPILED)))

    query_warm.warm_up = marked
runpy.run_path({app!r}, run_name="__main__")
"""


def test_a_streamlit_run_server_warms_up_after_its_first_page(tmp_path):
    """`streamlit run` of the app (with a wrapper marking the end of the real warm-up): one browser session draws
    the Plan page, then the start-up thread compiles the Retrospective's queries."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    marker = tmp_path / "warmed"
    app = tmp_path / "warmed_app.py"
    app.write_text(WARMED_APP.format(root=root, marker=str(marker), app=os.path.join(root, "dashboard", "app.py")))
    with serve(app, env={"PLANNER_WARM_UP": "1"}) as running, connection(running.url) as socket_:
        drawn = Session(socket_).rerun()
        assert not any(element.WhichOneof("type") == "exception" for element in drawn.elements)
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
    assert marker.exists(), "the server's start-up thread did not finish its warm-up within 120 s"
    assert int(marker.read_text()) > 0  # it compiled the tabs' queries
