"""The server process's settings (`dashboard.ui.server`, started from `app.py` by `dashboard.ui.warm`): browser
connections without Nagle's delay, and the start-up objects frozen out of the garbage collector's passes."""

import gc
import logging
import socket
import sys

import pytest

from dashboard.ui import server, warm

LINUX = sys.platform.startswith("linux")


def _nodelay(sock: socket.socket) -> bool:
    return bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))


@pytest.fixture
def listening():
    """A listening socket bound as Streamlit binds its own: protocol number 0, which asyncio leaves with Nagle on."""
    sock = socket.socket(family=socket.AF_INET)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    yield sock
    sock.close()


def _connected(listening: socket.socket) -> tuple[socket.socket, socket.socket]:
    client = socket.create_connection(listening.getsockname())
    accepted, _ = listening.accept()
    return client, accepted


def test_a_socket_bound_as_streamlit_binds_it_keeps_nagle(listening):
    client, accepted = _connected(listening)
    with client, accepted:
        assert listening.proto == 0  # so asyncio's own TCP_NODELAY is skipped (uvicorn issue 3149)
        assert not _nodelay(accepted)


@pytest.mark.skipif(not LINUX, reason="the open sockets are listed from /proc/self/fd, on Linux only")
def test_the_listening_socket_and_open_connections_lose_nagle(listening):
    client, before = _connected(listening)
    with client, before:
        assert server.connections_without_delay() >= 3  # the listener and both ends of the connection
        assert _nodelay(listening) and _nodelay(before)
        later_client, later = _connected(listening)
        with later_client, later:
            assert _nodelay(later)  # passed on by the listening socket to the connections it accepts


def test_without_a_list_of_open_files_nothing_changes(monkeypatch, listening):
    monkeypatch.setattr(server, "_FDS", "/nonexistent/fd")
    assert server.connections_without_delay() == 0
    assert not _nodelay(listening)


def test_the_freeze_loads_the_pages_modules_and_freezes_what_is_alive(monkeypatch):
    monkeypatch.delitem(sys.modules, "dashboard.ui.compare_view", raising=False)
    try:
        before = gc.get_freeze_count()
        server.freeze_start_up()
        assert "dashboard.ui.compare_view" in sys.modules
        assert gc.get_freeze_count() > before
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
