"""Server memory for ten browser sessions each uploading a 100 MB FOCUS export, and after they close.

A real `streamlit run` server is started as `make run` starts it (SERVER_MEMORY) on a free 127.0.0.1 port, with
the app's default settings (`PLANNER_IMPORT_STORE_MB` 2,000, so ten imports do not all fit and the store releases
the oldest). Ten headless Chromium sessions (Playwright) open the Retrospective page one after another; each
uploads the same 100 MB FOCUS CSV (`write_focus_csv`, ~270,000 rows) as its billing export and waits for the page to
show its rows. The sessions stay open until all ten have imported, then all close. The figure is the server's
resident memory (VmRSS, from /proc) once it has settled after the close; the reference is its memory before any
upload plus ALLOWED_MB, so a ratio of at most 1 means the server came back within ALLOWED_MB of where it started.
The figure is read once the server has shut the closed sessions down (`upload_store.CLOSED_SESSION_GRACE_S` after
they close). The peak (VmHWM) is noted beside it. Skipped without Chromium.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.browser_bench import CHROMIUM, IDLE_APP
from bench.harness import Measurement, Skipped
from bench.served import ROOT, free_port, memory_mb, running, streamlit_command
from dashboard.ui.upload_store import CLOSED_SESSION_GRACE_S, SWEEP_SECONDS

SESSIONS = 10
UPLOAD_ROWS = 270_000  # about 100 MB of write_focus_csv's rows (~372 bytes a row)
ALLOWED_MB = 300  # the server should come back within this much of its memory before the uploads
SETTLE_S = 60  # longest wait for the memory to settle after the sessions close
SERVER_MEMORY = {"MALLOC_ARENA_MAX": "2", "ARROW_DEFAULT_MEMORY_POOL": "system"}  # as `make run` starts it
_WRITE = ("import sys; from pathlib import Path; from bench.ingest_bench import write_focus_csv; "
          "write_focus_csv(Path(sys.argv[1]), rows=int(sys.argv[2]))")




def _upload_in_new_session(browser, url: str, path: Path, rows: int):
    """A new browser session on the Retrospective page that has uploaded ``path`` as its billing export; its
    context."""
    context = browser.new_context(viewport={"width": 1600, "height": 1200})
    context.set_default_timeout(300_000)
    page = context.new_page()
    page.goto(f"{url}/retrospective")
    page.wait_for_selector(IDLE_APP, state="attached")
    page.get_by_text("Change data: samples, uploads, time zone, notes").click()  # the box the uploaders are in
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(path))
    page.get_by_text(f"{rows:,} rows used of {rows:,}").first.wait_for()
    page.wait_for_selector(IDLE_APP, state="attached")
    return context


def _settled(pid: int) -> float:
    """The server's VmRSS once two readings 3 s apart differ by less than 5 MB (at most SETTLE_S)."""
    settled, deadline = memory_mb(pid)["VmRSS"], time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        time.sleep(3)
        now = memory_mb(pid)["VmRSS"]
        if abs(now - settled) < 5:
            return now
        settled = now
    return settled


def memory_after_close(sessions: int = SESSIONS, rows: int = UPLOAD_ROWS) -> Measurement:
    """Start the server, upload in ten sessions, close them; its settled memory against its memory before plus
    ALLOWED_MB."""
    if not CHROMIUM.exists():
        raise Skipped(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "focus_100mb.csv"
        subprocess.run([sys.executable, "-c", _WRITE, str(path), str(rows)], check=True, cwd=ROOT)
        size_mb = path.stat().st_size / 1e6
        env = {**os.environ, **SERVER_MEMORY, "PLANNER_STORE_URL": f"sqlite:///{folder / 'scenarios.db'}"}
        port = free_port()
        with running(streamlit_command("dashboard/app.py", port), port, ROOT, env) as (url, server):
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                     args=["--no-sandbox", "--disable-gpu"])
                warm = browser.new_context()
                warm.new_page().goto(f"{url}/retrospective")
                time.sleep(5)
                warm.close()
                before = _settled(server.pid)
                contexts = [_upload_in_new_session(browser, url, path, rows) for _ in range(sessions)]
                peak = memory_mb(server.pid)["VmHWM"]
                loaded = memory_mb(server.pid)["VmRSS"]
                for context in contexts:
                    context.close()
                browser.close()
            # The store's sweeper looks for ended sessions every 5 s and shuts a session down once it has been
            # disconnected for CLOSED_SESSION_GRACE_S (a tab may reconnect before): wait for both.
            time.sleep(CLOSED_SESSION_GRACE_S + 2 * SWEEP_SECONDS + 2)
            settled = _settled(server.pid)
    return Measurement(settled, before + ALLOWED_MB,
                       f"before {before:,.0f} MB, {loaded:,.0f} MB with the {sessions} sessions open, peak "
                       f"{peak:,.0f} MB; {sessions} sessions each uploading {size_mb:,.0f} MB ({rows:,} rows) one "
                       f"after another, settled {settled - before:+,.0f} MB from the start")


if __name__ == "__main__":
    import json

    measured = memory_after_close(int(sys.argv[1]) if len(sys.argv) > 1 else SESSIONS)
    print(json.dumps({"value": measured.value, "reference": measured.reference, "detail": measured.detail}))
