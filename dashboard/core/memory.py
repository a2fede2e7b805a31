"""GPU memory per GPU of a training layout: model states, activations, logits and the framework's reserve.

GB here are the GPU makers' gigabytes, 2³⁰ bytes (an "80 GB" H100 holds 80 GiB; Korthikanti et al. report GiB).
Every function works on numpy arrays (or plain numbers) and broadcasts.

Model states, bf16 mixed-precision Adam as Megatron-LM keeps it: 2 bytes of bf16 weights, 4 of fp32 main
gradients and 12 of fp32 master weights, Adam m and v per parameter, 18 in all (Megatron Core distributed
optimizer guide, "bf16 parameters, fp32 gradients: 18"; ZeRO, arXiv 1910.02054 §3.1 for the 12). A GPU holds
the layers of its pipeline stage: the middle stages ⌈L/PP⌉ layers, the first and last the fewer when PP does
not divide L (Llama 3: 126 layers over 16 stages, 7 on each end stage), the ends also the embedding and output
matrices (V·d each, untied). Tensor parallel divides what a stage holds; MoE routed experts are further divided
by expert parallel. ZeRO then shards over the data-parallel (and context-parallel) replicas: stage 1 the 12
optimizer bytes, stage 2 also the gradients, stage 3 also the weights (each expert over its DP·CP / EP copies).

Recipes (issue 48): the bytes per parameter follow the weight dtype, the gradient dtype, whether an fp32 master
copy exists and the optimizer state's dtype (`recipe_bytes`); each unset one takes the framework's default
(`FRAMEWORK_RECIPES`): Megatron-LM / NeMo / other the 18 above; DeepSpeed fp16 or bf16 gradients, 16 (ZeRO's
2 + 2 + 12); FSDP / torchtitan fp32 sharded parameters (the master) with fp32 gradients and moments, 16. With
`unsharded_gradient_accumulation` (ZeRO-2/3, more than one micro-batch) the gradients keep their unsharded size
in fp32 until the last micro-batch (`ACCUMULATION_BYTES`; `layout`).

Activations per layer and micro-batch (Korthikanti et al. 2022, arXiv 2205.05198, 16-bit, with sequence
parallelism so TP divides everything; s tokens per GPU after context parallel, b micro-batch, h width, a heads):
s·b·(8h + 4h + 4h·kv/heads + experts·(FFN bytes)) / TP: 8h of norm and block inputs, 4h of Q and attention
output, K and V by the K/V heads; the FFN keeps (4 + 2·gated)·ffn bytes per token (+2h of dispatched input
for each routed expert; half with `fp8_activations`, DeepSeek-V3's FP8 caching). `eager` attention is the
stack Korthikanti measured: it adds the 5·a·s bytes of attention scores (softmax, its dropout mask and output)
and 2h of dropout masks; `flash` is a fused-attention stack without dropout (as Llama 3, DeepSeek-V3 and
Mixtral train), which stores neither. Dense GPT with eager attention (kv = heads, plain 4h FFN) gives
Korthikanti's s·b·h·(34 + 5·a·s/h). Selective recompute drops the score term; full recompute keeps only each
layer's input, 2·s·b·h/TP. Without sequence parallelism the 10h of norms, dropout masks and block inputs are not
divided by TP (used only to check Korthikanti's Fig. 1).

In flight on the busiest stage: 1F1B keeps min(m, PP) micro-batches of the first stage's layers (min(m, PP − 1)
of the second stage's), m micro-batches per step; the interleaved schedule with v virtual stages keeps
min(m·v, 2(PP − 1) + (v − 1)·PP + 1) chunks of ⌈L/PP⌉/v layers, Korthikanti §4.2.3's L·(1 + (PP − 1)/(PP·v))
when m is large. The last stage also holds the loss's working set for one micro-batch, at its peak in the loss's
backward: `CROSS_ENTROPY_BYTES` per logit (token × vocabulary entry), over TP when the loss is vocab-parallel
(`loss_bytes`): Megatron's fused vocab-parallel cross-entropy keeps one fp32 buffer, computed in place (4·s·b·V/TP,
Korthikanti §4.3); PyTorch's cross_entropy on logits upcast to fp32 (torchtitan's `pred.float()`, Hugging Face's
`logits.float()`) holds the log-softmax output, its gradient and the logits' gradient in fp32 (12 bytes); on bf16
logits (KempnerForge) those three in bf16 and the logits the caller keeps (8 bytes). Without loss parallelism
(KempnerForge gathers the output layer's logits to every TP rank) each TP rank holds them whole.

Recompute (Korthikanti §5): the backward of a recomputed layer holds what the recompute dropped for that one layer
at once (`recompute_working_bytes`; full recompute: the whole layer's activations less its saved input). It runs
after the loss's backward has freed its working set, so it adds only what exceeds the loss's (with PP the parts
already add the first stage's activations to the last stage's loss, more than either stage holds).

Reserve: memory the framework takes beyond tensors, by default 1 GB of CUDA context (the CUDA runtime, cuBLAS
and cuDNN kernels a PyTorch process loads), 1 GB of NCCL communication buffers, and 5 % of the GPU's memory lost
to the caching allocator's fragmentation (PyTorch's allocator notes: "reserved but unallocated" memory). A first CUDA
call was measured at 723 MiB of context (PyTorch forums, 2020); ZeRO §3.2 reports out-of-memory with 30 % still free
from fragmentation in extreme cases; the buffers and the 5 % are assumptions (docs/method.md).
"""

