"""The app's scenario store: one connection pool per store URL, shared by every session.

The URL is `$PLANNER_STORE_URL`, else a SQLite file in the user's data folder (`dashboard.store.urls`).
Opening it can fail (a server that is down, a locked file); the page shows the message and how to fix it.
"""

from __future__ import annotations

import streamlit as st

from dashboard.store.scenario_store import ScenarioStore
from dashboard.store.urls import default_store_url


@st.cache_resource(max_entries=4, show_spinner="Opening the scenario store…")
def _store(url: str) -> ScenarioStore:
    return ScenarioStore(url)


def scenario_store() -> ScenarioStore:
    """The store at the configured URL (raises `StoreError` with a one-line message when it cannot be used)."""
    return _store(default_store_url())
