"""Uploads bounded before they are accepted: an ASGI middleware around Streamlit's upload endpoint.

Streamlit keeps every uploaded file's bytes in memory for as long as its session lives, and accepted any number of
them (17 PUTs of 450 MB took a server from 0.33 to 8 GB). A PUT to ``…/_stcore/upload_file/SESSION/FILE`` now
reserves its size first, from its ``Content-Length`` (the largest upload when it has none), against three bounds:
one upload (``PLANNER_UPLOAD_MAX_MB``: 413), the bytes its session has in flight and held
(``PLANNER_UPLOAD_SESSION_MB``: 429) and those of all sessions (``PLANNER_UPLOAD_TOTAL_MB``: 429). A refusal is
answered before any of the body is read; an accepted body is counted as it streams in and cut off (413) past its
reservation, which is released when the request ends (the bytes then count as held, in Streamlit's uploaded-file
manager). Sign-in is checked before this, by ``sign_in_guard``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from streamlit import config
from streamlit.runtime import Runtime

from dashboard import settings

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UPLOAD_PATH = re.compile(r"(?:/.*)?/_stcore/upload_file/(?P<session>[^/]+)/(?P<file>[^/]+)")
MB = settings.MEBIBYTE


def apply_upload_limit() -> int:
    """Set Streamlit's ``server.maxUploadSize`` (the file uploader's own limit) from ``PLANNER_UPLOAD_MAX_MB``, the
    one source of both; the limit in MB."""
    limit_mb = settings.limit(settings.UPLOAD_MAX_MB)
    config.set_option("server.maxUploadSize", limit_mb, settings.UPLOAD_MAX_MB)
    return limit_mb


def held_bytes(session_id: str) -> tuple[int, int]:
    """Bytes of uploaded files Streamlit holds for ``session_id`` and for all sessions (0, 0 outside a server)."""
    if not Runtime.exists():
        return 0, 0
    manager = Runtime.instance().uploaded_file_mgr
    lock = getattr(manager, "_lock", None)
    storage = getattr(manager, "file_storage", None)
    if lock is None or storage is None:  # another manager than Streamlit's in-memory one: nothing held here
        return 0, 0
    with lock:
        session = sum(len(record.data) for record in storage.get(session_id, {}).values())
        total = sum(len(record.data) for files in storage.values() for record in files.values())
    return session, total


class Ledger:
    """Upload bytes in flight, per session and in all; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight: dict[str, int] = {}

    def in_flight(self, session_id: str | None = None) -> int:
        with self._lock:
            if session_id is None:
                return sum(self._in_flight.values())
            return self._in_flight.get(session_id, 0)

    def reserve(self, session_id: str, nbytes: int, held: tuple[int, int]) -> str | None:
        """Reserve ``nbytes`` for ``session_id`` beside what is ``held`` (session, all); None when it fits, else why
        not (the refusal's text)."""
        session_bound = settings.mebibytes(settings.UPLOAD_SESSION_MB)
        total_bound = settings.mebibytes(settings.UPLOAD_TOTAL_MB)
        with self._lock:
            session = held[0] + self._in_flight.get(session_id, 0)
            total = held[1] + sum(self._in_flight.values())
            if session + nbytes > session_bound:
                return (f"This session already has {session / MB:,.0f} MB of uploads; {nbytes / MB:,.0f} MB more "
                        f"would pass its {session_bound / MB:,.0f} MB ({settings.UPLOAD_SESSION_MB}). Remove a "
                        "file, or wait for an upload to finish.")
            if total + nbytes > total_bound:
                return (f"The server holds {total / MB:,.0f} MB of uploads for all sessions; {nbytes / MB:,.0f} MB "
                        f"more would pass its {total_bound / MB:,.0f} MB ({settings.UPLOAD_TOTAL_MB}). Try again "
                        "later.")
            self._in_flight[session_id] = self._in_flight.get(session_id, 0) + nbytes
        return None

    def release(self, session_id: str, nbytes: int) -> None:
        with self._lock:
            left = self._in_flight.get(session_id, 0) - nbytes
            if left > 0:
                self._in_flight[session_id] = left
            else:
                self._in_flight.pop(session_id, None)


LEDGER = Ledger()


async def refuse(send: Send, status: int, text: str, receive: Receive | None = None, drain_bytes: int = 0) -> None:
    """Answer ``status`` with ``text`` (plain text), decided before any of the body is read. With ``receive``, up to
    ``drain_bytes`` of the body that still comes are then read and dropped before the answer ends: a proxy that
    streams the body on (nginx) gets the answer, where closing with the body unread resets its connection (a 502)."""
    body = (text + "\n").encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body, "more_body": receive is not None})
    if receive is None:
        return
    dropped = 0
    while dropped <= drain_bytes:
        message = await receive()
        dropped += len(message.get("body", b""))
        if message["type"] != "http.request" or not message.get("more_body"):
            break
    await send({"type": "http.response.body", "body": b""})


def declared_length(scope: Scope) -> int | None:
    """The request's ``Content-Length`` (None when absent; -1 when not a whole number)."""
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else -1
    return None


class UploadGuard:
    """The ASGI middleware: every upload PUT reserved, counted and released as the module says."""

    def __init__(self, app: ASGIApp, ledger: Ledger = LEDGER,
                 held: Callable[[str], tuple[int, int]] = held_bytes) -> None:
        self.app, self.ledger, self.held = app, ledger, held

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = UPLOAD_PATH.fullmatch(scope.get("path", "")) if scope["type"] == "http" else None
        if match is None or scope.get("method") != "PUT":
            await self.app(scope, receive, send)
            return
        largest = settings.mebibytes(settings.UPLOAD_MAX_MB)
        length = declared_length(scope)
        if length is not None and length < 0:
            await refuse(send, 400, "Content-Length must be a whole number of bytes.")
            return
        # A multipart body carries the file plus its framing (boundary lines, part headers): Streamlit allows 1 MB.
        framing = MB
        if length is not None and length > largest + framing:
            await refuse(send, 413, f"The upload is {length / MB:,.0f} MB, more than the {largest / MB:,.0f} MB "
                                    f"this server accepts ({settings.UPLOAD_MAX_MB}).", receive, largest + framing)
            return
        reserved = largest + framing if length is None else length
        session_id = match["session"]
        why = self.ledger.reserve(session_id, reserved, self.held(session_id))
        if why is not None:
            await refuse(send, 429, why, receive, reserved)
            return
        received = 0
        started = cut_off = False

        async def counted_receive() -> Message:
            nonlocal received, cut_off
            if cut_off:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > reserved and not started:
                    cut_off = True  # answered here; the app reads a disconnect and its answer goes nowhere
                    await refuse(send, 413, f"The upload passed {reserved / MB:,.0f} MB, more than it declared or "
                                            f"than the {largest / MB:,.0f} MB this server accepts "
                                            f"({settings.UPLOAD_MAX_MB}).")
                    return {"type": "http.disconnect"}
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if cut_off:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except Exception:
            if not cut_off:
                raise
        finally:
            self.ledger.release(session_id, reserved)
