"""AppTest fixtures shared by tests/app and tests/security: the entry point, an empty store and clean caches."""

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard.ui import identity, upload_store

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
TIMEOUT_S = 60


@pytest.fixture(autouse=True)
def store_url(tmp_path, monkeypatch) -> str:
    """Every app test gets its own empty scenario store (a SQLite file in its temporary folder)."""
    url = f"sqlite:///{tmp_path / 'scenarios.db'}"
    monkeypatch.setenv("PLANNER_STORE_URL", url)
    return url


@pytest.fixture(autouse=True)
def no_sign_in(monkeypatch):
    """Sign-in off, whatever `.streamlit/secrets.toml` this machine has (a test turns it on by patching
    `dashboard.ui.identity`, as tests/app/test_compare_owners.py does)."""
    monkeypatch.setattr(identity, "providers", lambda: [])


@pytest.fixture(autouse=True)
def clear_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    upload_store.clear()
    yield
    st.cache_data.clear()
    upload_store.clear()


@pytest.fixture
def app() -> AppTest:
    return AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
