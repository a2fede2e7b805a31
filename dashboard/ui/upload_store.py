"""Imported tables held for browser sessions: at most PLANNER_IMPORT_STORE_MB in all, released when a session ends.

A usage table can be as large as its export, so pages never keep one in `st.session_state` or a shared cache
(both outlive the browser tab: Streamlit keeps a closed session's state for minutes, and a cache for ever).
They keep it here, under their session's id and a slot name, with a cheap key saying what it was built from.
The store adds up the tables' sizes (`table_bytes`); when a new table would pass the bound, the least recently
used tables of any session are released first (that session imports again on its next rerun), and a table
larger than the whole bound is refused. Tables of sessions the server no longer has open are released by
`release_ended`, which runs on every store call and every few seconds in a server. Download buttons get
`csv_download`, which holds its table weakly, so that Streamlit's own copy of a closed session does not keep it.

Closed sessions themselves are shut down by the same sweeper (`close_ended`) once they have been disconnected for
CLOSED_SESSION_GRACE_S. Streamlit keeps a disconnected session for a reconnect (`server.disconnectedSessionTTL`,
120 s) and, when that passes, drops it without shutting it down, so its uploaded files' bytes stayed in the
uploaded-file manager for as long as the server ran (ten 100 MB uploads held 1 GB after every tab had closed).
A tab that reconnects within the grace resumes its session; later, it starts a new one.
"""

from __future__ import annotations

import ctypes
import gc
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa
import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from dashboard import settings

SWEEP_SECONDS = 5.0
CLOSED_SESSION_GRACE_S = 30.0  # a disconnected session is shut down (its uploads freed) after this long
NO_SESSION = "(no session)"


class TooLarge(Exception):
    """A table larger than the whole store's bound; the message says what to do."""


@dataclass
class _Held:
    key: Hashable
    value: Any
    nbytes: int


_LIBC: ctypes.CDLL | None
try:
    _LIBC = ctypes.CDLL("libc.so.6")
    _LIBC.malloc_trim.argtypes = [ctypes.c_size_t]
except (OSError, AttributeError):
    _LIBC = None  # not glibc: nothing to trim
_LOCK = threading.RLock()
_HELD: OrderedDict[tuple[str, Hashable], _Held] = OrderedDict()  # least recently used first
_SWEEPER: list[threading.Thread] = []
_SESSIONS: dict[str, float | None] = {}  # session ids seen by a script -> when first seen disconnected (monotonic)


def table_bytes(frame: pd.DataFrame | None) -> int:
    """Bytes a usage table holds (its columns' buffers and string data)."""
    return 0 if frame is None else int(frame.memory_usage(index=True, deep=True).sum())


def bound_bytes() -> int:
    """The store's bound in bytes (``PLANNER_IMPORT_STORE_MB``)."""
    return settings.megabytes(settings.IMPORT_STORE_MB)


def _session() -> str:
    context = get_script_run_ctx(suppress_warning=True)
    if context is None:
        return NO_SESSION
    if context.session_id not in _SESSIONS:
        with _LOCK:
            _SESSIONS.setdefault(context.session_id, None)
        _start_sweeper()
    return context.session_id


def _return_freed_memory() -> None:
    """Give freed memory back to the system: Arrow's pool, and glibc's per-thread arenas (each session's script
    thread allocates in its own, and glibc returns their free pages only when asked)."""
    pa.default_memory_pool().release_unused()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def release_ended() -> None:
    """Release every table of a session that the server no longer has open (nothing outside a server)."""
    if not Runtime.exists():
        return
    runtime = Runtime.instance()
    with _LOCK:
        ended = [slot for slot in _HELD if slot[0] != NO_SESSION and not runtime.is_active_session(slot[0])]
        for slot in ended:
            del _HELD[slot]
    if ended:
        _return_freed_memory()


def close_ended(now: float | None = None) -> list[str]:
    """Shut down the sessions this store has seen that have been disconnected for CLOSED_SESSION_GRACE_S, and drop
    their uploaded files (Streamlit keeps them otherwise; see the module's notes); the session ids closed.

    Uses Streamlit's thread-safe calls only: the session is marked not resumable and closed on the event loop
    (``clear_user_info_for_session``), and its files are removed under the uploaded-file manager's lock.
    """
    if not Runtime.exists():
        return []
    runtime = Runtime.instance()
    now = time.monotonic() if now is None else now
    closed = []
    with _LOCK:
        known = list(_SESSIONS.items())
    for session_id, since in known:
        if runtime.is_active_session(session_id):
            if since is not None:
                with _LOCK:
                    _SESSIONS[session_id] = None
            continue
        if since is None:
            with _LOCK:
                _SESSIONS[session_id] = now
            continue
        if now - since < CLOSED_SESSION_GRACE_S:
            continue
        try:
            runtime.clear_user_info_for_session(session_id)  # not resumable, then closed on the event loop
            runtime.uploaded_file_mgr.remove_session_files(session_id)  # also for one Streamlit already dropped
        except Exception:  # a server shutting down; the next sweep tries again
            continue
        with _LOCK:
            _SESSIONS.pop(session_id, None)
        closed.append(session_id)
    if closed:
        _return_freed_memory()
    return closed


