"""The MFU a plan uses follows the evidence (dashboard.core.throughput.used_mfu and evidence_grade), every headline
number carries its grade (dashboard.core.evidence), and one MFU runs through a plan: step time, tokens per second,
GPU-hours and wall-clock all follow the MFU used."""

import json
from pathlib import Path

import pytest

from dashboard.core import evidence, mfu_reference, throughput
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import default_scenario, scenario_from_json

PRESETS = Path(__file__).resolve().parents[2] / "data" / "scenarios" / "presets"
H100_PEAK = 989e12  # dense BF16 FLOP/s of an H100 / H800 SXM (NVIDIA's 989.4 TFLOP/s, as the catalogue rounds it)
LLAMA_405B_MFU = (0.38 + 0.43) / 2  # Llama 3 405B's published 38–43 % (arXiv 2407.21783 Table 4): its midpoint
DEEPSEEK_V3_MFU = 0.35  # derived from DeepSeek-V3's 2.664M H800-hours (arXiv 2412.19437 Table 1)


def _preset(name, **changes):
    scenario = scenario_from_json((PRESETS / f"{name}.json").read_text(encoding="utf-8"))
    return scenario.model_copy(update=changes)


PREDICTED = "predicted"  # the layout's own prediction is priced
CASES = {
    # name: (scenario, grade, MFU used: a number, or the prediction)
    "the default plan lies in the Hopper BF16 dense region: the prediction": (
        default_scenario(), "validated", PREDICTED),
    "a number the user enters wins": (default_scenario().model_copy(update={"mfu": 0.3}), "entered", 0.3),
    "7B on 16,384 GPUs: outside the region, no Hopper BF16 dense run within 10× (405B is 58×)": (
        default_scenario().model_copy(update={"gpu_count": 16384}), "extrapolated", PREDICTED),
    "405B on 16,384 H100: outside the region, Llama 3 405B's midpoint": (
        _preset("llama31_405b", mfu=None), "published", LLAMA_405B_MFU),
    "an entered MFU wins over the published runs": (_preset("llama31_405b", mfu=0.3), "entered", 0.3),
    "full recompute: the published MFU read as the mfu key reads it (× 8/6)": (
        _preset("llama31_405b", mfu=None, activation_recompute="full"), "published", LLAMA_405B_MFU * 8 / 6),
    "DeepSeek-V3 (FP8 MoE on H800): no MoE run validated, DeepSeek-V3's own 35 %": (
        _preset("deepseek_v3", mfu=None), "published", DEEPSEEK_V3_MFU),
    "a BF16 MoE on Hopper: no comparable run published, the prediction": (
        _preset("deepseek_v3", mfu=None, precision="bf16"), "extrapolated", PREDICTED),
    "405B on B200: no Blackwell run published, the prediction": (
        _preset("llama31_405b", mfu=None, gpu_type="b200"), "extrapolated", PREDICTED),
}


@pytest.mark.parametrize(("scenario", "grade", "mfu"), list(CASES.values()), ids=list(CASES))
def test_the_mfu_used_follows_the_evidence_in_order(scenario, grade, mfu):
    result = scenario_outputs(scenario)
    rates = result["throughput"]
    assert rates["mfu_source"] == grade
    expected = rates["mfu_as_input"] if mfu == PREDICTED else mfu
    assert result["mfu_used"] == pytest.approx(expected, rel=1e-9)
    if grade == "published":  # the prediction stays beside it as a note, and the band is the runs' span
        assert rates["mfu_published"] == pytest.approx(expected, rel=1e-9)
        assert rates["mfu_as_input"] != pytest.approx(expected, rel=0.01)
        assert rates["mfu_published_runs"]
    else:
        assert rates["mfu_published"] is None and rates["mfu_published_runs"] == []


@pytest.mark.parametrize(("given", "validated", "published", "measured", "grade"), [
    (True, True, True, True, "measured"),  # the team's measured MFU, still held in the scenario
    (True, True, True, False, "entered"),  # any other number in `mfu`
    (False, True, True, False, "validated"),  # the prediction inside a validated region wins over the published
    (False, False, True, False, "published"),
    (False, False, False, False, "extrapolated"),
])
def test_the_evidence_grade_s_order_of_precedence(given, validated, published, measured, grade):
    assert throughput.evidence_grade(given, validated, published, measured) == grade


