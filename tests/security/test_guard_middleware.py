"""Issue 53, the server's guards as ASGI middleware, driven without a server: the upload guard's refusals before the
body (413 / 429 / 400) and its streamed count, the sign-in guard's open paths, and the rerun pacing's merge and
count. The served app's behaviour is tests/security/test_server_guards.py."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.Delta_pb2 import Delta
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates

from dashboard.ui.rerun_pace import RUN_HOLD_INTERVALS, Pacer, merged, rerun_state, run_finished
from dashboard.ui.sign_in_guard import open_to_signed_out
from dashboard.ui.upload_guard import Ledger, UploadGuard

MB = 1 << 20
PATH = "/_stcore/upload_file/session-1/file-1"


def _in_own_thread(coroutine):
    """Run a coroutine in a thread of its own: a browser test's session-wide Playwright keeps an event loop running
    in the main thread, where asyncio.run refuses to start another."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture(autouse=True)
def upload_limits(monkeypatch):
    monkeypatch.setenv("PLANNER_UPLOAD_MAX_MB", "20")
    monkeypatch.setenv("PLANNER_UPLOAD_SESSION_MB", "40")
    monkeypatch.setenv("PLANNER_UPLOAD_TOTAL_MB", "60")


def _put(headers: list[tuple[bytes, bytes]], path: str = PATH) -> dict:
    return {"type": "http", "method": "PUT", "path": path, "headers": headers}


def _length(nbytes: int) -> list[tuple[bytes, bytes]]:
    return [(b"content-length", str(nbytes).encode())]


class Inner:
    """Streamlit's app as the guard sees it: reads the whole body, answers 204; remembers what it read."""

    def __init__(self) -> None:
        self.called = False
        self.read = 0

    async def __call__(self, scope, receive, send) -> None:
        self.called = True
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            self.read += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _run(scope: dict, body: list[bytes], held=(0, 0), ledger: Ledger | None = None) -> tuple[int, str, Inner]:
    """The guard around `Inner` on one request whose body comes in `body`'s pieces; status, text, inner app. Also
    checks the answer was complete and records (in `Inner.events`) whether it started before any body was read."""
    inner, sent, events = Inner(), [], []
    pieces = [{"type": "http.request", "body": piece, "more_body": i < len(body) - 1} for i, piece in enumerate(body)]

    async def receive():
        events.append("read")
        return pieces.pop(0) if pieces else {"type": "http.disconnect"}

    async def send(message):
        events.append(message["type"])
        sent.append(message)

    guard = UploadGuard(inner, ledger or Ledger(), held=lambda session: held)
    _in_own_thread(guard(scope, receive, send))
    assert sent[-1]["type"] == "http.response.body" and not sent[-1].get("more_body")
    inner.events, inner.left = events, len(pieces)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    text = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body").decode()
    return status, text, inner


# declared bytes, held (session, all) in MiB, status, a phrase of the refusal ("" for none)
UPLOAD_CASES = [
    (5 * MB, (0, 0), 204, ""),
    (20 * MB, (0, 0), 204, ""),  # the largest file plus its multipart framing (up to 1 MiB) fits
    (22 * MB, (0, 0), 413, "more than the 20 MB this server accepts (PLANNER_UPLOAD_MAX_MB)"),
    (19 * MB, (30, 30), 429, "pass its 40 MB (PLANNER_UPLOAD_SESSION_MB)"),  # 30 + 19 > 40
    (19 * MB, (0, 50), 429, "pass its 60 MB (PLANNER_UPLOAD_TOTAL_MB)"),  # 50 + 19 > 60
    (19 * MB, (21, 41), 204, ""),  # 21 + 19 = 40, 41 + 19 = 60: at the bounds, not past them
]


@pytest.mark.parametrize("declared, held_mb, status, phrase", UPLOAD_CASES)
def test_upload_is_refused_before_its_body_or_passed_on(declared, held_mb, status, phrase):
    held = (held_mb[0] * MB, held_mb[1] * MB)
    body = [b"x" * (declared - MB), b"x" * MB]
    got, text, inner = _run(_put(_length(declared)), body, held)
    assert got == status
    assert phrase in text
    assert inner.called is (status == 204)
    assert inner.read == (declared if status == 204 else 0)
    if status != 204:  # answered before any of the body was read; what came after was read and dropped
        assert inner.events[0] == "http.response.start"
        assert inner.left == 0