from __future__ import annotations

import numpy as np

GB = float(2**30)
WEIGHT_BYTES = 2.0
GRADIENT_BYTES = 4.0
OPTIMIZER_BYTES = 12.0
STATE_BYTES = WEIGHT_BYTES + GRADIENT_BYTES + OPTIMIZER_BYTES
WEIGHT_DTYPE_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0, "fp8": 1.0}
GRADIENT_DTYPE_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0}
MOMENT_DTYPE_BYTES = {"fp32": 8.0, "bf16": 4.0, "8bit": 2.0}  # Adam's m and v
MASTER_BYTES = 4.0  # an fp32 master copy of the weights
# (weight dtype, gradient dtype, fp32 master copy, optimizer state dtype) by framework
FRAMEWORK_RECIPES = {
    "other": ("bf16", "fp32", True, "fp32"), "megatron": ("bf16", "fp32", True, "fp32"),
    "nemo": ("bf16", "fp32", True, "fp32"), "deepspeed": ("bf16", "bf16", True, "fp32"),
    "fsdp": ("fp32", "fp32", False, "fp32"), "torchtitan": ("fp32", "fp32", False, "fp32"),
}
RECOMPUTE_MODES = ("none", "selective", "full")
ATTENTION_MODES = ("flash", "eager")
LOGIT_BYTES = 4.0  # fp32 logits kept for the cross-entropy (Korthikanti §4.3)
# FSDP2 upcasts a gradient kept unsharded across micro-batches to its reduce dtype, fp32 in torchtitan's and
# KempnerForge's MixedPrecisionPolicy (torch FSDPParam.to_accumulated_grad_if_needed)
ACCUMULATION_BYTES = 4.0
# The loss's working set per logit at its peak (see the module text): Megatron's fused vocab-parallel fp32
# cross-entropy, in place; PyTorch's on logits upcast to fp32; PyTorch's on bf16 logits, the caller keeping them.
CROSS_ENTROPY_BYTES = {"fused_fp32": LOGIT_BYTES, "fp32": 12.0, "bf16": 8.0}
# (cross-entropy, loss parallel over TP) by framework: Megatron-Core / NeMo / Megatron-DeepSpeed
# vocab_parallel_cross_entropy; torchtitan's cross_entropy_loss (`pred.float()`) under its loss_parallel default;
# FSDP with Hugging Face models (`logits.float()`), the vocabulary not split.
FRAMEWORK_LOSS = {
    "other": ("fused_fp32", True), "megatron": ("fused_fp32", True), "nemo": ("fused_fp32", True),
    "deepspeed": ("fused_fp32", True), "torchtitan": ("fp32", True), "fsdp": ("fp32", False),
}
CONTEXT_GB = 1.0  # CUDA context: runtime, cuBLAS and cuDNN kernels of a PyTorch process
COMMUNICATION_GB = 1.0  # NCCL buffers of the data-, tensor- and pipeline-parallel groups
FRAGMENTATION = 0.05  # share of the GPU's memory the caching allocator holds but cannot use
UNKNOWN_GPU_RESERVE_GB = CONTEXT_GB + COMMUNICATION_GB  # a custom GPU without a memory figure


