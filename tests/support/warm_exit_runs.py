"""Run by tests/app/test_warm_up_exit.py as a script: ``python warm_exit_runs.py ROOT RUNS [server]``.

Each of RUNS processes, forked from this one once Streamlit and the Plan page's modules are imported, runs AppTest
on ROOT's app (the Plan page) with the warm-up on, then exits as a process does (the interpreter finalises) while
the start-up thread, if one started, is amid its DuckDB queries: after its run-th compiled query shape, counting
1 to 8 over and over, so that the exits land in different queries. With ``server`` the app is told it runs in a
real server (``dashboard.ui.warm.in_server``), so the thread starts and its exit hook is what is tested.

Prints each process's exit status as a JSON list: -6 is SIGABRT ("terminate called without an active exception",
the thread torn down inside DuckDB), "hung" a process that had not ended EXIT_S after its run (the interpreter's
exit waiting for Arrow's thread pool, which the torn-down thread was using; it is then killed).
"""

import importlib
import json
import os
import sys
import threading
import time
import traceback

root, runs = sys.argv[1], int(sys.argv[2])
server = sys.argv[3:] == ["server"]
sys.path.insert(0, root)
os.environ.pop("PLANNER_WARM_UP", None)  # on, as in a server started without the setting
WAIT_S = 30  # at most, for the thread to reach its query
EXIT_S = 30  # at most, for a process to run the page and exit

from streamlit.testing.v1 import AppTest  # noqa: E402  (imported once, before the forks)

# The Plan page's modules, imported once here so that each run takes about a second; not the query layer's (Ibis,
# DuckDB), which the start-up thread imports itself, as in a server.
for name in ("dashboard.ui.plan_view", "dashboard.ui.plan_controls", "dashboard.ui.plan_state",
             "dashboard.ui.plan_charts_view", "dashboard.ui.feasibility_view", "dashboard.ui.cache",
             "dashboard.ui.warm", "dashboard.core.presets", "dashboard.core.risk"):
    importlib.import_module(name)
assert "duckdb" not in sys.modules and threading.active_count() == 1, "fork only a process with one thread"


def amid_queries(thread: threading.Thread, shapes: int) -> None:
    """Return once ``thread`` has compiled ``shapes`` query shapes (or has ended)."""
    deadline = time.monotonic() + WAIT_S
    while thread.is_alive() and time.monotonic() < deadline:
        compiled = sys.modules.get("dashboard.query.compiled")
        if len(getattr(compiled, "_COMPILED", ())) >= shapes:
            return
        time.sleep(0.005)


codes: list[int | str] = []  # each run's exit code, or "hung"
for run in range(runs):
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            if server:
                from dashboard.ui import warm  # imported above, before the fork

                warm.in_server = lambda: True
            at = AppTest.from_file(os.path.join(root, "dashboard", "app.py"), default_timeout=60)
            at.run()
            if at.exception:
                print(at.exception, file=sys.stderr)
                status = 3
            for thread in threading.enumerate():
                if thread.name == "planner-start-up":
                    amid_queries(thread, run % 8 + 1)
        except BaseException:
            traceback.print_exc()
            status = 3
        sys.exit(status)
    deadline = time.monotonic() + EXIT_S
    while (ended := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if ended[0] == 0:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        codes.append("hung")
    else:
        codes.append(os.waitstatus_to_exitcode(ended[1]))
print(json.dumps(codes))
