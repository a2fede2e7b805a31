"""Step time of a training layout: compute, tensor / context / expert-parallel traffic, the pipeline bubble and the
data-parallel traffic the backward pass does not hide, from the scenario's shape, GPUs, layout and batch.

Per micro-batch, one GPU of the slowest pipeline stage (its ⌈L/PP⌉ layers, or the end stage's layers plus the
output layer when that is slower) runs, per layer, over T = b·s/CP tokens and 1/TP of every matrix:

- GEMMs: Q, K, V (2·T·h·(h + 2·h·kv/a)), the output projection (2·T·h²), the FFN (2·T·h·f·(2 + gated) per expert
  a token uses) and, on the last stage, the output layer (2·T·h·V); attention scores 4·T·s·h (Korthikanti et al.
  2022, App. A), half of it for `flash` (causal kernels skip the masked half). Backward costs twice the forward;
  full recompute adds a forward, selective the attention scores. GEMMs run at `gemm_efficiency` of the peak at
  the run's precision, lower for thin matrices: efficiency = top · w / (w + w½) with w = h / TP.
- Memory-bound work (norms, activations, dropout, softmax): `traffic_per_activation_byte` × the bytes the layer
  keeps for backward (`dashboard.core.memory`, without recompute), read and written at the GPU's HBM bandwidth;
  three times that for forward and backward, once more with full recompute.
- Tensor parallel (sequence parallel): per layer 2 all-gathers and 2 reduce-scatters of T·h bf16 values forward,
  as many backward (the same bytes as 2 + 2 all-reduces), each moving (TP − 1)/TP of them per GPU; over NVLink
  when TP fits in a node. Not overlapped (Megatron-LM's schedule of the measured runs).
- Context parallel: ring attention passes K and V of T tokens (CP − 1) times forward and twice that backward,
  hidden behind the attention compute up to its length.
- Expert parallel: 2 all-to-alls forward and 2 backward of T·k·h bf16 values per MoE layer, (EP − 1)/EP of them
  leaving the GPU.
- Pipeline: 1F1B with m micro-batches per step and v virtual stages waits (PP − 1)/v micro-batch times (Narayanan
  et al. 2021 §2.2); point-to-point sends of T·h/TP values between stages, forward and backward, per chunk.
- Data parallel: the gradients' all-reduce (2·(DP − 1)/DP of the GPU's fp32 gradients); ZeRO-3 instead
  reduce-scatters bf16 gradients and all-gathers the bf16 weights forward and backward in every micro-batch. A
  fitted share (`dp_overlap`) of the last micro-batch's backward (for ZeRO-3, of all compute) hides the traffic;
  what is left is `dp_comm_exposed_s`.

Links: NVLink within a node at `nvlink_gb_per_s` per GPU and direction, the inter-node network at
`network_gb_per_s` per GPU (data/hardware.csv), each at a fitted fraction of its line rate. The fitted constants
(`Fit`) name the runs they were fitted on, all A100s: other generations use them with their own peaks, bandwidths
and links; `dashboard.core.throughput_validation` prints the errors and refits them. Every function broadcasts
over numpy arrays, so the layout search prices candidates × scenarios at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dashboard.core import memory

BF16_BYTES = 2.0
GRADIENT_BYTES = 4.0  # Megatron-LM reduces fp32 main gradients (`accumulate_allreduce_grads_in_fp32`)
PARTS = ("compute_s", "tp_comm_s", "cp_comm_s", "ep_comm_s", "pp_bubble_s", "dp_comm_exposed_s")


@dataclass(frozen=True)
class Fit:
    """The step-time model's fitted constants for one GPU generation and the runs they were fitted on."""

    gemm_efficiency: float  # the thickest GEMMs' share of the peak
    gemm_half_width: float  # the per-GPU width h / TP at which GEMMs run at half of that
    traffic_per_activation_byte: float  # HBM bytes moved per byte of saved activations, forward
    nvlink_efficiency: float  # achieved share of the NVLink line rate (NCCL bus bandwidth)
    network_efficiency: float  # achieved share of the inter-node line rate
    dp_overlap: float  # share of the overlappable compute that data-parallel traffic actually runs behind
    fitted_on: str


# Ampere: least squares on log step time over the 14 complete measured runs (Korthikanti et al. 2022 Table 5,
# K-1 to K-9; Narayanan et al. 2021 §5.2, N2-1 to N2-4; BLOOM 176B, BL-1), A100-80GB on Selene and Jean Zay.
AMPERE = Fit(0.80, 200.0, 3.0, 0.62, 0.67, 0.64,
             "14 A100 runs of measured-runs.csv: K-1 to K-9, N2-1 to N2-4, BL-1 (22B to 1T, 8 to 2,240 GPUs)")
