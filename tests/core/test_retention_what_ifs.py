"""Retention what-ifs beside the storage chart: each change's dollar effect against hand formulas."""

import pytest

from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.core.sweeps import retention_what_ifs

CHECKPOINT_GB = 7e9 * 14 / 1e9  # the default 7B model at 14 bytes per parameter: 98 GB


def _rows(scenario: Scenario) -> dict:
    frame = retention_what_ifs(scenario)
    return {row.what_if: row for row in frame.itertuples()}


@pytest.mark.parametrize("months", [0.0, 6.0, 12.0])
def test_one_more_hot_checkpoint_costs_its_hot_hours_and_its_retention(months):
    # Hot GB-hours c·(T − (c+1)·τ/2) grow by T − (K+1)·τ from K = 3 to 4 (when at least 4 are written);
    # the extra checkpoint is then kept `months` on the cold tier.
    scenario = Scenario(storage_retention_months=months)
    run_h = scenario_outputs(scenario)["wall_clock_days"] * 24.0
    expected = CHECKPOINT_GB * ((run_h - 4 * 0.5) * 0.14 / 730 + months * 0.023)
    assert _rows(scenario)["one more hot checkpoint"].delta_total_usd == pytest.approx(expected, rel=1e-6)


def test_a_year_longer_and_deleting_at_the_end():
    scenario = Scenario(storage_retention_months=12.0)
    result = scenario_outputs(scenario)
    rows = _rows(scenario)
    # 12 more months of what is left, at the cold price; deleting saves what retention costs today.
    assert rows["keep the leftovers a year longer"].delta_total_usd == pytest.approx(
        result["storage_retained_gb"] * 12 * 0.023)
    assert rows["delete the leftovers when training ends"].delta_total_usd == pytest.approx(
        -result["storage_retention_usd"])
    assert rows["delete the leftovers when training ends"].value == 0.0


def test_changes_that_do_nothing_or_leave_the_range_are_left_out():
    rows = _rows(Scenario(keep_last_checkpoints=1, storage_retention_months=0.0, archive_every_nth=0))
    assert set(rows) == {"one more hot checkpoint", "keep the leftovers a year longer", "twice as many weight archives",
                         "no weight archives", "also archive every 10th full checkpoint"}


WEIGHTS_GB = 7e9 * 2 / 1e9  # the default 7B model's bf16 weights: 14 GB


def test_twice_the_weight_archives_by_hand():
    # 10 → 20 snapshots of 14 GB: held over the run T·(n − 1)/2 grows by T·(19 − 9)/2 = 5T hours at the cold price,
    # and 10 more are kept 12 months after training.
    scenario = Scenario()
    run_h = scenario_outputs(scenario)["wall_clock_days"] * 24.0
    expected = WEIGHTS_GB * (5 * run_h * 0.023 / 730 + 10 * 12 * 0.023)
    row = _rows(scenario)["twice as many weight archives"]
    assert row.value == 20
    assert row.delta_total_usd == pytest.approx(expected, rel=1e-6)


def test_each_row_says_what_it_keeps():
    # The default plan at 40 % MFU writes a 98 GB checkpoint every 30 minutes for about 116 hours: the last 3 stay
    # (294 GB), with 10 weight archives of 14 GB (140 GB).
    rows = _rows(Scenario(mfu=0.4))
    assert rows["one more hot checkpoint"].keeps == (
        "after training: the last 4 full checkpoints (392 GB), 10 weight archives (140 GB), the data and logs, "
        "for 12 months")
    assert rows["no weight archives"].keeps == (
        "after training: the last 3 full checkpoints (294 GB), the data and logs, for 12 months")
    assert rows["keep the leftovers a year longer"].keeps.endswith("for 24 months")
    assert rows["delete the leftovers when training ends"].keeps == "nothing after training"
    # 116.3 h / 0.5 h = 232 writes: every 10th is 23 full copies of 98 GB (2.25 TB).
    assert "23 archived full checkpoints (2.25 TB)" in rows["also archive every 10th full checkpoint"].keeps
