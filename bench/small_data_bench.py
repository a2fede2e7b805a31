"""A filter change on the bundled samples against the pandas code before the query layer (issue 18's "no slower").

"Before" is the project at `BEFORE_LAYER` (the commit before the Retrospective's figures became queries), its tree
exported with `git archive`; "now" is this tree. Each runs in a worker process of its own under
`streamlit.testing.v1.AppTest`: the Plan page, then the Retrospective on its default view (the FOCUS and Slurm
samples joined), then `PASSES` passes over the Teams selections (each team alone, then all teams but it; a small
and a near-full slice), `st.cache_data` cleared before each pass so every selection filters and adds up again. The
two workers' passes alternate, so a noisy neighbour slows both alike; the figures are the medians over all passes
(wall-clock, and the worker's CPU time, which waiting for a core does not count). The warm-up thread is off
(`PLANNER_WARM_UP=0`). Without git or the commit (a source archive), only this tree is timed, and the output says
so.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE_LAYER = "6a29edc"  # the pandas Retrospective (the commit that pinned the query layer's libraries)
PASSES = 6
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


def _before_layer(folder: Path) -> bool:
    """Export the tree at `BEFORE_LAYER` into `folder`; False without git or the commit."""
    try:
        archive = subprocess.run(["git", "archive", BEFORE_LAYER], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


def _ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        before_tree = Path(folder) if _before_layer(Path(folder)) else None
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
    print(f"small_filter_change_ms: {_ms(now['wall']):.1f} wall, {_ms(now['cpu']):.1f} CPU (median of {count} "
          f"Teams selections on the bundled samples, {teams} teams: each alone and all but it, caches cleared)")
    if "before" not in samples:
        print(f"small_filter_change_ratio: n/a (no git history: the tree at {BEFORE_LAYER} could not be exported)")
        return
    before = samples["before"]
    print(f"small_filter_change_before_layer_ms: {_ms(before['wall']):.1f} wall, {_ms(before['cpu']):.1f} CPU "
          f"(the pandas Retrospective at {BEFORE_LAYER}, passes alternating)")
    print(f"small_filter_change_ratio: {_ms(now['wall']) / _ms(before['wall']):.2f} wall, "
          f"{_ms(now['cpu']) / _ms(before['cpu']):.2f} CPU (target <= {TARGET_RATIO})")


if __name__ == "__main__":
    main()
