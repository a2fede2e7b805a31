"""The step-time model (dashboard.core.step_time): hand-worked layers, collectives and bubbles, and the properties a
planner relies on (a faster network is never slower, more micro-batches never raise the bubble, GPUs beyond the
batch limit never speed a step up)."""

import dataclasses

import numpy as np
import pytest
from bare_plan import COMPUTE_ONLY
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.core import step_time
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario, default_scenario, scenario_from_dict

FIT = step_time.AMPERE  # the hand-worked cases use the Ampere constants, passed explicitly
FAST = 1e9  # a link or memory so fast its time is nil (GB/s or TB/s)


def _layer(**changes):
    """One dense GPT layer of width 4,096 (32 heads, plain 4h FFN, no output layer) on one GPU, micro-batch 1 of
    2,048 tokens, flash attention, no recompute, memory and links so fast only the GEMMs and scores take time."""
    p = dict(n_layers=1.0, d_model=4096.0, n_heads=32.0, n_kv_heads=32.0, ffn_hidden_size=16384.0, ffn_gated=0.0,
             vocab_size=0.0, experts=1.0, moe=0.0, seq_len=2048.0, micro_batch_size=1.0, micro_batches=1.0,
             tensor_parallel=1.0, pipeline_parallel=1.0, context_parallel=1.0, expert_parallel=1.0,
             data_parallel=1.0, virtual_pipeline_stages=1.0, zero_stage=1.0, recompute_index=0.0,
             attention_index=0.0, fp8_activations=0.0, params_per_gpu=2e8, peak_tflops=989.0, hbm_tb_per_s=FAST,
             nvlink_gb_per_s=FAST, network_gb_per_s=FAST, gpus_per_node=8.0)
    return {key: np.array([value]) for key, value in (p | changes).items()}


def _seconds(**changes):
    return {key: float(value[0]) for key, value in step_time.step_time(_layer(**changes), FIT).items()}


def test_one_gemm_bound_layer():
    # Forward: Q, K, V 2·T·h·3h + output 2·T·h² + FFN 2·T·h·4h·2 = 24·T·h², scores 4·T·s·h halved by the causal
    # flash kernel = 2·T·s·h; backward twice the forward. At width 4,096 GEMMs run at 0.8 · 4096 / (4096 + 200) of
    # 989 TFLOP/s.
    T, h, s = 2048.0, 4096.0, 2048.0
    flops = 3 * (24 * T * h * h + 2 * T * s * h)
    speed = 989e12 * FIT.gemm_efficiency * 4096 / (4096 + FIT.gemm_half_width)
    got = _seconds()
    assert got["compute_s"] == pytest.approx(flops / speed, rel=1e-6)
    assert got["step_time_s"] == pytest.approx(flops / speed, rel=1e-6)
    # Full recompute repeats the forward (8/6 of the work); selective only the scores.
    assert _seconds(recompute_index=2.0)["compute_s"] == pytest.approx(flops / speed * 4 / 3, rel=1e-6)
    assert _seconds(recompute_index=1.0)["compute_s"] == pytest.approx((flops + 2 * T * s * h) / speed, rel=1e-6)


def test_thin_gemms_run_further_from_peak():
    assert step_time.gemm_efficiency(200.0, FIT) == pytest.approx(FIT.gemm_efficiency / 2)
    assert step_time.gemm_efficiency(768.0, FIT) < step_time.gemm_efficiency(3200.0, FIT) < FIT.gemm_efficiency


def test_one_tensor_parallel_layer_moves_eight_ring_collectives_over_nvlink():
    # TP 8 inside an 8-GPU node: 2 all-gathers + 2 reduce-scatters forward and as many backward, each of T·h bf16
    # values (2,048 · 4,096 · 2 B = 16 MiB), each GPU sending 7/8 of it, at 450 GB/s × the NVLink efficiency.
    bytes_moved = 8 * 7 / 8 * 2048 * 4096 * 2
    got = _seconds(tensor_parallel=8.0, nvlink_gb_per_s=450.0)
    assert got["tp_comm_s"] == pytest.approx(bytes_moved / (450e9 * FIT.nvlink_efficiency), rel=1e-9)
    # The same group across nodes (4 GPUs a node) goes over the network instead.
    across = _seconds(tensor_parallel=8.0, gpus_per_node=4.0, nvlink_gb_per_s=450.0, network_gb_per_s=50.0)
    assert across["tp_comm_s"] == pytest.approx(bytes_moved / (50e9 * FIT.network_efficiency), rel=1e-9)


