"""Can the plan run: memory per GPU, layouts, batch limits and data supply, against hand-worked and published cases."""

import math

import numpy as np
import pytest
from bare_plan import COMPUTE_ONLY

from dashboard.core import batch, data_supply, memory, mfu_reference
from dashboard.core.engine import scenario_outputs
from dashboard.core.feasibility import proposed_layout
from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_dict

BARE = {**COMPUTE_ONLY, "reserved_share": 1.0, "spot_share": 0.0}
GB = 1e9


def states(total, active, tp, pp, ep, gpus, zero):
    local = memory.params_per_gpu(total, active, tp, pp, ep)
    return [float(x) for x in memory.model_states_gb(local, total / gpus, zero)]


# (weights, gradients, optimizer) GB per GPU, worked by hand from 2 + 2 + 12 bytes per parameter (ZeRO §3.1).
@pytest.mark.parametrize(("total", "active", "tp", "pp", "ep", "gpus", "zero", "expected"), [
    # 70B, ZeRO-3 over 64 GPUs: 16 B · 70e9 / 64 = 17.5 GB of model states, 2.1875 + 2.1875 + 13.125.
    pytest.param(70e9, 70e9, 1, 1, 1, 64, 3, (2.1875, 2.1875, 13.125), id="70B-zero3-64"),
    # 70B, TP 8, ZeRO-1, DP 8: weights and grads 2 · 70e9 / 8 = 17.5 GB each; optimizer 12 · 70e9 / 64 = 13.125 GB.
    pytest.param(70e9, 70e9, 8, 1, 1, 64, 1, (17.5, 17.5, 13.125), id="70B-tp8-zero1-dp8"),
    # 7B with no sharding: 14 + 14 + 84 = 112 GB, more than an 80 GB GPU.
    pytest.param(7e9, 7e9, 1, 1, 1, 8, 0, (14.0, 14.0, 84.0), id="7B-no-sharding"),
    # 70B, ZeRO-2 over 64: weights whole (140 GB), gradients 2 · 70e9 / 64, optimizer 12 · 70e9 / 64.
    pytest.param(70e9, 70e9, 1, 1, 1, 64, 2, (140.0, 2.1875, 13.125), id="70B-zero2-64"),
    # 10B-A1B MoE, EP 8: a GPU holds 1e9 + 9e9 / 8 = 2.125e9 parameters: 4.25 + 4.25 + 25.5 GB.
    pytest.param(10e9, 1e9, 1, 1, 8, 64, 0, (4.25, 4.25, 25.5), id="moe-ep8"),
    # 405B at TP 8 · PP 16, ZeRO-1 over 16,384: 405e9 / 128 = 3.164e9 local; optimizer 12 · 405e9 / 16,384.
    pytest.param(405e9, 405e9, 8, 16, 1, 16384, 1, (6.328125, 6.328125, 0.296630859375), id="405B-tp8-pp16"),
])
def test_model_states_by_hand(total, active, tp, pp, ep, gpus, zero, expected):
    assert states(total, active, tp, pp, ep, gpus, zero) == pytest.approx(expected, rel=1e-12)


# GPT-3 175B (s = 2,048, h = 12,288, a = 96), micro-batch 1, TP 8 with sequence parallelism:
# s·b·h = 25,165,824. No recompute: 34 + 5·96·2,048/12,288 = 34 + 80 = 114 bytes each, / 8 = 358,612,992 bytes.
# Selective: 34 · 25,165,824 / 8 = 106,954,752. Full: the layer input, 2 · 25,165,824 / 8 = 6,291,456.
@pytest.mark.parametrize(("mode", "expected_bytes"), [
    ("none", 358_612_992), ("selective", 106_954_752), ("full", 6_291_456),
])
def test_korthikanti_gpt3_layer(mode, expected_bytes):
    index = memory.RECOMPUTE_MODES.index(mode)
    assert float(memory.layer_activation_bytes(2048, 1, 12288, 96, 8, index)) == pytest.approx(expected_bytes)


def test_first_pipeline_stage_holds_pp_micro_batches_of_its_layers():
    # GPT-3, 96 layers at PP 8: 12 layers × 8 micro-batches = 96 layer-micro-batches; selective: 96 · 106,954,752 B.
    per_layer = 106_954_752
    assert float(memory.activation_bytes(per_layer, 96, 8)) == pytest.approx(96 * per_layer)
    # Uneven stages: 126 layers at PP 16 put 8 on the first stage, holding 16 micro-batches: 128 layer-micro-batches.
    assert float(memory.activation_bytes(1.0, 126, 16)) == 128


