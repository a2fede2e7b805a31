"""Calibration on the bundled sample recovers what its generators drew from.

The truth is computed here from the generators' own tables (``data/samples/generator``: the jobs of
``make_run_samples.all_jobs`` and the usage plan and prices of ``make_billing_samples``, imported by path; neither
writes a file on import), never from the imported files. Each row of the tables below states its tolerance.
"""

from __future__ import annotations

import importlib.util
import sys
from datetime import timedelta
from functools import cache
from pathlib import Path

import pytest

from dashboard.ingest import import_path
from dashboard.ingest.schema import ReadOptions
from dashboard.retro.calibrate import calibrate

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples"
GENERATOR = SAMPLES / "generator"
FAILED = {"FAILED", "NODE_FAIL", "PREEMPTED", "TIMEOUT", "CANCELLED", "OUT_OF_MEMORY"}


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, GENERATOR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


@cache
def generator_truth() -> dict[str, float]:
    runs, billing = _module("make_run_samples"), _module("make_billing_samples")
    jobs, _ = runs.all_jobs(runs.billed_gpu_hours())
    started = [job for job in jobs if job.start is not None and job.gpus and job.elapsed > timedelta(0)]
    node_days = sum(job.gpu_hours for job in started) / 8 / 24
    # the rule on the generator's jobs: NODE_FAIL, or FAILED / TIMEOUT that the same run resumed after (its next
    # job starts at or after its end, within 24 h, on as many GPUs)
    node_failures = 0
    for job in started:
        state = job.state.split()[0]
        later = sorted((o for o in started if o.name == job.name and o.start > job.start), key=lambda o: o.start)
        resumed = bool(later) and job.end is not None and (
            job.end <= later[0].start <= job.end + timedelta(hours=24) and later[0].gpus == job.gpus)
        node_failures += state == "NODE_FAIL" or (state in ("FAILED", "TIMEOUT") and resumed)
    preemptions = sum(job.state == "PREEMPTED" for job in started)
    # restart gaps: from each resumed NODE_FAIL, FAILED or TIMEOUT job's end to its run's next job's start
    gaps = []
    for job in started:
        later = sorted((o for o in started if o.name == job.name and o.start > job.start), key=lambda o: o.start)
        if (job.state.split()[0] in ("NODE_FAIL", "FAILED", "TIMEOUT") and later and job.end is not None
                and job.end <= later[0].start <= job.end + timedelta(hours=24) and later[0].gpus == job.gpus):
            gaps.append((later[0].start - job.end).total_seconds() / 60)
    main_h = sum(job.gpu_hours for job in started if job.name == "pretrain-13b")
    eval_h = sum(job.gpu_hours for job in started if job.team == "llm-eval")
    other_h = sum(job.gpu_hours for job in started if job.name != "pretrain-13b" and job.team != "llm-eval")
    # prices: the FOCUS file is AWS's dialect; GPU-hours = machine-hours x GPUs per machine
    hours: dict[str, float] = {}
    cost: dict[str, float] = {}
    for line in billing.usage_plan():
        _, gpus, prices = billing.SHAPES[line["shape"]]["aws"]
        if gpus:
            tier = "reserved" if line["pricing"] == "committed" else line["pricing"]
            hours[tier] = hours.get(tier, 0.0) + line["hours"] * gpus
            cost[tier] = cost.get(tier, 0.0) + line["hours"] * prices[line["pricing"]]
    known = sum(hours.values())
    return {
        "node_failures": node_failures, "node_days": node_days, "preemptions": preemptions,
        "node_failures_per_1000_node_days": node_failures / node_days * 1000,
        "spot_interruptions_per_1000_node_days": preemptions / node_days * 1000,
        "experiment_overhead": other_h / main_h, "eval_overhead": eval_h / main_h, "debug_overhead": 0.0,
        "price_reserved_per_gpu_hour": billing.SHAPES["h100x8"]["aws"][2]["committed"] / 8,
        "price_on_demand_per_gpu_hour": cost["on_demand"] / hours["on_demand"],
        "price_spot_per_gpu_hour": cost["spot"] / hours["spot"],
        "reserved_share": hours["reserved"] / known, "spot_share": hours["spot"] / known,
        "mfu_low": 0.40 * runs.MAIN_EFFICIENCY[0], "mfu_high": 0.40 * runs.MAIN_EFFICIENCY[1],
        "restart_gaps_min": sorted(gaps),
    }


@cache
def imported(name: str):
    options = ReadOptions(timezone="UTC") if name.startswith("slurm") else ReadOptions()
    return import_path(SAMPLES / name, options=options)[0]


@cache
def measured(runs: str) -> dict:
    return calibrate(imported("focus_sample.csv"), imported(runs), model_params=13e9)