def test_a_content_length_that_is_not_a_number_is_refused():
    status, text, inner = _run(_put([(b"content-length", b"12abc")]), [])
    assert (status, inner.called) == (400, False)
    assert "whole number" in text


def test_a_chunked_body_past_the_largest_upload_is_cut_off_while_it_streams():
    body = [b"x" * MB] * 30  # 30 MiB with no Content-Length: reserved as 20 + 1 MiB, cut off at the 22nd piece
    status, text, inner = _run(_put([]), body)
    assert status == 413
    assert "passed 21 MB" in text
    assert inner.read == 21 * MB  # what it read before the piece that passed the reservation


def test_in_flight_uploads_count_against_the_bounds_and_are_released_after():
    ledger = Ledger()
    assert ledger.reserve("a", 19 * MB, (0, 0)) is None
    assert ledger.reserve("a", 19 * MB, (0, 0)) is None
    assert "PLANNER_UPLOAD_SESSION_MB" in ledger.reserve("a", 19 * MB, (0, 0))  # 57 > 40
    assert ledger.reserve("b", 19 * MB, (0, 0)) is None  # 57 in all, b's own 19
    assert "PLANNER_UPLOAD_TOTAL_MB" in ledger.reserve("c", 19 * MB, (0, 0))  # 76 > 60
    ledger.release("a", 19 * MB)
    assert (ledger.in_flight("a"), ledger.in_flight()) == (19 * MB, 38 * MB)
    status, _, _ = _run(_put(_length(5 * MB)), [b"x" * 5 * MB], ledger=ledger)
    assert status == 204
    assert ledger.in_flight() == 38 * MB  # the request's own reservation released when it ended


def test_other_requests_pass_untouched():
    for scope in ({"type": "http", "method": "GET", "path": PATH, "headers": _length(99 * MB)},
                  {"type": "http", "method": "PUT", "path": "/_stcore/elsewhere", "headers": _length(99 * MB)}):
        status, _, inner = _run(scope, [b""])
        assert (status, inner.called) == (204, True)


# kind, method, path: open to a signed-out visitor when sign-in is on
SIGNED_OUT_CASES = [
    ("http", "GET", "/", True),
    ("http", "GET", "/compare", True),
    ("http", "GET", "/static/js/index.js", True),
    ("http", "HEAD", "/_stcore/health", True),
    ("http", "GET", "/_stcore/host-config", True),
    ("http", "GET", "/auth/login", True),
    ("http", "GET", "/oauth2callback", True),
    ("websocket", "", "/_stcore/stream", True),
    ("http", "PUT", PATH, False),
    ("http", "DELETE", PATH, False),
    ("http", "OPTIONS", PATH, False),
    ("http", "GET", "/_stcore/metrics", False),
    ("http", "POST", "/_stcore/agent/interact", False),
    ("http", "GET", "/component/any/index.html", False),
    ("http", "GET", "/app/static/file.csv", False),
    ("http", "POST", "/", False),
    ("websocket", "", "/_stcore/other", False),
]


@pytest.mark.parametrize("kind, method, path, open_", SIGNED_OUT_CASES)
def test_signed_out_visitors_reach_the_sign_in_page_only(kind, method, path, open_):
    scope = {"type": kind, "path": path, "headers": []} | ({"method": method} if method else {})
    assert open_to_signed_out(scope) is open_


# Rerun pacing.

def _slider(widget_id: str, value: float) -> WidgetState:
    state = WidgetState(id=widget_id)
    state.double_array_value.data.append(value)
    return state


def _button(widget_id: str, clicked: bool) -> WidgetState:
    return WidgetState(id=widget_id, trigger_value=clicked)


def _state(*widgets: WidgetState, fragment: str = "", page: str = "") -> ClientState:
    return ClientState(widget_states=WidgetStates(widgets=list(widgets)), fragment_id=fragment, page_script_hash=page)


def _values(state: ClientState) -> dict:
    return {w.id: (list(w.double_array_value.data) if w.WhichOneof("value") == "double_array_value"
                   else getattr(w, w.WhichOneof("value"))) for w in state.widget_states.widgets}


