"""The compiled loops for many scenarios give what the NumPy functions give, figures worked by hand included, and the
pages never load the compiler.

Each case prices a batch of `compiled.COMPILED_FROM` or more scenarios twice: through the loops, and through the
NumPy functions (the threshold raised above the batch). Layouts, flags, memory, batch and storage are the same
arithmetic in the same order, so they must be equal to the bit; the data-supply outputs go through `exp` and
`log1p`, whose last bit may differ between libm and NumPy's vector code, so they are compared to 1e-12.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dashboard.core import compiled, data_supply, engine, feasibility, memory, storage
from dashboard.core.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]
ROWS = compiled.COMPILED_FROM + 904  # 5,000 scenarios: above the threshold
NOT_SET = math.nan


def _random_arrays(seed: int, **layout_keys: np.ndarray | float) -> dict[str, np.ndarray]:
    """ROWS scenarios of the default varied in size, MoE share, GPUs, GPU memory, sequence, recompute and batch."""
    rng = np.random.default_rng(seed)
    arrays = {key: np.repeat(value, ROWS) for key, value in engine.scenario_arrays([Scenario()]).items()}
    arrays["total_params"] = 10 ** rng.uniform(8, 12.3, ROWS)
    arrays["active_params"] = arrays["total_params"] * np.where(rng.random(ROWS) < 0.3, rng.uniform(0.05, 1.0, ROWS),
                                                                1.0)
    arrays["expert_parallel"] = np.where(arrays["active_params"] < arrays["total_params"],
                                         rng.choice([1.0, 2.0, 8.0], ROWS), 1.0)
    arrays["tokens"] = 10 ** rng.uniform(9, 14, ROWS)
    arrays["gpu_count"] = rng.choice([8.0, 24.0, 64.0, 384.0, 1000.0, 2240.0, 16384.0], ROWS)
    arrays["gpus_per_node"] = rng.choice([4.0, 8.0, 72.0], ROWS)
    arrays["gpu_memory_gb"] = rng.choice([40.0, 80.0, 141.0, 192.0, NOT_SET], ROWS)
    arrays["n_layers"] = rng.choice([24.0, 80.0, 105.0, 126.0], ROWS)
    arrays["seq_len"] = rng.choice([2048.0, 8192.0], ROWS)
    arrays["micro_batch_size"] = rng.choice([1.0, 2.0, 4.0], ROWS)
    arrays["recompute_index"] = rng.integers(0, 3, ROWS).astype(float)
    arrays["activation_recompute"] = (arrays["recompute_index"] == 2).astype(float)
    arrays["global_batch_tokens"] = np.where(rng.random(ROWS) < 0.5, NOT_SET, rng.choice([2.0**20, 2.0**22], ROWS))
    arrays["unique_tokens"] = np.where(rng.random(ROWS) < 0.5, NOT_SET, arrays["tokens"] * rng.uniform(0.05, 3, ROWS))
    arrays["is_tst"] = rng.integers(0, 2, ROWS).astype(float)
    arrays["checkpoint_interval_min"] = rng.uniform(1.0, 600.0, ROWS)
    arrays["archive_every_nth"] = rng.integers(0, 5, ROWS).astype(float)
    arrays["keep_last_checkpoints"] = rng.integers(1, 10, ROWS).astype(float)
    for key, value in layout_keys.items():
        arrays[key] = np.broadcast_to(np.asarray(value, dtype=float), (ROWS,)).copy()
    return arrays


LAYOUT_CASES = [  # which layout keys the user sets: none, some, all (PP 35 is not a power of two)
    ("all proposed", {}),
    ("TP set", {"tensor_parallel": 8.0}),
    ("PP set", {"pipeline_parallel": 4.0}),
    ("ZeRO-0 set", {"zero_stage": 0.0}),
    ("ZeRO set per row", {"zero_stage": np.tile([NOT_SET, 0.0, 1.0, 2.0, 3.0], ROWS // 5 + 1)[:ROWS]}),
    ("whole layout set", {"tensor_parallel": 8.0, "pipeline_parallel": 35.0, "zero_stage": 1.0}),
    ("mixed per row", {"tensor_parallel": np.tile([NOT_SET, 4.0], ROWS // 2), "zero_stage": 3.0}),
]


def _flat(result: dict, prefix: str = "") -> dict[str, np.ndarray]:
    flat = {}
    for key, value in result.items():
        if isinstance(value, dict):
            flat |= _flat(value, f"{prefix}{key}.")
        else:
            flat[prefix + key] = np.broadcast_to(np.asarray(value, dtype=float), (ROWS,))
    return flat


@pytest.fixture
def loops_used(monkeypatch) -> list[str]:
    """The names of the compiled module's entry points called in the test, in order (each still runs)."""
    used: list[str] = []

    def spy(name: str):
        loop = getattr(compiled, name)

        def called(*arguments):
            used.append(name)
            return loop(*arguments)
        return called

    for name in ("plan", "supply", "volumes"):
        monkeypatch.setattr(compiled, name, spy(name))
    return used


