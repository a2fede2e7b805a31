"""Can the plan run: memory per GPU, layouts, batch limits and data supply, against hand-worked and published cases."""

import math

import numpy as np
import pytest
from bare_plan import COMPUTE_ONLY

from dashboard import format as fmt
from dashboard.core import batch, data_supply, engine, memory, memory_fixes, mfu_reference, shape
from dashboard.core.engine import scenario_outputs
from dashboard.core.memory_fixes import proposed_layout
from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_dict
from dashboard.validation.memory_validation import LLAMA3, MIXTRAL  # the published shapes, typed once

BARE = {**COMPUTE_ONLY, "reserved_share": 1.0, "spot_share": 0.0}
GIB = 2.0**30  # the planner's GB: GPU memory is sold in GiB ("80 GB" = 80 · 2³⁰ bytes)


def states(total, expert, layers, tp, pp, ep, gpus, zero):
    local = memory.params_per_gpu(total, expert, 0.0, layers, tp, pp, ep)
    sharded = memory.sharded_params(memory.params_per_gpu(total, expert, 0.0, layers, tp, pp, 1), tp, pp, gpus)
    return [float(x) for x in memory.model_states_gb(local, sharded, zero)]


# (weights, gradients, optimizer) GB per GPU, worked by hand from 2 + 4 + 12 bytes per parameter (bf16 weights, fp32
# main gradients as Megatron keeps them, fp32 master weights and Adam moments), no embedding here.
@pytest.mark.parametrize(("total", "expert", "layers", "tp", "pp", "ep", "gpus", "zero", "expected"), [
    # 70B, ZeRO-3 over 64 GPUs: 70e9 / 64 parameters each, 18 bytes of them.
    pytest.param(70e9, 0, 80, 1, 1, 1, 64, 3, (2 * 70e9 / 64 / GIB, 4 * 70e9 / 64 / GIB, 12 * 70e9 / 64 / GIB),
                 id="70B-zero3-64"),
    # 70B, TP 8, ZeRO-1, DP 8: weights and gradients of 70e9 / 8 parameters; optimizer 12 · 70e9 / 64.
    pytest.param(70e9, 0, 80, 8, 1, 1, 64, 1, (2 * 70e9 / 8 / GIB, 4 * 70e9 / 8 / GIB, 12 * 70e9 / 64 / GIB),
                 id="70B-tp8-zero1-dp8"),
    # 7B with no sharding: 14e9 + 28e9 + 84e9 bytes (117 GB of 2³⁰ bytes), more than an 80 GB GPU.
    pytest.param(7e9, 0, 32, 1, 1, 1, 8, 0, (14e9 / GIB, 28e9 / GIB, 84e9 / GIB), id="7B-no-sharding"),
    # 70B, ZeRO-2 over 64: weights whole (140e9 bytes), gradients 4 · 70e9 / 64, optimizer 12 · 70e9 / 64.
    pytest.param(70e9, 0, 80, 1, 1, 1, 64, 2, (140e9 / GIB, 4 * 70e9 / 64 / GIB, 12 * 70e9 / 64 / GIB),
                 id="70B-zero2-64"),
    # 10B-A1B MoE without the MoE keys: experts = total − active = 9e9, EP 8: 1e9 + 9e9 / 8 = 2.125e9 held.
    pytest.param(10e9, 9e9, 16, 1, 1, 8, 64, 0, (4.25e9 / GIB, 8.5e9 / GIB, 25.5e9 / GIB), id="moe-ep8"),
    # Mixtral 8x7B (46.7B, 12.88B active, top-2 of 8): experts 8/6 · 33.82e9 = 45.09e9, dense 1.61e9; EP 8 holds
    # 1.61e9 + 45.09e9 / 8 = 7.25e9; ZeRO-3 over 8 GPUs shards each expert over its one copy: 46.7e9 / 8.
    pytest.param(46.7e9, 8 / 6 * (46.7e9 - 12.88e9), 32, 1, 1, 8, 8, 3,
                 (2 * 46.7e9 / 8 / GIB, 4 * 46.7e9 / 8 / GIB, 12 * 46.7e9 / 8 / GIB), id="mixtral-ep8-zero3"),
    # 405B at TP 8 · PP 16 (126 layers: 8 on a middle stage), ZeRO-1 over 16,384: 8 · 405e9 / 126 / 8 local; the
    # optimizer over DP = 128 copies of the stage.
    pytest.param(405e9, 0, 126, 8, 16, 1, 16384, 1,
                 (2 * 405e9 / 126 / GIB, 4 * 405e9 / 126 / GIB, 12 * 405e9 / 126 / 128 / GIB), id="405B-tp8-pp16"),
])
def test_model_states_by_hand(total, expert, layers, tp, pp, ep, gpus, zero, expected):
    assert states(total, expert, layers, tp, pp, ep, gpus, zero) == pytest.approx(expected, rel=1e-12)