@pytest.mark.parametrize(("pp", "m", "v"), [(4, 8, 1), (8, 4, 1), (4, 8, 2), (16, 32, 4)])
def test_the_1f1b_bubble_is_pp_minus_1_over_m_plus_pp_minus_1(pp, m, v):
    # 32 identical layers over PP stages, no traffic: the bubble is (PP − 1)/(v·m + PP − 1) of the step
    # (Narayanan et al. 2021 §2.2), and the busy part m micro-batches of one stage's layers.
    got = _seconds(n_layers=32.0, pipeline_parallel=float(pp), micro_batches=float(m), virtual_pipeline_stages=float(v))
    assert got["pp_bubble_s"] / got["step_time_s"] == pytest.approx((pp - 1) / (v * m + pp - 1), rel=1e-6)
    one_layer = _seconds()["compute_s"]
    assert got["compute_s"] == pytest.approx(m * 32 / pp * one_layer, rel=1e-9)


def test_data_parallel_traffic_beyond_the_backward_is_exposed():
    # 2e8 parameters on the GPU, DP 2 across nodes: an fp32 all-reduce sends 2 · (1/2) · 2e8 · 4 B = 800 MB at
    # 25 GB/s × the network efficiency; the last micro-batch's backward (2/3 of its compute) hides dp_overlap of it.
    got = _seconds(data_parallel=2.0, network_gb_per_s=25.0, gpus_per_node=1.0)
    traffic_s = 2 * 0.5 * 2e8 * 4 / (25e9 * FIT.network_efficiency)
    backward_s = 2 / 3 * _seconds()["compute_s"]
    assert got["dp_comm_exposed_s"] == pytest.approx(traffic_s - FIT.dp_overlap * backward_s, rel=1e-9)


PLANS = st.fixed_dictionaries({
    "total_params": st.sampled_from([1e9, 7e9, 70e9]), "gpu_count": st.sampled_from([64, 256, 1024]),
    "tensor_parallel": st.sampled_from([1, 2, 8]), "pipeline_parallel": st.sampled_from([1, 4]),
    "zero_stage": st.sampled_from([1, 3]), "gpu_type": st.sampled_from(["H100", "A100", "B200"]),
    "activation_recompute": st.sampled_from(["none", "full"]), "global_batch_tokens": st.sampled_from([2**21, 2**23]),
})


@settings(max_examples=40, deadline=None)
@given(PLANS, st.floats(1.5, 8.0))
def test_a_faster_network_is_never_slower(plan, factor):
    scenario = Scenario(**plan)
    base = scenario_outputs(scenario)["throughput"]["step_time_s"]
    network = scenario_outputs(scenario.model_copy(update={"network_gb_per_s": 50.0 * factor}))
    slow = scenario_outputs(scenario.model_copy(update={"network_gb_per_s": 50.0}))
    assert network["throughput"]["step_time_s"] <= slow["throughput"]["step_time_s"] * (1 + 1e-12)
    nvlink = scenario_outputs(scenario.model_copy(update={"nvlink_gb_per_s": 1e4}))
    assert nvlink["throughput"]["step_time_s"] <= base * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(PLANS)
def test_more_micro_batches_never_raise_the_bubble(plan):
    small = scenario_outputs(Scenario(**plan))
    large = scenario_outputs(Scenario(**(plan | {"global_batch_tokens": plan["global_batch_tokens"] * 4})))
    assert large["micro_batches_per_step"] >= small["micro_batches_per_step"]
    share = [r["throughput"]["pp_bubble_s"] / r["throughput"]["step_time_s"] for r in (small, large)]
    assert share[1] <= share[0] * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([1e9, 7e9]), st.sampled_from([2**19, 2**21]), st.floats(1.5, 8.0))
