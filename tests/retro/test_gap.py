"""Plan vs actual: the waterfall parts add up to the gap, and each kind of deviation lands in its own part."""

import dataclasses
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from usage_rows import usage

from dashboard.core.engine import scenario_outputs
from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario
from dashboard.ingest import import_path
from dashboard.ingest.schema import ReadOptions
from dashboard.query import tables
from dashboard.retro import gap
from dashboard.retro.gap import (
    FAILED_STATES,
    GAP_COLUMNS,
    NEEDS_COST,
    NEEDS_STATES,
    NEEDS_TOKENS,
    PARTS,
    decompose,
    decomposition_summary,
    plan_mismatch,
    plan_vs_actual,
    suggest_main_runs,
)
from dashboard.retro.gap import actual_sums as gap_query_sums
from dashboard.retro.join import join_usage

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples"

# Plan: main run 1,000 GPU-h of which 100 rework, 200 GPU-h of experiments, $2/GPU-h, 1e9 tokens.
PLAN = {"gpu_hours_main_run": 1000.0, "gpu_hours_rework": 100.0, "gpu_hours_experiments": 200.0,
        "blended_price_per_gpu_hour": 2.0}
SCENARIO = Scenario(tokens=1e9)
PLAN_HOURS, PLAN_USD = 1200.0, 2400.0


def run(hours: float, run_id: str | None = "main", state: str | None = "COMPLETED", tokens: float | None = None,
        price: float | None = 2.0, **extra) -> dict:
    """One GPU row: ``price`` $/GPU-h (None: cost unknown)."""
    return {"gpu_hours": hours, "run_id": run_id, "run_state": state, "tokens": tokens,
            "cost": None if price is None else hours * price, **extra}


AS_PLANNED = [run(900, tokens=1e9), run(100, state="FAILED"), run(200, run_id="ablation")]

# id, rows, expected GPU-hours of (scale, efficiency, failures, experiments, idle), expected price $, idle extra $
CASES = [
    ("as planned", AS_PLANNED, (0, 0, 0, 0, 0), 0, 0),
    ("tokens doubled at plan efficiency", [run(1800, tokens=2e9), *AS_PLANNED[1:]], (900, 0, 0, 0, 0), 0, 0),
    ("half the tokens per GPU-hour", [run(1800, tokens=1e9), *AS_PLANNED[1:]], (0, 900, 0, 0, 0), 0, 0),
    ("tokens doubled at half the efficiency", [run(3600, tokens=2e9), *AS_PLANNED[1:]], (900, 1800, 0, 0, 0), 0, 0),
    ("more failed hours", [*AS_PLANNED, run(300, state="NODE_FAIL"), run(50, run_id="ablation", state="TIMEOUT")],
     (0, 0, 350, 0, 0), 0, 0),
    ("more experiments", [*AS_PLANNED, run(150, run_id="eval", state="COMPLETED")], (0, 0, 0, 150, 0), 0, 0),
    ("untagged hours", [*AS_PLANNED, run(50, run_id=None, state=None)], (0, 0, 0, 0, 50), 0, 0),
    ("dearer hours", [run(900, tokens=1e9, price=3.0), run(100, state="FAILED", price=3.0),
                      run(200, run_id="ablation", price=3.0)], (0, 0, 0, 0, 0), 1200, 0),
    ("tokens unknown", [run(1000), *AS_PLANNED[1:]], (100, 0, 0, 0, 0), 0, 0),
    ("tokens known for half the main run", [run(450, tokens=0.5e9), run(450), *AS_PLANNED[1:]], (0, 0, 0, 0, 0), 0, 0),
    ("no run states", [run(1000, state=None, tokens=1e9), run(200, run_id="ablation", state=None)],
     (0, 0, 0, 0, 0), 0, 0),
    ("no run states, more main hours", [run(1100, state=None, tokens=1e9), run(200, run_id="ablation", state=None)],
     (0, 100, 0, 0, 0), 0, 0),
    ("no cost at all (run export)", [{**row, "cost": 0.0} for row in AS_PLANNED] + [run(10, run_id="eval", price=0.0)],
     (0, 0, 0, 10, 0), 0, 0),
    ("some GPU rows without cost", [run(900, tokens=1e9, price=None), *AS_PLANNED[1:]], (0, 0, 0, 0, 0), 0, 0),
    ("unused commitment (amortised)", [{**row, "pricing": "reserved"} for row in AS_PLANNED]
     + [{"pricing": "reserved", "cost": 500.0, "charge_kind": "unused_commitment"}], (0, 0, 0, 0, 0), 0, 500),
    ("commitment fee (actual-cost view)", [{**run(900, tokens=1e9, price=0.0), "pricing": "reserved"},
                                           {**run(100, state="FAILED", price=0.0), "pricing": "reserved"},
                                           run(200, run_id="ablation"),
                                           {"pricing": "reserved", "cost": 2000.0, "charge_kind": "commitment"}],
     (0, 0, 0, 0, 0), 0, 0),
    ("savings-plan fee at its unused part (AWS CUR)", [*AS_PLANNED, {"charge_kind": "unused_commitment",
                                                                      "cost": 80.0}], (0, 0, 0, 0, 0), 0, 80),
    ("a resource id naming a reservation is not a commitment", [*AS_PLANNED, {"resource_id": "reservation-vm",
                                                                             "cost": 80.0}], (0, 0, 0, 0, 0), 0, 0),
    ("host share of a run (vCPU SKU)", [*AS_PLANNED, {"run_id": "main", "cost": 100.0}], (0, 0, 0, 0, 0), 100, 0),
    ("non-GPU lines are left out", [*AS_PLANNED, {"run_id": "tokenize", "cost": 900.0}, {"cost": 46.0}],
     (0, 0, 0, 0, 0), 0, 0),
]


