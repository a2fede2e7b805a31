"""The step-time model (dashboard.core.step_time): hand-worked layers, collectives and bubbles, and the properties a
planner relies on (a faster network is never slower, more micro-batches never raise the bubble, GPUs beyond the
batch limit never speed a step up)."""

import numpy as np
import pytest
from bare_plan import COMPUTE_ONLY
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.core import step_time
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario, default_scenario, scenario_from_dict

FIT = step_time.AMPERE
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
    return {key: float(value[0]) for key, value in step_time.step_time(_layer(**changes)).items()}


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
    assert step_time.gemm_efficiency(200.0) == pytest.approx(FIT.gemm_efficiency / 2)
    assert step_time.gemm_efficiency(768.0) < step_time.gemm_efficiency(3200.0) < FIT.gemm_efficiency


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
    assert rates["mfu_source"] == "predicted" and result["mfu_used"] == pytest.approx(rates["mfu_as_input"])
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
    ({}, "no measured run on this GPU generation (hopper)"),
    ({"gpu_type": "A100", "total_params": 175e9, "gpu_count": 64}, None),
    ({"gpu_type": "A100", "total_params": 7e9, "gpu_count": 64}, "7B parameters is outside the measured 22.1B–1.01T"),
    ({"gpu_type": "A100", "total_params": 175e9, "gpu_count": 4096}, "4,096 GPUs is outside the measured 8–2,240"),
    ({"gpu_type": "H100", "precision": "fp8"}, "FP8 runs were not measured"),
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