PUBLISHED = {
    # arXiv 2407.21783 Table 4: 16,384 H100-80GB, TP 8 / PP 16 / DP 128, sequence 8,192, one sequence per micro-batch.
    "llama3-405b": dict(total_params=405e9, n_layers=126, d_model=16384, n_heads=128, seq_len=8192, gpu_type="H100",
                        gpu_count=16384, tensor_parallel=8, pipeline_parallel=16, zero_stage=1),
    # BLOOM: 384 A100-80GB at TP 4 / PP 12 / DP 8 with ZeRO-1, micro-batch 2, 70 layers of 14,336, 112 heads.
    "bloom-176b": dict(total_params=176e9, n_layers=70, d_model=14336, n_heads=112, seq_len=2048, gpu_type="A100",
                       gpu_count=384, tensor_parallel=4, pipeline_parallel=12, zero_stage=1, micro_batch_size=2),
    # Megatron-Turing NLG: 2,240 A100-80GB at TP 8 / PP 35 / DP 8, 105 layers of 20,480, 128 heads (no ZeRO here).
    "mt-nlg-530b": dict(total_params=530e9, n_layers=105, d_model=20480, n_heads=128, seq_len=2048, gpu_type="A100",
                        gpu_count=2240, tensor_parallel=8, pipeline_parallel=35, zero_stage=0),
}


@pytest.mark.parametrize("run", sorted(PUBLISHED))
def test_published_layouts_fit_with_full_recompute(run):
    result = scenario_outputs(Scenario(**PUBLISHED[run], activation_recompute="full"))
    assert result["layout_valid"] and result["memory"]["fits"] and result["feasible"]
    assert result["feasibility_problems"] == []
    layout = result["layout"]
    spec = PUBLISHED[run]
    assert layout["data_parallel"] == spec["gpu_count"] // (spec["tensor_parallel"] * spec["pipeline_parallel"])


def test_llama3_memory_by_hand():
    # 6.33 + 6.33 + 0.30 GB of states; activations 2·8,192·16,384/8 B × 8 layers × 16 micro-batches = 4.29 GB.
    mem = scenario_outputs(Scenario(**PUBLISHED["llama3-405b"], activation_recompute="full"))["memory"]
    assert mem["activations_gb"] == pytest.approx(2 * 8192 * 16384 / 8 * 8 * 16 / GB)
    assert mem["total_gb"] == pytest.approx(6.328125 * 2 + 0.296630859375 + 4.294967296)
    assert mem["headroom_gb"] == pytest.approx(80 - mem["total_gb"])


@pytest.mark.parametrize("spec", [
    # 70B on 8 H100 with no sharding: 16 B · 70e9 = 1,120 GB on one GPU.
    pytest.param(dict(total_params=70e9, gpu_type="H100", gpu_count=8, tensor_parallel=1, pipeline_parallel=1,
                      zero_stage=0), id="70B-8xH100-no-sharding"),
    # 175B on 8 A100-80GB even with ZeRO-3: 16 B · 175e9 / 8 = 350 GB of states per GPU.
    pytest.param(dict(total_params=175e9, gpu_type="A100", gpu_count=8, zero_stage=3, activation_recompute="full"),
                 id="175B-8xA100-zero3"),
])
def test_plans_that_cannot_run(spec):
    result = scenario_outputs(Scenario(**spec))
    assert not result["feasible"] and not result["memory"]["fits"]
    assert len(result["feasibility_problems"]) == 1
    assert result["feasibility_problems"][0].startswith("does not fit: ")


def test_no_sharding_message_names_the_gb_and_a_fix():
    # 7B, no sharding, on 8 H100: 112 GB of states; ZeRO-3 leaves 14 GB; TP 8 leaves 14 GB of states.
    result = scenario_outputs(Scenario(total_params=7e9, gpu_count=8, tensor_parallel=1, pipeline_parallel=1,
                                       zero_stage=0, activation_recompute="full"))
    sentence = result["feasibility_problems"][0]
    assert sentence.startswith(f"does not fit: {result['memory']['total_gb']:,.0f} GB of 80 GB per GPU")
    assert "use ZeRO-3 (" in sentence and "TP 8 (" in sentence


def test_175b_on_8_gpus_says_how_many_are_needed():
    # 2,800 GB of states at 80 GB each: 35 GPUs, rounded up to whole nodes of 8: 40.
    sentence = scenario_outputs(Scenario(total_params=175e9, gpu_type="A100", gpu_count=8))["feasibility_problems"][0]
    assert "at least 40 GPUs" in sentence


