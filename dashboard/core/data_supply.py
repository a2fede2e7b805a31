"""Data supply: epochs over the unique data and the effective tokens of repeated data (Muennighoff et al. 2023).

With U unique tokens and D tokens read, R = D / U − 1 repetitions beyond the first epoch are worth
D′ = U + U · R* · (1 − e^(−R/R*)) fresh tokens, with the fitted R* = 15.4 (arXiv 2305.16264).
Below one epoch D′ = D. Unset unique data (infinite U) means every token is fresh.
"""

from __future__ import annotations

import numpy as np

REPETITION_HALF_LIFE = 15.4  # R*_D, Muennighoff et al. 2023


def epochs(tokens_read, unique_tokens):
    """Passes over the unique data; 0 when unique data is unlimited (infinite or NaN)."""
    return np.where(np.isfinite(unique_tokens), tokens_read / unique_tokens, 0.0)


def _repeated(tokens_read, unique):
    return unique + unique * REPETITION_HALF_LIFE * (1.0 - np.exp(-(tokens_read / unique - 1.0) / REPETITION_HALF_LIFE))


def _unrepeated(effective, unique):
    share = (effective - unique) / (unique * REPETITION_HALF_LIFE)
    with np.errstate(divide="ignore", invalid="ignore"):
        repeats = np.where(share < 1.0, -REPETITION_HALF_LIFE * np.log1p(-np.fmin(share, 1.0)), np.inf)
    return unique * (1.0 + repeats)


def _beyond(values, unique_tokens, formula):
    """`values` with `formula(value, unique)` applied where a value exceeds the unique tokens (only there).

    The rows are gathered and scattered by index (boolean masks of random rows are several times slower);
    NaN unique tokens never exceed, like infinite ones.
    """
    values, unique = np.asarray(values, dtype=float), np.asarray(unique_tokens, dtype=float)
    if values.shape != unique.shape:
        values, unique = np.broadcast_arrays(values, unique)
    rows = np.flatnonzero(values > unique)
    result = values.copy()
    if rows.size:
        result.reshape(-1)[rows] = formula(np.take(values, rows), np.take(unique, rows))
    return result


def effective_tokens(tokens_read, unique_tokens):
    """Muennighoff's D′: the fresh-data equivalent of reading `tokens_read` from `unique_tokens` unique tokens."""
    return _beyond(tokens_read, unique_tokens, _repeated)


def tokens_for_effective(effective, unique_tokens):
    """The tokens to read for `effective` fresh-equivalent tokens (inverse of D′); inf from U · (1 + R*) on."""
    return _beyond(effective, unique_tokens, _unrepeated)


def tst_scarcity_factor(tokens, token_multiplier, unique_tokens):
    """How much longer TST must train to match the baseline's loss when data repeats (1 with fresh data).

    Assumed: TST's raw tokens are worth 1 / multiplier baseline tokens each, and repeats lose value by the
    same law. The baseline reads `tokens` (worth D′(tokens)); TST must read x with D′(x) = multiplier · D′(tokens),
    so it trains x / (multiplier · tokens) times as long as planned; inf when the unique data cannot supply it.
    """
    def longer(planned, unique):
        baseline = planned / multiplier
        return tokens_for_effective(multiplier * effective_tokens(baseline, unique), unique) / planned

    planned, multiplier = np.asarray(tokens * token_multiplier, dtype=float), np.asarray(token_multiplier, dtype=float)
    if planned.shape != multiplier.shape:
        planned, multiplier = np.broadcast_arrays(planned, multiplier)
    unique = np.asarray(unique_tokens, dtype=float)
    if unique.shape != planned.shape:
        unique = np.broadcast_to(unique, planned.shape)
    rows = np.flatnonzero(planned > unique)
    factor = np.ones(planned.shape)
    if rows.size:
        multiplier = np.take(multiplier, rows)
        factor.reshape(-1)[rows] = longer(np.take(planned, rows), np.take(unique, rows))
    return factor


def tst_net_savings_with_scarcity(tst: dict, factor):
    """TST's net saving (USD) when its longer run is paid for: the engine's net saving − (factor − 1) · TST cost.

    `tst` is the engine's `tst` result and `factor` is `tst_scarcity_factor`; −inf when TST cannot reach the
    baseline's loss from the unique data.
    """
    return tst["net_savings_usd"] - (factor - 1.0) * tst["tst_cost_usd"]
