"""AppTest: the Retrospective's data key names the content (issue 49). An upload is named by its name and the
SHA-256 of its bytes, a workspace dataset by its version id in dataset.json; so a bill replaced by other rows within
the same second gives a new key and the new rows on the page, and the same content twice the same key."""

import dataclasses
import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from retro_page import open_retro

from dashboard import settings
from dashboard.ui import workspace_view
from dashboard.ui.sources import UPLOAD_KEYS
from dashboard.workspace import datasets, imports
from dashboard.workspace.imports import import_to_workspace

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
FOCUS = SAMPLES / "focus_sample.csv"  # 242 rows, every one used
TEN_ROWS = b"".join(FOCUS.read_bytes().splitlines(keepends=True)[:11])  # the header and the first ten rows
NONE = "(none)"


def _rows_tile(at) -> str:
    return next(metric.value for metric in at.metric if metric.label == "Rows")


def _upload(at, name: str, data: bytes):
    at.file_uploader(key="retro.billing_upload").set_value((name, data, "text/csv")).run()
    assert not at.exception and not at.error, [error.value for error in at.error]
    return at


def _upload_key(at):
    return at.session_state[UPLOAD_KEYS]["retro.billing_upload"][1]


def test_an_upload_replaced_by_other_rows_has_a_new_key_and_shows_the_new_rows(app):
    at = _upload(open_retro(app, {"retro.runs": NONE}), "bill.csv", FOCUS.read_bytes())
    first = _upload_key(at)
    assert first == ("upload", "bill.csv", hashlib.sha256(FOCUS.read_bytes()).hexdigest())
    assert _rows_tile(at) == "242"

    _upload(at, "bill.csv", TEN_ROWS)  # the same name, other rows, well within the same second
    assert _upload_key(at) == ("upload", "bill.csv", hashlib.sha256(TEN_ROWS).hexdigest())
    assert _rows_tile(at) == "10"

    _upload(at, "bill.csv", FOCUS.read_bytes())  # the first file again: a new upload id, the same key
    assert _upload_key(at) == first
    assert _rows_tile(at) == "242"


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "workspace"
    monkeypatch.setenv(settings.WORKSPACE_DIR, str(folder))
    return folder


class _FrozenClock(datetime):
    """datetime whose now() is always one second, so two imports share their ``imported_at``."""

    @classmethod
    def now(cls, tz=None):
        return datetime(2026, 12, 4, 3, 58, 0, tzinfo=UTC)


def test_a_dataset_replaced_within_the_same_second_shows_the_new_rows(app, workspace, tmp_path, monkeypatch):
    monkeypatch.setattr(imports, "datetime", _FrozenClock)
    ten = tmp_path / "ten.csv"
    ten.write_bytes(TEN_ROWS)
    first = import_to_workspace(FOCUS, "q2")
    at = open_retro(app, {"retro.dataset": "q2", "retro.runs": NONE})
    assert not at.exception and not at.error, [error.value for error in at.error]
    assert _rows_tile(at) == "242"

    second = import_to_workspace(ten, "q2", replace=True)
    assert second.imported_at == first.imported_at  # the same second, as the report
    at.run()
    assert not at.exception and not at.error, [error.value for error in at.error]
    assert _rows_tile(at) == "10"
    assert workspace_view.dataset_key(second) != workspace_view.dataset_key(first)
    assert workspace_view.dataset_key(datasets.metadata("q2")) == workspace_view.dataset_key(second)


LEGACY = datasets.Metadata(name="q2", source="quarter.csv", source_bytes=1, imported_at="2026-12-04T03:58:00+00:00",
                           rows=242, bytes=1, start=None, end=None, months=[], streamed=False)


@pytest.mark.parametrize(("first", "second", "same"), [
    pytest.param(dataclasses.replace(LEGACY, build="q2.a1"), dataclasses.replace(LEGACY, build="q2.a1"), True,
                 id="one-version-read-twice"),
    pytest.param(dataclasses.replace(LEGACY, build="q2.a1"), dataclasses.replace(LEGACY, rows=10, build="q2.b2"),
                 False, id="replaced-in-the-same-second"),
    pytest.param(dataclasses.replace(LEGACY, build="q2.a1"), dataclasses.replace(LEGACY, build="q2.b2"), False,
                 id="same-counts-new-version"),
    pytest.param(LEGACY, dataclasses.replace(LEGACY), True, id="before-versions-read-twice"),
    pytest.param(LEGACY, dataclasses.replace(LEGACY, rows=10, bytes=2), False,
                 id="before-versions-other-rows-same-second"),
])
def test_a_dataset_key_names_its_version(first, second, same):
    assert (workspace_view.dataset_key(first) == workspace_view.dataset_key(second)) is same
