"""The feasibility bench's two sides: the project at the commit before feasibility and this tree, each priced in
its own process.

No time is asserted: the worker runs the old engine's code and answers with CPU and wall seconds, and both sides
draw the same random scenarios.
"""

import ast
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bench import feasibility_bench

ROOT = Path(__file__).resolve().parents[2]


def _has_base_commit() -> bool:
    done = subprocess.run(["git", "cat-file", "-e", f"{feasibility_bench.BASE_COMMIT}^{{commit}}"], cwd=ROOT,
                          capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.skipif(not _has_base_commit(), reason=f"no git history with {feasibility_bench.BASE_COMMIT} "
                    "(a source archive): the bench falls back to an approximation, and says so")
def test_the_worker_answers_cpu_and_wall_seconds_for_each_task(tmp_path):
    base = feasibility_bench.todays_engine(tmp_path)
    assert base is not None
    ours = feasibility_bench.our_engine()
    try:
        for worker in (base, ours):
            for task in ("vector", "one 3"):
                cpu, wall = [], []
                worker.timed(task, cpu, wall)
                assert len(cpu) == len(wall) == 1
                assert 0.0 < cpu[0] < 60.0 and 0.0 < wall[0] < 60.0
    finally:
        base.close()
        ours.close()
    assert base.worker.returncode == 0 and ours.worker.returncode == 0
    assert (tmp_path / "dashboard" / "core" / "engine.py").read_text().count("def evaluate(") == 1  # the old engine


@pytest.mark.skipif(not _has_base_commit(), reason=f"no git history with {feasibility_bench.BASE_COMMIT}")
def test_the_bench_scenarios_are_the_old_engines_scenarios():
    # The worker draws with the old tree's `random_arrays`, same generator and seed: it must be today's code, and
    # today's bench adds only unique_tokens, drawn after every other column, so the shared columns are identical.
    old = subprocess.run(["git", "show", f"{feasibility_bench.BASE_COMMIT}:bench/engine_bench.py"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    today = (ROOT / "bench" / "engine_bench.py").read_text()
    assert _function(old, "random_arrays") == _function(today, "random_arrays")
    arrays = feasibility_bench.feasibility_arrays(np.random.default_rng(0), 1_000)
    plain = feasibility_bench.random_arrays(np.random.default_rng(0), 1_000)
    for key, values in plain.items():
        if key != "unique_tokens":
            assert np.array_equal(arrays[key], values, equal_nan=values.dtype.kind == "f"), key
    assert np.isnan(arrays["unique_tokens"]).mean() == pytest.approx(0.5, abs=0.05)


def _function(source: str, name: str) -> str:
    tree = ast.parse(source)
    return next(ast.dump(node) for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name)