def test_the_moe_split_follows_the_expert_keys():
    # Top-2 of 8 experts: a token leaves 6 of 8 unused, so the experts are 8/6 of the unused parameters.
    assert float(shape.expert_params(46.7e9, 12.88e9, 8, 2)) == pytest.approx(8 / 6 * 33.82e9)
    assert float(shape.expert_params(10e9, 1e9, math.nan, math.nan)) == 9e9  # without the keys: total − active
    # Mixtral's shape gives its published 12.9B active: 46.7e9 − 6 · 32 layers · 3 · 4,096 · 14,336.
    mixtral = Scenario(**MIXTRAL)
    assert mixtral.active == pytest.approx(46.7e9 - 6 * 32 * 3 * 4096 * 14336)
    assert mixtral.active == pytest.approx(12.9e9, rel=0.01)


def test_active_params_that_disagree_with_the_experts_are_refused():
    with pytest.raises(ScenarioError, match=r"active_params = 2e\+10 disagrees with the 1.29e\+10 active"):
        scenario_from_dict({**Scenario().to_json_dict(), **MIXTRAL, "active_params": 20e9})
    assert Scenario(**MIXTRAL, active_params=12.9e9).active == 12.9e9  # within 5 %


# GPT-3 175B (s = 2,048, h = 12,288, a = 96, plain 4h FFN), micro-batch 1, TP 8 with sequence parallelism:
# s·b·h = 25,165,824. Eager, no recompute: 34 + 5·96·2,048/12,288 = 114 bytes each, / 8 = 358,612,992 bytes.
# Selective: 34 · 25,165,824 / 8 = 106,954,752. Full: the layer input, 2 · 25,165,824 / 8 = 6,291,456. Flash, no
# dropout: 8 + 4 + 4 + 16 = 32 bytes each, 100,663,296.
@pytest.mark.parametrize(("mode", "attention", "expected_bytes"), [
    ("none", "eager", 358_612_992), ("selective", "eager", 106_954_752), ("full", "eager", 6_291_456),
    ("none", "flash", 100_663_296),
])
def test_korthikanti_gpt3_layer(mode, attention, expected_bytes):
    index = memory.RECOMPUTE_MODES.index(mode)
    got = memory.layer_activation_bytes(2048, 1, 12288, 96, 96, 49152, 0, 1, 8, 1, index,
                                        memory.ATTENTION_MODES.index(attention))
    assert float(got) == pytest.approx(expected_bytes)


def test_llama3_layer_with_grouped_query_attention_and_swiglu():
    # 16,384 wide, 128 heads / 8 KV, gated FFN 53,248, flash, TP 8, s = 8,192: per token 8h + 4h + 4h · 8/128 + 6 ·
    # 53,248 = 520,192 bytes, × 8,192 / 8 = 532,676,608 per layer.
    got = memory.layer_activation_bytes(8192, 1, 16384, 128, 8, 53248, 1, 1, 8, 1, 0, 0)
    assert float(got) == pytest.approx(532_676_608)
    # Context parallel 16 splits the sequence: a sixteenth.
    assert float(memory.layer_activation_bytes(8192, 1, 16384, 128, 8, 53248, 1, 1, 8, 16, 0, 0)) == pytest.approx(
        532_676_608 / 16)


