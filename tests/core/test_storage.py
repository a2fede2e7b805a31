"""Checkpoint retention, datasets and logs: closed form against hand sums and a brute-force simulation."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dashboard.core import storage

ROOT = Path(__file__).resolve().parents[2]


def test_retention_by_hand():
    # T = 10 h, τ = 1 h, K = 3 hot, archive every 4th, 100 GB checkpoints, no data or logs.
    # Hot count on [i, i+1): min(i, 3) for i = 0..9 -> 0+1+2+3·7 = 24 -> 2,400 GB-h.
    # Archived on [i, i+1): ⌊i/4⌋ -> 0,0,0,0,1,1,1,1,2,2 = 8 -> 800 GB-h.
    # Peak: hot K+1 = 4 while the 10th is written (400 GB) + 2 archived (200 GB) = 600 GB.
    gb_hours = storage.volumes(10.0, 1.0, 100.0, 3, 4, 0.0, 0.0)["gb_hours"]
    peak = storage.volumes(10.0, 1.0, 100.0, 3, 4, 0.0, 0.0)["peak_gb"]
    assert gb_hours["hot_checkpoints"] == pytest.approx(2400.0)
    assert gb_hours["archived_checkpoints"] == pytest.approx(800.0)
    assert peak == pytest.approx(600.0)


@pytest.mark.parametrize(
    ("run_h", "interval_h", "keep", "every"),
    [(10.5, 1.0, 3, 4), (7.3, 0.5, 1, 0), (100.0, 3.3, 5, 2), (0.4, 1.0, 3, 4)],
)
def test_closed_form_matches_simulation(run_h, interval_h, keep, every):
    step = 0.001
    t = np.arange(0, run_h, step) + step / 2
    written = np.floor(t / interval_h)
    hot = np.minimum(written, keep) * 50.0
    archived = (np.floor(written / every) if every else np.zeros_like(t)) * 50.0
    gb_hours = storage.volumes(run_h, interval_h, 50.0, keep, every, 10.0, 24.0)["gb_hours"]
    assert gb_hours["hot_checkpoints"] == pytest.approx(hot.sum() * step, rel=2e-3)
    assert gb_hours["archived_checkpoints"] == pytest.approx(archived.sum() * step, rel=2e-3, abs=1e-6)
    assert gb_hours["datasets"] == pytest.approx(10.0 * run_h)
    assert gb_hours["logs"] == pytest.approx(run_h**2 / 2)  # 1 GB per hour, integrated


def test_costs_are_gb_months_at_tier_prices():
    # 730 GB-h is one GB-month.
    cost = storage.storage_cost(
        {"hot_checkpoints": 730.0, "archived_checkpoints": 1460.0, "datasets": 730.0, "logs": 0.0}, 0.14, 0.023
    )
    assert cost == pytest.approx(
        {"hot_checkpoints": 0.14, "archived_checkpoints": 0.046, "datasets": 0.023, "logs": 0.0}
    )


def test_timeline_shows_the_sawtooth_and_final_state():
    frame = storage.storage_timeline(10.0, 1.0, 100.0, 3, 4, 5.0, 24.0)
    hot = frame[frame.tier == "hot_checkpoints"]
    assert hot.gb.max() == 400.0  # K+1 while writing
    assert hot.gb.iloc[-1] == 300.0  # K after pruning
    archived = frame[frame.tier == "archived_checkpoints"]
    assert archived.gb.iloc[-1] == 200.0
    logs = frame[frame.tier == "logs"]
    assert logs.gb.iloc[-1] == pytest.approx(10.0)
    assert set(frame.tier) == set(storage.TIERS)


def test_timeline_is_bounded():
    frame = storage.storage_timeline(10_000.0, 0.1, 1.0, 3, 10, 0.0, 0.0, max_points=2000)
    assert frame.hours.nunique() <= 2002


def test_sampled_timeline_keeps_the_first_write_and_the_end():
    # A 1-minute interval over 10,000 hours is 600,000 writes; the chart samples 1,000 of them.
    frame = storage.storage_timeline(1e4, 1 / 60, 100.0, 3, 10, 0.0, 0.0, max_points=2000)
    hours = frame[frame.tier == "hot_checkpoints"].hours
    assert len(hours) == 2002
    assert hours.iloc[-1] == 1e4 and hours.iloc[1] == pytest.approx(1 / 60)


MEMORY_LIMIT_BYTES = 2 << 30  # the address-space limit of the subprocess: 2 GiB
# 405B parameters on 15T tokens with 2 GPUs and a checkpoint every minute: about 8e9 one-minute writes.
LONG_RUN = ('{"schema": 1, "name": "405B on 2 GPUs, 1-minute checkpoints", "total_params": 4.05e11, '
            '"tokens": 1.5e13, "gpu_count": 2, "checkpoint_interval_min": 1.0}')


def _under_memory_limit(code: str) -> subprocess.CompletedProcess:
    limit = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT_BYTES}, {MEMORY_LIMIT_BYTES}))\n"
    return subprocess.run([sys.executable, "-c", limit + code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1"}, timeout=120)


def test_timeline_of_a_billion_writes_fits_in_memory():
    # 1.3e8 hours at one write a minute: 7.8e9 writes, 62 GB as one float array.
    done = _under_memory_limit("from dashboard.core import storage\n"
                               "print(len(storage.storage_timeline(1.3e8, 1 / 60, 100.0, 3, 10, 0.0, 0.0)))")
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) <= 4 * 2002


def test_report_of_a_long_run_with_frequent_checkpoints_stays_small(tmp_path):
    scenario, output = tmp_path / "long.json", tmp_path / "r.html"
    scenario.write_text(LONG_RUN, encoding="utf-8")
    done = _under_memory_limit(
        "import runpy, sys\n"
        f"sys.argv = ['dashboard', 'report', {str(scenario)!r}, '-o', {str(output)!r}, '--draws', '1000']\n"
        "runpy.run_module('dashboard', run_name='__main__')"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert output.stat().st_size > 0


def test_what_the_run_leaves_behind_by_hand():
    # T = 10 h, τ = 1 h: 10 written; the last K = 3 and archives 4 and 8 (2) are left: 5 × 100 GB = 500 GB,
    # + 5 GB of data + logs 24 GB/day × 10/24 day = 10 GB -> 515 GB; 6 months at $0.023 -> $71.07.
    kept = storage.volumes(10.0, 1.0, 100.0, 3, 4, 5.0, 24.0)["retained_gb"]
    assert kept == pytest.approx(515.0)
    assert storage.retention_cost(kept, 6.0, 0.023) == pytest.approx(71.07)


@pytest.mark.parametrize("months", [0.0, 1.0, 12.0, 36.0])
def test_engine_bills_retention_on_the_cold_tier(months):
    from dashboard.core.engine import scenario_outputs
    from dashboard.core.scenario import Scenario

    during_run = scenario_outputs(Scenario(storage_retention_months=0.0))
    result = scenario_outputs(Scenario(storage_retention_months=months))
    # Default corpus: 2T tokens × 4 bytes × 2 copies = 16,000 GB; checkpoints 7B × 14 bytes = 98 GB, at least 3 kept.
    assert result["storage_retained_gb"] >= 16_000.0 + 3 * 98.0
    extra_usd = result["storage_retained_gb"] * months * 0.023
    assert result["storage_retention_usd"] == pytest.approx(extra_usd)
    assert result["cost_breakdown"]["storage"] == pytest.approx(during_run["cost_breakdown"]["storage"] + extra_usd)
    assert result["cost_total_usd"] == pytest.approx(during_run["cost_total_usd"] + extra_usd)


def test_weight_archives_by_hand():
    # T = 10 h, τ = 1 h, K = 3 full checkpoints of 100 GB, no full archives; 5 weight archives of 10 GB at
    # k·T/5 = 2, 4, 6, 8, 10 h. Held over the run: (10−2) + (10−4) + (10−6) + (10−8) + 0 = 20 h × 10 GB = 200 GB-h.
    # Left at the end: 3 × 100 + 5 × 10 = 350 GB; peak: that + the 4th full checkpoint while the 10th is written.
    stored = storage.volumes(10.0, 1.0, 100.0, 3, 0, 0.0, 0.0, 10.0, 5)
    assert stored["gb_hours"]["archived_checkpoints"] == pytest.approx(200.0)
    assert stored["retained_gb"] == pytest.approx(350.0)
    assert stored["peak_gb"] == pytest.approx(450.0)
    frame = storage.storage_timeline(10.0, 1.0, 100.0, 3, 0, 0.0, 0.0, weights_gb=10.0, archive_count=5)
    archived = frame[frame.tier == "archived_checkpoints"]
    # Just before the 5th write (5 h) the archives of 2 h and 4 h are held; at the end all five.
    assert archived[archived.hours == 5.0].gb.tolist() == [20.0, 20.0]
    assert archived.gb.iloc[-1] == 50.0
    step = 0.001
    t = np.arange(0, 10.0, step) + step / 2
    held = np.minimum(np.floor(t / 2.0), 5) * 10.0
    assert stored["gb_hours"]["archived_checkpoints"] == pytest.approx(held.sum() * step, rel=1e-3)


def test_default_archives_are_ten_weight_snapshots():
    # 1B parameters: a full checkpoint is 14 GB (bf16 weights + fp32 master + Adam m, v), a weight archive 2 GB
    # (bf16 only); ten archives are 20 GB. On 8 GPUs with no failures, 1e10 tokens at 40 % of 989 TFLOP/s take
    # 6 · 1e9 · 1e10 / (0.4 · 989e12) / 3,600 = 42.13 GPU-hours, 5.266 h of wall-clock: 10 half-hourly writes, the
    # last 3 kept (42 GB). Left after training: 42 + 20 GB + 1e10 · 4 B · 2 copies = 80 GB of data + 5 GB a day of
    # logs for 5.266 h (1.097 GB) = 143.1 GB.
    from dashboard.core.engine import scenario_outputs
    from dashboard.core.scenario import Scenario

    scenario = Scenario(total_params=1e9, tokens=1e10, gpu_count=8, node_failures_per_1000_node_days=0.0,
                        checkpoint_async=True, experiment_overhead=0.0, mfu=0.4)
    assert (scenario.weight_archives, scenario.weight_archive_bytes_per_param, scenario.archive_every_nth) == (10, 2, 0)
    result = scenario_outputs(scenario)
    run_hours = 6 * 1e9 * 1e10 / (0.4 * 989e12) / 3600 / 8
    assert result["wall_clock_days"] * 24 == pytest.approx(run_hours, rel=1e-3)
    assert result["storage_retained_gb"] == pytest.approx(3 * 14 + 10 * 2 + 80 + 5 * run_hours / 24, rel=1e-4)