def _both(monkeypatch, used: list[str], function, *arguments):
    """`function(*arguments)` through the compiled loops, then through NumPy (the threshold raised above ROWS); each
    side is checked to have taken its path, so a comparison can never be NumPy against itself."""
    through_loops = function(*arguments)
    assert used, "the loops were not used"
    used.clear()
    with monkeypatch.context() as patch:
        patch.setattr(compiled, "COMPILED_FROM", ROWS + 1)
        feasibility.clear_caches()
        through_numpy = function(*arguments)
    assert not used, "the NumPy side used the loops"
    return through_loops, through_numpy


@pytest.mark.parametrize(("name", "layout_keys"), LAYOUT_CASES, ids=[case[0] for case in LAYOUT_CASES])
def test_the_compiled_plan_is_the_numpy_plan_to_the_bit(monkeypatch, loops_used, name, layout_keys):
    arrays = _random_arrays(1, **layout_keys)
    flops = engine.cost_arrays(arrays)["model_flops"]
    both = _both(monkeypatch, loops_used, feasibility.plan_arrays, arrays, flops)
    loops, numpy_path = (_flat(result) for result in both)
    assert loops.keys() == numpy_path.keys()
    for key in loops:
        np.testing.assert_array_equal(loops[key], numpy_path[key], err_msg=key)
    fits = loops["feasible"].astype(bool)
    assert 0.05 < fits.mean() < 0.95 or name == "whole layout set", "the draws should mix plans that run and not"


def test_every_engine_output_matches_the_numpy_engine(monkeypatch, loops_used):
    arrays = _random_arrays(2)
    loops, numpy_path = (_flat(result) for result in _both(monkeypatch, loops_used, engine.output_arrays, arrays))
    assert loops.keys() == numpy_path.keys()
    for key in loops:
        if key == "tst.net_savings_with_scarcity_usd":  # a difference of two costs: compared at the costs' scale
            scale = np.abs(loops["tst.tst_cost_usd"])
            finite = np.isfinite(numpy_path[key])
            assert np.array_equal(np.isfinite(loops[key]), finite)
            assert np.all(np.abs(loops[key][finite] - numpy_path[key][finite]) <= 1e-12 * scale[finite])
        else:
            np.testing.assert_allclose(loops[key], numpy_path[key], rtol=1e-12, atol=0.0, err_msg=key)


def test_data_supply_matches_numpy_with_unlimited_repeated_and_exhausted_data():
    rng = np.random.default_rng(3)
    tokens = 10 ** rng.uniform(9, 13, ROWS)
    multiplier = rng.choice([1.0, 1.9, 3.0], ROWS)
    unique = np.select([rng.random(ROWS) < 0.2, rng.random(ROWS) < 0.25], [NOT_SET, math.inf],
                       tokens * rng.uniform(0.01, 3.0, ROWS))
    read = tokens * multiplier
    got = compiled.supply(read, unique, tokens, multiplier)
    expected = {"epochs": data_supply.epochs(read, unique),
                "effective_tokens": data_supply.effective_tokens(read, unique),
                "scarcity_factor": data_supply.tst_scarcity_factor(tokens, multiplier, unique)}
    for key in compiled.SUPPLY:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-12, atol=0.0, err_msg=key)
    assert np.isinf(got["scarcity_factor"]).any() and (got["scarcity_factor"] == 1.0).any()


