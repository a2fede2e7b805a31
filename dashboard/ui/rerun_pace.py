"""One session's rerun flood cannot stall the others: an ASGI middleware that paces each websocket's reruns.

Streamlit acts on every ``rerun_script`` back-message as it arrives: it stops the session's running script and
starts another, on the event loop and the interpreter lock every session shares. 2,858 of them from one client kept
a server busy for about 250 s, another user's slider rerun waiting as long. Here a rerun message that arrives while
the session is idle starts at once; one that arrives while the session's run is in progress (from its start to
Streamlit's ``script_finished``) is held, those that follow are merged into it (the latest wins), and it starts as
soon as that run ends. Two starts are also at least ``PLANNER_RERUN_INTERVAL_MS`` apart (100 ms; 0 turns pacing
off), so a client cannot make a session run more than 1,000 / interval times a second, however short its runs. A
flood thus runs one script at a time, the last with the last message's values. The merge keeps the last message's
widget values and page, and what a dropped message would otherwise lose: a button's or a chat input's trigger still
active in an earlier message, and a full rerun (a fragment's rerun merged with a full one, or with another
fragment's, is a full rerun). Other back-messages (file upload URLs, heartbeats, a stop) pass at once; a disconnect
drops the held rerun with the session.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from dashboard import settings
from dashboard.ui.upload_guard import ASGIApp, Message, Receive, Scope, Send

STREAM_PATH = "/_stcore/stream"
FINISHED_MAX_BYTES = 512  # a script_finished message is about 50 bytes
RUN_HOLD_INTERVALS = 50  # a run counts as in progress for at most this many intervals without its end (5 s)
TRIGGERS = ("trigger_value", "string_trigger_value", "chat_input_value", "json_trigger_value")


def _active_trigger(state: WidgetState) -> str | None:
    """The trigger kind ``state`` holds still unhandled (a clicked button, a sent chat message), else None."""
    kind = state.WhichOneof("value")
    if kind not in TRIGGERS:
        return None
    value = getattr(state, kind)
    active = bool(value.ListFields()) if hasattr(value, "ListFields") else bool(value)
    return kind if active else None


def merged(earlier: ClientState, later: ClientState) -> ClientState:
    """One rerun that does what ``earlier`` then ``later`` would: ``later``'s state, with ``earlier``'s still
    active triggers that ``later`` does not carry, as a full rerun unless both are the same fragment's."""
    result = ClientState()
    result.CopyFrom(later)
    states = {state.id: state for state in later.widget_states.widgets}
    for state in earlier.widget_states.widgets:
        kind = _active_trigger(state)
        newer = states.get(state.id)
        if kind is not None and (newer is None or (newer.WhichOneof("value") == kind and not _active_trigger(newer))):
            states[state.id] = state
    del result.widget_states.widgets[:]
    result.widget_states.widgets.extend(states.values())
    if earlier.fragment_id != later.fragment_id:
        result.fragment_id = ""
    result.is_auto_rerun = earlier.is_auto_rerun and later.is_auto_rerun
    return result


def run_finished(message: Message) -> bool:
    """Whether ``message`` (one the app sends) is Streamlit's ``script_finished``: a few dozen bytes, so longer
    messages are not parsed."""
    data = message.get("bytes") if message.get("type") == "websocket.send" else None
    if not data or len(data) > FINISHED_MAX_BYTES:
        return False
    forward = ForwardMsg()
    try:
        forward.ParseFromString(data)
    except Exception:  # protobuf's DecodeError: not a forward message
        return False
    return forward.WhichOneof("type") == "script_finished"


def rerun_state(message: Message) -> ClientState | None:
    """The client state of a ``rerun_script`` back-message; None for any other message (and for bytes that are
    not a back-message: Streamlit refuses those itself)."""
    data = message.get("bytes") if message.get("type") == "websocket.receive" else None
    if not data:
        return None
    back = BackMsg()
    try:
        back.ParseFromString(data)
    except Exception:  # protobuf's DecodeError: not a back-message
        return None
    return back.rerun_script if back.WhichOneof("type") == "rerun_script" else None


class Pacer:
    """One websocket, paced: ``receive`` is what the app reads, ``send`` what it writes (which tells the pacer when
    the session's run has finished)."""

    def __init__(self, receive: Receive, send: Send, interval_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._receive, self._send, self._interval_s, self._clock = receive, send, interval_s, clock
        self._last_start = float("-inf")  # when the last rerun was passed on to Streamlit
        self._finished: asyncio.Future[None] | None = None  # the run in progress; done once it has finished
        self._held: ClientState | None = None
        self._next: asyncio.Future[Message] | None = None
        self.started = self.held = 0  # reruns passed on to Streamlit; rerun messages held (and merged)

    def running(self) -> bool:
        """Whether the run this pacer last started is still in progress (at most `RUN_HOLD_INTERVALS` intervals:
        a rerun Streamlit ignores, such as one of a fragment a full run removed, sends no end)."""
        if self._finished is None or self._finished.done():
            return False
        return self._clock() - self._last_start < RUN_HOLD_INTERVALS * self._interval_s

    def _due_in(self) -> float:
        """Seconds until a rerun may start: 0 or less when none is in progress and the last one started at least
        the interval ago."""
        if self.running():
            return max(self._interval_s, 0.01)  # look again then, unless the run's end comes first
        return self._last_start + self._interval_s - self._clock()

    def _start(self, message: Message) -> Message:
        self.started += 1
        self._last_start = self._clock()
        self._finished = asyncio.get_running_loop().create_future()
        return message

    async def send(self, message: Message) -> None:
        if self._finished is not None and not self._finished.done() and run_finished(message):
            self._finished.set_result(None)
        await self._send(message)

    async def receive(self) -> Message:
        while True:
            if self._held is not None and self._due_in() <= 0:
                held, self._held = self._held, None
                return self._start({"type": "websocket.receive",
                                    "bytes": BackMsg(rerun_script=held).SerializeToString()})
            if self._next is None:
                self._next = asyncio.ensure_future(self._receive())
            waits: set[asyncio.Future] = {self._next}
            if self._held is not None and self._finished is not None and not self._finished.done():
                waits.add(self._finished)
            timeout = None if self._held is None else max(self._due_in(), 0.0)
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if not self._next.done():
                continue  # the run ended, or a held rerun is due
            message = self._next.result()
            self._next = None
            state = rerun_state(message)
            if state is None:
                return message
            if self._held is None and self._due_in() <= 0:
                return self._start(message)
            self._held = state if self._held is None else merged(self._held, state)
            self.held += 1

    def close(self) -> None:
        if self._next is not None:
            self._next.cancel()


class RerunPace:
    """The ASGI middleware: Streamlit's websocket reads and writes through a `Pacer`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        interval_s = settings.limit(settings.RERUN_INTERVAL_MS) / 1000
        if scope["type"] != "websocket" or not scope.get("path", "").endswith(STREAM_PATH) or interval_s <= 0:
            await self.app(scope, receive, send)
            return
        pacer = Pacer(receive, send, interval_s)
        try:
            await self.app(scope, pacer.receive, pacer.send)
        finally:
            pacer.close()