DEFAULT_FIT = AMPERE  # every generation: only Ampere runs were measured (others are outside the validated region)


def gemm_efficiency(width_per_gpu, fit: Fit = DEFAULT_FIT) -> np.ndarray:
    """Share of the peak a GEMM of this per-GPU width reaches: top · w / (w + w½)."""
    w = np.asarray(width_per_gpu, dtype=float)
    return fit.gemm_efficiency * w / (w + fit.gemm_half_width)


def layer_forward_flops(tokens, seq_len, d_model, n_heads, n_kv_heads, ffn_hidden_size, ffn_gated, experts,
                        attention_index) -> tuple[np.ndarray, np.ndarray]:
    """(GEMM FLOPs, attention-score FLOPs) of one layer's forward over `tokens` tokens, whole (before TP)."""
    h = np.asarray(d_model, dtype=float)
    t = np.asarray(tokens, dtype=float)
    qkv = 2.0 * t * h * (h + 2.0 * h * np.asarray(n_kv_heads, dtype=float) / n_heads)
    ffn = 2.0 * t * h * ffn_hidden_size * (2.0 + np.asarray(ffn_gated, dtype=float)) * experts
    gemm = qkv + 2.0 * t * h * h + ffn
    scores = 4.0 * t * np.asarray(seq_len, dtype=float) * h * np.where(np.asarray(attention_index) == 1, 1.0, 0.5)
    return gemm, scores


def ring_bytes(size_bytes, group) -> np.ndarray:
    """Bytes one GPU sends in a ring all-gather or reduce-scatter of `size_bytes` over `group` GPUs."""
    g = np.asarray(group, dtype=float)
    return np.asarray(size_bytes, dtype=float) * (g - 1.0) / g


def link_gb_per_s(group_span, gpus_per_node, nvlink_gb_per_s, network_gb_per_s, fit: Fit = DEFAULT_FIT):
    """Achieved GB/s per GPU of a group spanning `group_span` consecutive GPUs: NVLink within a node, else the
    network."""
    inside = np.asarray(group_span, dtype=float) <= gpus_per_node
    return np.where(inside, fit.nvlink_efficiency * np.asarray(nvlink_gb_per_s, dtype=float),
                    fit.network_efficiency * np.asarray(network_gb_per_s, dtype=float))


