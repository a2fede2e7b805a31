"""A slider move on a real `streamlit run` server, against the reference page: from the rerun request to the last
message, as a browser's websocket sees it (`bench.websocket_client`), without the browser's drawing.

Four servers run at once on free 127.0.0.1 ports, each started from its own tree's root with its settings: the
Plan page of this tree; the Plan page at `BEFORE` (the commit before the server settings of `dashboard.ui.server`),
exported with `git archive`; the reference page (`bench.reference_app`: one slider, one tile, four 100-point
plotly charts) served like the planner (`bench.tuned_reference_app`), the figure the targets are read against;
and the same page on a stock Streamlit server, for what a user feels against any Streamlit app. Each server's
start-up work is let finish first (`SETTLE_S`). Moves alternate between the servers, each to a value not seen
before (no cache hit); then the Plan page is moved among three values it has drawn, so that every cache hits: what
the page's elements cost with no computation at all (its floor). Ratios are of medians.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from bench.browser_bench import served
from bench.websocket_client import Session, connection, slider

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "1f96a95"  # the last commit before `dashboard.ui.server`
SAMPLES = 40
SETTLE_S = 8.0  # the planner's start-up thread (warm-up, then the freeze) ends within this on this machine
RATIO_TARGET = 1.3
PLAN = ("MFU (%)", [10.0 + 0.5 * i for i in range(SAMPLES)])  # 40 new values of the MFU slider (default 40 %)
REFERENCE = ("Frequency", [20 + i for i in range(SAMPLES)])  # 40 new values (default 10)


def exported_tree(folder: Path, commit: str) -> Path | None:
    """The project at `commit`, exported into `folder`; None without git or the commit (a source archive)."""
    try:
        archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return folder


def _ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def main() -> None:
    with ExitStack() as stack:
        before = exported_tree(Path(stack.enter_context(tempfile.TemporaryDirectory())), BEFORE)
        apps = {"plan": (ROOT / "dashboard" / "app.py", ROOT, PLAN),
                "reference": (ROOT / "bench" / "tuned_reference_app.py", ROOT, REFERENCE),
                "stock reference": (ROOT / "bench" / "reference_app.py", ROOT, REFERENCE)}
        if before:
            apps["plan before"] = (before / "dashboard" / "app.py", before, PLAN)
        sessions, sliders = {}, {}
        for name, (app, folder, (label, _)) in apps.items():
            sessions[name] = Session(stack.enter_context(connection(stack.enter_context(served(app, folder)))))
            sliders[name] = sessions[name].rerun().widget("slider", label)
        time.sleep(SETTLE_S)
        tile = {name: [] for name in apps}
        end = {name: [] for name in apps}
        for i in range(SAMPLES):
            for name, session in sessions.items():
                rerun = session.rerun(slider(sliders[name], apps[name][2][1][i]))
                tile[name].append(rerun.tile_s)
                end[name].append(rerun.finished_s)
        drawn = PLAN[1][:3]
        floor = [sessions["plan"].rerun(slider(sliders["plan"], drawn[i % 3])).finished_s for i in range(SAMPLES)]
    plan, reference, stock = (_ms(end[name]) for name in ("plan", "reference", "stock reference"))
    print(f"plan_server_rerun_ms: {plan:.1f} (median of {SAMPLES} moves of the slider {PLAN[0]!r}, each to a new "
          f"value; first tile after {_ms(tile['plan']):.1f} ms)")
    print(f"reference_server_rerun_ms: {reference:.1f} (the reference page served like the planner; first tile "
          f"after {_ms(tile['reference']):.1f} ms)")
    print(f"plan_server_rerun_ratio: {plan / reference:.2f} (target <= {RATIO_TARGET})")
    print(f"plan_server_rerun_floor_ratio: {_ms(floor) / reference:.2f} ({_ms(floor):.1f} ms: the Plan page moved "
          "among three values it has drawn, every cache hit, so no computation: what its elements alone cost)")
    print(f"plan_server_rerun_vs_stock_ratio: {plan / stock:.2f} (the reference page on a stock Streamlit server: "
          f"{stock:.1f} ms)")
    if "plan before" in end:
        print(f"plan_server_rerun_before_ms: {_ms(end['plan before']):.1f} (the Plan page at {BEFORE}, before the "
              f"server settings; first tile after {_ms(tile['plan before']):.1f} ms)")
    else:
        print(f"plan_server_rerun_before_ms: n/a (no git history: the tree at {BEFORE} could not be exported)")


if __name__ == "__main__":
    main()