def reserve_gb(gpu_memory_gb, override_gb=np.nan) -> np.ndarray:
    """The framework's reserve: the scenario's `memory_reserve_gb`, else context + buffers + fragmentation."""
    memory = np.asarray(gpu_memory_gb, dtype=float)
    default = np.where(np.isnan(memory), UNKNOWN_GPU_RESERVE_GB,
                       CONTEXT_GB + COMMUNICATION_GB + FRAGMENTATION * memory)
    return np.where(np.isnan(override_gb), default, override_gb)


def stage_layers(n_layers, pipeline_parallel) -> tuple[np.ndarray, np.ndarray]:
    """(first stage's layers, a middle stage's layers): ⌈L/PP⌉ in the middle; the ends take the shortfall, half
    each (126 over 16: 8 and 7), at least one layer."""
    layers, pp = np.asarray(n_layers, dtype=float), np.asarray(pipeline_parallel, dtype=float)
    middle = np.ceil(layers / pp)
    short = pp * middle - layers
    first = np.where(pp > 1, np.fmax(middle - np.ceil(short / 2.0), 1.0), layers)
    return first, middle


def embedding_params(vocab_size, d_model, total_params, expert) -> np.ndarray:
    """Embedding and output matrices, V·d each (untied), at most half the dense parameters."""
    return np.fmin(2.0 * vocab_size * d_model, 0.5 * np.fmax(total_params - expert, 0.0))


def params_per_gpu(total_params, expert, embedding, n_layers, tensor_parallel, pipeline_parallel,
                   expert_parallel, embedding_parallel=1.0) -> np.ndarray:
    """Parameters the busiest GPU holds before ZeRO: its stage's layers (experts / EP) and, on an end stage, an
    embedding matrix (both when PP = 1), over TP. Without `embedding_parallel` (0) TP leaves the input embedding
    whole on every rank (KempnerForge's replicated token embedding) and splits only the output matrix."""
    first, middle = stage_layers(n_layers, pipeline_parallel)
    per_layer = (total_params - expert - embedding) / n_layers + expert / (n_layers * expert_parallel)
    ends = np.where(np.asarray(pipeline_parallel) > 1, 0.5 * embedding, embedding)
    whole_input = np.where(np.asarray(embedding_parallel) > 0, 0.0, 0.5 * embedding * (1.0 - 1.0 / tensor_parallel))
    return np.fmax(middle * per_layer / tensor_parallel, (first * per_layer + ends) / tensor_parallel + whole_input)


def sharded_params(params_no_ep, tensor_parallel, pipeline_parallel, gpu_count) -> np.ndarray:
    """What full sharding leaves per GPU: the stage's parameters (counted as with EP 1) over its DP·CP copies."""
    return params_no_ep * tensor_parallel * pipeline_parallel / gpu_count


def recipe_bytes(framework: str, weight_dtype: str | None = None, gradient_dtype: str | None = None,
                 master_weights: bool | None = None, optimizer_dtype: str | None = None) -> tuple[float, float, float]:
    """(weight, gradient, optimizer) bytes per parameter of a recipe, each unset part the framework's default; the
    optimizer's bytes are the fp32 master copy (if any) and Adam's two moments."""
    default = FRAMEWORK_RECIPES[framework]
    weights = WEIGHT_DTYPE_BYTES[weight_dtype or default[0]]
    gradients = GRADIENT_DTYPE_BYTES[gradient_dtype or default[1]]
    master = default[2] if master_weights is None else master_weights
    optimizer = MASTER_BYTES * master + MOMENT_DTYPE_BYTES[optimizer_dtype or default[3]]
    return weights, gradients, optimizer


def loss_bytes(framework: str, cross_entropy: str | None = None,
               loss_parallel: bool | None = None) -> tuple[float, bool]:
    """(bytes per logit of the loss's working set, whether TP splits the vocabulary for the loss), each unset part
    the framework's default (`FRAMEWORK_LOSS`)."""
    default = FRAMEWORK_LOSS[framework]
    kind = cross_entropy or default[0]
    return CROSS_ENTROPY_BYTES[kind], default[1] if loss_parallel is None else loss_parallel


def model_states_gb(local_params, sharded, zero_stage, weight_bytes=WEIGHT_BYTES, gradient_bytes=GRADIENT_BYTES,
                    optimizer_bytes=OPTIMIZER_BYTES):
    """(weights, gradients, optimizer) GB per GPU at the given ZeRO stage (`params_per_gpu`, `sharded_params`) and
    bytes per parameter (`recipe_bytes`; Megatron's 2 + 4 + 12 by default)."""
    weights = weight_bytes / GB * np.where(zero_stage >= 3, sharded, local_params)
    gradients = gradient_bytes / GB * np.where(zero_stage >= 2, sharded, local_params)
    optimizer = optimizer_bytes / GB * np.where(zero_stage >= 1, sharded, local_params)
    return weights, gradients, optimizer


