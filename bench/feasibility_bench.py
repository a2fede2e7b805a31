"""Feasibility's cost: the engine with it against the engine as it was before it, as ratios of CPU time.

"Today's engine" is the project at `BASE_COMMIT` (the commit before feasibility), its whole tree exported with
`git archive`: its vectorised `evaluate` over 100,000 random scenarios (`bench.engine_bench.random_arrays` of that
tree, same seed) and one `estimate` of the same scenario. The engine with feasibility runs the same way in a worker
process of its own (`output_arrays` over the same scenarios, half of them short of unique data, and one
`scenario_outputs`): both sides start from a fresh process and repeat the same loop, so neither inherits the other
benchmarks' heap; 100,000 scenarios are many, so this tree prices them with its compiled loops
(`dashboard.core.compiled`), which its worker compiles or loads in its first round. Each round times the two
workers alternately, so a noisy neighbour slows both alike; the figures are the best of the rounds (medians beside
them). CPU time (`time.process_time`) is the figure the targets are read against, wall-clock is printed beside it.
`engine_feasibility_share` times today's `engine.py` here with its
feasibility functions returning results computed beforehand: what feasibility alone costs. One scenario's plan is
cached (the app estimates the same plan again for every price or MFU change), so the single estimate is timed both
repeated and, here, as a first estimate with the caches cleared; the layout search is timed here with its cache
cleared. Without git or that commit (a source archive), today's engine is approximated by the engine with the
feasibility results computed beforehand, both timed here, and the output says so.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from bench.engine_bench import SCENARIOS, random_arrays
from bench.server_bench import exported_tree
from dashboard.core import engine, feasibility, layout
from dashboard.core.scenario import Scenario

ROUNDS = 31
SINGLE_CALLS = 900  # single estimates over all rounds
TARGET_RATIO = 1.2
BASE_COMMIT = "3e45b5a"  # the commit before issue 17 (feasibility)
ROOT = Path(__file__).resolve().parents[1]
SINGLE = {"total_params": 70e9, "tokens": 1.4e12, "n_layers": 80, "d_model": 8192, "gpu_count": 64}
# One engine in its own tree: reads "vector" or "one <calls>" and answers the CPU and wall seconds per call.
# "today" is the tree at BASE_COMMIT (evaluate / estimate, recompute as a boolean), "ours" this tree.
_WORKER = """
import json, sys, time
import numpy as np
from dashboard.core import engine
from dashboard.core.scenario import Scenario
side, count, single = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
if side == "ours":
    from bench.feasibility_bench import feasibility_arrays as draw
    vector, one, recompute = engine.output_arrays, engine.scenario_outputs, "full"
else:
    from bench.engine_bench import random_arrays as draw
    vector, one, recompute = engine.evaluate, engine.estimate, True
arrays = draw(np.random.default_rng(0), count)
scenario = Scenario(activation_recompute=recompute, **single)
for line in sys.stdin:
    task, *calls = line.split()
    call = (lambda: vector(arrays)) if task == "vector" else (lambda: one(scenario))
    repeat = int(calls[0]) if calls else 1
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(repeat):
        call()
    print(json.dumps([(time.process_time() - cpu) / repeat, (time.perf_counter() - wall) / repeat]), flush=True)
"""


def feasibility_arrays(rng: np.random.Generator, count: int) -> dict[str, np.ndarray]:
    """`engine_bench`'s random scenarios with half of them short of unique data (0.2-2× their tokens)."""
    arrays = random_arrays(rng, count)
    scarce = rng.random(count) < 0.5
    arrays["unique_tokens"] = np.where(scarce, arrays["tokens"] * rng.uniform(0.2, 2.0, count), np.nan)
    return arrays