def sweep_once(collect: bool) -> bool:
    """One sweep: with ``collect`` (the last sweep shut sessions down), Python's cycle collector first; then release
    ended sessions' tables and shut down sessions closed for longer than CLOSED_SESSION_GRACE_S. Whether it shut
    any down.

    A shut-down session's state keeps its widgets' callbacks, whose page globals (the imports, the bound tables)
    refer back to the session: only the collector frees that cycle, and Python seldom runs a full collection (ten
    closed upload sessions kept 1.6 GB for as long as the server ran). Streamlit shuts a session down on its event
    loop after ``close_ended`` asks, so the collection waits for the next sweep."""
    if collect:
        gc.collect()
        _return_freed_memory()
    release_ended()
    return bool(close_ended())


def _sweep() -> None:
    """``sweep_once`` every SWEEP_SECONDS (a daemon thread, one per server)."""
    pause = threading.Event()
    closed = False
    while True:
        pause.wait(SWEEP_SECONDS)
        closed = sweep_once(closed)


def _start_sweeper() -> None:
    with _LOCK:
        if not _SWEEPER and Runtime.exists():
            thread = threading.Thread(target=_sweep, name="upload-store-sweeper", daemon=True)
            _SWEEPER.append(thread)
            thread.start()


def get(slot: Hashable, key: Hashable) -> Any | None:
    """This session's value in ``slot`` if it was stored under ``key``; else None."""
    release_ended()
    with _LOCK:
        held = _HELD.get((_session(), slot))
        if held is None or held.key != key:
            return None
        _HELD.move_to_end((_session(), slot))
        return held.value


def put(slot: Hashable, key: Hashable, value: Any, nbytes: int) -> None:
    """Hold ``value`` (``nbytes`` large) in this session's ``slot``, releasing least recently used tables to fit.

    Raises TooLarge when ``nbytes`` alone passes the bound.
    """
    bound = bound_bytes()
    if nbytes > bound:
        raise TooLarge(
            f"The imported table needs {nbytes / 1e6:,.0f} MB, more than the {bound / 1e6:,.0f} MB this server holds "
            f"for all sessions ({settings.IMPORT_STORE_MB}). Import a shorter period or a filtered export, or have "
            f"the server's operator raise {settings.IMPORT_STORE_MB}."
        )
    release_ended()
    with _LOCK:
        _HELD.pop((_session(), slot), None)
        while _HELD and held_bytes() + nbytes > bound:
            _HELD.popitem(last=False)
        _HELD[(_session(), slot)] = _Held(key, value, nbytes)
    _start_sweeper()


def drop(slot: Hashable) -> None:
    """Release this session's ``slot``."""
    with _LOCK:
        _HELD.pop((_session(), slot), None)


def held(slot: Hashable, key: Hashable, build: Callable[[], Any], nbytes: Callable[[Any], int]) -> Any:
    """This session's value for ``key`` in ``slot``, built and stored when it is not there.

    A value larger than the whole bound stops the page with the store's message.
    """
    value = get(slot, key)
    if value is None:
        value = build()
        try:
            put(slot, key, value, nbytes(value))
        except TooLarge as error:
            st.error(str(error))
            st.stop()
    return value


def held_bytes() -> int:
    """Bytes held for all sessions."""
    with _LOCK:
        return sum(item.nbytes for item in _HELD.values())


def held_count() -> int:
    """Tables held for all sessions."""
    with _LOCK:
        return len(_HELD)


def csv_download(frame: pd.DataFrame, render: Callable[[pd.DataFrame], str | bytes]) -> Callable[[], str | bytes]:
    """A download button's deferred data that renders ``frame`` without keeping it alive.

    Streamlit keeps a download's callable for as long as it keeps the session, closed sessions included; holding
    the table weakly lets the store's bound and release decide how long it lives.
    """
    table = weakref.ref(frame)

    def data() -> str | bytes:
        held_frame = table()
        if held_frame is None:
            return "This table was released by the server; open the page again to download it.\n"
        return render(held_frame)

    return data


def clear() -> None:
    """Release everything (tests)."""
    with _LOCK:
        _HELD.clear()
        _SESSIONS.clear()
