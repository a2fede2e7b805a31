"""The server's start-up thread (`dashboard.ui.warm`) and its freeze of the objects alive after start-up
(`dashboard.ui.server`), which keeps them out of every later garbage collection pass."""

import gc
import logging
import sys

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
    monkeypatch.setattr(warm.warm, "warm_up", lambda: done.append("warm-up"))
    monkeypatch.setattr(warm.server, "freeze_start_up", lambda: done.append("freeze"))
    warm.start_up()
    assert done == ["warm-up", "freeze"]


def test_a_failed_freeze_is_logged_not_raised(monkeypatch, caplog):
    def fail():
        raise RuntimeError("no")

    monkeypatch.setattr(warm.warm, "warm_up", lambda: None)
    monkeypatch.setattr(warm.server, "freeze_start_up", fail)
    with caplog.at_level(logging.WARNING):
        warm.start_up()
    assert "freezing the start-up objects failed" in caplog.text


def test_no_thread_when_the_setting_is_off(monkeypatch):
    monkeypatch.setenv("PLANNER_WARM_UP", "0")
    warm.start_warm_up.clear()
    assert warm.start_warm_up() is None