class EngineWorker:
    """One engine (`side` "today" or "ours") in a worker process started in the tree at `folder`."""

    def __init__(self, folder: Path, side: str) -> None:
        self.worker = subprocess.Popen(
            [sys.executable, "-c", _WORKER, side, str(SCENARIOS), json.dumps(SINGLE)], cwd=folder, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin"})

    def timed(self, task: str, cpu: list[float], wall: list[float]) -> None:
        self.worker.stdin.write(task + "\n")
        self.worker.stdin.flush()
        seconds = json.loads(self.worker.stdout.readline())
        cpu.append(seconds[0])
        wall.append(seconds[1])

    def close(self) -> None:
        self.worker.stdin.close()
        self.worker.wait()


def todays_engine(folder: Path) -> EngineWorker | None:
    """Today's engine, its tree exported into `folder`, running in a worker; None without git or the commit."""
    tree = exported_tree(folder, BASE_COMMIT)
    return EngineWorker(tree, "today") if tree else None


def our_engine() -> EngineWorker:
    """The engine with feasibility, this tree, running in a worker."""
    return EngineWorker(ROOT, "ours")


def _feasibility_results(arrays: dict[str, np.ndarray]) -> tuple[dict, dict, dict]:
    """The feasibility results of the engine for `arrays`: plan, data supply and TST scarcity."""
    full = engine.output_arrays(arrays)
    plan_keys = set(feasibility.plan_arrays(arrays, full["model_flops"]))
    plan = {key: full[key] for key in plan_keys if key in full} | {"idle_factor": 1.0}
    extra = {key: full[key] for key in ("epochs", "effective_tokens")}
    scarcity = {key: full["tst"][key] for key in ("scarcity_factor", "net_savings_with_scarcity_usd")}
    return plan, extra, scarcity


@contextmanager
def _feasibility_precomputed(results: tuple[dict, dict, dict]):
    """Within the block the engine reads feasibility results computed before it (`_feasibility_results`)."""
    plan, extra, scarcity = results
    saved = feasibility.plan_arrays, feasibility.outputs, feasibility.tst_with_scarcity

    def outputs(p, costs):
        costs.pop("plan")
        return plan | extra, None

    feasibility.plan_arrays = lambda p, flops: {"idle_factor": 1.0}
    feasibility.outputs = outputs
    feasibility.tst_with_scarcity = lambda factor, tst: scarcity
    try:
        yield
    finally:
        feasibility.plan_arrays, feasibility.outputs, feasibility.tst_with_scarcity = saved


def _timed(call, cpu: list[float], wall: list[float], repeat: int = 1) -> None:
    start_cpu, start_wall = time.process_time(), time.perf_counter()
    for _ in range(repeat):
        call()
    cpu.append((time.process_time() - start_cpu) / repeat)
    wall.append((time.perf_counter() - start_wall) / repeat)


def _best(samples: dict[str, list[float]], key: str) -> float:
    return min(samples[key])


def _line(name: str, samples: dict[str, list[float]], new: str, old: str, unit: float, digits: int) -> str:
    def figure(key: str) -> str:
        return f"{_best(samples, key) * unit:.{digits}f} (median {statistics.median(samples[key]) * unit:.{digits}f})"

    return (f"{name}: {figure(new + '_cpu')} CPU, today's engine {figure(old + '_cpu')}; "
            f"wall {figure(new + '_wall')}, today's {figure(old + '_wall')}")


def _ratio_line(name: str, samples: dict[str, list[float]], new: str, old: str, target: str) -> str:
    def ratio(kind: str) -> str:
        best = _best(samples, f"{new}_{kind}") / _best(samples, f"{old}_{kind}")
        median = statistics.median(samples[f"{new}_{kind}"]) / statistics.median(samples[f"{old}_{kind}"])
        return f"{best:.2f}x {kind} (medians {median:.2f}x)"

    return f"{name}: {ratio('cpu')}, {ratio('wall')}{target}"


def _first_estimate(scenario: Scenario) -> None:
    feasibility.clear_caches()  # a scenario estimated for the first time: its layout is searched
    engine.scenario_outputs(scenario)


def _layout_search(row: dict[str, np.ndarray]) -> None:
    feasibility.clear_caches()
    layout.resolve(row)


def main() -> None:
    arrays = feasibility_arrays(np.random.default_rng(0), SCENARIOS)
    with tempfile.TemporaryDirectory() as folder:
        base = todays_engine(Path(folder))
        ours = our_engine() if base else None
        try:
            samples = _rounds(arrays, base, ours)
        finally:
            for worker in (base, ours):
                if worker:
                    worker.close()
    _print(samples, base is not None)


def _rounds(arrays: dict[str, np.ndarray], base: EngineWorker | None,
            ours: EngineWorker | None) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = defaultdict(list)
    if base and ours:
        for _ in range(ROUNDS):
            ours.timed("vector", samples["engine_cpu"], samples["engine_wall"])
            base.timed("vector", samples["today_cpu"], samples["today_wall"])
    else:
        with _feasibility_precomputed(_feasibility_results(arrays)):
            for _ in range(ROUNDS):
                _timed(lambda: engine.output_arrays(arrays), samples["engine_cpu"], samples["engine_wall"])
                _timed(lambda: engine.output_arrays(arrays), samples["today_cpu"], samples["today_wall"])

    scenario = Scenario(activation_recompute="full", **SINGLE)
    row = feasibility._layout_inputs(scenario)
    calls = SINGLE_CALLS // ROUNDS
    for _ in range(ROUNDS):
        if base and ours:
            ours.timed(f"one {calls}", samples["one_cpu"], samples["one_wall"])
            base.timed(f"one {calls}", samples["one_today_cpu"], samples["one_today_wall"])
        else:
            _timed(lambda: engine.scenario_outputs(scenario), samples["one_cpu"], samples["one_wall"], calls)
        _timed(lambda: _first_estimate(scenario), samples["first_cpu"], samples["first_wall"], calls)
        _timed(lambda: _layout_search(row), samples["search_cpu"], samples["search_wall"], calls)

    if base:  # today's engine.py with its feasibility work done beforehand: what feasibility alone costs
        results = _feasibility_results(arrays)
        for _ in range(ROUNDS):
            _timed(lambda: engine.output_arrays(arrays), samples["share_cpu"], samples["share_wall"])
            with _feasibility_precomputed(results):
                _timed(lambda: engine.output_arrays(arrays), samples["bare_cpu"], samples["bare_wall"])
    return samples


def _print(samples: dict[str, list[float]], with_base: bool) -> None:
    reference = (f"the project at {BASE_COMMIT}, and this tree, each run in its own worker process" if with_base
                 else "engine with feasibility precomputed (no git history)")
    target = f" (target <= {TARGET_RATIO}x)"
    print(f"# today's engine: {reference}; CPU and wall-clock, best (and median) of {ROUNDS} alternating rounds")
    print(_line("engine_vectorised_with_feasibility_100k_s", samples, "engine", "today", 1.0, 3))
    print(_ratio_line("engine_feasibility_ratio", samples, "engine", "today", target))
    if not with_base:
        print(f"layout_search_one_scenario_ms: {_best(samples, 'search_cpu') * 1e3:.3f} CPU "
              f"(one estimate {_best(samples, 'one_cpu') * 1e3:.3f} ms)")
        return
    print(_ratio_line("engine_feasibility_share", samples, "share", "bare", " (against today's engine.py with "
                      "the feasibility results computed beforehand and held in memory)"))
    print(_line("estimate_one_scenario_ms", samples, "one", "one_today", 1e3, 3))
    print(_ratio_line("estimate_one_scenario_ratio", samples, "one", "one_today", target + ", its plan cached"))
    print(_line("estimate_first_of_a_scenario_ms", samples, "first", "one_today", 1e3, 3))
    print(_ratio_line("estimate_first_of_a_scenario_ratio", samples, "first", "one_today", " (caches cleared)"))
    print(f"layout_search_one_scenario_ms: {_best(samples, 'search_cpu') * 1e3:.3f} CPU, "
          f"{_best(samples, 'search_cpu') / _best(samples, 'one_today_cpu'):.2f}x today's one estimate{target}")
