"""Issue 53's two probes of a served app, as an attacker sends them (not through the widgets): large PUTs straight to
Streamlit's upload endpoint, and a flood of rerun messages from one websocket session. The helpers are shared with
tests/security/test_server_guards.py, which runs them scaled down; the benchmarks run them at full size.

A PUT is sent over a raw socket: its headers, then its multipart body in 1 MiB pieces of zeros (never held in this
process), stopping as soon as the server answers, so a refusal before the body is read shows as one.
"""

from __future__ import annotations

import functools
import http.client
import select
import socket
import statistics
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from websockets.sync.client import ClientConnection

from bench.harness import Measurement
from bench.served import ROOT, free_port, memory_mb, running, streamlit_command
from bench.upload_bench import PeakWatch, server_env
from bench.websocket_client import TIMEOUT_S, connection, slider
from dashboard import settings

PIECE = b"\0" * (1 << 20)
BOUNDARY = "planner-probe-boundary"
FLOOD_MESSAGES = 2_858  # the count
FLOOD_QUERY = "mfu=0.4"  # an entered MFU: the Plan page's MFU slider is live
FLOOD_SLIDER = "MFU (%)"


@dataclass
class Answer:
    status: int
    text: str
    body_sent: int  # bytes of the body sent before the server answered


def xsrf_cookie() -> tuple[str, str]:
    """An XSRF token and its cookie value, as every visitor's browser gets them."""
    from streamlit.web.server.starlette.starlette_app_utils import generate_xsrf_token_string

    token = generate_xsrf_token_string()
    return token, token


def put_upload(url: str, session_id: str, size: int, cookies: dict[str, str] | None = None,
               chunked: bool = False, send_body: bool = True) -> Answer:
    """PUT a ``size``-byte file to the upload endpoint of ``session_id``; the server's answer. With ``chunked``, no
    Content-Length (Transfer-Encoding: chunked); without ``send_body``, only the headers are sent."""
    host, port = url.removeprefix("http://").split(":")
    token, cookie = xsrf_cookie()
    jar = {"_streamlit_xsrf": cookie, **(cookies or {})}
    head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"probe.csv\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()
    length = len(head) + size + len(tail)
    lines = [f"PUT /_stcore/upload_file/{session_id}/{uuid.uuid4().hex} HTTP/1.1", f"Host: {host}:{port}",
             f"Content-Type: multipart/form-data; boundary={BOUNDARY}", f"X-Xsrftoken: {token}",
             "Cookie: " + "; ".join(f"{name}={value}" for name, value in jar.items()),
             "Transfer-Encoding: chunked" if chunked else f"Content-Length: {length}"]
    sock = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
    sent = 0
    try:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        pieces = [head] + [PIECE] * (size // len(PIECE)) + [PIECE[:size % len(PIECE)], tail] if send_body else []
        for piece in pieces:
            if select.select([sock], [], [], 0)[0]:
                break  # answered already
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            sent += len(piece)
        else:
            if chunked and send_body:
                sock.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        response = http.client.HTTPResponse(sock)
        response.begin()
        return Answer(response.status, response.read().decode(errors="replace"), sent)
    except (ConnectionResetError, http.client.RemoteDisconnected) as error:
        return Answer(0, f"connection closed: {error}", sent)
    finally:
        sock.close()


@dataclass
class Probe:
    """A websocket session on the Plan page: its id and what its reruns drew."""

    socket: ClientConnection
    query: str = ""
    session_id: str = ""
    started: int = 0  # script runs started (a `new_session` message opens each)
    finished: int = 0
    elements: list = field(default_factory=list)
    address_mfu: float | None = None  # the MFU (%) in the page address the last run set


    def receive(self) -> str:
        message = ForwardMsg()
        message.ParseFromString(self.socket.recv(timeout=TIMEOUT_S))
        kind = message.WhichOneof("type")
        if kind == "new_session":
            self.session_id = message.new_session.initialize.session_id
            self.started += 1
            self.elements = []
        elif kind == "script_finished":
            self.finished += 1
        elif kind == "page_info_changed":
            mfu = urllib.parse.parse_qs(message.page_info_changed.query_string).get("mfu")
            self.address_mfu = float(mfu[0]) * 100 if mfu else None
        elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
            self.elements.append(message.delta.new_element)
        return kind or ""

    def request(self, *widgets: WidgetState) -> None:
        state = ClientState(query_string=self.query)
        if widgets:
            state.widget_states.CopyFrom(WidgetStates(widgets=list(widgets)))
        self.socket.send(BackMsg(rerun_script=state).SerializeToString())

    def rerun(self, *widgets: WidgetState) -> float:
        """A rerun with ``widgets``, waited for; its seconds to ``script_finished``."""
        started = time.perf_counter()
        self.request(*widgets)
        while self.receive() != "script_finished":
            pass
        return time.perf_counter() - started

    def slider(self, label: str):
        found = [e.slider for e in self.elements if e.WhichOneof("type") == "slider" and e.slider.label == label]
        if not found:
            raise SystemExit(f"no slider labelled {label!r}")
        return found[-1]


def open_probe(url: str, query: str = "") -> Probe:
    """A new session on the Plan page, drawn whole: its first run draws the tiles alone and the second, which a
    browser asks for once they are painted (`dashboard.ui.first_paint`), everything."""
    probe = Probe(connection(url), query)
    probe.rerun()
    probe.rerun()
    return probe


def health_s(url: str) -> float:
    """Seconds the health check takes to answer "ok" (OSError when it does not)."""
    started = time.perf_counter()
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=TIMEOUT_S) as response:
        if response.read().decode().strip() != "ok":
            raise OSError("the health check did not answer ok")
    return time.perf_counter() - started


