"""AppTest fixtures for the security tests: the entry point, an empty store per test and clean caches."""

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"


@pytest.fixture(autouse=True)
def store_url(tmp_path, monkeypatch) -> str:
    url = f"sqlite:///{tmp_path / 'scenarios.db'}"
    monkeypatch.setenv("PLANNER_STORE_URL", url)
    return url


@pytest.fixture(autouse=True)
def clear_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()


@pytest.fixture
def app() -> AppTest:
    return AppTest.from_file(str(APP), default_timeout=60)
