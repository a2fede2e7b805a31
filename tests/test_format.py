"""Number formatting shared by tiles, tables and charts."""

import pytest

from dashboard.format import count, short, usd


@pytest.mark.parametrize(("value", "digits", "text"), [
    (1_250_000, 2, "$1.25M"),
    (-1_250_000, 2, "-$1.25M"),
    (999.5, 2, "$999.50"),
    (88_692_963, 1, "$88.7M"),
    (2.5e9, 2, "$2.50B"),
    (float("nan"), 2, "n/a"),
])
def test_usd(value, digits, text):
    assert usd(value, digits) == text


@pytest.mark.parametrize(("value", "text"), [
    (26_617_796, "26.62M"),
    (1.05e12, "1.05T"),
    (512, "512.0"),
    (float("inf"), "n/a"),
])
def test_count(value, text):
    assert count(value) == text


@pytest.mark.parametrize(("value", "text"), [(405e9, "405B"), (1.5e9, "1.5B"), (15.6e12, "15.6T"), (512, "512"),
                                             (2e12, "2T"), (131072, "131k")])
def test_short(value, text):
    assert short(value) == text
