"""Calibration on hand-built tables: every expected figure is worked out here by hand, not read from the code."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dashboard.core.scenario import default_scenario
from dashboard.ingest.schema import CANONICAL_COLUMNS, empty_usage
from dashboard.query import tables
from dashboard.retro.calibrate import (
    KEYS,
    Measured,
    calibrate,
    poisson_interval,
    rows_behind,
    scenario_from,
)

H100_PEAK = 989e12  # dense BF16 FLOP/s, data/hardware.csv
A100_PEAK = 312e12


def frame(rows: list[dict]) -> pd.DataFrame:
    """A canonical usage table from partial rows (source_row numbered from 2, as a file's first data line)."""
    data = empty_usage()
    filled = pd.DataFrame([{"source_row": i + 2, "cost": 0.0, **row} for i, row in enumerate(rows)])
    for column in ("period_start", "period_end"):
        if column in filled:
            filled[column] = pd.to_datetime(filled[column], utc=True)
    out = pd.concat([data, filled], ignore_index=True)[list(CANONICAL_COLUMNS) + [
        c for c in filled.columns if c not in CANONICAL_COLUMNS]]
    return out.astype({name: dtype for name, dtype in CANONICAL_COLUMNS.items()})


def job(run, start, end, gpus, state, **extra):
    hours = (pd.Timestamp(end) - pd.Timestamp(start)).total_seconds() / 3600
    return {"period_start": start, "period_end": end, "gpu_hours": gpus * hours, "run_id": run, "run_state": state,
            "gpu_type": "H100", "project": extra.pop("project", run), **extra}


# --- MFU ---------------------------------------------------------------------------------------------------------

def token_runs() -> pd.DataFrame:
    day = "2025-01-01"
    return frame([
        # main run "pretrain": 4 segments of 1,000 GPU-h on H100; the FAILED one is left out
        {"period_start": day, "period_end": day, "gpu_hours": 1000.0, "tokens": 1.0e10, "run_id": "pretrain",
         "run_state": "COMPLETED", "gpu_type": "H100"},
        {"period_start": day, "period_end": day, "gpu_hours": 1000.0, "tokens": 1.5e10, "run_id": "pretrain",
         "run_state": "COMPLETED", "gpu_type": "H100"},
        {"period_start": day, "period_end": day, "gpu_hours": 1000.0, "tokens": 2.0e10, "run_id": "pretrain",
         "run_state": None, "gpu_type": "H100 80GB HBM3"},
        {"period_start": day, "period_end": day, "gpu_hours": 1000.0, "tokens": 1.0e9, "run_id": "pretrain",
         "run_state": "FAILED", "gpu_type": "H100"},
        # a smaller run on A100
        {"period_start": day, "period_end": day, "gpu_hours": 500.0, "tokens": 1.0e10, "run_id": "ablate",
         "run_state": "COMPLETED", "gpu_type": "A100"},
    ])


# 6 · 13e9 · 1e10 / (1,000 GPU-h · 989e12 · 3,600) = 7.8e20 / 3.5604e21 = 0.219076...
MFU_1 = 6 * 13e9 * 1.0e10 / (1000 * H100_PEAK * 3600)
MFU_15 = 6 * 13e9 * 1.5e10 / (1000 * H100_PEAK * 3600)  # 0.328615
MFU_2 = 6 * 13e9 * 2.0e10 / (1000 * H100_PEAK * 3600)  # 0.438153


def test_mfu_by_hand():
    assert MFU_1 == pytest.approx(0.2190765, rel=1e-6)
    got = calibrate(None, token_runs(), model_params=13e9)["mfu"]
    # median of three; numpy's linear P10 is at position 0.2 between the first two, P90 at 1.8
    assert got.value == pytest.approx(MFU_15)
    assert got.low == pytest.approx(MFU_1 + 0.2 * (MFU_15 - MFU_1))
    assert got.high == pytest.approx(MFU_15 + 0.8 * (MFU_2 - MFU_15))
    assert got.count == 3 and got.exposure == pytest.approx(3000.0)
    assert got.source_rows == (2, 3, 4)  # the FAILED row (5) and the other run (6) are not in it
    assert not got.thin and "pretrain" in got.basis
    assert "failed" in got.caveat


def test_mfu_of_given_main_run_and_thin():
    got = calibrate(None, token_runs(), model_params=1e9, main_run_ids=["ablate"])["mfu"]
    # 6 · 1e9 · 1e10 / (500 · 312e12 · 3600) = 6e19 / 5.616e20 = 0.10684
    assert got.value == pytest.approx(6e19 / 5.616e20)
    assert got.thin and "only 1 job" in got.caveat


def test_mfu_above_1_is_refused_naming_its_rows():
    got = calibrate(None, token_runs(), model_params=13e9, main_run_ids=["ablate"])["mfu"]
    # 6 · 13e9 · 1e10 / (500 · 312e12 · 3600) = 7.8e20 / 5.616e20 = 1.3889 (a 13B model is not what ran)
    assert got.value is None and got.source_rows == (6,)
    assert got.refused == "the value measured from line 6, 1.39, is outside the plausible 0.01 to 1 of mfu (the " \
                          "plan's own bounds)"


def test_mfu_out_of_bounds_is_not_applied_to_the_scenario():
    measured = calibrate(None, token_runs(), model_params=13e9, main_run_ids=["ablate"])
    scenario, applied = scenario_from(measured, default_scenario())
    assert "mfu" not in applied and scenario.mfu == default_scenario().mfu


@pytest.mark.parametrize(("runs", "params", "needle"), [
    (token_runs().assign(tokens=float("nan")), 13e9, "tokens"),
    (token_runs(), None, "--params"),
    (token_runs().assign(gpu_type="Gaudi 3"), 13e9, "not in the hardware catalogue"),
    (token_runs().assign(run_id=pd.NA).astype({"run_id": "string"}), 13e9, "run id"),
])
def test_mfu_cannot_be_measured(runs, params, needle):
    got = calibrate(None, runs, model_params=params)["mfu"]
    assert got.value is None and needle in got.caveat


# --- interruptions -----------------------------------------------------------------------------------------------

def slurm_like() -> pd.DataFrame:
    return frame([
        job("pretrain", "2025-01-01 00:00", "2025-01-01 12:00", 16, "NODE_FAIL"),  # 192 GPU-h: a node failure
        job("pretrain", "2025-01-01 12:30", "2025-01-02 12:30", 16, "TIMEOUT"),  # 384: resumed 30 min later
        job("pretrain", "2025-01-02 13:00", "2025-01-03 13:00", 16, "COMPLETED"),  # 384
        job("ablate", "2025-01-05 00:00", "2025-01-05 06:00", 8, "FAILED"),  # 48: never resumed, not counted
        job("eval", "2025-01-06 00:00", "2025-01-06 03:00", 8, "PREEMPTED"),  # 24: a preemption
    ])


# node-days = (192 + 384 + 384 + 48 + 24) GPU-h / 8 GPUs per node / 24 h = 1,032 / 192 = 5.375
NODE_DAYS = 1032 / 8 / 24
# Garwood 90 %: chi2(0.05; 4)/2 = 0.71072/2 and chi2(0.95; 6)/2 = 12.5916/2 (chi-square tables); for one event
# chi2(0.05; 2)/2 = 0.102587/2, chi2(0.95; 4)/2 = 9.48773/2; for none 0 and -ln(0.05) = 2.995732
INTERRUPTION_CASES = [
    ("node_failures_per_1000_node_days", 2, 2 / NODE_DAYS * 1000, 0.71072 / 2, 12.5916 / 2, (2, 3)),
    ("spot_interruptions_per_1000_node_days", 1, 1 / NODE_DAYS * 1000, 0.102587 / 2, 9.48773 / 2, (6,)),
]


@pytest.mark.parametrize(("key", "count", "rate", "low_events", "high_events", "rows"), INTERRUPTION_CASES)
def test_interruption_rates_by_hand(key, count, rate, low_events, high_events, rows):
    got = calibrate(None, slurm_like())[key]
    assert got.count == count and got.exposure == pytest.approx(NODE_DAYS)
    assert got.value == pytest.approx(rate)
    assert got.low == pytest.approx(low_events / NODE_DAYS * 1000, rel=1e-4)
    assert got.high == pytest.approx(high_events / NODE_DAYS * 1000, rel=1e-4)
    assert got.source_rows == rows
    assert got.thin and "node-days" in got.caveat  # 5.4 node-days and fewer than 3 events


def test_spot_rate_without_pricing_says_it_is_over_all_jobs():
    assert "all jobs" in calibrate(None, slurm_like())["spot_interruptions_per_1000_node_days"].caveat


def test_spot_rate_over_spot_jobs_when_priced():
    runs = slurm_like().assign(pricing="reserved")
    runs.loc[runs["run_id"] == "eval", "pricing"] = "spot"
    got = calibrate(None, runs)["spot_interruptions_per_1000_node_days"]
    # 1 preemption over 24 GPU-h / 8 / 24 = 0.125 node-days of spot jobs
    assert got.value == pytest.approx(1 / 0.125 * 1000) and got.exposure == pytest.approx(0.125)


def test_gpus_per_node_scales_node_days():
    got = calibrate(None, slurm_like(), gpus_per_node=4)["node_failures_per_1000_node_days"]
    assert got.exposure == pytest.approx(1032 / 4 / 24)


@pytest.mark.parametrize(("count", "low", "high"), [
    (0, 0.0, 2.995732),  # -ln(0.05)
    (1, 0.051293, 4.743865),
    (10, 5.425406, 16.962487),  # chi2(0.05; 20)/2 = 10.8508/2, chi2(0.95; 22)/2 = 33.9244/2
])
def test_garwood_interval(count, low, high):
    got = poisson_interval(count)
    assert got[0] == pytest.approx(low, rel=1e-4, abs=1e-9) and got[1] == pytest.approx(high, rel=1e-4)


def test_no_states_no_rates():
    runs = slurm_like().assign(run_state=pd.NA).astype({"run_state": "string"})
    got = calibrate(None, runs)["node_failures_per_1000_node_days"]
    assert got.value is None and "states" in got.caveat


# --- overheads ---------------------------------------------------------------------------------------------------

def usage_with_runs() -> pd.DataFrame:
    day = "2025-01-01"
    rows = [("pretrain", None, 2000.0), ("pretrain", None, 2000.0), ("ablate-lr", "research", 300.0),
            ("burnin", "pretrain", 200.0), ("eval-harness", "evals", 200.0), ("x1", "smoke-tests", 100.0),
            (None, None, 300.0), ("latest-sweep", None, 50.0)]
    return frame([{"period_start": day, "period_end": day, "gpu_hours": h, "run_id": run, "project": project,
                   "gpu_type": "H100"} for run, project, h in rows])


# main 4,000 GPU-h; experiments 300 + 200 + 50 ("latest" is not a word starting with "test"); eval 200; debug 100
# ("smoke-tests"); the 300 GPU-h with no run are not experiments
OVERHEAD_CASES = [("experiment_overhead", 550 / 4000, 3), ("eval_overhead", 200 / 4000, 1),
                  ("debug_overhead", 100 / 4000, 1)]


@pytest.mark.parametrize(("key", "value", "count"), OVERHEAD_CASES)
def test_overheads_by_hand(key, value, count):
    got = calibrate(usage_with_runs())[key]
    assert got.value == pytest.approx(value) and got.count == count
    assert "4k GPU-h" in got.basis and "no run" in got.basis


# --- prices and shares -------------------------------------------------------------------------------------------

def bill(currency: str = "USD") -> pd.DataFrame:
    day = "2025-01-01"
    rows = [("reserved", "H100", 100.0, 250.0), ("on_demand", "H100", 10.0, 70.0), ("on_demand", "A100", 30.0, 60.0),
            ("spot", "H100", 20.0, 30.0), (None, "H100", 40.0, 100.0), ("on_demand", None, 0.0, 500.0)]
    return frame([{"period_start": day, "period_end": day, "pricing": p, "gpu_type": g, "gpu_hours": h, "cost": c,
                   "currency": currency} for p, g, h, c in rows])


# reserved 250/100; on-demand (70 + 60)/(10 + 30) = 3.25 over A100 60/30 = 2 and H100 70/10 = 7; spot 30/20;
# shares over the 160 GPU-h with a known pricing: reserved 100/160, spot 20/160 (the 40 with none are left out).
# With the plan's GPU named (H100), its on-demand price 70/10 = 7 over its 10 GPU-h; A100 (2 over 30 GPU-h) is
# bought only on demand, so its reserved and spot prices are the H100's with a caveat.
PRICE_CASES = [
    ("price_reserved_per_gpu_hour", None, 2.5, 100.0),
    ("price_on_demand_per_gpu_hour", None, 3.25, 40.0),
    ("price_spot_per_gpu_hour", None, 1.5, 20.0),
    ("reserved_share", None, 0.625, 160.0),
    ("spot_share", None, 0.125, 160.0),
    ("price_on_demand_per_gpu_hour", "H100", 7.0, 10.0),
    ("price_on_demand_per_gpu_hour", "H100 80GB HBM3", 7.0, 10.0),
    ("price_on_demand_per_gpu_hour", "a100", 2.0, 30.0),
    ("price_reserved_per_gpu_hour", "H100", 2.5, 100.0),
    ("price_reserved_per_gpu_hour", "A100", 2.5, 100.0),
]


@pytest.mark.parametrize(("key", "gpu_type", "value", "exposure"), PRICE_CASES)
def test_prices_by_hand(key, gpu_type, value, exposure):
    got = calibrate(bill(), gpu_type=gpu_type)[key]
    assert got.value == pytest.approx(value) and got.exposure == pytest.approx(exposure)
    assert got.low is None and got.high is None  # prices paid are no spread of the next quarter's


def test_a_price_of_another_gpu_than_the_plan_s_says_so():
    got = calibrate(bill(), gpu_type="A100")["price_reserved_per_gpu_hour"]
    assert got.caveat == "paid for H100, not the plan's A100"
    assert calibrate(bill(), gpu_type="H100")["price_on_demand_per_gpu_hour"].caveat is None


def test_mixed_gpu_types_named():
    got = calibrate(bill())["price_on_demand_per_gpu_hour"]
    assert "A100" in got.basis and "H100" in got.basis and "75 %" in got.basis  # A100: 30 of 40 GPU-h


@pytest.mark.parametrize("key", ["price_reserved_per_gpu_hour", "price_on_demand_per_gpu_hour",
                                 "price_spot_per_gpu_hour"])
def test_non_usd_bill_has_no_prices(key):
    got = calibrate(bill("NOK"))
    assert got[key].value is None and "NOK" in got[key].caveat and "US dollars" in got[key].caveat
    assert got["reserved_share"].value == pytest.approx(0.625)  # shares need no currency


def test_reserved_at_zero_cost_says_nothing_of_the_price():
    actual_cost_view = bill()
    actual_cost_view.loc[actual_cost_view["pricing"] == "reserved", "cost"] = 0.0
    got = calibrate(actual_cost_view)["price_reserved_per_gpu_hour"]
    assert got.value is None and "at no cost" in got.caveat


def test_run_export_alone_has_no_prices():
    got = calibrate(None, slurm_like())
    assert all(got[key].value is None and "bill" in got[key].caveat
               for key in ("price_reserved_per_gpu_hour", "reserved_share", "spot_share"))


# --- checkpoints, the whole, the scenario ------------------------------------------------------------------------

def test_checkpoint_columns_median():
    runs = slurm_like().assign(checkpoint_interval_min=[20.0, 30.0, 40.0, None, 25.0],
                               restart_min=[5.0, 10.0, 15.0, 12.0, None])
    got = calibrate(None, runs)
    # medians of 20, 25, 30, 40 = 27.5 and of 5, 10, 12, 15 = 11
    assert got["checkpoint_interval_min"].value == pytest.approx(27.5)
    assert got["restart_min"].value == pytest.approx(11.0)
    unresumed = slurm_like().query("run_state not in ['NODE_FAIL', 'TIMEOUT']")  # no interruption was resumed
    none = calibrate(None, unresumed)["restart_min"]
    assert none.value is None and "checkpoint or restart" in none.caveat and "no restart to time" in none.caveat


def test_mfu_takes_the_bill_s_gpu_type_where_the_run_export_names_none():
    """The token runs with no GPU type: the bill's "pretrain" rows ran on H100 (100 GPU-h) and A100 (10 GPU-h), so the
    H100's peak gives the same MFU as the H100 rows do; without a bill the MFU cannot be measured."""
    runs = token_runs().assign(gpu_type=None).astype({"gpu_type": "string"})
    day = "2025-01-01"
    billed = frame([{"period_start": day, "period_end": day, "gpu_hours": h, "cost": 1.0, "run_id": "pretrain",
                     "gpu_type": g, "pricing": "reserved", "currency": "USD"}
                    for g, h in (("H100", 100.0), ("A100", 10.0))])
    got = calibrate(billed, runs, model_params=13e9)["mfu"]
    assert got.value == pytest.approx(MFU_15) and "GPU type H100 from the bill for 3 of them" in got.basis
    alone = calibrate(None, runs, model_params=13e9)["mfu"]
    assert alone.value is None and "hardware catalogue" in alone.caveat


def test_the_rows_behind_a_measured_input():
    runs = slurm_like()
    got = calibrate(None, runs)["node_failures_per_1000_node_days"]
    behind = rows_behind(tables.table_of(runs), got)
    assert behind["source_row"].tolist() == [2, 3]
    assert behind["run_state"].tolist() == ["NODE_FAIL", "TIMEOUT"]  # the node failure and the resumed time-out


def test_restart_time_from_the_gaps_before_resumed_jobs():
    """slurm_like: the NODE_FAIL ends at 12:00 and the run's next job starts at 12:30; the TIMEOUT ends at 12:30 the
    next day and the next job starts at 13:00: two restarts of 30 min. The unresumed FAILED and the PREEMPTED with
    no next job have none."""
    got = calibrate(None, slurm_like())["restart_min"]
    assert (got.value, got.low, got.high, got.count) == (30.0, 30.0, 30.0, 2)
    assert got.source_rows == (2, 3) and got.thin and "queueing" in got.caveat
    assert got.value is not None and calibrate(None, slurm_like())["checkpoint_interval_min"].value is None


def test_every_key_and_ibis_tables():
    got = calibrate(tables.table_of(bill()), tables.table_of(token_runs()), model_params=13e9)
    assert tuple(got) == KEYS and all(isinstance(m, Measured) for m in got.values())
    assert got["mfu"].value == pytest.approx(MFU_15)
    assert all(m.value is not None or m.caveat for m in got.values())
    with pytest.raises(ValueError):
        calibrate(None, None)


def test_scenario_from_sets_values_and_ranges():
    measured = calibrate(bill(), slurm_like().assign(tokens=[1e10] * 5), model_params=1e9)
    base = default_scenario()
    scenario, applied = scenario_from(measured, base)
    assert scenario.name == base.name + " (calibrated)"
    # values and range ends to three significant figures, as the pages show them
    assert scenario.price_on_demand_per_gpu_hour == 3.25
    assert (scenario.range_price_on_demand_low, scenario.range_price_on_demand_high) == (
        base.range_price_on_demand_low, base.range_price_on_demand_high)  # no spread measured: the plan's range
    rate = measured["node_failures_per_1000_node_days"]
    assert rate.thin and scenario.node_failures_per_1000_node_days == base.node_failures_per_1000_node_days
    assert scenario.restart_min == base.restart_min  # two restarts: thin, so not applied unless chosen
    assert set(applied) == {k for k, m in measured.items() if m.value is not None and not m.thin}
    scenario, applied = scenario_from(measured, base, use_thin=("node_failures_per_1000_node_days", "restart_min"))
    assert scenario.node_failures_per_1000_node_days == pytest.approx(rate.value, rel=5e-3)
    assert scenario.range_node_failures_low == pytest.approx(rate.low / rate.value, rel=1e-2)
    assert applied["node_failures_per_1000_node_days"].value == scenario.node_failures_per_1000_node_days
    assert "checkpoint_interval_min" not in applied and scenario.checkpoint_interval_min == base.checkpoint_interval_min
    assert scenario.restart_min == 30.0  # the two 30-minute gaps before resumed jobs
    assert set(applied) == {k for k, m in measured.items() if m.value is not None and (not m.thin or k in (
        "node_failures_per_1000_node_days", "restart_min"))}
    assert math.isclose(scenario.reserved_share + scenario.spot_share, 0.75)


# --- not measured is not zero -------------------------------------------------------------------------------------

def test_an_overhead_with_no_runs_is_not_measured():
    usage = usage_with_runs()
    usage = usage[~usage["run_id"].fillna("").isin(["x1"])]  # the only debug run gone
    got = calibrate(usage)["debug_overhead"]
    assert got.value is None and got.caveat.startswith("not measured: no runs named debug")
    base = default_scenario().model_copy(update={"debug_overhead": 0.07})
    scenario, applied = scenario_from(calibrate(usage), base)
    assert scenario.debug_overhead == 0.07 and "debug_overhead" not in applied


# (key, runs of that kind in usage_with_runs, thin): fewer than 3 runs is thin
THIN_OVERHEAD_CASES = [("experiment_overhead", 3, False), ("eval_overhead", 1, True), ("debug_overhead", 1, True)]


@pytest.mark.parametrize(("key", "runs", "thin"), THIN_OVERHEAD_CASES)
def test_an_overhead_over_few_runs_is_thin(key, runs, thin):
    got = calibrate(usage_with_runs())[key]
    assert got.thin is thin and (f"only {runs}" in got.caveat if thin else got.caveat is None)


def test_no_event_is_no_rate_but_keeps_its_interval():
    """slurm_like without its PREEMPTED job: 0 events over (1,032 - 24) GPU-h / 8 / 24 = 5.25 node-days; the exact
    90 % upper end of a Poisson mean after 0 events is -ln(0.05) = 2.995732, so 570.6 per 1,000 node-days."""
    usage = slurm_like()
    got = calibrate(None, usage[usage["run_state"] != "PREEMPTED"])["spot_interruptions_per_1000_node_days"]
    assert got.value is None and got.low == 0.0 and got.count == 0
    assert got.exposure == pytest.approx(1008 / 8 / 24)
    assert got.high == pytest.approx(2.995732 / (1008 / 8 / 24) * 1000, rel=1e-5)
    assert got.caveat.startswith("not measured: no preemptions over")
