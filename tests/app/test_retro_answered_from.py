"""AppTest, issue 52: over a workspace dataset's own rows each Retrospective tab names, in a quiet caption shown as
text, the table its figure read: the rollup its grain and the filters chose, or the rows; a view that is not a
dataset's own rows (an upload, a dataset joined with a run export) names none."""

import re
from pathlib import Path

import pandas as pd
import pytest
from app_fixtures import APP, TIMEOUT_S
from streamlit.testing.v1 import AppTest

from dashboard import settings
from dashboard.workspace import rollups
from dashboard.workspace.imports import import_to_workspace

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
NONE = "(none)"
ROWS = "the rows (242)"  # the bundled quarter's rows


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "workspace"
    monkeypatch.setenv(settings.WORKSPACE_DIR, str(folder))
    return folder


def _answered(at) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", c.value).replace("\u2060", "") for c in at.caption
            if c.value.startswith("Answered from")]


def _open(app, url: dict) -> object:
    at = app.run()
    at.switch_page("app_pages/retro.py")
    for name, value in url.items():
        at.query_params[name] = value
    return at.run()


def _rollup(name: str, built: str) -> str:
    return f"the {rollups.BY_NAME[name].title}, built {built}"


@pytest.mark.parametrize(("tab", "filters", "read"), [
    ("Spend", {}, "daily_team"),
    ("Spend", {"retro.teams": "llm-pretrain"}, "daily_team"),
    ("Spend", {"retro.projects": "pretrain-13b"}, "daily_run"),  # a project filter: the rollup by project
    ("Attribution", {}, "jobs"),  # the smallest by team, project and run since the runs rollup keeps the signs
    ("Waste", {}, "jobs"),  # its sums; its storage lines from the storage rollup, the rows behind each check rows
    ("Waste", {"retro.teams": "llm-pretrain"}, "jobs"),  # the jobs rollup keeps the team
    ("Load profile", {}, "hourly"),
    ("Load profile", {"retro.teams": "llm-pretrain"}, None),  # no hourly rollup keeps the team
    ("Purchase mix", {}, "jobs"),  # the GPU rows by tier, told apart by the signs: the smallest that keeps them
    ("Purchase mix", {"retro.teams": "llm-pretrain"}, "jobs"),
    ("Unit costs", {}, "runs"),  # the rows with tokens (by their sign) and their GPU types: the runs rollup
    ("Unit costs", {"retro.projects": "pretrain-13b"}, "runs"),
])
def test_each_tab_names_the_table_it_read(app, workspace, tab, filters, read):
    info = import_to_workspace(SAMPLES / "focus_sample.csv", "q2")
    at = _open(app, {"retro.dataset": "q2", "retro.runs": NONE, "retro.view": tab, **filters})
    assert not at.exception and not at.error, [e.value for e in at.error]
    built = f"{pd.Timestamp(info.imported_at):%H:%M}"
    behind = f"; the rows behind it from {ROWS}" if tab == "Waste" and read else ""
    if tab == "Waste" and not filters:  # the whole dataset's storage lines from the storage rollup
        behind = f"; storage lines from {_rollup('storage', built)}{behind}"
    assert _answered(at) == [f"Answered from {_rollup(read, built) if read else ROWS}{behind}"]


def test_an_upload_or_a_joined_run_export_names_no_table(app, workspace):
    import_to_workspace(SAMPLES / "focus_sample.csv", "q2")
    at = _open(app, {"retro.dataset": "q2", "retro.keep_runs": "true"})
    at.checkbox(key="retro.keep_runs").check().run()  # the sample's run export joined: not the dataset's own rows
    assert not at.exception and at.selectbox(key="retro.runs").value != NONE
    assert _answered(at) == []
    sample = _open(AppTest.from_file(str(APP), default_timeout=TIMEOUT_S), {})
    assert not sample.exception and _answered(sample) == []  # the bundled quarter, uploaded
