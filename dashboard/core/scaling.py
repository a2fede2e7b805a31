"""Chinchilla-style loss law L(N, D) = E + A/N^α + B/D^β, its named fits and the compute-optimal split."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LossFit:
    key: str
    label: str
    E: float
    A: float
    B: float
    alpha: float
    beta: float
    source: str


FITS: dict[str, LossFit] = {
    "epoch2024": LossFit(
        "epoch2024", "Besiroglu et al. 2024 (Epoch refit)", 1.8172, 482.01, 2085.43, 0.3478, 0.3658,
        "Besiroglu, Erdil, Barnett, You, 'Chinchilla Scaling: A replication attempt', arXiv 2404.10102",
    ),
    "hoffmann2022": LossFit(
        "hoffmann2022", "Hoffmann et al. 2022 (Approach 3, rounded)", 1.69, 406.4, 410.7, 0.34, 0.28,
        "Hoffmann et al., 'Training Compute-Optimal Large Language Models', arXiv 2203.15556, §3.3",
    ),
}
FIT_KEYS = tuple(FITS)
_FIT_COLUMNS = np.array([[f.E, f.A, f.B, f.alpha, f.beta] for f in FITS.values()]).T.copy()  # E, A, B, α, β


def fit_arrays(fit_index):
    """Constants (E, A, B, α, β) for an array of indices into FIT_KEYS."""
    index = np.asarray(fit_index, dtype=int)
    return tuple(np.take(column, index) for column in _FIT_COLUMNS)  # each one contiguous array



def predicted_loss(params, tokens, E, A, B, alpha, beta):
    """L(N, D) = E + A/N^α + B/D^β."""
    return E + A / np.power(params, alpha) + B / np.power(tokens, beta)


def compute_optimal(flops, A, B, alpha, beta):
    """N*, D* minimising L under C = 6ND: N* = G·(C/6)^(β/(α+β)), D* = (C/6)/N*, G = (αA/(βB))^(1/(α+β))."""
    g = np.power(alpha * A / (beta * B), 1.0 / (alpha + beta))
    params = g * np.power(flops / 6.0, beta / (alpha + beta))
    return params, flops / 6.0 / params


def optimal_loss(flops, E, A, B, alpha, beta):
    """The lowest loss reachable with C FLOPs (at N*, D*)."""
    params, tokens = compute_optimal(flops, A, B, alpha, beta)
    return predicted_loss(params, tokens, E, A, B, alpha, beta)


def tokens_for_loss_reduction(params, tokens, reduction, B, beta):
    """Tokens needed at fixed N to lower the loss by `reduction`; inf when the data term is already smaller."""
    data_term = B / np.power(tokens, beta)
    remaining = data_term - reduction
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(remaining > 0, np.power(B / np.where(remaining > 0, remaining, 1.0), 1.0 / beta), np.inf)
