"""Data supply: epochs over the unique data and the effective tokens of repeated data (Muennighoff et al. 2023).

With U unique tokens and D tokens read, R = D / U − 1 repetitions beyond the first epoch are worth
D′ = U + U · R* · (1 − e^(−R/R*)) fresh tokens, with the fitted R* = 15.4 (arXiv 2305.16264).
Below one epoch D′ = D. Unset unique data (infinite U) means every token is fresh.
"""

from __future__ import annotations

import numpy as np

REPETITION_HALF_LIFE = 15.4  # R*_D, Muennighoff et al. 2023


def epochs(tokens_read, unique_tokens):
    """Passes over the unique data; 0 when unique data is unlimited."""
    return np.where(np.isfinite(unique_tokens), tokens_read / unique_tokens, 0.0)


def effective_tokens(tokens_read, unique_tokens):
    """Muennighoff's D′: the fresh-data equivalent of reading `tokens_read` from `unique_tokens` unique tokens."""
    unique = np.where(np.isfinite(unique_tokens), unique_tokens, np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        repeats = np.maximum(tokens_read / unique - 1.0, 0.0)
        repeated = unique + unique * REPETITION_HALF_LIFE * (1.0 - np.exp(-repeats / REPETITION_HALF_LIFE))
    return np.where(tokens_read <= unique, tokens_read, repeated)


def tokens_for_effective(effective, unique_tokens):
    """The tokens to read for `effective` fresh-equivalent tokens (inverse of D′); inf beyond U · (1 + R*)."""
    unique = np.where(np.isfinite(unique_tokens), unique_tokens, np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = (effective - unique) / (unique * REPETITION_HALF_LIFE)
        repeats = np.where(share < 1.0, -REPETITION_HALF_LIFE * np.log1p(-np.minimum(share, 1.0 - 1e-300)), np.inf)
        read = unique * (1.0 + repeats)
    return np.where(effective <= unique, effective, np.where(share < 1.0, read, np.inf))


def tst_scarcity_factor(tokens, token_multiplier, unique_tokens):
    """How much longer TST must train to match the baseline's loss when data repeats (1 with fresh data).

    Assumed: TST's raw tokens are worth 1 / multiplier baseline tokens each, and repeats lose value by the
    same law. The baseline reads `tokens` (worth D′(tokens)); TST must read x with D′(x) = multiplier · D′(tokens),
    so it trains x / (multiplier · tokens) times as long as planned; inf when the unique data cannot supply it.
    """
    needed = token_multiplier * effective_tokens(tokens, unique_tokens)
    return tokens_for_effective(needed, unique_tokens) / (token_multiplier * tokens)


def tst_net_savings_with_scarcity(tst: dict, tokens, unique_tokens):
    """TST's net saving (USD) when its longer run is paid for: baseline − factor · TST − pilot − switching.

    `tst` is the engine's `tst` result (baseline and TST cost, pilot and switching); −inf when TST cannot
    reach the baseline's loss from the unique data.
    """
    factor = tst_scarcity_factor(tokens, tst["tst_tokens"] / tokens, unique_tokens)
    with np.errstate(invalid="ignore"):
        return (tst["baseline_cost_usd"] - factor * tst["tst_cost_usd"] - tst["pilot_cost_usd"]
                - tst["switching_cost_usd"])
