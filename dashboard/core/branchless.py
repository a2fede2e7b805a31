"""`np.where` for float arrays without a branch per row, bit for bit the same result.

A mask that changes at random from row to row (which layout fits, which scenarios repeat their data) makes
`np.where` mispredict about half its branches, several times slower than arithmetic on the same arrays.
Selecting the bits with integer masks costs the same whatever the mask.
"""

from __future__ import annotations

import numpy as np

BRANCHY_BELOW = 1024  # fewer rows than this: np.where itself (its branches cost less than the bit work)


def select(mask, when_true, when_false):
    """`np.where(mask, when_true, when_false)` for floats (NaN, infinities and signed zeros kept exactly), in float32
    when the operands are float32 and float64 otherwise."""
    dtype = np.float32 if np.result_type(when_true, when_false) == np.float32 else np.float64
    if np.size(mask) < BRANCHY_BELOW:
        return np.where(mask, when_true, when_false).astype(dtype, copy=False)
    ints = np.int32 if dtype == np.float32 else np.int64
    false_bits = np.asarray(when_false, dtype=dtype).view(ints)
    bits = np.asarray(when_true, dtype=dtype).view(ints) ^ false_bits  # the bits that differ
    shape = np.broadcast_shapes(np.shape(mask), bits.shape)
    if bits.shape != shape:
        bits = np.broadcast_to(bits, shape).copy()
    np.multiply(bits, mask, out=bits)  # kept where the mask holds, zero elsewhere (one buffer, no branch)
    bits ^= false_bits
    return bits.view(dtype)


def selector(when_true, when_false):
    """`select(mask, when_true, when_false)` as a function of the mask: for several masks over the same operands,
    their differing bits are computed once."""
    false_bits = np.asarray(when_false, dtype=float).view(np.int64)
    differ = np.asarray(when_true, dtype=float).view(np.int64) ^ false_bits

    def chosen(mask):
        if np.size(mask) < BRANCHY_BELOW:
            return select(mask, when_true, when_false)
        bits = np.multiply(differ, mask, dtype=np.int64)
        bits ^= false_bits
        return bits.view(float)

    return chosen
