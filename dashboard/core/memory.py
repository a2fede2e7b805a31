"""GPU memory per GPU of a training layout: model states (ZeRO) and activations (Korthikanti et al. 2022).

GB are 10⁹ bytes. Every function works on numpy arrays (or plain numbers) and broadcasts.

Model states, mixed-precision Adam (ZeRO, arXiv 1910.02054 §3.1): 2 bytes of bf16 weights, 2 of bf16
gradients and 12 of fp32 master weights, Adam m and v per parameter. Tensor and pipeline parallelism
divide the parameters a GPU holds by TP·PP; MoE expert parameters (approximated as total − active, the
parameters a token does not use) are further divided by expert parallel. ZeRO then shards over data
parallel: stage 1 the 12 optimizer bytes, stage 2 also the gradients, stage 3 also the weights. A fully
sharded state is total / GPUs per GPU, whatever the layout (experts shard over DP / EP, each holding 1/EP).

Activations (Korthikanti et al. 2022, arXiv 2205.05198, 16-bit, per transformer layer, sequence s,
micro-batch b, hidden h, heads a, with sequence parallelism so TP divides everything):
no recompute s·b·h·(34 + 5·a·s/h)/TP; selective recompute 34·s·b·h/TP; full recompute only the layer
input, 2·s·b·h/TP. A 1F1B pipeline's first stage holds PP micro-batches of its ⌈L/PP⌉ layers.
"""

from __future__ import annotations

import numpy as np

GB = 1e9
WEIGHT_BYTES = 2.0
GRADIENT_BYTES = 2.0
OPTIMIZER_BYTES = 12.0
RECOMPUTE_MODES = ("none", "selective", "full")
# Bytes per s·b·h of one layer that do not grow with the sequence (Korthikanti eq. 1 and §4.2.2), by mode.
LINEAR_BYTES = (34.0, 34.0, 2.0)
# Whether the attention-score term 5·a·s/h is kept, by mode (selective and full recompute drop it).
SCORE_TERM = (1.0, 0.0, 0.0)


def params_per_gpu(total_params, active_params, tensor_parallel, pipeline_parallel, expert_parallel):
    """Parameters one GPU holds before ZeRO: (dense + experts / EP) / (TP · PP), experts = total − active."""
    experts = total_params - active_params
    return (active_params + experts / expert_parallel) / (tensor_parallel * pipeline_parallel)


def model_states_gb(local_params, sharded_params, zero_stage):
    """(weights, gradients, optimizer) GB per GPU for mixed-precision Adam at the given ZeRO stage.

    `local_params` is `params_per_gpu`; `sharded_params` is total parameters / GPUs, what a fully sharded
    state leaves on each GPU.
    """
    weights = WEIGHT_BYTES / GB * np.where(zero_stage >= 3, sharded_params, local_params)
    gradients = GRADIENT_BYTES / GB * np.where(zero_stage >= 2, sharded_params, local_params)
    optimizer = OPTIMIZER_BYTES / GB * np.where(zero_stage >= 1, sharded_params, local_params)
    return weights, gradients, optimizer


def layer_activation_bytes(seq_len, micro_batch, d_model, n_heads, tensor_parallel, recompute_index):
    """Bytes one layer keeps for the backward pass of one micro-batch (Korthikanti et al. 2022, with SP)."""
    index = np.asarray(recompute_index, dtype=int)
    linear = np.take(LINEAR_BYTES, index)
    score = np.take(SCORE_TERM, index) * 5.0 * n_heads * seq_len / d_model
    return seq_len * micro_batch * d_model * (linear + score) / tensor_parallel


def activation_bytes(layer_bytes, n_layers, pipeline_parallel):
    """Activation bytes on the busiest GPU: the first pipeline stage, PP micro-batches of ⌈L/PP⌉ layers (1F1B).

    `layer_bytes` is `layer_activation_bytes` at the run's TP.
    """
    return layer_bytes * np.ceil(n_layers / pipeline_parallel) * pipeline_parallel