def test_storage_volumes_match_numpy_to_the_bit():
    rng = np.random.default_rng(4)
    values = [10 ** rng.uniform(0, 4, ROWS), rng.uniform(0.05, 20, ROWS), rng.uniform(1, 5e3, ROWS),
              rng.integers(1, 10, ROWS).astype(float), rng.integers(0, 5, ROWS).astype(float),
              rng.uniform(0, 1e5, ROWS), rng.uniform(0, 50, ROWS)]
    got, expected = compiled.volumes(*values), storage.volumes(*values)
    for tier in storage.TIERS:
        np.testing.assert_array_equal(got["gb_hours"][tier], expected["gb_hours"][tier], err_msg=tier)
    np.testing.assert_array_equal(got["peak_gb"], expected["peak_gb"])
    np.testing.assert_array_equal(got["retained_gb"], expected["retained_gb"])


def _same(scenario: Scenario) -> dict[str, np.ndarray]:
    """ROWS copies of one scenario, as engine arrays (priced through the loops)."""
    return {key: np.repeat(value, ROWS) for key, value in engine.scenario_arrays([scenario]).items()}


def test_hand_worked_figures_through_the_loops(loops_used):
    # 70B, ZeRO-3 over 64 GPUs: 16 bytes × 70e9 / 64 = 17.5 GB of model states per GPU (ZeRO, arXiv 1910.02054).
    zero3 = Scenario(total_params=70e9, n_layers=80, d_model=8192, gpu_count=64, tensor_parallel=1,
                     pipeline_parallel=1, zero_stage=3, activation_recompute="full")
    result = engine.output_arrays(_same(zero3))
    states = result["memory"]["weights_gb"] + result["memory"]["gradients_gb"] + result["memory"]["optimizer_gb"]
    assert np.allclose(states, 17.5, rtol=1e-12)
    # A 1B model, a 1,048,576-token batch of 2,048-token sequences, micro-batch 1: 512 sequences keep 512 GPUs busy.
    small = Scenario(total_params=1e9, seq_len=2048, global_batch_tokens=1_048_576, micro_batch_size=1,
                     tensor_parallel=1, pipeline_parallel=1, gpu_count=1024)
    result = engine.output_arrays(_same(small))
    assert np.all(result["max_useful_gpus"] == 512) and np.all(result["busy_gpus"] == 512)
    assert loops_used == ["plan", "volumes", "supply"] * 2
    # 4T tokens read from 1T unique: R = 3, D′ = 1T + 1T · 15.4 · (1 − e^(−3/15.4)) ≈ 3.73T (Muennighoff et al.).
    supplied = compiled.supply(np.full(ROWS, 4e12), 1e12, 4e12, 1.0)
    effective = supplied["effective_tokens"]
    assert np.all(supplied["epochs"] == 4.0)
    assert np.allclose(effective, 1e12 + 1e12 * 15.4 * (1 - math.exp(-3 / 15.4)), rtol=1e-12)
    assert np.allclose(effective, 3.73e12, rtol=2e-3)
    # 10 h of 1-h checkpoints, the last 2 kept hot, none archived: ∫ min(⌊t⌋, 2) dt over 10 h = 17 checkpoint-hours.
    volumes = compiled.volumes(np.full(ROWS, 10.0), 1.0, 3.0, 2.0, 0.0, 0.0, 0.0)
    assert np.all(volumes["gb_hours"]["hot_checkpoints"] == 3.0 * 17.0)
    assert np.all(volumes["peak_gb"] == 3.0 * 3) and np.all(volumes["retained_gb"] == 3.0 * 2)