@dataclass
class UploadFlood:
    statuses: Counter
    idle_mb: float
    peak_mb: float
    health_idle_s: float
    health_worst_s: float
    health_failures: int  # health checks that got no "ok" (an error, or no answer within TIMEOUT_S)


def upload_flood(url: str, pid: int, sessions: int, puts: int, size: int) -> UploadFlood:
    """``puts`` PUTs of ``size`` bytes at once, spread over ``sessions`` websocket sessions; their statuses, the
    server's idle and peak memory, and the health check's time idle and at worst during the flood."""
    probes = [open_probe(url) for _ in range(sessions)]
    time.sleep(1)
    idle = memory_mb(pid)["VmRSS"]
    health_idle = statistics.median(health_s(url) for _ in range(5))
    answers: list[Answer | None] = [None] * puts
    gate = threading.Barrier(puts)

    def put(index: int) -> None:
        gate.wait()
        answers[index] = put_upload(url, probes[index % sessions].session_id, size)

    done = threading.Event()
    health: list[float] = []
    failures: list[BaseException] = []

    def watch_health() -> None:
        while not done.is_set():
            try:
                health.append(health_s(url))
            except OSError as error:  # urllib's errors, timeouts included
                failures.append(error)
            time.sleep(0.1)

    threads = [threading.Thread(target=put, args=(i,), daemon=True) for i in range(puts)]
    watcher = threading.Thread(target=watch_health, daemon=True)
    with PeakWatch(pid) as watch:
        watcher.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIMEOUT_S * 5)
        done.set()
        watcher.join()
    for probe in probes:
        probe.socket.close()
    statuses = Counter(answer.status if answer else -1 for answer in answers)
    return UploadFlood(statuses, idle, watch.peak, health_idle, max(health, default=0.0), len(failures))


@dataclass
class RerunFlood:
    messages: int
    started: int  # the flooding session's script runs
    seconds: float  # from the first message sent to the flooder's last run finished
    last_value: float | None  # the MFU in the page address after the flooder's last run
    sent_value: float  # the MFU of the last message sent
    other_idle_s: list[float]
    other_during_s: list[float]


