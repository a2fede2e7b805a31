"""The app's scenario store: one connection pool per store URL, shared by every session.

The URL is `$PLANNER_STORE_URL`, else a SQLite file in the user's data folder (`dashboard.store.urls`); owners
recorded before issuers were get `$PLANNER_LEGACY_OWNER_ISSUER` when it is set.
Opening it can fail (a server that is down, a locked file); the page shows the message and how to fix it.
"""

from __future__ import annotations

import streamlit as st

from dashboard import settings
from dashboard.store.errors import StoreUnavailableError
from dashboard.store.scenario_store import ScenarioStore
from dashboard.store.urls import default_store_url


@st.cache_resource(max_entries=4, show_spinner="Opening the scenario store…")
def _store(url: str, legacy_owner_issuer: str | None) -> ScenarioStore:
    return ScenarioStore(url, legacy_owner_issuer=legacy_owner_issuer)


def scenario_store() -> ScenarioStore:
    """The store at the configured URL (raises `StoreError` with a one-line message when it cannot be used, or when
    ``PLANNER_LEGACY_OWNER_ISSUER`` is not an issuer)."""
    try:
        legacy_issuer = settings.legacy_owner_issuer()
    except settings.SettingError as error:
        raise StoreUnavailableError(str(error)) from None
    return _store(default_store_url(), legacy_issuer)
