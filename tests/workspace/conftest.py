"""The workspace tests' shared fixture: an empty workspace folder of the test's own (``PLANNER_WORKSPACE_DIR``)."""

from pathlib import Path

import pytest

from dashboard import settings


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "workspace"
    monkeypatch.setenv(settings.WORKSPACE_DIR, str(folder))
    return folder
