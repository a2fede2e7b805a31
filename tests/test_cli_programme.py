"""`python -m dashboard estimate` with a programme of stages: the JSON carries it (valid JSON, an infinite ladder
factor as null) and the readable table has the totals and one line per stage.

The plan is the default 7B on 2T tokens on 512 H100 at an entered 40 % MFU with nothing but compute priced (no
failures, no checkpoint stall, no storage, data or side costs; every GPU-hour reserved at $2.65), so the main run's
GPU-hours are 6·N·D / (peak · MFU · 3600) and every expected number below is worked out from that formula.
"""

import json
import math

import pytest

from dashboard.cli import main
from dashboard.core import programme
from dashboard.core.scenario import default_scenario

H100_PEAK_FLOPS = 989e12  # NVIDIA H100 SXM, dense BF16
PRICE = 2.65  # $ per reserved GPU-hour
COMPUTE_ONLY = {
    "mfu": 0.4, "node_failures_per_1000_node_days": 0.0, "spot_interruptions_per_1000_node_days": 0.0,
    "checkpoint_async": True, "reserved_share": 1.0, "spot_share": 0.0, "experiment_overhead": 0.0,
    "eval_overhead": 0.0, "debug_overhead": 0.0, "data_cost_per_billion_tokens": 0.0,
    "storage_hot_per_gb_month": 0.0, "storage_cold_per_gb_month": 0.0,
}
EVALUATION = {"kind": "evaluation", "every_nth_checkpoint": 4, "benchmark_tokens": 3e8, "inference_mfu": 0.2}
MAIN_HOURS = 6 * 7e9 * 2e12 / (H100_PEAK_FLOPS * 0.4 * 3600)  # 58,982 GPU-hours: 115.2 h on 512 GPUs
# One checkpoint in four, every 30 minutes, over the main run's 115.2 hours: 57.6 evaluations of 2·N FLOPs per token
# over 3e8 tokens at 20 % MFU, 5.90 GPU-hours each.
EVAL_HOURS = MAIN_HOURS / 512 / (0.5 * 4) * 2 * 7e9 * 3e8 / (H100_PEAK_FLOPS * 0.2 * 3600)


def _write(tmp_path, **changes) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(default_scenario().to_json_dict() | COMPUTE_ONLY | changes), encoding="utf-8")
    return str(path)


def _json(capsys, *args) -> dict:
    assert main(["estimate", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))


def test_json_carries_the_stages_priced_by_hand(tmp_path, capsys):
    result = _json(capsys, _write(tmp_path, programme=[EVALUATION], start_date="2027-01-04"))
    plan = result["programme"]
    stages = {stage["kind"]: stage for stage in plan["stages"]}
    assert list(stages) == ["main", "evaluation"]  # calendar order; nothing else costs anything
    assert stages["main"]["gpu_hours"] == pytest.approx(MAIN_HOURS, rel=1e-9)
    assert stages["evaluation"]["gpu_hours"] == pytest.approx(EVAL_HOURS, rel=1e-9)
    assert stages["evaluation"]["cost_usd"] == pytest.approx(EVAL_HOURS * PRICE, rel=1e-9)
    total = (MAIN_HOURS + EVAL_HOURS) * PRICE
    assert plan["total_usd"] == pytest.approx(total, rel=1e-9) == result["cost_total_usd"]
    assert plan["final_run_share"] == pytest.approx(MAIN_HOURS / (MAIN_HOURS + EVAL_HOURS), rel=1e-9)
    # Evaluations run beside the main run: the calendar is the main run's 4.80 days, ending ⌈4.80⌉ = 5 days on.
    assert plan["calendar_days"] == pytest.approx(MAIN_HOURS / 512 / 24, rel=1e-9)
    assert (plan["start_date"], plan["end_date"]) == ("2027-01-04", "2027-01-09")


def test_json_of_the_full_programme_sums_its_stages(tmp_path, capsys):
    preset = programme.PRESETS["full programme"]
    plan = _json(capsys, _write(tmp_path, **preset))["programme"]
    assert [stage["kind"] for stage in plan["stages"]] == [
        "data_preparation", "scaling_ladder", "ablations", "main", "mid_training", "long_context", "evaluation"]
    assert plan["total_usd"] == pytest.approx(sum(stage["cost_usd"] for stage in plan["stages"]), rel=1e-12)
    assert plan["gpu_hours"] == pytest.approx(sum(stage["gpu_hours"] for stage in plan["stages"]), rel=1e-12)
    # The long-context stage reads 1 % of the main run's tokens; mid-training 5 %. Same model, so ≥ those shares of
    # the main run's GPU-hours (longer sequences cost more per token, never less).
    stages = {stage["kind"]: stage for stage in plan["stages"]}
    assert stages["mid_training"]["gpu_hours"] == pytest.approx(0.05 * MAIN_HOURS, rel=1e-9)
    assert stages["long_context"]["gpu_hours"] >= 0.01 * MAIN_HOURS
    assert plan["start_date"] is None and plan["end_date"] is None


def test_a_one_rung_ladder_writes_its_infinite_factor_as_null(tmp_path, capsys):
    ladder = {"kind": "scaling_ladder", "runs": 1}
    stages = _json(capsys, _write(tmp_path, programme=[ladder]))["programme"]["stages"]
    rung = next(stage for stage in stages if stage["kind"] == "scaling_ladder")
    assert rung["extrapolation_error_factor"] is None  # no line through one size: infinite, written as null
    assert rung["extrapolation_decades"] == pytest.approx(2.0)  # its one rung at 10⁻² of the main run


def test_the_table_has_the_programme_and_one_line_per_stage(tmp_path, capsys):
    assert main(["estimate", _write(tmp_path, programme=[EVALUATION], start_date="2027-01-04")]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("programme:")))
    block = [" ".join(line.split()) for line in lines[start:start + 11]]
    # Three significant figures: 58,982 GPU-hours × $2.65 = $156k over 115.2 h / 24 = 4.8 days; 339.7 evaluation
    # GPU-hours = $900 over 339.7 / 512 / 24 = 0.0276 days; total $157k, final run 99.4 % of it.
    assert math.isclose(MAIN_HOURS * PRICE, 156_303, rel_tol=1e-4)
    assert math.isclose(EVAL_HOURS, 339.7, rel_tol=1e-3)
    assert block == [
        "programme: Programme",
        "stages: Stages of the programme",
        "1 $156k Main pre-training: 59k GPU-hours, 4.8 days",
        "2 $900 Evaluations: 340 GPU-hours, 0.0276 days",
        "total_usd $157k Programme total",
        "gpu_hours 59.3k Programme GPU-hours",
        "final_run_usd $156k Final run",
        "final_run_share 99.4 % Final run's share of the programme",
        "calendar_days 4.8 days Programme calendar",
        "start_date 2027-01-04 Programme start",
        "end_date 2027-01-09 Programme end",
    ]


def test_the_table_says_unset_for_a_programme_without_a_start_date(capsys):
    assert main(["estimate"]) == 0
    rows = {line.split()[0]: line.split()[1] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert rows["start_date"] == rows["end_date"] == "unset"  # the catalogue's text for a date not given