# (key, run export, relative tolerance, why). Slurm times are whole seconds and the generator's exact, so the
# node-days and GPU-hour ratios agree to well under 1 %; the bill's costs are rounded to the cent per daily line.
TRUTH_CASES = [
    ("node_failures_per_1000_node_days", "slurm_sample.txt", 0.01, "count exact, node-days to 1 %"),
    ("spot_interruptions_per_1000_node_days", "slurm_sample.txt", 0.01, "Slurm names no pricing: all jobs"),
    ("experiment_overhead", "slurm_sample.txt", 0.01, "Slurm job names are the run tags"),
    ("eval_overhead", "slurm_sample.txt", 0.01, "the llm-eval team's runs"),
    ("price_reserved_per_gpu_hour", "slurm_sample.txt", 1e-4, "p5.48xlarge committed / 8"),
    ("price_on_demand_per_gpu_hour", "slurm_sample.txt", 1e-4, "H100 and the A10G dev box together"),
    ("price_spot_per_gpu_hour", "slurm_sample.txt", 1e-4, "A100 and H100 spot together"),
    ("reserved_share", "slurm_sample.txt", 1e-4, "committed GPU-hours / all priced"),
    ("spot_share", "slurm_sample.txt", 1e-4, "spot GPU-hours / all priced"),
]


@pytest.mark.parametrize(("key", "runs", "tolerance", "why"), TRUTH_CASES)
def test_sample_recovers_the_generator(key, runs, tolerance, why):
    got = measured(runs)[key]
    assert got.value == pytest.approx(generator_truth()[key], rel=tolerance), why


def test_sample_counts_match():
    truth = generator_truth()
    node = measured("slurm_sample.txt")["node_failures_per_1000_node_days"]
    spot = measured("slurm_sample.txt")["spot_interruptions_per_1000_node_days"]
    # 3 NODE_FAIL + 2 FAILED and 2 TIMEOUT segments of pretrain-13b that resumed + the burn-in's first job
    assert node.count == truth["node_failures"] == 8
    assert spot.count == truth["preemptions"] == 4
    assert node.exposure == pytest.approx(truth["node_days"], rel=0.01)
    assert node.thin  # about 511 node-days, under the 1,000 a rate needs


def test_debug_overhead_is_not_measured_on_the_sample():
    """The June dev box has no run (idle, not debugging) and no job is named debug…: not measured, not 0."""
    got = measured("slurm_sample.txt")["debug_overhead"]
    assert got.value is None and got.caveat.startswith("not measured: no runs named debug")


def test_mfu_from_wandb_tokens():
    """The main run's jobs process 85-89 % of the plan's tokens per GPU-hour at 40 % MFU, so MFU 0.34-0.356.
    W&B run ids are per job, so the main run is the project pretrain-13b, whose two completed burn-in jobs ran
    slower (about 0.31-0.32); they pull the P10 below the band but not the median. W&B's runtime starts a minute
    or so after Slurm's, so the jobs' GPU-hours are slightly fewer: 0.005 of tolerance above."""
    truth = generator_truth()
    got = measured("wandb_sample.csv")["mfu"]
    assert truth["mfu_low"] <= got.value <= truth["mfu_high"] + 0.005
    assert got.count == 16  # 14 completed segments + 2 completed burn-in jobs; the 9 failed segments left out
    assert got.high <= truth["mfu_high"] + 0.005
    assert "pretrain-13b" in got.basis


def test_mfu_of_the_main_segments_only():
    """Given the main segments' run ids (W&B rows of the project from 5 May), every job is in the band."""
    runs = imported("wandb_sample.csv")
    main = runs.loc[(runs["project"] == "pretrain-13b") & (runs["period_start"] >= "2025-05-05"), "run_id"]
    got = calibrate(None, runs, model_params=13e9, main_run_ids=list(main))["mfu"]
    truth = generator_truth()
    assert got.count == 14
    assert truth["mfu_low"] - 0.005 <= got.low <= got.value <= got.high <= truth["mfu_high"] + 0.005


def test_wandb_states_cannot_tell_node_failures():
    got = measured("wandb_sample.csv")
    assert "W&B" in got["node_failures_per_1000_node_days"].caveat
    assert got["spot_interruptions_per_1000_node_days"].count == 0  # W&B has no preempted state


def test_restart_time_from_the_generator_s_gaps():
    """The generator restarts 25-45 min after a time-out or a loss spike and after a node failure once the node is
    back: the eight gaps of the burn-in and the main run (25, 25, 45, 80, 330, 570, 710, 870 min), median 205."""
    truth = generator_truth()["restart_gaps_min"]
    got = measured("slurm_sample.txt")["restart_min"]
    assert got.count == len(truth) == 8
    assert got.value == pytest.approx((truth[3] + truth[4]) / 2, abs=1 / 60)  # whole seconds in sacct
    assert truth == pytest.approx([25, 25, 45, 80, 330, 570, 710, 870], abs=1 / 60)