def test_the_busiest_pipeline_stage_by_hand():
    # GPT-3, 96 layers at PP 8: 12 layers × 8 micro-batches = 96 layer-micro-batches.
    assert float(memory.layers_in_flight(96, 8, 1, math.inf)) == 96
    # 126 layers over 16 stages: 7 on each end stage, 8 in the middle (Llama 3); the first stage keeps 16 micro-batches
    # of 7 layers (112), the second 15 of 8 (120).
    assert [float(x) for x in memory.stage_layers(126, 16)] == [7.0, 8.0]
    assert float(memory.layers_in_flight(126, 16, 1, math.inf)) == 120
    # Interleaved, v = 3 at PP 8 (Korthikanti §4.2.3): 2·7 + 2·8 + 1 = 31 chunks of 4 layers = 96 · (1 + 7/24).
    assert float(memory.layers_in_flight(96, 8, 3, math.inf)) == 124
    # With only 16 micro-batches of 2 chunks a step, all 32 chunks of 4 layers (the warm-up would hold 47).
    assert float(memory.layers_in_flight(126, 16, 2, 16)) == 128
    # Fewer micro-batches than stages: only those are in flight.
    assert float(memory.layers_in_flight(96, 8, 1, 2)) == 24


def test_the_interleaved_bubble_is_divided_by_the_virtual_stages():
    assert float(batch.pipeline_bubble_fraction(16, 16, 2)) == pytest.approx(15 / 47)


PUBLISHED = {
    # arXiv 2407.21783 Table 3-4, §3.3.2: TP 8 / PP 16, 8K sequences, no activation checkpointing, FSDP (ZeRO-2-like).
    "llama3-405b-8192": LLAMA3 | {"gpu_count": 8192},
    "llama3-405b-16384": LLAMA3 | {"gpu_count": 16384, "virtual_pipeline_stages": 2},
    # BLOOM: 384 A100-80GB at TP 4 / PP 12 / DP 8 with ZeRO-1, micro-batch 2, 70 layers of 14,336, 112 heads,
    # vocabulary 250,880 (bigscience tr11-176B-ml README); read here with selective recompute and eager attention.
    "bloom-176b": dict(total_params=176.2e9, n_layers=70, d_model=14336, n_heads=112, ffn_type="plain",
                       vocab_size=250880, seq_len=2048, gpu_type="A100", gpu_count=384, tensor_parallel=4,
                       pipeline_parallel=12, zero_stage=1, micro_batch_size=2, attention="eager",
                       activation_recompute="selective", global_batch_tokens=4194304),
    # Mixtral 8x7B on one node of 8 H200 with expert parallel 8 (arXiv 2401.04088 for the shape).
    "mixtral-8x7b": MIXTRAL | dict(gpu_type="H200", gpu_count=8, tensor_parallel=1, pipeline_parallel=1,
                                   expert_parallel=8, seq_len=4096),
}


@pytest.mark.parametrize("run", sorted(PUBLISHED))
def test_published_layouts_fit_without_full_recompute(run):
    result = scenario_outputs(Scenario(**PUBLISHED[run]))
    assert result["layout_valid"] and result["memory"]["fits"] and result["feasible"]
    assert result["feasibility_problems"] == []
    layout = result["layout"]
    spec = PUBLISHED[run]
    assert layout["data_parallel"] == spec["gpu_count"] // (spec["tensor_parallel"] * spec["pipeline_parallel"])


def test_the_deepseek_v3_preset_fits_at_its_own_layout():
    result = scenario_outputs(presets()["DeepSeek-V3: 671B MoE (37B active), 14.8T tokens on 2,048 H800"])
    assert result["feasible"] and result["layout"]["expert_parallel"] == 64 and result["layout"]["tensor_parallel"] == 1


def test_llama3_memory_by_hand():
    mem = scenario_outputs(Scenario(**PUBLISHED["llama3-405b-16384"]))["memory"]
    embedding = 2 * 128256 * 16384
    per_layer = (405.9e9 - embedding) / 126
    local = max(8 * per_layer, 7 * per_layer + embedding / 2) / 8  # a middle stage's 8 layers, over TP 8
    assert mem["weights_gb"] == pytest.approx(2 * local / GIB)
    assert mem["gradients_gb"] == pytest.approx(4 * local / 128 / GIB)  # ZeRO-2 over DP 128
    assert mem["optimizer_gb"] == pytest.approx(12 * local / 128 / GIB)
    # 2,048 sequences over DP 128: 16 micro-batches of 2 chunks, all 32 chunks of 4 layers in flight.
    assert mem["activations_gb"] == pytest.approx(532_676_608 * 128 / GIB)
    assert mem["logits_gb"] == pytest.approx(4 * 8192 * 128256 / 8 / GIB)
    assert mem["reserve_gb"] == pytest.approx(1 + 1 + 0.05 * 80)
    parts = ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "logits_gb", "reserve_gb")
    assert mem["total_gb"] == pytest.approx(sum(mem[key] for key in parts))
    assert mem["headroom_gb"] == pytest.approx(80 - mem["total_gb"])


