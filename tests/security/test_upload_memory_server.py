"""Issue 35, items 1-3, through a real server: each hostile upload, on one session and on four at once, is refused
(a valid export is imported) while the server's peak memory stays under the import memory budget.

A `streamlit run` server (`bench.served`, started as `make run` starts it) gets PLANNER_IMPORT_MEMORY_MB=BUDGET_MB
and a short PLANNER_IMPORT_WAIT_S. Sessions are websockets on the Import page that upload through Streamlit's
upload endpoint (`bench.upload_bench`); the payloads are generated here. The server's peak resident memory during
each upload (VmHWM from /proc, reset before it, and VmRSS sampled) must stay under its idle memory plus the
budget plus SLACK_MB (the sessions, their pages and Streamlit's copies of the uploads). A watchdog kills the
server past KILL_MB or DEADLINE_S, so a regression fails the test instead of taking the machine down.
"""

import time
from pathlib import Path

import pytest
from served_watch import watched

from bench.served import ROOT, free_port, running, streamlit_command
from bench.upload_bench import PAYLOADS, SESSIONS, PeakWatch, UploadSession, memory_mb, server_env, upload_at_once

BUDGET_MB = 1_000
SLACK_MB = 300
KILL_MB = 4_000
DEADLINE_S = 900

# payload: what every session's alerts must show (any of the phrases)
EXPECTED = {
    "bomb": ("PLANNER_IMPORT_MEMORY_MB", "busy with other imports"),
    "short_rows": ("10,000,001 lines",),
    "many_rows": ("400,000,000 rows",),
    "many_columns": ("12,000 columns, more than the 10,000",),
    "list_bomb": ("300,000,000 list values",),
    "dictionary_bomb": ("decodes to about 8,021 MB",),
    "valid": ("read as **FOCUS",),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("upload_memory")
    env = server_env(Path(folder), PLANNER_IMPORT_MEMORY_MB=str(BUDGET_MB), PLANNER_IMPORT_WAIT_S="5")
    port = free_port()
    with running(streamlit_command("dashboard/app.py", port), port, ROOT, env) as (url, process), \
            watched(process, KILL_MB, DEADLINE_S) as killed:
        UploadSession(url).close()  # the Import page's modules loaded once
        time.sleep(1)
        yield url, process, memory_mb(process.pid)["VmRSS"], killed


@pytest.fixture(scope="module")
def payloads():
    return {name: (filename, make()) for name, (filename, make) in PAYLOADS.items()}


def _shown(alerts: list[str]) -> str:
    return " ".join(alerts).replace("\\", "")  # the page escapes Markdown


@pytest.mark.parametrize("sessions", [1, SESSIONS], ids=["one_session", "four_at_once"])
@pytest.mark.parametrize("payload", list(PAYLOADS))
def test_upload_is_refused_or_bounded_under_the_budget(server, payloads, payload, sessions):
    url, process, idle, killed = server
    filename, data = payloads[payload]
    with PeakWatch(process.pid) as watch:
        results = upload_at_once(url, filename, data, sessions)
    assert not killed, killed
    for alerts in results:
        shown = _shown(alerts)
        assert any(phrase in shown for phrase in EXPECTED[payload]), shown[:600]
        assert "Traceback" not in shown
    assert watch.peak < idle + BUDGET_MB + SLACK_MB, (
        f"{payload} on {sessions} session(s): peak {watch.peak:,.0f} MB, idle {idle:,.0f} MB, budget {BUDGET_MB} MB")
