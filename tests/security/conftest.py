"""Fixtures for the security tests: the AppTest ones (tests/support/app_fixtures.py), and the hostile corpus
written once per test session into a temporary folder (tests/support/hostile_corpus.py)."""

from pathlib import Path

import pytest
from app_fixtures import APP, app, clear_caches, no_sign_in, store_url  # noqa: F401 - fixtures pytest finds by name
from hostile_corpus import write_corpus

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> dict[str, Path]:
    return write_corpus(tmp_path_factory.mktemp("hostile"))
