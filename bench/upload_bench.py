"""Hostile uploads through a real `streamlit run` server, one session or several at once, and the server's peak
memory meanwhile (issue 35): the `concurrent_bomb_peak_memory` benchmark, and the helpers of
`tests/security/test_upload_memory_server.py`.

A session is a websocket as the browser opens it (`bench.websocket_client`): it opens the Import page, picks
"Upload a file", asks the server for an upload URL, PUTs the file to Streamlit's upload endpoint (with an XSRF
token as cookie and header, as the browser sends it) and reruns with the uploader holding the file; the rerun's
alerts are its outcome. The server's memory is read from /proc (VmRSS, and VmHWM reset through
/proc/PID/clear_refs before each upload so that it is the peak of that upload alone). The payloads are generated
here; none is stored.
"""

from __future__ import annotations

import gzip
import io
import os
import tempfile
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import requests
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.Common_pb2 import FileUploaderState, FileURLsRequest, UploadedFileInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates

from bench import parquet_bombs
from bench.harness import Measurement
from bench.served import ROOT, free_port, memory_mb, running, streamlit_command
from bench.websocket_client import TIMEOUT_S, connection

FOCUS_SMALL = ROOT / "tests" / "data" / "ingest" / "focus_small.csv"
IMPORT_PAGE = "imports"
SOURCE = "Source"
UPLOADER = "Export file (.csv, .txt, .tsv, .log, .parquet, optionally .gz or .zip)"
SESSIONS = 4
SERVER_MEMORY = {"MALLOC_ARENA_MAX": "2", "ARROW_DEFAULT_MEMORY_POOL": "system"}  # as `make run` starts it
MIB = 1 << 20


# The payloads of issue 35, generated.

def _gzip_of_zeros(size: int) -> bytes:
    """One gzip member of ``size`` zero bytes, compressed a MiB at a time."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(MIB)
    return b"".join(packer.compress(zeros) for _ in range(size // MIB)) + packer.flush()


def bomb() -> bytes:
    """A .csv.gz.gz of some 60 KB: 4 GiB of zeros gzipped (as 256 MiB members), gzipped again."""
    return gzip.compress(_gzip_of_zeros(256 * MIB) * 16, compresslevel=9)


def short_rows(lines: int = 10_000_000) -> bytes:
    """A .csv.gz of some 20 KB: a FOCUS header and ``lines`` lines of ``1``."""
    header = FOCUS_SMALL.read_bytes().splitlines()[0]
    return gzip.compress(header + b"\n" + b"1\n" * lines, compresslevel=9)


def many_rows(rows: int = 400_000_000, group: int = 20_000_000) -> bytes:
    """A Parquet file of about 2 MB holding ``rows`` identical rows."""
    block = pa.table({"ChargePeriodStart": pa.array(np.zeros(group, dtype=np.int8))})
    out = io.BytesIO()
    with pq.ParquetWriter(out, block.schema, compression="zstd") as writer:
        for _ in range(rows // group):
            writer.write_table(block, row_group_size=group)
    return out.getvalue()


def many_columns(columns: int = 12_000) -> bytes:
    """A one-row Parquet file with ``columns`` columns (past the default 10,000)."""
    out = io.BytesIO()
    pq.write_table(pa.table({f"c{i}": [1] for i in range(columns)}), out)
    return out.getvalue()


def valid_export(rows: int = 100_000) -> bytes:
    """A valid FOCUS .csv.gz (`bench.ingest_bench.write_focus_csv`)."""
    from bench.ingest_bench import write_focus_csv

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "focus.csv"
        write_focus_csv(path, rows=rows)
        return gzip.compress(path.read_bytes(), compresslevel=6)


PAYLOADS: dict[str, tuple[str, Callable[[], bytes]]] = {  # name: (file name, generator)
    "bomb": ("bomb.csv.gz.gz", bomb),
    "short_rows": ("short_rows.csv.gz", short_rows),
    "many_rows": ("many_rows.parquet", many_rows),
    "many_columns": ("many_columns.parquet", many_columns),
    "list_bomb": ("list.parquet", parquet_bombs.list_bomb),  # issue 53
    "dictionary_bomb": ("dictionary.parquet", parquet_bombs.dictionary_bomb),
    "valid": ("focus.csv.gz", valid_export),
}




class PeakWatch:
    """The peak resident memory of process ``pid`` over a block, in MB: VmHWM reset on entry when /proc allows,
    and VmRSS sampled every 20 ms besides (the larger of the two)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()

    def __enter__(self) -> PeakWatch:
        try:
            Path(f"/proc/{self.pid}/clear_refs").write_text("5")
            self.reset = True
        except OSError:
            self.reset = False
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, memory_mb(self.pid)["VmRSS"])
            time.sleep(0.02)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        if self.reset:
            self.peak = max(self.peak, memory_mb(self.pid)["VmHWM"])


# A session uploading a file.

