"""MTBF, checkpoint size and intervals against Young (1974), Daly (2006) and published cluster data."""

import numpy as np
import pytest

from dashboard.core import reliability


@pytest.mark.parametrize(
    ("write_min", "mtbf_min", "daly_min", "young_min"),
    [
        # Daly (2006) worked examples, δ = 5 min (anchors-calculators.md §4.2).
        (5, 24 * 60, 116.7, 120.0),
        (5, 6 * 60, 56.7, 60.0),
        (5, 15, 9.1, 12.2),
    ],
)
def test_young_and_daly_examples(write_min, mtbf_min, daly_min, young_min):
    assert reliability.daly_interval(write_min, mtbf_min) == pytest.approx(daly_min, abs=0.05)
    assert reliability.young_interval(write_min, mtbf_min) == pytest.approx(young_min, abs=0.05)


def test_daly_interval_is_mtbf_when_write_exceeds_twice_mtbf():
    assert reliability.daly_interval(30.0, 10.0) == 10.0


@pytest.mark.parametrize(
    ("rate", "nodes", "expected_hours", "published_rounding"),
    [
        # Kokolis et al.: r_f = 6.5 per 1,000 node-days projects 1.8 h at 16,384 GPUs (2,048 nodes)
        # and 0.23 h at 131,072 GPUs (16,384 nodes), both rounded as published.
        (6.5, 2048, 1.8, 0.05),
        (6.5, 16384, 0.23, 0.005),
        # Llama 3 405B: 419 unexpected interruptions in 54 days on 2,048 nodes -> 54·24/419 = 3.093 h.
        (419 / (54 * 2048) * 1000, 2048, 54 * 24 / 419, 1e-9),
    ],
)
def test_job_mtbf_from_node_failure_rate(rate, nodes, expected_hours, published_rounding):
    assert reliability.job_mtbf_hours(rate, nodes) == pytest.approx(expected_hours, abs=published_rounding)


def test_zero_failure_rate_never_fails():
    assert np.isinf(reliability.job_mtbf_hours(0.0, 64))


@pytest.mark.parametrize(
    ("params", "expected_gb"),
    # published-facts §5a at 14 bytes/param: 7B ≈ 98 GB, 70B ≈ 0.98 TB, 405B ≈ 5.7 TB, 671B ≈ 9.4 TB.
    [(7e9, 98), (70e9, 980), (405e9, 5670), (671e9, 9394)],
)
def test_checkpoint_size(params, expected_gb):
    assert reliability.checkpoint_size_gb(params, 14) == pytest.approx(expected_gb)


def test_write_time_override_wins():
    assert reliability.checkpoint_write_s(98.0, 10.0) == pytest.approx(9.8)
    assert reliability.checkpoint_write_s(98.0, 10.0, 120.0) == 120.0


@pytest.mark.parametrize("ceil_case", [(511, 8, 64), (512, 8, 64), (513, 8, 65), (1, 8, 1)])
def test_node_count_rounds_up(ceil_case):
    gpus, per_node, nodes = ceil_case
    assert reliability.node_count(gpus, per_node) == nodes


def test_overhead_fractions_by_hand():
    # τ = 60 min, δ = 1 min, restart 10 min, M = 600 min: stall 1/60, rework (30 + 10)/600 = 1/15.
    assert reliability.stall_fraction(1.0, 60.0, False) == pytest.approx(1 / 60)
    assert reliability.stall_fraction(1.0, 60.0, True) == 0.0
    assert reliability.rework_fraction(60.0, 10.0, 600.0) == pytest.approx(1 / 15)