def test_published_layouts_fit_and_impossible_plans_do_not_through_the_loops(loops_used):
    llama = Scenario(total_params=405e9, n_layers=126, d_model=16384, n_heads=128, seq_len=8192, gpu_count=16384,
                     gpu_type="H100", tensor_parallel=8, pipeline_parallel=16, zero_stage=1,
                     activation_recompute="full")  # arXiv 2407.21783 Table 4
    seventy_on_eight = Scenario(total_params=70e9, n_layers=80, d_model=8192, gpu_count=8, gpu_type="H100",
                                tensor_parallel=1, pipeline_parallel=1, zero_stage=0)
    assert np.all(engine.output_arrays(_same(llama))["feasible"])
    assert not np.any(engine.output_arrays(_same(seventy_on_eight))["feasible"])
    assert loops_used.count("plan") == 2


def test_the_model_constants_are_read_at_each_call_not_frozen_into_the_compiled_loop(monkeypatch):
    p = _random_arrays(5, zero_stage=0.0)
    p["n_heads"] = feasibility._heads(p)
    batch = np.full(ROWS, 2.0**20)
    before = compiled.plan(p, batch)
    assert np.all(before["optimizer_gb"] > 0.0)
    monkeypatch.setattr(memory, "OPTIMIZER_BYTES", 0.0)  # the loop is already compiled (and cached on disk)
    after = compiled.plan(p, batch)
    assert np.all(after["optimizer_gb"] == 0.0)
    same = (after["tensor_parallel"] == before["tensor_parallel"]) & (
        after["pipeline_parallel"] == before["pipeline_parallel"])  # less memory lets a few plans shrink TP or PP
    assert same.mean() > 0.9
    np.testing.assert_array_equal(after["weights_gb"][same], before["weights_gb"][same])


def test_a_loop_compiles_without_a_folder_to_cache_it_in(monkeypatch):
    import numba.core.caching  # noqa: PLC0415  (the test needs numba's cache machinery, which only it touches)

    monkeypatch.setattr(numba.core.caching.CacheImpl, "_locator_classes", [])  # no folder numba could write to
    loop = compiled._compiled.__wrapped__("_volume_rows")
    out = tuple(np.empty(2) for _ in compiled.VOLUMES)
    loop(tuple(np.broadcast_to(value, (2,)) for value in (10.0, 1.0, 3.0, 2.0, 0.0, 0.0, 0.0)), 1e-9, out)
    assert out[0][0] == 3.0 * 17.0  # as the hand-worked case above


@pytest.mark.parametrize(("size", "dtype", "expected"), [
    (compiled.COMPILED_FROM, np.float64, True),
    (compiled.COMPILED_FROM - 1, np.float64, False),
    (compiled.COMPILED_FROM * 10, np.float32, False),  # Monte Carlo's float32 draws stay in NumPy
])
def test_which_calls_the_loops_price(size, dtype, expected):
    assert compiled.applies(size, np.dtype(dtype)) is expected


def test_the_pages_work_never_loads_the_compiler():
    # A fresh interpreter prices one plan, its curves, a Monte Carlo and the budget question, as the pages do.
    code = (
        "import sys\n"
        "from dashboard.core import engine, questions, sweeps, uncertainty\n"
        "from dashboard.core.scenario import Scenario\n"
        "s = Scenario()\n"
        "engine.scenario_outputs(s)\n"
        "sweeps.checkpoint_tradeoff(s)\n"
        "sweeps.spot_share_curve(s)\n"
        "sweeps.scaling_curve(s)\n"
        "uncertainty.monte_carlo(s, draws=20_000, seed=0)\n"
        "questions.optimal_for_budget(s, 5e6)\n"
        "print('numba' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False", done.stderr


def test_only_the_compiled_module_imports_numba():
    importers = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "dashboard").rglob("*.py")
                       if any(line.strip().startswith(("import numba", "from numba"))
                              for line in path.read_text(encoding="utf-8").splitlines()))
    assert importers == ["dashboard/core/compiled.py"]
