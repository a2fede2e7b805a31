"""Server memory for five browser sessions importing the 1,000,000-row FOCUS export, and after they close.

A real `streamlit run` server is started as `make run` starts it (SERVER_MEMORY) on a free 127.0.0.1 port, with
the export's folder as its data folder (`PLANNER_DATA_DIR`) and a store bound of STORE_MB
(`PLANNER_IMPORT_STORE_MB`), small enough that five imports do not fit together. Five headless Chromium sessions
(Playwright) open the Retrospective page one after another; each types the export's path into "Large export on
this machine" and waits for the page to show its 1,000,000 rows. The sessions stay open until all five have
imported, then all close. The server's peak resident memory (VmHWM) and current memory (VmRSS) come from
/proc. The bound to compare with: the server's memory before any import, plus STORE_MB of held tables, plus one
import's working memory (the CLI ingest's peak in bench.ingest_bench). Skipped, saying so, without Chromium.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
SESSIONS = 5
STORE_MB = 600
SETTLE_S = 30  # longest wait for the memory to settle after the sessions close
SERVER_MEMORY = {"MALLOC_ARENA_MAX": "2", "ARROW_DEFAULT_MEMORY_POOL": "system"}  # as `make run` starts it
IDLE_APP = '[data-testid="stApp"][data-test-script-state="notRunning"]'
_WRITE = ("import sys; from pathlib import Path; from bench.ingest_bench import write_focus_csv; "
          "write_focus_csv(Path(sys.argv[1]))")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _memory_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of a process, in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) * 1024 / 1e6
    return fields


def _wait_healthy(url: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.25)
    raise SystemExit(f"the server on {url} did not start")


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


def main() -> None:
    """Start the server, import in five sessions, close them, print the memory figures."""
    if not CHROMIUM.exists():
        print(f"sessions_bench: SKIPPED, {CHROMIUM} is missing (apt-get install chromium)")
        return
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "focus_1m.csv"
        subprocess.run([sys.executable, "-c", _WRITE, str(path)], check=True, cwd=ROOT)
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        env = {**os.environ, **SERVER_MEMORY, "PLANNER_DATA_DIR": str(folder),
               "PLANNER_IMPORT_STORE_MB": str(STORE_MB), "PLANNER_STORE_URL": f"sqlite:///{folder / 'scenarios.db'}"}
        server = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port)],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_healthy(url, server)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                     args=["--no-sandbox", "--disable-gpu"])
                warm = browser.new_context()
                warm.new_page().goto(f"{url}/retrospective")
                time.sleep(5)
                warm.close()
                before = _memory_mb(server.pid)["VmRSS"]
                contexts, after_each = [], []
                for _ in range(SESSIONS):
                    contexts.append(_import_in_new_session(browser, url, path))
                    after_each.append(_memory_mb(server.pid)["VmRSS"])
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
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"sessions_store_bound_mb: {STORE_MB} (PLANNER_IMPORT_STORE_MB for this run; default 2000)")
    print(f"sessions_server_rss_before_mb: {before:.0f} (after one session on the bundled samples)")
    print("sessions_server_rss_after_each_import_mb: " + ", ".join(f"{m:.0f}" for m in after_each))
    print(f"sessions_server_peak_rss_mb: {peak:.0f} (VmHWM over {SESSIONS} sessions importing the 1,000,000-row "
          f"export one after another; bound: {before:.0f} before + {STORE_MB} held + one import's working memory)")
    print(f"sessions_server_rss_after_close_mb: {settled:.0f} (after all {SESSIONS} sessions closed)")


if __name__ == "__main__":
    main()
