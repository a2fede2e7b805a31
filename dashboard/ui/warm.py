"""The server's one start-up thread, started after its first page is drawn so that it never delays it: the query
layer's warm-up (``dashboard.query.warm``), then the freeze of the objects alive after start-up
(``dashboard.ui.server``). Off with ``PLANNER_WARM_UP=0``, as in the tests."""

from __future__ import annotations

import logging
import threading

import streamlit as st

from dashboard import settings
from dashboard.query import warm
from dashboard.ui import server


def start_up() -> None:
    """The query layer's warm-up, then the freeze (each failure logged, never raised: the pages then compile their
    queries when first drawn, and each rerun's collection walks every object, as without them)."""
    warm.warm_up()
    try:
        server.freeze_start_up()
    except Exception:  # noqa: BLE001
        logging.getLogger(__name__).warning("freezing the start-up objects failed", exc_info=True)


@st.cache_resource(show_spinner=False)
def start_warm_up() -> threading.Thread | None:
    """The start-up thread, started on the first call in the process (None when the setting turns it off)."""
    if not settings.warm_up():
        return None
    thread = threading.Thread(target=start_up, name="planner-start-up", daemon=True)
    thread.start()
    return thread
