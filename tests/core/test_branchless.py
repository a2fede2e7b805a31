"""`branchless.select` and `selector` give np.where's result bit for bit; the layout search's powers of two."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dashboard.core import layout
from dashboard.core.branchless import BRANCHY_BELOW, select, selector

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.25, 5e-324, 1.7976931348623157e308])


def _bits(values) -> np.ndarray:
    return np.asarray(values, dtype=float).view(np.int64)


@pytest.mark.parametrize("rows", [1, BRANCHY_BELOW - 1, BRANCHY_BELOW, 10_000])
@pytest.mark.parametrize("operands", ["arrays", "scalar true", "scalar false", "one row"])
def test_select_is_np_where_bit_for_bit(rows, operands):
    rng = np.random.default_rng(rows)
    mask = rng.random(rows) < 0.5
    when_true, when_false = rng.choice(SPECIAL, rows), rng.choice(SPECIAL, rows)
    if operands == "scalar true":
        when_true = -0.0
    elif operands == "scalar false":
        when_false = np.inf
    elif operands == "one row":
        when_true = when_true[:1]
    expected = np.where(mask, when_true, when_false)
    assert np.array_equal(_bits(select(mask, when_true, when_false)), _bits(expected))
    assert np.array_equal(_bits(selector(when_true, when_false)(mask)), _bits(expected))


def test_selector_serves_several_masks_without_changing_its_operands():
    rng = np.random.default_rng(7)
    sharded, local = rng.random(5_000), rng.random(5_000)
    kept = sharded.copy(), local.copy()
    held = selector(sharded, local)
    for stage in range(4):
        zero_stage = rng.integers(0, 4, 5_000)
        assert np.array_equal(held(zero_stage >= stage), np.where(zero_stage >= stage, sharded, local))
    assert np.array_equal(sharded, kept[0]) and np.array_equal(local, kept[1])


# (x, largest power of two dividing it; 1 for odd, non-whole or non-positive x), worked by hand
LOWBIT_CASES = [(96.0, 32.0), (64.0, 64.0), (7.0, 1.0), (7.5, 1.0), (0.0, 1.0), (-4.0, 1.0), (1024.0, 1024.0)]
# (x, power of two at or below it, at or above it; at least 1)
POW2_CASES = [(5.0, 4.0, 8.0), (8.0, 8.0, 8.0), (1.0, 1.0, 1.0), (0.3, 1.0, 1.0), (1000.0, 512.0, 1024.0),
              (math.inf, math.inf, math.inf), (1.5 * 2.0**1023, 2.0**1023, math.inf), (math.nan, 1.0, 1.0)]


@pytest.mark.parametrize(("x", "expected"), LOWBIT_CASES)
def test_lowbit_of_one_number_and_of_arrays(x, expected):
    assert float(layout.lowbit(x)) == expected
    values = np.full(BRANCHY_BELOW + 5, x)
    values[0] = 96.0  # a mix of rows, whole and not
    assert layout.lowbit(values)[1] == expected and layout.lowbit(values)[0] == 32.0


@pytest.mark.parametrize(("x", "floor", "ceil"), POW2_CASES)
def test_powers_of_two_of_one_number_and_of_arrays(x, floor, ceil):
    assert float(layout.pow2_floor(x)) == floor and float(layout.pow2_ceil(x)) == ceil
    values = np.full(3, x)
    assert list(layout.pow2_floor(values)) == [floor] * 3 and list(layout.pow2_ceil(values)) == [ceil] * 3


@pytest.mark.parametrize("rows", [10, 10_000])
def test_select_keeps_float32_operands_in_float32(rows):
    # Monte Carlo prices its draws in float32: a selection must not turn them into float64.
    rng = np.random.default_rng(3)
    mask = rng.random(rows) < 0.5
    when_true, when_false = rng.random(rows).astype(np.float32), np.float32(-0.0)
    chosen = select(mask, when_true, when_false)
    assert chosen.dtype == np.float32
    assert np.array_equal(chosen.view(np.int32), np.where(mask, when_true, when_false).view(np.int32))
    assert select(mask, when_true.astype(float), 1.0).dtype == np.float64
