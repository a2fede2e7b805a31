"""A filter change on the bundled samples against the pandas code before the query layer (issue 18's "no slower").

"Before" is the project at `BEFORE_LAYER` (the commit before the Retrospective's figures became queries), its tree
exported with `git archive`; "now" is this tree. Two figures, each on the Retrospective's default view (the FOCUS
and Slurm samples joined) over the Teams selections (each team alone, then all teams but it; a small and a
near-full slice):

- As a user waits for it (the target's figure): both trees served by `streamlit run` from their own roots, as they
  ship, on free 127.0.0.1 ports; a client speaking Streamlit's websocket protocol (`bench.websocket_client`)
  changes the Teams filter and times the rerun to its last message, the servers alternating, each server's
  start-up work let finish first (`SETTLE_S`). Pass k (of `SERVER_PASSES`) first ends the date range k days early
  (not timed), so that no selection is one a cache has seen.
- The page script alone: each tree in a worker process of its own under `streamlit.testing.v1.AppTest`, the Plan
  page, then the Retrospective, then `PASSES` passes, `st.cache_data` cleared before each pass so every selection
  filters and adds up again, the workers' passes alternating; wall-clock and the worker's CPU time (which waiting
  for a core does not count). The warm-up thread is off (`PLANNER_WARM_UP=0`). AppTest runs no garbage collection
  after a run, so this leaves out what the server does between runs.

Figures are medians. Without git or the commit (a source archive), only this tree is timed, and the output says so.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from bench.browser_bench import served
from bench.server_bench import exported_tree
from bench.websocket_client import Session, connection, multiselect, slider

ROOT = Path(__file__).resolve().parents[1]
BEFORE_LAYER = "6a29edc"  # the pandas Retrospective (the commit that pinned the query layer's libraries)
PASSES = 6
SERVER_PASSES = 4
SETTLE_S = 8.0  # this tree's start-up thread (warm-up, then the freeze) ends within this on this machine
TARGET_RATIO = 1.0
# One tree's Retrospective: reads "pass" and answers the wall and CPU seconds of each selection's rerun.
_WORKER = """
import json, os, sys, time
import streamlit as st
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(os.path.join(os.getcwd(), "dashboard", "app.py"), default_timeout=120)
at.run()
at.switch_page("app_pages/retro.py")
at.run()
teams = list(at.multiselect(key="retro.teams").options)
selections = [s for team in teams for s in ([team], [t for t in teams if t != team])]
for line in sys.stdin:
    st.cache_data.clear()
    wall, cpu = [], []
    for selection in selections:
        at.multiselect(key="retro.teams").set_value(selection)
        started, started_cpu = time.perf_counter(), time.process_time()
        at.run()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
        if at.exception:
            raise SystemExit(f"the Retrospective raised on {selection}: {at.exception[0].value}")
    print(json.dumps({"wall": wall, "cpu": cpu, "teams": len(teams)}), flush=True)
"""


class PageWorker:
    """The Retrospective of the tree at `folder`, in a worker process."""

    def __init__(self, folder: Path) -> None:
        env = {"PYTHONPATH": str(folder), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PLANNER_WARM_UP": "0",
               "HOME": os.environ.get("HOME", "/tmp")}
        self.worker = subprocess.Popen([sys.executable, "-c", _WORKER], cwd=folder, text=True, env=env,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def one_pass(self, samples: dict[str, list[float]]) -> int:
        self.worker.stdin.write("pass\n")
        self.worker.stdin.flush()
        line = self.worker.stdout.readline()
        if not line:
            raise SystemExit("a Retrospective worker stopped (run `make bench` from a full checkout)")
        answer = json.loads(line)
        samples["wall"] += answer["wall"]
        samples["cpu"] += answer["cpu"]
        return answer["teams"]

    def close(self) -> None:
        self.worker.stdin.close()
        self.worker.wait()


def _ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def _selections(teams: list[str]) -> list[list[str]]:
    return [selection for team in teams for selection in ([team], [t for t in teams if t != team])]


def server_figures() -> None:
    """Both trees served as they ship; a filter change timed to its rerun's last message."""
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        trees = {"now": ROOT} | ({"before": folder} if exported_tree(folder, BEFORE_LAYER) else {})
        sessions, teams, dates = {}, {}, {}
        for side, tree in trees.items():
            url = stack.enter_context(served(tree / "dashboard" / "app.py", tree))
            sessions[side] = Session(stack.enter_context(connection(url)), page="retrospective")
            drawn = sessions[side].rerun()
            teams[side], dates[side] = drawn.widget("multiselect", "Teams"), drawn.widget("slider", "Dates (UTC)")
        time.sleep(SETTLE_S)
        times: dict[str, list[float]] = {side: [] for side in trees}
        for days in range(SERVER_PASSES):
            for side, session in sessions.items():
                session.rerun(multiselect(teams[side], []),
                              slider(dates[side], dates[side].min, dates[side].max - days * dates[side].step))
                for selection in _selections(list(teams[side].options)):
                    times[side].append(session.rerun(multiselect(teams[side], selection)).finished_s)
    now = _ms(times["now"])
    print(f"small_filter_change_server_ms: {now:.1f} (median of {len(times['now'])} Teams selections on a "
          "`streamlit run` server, to the rerun's last message)")
    if "before" not in times:
        print(f"small_filter_change_server_ratio: n/a (no git history: the tree at {BEFORE_LAYER} could not be "
              "exported)")
        return
    before = _ms(times["before"])
    print(f"small_filter_change_server_before_layer_ms: {before:.1f} (the pandas Retrospective at {BEFORE_LAYER} "
          "served as it shipped, selections alternating)")
    print(f"small_filter_change_server_ratio: {now / before:.2f} (target <= {TARGET_RATIO})")


def script_figures() -> None:
    """Each tree's page script under AppTest in a worker of its own."""
    with tempfile.TemporaryDirectory() as folder:
        before_tree = exported_tree(Path(folder), BEFORE_LAYER)
        workers = {"now": PageWorker(ROOT)} | ({"before": PageWorker(before_tree)} if before_tree else {})
        samples = {side: {"wall": [], "cpu": []} for side in workers}
        try:
            for _ in range(PASSES):
                for side, worker in workers.items():
                    teams = worker.one_pass(samples[side])
        finally:
            for worker in workers.values():
                worker.close()
    now = samples["now"]
    count = len(now["wall"])
    print(f"small_filter_change_script_ms: {_ms(now['wall']):.1f} wall, {_ms(now['cpu']):.1f} CPU (median of "
          f"{count} Teams selections, {teams} teams: each alone and all but it, caches cleared; the page script "
          "under AppTest)")
    if "before" not in samples:
        print(f"small_filter_change_script_ratio: n/a (no git history: the tree at {BEFORE_LAYER} could not be "
              "exported)")
        return
    before = samples["before"]
    print(f"small_filter_change_script_before_layer_ms: {_ms(before['wall']):.1f} wall, {_ms(before['cpu']):.1f} "
          f"CPU (the pandas Retrospective at {BEFORE_LAYER}, passes alternating)")
    print(f"small_filter_change_script_ratio: {_ms(now['wall']) / _ms(before['wall']):.2f} wall, "
          f"{_ms(now['cpu']) / _ms(before['cpu']):.2f} CPU (the script alone: the query layer's own cost, "
          "without the server's work after each run)")


def main() -> None:
    server_figures()
    script_figures()


if __name__ == "__main__":
    main()
