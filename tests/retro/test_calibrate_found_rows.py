"""The rows a measured input cites are the first the query finds (``calibrate._found``): all of them, in source
order, when there are at most ``SOURCE_ROWS``; else ``SOURCE_ROWS`` of them, each a row the input came from, in
source order. The values and counts stay the rows' own, worked by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from usage_rows import usage as frame

from dashboard.query import tables
from dashboard.retro.calibrate import SOURCE_ROWS, calibrate, implausible_rows

DAY = {"period_start": "2025-06-01T00:00:00Z", "period_end": "2025-06-01T01:00:00Z", "currency": "USD",
       "gpu_type": "H100", "charge_kind": "usage"}
MANY = SOURCE_ROWS + 200  # more rows of a kind than an input cites


def _line(index: int) -> int:
    return index + 2  # usage_rows numbers the first row line 2


def priced_bill() -> pd.DataFrame:
    """MANY spot rows (8 GPU-h at $24: $3) alternating with MANY on-demand rows (8 GPU-h at $80: $10), then 5
    reserved rows (16 GPU-h at $64: $4) and one reserved row at no cost (16 GPU-h)."""
    rows = [{**DAY, "pricing": "spot", "gpu_hours": 8.0, "cost": 24.0} if i % 2 == 0 else
            {**DAY, "pricing": "on_demand", "gpu_hours": 8.0, "cost": 80.0} for i in range(2 * MANY)]
    rows += [{**DAY, "pricing": "reserved", "gpu_hours": 16.0, "cost": 64.0}] * 5
    rows += [{**DAY, "pricing": "reserved", "gpu_hours": 16.0, "cost": 0.0}]
    return frame(*rows)


SPOT_LINES = {_line(i) for i in range(0, 2 * MANY, 2)}
ON_DEMAND_LINES = {_line(i) for i in range(1, 2 * MANY, 2)}
RESERVED_LINES = tuple(_line(2 * MANY + i) for i in range(6))  # the last one at no cost
KNOWN_H = 2 * MANY * 8.0 + 6 * 16.0

# key, value, count, the lines it may cite, how many it cites (None: exactly the lines given, in order)
PRICED_CASES = [
    pytest.param("price_spot_per_gpu_hour", 3.0, MANY, SPOT_LINES, SOURCE_ROWS, id="spot-price"),
    pytest.param("price_on_demand_per_gpu_hour", 10.0, MANY, ON_DEMAND_LINES, SOURCE_ROWS, id="on-demand-price"),
    pytest.param("price_reserved_per_gpu_hour", 4.0, 5, RESERVED_LINES[:5], None, id="reserved-price-priced-only"),
    pytest.param("spot_share", MANY * 8.0 / KNOWN_H, MANY, SPOT_LINES, SOURCE_ROWS, id="spot-share"),
    pytest.param("reserved_share", 6 * 16.0 / KNOWN_H, 6, RESERVED_LINES, None, id="reserved-share-all-rows"),
]


@pytest.mark.parametrize(("key", "value", "count", "lines", "cited"), PRICED_CASES)
def test_prices_and_shares_cite_the_rows_they_came_from(key, value, count, lines, cited):
    got = calibrate(priced_bill())[key]
    assert got.value == pytest.approx(value) and got.count == count
    if cited is None:
        assert got.source_rows == lines
    else:
        assert len(got.source_rows) == cited and set(got.source_rows) <= lines
    assert list(got.source_rows) == sorted(set(got.source_rows))  # source order, each once


def overhead_bill() -> pd.DataFrame:
    """The main run: 2 rows of 2,000 GPU-h; run eval-harness: MANY rows of 1 GPU-h; run smoke-test: 3 rows of
    10 GPU-h; run ablate: 1 row of 40 GPU-h."""
    rows = [{**DAY, "run_id": "pretrain", "gpu_hours": 2000.0}] * 2
    rows += [{**DAY, "run_id": "eval-harness", "gpu_hours": 1.0}] * MANY
    rows += [{**DAY, "run_id": "smoke-test", "gpu_hours": 10.0}] * 3
    rows += [{**DAY, "run_id": "ablate", "gpu_hours": 40.0}]
    return frame(*rows)


EVAL_LINES = {_line(2 + i) for i in range(MANY)}
OVERHEAD_CASES = [
    pytest.param("eval_overhead", MANY / 4000, EVAL_LINES, SOURCE_ROWS, id="eval-many-rows"),
    pytest.param("debug_overhead", 30 / 4000, tuple(_line(2 + MANY + i) for i in range(3)), None, id="debug"),
    pytest.param("experiment_overhead", 40 / 4000, (_line(2 + MANY + 3),), None, id="experiment"),
]


@pytest.mark.parametrize(("key", "value", "lines", "cited"), OVERHEAD_CASES)
def test_overheads_cite_the_rows_they_came_from(key, value, lines, cited):
    got = calibrate(overhead_bill(), main_run_ids=["pretrain"])[key]
    assert got.value == pytest.approx(value)
    if cited is None:
        assert got.source_rows == lines
    else:
        assert len(got.source_rows) == cited and set(got.source_rows) <= lines
    assert list(got.source_rows) == sorted(set(got.source_rows))


PLAUSIBLE = {**DAY, "pricing": "spot", "gpu_hours": 8.0, "cost": 24.0}
NEGATIVE = {**DAY, "pricing": "spot", "gpu_hours": -8.0, "cost": 24.0}  # negative GPU-hours: implausible
# plausible and implausible rows alternating (implausible on odd indexes), how many implausible
IMPLAUSIBLE_CASES = [
    pytest.param(3, id="few-all-cited"),
    pytest.param(MANY, id="many-bounded"),
]


@pytest.mark.parametrize("bad", IMPLAUSIBLE_CASES)
def test_implausible_rows_are_cited_bounded(bad):
    rows = [row for _ in range(bad) for row in (PLAUSIBLE, NEGATIVE)]
    got = implausible_rows(tables.table_of(frame(*rows)))
    bad_lines = {_line(i) for i in range(1, 2 * bad, 2)}
    assert len(got) == min(bad, SOURCE_ROWS) and set(got) <= bad_lines
    assert list(got) == sorted(set(got))


def test_an_overhead_kind_without_runs_cites_no_rows_beside_one_with():
    # the main run 2 × 2,000 GPU-h and run eval-1 3 × 10 GPU-h (lines 4, 5, 6): no debug or other run
    rows = [{**DAY, "run_id": "pretrain", "gpu_hours": 2000.0}] * 2
    rows += [{**DAY, "run_id": "eval-1", "gpu_hours": 10.0}] * 3
    got = calibrate(frame(*rows), main_run_ids=["pretrain"])
    assert got["eval_overhead"].value == pytest.approx(30 / 4000) and got["eval_overhead"].source_rows == (4, 5, 6)
    for key in ("debug_overhead", "experiment_overhead"):
        assert got[key].value is None and got[key].source_rows == ()


def _job(state: str | None, tokens: float) -> dict:
    return {**DAY, "run_id": "pretrain", "gpu_type": "H100", "gpu_hours": 1000.0, "tokens": tokens,
            "run_state": state}


# The main run's jobs: 1,000 GPU-h each on H100 (989 dense BF16 TFLOP/s); at 1e10 parameters a job of T tokens has
# MFU 6 · 1e10 · T / (1,000 · 989e12 · 3600). The rows are read only when some job of the main run with tokens is
# not in a failed state.
MFU_CASES = [
    # 2.967e10 tokens: 1.7802e21 / 3.5604e21 = 0.5; 1.7802e10 tokens: 0.3
    pytest.param([_job("COMPLETED", 2.967e10)], 0.5, None, id="one-job"),
    pytest.param([_job("FAILED", 2.967e10), _job("COMPLETED", 1.7802e10)], 0.3, None, id="failed-left-out"),
    pytest.param([_job("FAILED", 2.967e10)], None, "in a failed state", id="every-job-failed"),
    pytest.param([_job("COMPLETED", 0.0)], None, "tokens", id="no-tokens"),
]


@pytest.mark.parametrize(("jobs", "value", "caveat"), MFU_CASES)
def test_mfu_reads_the_main_run_s_rows_only_when_some_can_be_measured(jobs, value, caveat):
    got = calibrate(None, frame(*jobs), main_run_ids=["pretrain"], model_params=1e10)["mfu"]
    if value is None:
        assert got.value is None and caveat in got.caveat and got.source_rows == ()
    else:
        assert got.value == pytest.approx(value) and got.source_rows == (_line(len(jobs) - 1),)
