"""The overrun's causes carried into the next plan (`dashboard.retro.carry`): each part of Plan vs actual becomes an
input change or an explicit line, by hand on a decomposition written here, and on the bundled quarter against the
sample 13B plan with the figures pinned to the sample generator's own tables."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from dashboard.core import engine
from dashboard.core.scenario import scenario_from_dict
from dashboard.ingest import import_path
from dashboard.query import tables
from dashboard.retro import carry, gap
from dashboard.retro.calibrate import calibrate
from dashboard.retro.join import join_usage

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples"
PLAN_13B = ROOT / "data" / "scenarios" / "presets" / "sample_org_13b.json"
PLAN_PRICE = 0.9 * 7.20 + 0.1 * 12.29  # the 13B plan's blended $/GPU-h: 90 % reserved, the rest on demand = 7.709


def base():
    return scenario_from_dict(json.loads(PLAN_13B.read_text()))


def decomposition(scale_h, efficiency_h, failures_h, experiments_h, idle_usd, tokens_known=True):
    """Parts and summary as ``gap.decompose`` gives them: a plan main run of 60,000 GPU-h with 1,000 of rework,
    1e12 tokens planned and 1.2e12 trained, $100k actual."""
    hours = [scale_h, efficiency_h, failures_h, experiments_h, idle_usd / PLAN_PRICE, 0.0]
    parts = pd.DataFrame({"part": list(gap.PARTS), "gpu_hours": hours, "usd": [h * PLAN_PRICE for h in hours],
                          "known": [True, tokens_known, True, True, True, True],
                          "needs": ["", "" if tokens_known else "tokens", "", "", "", ""], "note": [""] * 6})
    unread = dict.fromkeys((field.name for field in dataclasses.fields(gap.GapSummary)), 0.0)  # next_plan's unread
    summary = gap.GapSummary(**unread | {
        "tokens_known": tokens_known, "actual_tokens": 1.2e12 if tokens_known else None, "plan_tokens": 1e12,
        "plan_main_run_gpu_hours": 60_000.0, "plan_rework_gpu_hours": 1_000.0, "plan_usd": 80_000.0,
        "actual_usd": 100_000.0})
    return parts, summary


def test_each_part_by_hand():
    """Planned 59,000 GPU-h of work without rework; 1.2× the tokens is 70,800 at the plan's rate, and it took 7,080
    more, 77,880: MFU 0.40 × 70,800 / 77,880 = 0.3636, three figures 0.364. No input was measured, so failures
    (2,000 GPU-h) and experiments (1,000 GPU-h) are lines at the plan's 7.709 $/GPU-h; idle is 10 % of the $100k
    paid, so the next plan reserves 10/90 of its other dollars."""
    parts, summary = decomposition(11_800.0, 7_080.0, 2_000.0, 1_000.0, 10_000.0)
    got = carry.next_plan(parts, summary, {}, base())
    assert got.scenario.tokens == 1.2e12 and got.scenario.mfu == 0.364
    how = {part.part: part.how for part in got.parts}
    assert how == {"scale": carry.INPUT, "efficiency": carry.INPUT, "failures and restarts": carry.LINE,
                   "experiments": carry.LINE, "idle / unattributed": carry.LINE, "price": carry.NOTHING}
    lines = {part.part: part.line_usd for part in got.parts}
    assert lines["failures and restarts"] == pytest.approx(2_000 * PLAN_PRICE)
    assert lines["experiments"] == pytest.approx(1_000 * PLAN_PRICE)
    assert lines["idle / unattributed"] == pytest.approx((got.next_gpu_usd + 3_000 * PLAN_PRICE) / 9)
    assert got.lines_usd == pytest.approx(sum(lines.values()))
    assert "reserve 10 % idle capacity" in {p.part: p.text for p in got.parts}["idle / unattributed"]


# (parts, tokens known, part, how it is carried): a part that saved money or is unknown carries nothing
CASES = [
    ((-500.0, 0.0, -200.0, -100.0, 0.0), True, "failures and restarts", carry.NOTHING),
    ((-500.0, 0.0, -200.0, -100.0, 0.0), True, "experiments", carry.NOTHING),
    ((-500.0, 0.0, -200.0, -100.0, 0.0), True, "idle / unattributed", carry.NOTHING),
    ((4_000.0, 0.0, 0.0, 0.0, 0.0), False, "scale", carry.LINE),
    ((4_000.0, 0.0, 0.0, 0.0, 0.0), False, "efficiency", carry.NOTHING),
]


@pytest.mark.parametrize(("hours", "tokens_known", "part", "how"), CASES)
def test_what_is_carried(hours, tokens_known, part, how):
    got = carry.next_plan(*decomposition(*hours, tokens_known=tokens_known), {}, base())
    assert {p.part: p.how for p in got.parts}[part] == how


def test_without_tokens_the_main_run_s_extra_hours_are_a_line():
    got = carry.next_plan(*decomposition(4_000.0, 0.0, 0.0, 0.0, 0.0, tokens_known=False), {}, base())
    scale = next(p for p in got.parts if p.part == "scale")
    assert scale.line_usd == pytest.approx(4_000 * PLAN_PRICE) and got.scenario.tokens == base().tokens
    assert "not known last quarter (tokens)" in next(p.text for p in got.parts if p.part == "efficiency")


# --- the bundled quarter against the sample 13B plan ---------------------------------------------------------------

def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, SAMPLES / "generator" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


@cache
def generator() -> dict[str, float]:
    """From the generators' tables: the untagged dev box (12 days of a 4-GPU machine, 24 h a day), the commitment's
    unused machine-hours at its $57.63 an hour, and the pretrain-13b project's tokens (completed jobs; every job)."""
    billing, runs = _module("make_billing_samples"), _module("make_run_samples")
    plan = billing.usage_plan()
    idle_h = sum(line["hours"] * billing.SHAPES[line["shape"]]["aws"][1] for line in plan
                 if not line["tags"] and billing.SHAPES[line["shape"]]["aws"][1])
    unused = sum(billing.COMMITTED_HOURS - used for _, used in billing.commitment_plan(plan))
    jobs, _ = runs.all_jobs(runs.billed_gpu_hours())
    main = [job for job in jobs if job.project == "pretrain-13b" and job.wandb]
    completed = sum(float(job.wandb["tokens_seen"] or 0) for job in main if job.state.split()[0] == "COMPLETED")
    every = sum(float(job.wandb["tokens_seen"] or 0) for job in main)
    return {"idle_h": idle_h, "unused_usd": unused * billing.SHAPES["h100x8"]["aws"][2]["committed"],
            "tokens_completed": completed, "tokens_every": every,
            "reserved": billing.SHAPES["h100x8"]["aws"][2]["committed"] / 8,
            "on_demand": billing.SHAPES["h100x8"]["aws"][2]["on_demand"] / 8}


