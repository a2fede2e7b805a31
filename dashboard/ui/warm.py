"""The server's one warm-up of the query layer (``dashboard.query.warm``), in a background thread started after
the first page is drawn, so it never delays that page; off with ``PLANNER_WARM_UP=0``."""

from __future__ import annotations

import threading

import streamlit as st

from dashboard import settings
from dashboard.query import warm


@st.cache_resource(show_spinner=False)
def start_warm_up() -> threading.Thread | None:
    """The warm-up's thread, started on the first call in the process (None when the setting turns it off)."""
    if not settings.warm_up():
        return None
    thread = threading.Thread(target=warm.warm_up, name="planner-warm-up", daemon=True)
    thread.start()
    return thread