def test_the_reserve_can_be_set():
    mem = scenario_outputs(Scenario(**PUBLISHED["llama3-405b-16384"], memory_reserve_gb=20.0))
    assert mem["memory"]["reserve_gb"] == 20.0 and not mem["feasible"]


@pytest.mark.parametrize("spec", [
    # 70B on 8 H100 with no sharding: 18 B · 70e9 on one GPU.
    pytest.param(dict(total_params=70e9, gpu_type="H100", gpu_count=8, tensor_parallel=1, pipeline_parallel=1,
                      zero_stage=0), id="70B-8xH100-no-sharding"),
    # 175B on 8 A100-80GB even with ZeRO-3: 18 B · 175e9 / 8 = 367 GB of states per GPU.
    pytest.param(dict(total_params=175e9, gpu_type="A100", gpu_count=8, zero_stage=3, activation_recompute="full"),
                 id="175B-8xA100-zero3"),
])
def test_plans_that_cannot_run(spec):
    result = scenario_outputs(Scenario(**spec))
    assert not result["feasible"] and not result["memory"]["fits"]
    assert len(result["feasibility_problems"]) == 1
    assert result["feasibility_problems"][0].startswith("does not fit: ")


def test_no_sharding_message_names_the_gb_and_the_free_fixes():
    # 7B, no sharding, on 8 H100: 117 GB of states; ZeRO-1 leaves 6 · 7e9 + 12 · 7e9 / 8 bytes (48.9 GB), TP 2 half.
    result = scenario_outputs(Scenario(total_params=7e9, gpu_count=8, tensor_parallel=1, pipeline_parallel=1,
                                       zero_stage=0, activation_recompute="full"))
    sentence = result["feasibility_problems"][0]
    assert sentence.startswith(f"does not fit: {result['memory']['total_gb']:,.0f} GB of 80 GB per GPU")
    assert "use ZeRO-1 (" in sentence and "TP 2 (" in sentence and "no extra compute" in sentence


def test_175b_on_8_gpus_says_how_many_are_needed():
    # 18 B · 175e9 = 2,934 GB of states at 80 GB each: 37 GPUs, rounded up to whole nodes of 8: 40.
    sentence = scenario_outputs(Scenario(total_params=175e9, gpu_type="A100", gpu_count=8))["feasibility_problems"][0]
    assert "at least 40 GPUs" in sentence and "64 GPUs fit" in sentence


def test_without_a_step_time_the_proposal_is_tp_within_a_node_first():
    # 70B on 64 GPUs with an H100's peak and memory but no link figures (a custom GPU): no step time, so the planner's
    # order decides. With full recompute ZeRO-1 at TP 8 holds 6 · 70e9 / 8 + 12 · 70e9 / 64 bytes (61 GB) and fits;
    # TP 4 does not (98 + 12 GB).
    scenario = Scenario(total_params=70e9, n_layers=80, d_model=8192, gpu_count=64, activation_recompute="full",
                        gpu_type="custom", peak_tflops=989.0, gpu_memory_gb=80.0, mfu=0.4)
    result = scenario_outputs(scenario)
    assert result["layout"] == {"data_parallel": 8, "tensor_parallel": 8, "pipeline_parallel": 1,
                                "expert_parallel": 1, "context_parallel": 1, "zero_stage": 1,
                                "virtual_pipeline_stages": 1}
    assert result["layout_proposed"] and result["throughput"]["step_time_s"] is None
    assert any(note.startswith("layout proposed by the planner") for note in result["feasibility_notes"])
    assert proposed_layout(scenario, engine.evaluate)["tensor_parallel"] == 8