@cache
def sample_next_plan() -> carry.NextPlan:
    bill, _ = import_path(SAMPLES / "focus_sample.csv")
    runs, report = import_path(SAMPLES / "wandb_sample.csv")
    joined, _ = join_usage(tables.table_of(bill), tables.table_of(runs), on="project")
    plan = base()
    parts, summary = gap.decompose(engine.scenario_outputs(plan), plan, joined,
                                   gap.suggest_main_runs(joined, by="project"))
    measured = calibrate(bill, runs, run_params=report.model_params, gpu_type=plan.gpu_type)
    return carry.next_plan(parts, summary, measured, plan)


def test_the_next_plan_costs_at_least_what_last_quarter_cost():
    got = sample_next_plan()
    assert got.next_usd >= got.actual_usd > got.old_plan_usd
    assert got.carried == gap.PARTS  # every part of the overrun is named and carried
    banner = carry.banner(got)
    assert all(part in banner for part in gap.PARTS) and "missed by" in banner


def test_idle_is_the_generator_s_untagged_box_and_unused_commitment():
    truth = generator()
    assert truth["idle_h"] == 12 * 24 * 4
    idle = next(p for p in sample_next_plan().parts if p.part == "idle / unattributed")
    # the bill rounds each line to the cent
    assert idle.usd == pytest.approx(truth["idle_h"] * PLAN_PRICE + truth["unused_usd"], abs=5.0)
    assert idle.how == carry.LINE and "cut the commitment" in idle.text


def test_scale_carries_the_tokens_the_generator_trained():
    """Between what the project's completed jobs kept and what all its jobs processed (the interrupted ones keep
    the part before their last checkpoint)."""
    truth = generator()
    tokens = sample_next_plan().scenario.tokens
    assert truth["tokens_completed"] * 0.999 <= tokens <= truth["tokens_every"] * 1.001 and tokens > 1e12


def test_efficiency_and_price_carry_the_generator_s_rates():
    got = sample_next_plan()
    # the main run's jobs ran at 85-89 % of the plan's tokens per GPU-hour at 40 % MFU
    assert 0.40 * 0.85 <= got.scenario.mfu <= 0.40 * 0.89
    assert got.scenario.price_reserved_per_gpu_hour == pytest.approx(generator()["reserved"], rel=5e-3)
    assert got.scenario.price_on_demand_per_gpu_hour == pytest.approx(generator()["on_demand"], rel=5e-3)
