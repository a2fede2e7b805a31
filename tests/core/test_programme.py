"""The programme of stages: schema 1 reads as schema 2 to the cent, stages priced by hand, the calendar, properties."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard.core import programme
from dashboard.core.engine import LINE_ITEMS, scenario_arrays, scenario_outputs
from dashboard.core.questions import optimal_for_budget, optimal_for_target_loss
from dashboard.core.scenario import Scenario, ScenarioError, default_scenario, scenario_from_dict
from dashboard.core.uncertainty import monte_carlo

SCENARIOS = Path(__file__).resolve().parents[2] / "data" / "scenarios"
H100_PEAK_FLOPS = 989e12  # NVIDIA H100 SXM, dense BF16
# A plan whose GPU-hours are 6·N·D / (peak · MFU · 3600) exactly: MFU entered, no failures, no checkpoint stall, one
# price (all reserved, $2.65).
EXACT = {"mfu": 0.4, "node_failures_per_1000_node_days": 0.0, "spot_interruptions_per_1000_node_days": 0.0,
         "checkpoint_async": True, "reserved_share": 1.0, "spot_share": 0.0}


def _with(base: Scenario, **changes) -> Scenario:
    return scenario_from_dict(base.to_json_dict() | changes)


def _schema_1_files() -> list[Path]:
    return sorted(SCENARIOS.rglob("*.json"))


@pytest.mark.parametrize("path", _schema_1_files(), ids=lambda path: path.stem)
def test_a_schema_1_file_and_its_schema_2_reading_give_the_same_totals_to_the_cent(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    old = {key: value for key, value in data.items() if key not in ("programme", "start_date")} | {"schema": 1}
    new = old | {"schema": 2, "programme": [], "start_date": None}
    one, two = scenario_outputs(scenario_from_dict(old)), scenario_outputs(scenario_from_dict(new))
    assert round(one["cost_total_usd"], 2) == round(two["cost_total_usd"], 2)
    for item in LINE_ITEMS:
        assert round(one["cost_breakdown"][item], 2) == round(two["cost_breakdown"][item], 2)
    assert one["cost_breakdown"]["programme_stages"] == 0.0
    # The single-run plan is a programme of one "other experiments" stage: the experiment overhead × the main run.
    stages = {row["kind"]: row for row in one["programme"]["stages"]}
    overhead = old.get("experiment_overhead", Scenario.model_fields["experiment_overhead"].default)
    if overhead > 0:
        assert stages["other_experiments"]["gpu_hours"] == pytest.approx(one["gpu_hours_main_run"] * overhead)
        assert stages["other_experiments"]["cost_usd"] == pytest.approx(
            one["gpu_hours_main_run"] * overhead * one["blended_price_per_gpu_hour"])
    assert set(stages) <= {"other_experiments", "main", "eval_debug", "people"}
    assert one["programme"]["total_usd"] == pytest.approx(one["cost_total_usd"], rel=1e-12)


def test_a_schema_1_file_is_written_back_as_schema_2_and_cannot_carry_stages():
    data = default_scenario().to_json_dict()
    assert data["schema"] == 2 and data["programme"] == []
    old = {key: value for key, value in data.items() if key not in ("programme", "start_date")} | {"schema": 1}
    assert scenario_from_dict(old) == default_scenario()
    with pytest.raises(ScenarioError, match='programme and start_date need "schema": 2'):
        scenario_from_dict(old | {"programme": [{"kind": "ablations"}]})


@pytest.mark.parametrize(("changes", "message"), [
    ({"programme": [{"kind": "ladder"}]}, "does not match any of the expected tags"),
    ({"programme": [{"kind": "scaling_ladder", "runs": 0}]},
     "programme stage 1 (scaling_ladder) runs = 0 is out of range (allowed: ≥ 1 and ≤ 100)"),
    ({"programme": [{"kind": "ablations", "colour": "red"}]}, "unknown key 'programme stage 1 (ablations) colour'"),
    ({"programme": [{"kind": "ablations"}] * 21}, "21 stages: at most 20"),
    ({"programme": [{"kind": "scaling_ladder", "runs": 100}] * 20},
     "20 × 'Scaling ladder' of 100 runs = 2,000 priced runs; at most 200 a programme (PLANNER_PROGRAMME_MAX_RUNS)"),
    ({"programme": [{"kind": "scaling_ladder", "runs": 100, "name": "big"}, {"kind": "scaling_ladder", "runs": 90},
                    {"kind": "ablations", "runs": 10_000}] + [{"kind": "mid_training"}] * 11},
     "1 × 'big' of 100 runs + 1 × 'Scaling ladder' of 90 runs + 11 × 'Mid-training (annealing)' of 1 run + 1 run "
     "of 1 other stage = 202 priced runs; at most 200"),
    ({"start_date": "2027-02-30"}, "not a calendar date"),
    ({"start_date": "next monday"}, "start_date = 'next monday'"),
])
def test_bad_programmes_are_refused_with_the_key_named(changes, message):
    with pytest.raises(ScenarioError) as error:
        _with(default_scenario(), **changes)
    assert message in str(error.value)


def test_five_ladder_sizes_at_fixed_tokens_per_parameter_price_to_the_sum_of_their_6ND_costs():
    ladder = {"kind": "scaling_ladder", "runs": 5, "top_compute_fraction": 0.01, "span_decades": 2.0,
              "tokens_per_param": 20.0, "repeat_allowance": 0.0, "gpu_count": 8}
    plan = _with(default_scenario(), **EXACT, programme=[ladder])
    result = scenario_outputs(plan)
    main_flops = 6 * 7e9 * 2e12  # the default's 7B on 2T tokens
    # Rungs at 10⁻², 10⁻²·⁵, 10⁻³, 10⁻³·⁵ and 10⁻⁴ of the main run; each N = √(C/120), D = 20·N, so 6·N·D = C.
    flops = [main_flops * 10 ** -(2 + 0.5 * step) for step in range(5)]
    gpu_hours = sum(flops) / (H100_PEAK_FLOPS * 0.4 * 3600)
    row = next(row for row in result["programme"]["stages"] if row["kind"] == "scaling_ladder")
    assert row["gpu_hours"] == pytest.approx(gpu_hours, rel=1e-9)
    assert row["cost_usd"] == pytest.approx(gpu_hours * 2.65, rel=1e-9)
    assert result["cost_breakdown"]["programme_stages"] == pytest.approx(gpu_hours * 2.65, rel=1e-9)
    assert "5 sizes from 265M to 2.65B" in row["note"]  # √(8.4e18/120) = 2.65e8; √(8.4e20/120) = 2.65e9
    # Prediction error at the main run over one rung's scatter: x = −4…−2, x̄ = −3, Σ(x − x̄)² = 2.5: √(1/5 + 9/2.5).
    assert row["extrapolation_error_factor"] == pytest.approx(math.sqrt(0.2 + 9 / 2.5))
    assert row["extrapolation_decades"] == pytest.approx(2.0)


def _stage_row(result: dict, kind: str) -> dict:
    return next(row for row in result["programme"]["stages"] if row["kind"] == kind)


@pytest.mark.parametrize("gpu_count", [8, None], ids=["8 GPUs", "GPUs the batch can use"])
def test_a_ladder_priced_in_one_engine_call_equals_its_runs_priced_one_by_one(gpu_count):
    # Three rungs at 10⁻⁴, 10⁻³ and 10⁻² of the main run, priced as one block, against three one-rung ladders
    # priced as three scenarios (each rung alone in its own engine call).
    rung = {"kind": "scaling_ladder", "runs": 1, "repeat_allowance": 0.0, "gpu_count": gpu_count}
    ladder = rung | {"runs": 3, "top_compute_fraction": 0.01, "span_decades": 2.0}
    together = scenario_outputs(_with(default_scenario(), **EXACT, programme=[ladder]))
    alone = [scenario_outputs(_with(default_scenario(), **EXACT, programme=[rung | {"top_compute_fraction": share}]))
             for share in (1e-4, 1e-3, 1e-2)]
    row = _stage_row(together, "scaling_ladder")
    assert row["gpu_hours"] == pytest.approx(sum(_stage_row(one, "scaling_ladder")["gpu_hours"] for one in alone),
                                             rel=1e-12)
    if gpu_count == 8:  # by hand: 8.4e22 FLOPs × (10⁻⁴ + 10⁻³ + 10⁻²) at 40 % of 989 TFLOP/s
        assert row["gpu_hours"] == pytest.approx(8.4e22 * 0.0111 / (H100_PEAK_FLOPS * 0.4 * 3600), rel=1e-9)
        # The rungs run side by side on 3 × 8 of the 512 GPUs: the calendar is the longest rung, the 10⁻² one.
        assert row["calendar_days"] == pytest.approx(
            8.4e22 * 0.01 / (H100_PEAK_FLOPS * 0.4 * 3600) / 8 / 24, rel=1e-9)


def test_every_stage_stacked_in_chunks_prices_as_in_one_call(monkeypatch):
    plan = _with(default_scenario(), **programme.PRESETS["full programme"])
    whole = scenario_outputs(plan)
    monkeypatch.setattr(programme, "STACKED_ROWS", 3)  # the 5 rungs, ablations and 2 mid-training runs: 3 calls
    chunked = scenario_outputs(plan)
    assert chunked["cost_total_usd"] == pytest.approx(whole["cost_total_usd"], rel=1e-12)
    for one, two in zip(whole["programme"]["stages"], chunked["programme"]["stages"], strict=True):
        assert two["gpu_hours"] == pytest.approx(one["gpu_hours"], rel=1e-12)
        assert two["calendar_days"] == pytest.approx(one["calendar_days"], rel=1e-12)


def test_a_programme_costs_two_engine_calls_however_many_runs_it_has(monkeypatch):
    from dashboard.core import engine

    calls: list[int] = []
    real = engine.cost_arrays

    def counted(arrays, stages=()):
        calls.append(max(np.size(value) for value in arrays.values()))
        return real(arrays, stages)

    monkeypatch.setattr(engine, "cost_arrays", counted)
    ladders = [{"kind": "scaling_ladder", "runs": 40}, {"kind": "scaling_ladder", "runs": 30}, {"kind": "ablations"}]
    engine.output_arrays(engine.scenario_arrays([default_scenario()]), _with(default_scenario(),
                                                                             programme=ladders).programme)
    # The main run, then each of the two passes over the 40 + 30 + 1 runs stacked as rows.
    assert calls == [1, 71, 71]


@pytest.mark.parametrize(("limit", "stages", "refused"), [
    ("", [{"kind": "scaling_ladder", "runs": 100}] * 2, False),  # 200 runs: the default bound, not above it
    ("", [{"kind": "ablations", "runs": 10_000}] * 20, False),  # 20 priced runs: an ablation's runs are alike
    ("10", [{"kind": "scaling_ladder"}, {"kind": "ablations"}, {"kind": "mid_training"}], False),  # 5 + 1 + 1
    ("10", [{"kind": "scaling_ladder"}] * 2 + [{"kind": "long_context"}], True),  # 5 + 5 + 1 = 11
    ("10", [{"kind": "data_preparation"}, {"kind": "evaluation"}] * 10, False),  # inference stages: no runs
])
def test_the_priced_runs_bound_is_the_operators_setting(monkeypatch, limit, stages, refused):
    monkeypatch.setenv("PLANNER_PROGRAMME_MAX_RUNS", limit)
    if refused:
        with pytest.raises(ScenarioError, match="= 11 priced runs; at most 10 a programme"):
            _with(default_scenario(), programme=stages)
    else:
        plan = _with(default_scenario(), programme=stages)
        main = {key: np.asarray(value, dtype=float) for key, value in scenario_arrays([plan]).items()}
        for stage in plan.programme:  # the work unit is what the engine prices: each stage's block of runs
            assert programme.runs(stage, main, np.array([8.4e22]))[0] == programme.priced_runs(stage)


def test_one_rung_cannot_be_extrapolated():
    assert programme.extrapolation_error_factor(programme.ladder_fractions(programme.ScalingLadder(runs=1))) == \
        math.inf


def test_ablations_run_side_by_side_when_the_cluster_holds_them_and_in_rounds_when_it_does_not():
    def ablations(runs: int) -> dict:
        stage = {"kind": "ablations", "runs": runs, "compute_fraction": 0.01, "repeat_allowance": 0.0,
                 "gpu_count": 64}
        result = scenario_outputs(_with(default_scenario(), **EXACT, programme=[stage]))
        return next(row for row in result["programme"]["stages"] if row["kind"] == "ablations")

    # One run: 1 % of 8.4e22 FLOPs on 64 GPUs at 40 % of 989 TFLOP/s.
    one_run_hours = 0.01 * 8.4e22 / (H100_PEAK_FLOPS * 0.4 * 3600)
    eight, sixteen = ablations(8), ablations(16)  # 8 × 64 GPUs fill the default's 512; 16 take two rounds
    assert eight["gpu_hours"] == pytest.approx(8 * one_run_hours, rel=1e-9)
    assert eight["calendar_days"] == pytest.approx(one_run_hours / 64 / 24, rel=1e-9)
    assert sixteen["calendar_days"] == pytest.approx(2 * one_run_hours / 64 / 24, rel=1e-9)


def test_a_programme_on_one_cluster_ends_when_its_last_stage_ends():
    plan = _with(default_scenario(), **programme.PRESETS["full programme"], start_date="2027-01-04")
    result = scenario_outputs(plan)["programme"]
    rows = result["stages"]
    in_sequence = [row for row in rows if row["kind"] not in programme.BESIDE]
    assert [row["kind"] for row in in_sequence] == ["data_preparation", "scaling_ladder", "ablations", "main",
                                                    "mid_training", "long_context"]
    assert in_sequence[0]["start_day"] == 0.0
    for before, after in zip(in_sequence, in_sequence[1:], strict=False):
        assert after["start_day"] == pytest.approx(before["end_day"])
    assert result["calendar_days"] == pytest.approx(sum(row["calendar_days"] for row in in_sequence))
    assert result["calendar_days"] == pytest.approx(in_sequence[-1]["end_day"])
    main = next(row for row in rows if row["kind"] == "main")
    assert next(row for row in rows if row["kind"] == "evaluation")["start_day"] == main["start_day"]
    days = math.ceil(result["calendar_days"])
    assert result["end_date"] == f"2027-01-{4 + days:02d}"  # under four weeks from 4 January


def test_data_preparation_and_evaluations_by_hand():
    prep = {"kind": "data_preparation", "processed_multiple": 3.0, "scorer_params": 1.1e8, "scored_share": 0.5,
            "inference_mfu": 0.3}
    evaluation = {"kind": "evaluation", "every_nth_checkpoint": 4, "benchmark_tokens": 3e8, "inference_mfu": 0.2}
    result = scenario_outputs(_with(default_scenario(), **EXACT, programme=[prep, evaluation]))
    rows = {row["kind"]: row for row in result["programme"]["stages"]}
    scoring_hours = 2 * 1.1e8 * 3e12 / (H100_PEAK_FLOPS * 0.3 * 3600)  # 3 × 2T tokens read, half of them scored
    assert rows["data_preparation"]["gpu_hours"] == pytest.approx(scoring_hours, rel=1e-9)
    discarded_usd = 4e12 * 2.0 / 1e9  # the 4T tokens read beyond the 2T trained on, at $2 per billion
    assert rows["data_preparation"]["cost_usd"] == pytest.approx(scoring_hours * 2.65 + discarded_usd, rel=1e-9)
    main_run_hours = 6 * 7e9 * 2e12 / (H100_PEAK_FLOPS * 0.4 * 3600) / 512  # no stall, no rework
    evaluations = main_run_hours / (0.5 * 4)  # one checkpoint in four, every 30 minutes
    eval_hours = evaluations * 2 * 7e9 * 3e8 / (H100_PEAK_FLOPS * 0.2 * 3600)
    assert rows["evaluation"]["gpu_hours"] == pytest.approx(eval_hours, rel=1e-9)


STAGES = st.one_of(
    st.builds(dict, kind=st.just("scaling_ladder"), runs=st.integers(1, 6),
              top_compute_fraction=st.sampled_from([0.001, 0.01, 0.1])),
    st.builds(dict, kind=st.just("ablations"), runs=st.integers(1, 40),
              compute_fraction=st.sampled_from([0.001, 0.01])),
    st.builds(dict, kind=st.sampled_from(["mid_training", "long_context"]),
              token_fraction=st.sampled_from([0.01, 0.1])),
    st.builds(dict, kind=st.just("evaluation"), every_nth_checkpoint=st.integers(1, 20)),
    st.builds(dict, kind=st.just("data_preparation"), processed_multiple=st.sampled_from([1.0, 3.0, 10.0])),
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STAGES, max_size=3), STAGES)
def test_adding_a_stage_never_lowers_the_total_and_the_final_share_stays_a_share(stages, extra):
    before = scenario_outputs(_with(default_scenario(), programme=stages))
    after = scenario_outputs(_with(default_scenario(), programme=[*stages, extra]))
    assert after["cost_total_usd"] >= before["cost_total_usd"]
    assert after["programme"]["final_run_usd"] == pytest.approx(before["programme"]["final_run_usd"])
    for result in (before, after):
        assert 0 < result["programme"]["final_run_share"] <= 1
        assert result["programme"]["total_usd"] == pytest.approx(result["cost_total_usd"], rel=1e-12)


SINGLE_RUN = {"programme": [], "experiment_overhead": 0.0}


def test_a_budget_buys_a_smaller_final_run_when_the_programme_is_priced_too():
    single = optimal_for_budget(_with(default_scenario(), **SINGLE_RUN), 1e6)
    whole = optimal_for_budget(_with(default_scenario(), **programme.PRESETS["full programme"]), 1e6)
    assert whole["total_params"] < single["total_params"] and whole["tokens"] < single["tokens"]
    # Both spend the budget (to within the step a predicted MFU takes between model shapes, which the answer stays
    # below); the programme's other stages take what the final run gives up.
    for answer in (single, whole):
        assert 0.99e6 <= answer["cost_usd"] <= 1e6
    assert whole["final_run_usd"] < single["final_run_usd"]
    assert whole["final_run_usd"] == pytest.approx(whole["final_run_share"] * whole["cost_usd"])


def test_the_cheapest_programme_to_a_loss_trains_the_same_final_model_as_the_single_run():
    single = optimal_for_target_loss(_with(default_scenario(), **SINGLE_RUN), 2.1)
    whole = optimal_for_target_loss(_with(default_scenario(), **programme.PRESETS["full programme"]), 2.1)
    assert whole["total_params"] == pytest.approx(single["total_params"])  # the loss fixes the final run
    assert whole["cost_usd"] > single["cost_usd"]


def test_monte_carlo_prices_the_stages_with_every_draw():
    plan = _with(default_scenario(), **programme.PRESETS["ladder + main"])
    result = monte_carlo(plan, 200, 0)
    assert result.point["cost_total_usd"] == pytest.approx(scenario_outputs(plan)["cost_total_usd"], rel=1e-9)
    assert (result.samples["cost_total_usd"] > 0).all()


def test_a_draw_moves_the_stages_with_the_main_run():
    point = programme.Scaled(gpu_hours=100.0, other_usd=10.0, main_gpu_hours=50.0)
    priced = programme.price(point, {}, {"gpu_hours_main_run": np.array([50.0, 100.0])}, lambda arrays: {})
    hours, other = programme.totals(priced, np.zeros(2))
    assert list(hours) == [100.0, 200.0] and list(other) == [10.0, 20.0]  # the main run doubled in the second draw


def test_zero_width_ranges_draw_the_point_programme_exactly():
    plan = _with(default_scenario(), **programme.PRESETS["ladder + main"],
                 **{f"range_{name}_{end}": 1.0 for name in ("mfu", "price_reserved", "price_on_demand", "price_spot",
                                                             "node_failures", "spot_interruptions", "tokens",
                                                             "experiments", "tst_speedup")
                    for end in ("low", "high")})
    result = monte_carlo(plan, 50, 0)
    assert (result.samples["cost_total_usd"] == result.point["cost_total_usd"]).all()