def test_proposal_is_tp_within_a_node_first():
    # 70B on 64 H100 with full recompute: ZeRO-1 at TP 8 holds 17.5 + 17.5 + 13.1 GB and fits, smaller TP does not
    # (TP 4: 35 + 35 + 13.1 = 83 GB).
    scenario = Scenario(total_params=70e9, n_layers=80, d_model=8192, gpu_count=64, activation_recompute="full")
    result = scenario_outputs(scenario)
    assert result["layout"] == {"data_parallel": 8, "tensor_parallel": 8, "pipeline_parallel": 1,
                                "expert_parallel": 1, "zero_stage": 1}
    assert result["layout_proposed"]
    assert any(note.startswith("layout proposed by the planner") for note in result["feasibility_notes"])
    assert proposed_layout(scenario)["tensor_parallel"] == 8


def test_proposal_adds_pipeline_stages_after_the_node():
    # 405B on 16,384 H100 at ZeRO-1: TP 8 alone holds 405e9 · 4 B / 8 = 202 GB; PP 4 brings it to 50.6 + 0.3 GB.
    result = scenario_outputs(Scenario(total_params=405e9, n_layers=126, d_model=16384, seq_len=8192, gpu_count=16384,
                               activation_recompute="full"))
    assert (result["layout"]["tensor_parallel"], result["layout"]["pipeline_parallel"]) == (8, 4)
    assert result["layout"]["zero_stage"] == 1 and result["feasible"]


@pytest.mark.parametrize(("changes", "message"), [
    ({"tensor_parallel": 16}, "tensor_parallel = 16 exceeds gpus_per_node = 8"),
    ({"tensor_parallel": 3}, "tensor_parallel × pipeline_parallel = 3 does not divide gpu_count = 512"),
    ({"tensor_parallel": 8, "pipeline_parallel": 2, "expert_parallel": 64},
     "expert_parallel = 64 does not divide the data-parallel size 32"),
    ({"activation_recompute": "sometimes"}, "activation_recompute = 'sometimes'"),
    ({"zero_stage": 4}, "zero_stage = 4 is out of range"),
])
def test_layouts_that_are_refused(changes, message):
    with pytest.raises(ScenarioError, match=message.replace("(", r"\(")):
        scenario_from_dict({**Scenario().to_json_dict(), **changes})


@pytest.mark.parametrize(("value", "mode"), [(True, "full"), (False, "none"), ("selective", "selective")])
def test_recompute_reads_yesterdays_booleans(value, mode):
    assert Scenario(activation_recompute=value).activation_recompute == mode


ONE_B = dict(BARE, total_params=1e9, tokens=20e9, seq_len=2048, global_batch_tokens=1_048_576, tensor_parallel=1,
             pipeline_parallel=1, micro_batch_size=1, budget_usd=1e9)


def test_1b_batch_keeps_at_most_512_gpus_busy():
    # 1,048,576 tokens / 2,048 = 512 sequences, one per GPU at TP = PP = 1 and micro-batch 1.
    on_512 = scenario_outputs(Scenario(**ONE_B, gpu_count=512))
    on_1024 = scenario_outputs(Scenario(**ONE_B, gpu_count=1024))
    assert on_512["global_batch_sequences"] == 512 and on_512["max_useful_gpus"] == 512
    assert on_1024["max_useful_gpus"] == 512 and on_1024["busy_gpus"] == 512
    assert on_1024["wall_clock_days"] == pytest.approx(on_512["wall_clock_days"], rel=1e-12)  # no faster
    assert on_1024["gpu_hours_total"] == pytest.approx(2 * on_512["gpu_hours_total"])  # idle GPUs are billed
    assert on_1024["cost_total_usd"] > on_512["cost_total_usd"]
    assert on_1024["feasibility_warnings"][0].startswith("512 of 1,024 GPUs idle")
    # 20e9 tokens / 1,048,576 per step = 19,073.5 optimizer steps.
    assert on_512["optimizer_steps"] == pytest.approx(20e9 / 1_048_576)


def test_pipeline_bubble_by_hand():
    # PP 16 with 16 micro-batches: 15 / 31 of each step idle.
    assert float(batch.pipeline_bubble_fraction(16, 16)) == pytest.approx(15 / 31)


def test_default_batch_is_deepseek_law():
    # C = 6 · 7e9 · 2e12 = 8.4e22 FLOPs: 0.292 · C^0.3271 tokens.
    result = scenario_outputs(Scenario())
    assert result["global_batch_tokens"] == pytest.approx(0.292 * 8.4e22 ** 0.3271)
    assert any("B_opt = 0.292·C^0.3271" in note for note in result["feasibility_notes"])


