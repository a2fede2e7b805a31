"""Fixtures for the security tests: the entry point, an empty store per test, clean caches, and the hostile
corpus written once per test session into a temporary folder (tests/support/hostile_corpus.py)."""

from pathlib import Path

import pytest
import streamlit as st
from hostile_corpus import write_corpus
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"


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


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> dict[str, Path]:
    return write_corpus(tmp_path_factory.mktemp("hostile"))