def test_gpus_beyond_the_batch_limit_never_speed_a_step_up(params, batch_tokens, factor):
    plan = dict(total_params=params, tokens=params * 20, seq_len=2048, global_batch_tokens=batch_tokens,
                tensor_parallel=1, pipeline_parallel=1, zero_stage=1)
    useful = scenario_outputs(Scenario(**plan, gpu_count=8))["max_useful_gpus"]
    at_limit = scenario_outputs(Scenario(**plan, gpu_count=int(useful)))
    beyond = scenario_outputs(Scenario(**plan, gpu_count=int(useful * factor)))
    assert beyond["throughput"]["step_time_s"] >= at_limit["throughput"]["step_time_s"] * (1 - 1e-12)
    assert beyond["wall_clock_days"] >= at_limit["wall_clock_days"] * (1 - 1e-12)


def test_the_plan_uses_the_predicted_mfu_unless_one_is_entered():
    # The default leaves mfu unset: the plan prices with the layout's prediction, and its GPU-hours are the step
    # time × the GPUs × the steps. An entered MFU wins, and the prediction is still reported beside it.
    scenario = default_scenario()
    assert scenario.mfu is None
    result = scenario_outputs(scenario)
    rates = result["throughput"]
    assert rates["mfu_source"] == "validated" and result["mfu_used"] == pytest.approx(rates["mfu_as_input"])
    steps = scenario.tokens / (result["global_batch_sequences"] * scenario.seq_len)
    busy_hours = rates["step_time_s"] * result["busy_gpus"] * steps / 3600
    assert result["gpu_hours_ideal"] == pytest.approx(busy_hours, rel=1e-9)
    entered = scenario_outputs(scenario.model_copy(update={"mfu": 0.3}))
    assert entered["mfu_used"] == 0.3 and entered["throughput"]["mfu_source"] == "entered"
    assert entered["throughput"]["mfu_predicted"] == pytest.approx(rates["mfu_predicted"])


def test_with_full_recompute_the_mfu_key_reads_hfu():
    scenario = Scenario(**COMPUTE_ONLY | {"mfu": None}, activation_recompute="full")
    rates = scenario_outputs(scenario)["throughput"]
    assert rates["mfu_as_input"] == pytest.approx(rates["mfu_predicted"] * 8 / 6)


@pytest.mark.parametrize(("changes", "phrase"), [
    # Issue 48: H100 / H200 runs (BF16 and FP8) are measured now, so the default H100 plan lies inside.
    ({}, None),
    ({"gpu_type": "H100", "precision": "fp8"}, None),
    ({"gpu_type": "B200"}, "no measured run on this GPU generation (blackwell)"),
    ({"gpu_type": "A100", "total_params": 175e9, "gpu_count": 64}, None),
    ({"gpu_type": "A100", "total_params": 0.5e9, "gpu_count": 64},
     "500M parameters is outside the measured 760M–1.01T"),
    ({"gpu_type": "A100", "total_params": 175e9, "gpu_count": 8192}, "8,192 GPUs is outside the measured 4–6,144"),
    ({"gpu_type": "A100", "precision": "fp8"}, "FP8 runs were not measured on Ampere GPUs"),
])
def test_the_result_says_where_it_leaves_the_validated_region(changes, phrase):
    rates = scenario_outputs(scenario_from_dict(default_scenario().to_json_dict() | changes))["throughput"]
    if phrase is None:
        assert rates["validated"] and rates["region_notes"] == []
    else:
        assert not rates["validated"] and any(phrase in note for note in rates["region_notes"])


def test_fp8_linears_run_at_the_fp8_peak_but_mfu_counts_the_bf16_peak():
    # H100: 1,979 dense FP8 TFLOP/s against 989 BF16; a GEMM-heavy 405B step is faster, and its MFU (against 989)
    # higher, but less than twice (traffic and the bubble do not speed up).
    plan = Scenario(total_params=405e9, gpu_count=16384, tensor_parallel=8, pipeline_parallel=16, zero_stage=2)
    bf16, fp8 = (scenario_outputs(plan.model_copy(update={"precision": p}))["throughput"] for p in ("bf16", "fp8"))
    assert 1.0 < bf16["step_time_s"] / fp8["step_time_s"] < 2.0
    assert fp8["mfu_predicted"] / bf16["mfu_predicted"] == pytest.approx(bf16["step_time_s"] / fp8["step_time_s"])


