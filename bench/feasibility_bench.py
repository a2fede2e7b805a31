"""Feasibility's cost: the engine with it against today's engine (the commit before it), as ratios of CPU time.

"Today's engine" is `dashboard/core/engine.py` as it was at `BASE_COMMIT` (read with `git show`, loaded as a
module beside today's, so it uses today's formulas for everything else): the vectorised `output_arrays` over the
same 100,000 scenarios and one `scenario_outputs` of the same scenario. Each round times the engine with feasibility
and today's engine alternately, so a noisy neighbour slows both alike; the figures are the best of the rounds
(medians beside them). CPU time (`time.process_time`) is the figure the targets are read against, wall-clock is
printed beside it. `engine_feasibility_share` compares with today's `engine.py` whose feasibility functions return
results computed beforehand: what feasibility alone costs, apart from what other issues added to the engine since
`BASE_COMMIT`. One scenario's plan is cached (the app estimates the same plan again for every price or MFU
change), so the single estimate is timed both repeated and as a first estimate with the caches cleared; the
layout search is timed with its cache cleared. Without git or that commit (a source archive), today's engine is
approximated by the engine with the feasibility results computed beforehand, and the output says so.
"""
from __future__ import annotations

import importlib.util
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager, nullcontext
from pathlib import Path
from types import ModuleType

import numpy as np

from bench.engine_bench import SCENARIOS, random_arrays
from dashboard.core import engine, feasibility, layout
from dashboard.core.scenario import Scenario

ROUNDS = 11
SINGLE_CALLS = 300
TARGET_RATIO = 1.2
BASE_COMMIT = "3e45b5a"  # the commit before issue 17 (feasibility)
ROOT = Path(__file__).resolve().parents[1]
# Scenario keys that issue 17 added; today's engine does not read them.
FEASIBILITY_KEYS = {"tensor_parallel", "pipeline_parallel", "expert_parallel", "zero_stage", "micro_batch_size",
                    "global_batch_tokens", "n_heads", "gpu_memory_gb", "unique_tokens"}


def feasibility_arrays(rng: np.random.Generator, count: int) -> dict[str, np.ndarray]:
    """`engine_bench`'s random scenarios with half of them short of unique data (0.2-2× their tokens)."""
    arrays = random_arrays(rng, count)
    scarce = rng.random(count) < 0.5
    arrays["unique_tokens"] = np.where(scarce, arrays["tokens"] * rng.uniform(0.2, 2.0, count), np.nan)
    return arrays


def todays_engine() -> ModuleType | None:
    """`engine.py` at `BASE_COMMIT` as a module, reading today's scenarios; None without git or the commit."""
    try:
        source = subprocess.run(["git", "show", f"{BASE_COMMIT}:dashboard/core/engine.py"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "engine_before_feasibility.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("engine_before_feasibility", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    module.NUMERIC_FIELDS = tuple(name for name in engine.NUMERIC_FIELDS if name not in FEASIBILITY_KEYS)
    columns = module.scenario_arrays

    def scenario_arrays(scenarios):  # today's recompute flag was a boolean: full recompute or none
        return columns(scenarios) | {
            "activation_recompute": np.array([s.activation_recompute == "full" for s in scenarios], dtype=float)}

    module.scenario_arrays = scenario_arrays
    return module


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
    saved = feasibility.plan_arrays, feasibility.outputs, feasibility.scarcity_factor, feasibility.tst_with_scarcity

    def outputs(p, costs):
        costs.pop("plan")
        return plan | extra

    feasibility.plan_arrays = lambda p, flops: {"idle_factor": 1.0}
    feasibility.outputs = outputs
    feasibility.scarcity_factor = lambda p: None
    feasibility.tst_with_scarcity = lambda factor, tst: scarcity
    try:
        yield
    finally:
        (feasibility.plan_arrays, feasibility.outputs, feasibility.scarcity_factor,
         feasibility.tst_with_scarcity) = saved


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
    base = todays_engine()
    arrays = feasibility_arrays(np.random.default_rng(0), SCENARIOS)
    reference = "engine.py at " + BASE_COMMIT if base else "engine with feasibility precomputed (no git history)"
    samples: dict[str, list[float]] = defaultdict(list)
    target = f" (target <= {TARGET_RATIO}x)"
    with nullcontext() if base else _feasibility_precomputed(_feasibility_results(arrays)):
        for _ in range(ROUNDS):
            _timed(lambda: engine.output_arrays(arrays), samples["engine_cpu"], samples["engine_wall"])
            _timed(lambda: (base or engine).evaluate(arrays), samples["today_cpu"], samples["today_wall"])

    scenario = Scenario(total_params=70e9, tokens=1.4e12, n_layers=80, d_model=8192, gpu_count=64,
                        activation_recompute="full")
    row = feasibility._layout_inputs(scenario)
    calls = SINGLE_CALLS // ROUNDS
    for _ in range(ROUNDS):
        _timed(lambda: engine.scenario_outputs(scenario), samples["one_cpu"], samples["one_wall"], calls)
        _timed(lambda: _first_estimate(scenario), samples["first_cpu"], samples["first_wall"], calls)
        if base:
            _timed(lambda: base.estimate(scenario), samples["one_today_cpu"], samples["one_today_wall"], calls)
        _timed(lambda: _layout_search(row), samples["search_cpu"], samples["search_wall"], calls)

    if base:  # today's engine.py with its feasibility work done beforehand: what feasibility alone costs
        results = _feasibility_results(arrays)
        for _ in range(ROUNDS):
            _timed(lambda: engine.output_arrays(arrays), samples["share_cpu"], samples["share_wall"])
            with _feasibility_precomputed(results):
                _timed(lambda: engine.output_arrays(arrays), samples["bare_cpu"], samples["bare_wall"])
        del results

    print(f"# today's engine: {reference}; CPU and wall-clock, best (and median) of {ROUNDS} alternating rounds")
    print(_line("engine_vectorised_with_feasibility_100k_s", samples, "engine", "today", 1.0, 3))
    print(_ratio_line("engine_feasibility_ratio", samples, "engine", "today", target))
    if not base:
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
