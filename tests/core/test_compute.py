"""FLOPs and GPU-hours against published runs (published-facts.md §1)."""

import pytest

from dashboard.core import compute


@pytest.mark.parametrize(
    ("label", "active_params", "tokens", "expected_flops"),
    [
        # Llama 3 Herd §3.2.1: 405B on 15.6T tokens is 3.8e25 FLOPs; 6·405e9·15.6e12 = 3.7908e25.
        ("Llama 3.1 405B", 405e9, 15.6e12, 3.7908e25),
        # Chinchilla: 6·70e9·1.4e12 = 5.88e23 (paper: ~5.76e23 with its own N).
        ("Chinchilla 70B", 70e9, 1.4e12, 5.88e23),
        # DeepSeek-V3 uses its 37B active params: 6·37e9·14.8e12 = 3.2856e24.
        ("DeepSeek-V3 (MoE, active)", 37e9, 14.8e12, 3.2856e24),
    ],
)
def test_model_flops_is_six_n_d(label, active_params, tokens, expected_flops):
    assert compute.model_flops(active_params, tokens) == pytest.approx(expected_flops, rel=1e-12)


@pytest.mark.parametrize(
    ("label", "flops", "peak_tflops", "mfu", "expected_gpu_hours", "rel"),
    [
        # published-facts §1c: at 40 % MFU on H100, Llama 3.1 405B needs ≈26.6M GPU-hours.
        ("Llama 3.1 405B, H100, 40 %", 3.7908e25, 989, 0.40, 26.6e6, 2e-3),
        # Llama 2 70B: 1,720,320 A100-hours published, implied MFU 43.5 %.
        ("Llama 2 70B, A100, 43.5 %", 6 * 70e9 * 2e12, 312, 0.435, 1_720_320, 5e-3),
        # BLOOM: 1,082,990 A100-hours, implied MFU 31.8 %.
        ("BLOOM 176B, A100, 31.8 %", 6 * 176e9 * 366e9, 312, 0.318, 1_082_990, 5e-3),
    ],
)
def test_gpu_hours_match_published_runs(label, flops, peak_tflops, mfu, expected_gpu_hours, rel):
    assert compute.gpu_hours(flops, peak_tflops, mfu) == pytest.approx(expected_gpu_hours, rel=rel)


@pytest.mark.parametrize(
    ("causal", "expected"),
    [
        # 12 · 32 layers · 4096 · 8192 = 12,884,901,888 FLOPs per token; halved for causal masks.
        (False, 12_884_901_888.0),
        (True, 6_442_450_944.0),
    ],
)
def test_attention_term(causal, expected):
    assert compute.attention_flops_per_token(32, 4096, 8192, causal) == expected


def test_recomputation_is_eight_n_d():
    six_nd = compute.model_flops(1e9, 1e12)
    assert compute.hardware_flops(six_nd, True) == pytest.approx(8 * 1e9 * 1e12)
    assert compute.hardware_flops(six_nd, False) == six_nd