# earlier, later, the merged widget values, the merged fragment
MERGE_CASES = [
    (_state(_slider("s", 1)), _state(_slider("s", 2)), {"s": [2.0]}, ""),
    (_state(_slider("s", 1), _button("b", True)), _state(_slider("s", 2)), {"s": [2.0], "b": True}, ""),
    (_state(_button("b", True)), _state(_button("b", False)), {"b": True}, ""),  # the click is not lost
    (_state(_button("b", False)), _state(_slider("s", 3)), {"s": [3.0]}, ""),  # an idle button is not carried
    (_state(fragment="f1"), _state(fragment="f1"), {}, "f1"),
    (_state(fragment="f1"), _state(fragment="f2"), {}, ""),  # two fragments: a full rerun
    (_state(), _state(fragment="f1"), {}, ""),  # a full rerun then a fragment's: a full rerun
]


@pytest.mark.parametrize("earlier, later, values, fragment", MERGE_CASES)
def test_merged_reruns_keep_the_last_values_and_every_click(earlier, later, values, fragment):
    result = merged(earlier, later)
    assert _values(result) == values
    assert result.fragment_id == fragment


def test_merged_takes_the_later_page():
    assert merged(_state(page="plan"), _state(page="compare")).page_script_hash == "compare"


def _message(state: ClientState) -> dict:
    return {"type": "websocket.receive", "bytes": BackMsg(rerun_script=state).SerializeToString()}


FINISHED = {"type": "websocket.send",
            "bytes": ForwardMsg(script_finished=ForwardMsg.FINISHED_SUCCESSFULLY).SerializeToString()}
DISCONNECT = {"type": "websocket.disconnect", "code": 1000}


async def _sink(message: dict) -> None:
    """Where the app's messages go: nowhere (the pacer only looks at them)."""


def _drive(messages: list[dict], interval_s: float, later: list[dict]) -> tuple[list[dict], Pacer]:
    """A Pacer over `messages` (available at once), then `later` once the app has read twice; what the app read.
    The app ends each run it starts at once (it sends `script_finished`). The clock stands still while messages
    wait to be read, so that how fast this machine reads them cannot matter."""

    async def main():
        queue: asyncio.Queue = asyncio.Queue()
        for message in messages:
            queue.put_nowait(message)
        start = time.monotonic()
        pacer = Pacer(queue.get, _sink, interval_s, clock=lambda: start if queue.qsize() else time.monotonic())
        read: list[dict] = []
        while not read or read[-1]["type"] != "websocket.disconnect":
            read.append(await asyncio.wait_for(pacer.receive(), timeout=30))  # a watchdog, not a timing
            if rerun_state(read[-1]) is not None:
                await pacer.send(FINISHED)
            if len(read) == 2:
                for message in later:
                    queue.put_nowait(message)
        pacer.close()
        return read, pacer

    return _in_own_thread(main())


def test_a_flood_of_reruns_starts_one_then_one_merged_rerun_with_the_last_values():
    flood = [_message(_state(_slider("s", i), _button("b", i == 5))) for i in range(2_858)]
    read, pacer = _drive(flood, interval_s=0.5, later=[DISCONNECT])
    assert [m["type"] for m in read] == ["websocket.receive", "websocket.receive", "websocket.disconnect"]
    assert _values(rerun_state(read[0])) == {"s": [0.0], "b": False}
    assert _values(rerun_state(read[1])) == {"s": [2_857.0], "b": True}  # the last slider value, and the click
    assert (pacer.started, pacer.held) == (2, 2_857)


def test_other_messages_pass_a_held_rerun_and_a_disconnect_drops_it():
    heartbeat = {"type": "websocket.receive", "bytes": BackMsg(app_heartbeat=True).SerializeToString()}
    reruns = [_message(_state(_slider("s", 1))), _message(_state(_slider("s", 2)))]
    read, pacer = _drive([*reruns, heartbeat, DISCONNECT], interval_s=30, later=[])
    assert read[1] == heartbeat
    assert read[2] == DISCONNECT
    assert (pacer.started, pacer.held) == (1, 1)