@pytest.mark.parametrize(("rows", "hours", "price_usd", "idle_extra_usd"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_each_deviation_lands_in_its_part(rows, hours, price_usd, idle_extra_usd):
    actual = usage(*rows)
    parts, summary = decompose(PLAN, SCENARIO, actual, ["main"])
    assert parts.equals(plan_vs_actual(PLAN, SCENARIO, actual, ["main"]))
    assert summary == decomposition_summary(PLAN, SCENARIO, actual, ["main"])
    parts = parts.set_index("part")

    assert parts["gpu_hours"].to_numpy() == pytest.approx([*hours, 0.0], abs=1e-9)
    expected_usd = [h * PLAN["blended_price_per_gpu_hour"] for h in hours] + [price_usd]
    expected_usd[4] += idle_extra_usd
    assert parts["usd"].to_numpy() == pytest.approx(expected_usd, abs=1e-9)
    assert parts["gpu_hours"].sum() == pytest.approx(summary.actual_gpu_hours - PLAN_HOURS, abs=1e-9)
    assert parts["usd"].sum() == pytest.approx(summary.actual_usd - PLAN_USD, abs=1e-9)


def test_decompose_reads_the_actual_side_once(monkeypatch):
    readings = []
    monkeypatch.setattr(gap, "actual_sums",
                        lambda *args: readings.append(args) or gap_query_sums(*args))
    decompose(PLAN, SCENARIO, usage(*AS_PLANNED), ["main"])
    assert len(readings) == 1


def test_frame_shape_and_notes():
    parts = plan_vs_actual(PLAN, SCENARIO, usage(run(1000), *AS_PLANNED[1:]), ["main"])
    assert tuple(parts.columns) == GAP_COLUMNS
    assert tuple(parts["part"]) == PARTS
    assert parts.set_index("part").loc["efficiency", "note"] == "tokens unknown"


def test_notes_say_what_was_assumed():
    no_states = plan_vs_actual(PLAN, SCENARIO, usage(run(1000, state=None)), ["main"]).set_index("part")["note"]
    assert "no run states" in no_states["failures and restarts"]
    no_cost = plan_vs_actual(PLAN, SCENARIO, usage(run(1000, price=0.0)), ["main"]).set_index("part")["note"]
    assert "plan price" in no_cost["price"]


def test_summary_totals():
    rows = [run(1800, tokens=2e9, price=3.0), run(100, state="FAILED", price=3.0),
            run(50, run_id=None, state=None, price=3.0)]
    summary = decomposition_summary(PLAN | {"cost_total_usd": 3000.0}, SCENARIO, usage(*rows), ["main"])
    assert summary.plan_gpu_hours == PLAN_HOURS
    assert summary.plan_usd == PLAN_USD
    assert summary.plan_non_gpu_usd_excluded == pytest.approx(600.0)
    assert summary.actual_gpu_hours == 1950.0
    assert summary.actual_usd == pytest.approx(1950 * 3.0)
    assert summary.actual_price_per_gpu_hour == pytest.approx(3.0)
    assert summary.actual_tokens == 2e9
    assert summary.actual_failed_gpu_hours == 100.0
    assert summary.actual_unattributed_gpu_hours == 50.0
    assert summary.gap_usd == pytest.approx(1950 * 3.0 - PLAN_USD)
    assert (summary.cost_known, summary.states_known, summary.tokens_known) == (True, True, True)


def test_the_summary_is_a_frozen_value_the_page_s_cache_keeps():
    summary = decomposition_summary(PLAN, SCENARIO, usage(run(1800, tokens=2e9, price=3.0)), ["main"])
    assert pickle.loads(pickle.dumps(summary)) == summary  # st.cache_data pickles what it keeps
    with pytest.raises(dataclasses.FrozenInstanceError):
        summary.actual_usd = 0.0
    assert summary.main_run_ids == ("main",)
    assert summary.gap_gpu_hours == pytest.approx(1800.0 - PLAN_HOURS)


def test_tst_plan_compares_raw_tokens():
    scenario = Scenario(tokens=1e9, method="tst", tst_token_multiplier=2.0)
    summary = decomposition_summary(PLAN, scenario, usage(*AS_PLANNED), ["main"])
    assert summary.plan_tokens == 2e9


def test_failed_states_can_be_narrowed():
    rows = [run(900, tokens=1e9), run(100, state="TIMEOUT"), run(200, run_id="ablation")]
    narrowed = tuple(state for state in FAILED_STATES if state != "TIMEOUT")
    parts = plan_vs_actual(PLAN, SCENARIO, usage(*rows), ["main"], failed_states=narrowed).set_index("part")
    assert parts.loc["failures and restarts", "gpu_hours"] == pytest.approx(-100.0)
    assert parts.loc["scale", "gpu_hours"] + parts.loc["efficiency", "gpu_hours"] == pytest.approx(100.0)


@pytest.mark.parametrize(("rows", "expected"), [
    ([run(10, run_id="a"), run(30, run_id="b"), run(25, run_id="a")], ["a"]),
    ([run(10, run_id=None), run(5, run_id="b"), {"run_id": "c", "cost": 1e6}], ["b"]),
    ([run(10, run_id=None)], []),
])
def test_suggest_main_runs(rows, expected):
    assert suggest_main_runs(usage(*rows)) == expected


def test_suggest_main_runs_by_project_takes_every_run_of_the_largest_project():
    rows = [run(40, run_id="w1", project="pretrain"), run(30, run_id="w2", project="pretrain"),
            run(50, run_id="w3", project="ablations"), run(9, run_id=None, project="pretrain")]
    assert suggest_main_runs(usage(*rows), by="project") == ["w1", "w2"]  # 70 GPU-h of runs against 50


def test_tokens_that_cannot_be_scaled_up_count_as_unknown():
    # Tokens are known only on a row of 2.2e-308 GPU-hours: scaled up to the main run's 1,000 GPU-hours they
    # overflow, so the gap is read without tokens (scale takes every main-run hour, efficiency none).
    rows = [run(2.2250738585072014e-308, tokens=1.0), run(1000)]
    summary = decomposition_summary(PLAN, SCENARIO, usage(*rows), ["main"])
    assert summary.tokens_known is False and summary.actual_tokens is None
    parts = plan_vs_actual(PLAN, SCENARIO, usage(*rows), ["main"]).set_index("part")
    assert parts.loc["efficiency", "gpu_hours"] == 0.0
    assert np.isfinite(parts[["gpu_hours", "usd"]].to_numpy()).all()


RUN_IDS = st.sampled_from([None, "main", "ablation", "eval"])
STATES = st.sampled_from([None, "COMPLETED", "FAILED", "NODE_FAIL", "TIMEOUT", "RUNNING"])
MONEY = st.one_of(st.none(), st.floats(0, 1e4))
GPU_ROWS = st.builds(
    lambda hours, run_id, state, tokens, cost, pricing: {
        "gpu_hours": hours, "run_id": run_id, "run_state": state, "tokens": tokens, "cost": cost, "pricing": pricing},
    st.floats(0, 1e4), RUN_IDS, STATES, st.one_of(st.none(), st.floats(0, 1e12)), MONEY,
    st.sampled_from([None, "reserved", "on_demand", "spot"]),
)
OTHER_ROWS = st.builds(  # storage, fees, credits, host shares: no GPU-hours
    lambda run_id, cost, pricing: {"run_id": run_id, "cost": cost, "pricing": pricing},
    RUN_IDS, st.floats(-1e4, 1e4), st.sampled_from([None, "reserved", "on_demand"]),
)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.one_of(GPU_ROWS, OTHER_ROWS), max_size=12),
    main_h=st.floats(1, 1e6), rework_share=st.floats(0, 0.5), experiments_h=st.floats(0, 1e6),
    price=st.floats(0.1, 20), tokens=st.floats(1e6, 1e13),
)
def test_parts_always_sum_to_the_gap(rows, main_h, rework_share, experiments_h, price, tokens):
    plan = {"gpu_hours_main_run": main_h, "gpu_hours_rework": main_h * rework_share,
            "gpu_hours_experiments": experiments_h, "blended_price_per_gpu_hour": price}
    actual = usage(*rows)
    scenario = Scenario(tokens=tokens)
    parts = plan_vs_actual(plan, scenario, actual, ["main"])
    summary = decomposition_summary(plan, scenario, actual, ["main"])
    # floating-point tolerance: relative to the largest magnitude summed
    scale = max(1.0, parts["gpu_hours"].abs().sum(), parts["usd"].abs().sum(), summary.actual_usd,
                summary.plan_usd, summary.actual_gpu_hours, summary.plan_gpu_hours)
    assert parts["gpu_hours"].sum() == pytest.approx(summary.actual_gpu_hours - summary.plan_gpu_hours,
                                                     abs=1e-9 * scale)
    assert parts["usd"].sum() == pytest.approx(summary.actual_usd - summary.plan_usd, abs=1e-9 * scale)
    assert np.isfinite(parts[["gpu_hours", "usd"]].to_numpy()).all()


