"""Number formatting shared by tiles, tables and charts."""

import math

import pytest

from dashboard import format as fmt
from dashboard.format import counted, exact, number, short, signed, table_decimals


@pytest.mark.parametrize(("value", "text"), [(405e9, "405B"), (1.5e9, "1.5B"), (15.6e12, "15.6T"), (512, "512"),
                                             (2e12, "2T"), (131072, "131k")])
def test_short(value, text):
    assert short(value) == text


# The one display format: three significant figures, the unit's suffix, trailing zeros dropped.
@pytest.mark.parametrize(("value", "unit", "text"), [
    (441_234.5, "$", "$441k"),
    (903.4, "$", "$903"),
    (69.02, "$", "$69"),
    (0.2213, "$", "$0.221"),
    (-1_250_000, "$", "-$1.25M"),
    (999_600, "$", "$1M"),  # rounds up to the next suffix rather than "$1,000k"
    (2.5e9, "$", "$2.5B"),
    (8.4e22, "FLOPs", "8.4×10²² FLOPs"),
    (3.7896e25, "FLOPs", "3.79×10²⁵ FLOPs"),
    (26_617_796, "count", "26.6M"),
    (2e12, "count", "2T"),
    (1234, "count", "1.23k"),
    (5e15, "count", "5×10¹⁵"),
    (1024, "integer", "1,024"),
    (0.0002, "fraction", "0.02 %"),
    (0.4, "fraction", "40 %"),
    (0.12345, "fraction", "12.3 %"),
    (4.8, "days", "4.8 days"),
    (98.24, "GB", "98.2 GB"),
    (18_700, "GB", "18.7 TB"),
    (2_500_000, "GB", "2.5 PB"),
    (20_340, "bytes", "20.3 kB"),  # a workspace dataset's size on disk, not "0.00 GB"
    (1_903_456_789, "bytes", "1.9 GB"),
    (999_700, "bytes", "1 MB"),
    (512, "bytes", "512 bytes"),
    (2.582, "×", "2.58×"),
    (2.04781, "nats", "2.048"),  # a loss to three decimals: 0.01 nats matter at equal-loss comparisons
    (3.0, "nats", "3.000"),
    (0, "$", "$0"),
    (float("nan"), "$", "n/a"),
    (None, "count", "n/a"),
    (float("inf"), "h", "∞"),
    (True, "", "yes"),
])
def test_number(value, unit, text):
    assert number(value, unit) == text


@pytest.mark.parametrize(("value", "unit", "text"), [
    (441_234.5, "$", "$441,234.50"),
    (0.2213, "$", "$0.2213"),
    (-0.5, "$", "-$0.5"),
    (26_617_796, "count", "26,617,796"),
    (8.4123e22, "FLOPs", "8.4123×10²² FLOPs"),
    (0.123456, "fraction", "12.3456 %"),
    (2.582005033557047, "×", "2.582005034×"),
    (4.8321, "days", "4.8321 days"),
])
def test_exact(value, unit, text):
    assert exact(value, unit) == text


@pytest.mark.parametrize(("value", "unit", "text"), [
    (12_345, "$", "+$12.3k"), (-1.5, "days", "-1.5 days"), (0.0, "$", "+$0"), (-512, "integer", "-512"),
])
def test_signed(value, unit, text):
    assert signed(value, unit) == text


def test_an_unknown_unit_is_named():
    with pytest.raises(KeyError, match="furlongs"):
        number(1.0, "furlongs")


@pytest.mark.parametrize(("values", "decimals"), [
    ([951_204.37, 1_880.5, 12.25], 0),    # a sum over $1k: whole units for the column
    ([999.99, 12.5], 2),                  # every entry under 1,000 keeps its cents
    ([-1_000.0, 3.0], 0),                 # a negative part counts by its size
    ([float("nan"), None, "n/a", 5.0], 2),  # unknowns are skipped
    ([], 2),
])
def test_table_decimals(values, decimals):
    assert table_decimals(values) == decimals


