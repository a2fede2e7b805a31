"""The upload store: imported tables are held within PLANNER_IMPORT_STORE_MB and released when a session ends.

Item 4 of issue 12. Sessions are simulated by patching the store's session id and the runtime's list of open
sessions; the AppTest case checks that the pages keep their tables in the store, not in session state.
"""

import pandas as pd
import pytest

from dashboard.ui import upload_store

MB = 1_000_000


class _Runtime:
    """The few Runtime methods the store uses, with a settable set of open sessions."""

    open_sessions: set[str] = set()

    @classmethod
    def exists(cls) -> bool:
        return True

    @classmethod
    def instance(cls):
        return cls

    @classmethod
    def is_active_session(cls, session_id: str) -> bool:
        return session_id in cls.open_sessions


@pytest.fixture
def sessions(monkeypatch):
    """A function that makes a named session current (and open); the store patched to a fake runtime."""
    current = {"id": "a"}
    monkeypatch.setattr(upload_store, "_session", lambda: current["id"])
    monkeypatch.setattr(upload_store, "Runtime", _Runtime)
    monkeypatch.setattr(upload_store, "_start_sweeper", lambda: None)
    monkeypatch.setenv("PLANNER_IMPORT_STORE_MB", "10")
    _Runtime.open_sessions = set()
    upload_store.clear()

    def use(session_id: str) -> None:
        current["id"] = session_id
        _Runtime.open_sessions.add(session_id)

    yield use
    upload_store.clear()


def test_the_bound_releases_least_recently_used_tables_first(sessions):
    for name in "abcd":  # four sessions of 3 MB each under a 10 MB bound
        sessions(name)
        upload_store.put("import", name, f"table {name}", 3 * MB)
    assert upload_store.held_bytes() == 9 * MB  # three tables of 3 MB
    sessions("a")
    assert upload_store.get("import", "a") is None  # the oldest was released to make room for d
    sessions("b")
    assert upload_store.get("import", "b") == "table b"
    sessions("e")
    upload_store.put("import", "e", "table e", 3 * MB)  # c is now the least recently used
    sessions("c")
    assert upload_store.get("import", "c") is None


def test_a_table_larger_than_the_bound_is_refused(sessions):
    sessions("a")
    with pytest.raises(upload_store.TooLarge, match="PLANNER_IMPORT_STORE_MB"):
        upload_store.put("import", "k", "huge", 11 * MB)
    assert upload_store.held_bytes() == 0


def test_tables_of_ended_sessions_are_released(sessions):
    for name in "ab":
        sessions(name)
        upload_store.put("import", name, name, 2 * MB)
    _Runtime.open_sessions.discard("a")  # the browser tab of session a was closed
    upload_store.release_ended()
    assert upload_store.held_bytes() == 2 * MB
    assert upload_store.get("import", "b") == "b"


def test_a_new_key_replaces_the_slot(sessions):
    sessions("a")
    upload_store.put("import", 1, "first", 4 * MB)
    upload_store.put("import", 2, "second", 4 * MB)
    assert upload_store.held_bytes() == 4 * MB
    assert upload_store.get("import", 1) is None and upload_store.get("import", 2) == "second"


def test_table_bytes_counts_string_data():
    frame = pd.DataFrame({"team": pd.Series(["x" * 1000] * 100, dtype="string"), "gpu_hours": [1.0] * 100})
    assert upload_store.table_bytes(frame) >= 100 * 1000 + 100 * 8


def test_pages_hold_imports_in_the_store_not_in_session_state(app):
    at = app.run().switch_page("app_pages/retro.py").run()
    assert not at.exception
    assert upload_store.held_bytes() > 0  # the bundled billing and run exports
    assert "retro.billing_data" not in at.session_state and "retro.runs_data" not in at.session_state


def test_a_download_renders_its_table_without_keeping_it_alive():
    import gc

    frame = pd.DataFrame({"team": ["a", "b"], "gpu_hours": [1.5, 2.0]})
    data = upload_store.csv_download(frame, lambda f: f.to_csv(index=False))
    assert data() == "team,gpu_hours\na,1.5\nb,2.0\n"
    del frame
    gc.collect()
    assert "released" in data()
