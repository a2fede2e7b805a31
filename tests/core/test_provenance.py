"""Measured inputs' provenance: the link form round-trips, bad parameters are dropped with a reason, and the
sentences say what the value was measured over."""

import datetime

import pytest

from dashboard.core import provenance
from dashboard.core.provenance import Provenance
from dashboard.core.scenario import Scenario

QUARTER = (datetime.date(2025, 4, 1), datetime.date(2025, 6, 30))


def test_the_keys_are_scenario_inputs():
    assert set(provenance.KEYS) <= set(Scenario.model_fields)


def test_a_link_round_trips():
    measured = {
        "mfu": Provenance("mfu", 0.348, 0.312, 0.356, 19, None, False),
        "node_failures_per_1000_node_days": Provenance("node_failures_per_1000_node_days", 2.5, 0.9, 5.3, 3, 1200.0,
                                                       True),
    }
    link = provenance.to_link(measured, QUARTER)
    assert link == {
        "measured.mfu": "0.348_0.312_0.356_19__0",
        "measured.node_failures_per_1000_node_days": "2.5_0.9_5.3_3_1200_1",
        "measured.period": "2025-04-01_2025-06-30",
    }
    back, period, warnings = provenance.from_link({name: [value] for name, value in link.items()})
    assert back == measured and period == QUARTER and warnings == []


def test_no_measured_input_no_period():
    assert provenance.to_link({}, QUARTER) == {}
    assert provenance.from_link({"measured.period": ["2025-04-01_2025-06-30"]})[:2] == ({}, None)


@pytest.mark.parametrize("name, value, reason", [
    ("measured.mfu", "0.3_0.2_0.4_3_", "not a measured input's figures"),  # five fields
    ("measured.mfu", "0.3_0.35_0.4_3__0", "not a measured input's figures"),  # low above the value
    ("measured.mfu", "nan_0.2_0.4_3__0", "not a measured input's figures"),
    ("measured.mfu", "-1_-2_0_3__0", "not a measured input's figures"),
    ("measured.mfu", "0.3_0.2_0.4_three__0", "not a measured input's figures"),
    ("measured.mfu", "0.3_0.2_0.4_3__yes", "not a measured input's figures"),
    ("measured.gpu_count", "512____0", "not a measured input"),
    ("measured.period", "2025-06-30_2025-04-01", "not a measured input's figures"),
    ("measured.mfu", "<script>_0_1_1__0", "not a measured input's figures"),
])
def test_bad_parameters_are_dropped_with_a_reason(name, value, reason):
    measured, _, warnings = provenance.from_link({name: [value], "measured.eval_overhead": ["0.05___0__0"]})
    assert list(measured) == ["eval_overhead"]
    assert len(warnings) == 1 and reason in warnings[0] and warnings[0].startswith("Ignored")


def test_a_repeated_parameter_is_dropped():
    measured, _, warnings = provenance.from_link({"measured.mfu": ["0.3____0", "0.4____0"]})
    assert measured == {} and warnings == ["Ignored measured.mfu: given 2 times."]


@pytest.mark.parametrize("item, expected", [
    (Provenance("mfu", 0.37, 0.31, 0.41, 3), "MFU 37 % — measured over 3 jobs, observed 31 %–41 %"),
    (Provenance("mfu", 0.37, None, None, 1), "MFU 37 % — measured over 1 job"),
    (Provenance("node_failures_per_1000_node_days", 2.5, 0.86, 5.7, 3, 1200.0),
     "Node failures per 1,000 node-days 2.5 — measured over 3 interruptions over 1.2k node-days, "
     "90 % interval 0.86–5.7"),
    (Provenance("price_spot_per_gpu_hour", 2.1, 1.9, 2.4, 40, 5400.0),
     "Spot $/GPU-hour $2.1 — measured over 5.4k GPU-h, observed $1.9–$2.4"),
    (Provenance("restart_min", 25.0, None, None, 4), "Restart time 25 min — measured over 4 restarts"),
    (Provenance("eval_overhead", 0.0355, None, None, 39, 2990.0),
     "Evaluation (× main run) 0.0355× — measured over 2.99k GPU-h in 39 runs"),
])
def test_lines(item, expected):
    assert provenance.line(item) == expected


@pytest.mark.parametrize("value, holds", [(0.348, True), (0.34800000001, True), (0.35, False), (None, False),
                                          (True, False)])
def test_an_edited_value_loses_its_provenance(value, holds):
    assert provenance.holds(Provenance("mfu", 0.348), value) is holds
