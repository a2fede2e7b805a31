"""The server's one start-up thread, started after its first page is drawn so that it never delays it: the query
layer's warm-up (``dashboard.retro.warm``), then the freeze of the objects alive after start-up
(``dashboard.ui.server``). Off with ``PLANNER_WARM_UP=0``, as in the tests.

It runs in a `streamlit run` server only (``in_server``): not under AppTest, nor in a bare ``python app.py``, where
the process may end at once. And it cannot crash the process at exit: a daemon thread still inside DuckDB when the
interpreter finalises is torn down mid-call ("terminate called without an active exception", exit 134), so an
``atexit`` hook asks it to stop after its current query and waits for it (``EXIT_WAIT_S`` at most)."""

from __future__ import annotations

import atexit
import logging
import threading

import streamlit as st
from streamlit import config, runtime

from dashboard import settings
from dashboard.retro import warm
from dashboard.ui import server

EXIT_WAIT_S = 30.0  # the warm-up on DuckDB ends within a few seconds; a Spark query may take longer
_STOP = threading.Event()


def in_server() -> bool:
    """Whether the script runs in a `streamlit run` server: a Runtime exists (none in bare mode) and it is not
    AppTest's (which installs a mock Runtime and sets the hidden ``global.appTest`` option while it runs)."""
    return runtime.exists() and not config.get_option("global.appTest")


def start_up(stop: threading.Event = _STOP) -> None:
    """The query layer's warm-up, then the freeze (each failure logged, never raised: the pages then compile their
    queries when first drawn, and each rerun's collection walks every object, as without them); neither once
    ``stop`` is set."""
    warm.warm_up(stop=stop)
    if stop.is_set():
        return
    try:
        server.freeze_start_up()
    except Exception:
        logging.getLogger(__name__).warning("freezing the start-up objects failed", exc_info=True)


def stop_start_up(thread: threading.Thread, timeout: float = EXIT_WAIT_S) -> None:
    """At exit (before the interpreter finalises): ask ``thread`` to stop after its current query, wait for it."""
    _STOP.set()
    thread.join(timeout)


@st.cache_resource(show_spinner=False)
def start_warm_up() -> threading.Thread | None:
    """The start-up thread, started on the first call in a server process (None when the setting turns it off or
    outside a server)."""
    if not settings.warm_up() or not in_server():
        return None
    thread = threading.Thread(target=start_up, name="planner-start-up", daemon=True)
    atexit.register(stop_start_up, thread)
    thread.start()
    return thread
