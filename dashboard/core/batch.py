"""Batch size and steps: the global batch, optimizer steps, the pipeline bubble and how many GPUs a batch keeps busy.

The default global batch is DeepSeek LLM's fitted law for the optimal batch (arXiv 2401.02954 §3.1):
B_opt = 0.292 · C^0.3271 tokens, with C the training compute in FLOPs (here the model FLOPs). The pipeline
bubble of 1F1B is (PP − 1) / (v·m + PP − 1) with m micro-batches per step and v virtual stages (Narayanan et al.
2021). A step has global-batch-sequences / micro-batch micro-batches to spread over data-parallel replicas of
TP · PP · CP GPUs, so at most ⌈global batch sequences / micro-batch⌉ · TP · PP · CP GPUs are busy; GPUs beyond
that idle but are billed.
"""

from __future__ import annotations

import numpy as np

DEEPSEEK_BATCH_COEFFICIENT = 0.292
DEEPSEEK_BATCH_EXPONENT = 0.3271


def default_global_batch_tokens(flops):
    """DeepSeek LLM's optimal batch in tokens for training compute `flops` (arXiv 2401.02954, eq. 1), in the
    FLOPs' float precision (Monte Carlo's float32 draws stay float32)."""
    flops = np.asarray(flops)
    if flops.dtype.kind != "f":
        flops = flops.astype(float)
    return DEEPSEEK_BATCH_COEFFICIENT * flops**DEEPSEEK_BATCH_EXPONENT


def global_batch_sequences(batch_tokens, seq_len):
    """Sequences per optimizer step: the batch in tokens over the sequence length, at least one."""
    return np.maximum(np.rint(batch_tokens / seq_len), 1.0)


def max_useful_gpus(batch_sequences, micro_batch, tensor_parallel, pipeline_parallel):
    """The most GPUs one step keeps busy: one micro-batch per data-parallel replica of TP · PP GPUs, the last
    micro-batch possibly part-full (128 sequences at micro-batch 3 keep 43 replicas busy)."""
    return np.maximum(np.ceil(batch_sequences / micro_batch), 1.0) * tensor_parallel * pipeline_parallel


def micro_batches_per_step(batch_sequences, micro_batch, data_parallel):
    """Micro-batches each data-parallel replica runs per step (gradient accumulation), at least one."""
    return np.maximum(np.ceil(batch_sequences / (micro_batch * data_parallel)), 1.0)


def pipeline_bubble_fraction(pipeline_parallel, micro_batches, virtual_stages=1.0):
    """Share of a 1F1B step a pipeline stage waits: (PP − 1) / (v·m + PP − 1); the interleaved schedule's v virtual
    stages per GPU divide the bubble by v (Narayanan et al. 2021 §2.2.2)."""
    return (pipeline_parallel - 1.0) / (virtual_stages * micro_batches + pipeline_parallel - 1.0)


def idle_factor(gpu_count, useful_gpus):
    """Billed GPUs per busy GPU: GPUs / min(GPUs, max useful GPUs), 1 when the batch keeps every GPU busy."""
    return gpu_count / np.minimum(gpu_count, useful_gpus)