class UploadSession:
    """One browser session on the Import page, as its websocket sees it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.socket = connection(url)
        self.session_id = ""
        self.page_hash = ""
        first = self._rerun()
        self.page_hash = first["pages"][IMPORT_PAGE]
        page = self._rerun()
        self.source = page["widgets"][("radio", SOURCE)]
        page = self._rerun(self._radio())
        self.uploader = page["widgets"][("file_uploader", UPLOADER)]

    def _radio(self) -> WidgetState:
        state = WidgetState(id=self.source.id)
        state.string_value = "Upload a file"  # a radio's value is its formatted option
        return state

    def _receive(self) -> ForwardMsg:
        message = ForwardMsg()
        message.ParseFromString(self.socket.recv(timeout=TIMEOUT_S))
        if message.WhichOneof("type") == "new_session":
            self.session_id = message.new_session.initialize.session_id
        return message

    def _rerun(self, *widgets: WidgetState) -> dict:
        """Rerun the page with ``widgets``; its alerts' texts, its widgets by (kind, label) and the pages."""
        state = ClientState(query_string="", page_script_hash=self.page_hash)
        if widgets:
            state.widget_states.CopyFrom(WidgetStates(widgets=list(widgets)))
        self.socket.send(BackMsg(rerun_script=state).SerializeToString())
        alerts, widgets_seen, pages = [], {}, {}
        while True:
            message = self._receive()
            kind = message.WhichOneof("type")
            if kind == "script_finished":
                return {"alerts": alerts, "widgets": widgets_seen, "pages": pages}
            if kind == "navigation":
                pages = {page.url_pathname: page.page_script_hash for page in message.navigation.app_pages}
            elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                element = message.delta.new_element
                which = element.WhichOneof("type")
                if which == "alert":
                    alerts.append(element.alert.body)
                elif which in ("radio", "file_uploader"):
                    widgets_seen[(which, getattr(element, which).label)] = getattr(element, which)

    def upload(self, name: str, data: bytes) -> list[str]:
        """Upload ``data`` as ``name`` and rerun the page with it; the rerun's alerts (errors, success)."""
        request_id = uuid.uuid4().hex
        request = FileURLsRequest(request_id=request_id, file_names=[name], session_id=self.session_id)
        self.socket.send(BackMsg(file_urls_request=request).SerializeToString())
        while True:
            message = self._receive()
            if message.WhichOneof("type") == "file_urls_response":
                break
        urls = message.file_urls_response.file_urls[0]
        from streamlit.web.server.starlette.starlette_app_utils import generate_xsrf_token_string

        token = generate_xsrf_token_string()
        upload_url = urls.upload_url if urls.upload_url.startswith("http") else self.url + urls.upload_url
        response = requests.put(upload_url, files={"file": (name, data, "application/octet-stream")},
                                headers={"X-Xsrftoken": token}, cookies={"_streamlit_xsrf": token},
                                timeout=TIMEOUT_S)
        response.raise_for_status()
        uploaded = WidgetState(id=self.uploader.id)
        uploaded.file_uploader_state_value.CopyFrom(FileUploaderState(uploaded_file_info=[
            UploadedFileInfo(name=name, size=len(data), file_id=urls.file_id, file_urls=urls)]))
        return self._rerun(self._radio(), uploaded)["alerts"]

    def close(self) -> None:
        self.socket.close()


def upload_at_once(url: str, name: str, data: bytes, sessions: int) -> list[list[str]]:
    """``sessions`` new sessions, each uploading ``data`` at the same moment; each one's alerts."""
    opened = [UploadSession(url) for _ in range(sessions)]
    results: list[list[str] | BaseException] = [[] for _ in opened]
    start = threading.Barrier(len(opened))

    def run(index: int) -> None:
        try:
            start.wait()
            results[index] = opened[index].upload(name, data)
        except BaseException as error:  # reported by the caller
            results[index] = error

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(opened))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT_S * 2)
    for session in opened:
        session.close()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results  # type: ignore[return-value]


def server_env(folder: Path, **settings: str) -> dict[str, str]:
    """The environment of a server started as `make run` starts it, with its own scenario store and ``settings``."""
    return {**os.environ, **SERVER_MEMORY, "PLANNER_STORE_URL": f"sqlite:///{folder / 'scenarios.db'}",
            "PLANNER_WARM_UP": "0", **settings}


def concurrent_bomb_peak_memory() -> Measurement:
    """A server with the default settings; four sessions upload the bomb at once: its peak against its idle RSS."""
    data = bomb()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        with running(streamlit_command("dashboard/app.py", port), port, ROOT, server_env(Path(tmp))) as (url, server):
            UploadSession(url).close()  # the Import page's modules loaded once
            time.sleep(2)
            idle = memory_mb(server.pid)["VmRSS"]
            started = time.perf_counter()
            with PeakWatch(server.pid) as watch:
                results = upload_at_once(url, PAYLOADS["bomb"][0], data, SESSIONS)
            seconds = time.perf_counter() - started
    refused = sum(any("more than" in alert or "busy" in alert for alert in alerts) for alerts in results)
    return Measurement(watch.peak, idle, f"{SESSIONS} sessions uploading a {len(data) / 1e3:,.0f} KB .csv.gz.gz "
                       f"(4 GiB inflated) at once; {refused} refused in {seconds:,.1f} s; default "
                       "PLANNER_IMPORT_MEMORY_MB (6,000)")