def test_an_assumed_shape_stands_for_this_model_s_size():
    # 30B takes Llama 2 70B's published shape (80 layers × 8,192, 8 K/V heads of 64, SwiGLU 28,672, vocabulary
    # 32,000): its layers stand for 30B's by (30e9 − 2 · 32,000 · 8,192) / (80 · layer parameters). The same shape
    # given explicitly is taken as it is.
    layout = dict(gpu_count=64, tensor_parallel=8, pipeline_parallel=1, zero_stage=1, global_batch_tokens=2**22)
    assumed = scenario_outputs(Scenario(total_params=30e9, **layout))
    given = scenario_outputs(Scenario(total_params=30e9, n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8,
                                      ffn_hidden_size=28672, ffn_type="gated", vocab_size=32000, **layout))
    h = 8192
    layer = h * (h + 2 * h * 8 / 64) + h * h + 3 * h * 28672
    ratio = (30e9 - 2 * 32000 * h) / (80 * layer)
    assert assumed["throughput"]["tp_comm_s"] == pytest.approx(ratio * given["throughput"]["tp_comm_s"], rel=1e-9)
    # The given shape is a 70B's work under 30B's 6·N: its predicted MFU is the lower.
    assert assumed["throughput"]["mfu_predicted"] > given["throughput"]["mfu_predicted"]


# Issue 48: FP8 only on the linears, overlap as the frameworks schedule it, HSDP and the NVLink domain. The cases
# run one layer of `_layer` (24·T·h² GEMM FLOPs and 2·T·s·h scores forward) with the Ampere constants.
T_, H_, S_ = 2048.0, 4096.0, 2048.0
GEMM_FLOPS, SCORE_FLOPS = 24 * T_ * H_ * H_, 2 * T_ * S_ * H_
SPEED = 989e12 * FIT.gemm_efficiency * 4096 / (4096 + FIT.gemm_half_width)  # BF16 GEMMs and scores at width 4,096


def test_an_fp8_layer_speeds_up_its_linears_only():
    # The linears at 1.4x their BF16 speed (Transformer Engine, torchao: 1.2-1.6x), the scores in BF16.
    got = _seconds(fp8_linears=1.0, linear_peak_tflops=1979.0)
    assert got["compute_s"] == pytest.approx(3 * (GEMM_FLOPS / (FIT.fp8_linear_speedup * SPEED)
                                                   + SCORE_FLOPS / SPEED), rel=1e-9)
    # Never above the FP8 peak's share: a 3x speed-up is capped at 1,979 TFLOP/s × the GEMMs' share of the peak.
    fast = dataclasses.replace(FIT, fp8_linear_speedup=3.0)
    capped = step_time.step_time(_layer(fp8_linears=1.0, linear_peak_tflops=1979.0), fast)["compute_s"][0]
    assert capped == pytest.approx(3 * (GEMM_FLOPS / (SPEED * 1979 / 989) + SCORE_FLOPS / SPEED), rel=1e-6)


def _megatron(network_gb_per_s):
    # Megatron-Core, DP 2 across two one-GPU domains: 2e8 bf16 parameters, the gradients' reduce-scatter and the
    # parameters' all-gather each send 1/2 · 2e8 · 2 B = 2e8 B over the network.
    return _seconds(framework_index=1.0, data_parallel=2.0, gpus_per_node=1.0, network_gb_per_s=network_gb_per_s)


def test_a_reduce_scatter_fully_hidden_by_a_long_backward():
    # The layer's forward is 1/3 of its compute (~1.2 ms), its backward 2/3; at 10,000 GB/s each collective takes
    # 2e8 / (1e13 · 0.62 network efficiency) = 0.03 ms, under dp_overlap (0.64) of either pass: nothing exposed.
    got = _megatron(10_000.0)
    assert got["dp_comm_exposed_s"] == 0.0
    assert got["step_time_s"] == pytest.approx(got["compute_s"], rel=1e-12)


def test_a_reduce_scatter_longer_than_the_backward_is_exposed():
    # At 25 GB/s each collective takes 2e8 / (25e9 · 0.67) ≈ 11.9 ms: what dp_overlap of the backward (for the
    # reduce-scatter) and of the forward (for the all-gather) cannot hide is exposed.
    got = _megatron(25.0)
    one_way = 2e8 / (25e9 * FIT.network_efficiency)
    forward = (GEMM_FLOPS + SCORE_FLOPS) / SPEED
    expected = (one_way - FIT.dp_overlap * 2 * forward) + (one_way - FIT.dp_overlap * forward)
    assert got["dp_comm_exposed_s"] == pytest.approx(expected, rel=1e-9)