def test_bundled_focus_and_slurm_samples_sum_to_the_gap():
    options = ReadOptions(timezone="UTC")
    billing, _ = import_path(SAMPLES / "focus_sample.csv", options=options)
    runs, _ = import_path(SAMPLES / "slurm_sample.txt", options=options)
    joined, _ = join_usage(tables.table_of(billing), tables.table_of(runs), on="run_id")
    scenario = next(s for name, s in presets().items() if name.startswith("Sample organisation"))
    plan = scenario_outputs(scenario)
    main = suggest_main_runs(joined)
    assert main == ["pretrain-13b"]

    parts = plan_vs_actual(plan, scenario, joined, main)
    summary = decomposition_summary(plan, scenario, joined, main)
    assert parts["usd"].sum() == pytest.approx(summary.actual_usd - summary.plan_usd, rel=1e-12)
    assert parts["gpu_hours"].sum() == pytest.approx(summary.actual_gpu_hours - summary.plan_gpu_hours,
                                                     rel=1e-12)
    assert summary.plan_usd == pytest.approx(
        (plan["gpu_hours_main_run"] + plan["gpu_hours_experiments"]) * plan["blended_price_per_gpu_hour"])
    by_part = parts.set_index("part")
    assert by_part.loc["idle / unattributed", "gpu_hours"] == pytest.approx(1152.0)  # the untagged dev box
    # pretrain-13b is billed 82,616 GPU-h: 8 machines x 8 GPUs x 24 h from 5 May to 26 June (53 days, 81,408) + 14 h on
    # 27 June (896), less 39 lost machine-hours (-312) plus 78 of the hot spare (+624). Its failed jobs take 64 GPUs x
    # 316.25 h = 20,240, but each of its 8 failed jobs is followed within hours by the next on the same 64 GPUs: the
    # run resumed from its checkpoint, so each interruption lost half a checkpoint interval and a restart on 64 GPUs
    # (the plan's 30 min and 11 min); the rest, and the completed jobs and billed hours between jobs, is main ok.
    rows = joined.to_pandas()
    main_failed = rows["run_id"].eq("pretrain-13b") & rows["run_state"].isin(FAILED_STATES)
    assert rows.loc[main_failed, "gpu_hours"].sum() == pytest.approx(20_240) and main_failed.sum() == 8
    lost = 8 * 64 * (scenario.checkpoint_interval_min / 2 + scenario.restart_min) / 60
    assert (scenario.checkpoint_interval_min, scenario.restart_min) == (30.0, 11.0)
    assert summary.actual_main_ok_gpu_hours == pytest.approx(82_616 - lost)
    assert not summary.tokens_known  # sacct has no tokens: all main-run hours above the plan show as scale
    assert by_part.loc["scale", "gpu_hours"] == pytest.approx(
        82_616 - lost - (plan["gpu_hours_main_run"] - plan["gpu_hours_rework"]))
    assert summary.unused_commitment_usd == pytest.approx(73_247.73)  # the idle reservation before / after