def test_with_a_step_time_the_proposal_is_the_fastest_that_fits_and_says_so():
    # The same plan on H100: TP 8 · PP 1 (the order's first fit) still fits, but the planner proposes the fastest
    # fitting layout and names the runner-up with its step time.
    plan = dict(total_params=70e9, n_layers=80, d_model=8192, gpu_count=64, activation_recompute="full")
    result = scenario_outputs(Scenario(**plan))
    first = scenario_outputs(Scenario(**plan, tensor_parallel=8, pipeline_parallel=1, zero_stage=1))
    assert first["feasible"] and result["feasible"]
    assert result["throughput"]["step_time_s"] <= first["throughput"]["step_time_s"]
    note = next(note for note in result["feasibility_notes"] if note.startswith("layout proposed by the planner"))
    assert f"the fastest that fits: {result['throughput']['step_time_s']:,.3g} s a step; TP " in note


def test_proposal_adds_pipeline_stages_after_the_node():
    # 405B on 16,384 H100 at ZeRO-1: TP 8 alone holds 6 · 405e9 / 8 bytes (283 GB); PP 4 still 71 GB of weights and
    # gradients (+ the rest), PP 8 is the first that fits. Among the pipelines that fit the planner proposes the
    # fastest: no fitting pipeline at TP 8 has a shorter predicted step.
    plan = dict(total_params=405e9, n_layers=126, d_model=16384, seq_len=8192, gpu_count=16384,
                activation_recompute="full")
    result = scenario_outputs(Scenario(**plan))
    assert result["layout"]["tensor_parallel"] == 8 and result["layout"]["pipeline_parallel"] >= 8
    assert result["layout"]["zero_stage"] == 1 and result["feasible"]
    assert not scenario_outputs(Scenario(**plan, tensor_parallel=8, pipeline_parallel=4, zero_stage=1))["feasible"]
    for pp in (8, 16, 32):  # at most 126 / 2 layers a stage: PP 32 is the largest power of two proposed
        other = scenario_outputs(Scenario(**plan, tensor_parallel=8, pipeline_parallel=pp, zero_stage=1))
        if other["feasible"]:
            assert result["throughput"]["step_time_s"] <= other["throughput"]["step_time_s"] * (1 + 1e-12)


def test_a_slider_size_carries_its_shape():
    # 405B with no shape keys: the Llama 3.1 405B shape, not the default 7B's.
    result = scenario_outputs(Scenario(total_params=405e9))
    model = shape.model_shape(Scenario(total_params=405e9))
    assert (model.n_layers, model.d_model, model.n_heads, model.n_kv_heads) == (126, 16384, 128, 8)
    assert shape.describe(model) == "126 layers × 16,384, 128 heads (8 KV)"
    assert any(note.startswith("assumed shape: 126 layers × 16,384") for note in result["feasibility_notes"])