@pytest.mark.parametrize(("days", "text"), [
    (4.85, "4.85 days"),
    (364.0, "364 days"),
    (365.25, "1.0 years"),
    (23_400.0, "64.1 years"),  # 23,400 / 365.25 = 64.07
    (366.0, "1.0 years"),  # 366 / 365.25 = 1.002
    (40_000.0, "110 years"),  # 109.5
])
def test_a_wall_clock_over_a_year_says_so(days, text):
    assert number(days, "days") == text


@pytest.mark.parametrize(("value", "base", "unit", "expected"), [
    pytest.param(4.80183, 4.8, "days", "≈ same", id="below-the-displayed-precision"),  # both "4.8 days"
    pytest.param(446_000.0, 444_000.0, "$", "≈ same", id="under-half-a-percent"),  # 2,000 / 444,000 = 0.45 %
    pytest.param(2.066, 2.065, "nats", "≈ same", id="loss-0.05-percent"),  # shown 2.066 vs 2.065, 0.05 %
    pytest.param(0.000765 + 1.0, 1.0, "$", "≈ same", id="a-fraction-of-a-cent"),  # the "+$0.000765"
    pytest.param(456_000.0, 446_000.0, "$", "+$10k", id="a-change"),  # 2.2 %
    pytest.param(216_000.0, 446_000.0, "$", "-$230k", id="tst"),
    pytest.param(0.93, 0.89, "fraction", "+4 pp", id="fractions-in-points"),
    pytest.param(0.8905, 0.89, "fraction", "≈ same", id="a-share-that-does-not-move"),
    pytest.param(1.0, 0.0, "count", "+1", id="from-zero"),
    pytest.param(0.0, 0.0, "count", "≈ same", id="both-zero"),
    pytest.param(math.inf, math.inf, "$", "≈ same", id="both-infinite"),
])
def test_change_reads_same_below_the_precision_or_half_a_percent(value, base, unit, expected):
    assert fmt.change(value, base, unit) == expected
    assert fmt.is_same(value, base, unit) == (expected == fmt.SAME)


@pytest.mark.parametrize(("count", "noun", "plural", "text"), [
    (1, "preset", None, "1 preset"), (0, "preset", None, "0 presets"), (2, "run", None, "2 runs"),
    (1024, "run", None, "1,024 runs"), (3, "body", "bodies", "3 bodies"), (1, "body", "bodies", "1 body"),
])
def test_counted(count, noun, plural, text):
    assert counted(count, noun, plural) == text


# A percentage beyond ±1,000 % reads as a multiple, never a figure hundreds of digits long (issue 53's kept comparison
# printed a 400-digit percentage for an actual of 10³⁰⁰ GPU-hours).
@pytest.mark.parametrize(("write", "value", "text"), [
    pytest.param(number, 10.0, "1,000 %", id="1000-percent-is-a-percentage"),
    pytest.param(number, 10.01, "more than 10×", id="just-above"),
    pytest.param(number, 1e300, "more than 10×", id="10^300"),
    pytest.param(number, -12.0, "less than -10×", id="below--1000-percent"),
    pytest.param(exact, 1e300, "more than 10×", id="exact-10^300"),
    pytest.param(signed, 1e300, "more than +10×", id="signed-10^300"),
    pytest.param(signed, -1e300, "less than -10×", id="signed--10^300"),
    pytest.param(signed, 9.99, "+999 %", id="signed-within"),
    pytest.param(lambda value, unit: fmt.change(value, 0.5, unit), 1e300, "more than +10×", id="change-10^300"),
])
def test_percentages_beyond_1000_percent_read_more_than_10x(write, value, text):
    assert write(value, "fraction") == text


@pytest.mark.parametrize(("value", "text"), [(1e300, "$1×10³⁰⁰"), (2.5e15, "$2.5×10¹⁵"), (9.99e14, "$999T")])
def test_dollars_from_1e15_are_a_power_of_ten(value, text):
    assert fmt.usd_sig(value) == text


# 1.3333333333333333 + 10.666666666666666 + 288.5 is 300.5 summed in one order and a hair either side in others:
# each reads as the exact tie does (Python's correctly rounded format: half to even, 300).
@pytest.mark.parametrize("value", [300.5, 300.50000000000006, 300.49999999999994])
def test_a_sum_reads_the_same_whatever_order_added_it(value):
    assert fmt.count_sig(value) == "300"
    assert fmt.significant(value) == "300"
