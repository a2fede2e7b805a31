"""Issue 35, item 5: a session disconnected for longer than CLOSED_SESSION_GRACE_S is shut down and its uploaded
files' bytes dropped (Streamlit keeps them otherwise for as long as the server runs); an open session, or one
disconnected for less than the grace (a tab that may reconnect), is left alone. The whole server's figure is
`bench/sessions_bench.py` (ten sessions uploading 100 MB each)."""

import gc
import weakref

import pytest
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec

from dashboard.ui import upload_store


class _Runtime:
    """The Runtime calls `close_ended` makes, with a settable set of open sessions."""

    def __init__(self) -> None:
        self.open_sessions: set[str] = set()
        self.closed: list[str] = []
        self.uploaded_file_mgr = MemoryUploadedFileManager("/upload")

    def exists(self) -> bool:
        return True

    def instance(self):
        return self

    def is_active_session(self, session_id: str) -> bool:
        return session_id in self.open_sessions

    def clear_user_info_for_session(self, session_id: str) -> None:
        self.closed.append(session_id)


def test_closed_sessions_are_shut_down_after_the_grace_and_their_uploads_dropped(monkeypatch):
    runtime = _Runtime()
    monkeypatch.setattr(upload_store, "Runtime", runtime)
    monkeypatch.setattr(upload_store, "_return_freed_memory", lambda: None)
    upload_store.clear()
    for session in ("open", "closed", "back"):
        upload_store._SESSIONS[session] = None
        runtime.uploaded_file_mgr.add_file(session, UploadedFileRec(f"{session}-file", "a.csv", "text/csv",
                                                                    b"x" * 1_000_000))
    runtime.open_sessions = {"open"}
    grace = upload_store.CLOSED_SESSION_GRACE_S

    assert upload_store.close_ended(now=1_000.0) == []  # first seen disconnected: the grace starts
    runtime.open_sessions.add("back")  # reconnected within the grace
    assert upload_store.close_ended(now=1_000.0 + grace / 2) == []
    assert upload_store.close_ended(now=1_000.0 + grace + 1) == ["closed"]
    assert runtime.closed == ["closed"]
    assert runtime.uploaded_file_mgr.get_files("closed", ["closed-file"]) == []
    assert len(runtime.uploaded_file_mgr.get_files("open", ["open-file"])) == 1
    assert len(runtime.uploaded_file_mgr.get_files("back", ["back-file"])) == 1
    assert set(upload_store._SESSIONS) == {"open", "back"}

    runtime.open_sessions.discard("back")  # closed for good: a new grace from when it is seen closed
    assert upload_store.close_ended(now=2_000.0) == []
    assert upload_store.close_ended(now=2_000.0 + grace + 1) == ["back"]
    upload_store.clear()


class _Held:
    """An upload's stand-in in a reference cycle, as a shut-down session's state holds its page's globals."""

    def __init__(self) -> None:
        self.cycle = self


@pytest.mark.parametrize(("collect", "freed"), [(False, False), (True, True)])
def test_the_sweep_after_a_shutdown_frees_the_sessions_cycles(monkeypatch, collect, freed):
    monkeypatch.setattr(upload_store, "Runtime", _Runtime())
    monkeypatch.setattr(upload_store, "_return_freed_memory", lambda: None)
    upload_store.clear()
    gc.collect()
    gc.disable()  # as when Python's own thresholds have not yet called for a full collection
    try:
        held = _Held()
        alive = weakref.ref(held)
        del held
        assert upload_store.sweep_once(collect) is False  # no session to shut down this time
        assert (alive() is None) is freed
    finally:
        gc.enable()