def step_time(p: dict[str, np.ndarray], fit: Fit | None = None) -> dict[str, np.ndarray]:
    """Seconds per optimizer step and its parts (`PARTS`) for arrays of scenarios at their layouts.

    `p` holds the shape (`n_layers`, `d_model`, `n_heads`, `n_kv_heads`, `ffn_hidden_size`, `ffn_gated`,
    `vocab_size`, `experts`: FFN copies a token uses, `moe`: 1 for MoE), `seq_len`, `micro_batch_size`,
    `micro_batches` per step, the layout (`tensor_parallel`, `pipeline_parallel`, `context_parallel`,
    `expert_parallel`, `data_parallel`, `virtual_pipeline_stages`, `zero_stage`), `recompute_index`,
    `attention_index`, `fp8_activations`, `params_per_gpu` (what the GPU holds before ZeRO), `peak_tflops` at
    the run's precision, `hbm_tb_per_s`, `nvlink_gb_per_s`, `network_gb_per_s` and `gpus_per_node`.
    """
    fit = fit or DEFAULT_FIT  # read at call time: `throughput_validation --fit` swaps it while it refits
    tp, pp, cp = p["tensor_parallel"], p["pipeline_parallel"], p["context_parallel"]
    ep, dp, v = p["expert_parallel"], p["data_parallel"], p["virtual_pipeline_stages"]
    h, node = np.asarray(p["d_model"], dtype=float), p["gpus_per_node"]
    recompute = np.asarray(p["recompute_index"])
    full, selective = recompute == 2, recompute == 1
    tokens = p["seq_len"] / cp * p["micro_batch_size"]  # per micro-batch on one context-parallel rank
    peak = p["peak_tflops"] * 1e12
    hbm = p["hbm_tb_per_s"] * 1e12

    # Compute of one layer, forward + backward (+ recompute), on one GPU.
    gemm, scores = layer_forward_flops(tokens, p["seq_len"], h, p["n_heads"], p["n_kv_heads"],
                                       p["ffn_hidden_size"], p["ffn_gated"], p["experts"], p["attention_index"])
    speed = peak * gemm_efficiency(h / tp, fit)
    gemm_s, scores_s = gemm / tp / speed, scores / tp / speed
    kept = memory.layer_activation_bytes(p["seq_len"], p["micro_batch_size"], h, p["n_heads"], p["n_kv_heads"],
                                         p["ffn_hidden_size"], p["ffn_gated"], p["experts"], tp, cp, 0.0,
                                         p["attention_index"], p["fp8_activations"])
    elementwise_s = fit.traffic_per_activation_byte * kept / hbm
    forward_s = gemm_s + scores_s + elementwise_s
    layer_s = 3.0 * forward_s + np.where(full, forward_s, np.where(selective, scores_s, 0.0))
    output_s = 3.0 * 2.0 * tokens * h * p["vocab_size"] / tp / speed

    # Tensor parallel: 4 ring collectives of T·h bf16 values forward, 4 backward, 4 more with full recompute.
    tp_bytes = ring_bytes(tokens * h * BF16_BYTES, tp) * (8.0 + np.where(full, 4.0, 0.0))
    tp_layer_s = tp_bytes / (link_gb_per_s(tp, node, p["nvlink_gb_per_s"], p["network_gb_per_s"], fit) * 1e9)
    # Context parallel: K and V of T tokens, (CP − 1) times forward, twice backward, behind attention compute.
    kv_bytes = 2.0 * tokens * h * p["n_kv_heads"] / p["n_heads"] * BF16_BYTES / tp
    cp_raw = 3.0 * kv_bytes * (cp - 1.0) / (
        link_gb_per_s(tp * cp, node, p["nvlink_gb_per_s"], p["network_gb_per_s"], fit) * 1e9)
    cp_layer_s = np.fmax(cp_raw - 3.0 * scores_s, 0.0)
    # Expert parallel: 2 all-to-alls forward and 2 backward of T·k·h values per MoE layer.
    routed = np.where(np.asarray(p["moe"]) > 0, p["experts"], 0.0)
    ep_bytes = 4.0 * tokens * routed * h * BF16_BYTES / tp * (ep - 1.0) / ep
    ep_layer_s = ep_bytes / (link_gb_per_s(tp * ep, node, p["nvlink_gb_per_s"], p["network_gb_per_s"], fit) * 1e9)

    # An assumed shape's layer stands for `layer_scale` of this model's (see `layout`); 1 for a given shape.
    scale = p.get("layer_scale", 1.0)
    layer_s, tp_layer_s, cp_layer_s, ep_layer_s = (x * scale for x in (layer_s, tp_layer_s, cp_layer_s, ep_layer_s))
    first, middle = memory.stage_layers(p["n_layers"], pp)
    per_layer = layer_s + tp_layer_s + cp_layer_s + ep_layer_s
    stage_s = np.fmax(middle * per_layer, first * per_layer + output_s)  # one micro-batch on the slowest stage
    share = np.where(middle * per_layer >= first * per_layer + output_s, middle, first)  # its layers
    p2p_bytes = 2.0 * v * tokens * h * BF16_BYTES / tp
    p2p_s = np.where(pp > 1, p2p_bytes / (
        link_gb_per_s(tp * cp * pp, node, p["nvlink_gb_per_s"], p["network_gb_per_s"], fit) * 1e9), 0.0)
    micro_s = stage_s + p2p_s
    m = p["micro_batches"]
    bubble_s = (pp - 1.0) / v * micro_s

    # Data parallel over the replicas: the gradients' all-reduce (reduce-scatter + all-gather) in fp32; ZeRO-3
    # reduce-scatters bf16 gradients and all-gathers the bf16 weights forward and backward in every micro-batch
    # (ZeRO's 3Ψ, arXiv 1910.02054 §7). A share of the compute the traffic can run behind hides it: the last
    # micro-batch's backward, and for ZeRO-3 every micro-batch's forward and backward.
    replicas = dp * cp
    zero3 = np.asarray(p["zero_stage"]) >= 3
    params = p["params_per_gpu"]
    traffic = np.where(zero3, ring_bytes(params * BF16_BYTES * (1.0 + 2.0 * m), replicas),
                       ring_bytes(2.0 * params * GRADIENT_BYTES, replicas))
    network = link_gb_per_s(tp * cp * pp * np.fmax(replicas, 2.0), node, p["nvlink_gb_per_s"],
                            p["network_gb_per_s"], fit) * 1e9
    backward_s = share * (2.0 * (gemm_s + scores_s + elementwise_s))
    hidden_s = fit.dp_overlap * np.where(zero3, m * stage_s, backward_s)
    dp_exposed_s = np.where(replicas > 1, np.fmax(traffic / network - hidden_s, 0.0), 0.0)

    compute_s = m * share * layer_s + m * (stage_s - share * per_layer)  # layers and the output layer
    tp_s, cp_s, ep_s = (m * share * x for x in (tp_layer_s, cp_layer_s, ep_layer_s))
    parts = {"compute_s": compute_s, "tp_comm_s": tp_s, "cp_comm_s": cp_s, "ep_comm_s": ep_s,
             "pp_bubble_s": bubble_s + m * p2p_s, "dp_comm_exposed_s": dp_exposed_s}
    return parts | {"step_time_s": sum(parts.values())}