@pytest.mark.parametrize(("name", "active_params", "tokens", "published_mfu"), [
    ("llama31_405b", 405.9e9, 15.6e12, LLAMA_405B_MFU),
    ("deepseek_v3", 37e9, 14.8e12, DEEPSEEK_V3_MFU),
])
def test_the_presets_with_the_prediction_on_cost_their_published_mfu_totals(name, active_params, tokens,
                                                                             published_mfu):
    # 6·N·D / (peak · MFU · 3600) GPU-hours, N the active parameters (neither preset counts attention or recompute).
    hand_gpu_hours = 6 * active_params * tokens / (H100_PEAK * published_mfu * 3600)
    predicted = scenario_outputs(_preset(name, mfu=None))
    assert predicted["gpu_hours_ideal"] == pytest.approx(hand_gpu_hours, rel=1e-6)
    # Within 10 % of the total at the preset's own published figure (405B: 40 %, DeepSeek-V3: 35 %).
    published = scenario_outputs(_preset(name))
    assert predicted["cost_total_usd"] == pytest.approx(published["cost_total_usd"], rel=0.10)


def test_deepseek_v3_s_gpu_hours_match_its_report():
    # 2.664M H800-hours of pre-training (arXiv 2412.19437 Table 1); 6·37e9·14.8e12 / (989e12 · 0.35 · 3600) = 2.637M.
    assert scenario_outputs(_preset("deepseek_v3", mfu=None))["gpu_hours_ideal"] == pytest.approx(2.664e6, rel=0.02)


@pytest.mark.parametrize(("generation", "precision", "moe", "params", "median", "runs"), [
    ("hopper", "bf16", False, 405e9, 0.405, ("Llama 3 405B",)),
    ("hopper", "bf16", False, 40.5e9, 0.405, ("Llama 3 405B",)),  # exactly 10× smaller still compares
    ("hopper", "bf16", False, 40e9, None, ()),  # a little more than 10×: none
    ("hopper", "fp8", True, 671e9, 0.35, ("DeepSeek-V3 (37B active)",)),
    ("hopper", "bf16", True, 671e9, None, ()),  # DeepSeek-V3 ran FP8 linears
    ("blackwell", "bf16", False, 405e9, None, ()),
    # Four A100 runs within 10× of 175B: midpoints 0.302 (MT-NLG), 0.435 (Llama 2), 0.47 (OPT), 0.49 (BLOOM).
    ("ampere", "bf16", False, 175e9, (0.435 + 0.47) / 2, ("Llama 2 70B", "OPT-175B", "BLOOM 176B", "MT-NLG 530B")),
])
def test_comparable_published_runs(generation, precision, moe, params, median, runs):
    found = mfu_reference.published_mfu(generation, precision, moe, params)
    if median is None:
        assert found is None
    else:
        assert found is not None and found.median == pytest.approx(median) and found.runs == runs


def test_the_published_band_is_the_runs_span():
    found = mfu_reference.published_mfu("ampere", "bf16", False, 175e9)
    assert found is not None and (found.low, found.high) == (0.302, 0.50)
    rates = scenario_outputs(_preset("llama31_405b", mfu=None))["throughput"]
    assert rates["mfu_band"] == pytest.approx([0.38, 0.43])


def test_one_mfu_runs_through_the_plan():
    # DeepSeek-V3 at its published 35 %: tokens/s per GPU = peak · MFU / (6 · N_active) = 989e12 · 0.35 / 2.22e11.
    result = scenario_outputs(_preset("deepseek_v3"))
    assert result["tokens_per_s_per_gpu"] == pytest.approx(989e12 * 0.35 / (6 * 37e9), rel=1e-6)
    # The steps at that step time on the busy GPUs take the GPU-hours priced.
    steps_hours = result["optimizer_steps"] * result["step_time_s"] * result["busy_gpus"] / 3600
    assert steps_hours == pytest.approx(result["gpu_hours_ideal"], rel=1e-6)
    rates = result["throughput"]  # the layout's own prediction is kept, and is not the one priced
    assert rates["step_time_s"] == pytest.approx(result["step_time_s"] * 0.35 / rates["mfu_as_input"], rel=1e-9)


def test_every_headline_number_carries_its_grade():
    plan = scenario_outputs(_preset("llama31_405b", mfu=None))["evidence"]
    assert plan["cost_total_usd"] == {"grade": "published", "inputs": {"mfu": "published", "price": "entered"}}
    assert plan["wall_clock_days"] == {"grade": "published", "inputs": {"mfu": "published"}}
    assert plan["predicted_loss"]["grade"] == "published"  # a published scaling-law fit
    default = scenario_outputs(default_scenario())["evidence"]
    assert default["gpu_hours_total"]["grade"] == "validated"
    assert default["cost_total_usd"]["inputs"]["price"] == "assumed"  # the schema's default prices
    measured = evidence.with_measured(default, {"mfu"})
    assert measured["cost_total_usd"] == {"grade": "measured", "inputs": {"mfu": "measured", "price": "assumed"}}
    assert json.loads(json.dumps(default)) == default  # plain JSON for estimate --json


def test_the_evidence_caption_names_each_grade():
    grades = scenario_outputs(_preset("llama31_405b", mfu=None))["evidence"]
    assert evidence.line(grades) == ("Evidence — GPU-hours, wall-clock: published MFU · cost: published MFU, entered "
                                     "prices · loss: published scaling-law fit")
