"""The memory model's terms beyond Korthikanti's (issue 48), each worked by hand: the loss's working set per
cross-entropy kind and with or without loss parallelism, sequence parallelism's split of the norm inputs, the
recomputed layer's working set, FSDP2's fp32 unsharded gradient accumulation and the input embedding kept whole."""

from __future__ import annotations

import pytest

from dashboard.core import memory
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario

GIB = 2.0**30
# Llama-3-style 7B layer (KempnerForge's): h = 4,096, 32 heads, 8 K/V heads, SwiGLU FFN 14,336; s = 4,096, b = 4.
S, B, H, HEADS, KV, FFN, V = 4096, 4, 4096, 32, 8, 14336, 128256
FLASH, EAGER = memory.ATTENTION_MODES.index("flash"), memory.ATTENTION_MODES.index("eager")
NONE, SELECTIVE, FULL = (memory.RECOMPUTE_MODES.index(mode) for mode in ("none", "selective", "full"))


@pytest.mark.parametrize(("kind", "bytes_per_logit"), [
    ("fused_fp32", 4),  # Megatron: one fp32 buffer, exp and the gradient in place (Korthikanti §4.3)
    ("fp32", 12),  # logits upcast: log-softmax output, its gradient, the logits' gradient, 4 bytes each
    ("bf16", 8),  # bf16 logits kept by the loop + those three in bf16
])
def test_the_loss_working_set_per_cross_entropy_kind(kind, bytes_per_logit):
    got = memory.logits_gb(S, B, V, 1, 1, memory.CROSS_ENTROPY_BYTES[kind])
    assert float(got) == pytest.approx(bytes_per_logit * 4096 * 4 * 128256 / GIB, rel=1e-12)
    assert float(memory.logits_gb(S, B, V, 1, 1, 8.0)) == pytest.approx(15.65625, rel=1e-12)  # 8·16,384·128,256 B


@pytest.mark.parametrize(("framework", "cross_entropy", "loss_parallel", "expected"), [
    ("megatron", None, None, (4.0, True)),
    ("other", None, None, (4.0, True)),
    ("deepspeed", None, None, (4.0, True)),
    ("torchtitan", None, None, (12.0, True)),  # cross_entropy_loss upcasts (pred.float()), loss_parallel on
    ("fsdp", None, None, (12.0, False)),  # Hugging Face logits.float(), the vocabulary not split
    ("torchtitan", "bf16", False, (8.0, False)),  # KempnerForge, as told
])
def test_a_framework_s_loss_defaults(framework, cross_entropy, loss_parallel, expected):
    assert memory.loss_bytes(framework, cross_entropy, loss_parallel) == expected


def test_without_loss_parallel_every_tp_rank_holds_the_whole_logits():
    keys = dict(total_params=8e9, n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, ffn_hidden_size=14336,
                ffn_type="gated", vocab_size=V, seq_len=S, micro_batch_size=B, gpu_type="H200", gpu_count=4,
                tensor_parallel=4, pipeline_parallel=1, zero_stage=3, global_batch_tokens=S * B,
                cross_entropy="bf16")
    split, whole = (scenario_outputs(Scenario(**keys, loss_parallel=parallel))["memory"]["logits_gb"]
                    for parallel in (True, False))
    assert whole == pytest.approx(15.65625, rel=1e-12) and split == pytest.approx(15.65625 / 4, rel=1e-12)


def test_a_tp_rank_without_sequence_parallel_holds_the_full_norm_inputs():
    # Flash, no recompute, per token: 8h of norm and block inputs (replicated without SP), and over TP 4h of Q and
    # the attention output, 4h·kv/heads = h of K and V, 6·ffn of the SwiGLU FFN: 4h + h + 86,016 = 106,496 bytes.
    args = (S, 1, H, HEADS, KV, FFN, 1.0, 1.0, 4, 1, NONE, FLASH)
    without = float(memory.layer_activation_bytes(*args, sequence_parallel=False))
    with_sp = float(memory.layer_activation_bytes(*args, sequence_parallel=True))
    assert without == 4096 * (8 * 4096 + 106496 / 4)  # 243,269,632 bytes
    assert with_sp == 4096 * (8 * 4096 + 106496) / 4
    assert without - with_sp == 4096 * 8 * 4096 * 3 / 4  # the norm inputs three other ranks would have held


