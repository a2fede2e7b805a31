"""AppTest: local paths are read only inside the data folder, quote nothing they do not recognise, never block.

Items 2, 6 and 16 of issue 12, on the Import page and the Retrospective's "Large export on this machine" (both go
through `dashboard.ui.sources.choose_local`).
"""

import os
import re
import shutil
from pathlib import Path

import pytest
import streamlit
from shown_text import shown

from dashboard.ui import sources

ROOT = Path(__file__).resolve().parents[2]
FOCUS = ROOT / "tests" / "data" / "ingest" / "focus_small.csv"
SECRET = "s3cr3t-Value-7731"


def _unescaped(text: str) -> str:
    """Markdown text as the reader sees it (the page escapes punctuation in messages)."""
    return re.sub(r"\\(.)", r"\1", text)


def _errors(at) -> list[str]:
    return [_unescaped(e.value) for e in at.error]


def _page_text(at) -> str:
    """Every text the page shows: messages, markdown, metrics, table cells and select options."""
    kinds = ("error", "warning", "info", "success", "markdown", "caption")
    parts = [_unescaped(e.value) for kind in kinds for e in getattr(at, kind)]
    parts += [str(m.value) for m in at.metric]
    parts += [frame.value.to_csv() for frame in at.dataframe]
    parts += [" ".join(map(str, box.options)) for box in at.selectbox]
    return "\n".join(parts)


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(FOCUS, data / "focus_small.csv")
    (tmp_path / "secret.csv").write_text(f"user,password\nroot,{SECRET}\n")
    monkeypatch.setenv("PLANNER_DATA_DIR", str(data))
    return data


def _import_page(app, typed: str, format: str | None = None):
    at = app.run().switch_page("app_pages/imports.py").run()
    at.radio(key="import_source").set_value("Local path").run()
    if format:
        at.selectbox(key="import_format").set_value(format)
    at.text_input(key="import_path").set_value(typed).run()
    assert not at.exception
    return at


def test_a_file_in_the_data_folder_imports_by_relative_or_full_path(app, folder):
    for typed in ("focus_small.csv", str(folder / "focus_small.csv")):
        at = _import_page(app, typed)
        assert not at.error, _errors(at)
        assert next(m for m in at.metric if m.label == "Rows read").value == "8"  # focus_small.csv has 8 rows


@pytest.mark.parametrize("typed", ["../secret.csv", "{tmp}/secret.csv", "link.csv", "/etc/passwd"])
def test_paths_leading_outside_the_data_folder_are_refused_unread(app, folder, typed):
    (folder / "link.csv").symlink_to(folder.parent / "secret.csv")
    at = _import_page(app, typed.format(tmp=folder.parent))
    assert "outside" in _errors(at)[0]
    text = _page_text(at)
    assert SECRET not in text and "password" not in text and "root:" not in text


def test_local_paths_are_off_when_serving_beyond_localhost(app, folder, monkeypatch):
    monkeypatch.delenv("PLANNER_DATA_DIR")
    address = streamlit.config.get_option("server.address")
    streamlit.config.set_option("server.address", "0.0.0.0")
    try:
        at = _import_page(app, str(ROOT / "data" / "samples" / "focus_sample.csv"))
    finally:
        streamlit.config.set_option("server.address", address)
    assert "off on this server" in _errors(at)[0] and "PLANNER_DATA_DIR" in _errors(at)[0]
    assert not at.metric


def test_an_unrecognised_local_file_is_not_quoted(app, folder):
    (folder / "notes.csv").write_text(f"{SECRET},other\n1,2\n")
    at = _import_page(app, "notes.csv")
    assert "not an export this page recognises" in _errors(at)[0]
    assert SECRET not in _page_text(at)


def test_generic_local_file_rejects_rows_without_quoting_them(app, folder):
    (folder / "usage.csv").write_text(f"start,hours\n2025-06-01T00:00:00Z,2\n2025-06-01T01:00:00Z,{SECRET}\n")
    at = _import_page(app, "usage.csv", format="generic")
    at.selectbox(key="map_period_start").set_value("start")
    at.selectbox(key="map_gpu_hours").set_value("hours").run()
    assert not at.exception and not at.error, _errors(at)
    assert next(m for m in at.metric if m.label == "Rejected").value == "1"
    assert SECRET not in _page_text(at)
    assert sources.NOT_QUOTED in _page_text(at)


def test_a_fifo_in_the_data_folder_is_refused_without_blocking(app, folder):
    os.mkfifo(folder / "pipe.csv")
    at = _import_page(app, "pipe.csv", format="generic")  # the generic format read the header with no bound
    assert "not a regular file" in _errors(at)[0]


def test_a_huge_folder_is_refused_and_walked_once(app, folder, monkeypatch):
    big = folder / "big"
    big.mkdir()
    for i in range(sources.MAX_FOLDER_ENTRIES + 1):
        (big / f"{i}.txt").touch()
    calls = []
    scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": calls.append(path) or scandir(path))
    at = _import_page(app, "big")
    assert f"more than {sources.MAX_FOLDER_ENTRIES:,} files and folders" in _errors(at)[0]
    walks = len(calls)
    at.run()
    at.run()
    assert len(calls) == walks == 1  # one folder, scanned on the first run only


def test_proc_is_a_message_not_a_traceback(app, monkeypatch):
    monkeypatch.setenv("PLANNER_DATA_DIR", "/proc")
    at = _import_page(app, "/proc")
    assert at.error and not at.exception


def test_retrospective_large_export_goes_through_the_same_confinement(app, folder):
    at = app.run().switch_page("app_pages/retro.py").run()
    at.text_input(key="retro.billing_path").set_value("../secret.csv").run()
    assert not at.exception
    assert "outside" in _errors(at)[0]
    assert SECRET not in _page_text(at)
    at.text_input(key="retro.billing_path").set_value("focus_small.csv").run()
    assert not at.exception and not at.error, _errors(at)
    assert "focus_small.csv" in shown(" ".join(m.value for m in at.markdown))  # the data block's summary line


def test_a_folder_the_server_may_not_read_is_a_message(app, folder, monkeypatch):
    (folder / "locked").mkdir()

    def refuse(path="."):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "scandir", refuse)  # as for a non-root server on a folder it may not list
    at = _import_page(app, "locked")
    assert "permission denied" in _errors(at)[0] and not at.exception


@pytest.mark.parametrize("page", ["imports", "retro"])
def test_a_nul_byte_in_a_local_path_is_a_message(app, folder, page):
    """Issue 35, item 8: a NUL byte in a typed path raised ValueError on the page."""
    if page == "imports":
        at = _import_page(app, "focus_small.csv\x00.txt")
    else:
        at = app.run().switch_page("app_pages/retro.py").run()
        at.text_input(key="retro.billing_path").set_value("focus\x00small.csv").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("NUL character" in e for e in _errors(at)), _errors(at)