@pytest.mark.parametrize(("rows", "unknown"), [
    pytest.param(AS_PLANNED, [], id="tokens, states and cost known"),
    pytest.param([run(1000), *AS_PLANNED[1:]], ["efficiency"], id="no tokens"),
    pytest.param([run(1000, state=None, tokens=1e9)], ["failures and restarts"], id="no run states"),
    pytest.param([run(900, tokens=1e9, price=0.0), run(100, state="FAILED", price=0.0)], ["price"], id="no cost"),
])
def test_parts_the_table_cannot_tell_are_marked_unknown_with_what_to_import(rows, unknown):
    parts = plan_vs_actual(PLAN, SCENARIO, usage(*rows), ["main"]).set_index("part")
    assert parts.index[~parts["known"]].tolist() == unknown
    needs = {"efficiency": NEEDS_TOKENS, "failures and restarts": NEEDS_STATES, "price": NEEDS_COST}
    assert parts.loc[unknown, "needs"].tolist() == [needs[part] for part in unknown]
    assert (parts.loc[parts["known"], "needs"] == "").all()


# The plan's main run is 1,000 GPU-h; "more than 2x" either way is flagged.
@pytest.mark.parametrize(("main_hours", "flagged"), [(2000.0, False), (2001.0, True), (500.0, False), (499.0, True)])
def test_a_plan_for_another_run_is_flagged(main_hours, flagged):
    summary = decomposition_summary(PLAN, SCENARIO, usage(run(main_hours, tokens=1e9)), ["main"])
    assert summary.actual_main_run_gpu_hours == main_hours
    warning = plan_mismatch(summary)
    assert (warning is not None) == flagged
    if flagged:
        assert ("more" if main_hours > 1000 else "fewer") + " GPU-hours than the plan's" in warning
