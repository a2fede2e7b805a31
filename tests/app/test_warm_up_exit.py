"""The server's start-up thread cannot crash a process at exit. Before the fix the thread also started under AppTest
as a daemon, and a process that ended while it was amid its DuckDB queries died with "terminate called without an
active exception" (SIGABRT, exit 134) or hung in its exit waiting for Arrow's thread pool. On the code before the
fix, tests/support/warm_exit_runs.py's twenty processes had 4 and then 3 hung (killed after 30 s); exiting at fixed
delays after the run instead, 2 of 20 aborted.

Each process here is forked from one subprocess (tests/support/warm_exit_runs.py) and exits right after an AppTest
run of the Plan page with the warm-up on, or in a simulated server, amid the thread's queries. About 40 s for the
twenty AppTest runs and 20 s for the five server runs on a loaded 2-core machine.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "support" / "warm_exit_runs.py"


def _exit_codes(tmp_path, runs: int, *mode: str) -> list:
    env = {**os.environ, "PLANNER_STORE_URL": f"sqlite:///{tmp_path / 'scenarios.db'}"}
    env.pop("PLANNER_WARM_UP", None)
    done = subprocess.run([sys.executable, str(SCRIPT), str(ROOT), str(runs), *mode], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the runs are forked")
def test_twenty_app_test_runs_with_the_warm_up_on_each_exit_cleanly(tmp_path):
    assert _exit_codes(tmp_path, 20) == [0] * 20


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the runs are forked")
def test_a_server_process_ending_amid_the_warm_up_exits_cleanly(tmp_path):
    """With the thread running (``in_server`` forced), the exit hook stops it after its query and waits."""
    assert _exit_codes(tmp_path, 5, "server") == [0] * 5
