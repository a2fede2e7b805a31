"""Shared helpers for the import-layer tests."""

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"


@pytest.fixture
def data_dir() -> Path:
    return DATA
