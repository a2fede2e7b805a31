"""Server memory for five browser sessions importing the 1,000,000-row FOCUS export, and after they close.

A real `streamlit run` server is started as `make run` starts it (SERVER_MEMORY) on a free 127.0.0.1 port, with
the export's folder as its data folder (`PLANNER_DATA_DIR`) and a store bound of STORE_MB
(`PLANNER_IMPORT_STORE_MB`), small enough that five imports do not fit together. Five headless Chromium sessions
(Playwright) open the Retrospective page one after another; each types the export's path into "Large export on
this machine" and waits for the page to show its 1,000,000 rows. The sessions stay open until all five have
imported, then all close. The figure is the server's resident memory (VmRSS, from /proc) once it has settled
after the close, against its memory before any import; the peak (VmHWM) is noted beside it. Skipped without
Chromium.
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
from bench.served import ROOT, free_port, running, streamlit_command

SESSIONS = 5
STORE_MB = 600
SETTLE_S = 30  # longest wait for the memory to settle after the sessions close
SERVER_MEMORY = {"MALLOC_ARENA_MAX": "2", "ARROW_DEFAULT_MEMORY_POOL": "system"}  # as `make run` starts it
_WRITE = ("import sys; from pathlib import Path; from bench.ingest_bench import write_focus_csv; "
          "write_focus_csv(Path(sys.argv[1]))")


def _memory_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of a process, in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) * 1024 / 1e6
    return fields


def _import_in_new_session(browser, url: str, path: Path):
    """A new browser session on the Retrospective page that has imported ``path``; its context."""
    context = browser.new_context(viewport={"width": 1600, "height": 1200})
    context.set_default_timeout(180_000)
    page = context.new_page()
    page.goto(f"{url}/retrospective")
    page.wait_for_selector(IDLE_APP, state="attached")
    page.get_by_text("Change data: samples, uploads, time zone, notes").click()  # the box the export's field is in
    page.get_by_text("Large export on this machine").click()
    box = page.get_by_role("textbox", name="File or folder of Parquet parts (replaces the choice above)")
    box.fill(str(path))
    box.press("Enter")
    page.get_by_text("1,000,000 rows used of 1,000,000").first.wait_for()
    page.wait_for_selector(IDLE_APP, state="attached")
    return context


def memory_after_close() -> Measurement:
    """Start the server, import in five sessions, close them; its settled memory against its memory before."""
    if not CHROMIUM.exists():
        raise Skipped(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "focus_1m.csv"
        subprocess.run([sys.executable, "-c", _WRITE, str(path)], check=True, cwd=ROOT)
        env = {**os.environ, **SERVER_MEMORY, "PLANNER_DATA_DIR": str(folder),
               "PLANNER_IMPORT_STORE_MB": str(STORE_MB), "PLANNER_STORE_URL": f"sqlite:///{folder / 'scenarios.db'}"}
        port = free_port()
        with running(streamlit_command("dashboard/app.py", port), port, ROOT, env) as (url, server):
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                     args=["--no-sandbox", "--disable-gpu"])
                warm = browser.new_context()
                warm.new_page().goto(f"{url}/retrospective")
                time.sleep(5)
                warm.close()
                before = _memory_mb(server.pid)["VmRSS"]
                contexts = [_import_in_new_session(browser, url, path) for _ in range(SESSIONS)]
                peak = _memory_mb(server.pid)["VmHWM"]
                for context in contexts:
                    context.close()
                browser.close()
            time.sleep(6)  # the store's sweeper looks for ended sessions every 5 s
            settled, deadline = _memory_mb(server.pid)["VmRSS"], time.monotonic() + SETTLE_S
            while time.monotonic() < deadline:
                time.sleep(2)
                now = _memory_mb(server.pid)["VmRSS"]
                if abs(now - settled) < 5:
                    break
                settled = now
    return Measurement(settled, before, f"peak {peak:,.0f} MB over {SESSIONS} sessions importing one after "
                       f"another, store bound {STORE_MB} MB")