def test_4t_from_1t_unique_is_about_3_73t_effective():
    # R = 3 repeats: 1T + 1T · 15.4 · (1 − e^(−3/15.4)) = 3.7259T.
    assert float(data_supply.effective_tokens(4e12, 1e12)) == pytest.approx(3.7259e12, rel=1e-4)
    result = scenario_outputs(Scenario(tokens=4e12, unique_tokens=1e12))
    assert result["epochs"] == pytest.approx(4.0)
    assert result["effective_tokens"] == pytest.approx(3.7259e12, rel=1e-4)
    fresh = scenario_outputs(Scenario(tokens=result["effective_tokens"]))
    assert result["predicted_loss"] == pytest.approx(fresh["predicted_loss"], rel=1e-12)
    assert result["feasibility_warnings"][0].startswith("data repeats: 4.0 epochs")


def test_unlimited_data_changes_nothing():
    result = scenario_outputs(Scenario())
    assert result["epochs"] is None and result["effective_tokens"] == 2e12
    assert result["tst"]["scarcity_factor"] == 1.0


def test_tst_saving_with_scarce_data_by_hand():
    # Baseline 1.05T from 0.5T unique: R = 1.1, D′ = 0.5T + 7.7T · (1 − e^(−1.1/15.4)) = 1.03065T. TST must reach
    # 1.90476 · 1.03065T = 1.96315T effective: R = −15.4 · ln(1 − 1.46315/7.7) = 3.2449, x = 0.5T · 4.2449 = 2.12246T,
    # 1.0612 × its planned 2T.
    factor = float(data_supply.tst_scarcity_factor(1.05e12, 2 / 1.05, 0.5e12))
    assert factor == pytest.approx(1.0612, rel=1e-3)
    result = scenario_outputs(Scenario(method="tst", tokens=1.05e12, unique_tokens=0.5e12))
    tst = result["tst"]
    assert tst["net_savings_with_scarcity_usd"] == pytest.approx(
        tst["net_savings_usd"] - (factor - 1) * tst["tst_cost_usd"])
    # Beyond U · (1 + R*) = 16.4 U of effective data, TST can never match: no saving at any price.
    assert math.isinf(float(data_supply.tst_scarcity_factor(1.05e12, 2 / 1.05, 0.01e12)))


@pytest.mark.parametrize(("mfu", "gpu", "params", "warned"), [
    (0.40, "hopper", 405e9, False),  # Llama 3 405B: 38-43 %
    (0.60, "hopper", 405e9, True),   # above every Hopper run
    (0.20, "hopper", 405e9, True),   # below every Hopper run
    (0.45, "blackwell", 10e9, False),  # no Blackwell runs: all runs, 21.3-55.2 %
])
def test_mfu_against_published_runs(mfu, gpu, params, warned):
    assert bool(mfu_reference.mfu_warnings(mfu, gpu, params, 0.0)) == warned


def test_mfu_above_the_bubble_ceiling_is_warned():
    # PP 16 with 16 micro-batches idles 15/31 = 48 %: at most 52 % MFU.
    warnings = mfu_reference.mfu_warnings(0.55, "unknown", 175e9, 15 / 31)
    assert any("above the 52 % the pipeline bubble leaves" in w for w in warnings)


def test_published_mfu_table_is_sourced():
    runs = mfu_reference.published_runs()
    assert {"Llama 3 405B", "MegaScale 175B", "PaLM 540B", "BLOOM 176B", "OPT-175B", "DeepSeek-V3 (37B active)"} <= {
        run.run for run in runs}
    assert all(run.source and run.status in {"P", "S", "D"} and 0 < run.mfu_low <= run.mfu_high < 1 for run in runs)


def test_vectorised_and_single_agree():
    from dashboard.core.engine import output_arrays, scenario_arrays

    scenarios = [Scenario(**PUBLISHED[name], activation_recompute="full") for name in sorted(PUBLISHED)]
    scenarios += [Scenario(total_params=175e9, gpu_type="A100", gpu_count=8), Scenario(**ONE_B, gpu_count=1024)]
    batch_result = output_arrays(scenario_arrays(scenarios))
    for i, scenario in enumerate(scenarios):
        single = scenario_outputs(scenario)
        assert single["memory"]["total_gb"] == pytest.approx(batch_result["memory"]["total_gb"][i], rel=1e-12)
        assert single["feasible"] == bool(batch_result["feasible"][i])
        assert single["cost_total_usd"] == pytest.approx(float(np.asarray(batch_result["cost_total_usd"])[i]))