INTERVAL_S = 0.1
# Each step, then the slider values of the reruns the app has read so far. "rerun v" is a message from the browser,
# "end" the app's script_finished, "tick s" the pacer's clock moving s seconds.
PACE_CASES = [
    pytest.param([("rerun 1", [1]), ("end", [1]), ("tick 0.2", [1]), ("rerun 2", [1, 2])],
                 id="idle, the interval past: at once"),
    pytest.param([("rerun 1", [1]), ("tick 0.2", [1]), ("rerun 2", [1]), ("rerun 3", [1]), ("end", [1, 3])],
                 id="while a run is in progress: held, the latest wins, started at its end"),
    pytest.param([("rerun 1", [1]), ("end", [1]), ("tick 0.05", [1]), ("rerun 2", [1]), ("tick 0.06", [1, 2])],
                 id="idle but within the interval of the last start: held until the interval"),
    pytest.param([("rerun 1", [1]), ("rerun 2", [1]), ("tick 4.9", [1]), ("tick 0.2", [1, 2])],
                 id="a run that never ends holds for RUN_HOLD_INTERVALS intervals, not for ever"),
    pytest.param([("rerun 1", [1]), ("end", [1]), ("end", [1]), ("rerun 2", [1])],
                 id="a second end (a run Streamlit started itself) does not lift the interval"),
]


@pytest.mark.parametrize("steps", PACE_CASES)
def test_a_rerun_waits_for_the_run_in_progress_and_the_interval_only(steps):
    assert RUN_HOLD_INTERVALS * INTERVAL_S == pytest.approx(5.0)  # the fourth case's 4.9 s and 5.1 s

    async def main():
        queue: asyncio.Queue = asyncio.Queue()
        now = [0.0]
        pacer = Pacer(queue.get, _sink, INTERVAL_S, clock=lambda: now[0])
        read: list[float] = []

        async def app():
            while True:
                state = rerun_state(await pacer.receive())
                read.append(_values(state)["s"][0])

        reader = asyncio.ensure_future(app())
        seen = []
        for step, _ in steps:
            kind, _, value = step.partition(" ")
            if kind == "rerun":
                queue.put_nowait(_message(_state(_slider("s", float(value)))))
            elif kind == "end":
                await pacer.send(FINISHED)
            else:
                now[0] += float(value)
            await asyncio.sleep(3 * INTERVAL_S)  # the pacer looks again at least every interval
            seen.append(list(read))
        reader.cancel()
        pacer.close()
        return seen

    assert _in_own_thread(main()) == [expected for _, expected in steps]


# message the app sends, whether it ends the run
FINISH_CASES = [
    pytest.param(FINISHED, True, id="script_finished"),
    pytest.param({"type": "websocket.send", "bytes": ForwardMsg(
        script_finished=ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY).SerializeToString()}, True, id="a fragment's"),
    pytest.param({"type": "websocket.send", "bytes": ForwardMsg(delta=Delta()).SerializeToString()}, False,
                 id="a delta"),
    pytest.param({"type": "websocket.send", "bytes": b"\xff" * 40}, False, id="not a forward message"),
    pytest.param({"type": "websocket.send", "bytes": FINISHED["bytes"] + ForwardMsg(
        hash="x" * 600).SerializeToString()}, False, id="too long to be one"),
    pytest.param({"type": "websocket.receive", "bytes": FINISHED["bytes"]}, False, id="one the browser sent"),
    pytest.param({"type": "websocket.send", "text": "script_finished"}, False, id="text"),
]


@pytest.mark.parametrize("message, finished", FINISH_CASES)
def test_the_pacer_sees_a_run_end_only_in_script_finished(message, finished):
    assert run_finished(message) is finished


def test_the_guards_wrap_in_order_and_a_bad_setting_stops_the_server_with_its_message(monkeypatch):
    from streamlit import config

    from dashboard.ui import guards
    from dashboard.ui.rerun_pace import RerunPace
    from dashboard.ui.sign_in_guard import SignInGuard

    before = config.get_option("server.maxUploadSize")
    try:
        assert [m.cls for m in guards.middleware()] == [SignInGuard, UploadGuard, RerunPace]
        monkeypatch.setenv("PLANNER_RERUN_INTERVAL_MS", "-1")
        with pytest.raises(SystemExit, match="cannot start: PLANNER_RERUN_INTERVAL_MS must be a whole number"):
            guards.middleware()
    finally:
        config.set_option("server.maxUploadSize", before)