def rerun_flood(url: str, messages: int = FLOOD_MESSAGES, other_reruns: int = 3) -> RerunFlood:
    """One session sends ``messages`` rerun messages, each with a new MFU, without waiting; another session reruns
    ``other_reruns`` times before and during the flood."""
    flooder, other = open_probe(url, FLOOD_QUERY), open_probe(url, FLOOD_QUERY)
    mfu, other_mfu = flooder.slider(FLOOD_SLIDER), other.slider(FLOOD_SLIDER)
    idle = [other.rerun(slider(other_mfu, 30.0 + i)) for i in range(other_reruns)]
    started_before = flooder.started
    values = [10.0 + (i % 40) * 0.5 for i in range(messages - 1)] + [35.0]  # 0.5 steps; the last one unique
    first = time.perf_counter()
    for value in values:
        flooder.request(slider(mfu, value))
    during = [other.rerun(slider(other_mfu, 20.0 + i)) for i in range(other_reruns)]
    # The flooder's last run is the one that puts the last value in the address; read until it has (or TIMEOUT_S).
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if flooder.receive() == "script_finished" and flooder.address_mfu is not None \
                and abs(flooder.address_mfu - values[-1]) < 1e-6:
            break
    seconds = time.perf_counter() - first
    flooder.socket.close()
    other.socket.close()
    return RerunFlood(messages, flooder.started - started_before, seconds, flooder.address_mfu, values[-1], idle,
                      during)


def _served(**settings: str):
    folder = tempfile.TemporaryDirectory()
    port = free_port()
    env = server_env(Path(folder.name), **settings)
    return folder, running(streamlit_command("dashboard/app.py", port), port, ROOT, env)


@functools.cache
def full_size_upload_flood() -> UploadFlood:
    """20 PUTs of 450 MB at once from 20 sessions, on a server with the default upload settings."""
    folder, server = _served()
    with folder, server as (url, process):
        return upload_flood(url, process.pid, sessions=20, puts=20, size=450 * (1 << 20))


def _flood_detail(flood: UploadFlood) -> str:
    shown = ", ".join(f"{count} × {status}" for status, count in sorted(flood.statuses.items()))
    return (f"20 PUTs of 450 MiB from 20 sessions: {shown}; health {flood.health_idle_s * 1e3:,.0f} ms idle, "
            f"{flood.health_worst_s * 1e3:,.0f} ms at worst; peak {flood.peak_mb:,.0f} MB, "
            f"idle {flood.idle_mb:,.0f} MB")


def upload_flood_peak_memory() -> Measurement:
    flood = full_size_upload_flood()
    bound_mb = settings.mebibytes(settings.UPLOAD_TOTAL_MB) / 1e6
    return Measurement(flood.peak_mb, flood.idle_mb + bound_mb, _flood_detail(flood))


def upload_flood_health(max_wait_s: float = 1.0) -> Measurement:
    flood = full_size_upload_flood()
    return Measurement(flood.health_worst_s * 1e3, max_wait_s * 1e3, _flood_detail(flood))


def rerun_flood_other_session() -> Measurement:
    """Another session's rerun while one floods FLOOD_MESSAGES rerun messages, against its rerun before."""
    folder, server = _served()
    with folder, server as (url, _):
        flood = rerun_flood(url)
    return Measurement(max(flood.other_during_s) * 1e3, statistics.median(flood.other_idle_s) * 1e3,
                       f"{flood.messages:,} messages started {flood.started} runs of the flooding session in "
                       f"{flood.seconds:.1f} s (its last run drew the last message's MFU: "
                       f"{flood.last_value == flood.sent_value}); the other session's reruns "
                       f"{', '.join(f'{s * 1e3:,.0f}' for s in flood.other_during_s)} ms during the flood")
