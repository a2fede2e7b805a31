"""The comparison table's programme rows: the totals, the final run's share, the calendar and one cost row per stage
kind, with their deltas, worked out by hand.

The compute-only plans (tests/core/bare_plan.py) cost GPU-hours × $2 on 100 GPUs, the main run's GPU-hours
H = 6·N·D / (989e12 · 0.4 · 3600) = 421.3 for 1B parameters on 100B tokens. An ablation run at 1 % of the main
run's compute takes 0.01·H GPU-hours (the MFU is entered, so every run has it); evaluations run beside the main run.
"""

import csv
import io
import json

import pytest
from bare_plan import COMPUTE_ONLY

from dashboard.core import compare, programme
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.report.cells import format_delta, format_output

PLAN = dict(COMPUTE_ONLY, total_params=1e9, tokens=1e11, mfu=0.4, reserved_share=1.0, spot_share=0.0,
            price_reserved_per_gpu_hour=2.0, gpu_count=100, budget_usd=1e6)
H = 6 * 1e9 * 1e11 / (989e12 * 0.4 * 3600)  # 421.3 GPU-hours, 4.213 h on 100 GPUs
PRICE = 2.0


def ablations(runs: int) -> dict:
    """`runs` runs of 64 GPUs at 1 % of the main run's compute, none repeated: the main run's 100 GPUs hold one at a
    time, so the stage's calendar is its GPU-hours over those 100 GPUs."""
    return {"kind": "ablations", "runs": runs, "compute_fraction": 0.01, "repeat_allowance": 0.0, "gpu_count": 64}


# One checkpoint in four, every 30 minutes, over the main run's H / 100 hours; each evaluation reads 3e8 tokens at
# 2·N FLOPs per token at 20 % MFU.
EVALUATION = {"kind": "evaluation", "every_nth_checkpoint": 4, "benchmark_tokens": 3e8, "inference_mfu": 0.2}
EVAL_HOURS = H / 100 / (0.5 * 4) * 2 * 1e9 * 3e8 / (989e12 * 0.2 * 3600)


def plan(name: str, stages: list[dict]) -> Scenario:
    return Scenario.model_validate({**PLAN, "name": name, "programme": stages})


def table_for(scenarios):
    return compare.comparison_table(scenarios, [scenario_outputs(s) for s in scenarios])


def row(table, key):
    rows = table[table["key"] == key]
    assert len(rows) == 1, key
    return rows.iloc[0]


def test_programme_rows_are_the_stages_summed_by_hand():
    options = [plan("A", []), plan("B", [ablations(8), EVALUATION]), plan("C", [ablations(8), ablations(4)])]
    table = table_for(options)
    hours = {"A": H, "B": H + 0.08 * H + EVAL_HOURS, "C": H + 0.12 * H}
    total = row(table, "programme.total_usd")
    for name, gpu_hours in hours.items():
        assert total[name] == pytest.approx(gpu_hours * PRICE, rel=1e-9)
        assert row(table, "programme.gpu_hours")[name] == pytest.approx(gpu_hours, rel=1e-9)
        assert row(table, "programme.final_run_share")[name] == pytest.approx(H / gpu_hours, rel=1e-9)
    assert total["Δ B"] == pytest.approx((0.08 * H + EVAL_HOURS) * PRICE, rel=1e-9)
    # Calendar: the ablations before the main run on its 100 GPUs (8 × 0.01·H / 100 h); evaluations run beside it.
    days = row(table, "programme.calendar_days")
    assert days["A"] == pytest.approx(H / 100 / 24, rel=1e-9)
    assert days["B"] == pytest.approx(1.08 * H / 100 / 24, rel=1e-9)
    assert days["Δ C"] == pytest.approx(0.12 * H / 100 / 24, rel=1e-9)

    # One cost row per kind present in any option, in calendar order; C's two ablation stages are summed, A has none.
    stage_rows = table[table["key"].str.startswith(compare.STAGE_COST_PREFIX)]
    assert list(stage_rows["item"]) == ["Stage cost: Ablations", "Stage cost: Main pre-training",
                                        "Stage cost: Evaluations"]
    ablation = row(table, "programme.stage_cost.ablations")
    assert (ablation["A"], ablation["B"], ablation["C"]) == (0.0, pytest.approx(0.08 * H * PRICE, rel=1e-9),
                                                            pytest.approx(0.12 * H * PRICE, rel=1e-9))
    assert row(table, "programme.stage_cost.main")["Δ B"] == 0.0  # the same final run in every option
    evaluation = row(table, "programme.stage_cost.evaluation")
    assert (evaluation["B"], evaluation["C"]) == (pytest.approx(EVAL_HOURS * PRICE, rel=1e-9), 0.0)
    for name in hours:  # the stage rows add up to the programme's total
        assert stage_rows[name].sum() == pytest.approx(total[name], rel=1e-12)


def test_programme_rows_read_in_the_catalogue_s_units():
    table = table_for([plan("A", []), plan("B", [ablations(8)])])
    # 8 runs × 0.01 × 421.3 GPU-hours × $2 = $67.4; share 1 / 1.08 = 92.6 %, 7.4 points below A's 100 %.
    ablation = row(table, "programme.stage_cost.ablations")
    assert format_output(ablation["key"], ablation["B"]) == "$67.4"
    assert format_delta(compare.OUTPUT_SECTION, ablation["key"], ablation["B"], ablation["A"]) == "+$67.4"
    share = row(table, "programme.final_run_share")
    assert share["item"] == "Final run's share of the programme"
    assert format_output(share["key"], share["B"]) == "92.6 %"
    assert format_delta(compare.OUTPUT_SECTION, share["key"], share["B"], share["A"]) == "-7.41 pp"


def test_the_csv_writes_a_programme_as_its_stages_json():
    options = [plan("A", []), plan("B", [ablations(8), EVALUATION])]
    text = compare.to_csv_bytes(table_for(options)).decode("utf-8")
    cells = next(line for line in csv.reader(io.StringIO(text)) if line[2] == "programme")
    assert json.loads(cells[3]) == []
    stages = [programme.STAGE_TYPES[item["kind"]].model_validate(item) for item in json.loads(cells[4])]
    assert tuple(stages) == options[1].programme
