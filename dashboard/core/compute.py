"""Training compute: FLOPs from parameters and tokens, and GPU-hours from FLOPs, peak and utilisation."""

from __future__ import annotations

import numpy as np

SECONDS_PER_HOUR = 3600.0


def attention_flops_per_token(n_layers, d_model, seq_len, causal_halving):
    """Training FLOPs of attention scores per token: 12·L·d·s (PaLM App. B), halved for causal masks."""
    full = 12.0 * n_layers * d_model * seq_len
    return np.where(causal_halving, 0.5 * full, full)


def model_flops(active_params, tokens, attention_per_token=0.0):
    """Model FLOPs of training: (6·N_active + attention) · D (Kaplan et al. 2020; MoE uses active params)."""
    return (6.0 * active_params + attention_per_token) * tokens


def hardware_flops(flops_model, activation_recompute):
    """FLOPs the hardware executes: with full recomputation one more forward pass, 8/6 of the model FLOPs."""
    return np.where(activation_recompute, flops_model * (8.0 / 6.0), flops_model)


def gpu_hours(flops, peak_tflops, utilisation):
    """GPU-hours = FLOPs / (peak dense BF16 FLOP/s · utilisation · 3600)."""
    return flops / (utilisation * (peak_tflops * 1e12 * SECONDS_PER_HOUR))