def layer_activation_bytes(seq_len, micro_batch, d_model, n_heads, n_kv_heads, ffn_hidden_size, ffn_gated,
                           experts, tensor_parallel, context_parallel, recompute_index, attention_index,
                           fp8_activations=0.0, sequence_parallel=True) -> np.ndarray:
    """Bytes one layer keeps for the backward pass of one micro-batch (see the module text).

    `experts` is the FFN copies a token uses (top-k + shared for MoE, 1 dense); `recompute_index` indexes
    `RECOMPUTE_MODES`, `attention_index` `ATTENTION_MODES`; `fp8_activations` (1) keeps the FFN's saved inputs at
    one byte (DeepSeek-V3 §3.3.2 caches the MoE activations in FP8).
    """
    h = np.asarray(d_model, dtype=float)
    tokens = np.asarray(seq_len, dtype=float) / context_parallel * micro_batch
    routed = np.asarray(experts, dtype=float) > 1
    ffn = (4.0 + 2.0 * np.asarray(ffn_gated, dtype=float)) * ffn_hidden_size + np.where(routed, 2.0 * h, 0.0)
    ffn = ffn * np.where(np.asarray(fp8_activations, dtype=float) > 0, 0.5, 1.0)
    sharded = 4.0 * h + 4.0 * h * n_kv_heads / n_heads + experts * ffn
    scores = np.where((np.asarray(attention_index) == 1) & (np.asarray(recompute_index) == 0),
                      5.0 * n_heads * np.asarray(seq_len, dtype=float), 0.0)
    eager = np.asarray(attention_index) == 1
    replicated = (8.0 + 2.0 * eager) * h / np.where(sequence_parallel, tensor_parallel, 1.0)
    kept = replicated + (sharded + scores) / tensor_parallel
    return tokens * np.where(np.asarray(recompute_index) == 2, 2.0 * h / tensor_parallel, kept)


def layers_in_flight(n_layers, pipeline_parallel, virtual_stages, micro_batches) -> np.ndarray:
    """Layer activations (in layer-micro-batches) the busiest pipeline stage keeps at once (see the module text);
    `micro_batches` may be infinite (the steady state Korthikanti assume)."""
    pp = np.asarray(pipeline_parallel, dtype=float)
    v = np.asarray(virtual_stages, dtype=float)
    m = np.asarray(micro_batches, dtype=float)
    first, middle = stage_layers(n_layers, pp)
    one_f_one_b = np.fmax(np.fmin(m, pp) * first, np.fmin(m, pp - 1.0) * middle)
    chunks = np.fmin(m * v, 2.0 * (pp - 1.0) + (v - 1.0) * pp + 1.0)
    return np.where((v > 1) & (pp > 1), chunks * middle / v, one_f_one_b)


def recompute_working_bytes(seq_len, micro_batch, d_model, n_heads, n_kv_heads, ffn_hidden_size, ffn_gated,
                            experts, tensor_parallel, context_parallel, recompute_index, attention_index,
                            fp8_activations=0.0) -> np.ndarray:
    """Bytes the backward of one recomputed layer holds beyond what the layer kept (`layer_activation_bytes`): the
    activations the recompute dropped, for one layer and micro-batch (0 without recompute)."""
    shape = (seq_len, micro_batch, d_model, n_heads, n_kv_heads, ffn_hidden_size, ffn_gated, experts,
             tensor_parallel, context_parallel)
    whole = layer_activation_bytes(*shape, 0, attention_index, fp8_activations)
    return whole - layer_activation_bytes(*shape, recompute_index, attention_index, fp8_activations)


def logits_gb(seq_len, micro_batch, vocab_size, tensor_parallel, context_parallel,
              bytes_per_logit=LOGIT_BYTES) -> np.ndarray:
    """The loss's working set for one micro-batch on the last stage, GB: `bytes_per_logit` (`loss_bytes`; fp32
    logits by default) per token and vocabulary entry, over the TP that splits the vocabulary."""
    return bytes_per_logit * np.asarray(seq_len, dtype=float) / context_parallel * micro_batch * vocab_size / (
        tensor_parallel * GB)