@pytest.mark.parametrize(("changes", "message"), [
    ({"tensor_parallel": 16}, "tensor_parallel = 16 exceeds gpus_per_node = 8"),
    ({"tensor_parallel": 3}, "tensor_parallel × pipeline_parallel = 3 does not divide gpu_count = 512"),
    ({"tensor_parallel": 8, "pipeline_parallel": 2, "context_parallel": 3},
     "tensor_parallel × pipeline_parallel × context_parallel = 48 does not divide gpu_count = 512"),
    ({"pipeline_parallel": 1, "virtual_pipeline_stages": 2}, "virtual_pipeline_stages = 2 needs pipeline_parallel"),
    ({"n_experts": 8}, "n_experts and experts_per_token go together"),
    ({"n_heads": 32, "n_kv_heads": 5}, "n_kv_heads = 5 does not divide n_heads = 32"),
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
    # PP 16 with 16 micro-batches: 15 / 31 of each step idle (the 48 % a 405B without interleaving showed).
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
    # TST's main run, side work, data and storage grow with its length; the pilot and switching do not.
    grows = tst["tst_main_run_usd"] + tst["tst_side_usd"] + tst["tst_data_cost_usd"] + tst["tst_storage_usd"]
    assert grows == pytest.approx(tst["tst_cost_usd"] - tst["pilot_cost_usd"] - tst["switching_cost_usd"])
    assert tst["net_savings_with_scarcity_usd"] == pytest.approx(tst["net_savings_usd"] - (factor - 1) * grows)
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

    scenarios = [Scenario(**PUBLISHED[name]) for name in sorted(PUBLISHED)]
    scenarios += [Scenario(total_params=175e9, gpu_type="A100", gpu_count=8), Scenario(**ONE_B, gpu_count=1024)]
    batch_result = output_arrays(scenario_arrays(scenarios))
    for i, scenario in enumerate(scenarios):
        single = scenario_outputs(scenario)
        assert single["memory"]["total_gb"] == pytest.approx(batch_result["memory"]["total_gb"][i], rel=1e-12)
        assert single["feasible"] == bool(batch_result["feasible"][i])
        assert single["cost_total_usd"] == pytest.approx(float(np.asarray(batch_result["cost_total_usd"])[i]))


def test_fixes_are_priced_and_the_free_ones_come_first():
    # The 405B at its published layout on 8,192 H100 with eager attention (Korthikanti's score term kept). Fused
    # attention fits at no extra compute; full recompute fits too but adds a forward pass, priced by the engine (+33 %
    # of the compute: $23.6M at the all-reserved H100 price, about $30M at the default mix). Selective recompute
    # does not: it keeps eager's dropout masks (2h bytes per token, 120 layers in flight) and its backward
    # regenerates one layer's scores at once, 5·a·s² bytes over TP 8 = 5.0 GiB, beyond the loss's fp32 logits
    # (4·s·V / TP = 0.49 GiB), freed before it.
    scenario = Scenario(**PUBLISHED["llama3-405b-8192"] | {"attention": "eager", "tokens": 15.6e12, **BARE})
    assert not scenario_outputs(scenario)["feasible"]
    fixes = memory_fixes.fixes(scenario, engine.evaluate)
    labels = [fix.label for fix in fixes if fix.fits]
    assert labels[0] == "fused (flash) attention"
    free, full = fixes[0], next(fix for fix in fixes if fix.label == "full activation recompute")
    selective = next(fix for fix in fixes if fix.label == "selective activation recompute")
    assert not selective.fits
    assert selective.memory_gb - free.memory_gb == pytest.approx(
        (120 * 8192 * 2 * 16384 / 8 + 5 * 128 * 8192 * 8192 / 8 - 4 * 8192 * 128256 / 8) / GIB, rel=1e-9)
    assert full.fits
    assert (free.changes, free.extra_compute_fraction, free.extra_cost_usd, free.cost_text) == (
        {"attention": "flash"}, 0.0, 0.0, "no extra compute")
    assert full.changes == {"activation_recompute": "full"}
    assert full.extra_compute_fraction == pytest.approx(1 / 3)
    base, recomputed = (scenario_outputs(s)["cost_total_usd"] for s in (scenario, scenario.model_copy(
        update=full.changes)))
    assert full.extra_cost_usd == pytest.approx(recomputed - base)
    assert full.cost_text == f"+33 % compute, +{fmt.number(recomputed - base, '$')}"
    assert 20e6 < full.extra_cost_usd < 35e6  # a third of 26.6M GPU-hours at $2.65
    for fix in fixes:
        applied = scenario_outputs(scenario.model_copy(update=fix.changes))
        assert applied["feasible"] is fix.fits and applied["memory"]["total_gb"] == pytest.approx(fix.memory_gb)
    sentence = scenario_outputs(scenario)["feasibility_problems"][0]
    assert "use fused (flash) attention (" in sentence and sentence.index("fused") < sentence.index("full")


def test_more_gpus_say_how_many_and_their_price():
    fixes = memory_fixes.fixes(Scenario(total_params=175e9, gpu_type="A100", gpu_count=8), engine.evaluate)
    more = next(fix for fix in fixes if "gpu_count" in fix.changes)
    assert more.fits and more.changes == {"gpu_count": 64} and more.cost_text.startswith("+56 GPUs, ")


def test_a_plan_that_fits_needs_no_fix():
    assert memory_fixes.fixes(Scenario(), engine.evaluate) == []


def test_a_custom_gpu_without_its_memory_is_not_feasible():
    result = scenario_outputs(Scenario(gpu_type="custom", peak_tflops=500.0, mfu=0.4))
    assert result["memory"]["gpu_memory_gb"] is None and not result["feasible"]
    assert result["feasibility_problems"][0].startswith("the custom GPU's memory is not given")
    assert memory_fixes.fixes(Scenario(gpu_type="custom", peak_tflops=500.0, mfu=0.4), engine.evaluate) == []
    given = scenario_outputs(Scenario(gpu_type="custom", peak_tflops=500.0, gpu_memory_gb=80.0, mfu=0.4))
    assert given["feasible"] and given["memory"]["gpu_memory_gb"] == 80.0