@pytest.mark.parametrize(("recompute", "attention", "expected_bytes"), [
    # Full: the whole layer (13h + 6·ffn per token) less its kept input 2h: 11·4,096 + 86,016 = 131,072 bytes a
    # token, × 16,384 tokens = 2³¹ bytes, 2 GiB.
    (FULL, FLASH, 2**31),
    # Selective with eager attention: one layer's scores, softmax and dropout mask, 5·a·s bytes a token.
    (SELECTIVE, EAGER, 5 * 32 * 4096 * 16384),
    (SELECTIVE, FLASH, 0),  # flash keeps no scores: nothing to regenerate
    (NONE, EAGER, 0),
])
def test_the_recomputed_layer_s_working_set(recompute, attention, expected_bytes):
    got = memory.recompute_working_bytes(S, B, H, HEADS, KV, FFN, 1.0, 1.0, 1, 1, recompute, attention)
    assert float(got) == expected_bytes


def test_the_recompute_working_set_beyond_the_loss_s():
    # 7B-shape on one H200 at full recompute: the loss's fp32 logits (Megatron's 4 bytes, 7.83 GiB) exceed the
    # 2 GiB working set, so activations are the 32 saved inputs (2·s·b·h each, 4 GiB) alone; with a vocabulary of
    # 1,024 (0.0625 GiB of logits) the working set adds 2 − 0.0625 GiB.
    keys = dict(total_params=8e9, n_layers=32, d_model=H, n_heads=HEADS, n_kv_heads=KV, ffn_hidden_size=FFN,
                ffn_type="gated", seq_len=S, micro_batch_size=B, gpu_type="H200", gpu_count=1, tensor_parallel=1,
                pipeline_parallel=1, zero_stage=0, global_batch_tokens=S * B, activation_recompute="full")
    large, small = (scenario_outputs(Scenario(**keys, vocab_size=vocab))["memory"] for vocab in (V, 1024))
    assert large["activations_gb"] == pytest.approx(4.0, rel=1e-12)
    assert small["logits_gb"] == pytest.approx(4 * S * B * 1024 / GIB, rel=1e-12)
    assert small["activations_gb"] == pytest.approx(4.0 + 2.0 - 0.0625, rel=1e-12)


@pytest.mark.parametrize(("zero", "expected_bytes"), [
    (3, 4.0 * 7.5e9),  # FSDP2 keeps every parameter's gradient unsharded, in fp32 (its reduce dtype)
    (0, 2.0 * 7.5e9),  # no sharding: the bf16 gradients themselves accumulate
])
def test_fsdp2_accumulates_unsharded_gradients_in_fp32(zero, expected_bytes):
    scenario = Scenario(total_params=7.5e9, gpu_count=8, tensor_parallel=1, pipeline_parallel=1, zero_stage=zero,
                        seq_len=4096, global_batch_tokens=8 * 4096 * 2, framework="torchtitan", gradient_dtype="bf16",
                        unsharded_gradient_accumulation=True, gpu_type="H200")
    result = scenario_outputs(scenario)
    assert result["micro_batches_per_step"] == 2
    assert result["memory"]["gradients_gb"] == pytest.approx(expected_bytes / GIB, rel=1e-9)


def test_the_input_embedding_kept_whole_on_every_tp_rank():
    # 8.03e9 parameters, embedding + output 2·V·d = 1.0507e9, TP 4: the split layout holds all of it over 4; kept
    # whole, the input matrix V·d adds its other three quarters.
    total, embedding = 8.03e9, 2 * 128256 * 4096
    split = float(memory.params_per_gpu(total, 0.0, embedding, 32, 4, 1, 1))
    whole = float(memory.params_per_gpu(total, 0.0, embedding, 32, 4, 1, 1, 0.0))
    assert split == pytest.approx(total / 4, rel=1e-12)
    assert whole == pytest.approx(total / 4 + 128256 * 4096 * 3 / 4, rel=1e-12)
    assert float(memory.params_per_gpu(total, 0.0, embedding, 32, 1, 1, 1, 0.0)) == pytest.approx(total)  # TP 1
