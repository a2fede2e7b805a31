"""The three questions return only plans that run on the scenario's GPUs, or say that none does."""

import pytest

from dashboard.core.engine import scenario_outputs
from dashboard.core.questions import largest_fitting_params, optimal_for_budget, optimal_for_target_loss
from dashboard.core.scenario import Scenario

# 8 H100 (80 GB) at TP 8 and DP 1, sequence 4,096, no recompute, flash attention; each size takes the published shape
# nearest it. Near 30B that is Llama 2 70B's (80 layers, d_model 8,192, 8 KV of 64 heads, SwiGLU 28,672, vocabulary
# 32,000; the 13B shape ends at √(13 · 69) = 29.95B): activations 80 · 4,096 · (12.5 · 8,192 + 6 · 28,672) / 8 bytes,
# logits 4 · 4,096 · 32,000 / 8, reserve 1 + 1 + 0.05 · 80 GB, so states of 18 B · N / 8 fit while N stays below
# what is left of 80 GB (of 2³⁰ bytes).
GIB = 2.0**30
EIGHT = Scenario(gpu_count=8)
ACTIVATIONS_GB = 80 * 4096 * (12.5 * 8192 + 6 * 28672) / 8 / GIB
LOGITS_GB = 4 * 4096 * 32000 / 8 / GIB
N_MAX = (80 - 6 - ACTIVATIONS_GB - LOGITS_GB) * GIB * 8 / 18


def test_largest_model_that_fits_by_hand():
    assert largest_fitting_params(EIGHT) == pytest.approx(N_MAX, rel=1e-8)


def test_budget_answer_fits_when_the_optimum_does_not():
    answer = optimal_for_budget(EIGHT, 5e7)
    assert answer["memory_limited"] and answer["feasible"]
    assert answer["active_params"] == pytest.approx(N_MAX, rel=1e-8)
    assert answer["cost_usd"] == pytest.approx(5e7, rel=1e-6)
    assert answer["shape"]["description"] == "80 layers × 8,192, 64 heads (8 KV)"  # the proposed size's shape
    # The unconstrained optimum for $50M is far larger than what fits on 8 GPUs.
    assert optimal_for_budget(Scenario(gpu_count=4096), 5e7)["active_params"] > 3 * N_MAX


def test_budget_answer_on_enough_gpus_is_the_optimum():
    answer = optimal_for_budget(Scenario(), 5e6)
    assert answer["feasible"] and not answer["memory_limited"]


def test_target_loss_answer_fits_or_says_none_does():
    answer = optimal_for_target_loss(EIGHT, 2.0)
    assert answer["memory_limited"] and answer["feasible"]
    assert answer["predicted_loss"] == pytest.approx(2.0, rel=1e-9)
    fitted = Scenario(gpu_count=8, total_params=answer["total_params"], tokens=answer["tokens"])
    assert scenario_outputs(fitted)["feasible"]
    # Epoch fit: E + A / N_MAX^α = 1.8172 + 482.01 / 3.03e10^0.3478 ≈ 1.93 > 1.9, so no fitting model reaches 1.9.
    with pytest.raises(ValueError, match="needs a larger model than fits"):
        optimal_for_target_loss(EIGHT, 1.9)


def test_no_model_fits_when_activations_alone_overflow():
    # One GPU, a 1,000,000-token sequence: activations alone exceed 80 GB at any model size.
    with pytest.raises(ValueError, match="no model fits 1 × h100"):
        optimal_for_budget(Scenario(gpu_count=1, seq_len=1_000_000), 5e6)