def test_hsdp_shards_within_the_domain_and_all_reduces_the_shard_across_it():
    # FSDP with prefetch, ZeRO-3, 16 replicas over two 8-GPU NVLink domains. HSDP: the all-gathers run within a
    # domain over NVLink (so fast here they hide but the first, 7/8 · 4e8 B), and the shard (2e8 / 8 parameters,
    # 5e7 bf16 bytes) is all-reduced between the 2 domains: reduce-scatter + all-gather send 2 · 1/2 · 5e7 B =
    # 5e7 B at 25 GB/s × the network efficiency, behind dp_overlap of the backward.
    keys = dict(framework_index=4.0, zero_stage=3.0, data_parallel=16.0, nvlink_domain=8.0, network_gb_per_s=25.0)
    hsdp = _seconds(hsdp=1.0, **keys)
    backward = 2 * (GEMM_FLOPS + SCORE_FLOPS) / SPEED
    first_gather = 7 / 8 * 4e8 / (FAST * 1e9 * FIT.nvlink_efficiency)
    assert hsdp["dp_comm_exposed_s"] == pytest.approx(5e7 / (25e9 * FIT.network_efficiency)
                                                      - FIT.dp_overlap * backward + first_gather, rel=1e-9)
    # Full sharding over all 16 instead all-gathers the whole layer (4e8 B) twice a pass: across the domains each
    # of the 8 local GPUs carries 1/8 of it, 1/2 · 5e7 B = 2.5e7 B a gather (ring over the 2 domains), behind
    # the forward (one gather) and the backward (two gathers), plus the first gather.
    full = _seconds(hsdp=0.0, **keys)
    gather = 2.5e7 / (25e9 * FIT.network_efficiency) + first_gather
    forward = (GEMM_FLOPS + SCORE_FLOPS) / SPEED
    assert full["dp_comm_exposed_s"] == pytest.approx(
        max(gather - forward, 0) + max(2 * gather - backward, 0) + gather, rel=1e-9)


def test_tensor_parallel_rides_nvlink_within_a_rack_scale_domain():
    # TP 8 on 4-GPU nodes: over the network on HGX-style nodes, over NVLink in a 72-GPU NVL72 domain.
    bytes_moved = 8 * 7 / 8 * 2048 * 4096 * 2
    rack = _seconds(tensor_parallel=8.0, gpus_per_node=4.0, nvlink_domain=72.0, nvlink_gb_per_s=900.0,
                    network_gb_per_s=50.0)
    assert rack["tp_comm_s"] == pytest.approx(bytes_moved / (900e9 * FIT.nvlink_efficiency), rel=1e-9)


@pytest.mark.parametrize(("changes", "grade"), [
    ({"mfu": 0.3}, "entered"),  # a number the user enters always wins
    ({"mfu": 0.3, "gpu_type": "b200"}, "entered"),
    ({}, "validated"),  # H100 BF16 dense, 7B on 512 GPUs: inside the Hopper BF16 region (held out 13.7 %)
    ({"gpu_type": "b200"}, "extrapolated"),  # no Blackwell run measured
    ({"gpu_count": 16384}, "extrapolated"),  # beyond the 6,144 GPUs measured
])
def test_the_mfu_s_evidence_grade_follows_its_precedence(changes, grade):
    rates = scenario_outputs(default_scenario().model_copy(update=changes))["throughput"]
    assert rates["mfu_source"] == grade
    if grade == "entered":
        assert rates["mfu_band"] is None
    else:  # the prediction ± the region's band: Hopper BF16's held-out 13.7 %, also the widest (used outside)
        error = 0.137
        assert rates["mfu_error"] == error
        assert rates["mfu_band"] == pytest.approx([rates["mfu_as_input"] * (1 - error),
                                                    rates["mfu_as_input"] * (1 + error)])


def test_an_fp8_hopper_plan_is_priced_with_its_own_band():
    rates = scenario_outputs(default_scenario().model_copy(update={"precision": "fp8"}))["throughput"]
    assert rates["mfu_source"] == "validated" and rates["mfu_error"] == 0.119  # Hopper FP8's held-out error
