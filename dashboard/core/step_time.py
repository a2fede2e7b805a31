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
  what is left is `dp_comm_exposed_s`. That is framework `other` (and `deepspeed`): Megatron-LM and DeepSpeed as
  the 2021-22 papers ran them.

Precision and generation: with `fp8_linears` the Q/K/V, output and FFN GEMMs run at `fp8_linear_speedup` × their
BF16 speed, never above `gemm_efficiency` × the FP8 peak (`linear_peak_tflops`); attention, the norms, the casts
and the output layer stay BF16 (Transformer Engine, torchao float8). The thickest GEMMs' share of the peak is
fitted per GPU generation (`generation_index` 0: Ampere and older; 1: Hopper and later, Blackwell priced with
Hopper's share until a Blackwell run is measured).

Overlap as the frameworks schedule it (`framework_index`, `FRAMEWORKS`):
- `megatron`, `nemo` (Megatron-Core: distributed optimizer with `--overlap-grad-reduce` / `--overlap-param-gather`,
  `--tp-comm-overlap`): the bf16 gradients' reduce-scatter runs behind the last micro-batch's backward and the
  bf16 parameters' all-gather behind the first micro-batch's forward, each up to `dp_overlap` of it; the TP
  collectives are pipelined with the GEMMs, `tp_overlap` of them hidden.
- `fsdp`, `torchtitan` (FSDP / FSDP2 with prefetch), with ZeRO-3: each layer's all-gather runs behind the
  previous layer's forward, its all-gather and gradient reduce-scatter behind the next layer's backward, in every
  micro-batch; what a layer's compute cannot hide is exposed, plus the first layer's all-gather. `hsdp` shards
  within the NVLink domain (replicas of the shard across it) and adds the shard's gradient all-reduce across the
  replicas once a step, behind the last micro-batch's backward.

Links: NVLink within the NVLink domain (`nvlink_domain`: 8 GPUs on HGX, 72 on a GB200 NVL72 rack; the node when
unset) at `nvlink_gb_per_s` per GPU and direction, the network at `network_gb_per_s` per GPU (data/hardware.csv),
each at a fitted fraction of its line rate. The fitted constants (`Fit`) name the runs they were fitted on;
`dashboard.validation.throughput_validation` prints the errors, refits them and holds each source family out in turn.
Every function broadcasts over numpy arrays, so the layout search prices candidates × scenarios at once.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from dashboard.core import memory

BF16_BYTES = 2.0
GRADIENT_BYTES = 4.0  # Megatron-LM reduces fp32 main gradients (`accumulate_allreduce_grads_in_fp32`)
LATER_GENERATIONS = ("hopper", "blackwell")  # `generation_index` 1: priced with `gemm_efficiency_hopper`
FRAMEWORKS = ("other", "megatron", "nemo", "torchtitan", "fsdp", "deepspeed")  # `framework_index` indexes these
MEGATRON_CORE = (1, 2)  # overlapped grad reduce-scatter, param all-gather and TP communication
FSDP_PREFETCH = (3, 4)  # per-layer all-gather prefetch and reduce-scatter behind the backward
PARTS = ("compute_s", "tp_comm_s", "cp_comm_s", "ep_comm_s", "pp_bubble_s", "dp_comm_exposed_s")


@dataclass(frozen=True)
class Fit:
    """The step-time model's fitted constants for one GPU generation and the runs they were fitted on."""

    gemm_efficiency: float  # the thickest GEMMs' share of the peak, Ampere and older
    gemm_half_width: float  # the per-GPU width h / TP at which GEMMs run at half of that
    traffic_per_activation_byte: float  # HBM bytes moved per byte of saved activations, forward
    nvlink_efficiency: float  # achieved share of the NVLink line rate (NCCL bus bandwidth)
    network_efficiency: float  # achieved share of the inter-node line rate
    dp_overlap: float  # share of the overlappable compute that data-parallel traffic actually runs behind
    fitted_on: str
    gemm_efficiency_hopper: float = 0.80  # the thickest GEMMs' share of the peak, Hopper and later
    fp8_linear_speedup: float = 1.4  # FP8 linears' speed over BF16 (Transformer Engine, torchao: 1.2-1.6x)
    tp_overlap: float = 0.0  # share of the TP collectives Megatron-Core's --tp-comm-overlap hides


# Ampere: least squares on log step time over the 14 complete measured runs (Korthikanti et al. 2022 Table 5,
# K-1 to K-9; Narayanan et al. 2021 §5.2, N2-1 to N2-4; BLOOM 176B, BL-1), A100-80GB on Selene and Jean Zay.
# The priors of every fit (`PRIOR`) start from these.
AMPERE = Fit(0.80, 200.0, 3.0, 0.62, 0.67, 0.64,
             "14 A100 runs of measured-runs.csv: K-1 to K-9, N2-1 to N2-4, BL-1 (22B to 1T, 8 to 2,240 GPUs)")
# Where every fit starts, leave-one-source-out included: Ampere's constants above; Hopper's GEMMs at 0.72 of the
# peak (cuBLAS BF16 on H100 SXM reaches about 700-750 of 989 TFLOP/s on large shapes), FP8 linears 1.4x BF16
# (Transformer Engine, torchao float8: 1.2-1.6x), half of the TP traffic hidden by --tp-comm-overlap.
PRIOR = dataclasses.replace(AMPERE, gemm_efficiency_hopper=0.72, fp8_linear_speedup=1.4, tp_overlap=0.5,
                            fitted_on="priors")
# In use: `python -m dashboard.validation.throughput_validation --fit`, least squares on log step time over the 49
# complete rows of measured-runs.csv (14 A100 papers' runs) and measured-runs-2.csv (35 A100 / H100 / H200 runs of
# Megatron-Core, fms-fsdp, flash-attention, TinyLlama, OLMo-core, KempnerForge), each source family weighted alike
# (Korthikanti's K-1 to K-8 twice: `throughput_validation.family_weights`).
# The GEMMs' half-width goes to 0: on these rows no width penalty shows.
DEFAULT_FIT = Fit(0.8101, 0.0, 6.483, 0.7097, 0.6321, 0.8029,
                  "49 runs of measured-runs.csv and measured-runs-2.csv (A100, H100, H200; 0.76B to 1T; 4 to 6,144 "
                  "GPUs)", gemm_efficiency_hopper=0.6222, fp8_linear_speedup=1.253, tp_overlap=1.0)


def gemm_efficiency(width_per_gpu, fit: Fit = DEFAULT_FIT, generation_index=0.0) -> np.ndarray:
    """Share of the peak a GEMM of this per-GPU width reaches: top · w / (w + w½), top per GPU generation."""
    w = np.asarray(width_per_gpu, dtype=float)
    top = np.where(np.asarray(generation_index) >= 1, fit.gemm_efficiency_hopper, fit.gemm_efficiency)
    return top * w / (w + fit.gemm_half_width)


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


def link_gb_per_s(group_span, nvlink_domain, nvlink_gb_per_s, network_gb_per_s, fit: Fit = DEFAULT_FIT):
    """Achieved GB/s per GPU of a group spanning `group_span` consecutive GPUs: NVLink within the NVLink domain,
    else the network."""
    inside = np.asarray(group_span, dtype=float) <= nvlink_domain
    return np.where(inside, fit.nvlink_efficiency * np.asarray(nvlink_gb_per_s, dtype=float),
                    fit.network_efficiency * np.asarray(network_gb_per_s, dtype=float))


def collective_s(size_bytes, group, local, nvlink_bytes_per_s, network_bytes_per_s) -> np.ndarray:
    """Seconds of one all-gather or reduce-scatter of `size_bytes` over `group` GPUs, `local` of them in each NVLink
    domain, as NCCL runs it across nodes (one ring per NIC, or the tree): a ring within the domain over NVLink, and
    across the domains each local GPU carries 1/local of the data over its own NIC."""
    g = np.asarray(group, dtype=float)
    k = np.clip(np.asarray(local, dtype=float), 1.0, g)
    return (ring_bytes(size_bytes, k) / nvlink_bytes_per_s
            + ring_bytes(np.asarray(size_bytes, dtype=float) / k, g / k) / network_bytes_per_s)


def step_time(p: dict[str, np.ndarray], fit: Fit | None = None) -> dict[str, np.ndarray]:
    """Seconds per optimizer step and its parts (`PARTS`) for arrays of scenarios at their layouts.

    `p` holds the shape (`n_layers`, `d_model`, `n_heads`, `n_kv_heads`, `ffn_hidden_size`, `ffn_gated`,
    `vocab_size`, `experts`: FFN copies a token uses, `moe`: 1 for MoE), `seq_len`, `micro_batch_size`,
    `micro_batches` per step, the layout (`tensor_parallel`, `pipeline_parallel`, `context_parallel`,
    `expert_parallel`, `data_parallel`, `virtual_pipeline_stages`, `zero_stage`), `recompute_index`,
    `attention_index`, `fp8_activations`, `params_per_gpu` (what the GPU holds before ZeRO), `peak_tflops` (dense
    BF16), `hbm_tb_per_s`, `nvlink_gb_per_s`, `network_gb_per_s` and `gpus_per_node`; optionally
    `linear_peak_tflops` and `fp8_linears` (the FP8 peak and 1 when the linears run in FP8), `generation_index`,
    `framework_index`, `hsdp` and `nvlink_domain` (see the module text; absent: BF16, Ampere, `other`, the node).
    """
    fit = fit or DEFAULT_FIT  # read at call time: `throughput_validation` swaps it while it refits
    tp, pp, cp = p["tensor_parallel"], p["pipeline_parallel"], p["context_parallel"]
    ep, dp, v = p["expert_parallel"], p["data_parallel"], p["virtual_pipeline_stages"]
    h = np.asarray(p["d_model"], dtype=float)
    domain = p.get("nvlink_domain", p["gpus_per_node"])
    framework = np.asarray(p.get("framework_index", 0.0))
    megatron, prefetch = np.isin(framework, MEGATRON_CORE), np.isin(framework, FSDP_PREFETCH)
    recompute = np.asarray(p["recompute_index"])
    full, selective = recompute == 2, recompute == 1
    tokens = p["seq_len"] / cp * p["micro_batch_size"]  # per micro-batch on one context-parallel rank
    peak = p["peak_tflops"] * 1e12
    hbm = p["hbm_tb_per_s"] * 1e12

    def link(span):
        return link_gb_per_s(span, domain, p["nvlink_gb_per_s"], p["network_gb_per_s"], fit) * 1e9

    def data_parallel_s(size_bytes, group, local):
        """A data-parallel collective, `local` of the group's GPUs in each NVLink domain (`collective_s`)."""
        return collective_s(size_bytes, group, local, fit.nvlink_efficiency * p["nvlink_gb_per_s"] * 1e9,
                            fit.network_efficiency * p["network_gb_per_s"] * 1e9)

    # Compute of one layer, forward + backward (+ recompute), on one GPU; FP8 only on the linears.
    gemm, scores = layer_forward_flops(tokens, p["seq_len"], h, p["n_heads"], p["n_kv_heads"],
                                       p["ffn_hidden_size"], p["ffn_gated"], p["experts"], p["attention_index"])
    share_of_peak = gemm_efficiency(h / tp, fit, p.get("generation_index", 0.0))
    speed = peak * share_of_peak
    fp8_cap = np.asarray(p.get("linear_peak_tflops", p["peak_tflops"]), dtype=float) * 1e12 * share_of_peak
    linear_speed = np.where(np.asarray(p.get("fp8_linears", 0.0)) > 0,
                            np.fmin(fit.fp8_linear_speedup * speed, fp8_cap), speed)
    gemm_s, scores_s = gemm / tp / linear_speed, scores / tp / speed
    kept = memory.layer_activation_bytes(p["seq_len"], p["micro_batch_size"], h, p["n_heads"], p["n_kv_heads"],
                                         p["ffn_hidden_size"], p["ffn_gated"], p["experts"], tp, cp, 0.0,
                                         p["attention_index"], p["fp8_activations"])
    elementwise_s = fit.traffic_per_activation_byte * kept / hbm
    forward_s = gemm_s + scores_s + elementwise_s
    layer_s = 3.0 * forward_s + np.where(full, forward_s, np.where(selective, scores_s, 0.0))
    output_s = 3.0 * 2.0 * tokens * h * p["vocab_size"] / tp / speed

    # Tensor parallel: 4 ring collectives of T·h bf16 values forward, 4 backward, 4 more with full recompute;
    # Megatron-Core pipelines `tp_overlap` of them with the GEMMs.
    tp_bytes = ring_bytes(tokens * h * BF16_BYTES, tp) * (8.0 + np.where(full, 4.0, 0.0))
    tp_layer_s = tp_bytes / link(tp) * np.where(megatron, 1.0 - fit.tp_overlap, 1.0)
    # Context parallel: K and V of T tokens, (CP − 1) times forward, twice backward, behind attention compute.
    kv_bytes = 2.0 * tokens * h * p["n_kv_heads"] / p["n_heads"] * BF16_BYTES / tp
    cp_layer_s = np.fmax(3.0 * kv_bytes * (cp - 1.0) / link(tp * cp) - 3.0 * scores_s, 0.0)
    # Expert parallel: 2 all-to-alls forward and 2 backward of T·k·h values per MoE layer.
    routed = np.where(np.asarray(p["moe"]) > 0, p["experts"], 0.0)
    ep_bytes = 4.0 * tokens * routed * h * BF16_BYTES / tp * (ep - 1.0) / ep
    ep_layer_s = ep_bytes / link(tp * ep)

    # An assumed shape's layer stands for `layer_scale` of this model's (see `layout`); 1 for a given shape.
    scale = p.get("layer_scale", 1.0)
    layer_s, tp_layer_s, cp_layer_s, ep_layer_s = (x * scale for x in (layer_s, tp_layer_s, cp_layer_s, ep_layer_s))
    first, middle = memory.stage_layers(p["n_layers"], pp)
    per_layer = layer_s + tp_layer_s + cp_layer_s + ep_layer_s
    stage_s = np.fmax(middle * per_layer, first * per_layer + output_s)  # one micro-batch on the slowest stage
    share = np.where(middle * per_layer >= first * per_layer + output_s, middle, first)  # its layers
    p2p_bytes = 2.0 * v * tokens * h * BF16_BYTES / tp
    p2p_s = np.where(pp > 1, p2p_bytes / link(tp * cp * pp), 0.0)
    micro_s = stage_s + p2p_s
    m = p["micro_batches"]
    bubble_s = (pp - 1.0) / v * micro_s

    replicas = dp * cp
    zero3 = np.asarray(p["zero_stage"]) >= 3
    params = p["params_per_gpu"]
    forward_layer_s = scale * forward_s
    backward_s = share * (layer_s - forward_layer_s)  # one micro-batch's backward (and recompute) on the stage
    # Data-parallel groups stride over TP · CP (pipeline stages outermost): domain / (TP · CP) of a group share
    # an NVLink domain.
    local = np.fmax(np.floor(domain / (tp * cp)), 1.0)
    dp_exposed_s = np.where(replicas > 1, np.select(
        [prefetch & zero3, megatron & ~zero3],
        [_fsdp_exposed_s(p, fit, params, share, replicas, local, m, forward_layer_s, layer_s - forward_layer_s,
                         data_parallel_s),
         _megatron_exposed_s(data_parallel_s(params * BF16_BYTES, replicas, local), share * forward_layer_s,
                             backward_s, fit)],
        _other_exposed_s(params, replicas, zero3, m, stage_s, share * (2.0 * (gemm_s + scores_s + elementwise_s)),
                         link(tp * cp * pp * np.fmax(replicas, 2.0)), fit)), 0.0)

    compute_s = m * share * layer_s + m * (stage_s - share * per_layer)  # layers and the output layer
    tp_s, cp_s, ep_s = (m * share * x for x in (tp_layer_s, cp_layer_s, ep_layer_s))
    parts = {"compute_s": compute_s, "tp_comm_s": tp_s, "cp_comm_s": cp_s, "ep_comm_s": ep_s,
             "pp_bubble_s": bubble_s + m * p2p_s, "dp_comm_exposed_s": dp_exposed_s}
    return parts | {"step_time_s": sum(parts.values())}


def _other_exposed_s(params, replicas, zero3, m, stage_s, backward_s, network, fit: Fit) -> np.ndarray:
    """Framework `other`: the gradients' all-reduce in fp32, or for ZeRO-3 bf16 gradients reduce-scattered and
    the bf16 weights all-gathered forward and backward in every micro-batch (ZeRO's 3Ψ, arXiv 1910.02054 §7),
    behind `dp_overlap` of the last micro-batch's backward (for ZeRO-3, of every micro-batch's compute)."""
    traffic = np.where(zero3, ring_bytes(params * BF16_BYTES * (1.0 + 2.0 * m), replicas),
                       ring_bytes(2.0 * params * GRADIENT_BYTES, replicas))
    hidden_s = fit.dp_overlap * np.where(zero3, m * stage_s, backward_s)
    return np.fmax(traffic / network - hidden_s, 0.0)


def _megatron_exposed_s(one_way_s, forward_s, backward_s, fit: Fit) -> np.ndarray:
    """Megatron-Core's distributed optimizer: the bf16 gradients' reduce-scatter (`one_way_s`) behind `dp_overlap`
    of the last micro-batch's backward, the bf16 parameters' all-gather behind `dp_overlap` of the first one's
    forward."""
    return (np.fmax(one_way_s - fit.dp_overlap * backward_s, 0.0)
            + np.fmax(one_way_s - fit.dp_overlap * forward_s, 0.0))


def _fsdp_exposed_s(p, fit: Fit, params, layers, replicas, local, m, forward_s, backward_s,
                    data_parallel_s) -> np.ndarray:
    """FSDP / FSDP2 with prefetch (ZeRO-3): per layer and micro-batch, the all-gather behind the forward and the
    all-gather + reduce-scatter behind the backward, the excess exposed, plus the first layer's all-gather; with
    `hsdp`, sharded over the group's GPUs within one NVLink domain and the shard's gradients all-reduced across
    the domains once a step, behind `dp_overlap` of the last micro-batch's backward."""
    hsdp = np.asarray(p.get("hsdp", 0.0)) > 0
    shard = np.where(hsdp, np.fmin(replicas, local), replicas)
    layer_params = params / np.fmax(layers, 1.0)
    gather_s = data_parallel_s(layer_params * BF16_BYTES, shard, local)
    layer_exposed_s = np.fmax(gather_s - forward_s, 0.0) + np.fmax(2.0 * gather_s - backward_s, 0.0)
    sharded_s = m * (layers * layer_exposed_s + gather_s)
    copies = replicas / shard
    across_s = 2.0 * data_parallel_s(params / shard * BF16_BYTES, copies, 1.0)
    return np.where(shard > 1, sharded_s, 0.0) + np.where(
        copies > 1, np.fmax(across_s - fit.dp_overlap * layers * backward_s, 0.0), 0.0)
