"""Waste checklist: failed share, successful share, idle commitment, duplicate runs and storage growth by hand."""

import dataclasses
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from usage_rows import usage

from dashboard.ingest import import_path
from dashboard.ingest.schema import ReadOptions
from dashboard.retro.waste import (
    duplicate_runs_check,
    failed_runs_check,
    idle_capacity_check,
    storage_growth_check,
    successful_runs_check,
    waste_checklist,
    waste_summary,
)

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
CHECK_KEYS = {"id", "check", "kind", "figure", "unit", "usd", "detail", "rows", "behind"}


STATES = usage(
    {"gpu_hours": 60.0, "cost": 120.0, "run_id": "a", "run_state": "COMPLETED"},
    {"gpu_hours": 30.0, "cost": 60.0, "run_id": "b", "run_state": "FAILED"},
    {"gpu_hours": 10.0, "cost": 20.0, "run_id": "c", "run_state": "NODE_FAIL"},
    {"gpu_hours": 50.0, "cost": 100.0, "run_id": "d"},  # billing row: state unknown
    {"cost": 50.0, "resource_id": "bucket"},  # storage
)


def test_failed_share_is_of_the_hours_with_a_known_state():
    check = failed_runs_check(STATES)
    assert check.figure == pytest.approx(40.0)  # (30 + 10) / (60 + 30 + 10)
    assert check.unit == "% of GPU-hours"
    assert check.usd == pytest.approx(80.0)
    assert sorted(check.rows["run_id"]) == ["b", "c"]
    assert "66.7 %" in check.detail  # states known for 100 of 150 GPU-hours


def test_successful_share_is_of_the_cost_of_runs_with_a_known_state():
    check = successful_runs_check(STATES)
    assert check.figure == pytest.approx(60.0)  # 120 / (120 + 60 + 20)
    assert check.unit == "% of cost"
    assert check.usd is None


def test_successful_share_falls_back_to_gpu_hours_without_cost():
    runs = STATES.assign(cost=0.0)
    check = successful_runs_check(runs)
    assert check.unit == "% of GPU-hours"
    assert check.figure == pytest.approx(60.0)  # 60 / 100 GPU-hours with a state
    assert failed_runs_check(runs).usd is None


@pytest.mark.parametrize("check", [failed_runs_check, successful_runs_check])
def test_state_checks_need_states(check):
    result = check(STATES.assign(run_state=pd.NA).astype({"run_state": "string"}))
    assert result.figure is None and "Slurm" in result.detail


RESERVED_RUN = {"gpu_hours": 100.0, "cost": 700.0, "run_id": "main", "pricing": "reserved"}


@pytest.mark.parametrize(("rows", "figure"), [
    # amortised: $300 left on an unused-commitment line, plus a reserved GPU row no run claims
    ([RESERVED_RUN, {"pricing": "reserved", "cost": 300.0, "charge_kind": "unused_commitment"},
      {"gpu_hours": 5.0, "cost": 35.0, "pricing": "reserved"}], 335.0),
    # an AWS CUR savings-plan fee line at its unused part, without a pricing tier
    ([RESERVED_RUN, {"cost": 40.0, "charge_kind": "unused_commitment"}], 40.0),
    # everything used: no idle commitment
    ([RESERVED_RUN], 0.0),
    # covered usage without GPU-hours and a resource id naming a reservation are usage, not idle commitment
    ([RESERVED_RUN, {"pricing": "reserved", "cost": 30.0, "charge_kind": "usage"},
      {"pricing": "on_demand", "cost": 20.0, "resource_id": "vm-reservation-7", "charge_kind": "usage"}], 0.0),
    # actual-cost view: reserved usage costs 0, the fee is on its own line, the idle part cannot be told
    ([{**RESERVED_RUN, "cost": 0.0}, {"pricing": "reserved", "cost": 1000.0, "charge_kind": "commitment"}], None),
    # a bill without GPU rows: a purchase there is no idle GPU capacity
    ([{"cost": 3.25, "charge_kind": "commitment"}, {"cost": 2.64, "pricing": "on_demand"}], None),
    # no reserved or committed capacity at all
    ([{"gpu_hours": 10.0, "cost": 50.0, "run_id": "x", "pricing": "on_demand"}], None),
])
def test_idle_capacity(rows, figure):
    check = idle_capacity_check(usage(*rows))
    assert check.figure == (None if figure is None else pytest.approx(figure))
    assert check.unit == "USD"


def job(start: str, hours: float, gpus: int = 8, name: str = "sweep", state: str = "COMPLETED", job_id: str = "",
        **extra) -> dict:
    begin = pd.Timestamp(start, tz="UTC")
    return {"period_start": begin, "period_end": begin + pd.Timedelta(hours=hours), "gpu_hours": hours * gpus,
            "run_id": name, "run_state": state, "resource_id": job_id, "team": "t", "project": "p",
            "gpu_type": "H100", "cost": hours * gpus * 2.0, **extra}


DUPLICATE_CASES = [
    # id, jobs, resource ids flagged as repeats, GPU-hours of the repeats
    ("same shape started minutes apart", [job("2025-05-01T10:00", 5.0, job_id="1"),
                                          job("2025-05-01T10:10", 5.2, job_id="2")], ["2"], 41.6),
    ("three copies chain to the nearest", [job("2025-05-01T10:00", 5.0, job_id="1"),
                                           job("2025-05-01T10:10", 5.0, job_id="2"),
                                           job("2025-05-01T11:00", 5.0, job_id="3")], ["2", "3"], 80.0),
    ("recurring two days apart", [job("2025-05-01T10:00", 5.0, job_id="1"),
                                  job("2025-05-03T10:00", 5.0, job_id="2")], [], 0.0),
    ("restart after a failure", [job("2025-05-01T10:00", 5.0, state="NODE_FAIL", job_id="1"),
                                 job("2025-05-01T15:10", 5.0, job_id="2")], [], 0.0),
    ("different GPU count", [job("2025-05-01T10:00", 5.0, job_id="1"),
                             job("2025-05-01T10:10", 5.0, gpus=16, job_id="2")], [], 0.0),
    ("different duration", [job("2025-05-01T10:00", 5.0, job_id="1"),
                            job("2025-05-01T10:10", 6.0, job_id="2")], [], 0.0),
    ("different name", [job("2025-05-01T10:00", 5.0, job_id="1"),
                        job("2025-05-01T10:10", 5.0, name="other", job_id="2"),
                        job("2025-05-04T10:00", 5.0, job_id="3")], [], 0.0),
    ("different team", [job("2025-05-01T10:00", 5.0, job_id="1"),
                        job("2025-05-01T10:10", 5.0, job_id="2", team="u")], [], 0.0),
]


@pytest.mark.parametrize(("jobs", "repeats", "repeat_hours"), [case[1:] for case in DUPLICATE_CASES],
                         ids=[case[0] for case in DUPLICATE_CASES])
def test_duplicate_runs(jobs, repeats, repeat_hours):
    check = duplicate_runs_check(usage(*jobs))
    assert sorted(check.rows["resource_id"]) == repeats
    assert check.figure == pytest.approx(repeat_hours)
    assert check.unit == "GPU-hours"


def test_duplicates_point_at_the_earlier_run():
    jobs = [job("2025-05-01T10:00", 5.0, job_id="1"), job("2025-05-01T10:10", 5.0, job_id="2"),
            job("2025-05-01T11:00", 5.0, job_id="3")]
    rows = duplicate_runs_check(usage(*jobs)).rows
    assert dict(zip(rows["resource_id"], rows["duplicate_of"], strict=True)) == {"2": "1", "3": "2"}


@pytest.mark.parametrize(("rows", "needs"), [
    ([{"gpu_hours": 10.0, "run_id": "a"}], "run export"),  # billing: no states
    ([job("2025-05-01T10:00", 5.0, name="h1"), job("2025-05-01T10:10", 5.0, name="h2")], "W&B"),  # unique ids
])
def test_duplicates_unavailable(rows, needs):
    check = duplicate_runs_check(usage(*rows))
    assert check.figure is None and needs in check.detail


def storage_line(month: str, cost: float, name: str = "ckpt-bucket") -> dict:
    start = pd.Timestamp(month, tz="UTC")
    return {"period_start": start, "period_end": start + pd.offsets.MonthBegin(1), "cost": cost, "resource_id": name}


STORAGE_CASES = [
    # id, rows, figure (USD/month), lines flagged
    ("growing every month", [storage_line("2025-04-01", 46), storage_line("2025-05-01", 207),
                             storage_line("2025-06-01", 368)], 368.0, {"ckpt-bucket"}),
    ("flat", [storage_line("2025-04-01", 1380, "corpus"), storage_line("2025-05-01", 1380, "corpus"),
              storage_line("2025-06-01", 1380, "corpus")], 0.0, set()),
    ("same cost per day over a longer month is flat",
     [storage_line("2025-02-01", 280), storage_line("2025-03-01", 310)], 0.0, set()),
    ("grew then shrank", [storage_line("2025-04-01", 100), storage_line("2025-05-01", 200),
                          storage_line("2025-06-01", 150)], 0.0, set()),
    ("tagged lines without a resource id", [{**storage_line("2025-04-01", 10, None), "team": "t", "project": "p"},
                                           {**storage_line("2025-05-01", 20, None), "team": "t", "project": "p"}],
     20.0, {"t / p"}),
]


@pytest.mark.parametrize(("rows", "figure", "lines"), [case[1:] for case in STORAGE_CASES],
                         ids=[case[0] for case in STORAGE_CASES])
def test_storage_growth(rows, figure, lines):
    rows = [*rows, {"gpu_hours": 10.0, "cost": 50.0, "run_id": "x"}, {"cost": 999.0}]  # compute, untagged tax
    check = storage_growth_check(usage(*rows))
    assert check.figure == pytest.approx(figure)
    assert check.unit == "USD/month"
    flagged = set(check.rows["resource_id"].fillna(check.rows["team"] + " / " + check.rows["project"]))
    assert flagged == lines


@pytest.mark.parametrize("rows", [
    [{"gpu_hours": 10.0, "cost": 50.0, "run_id": "x"}],  # no storage lines
    [storage_line("2025-04-01", 46), storage_line("2025-04-15", 46, "other")],  # one month only
])
def test_storage_growth_unavailable(rows):
    assert storage_growth_check(usage(*rows)).figure is None


def test_checklist_on_the_bundled_samples():
    options = ReadOptions(timezone="UTC")
    billing, _ = import_path(SAMPLES / "focus_sample.csv", options=options)
    runs, _ = import_path(SAMPLES / "slurm_sample.txt", options=options)

    alone = {check.id: check for check in waste_checklist(billing)}
    assert list(alone) == ["failed_runs", "interrupted_runs", "successful_runs", "idle_capacity", "duplicate_runs",
                           "storage_growth", "untagged_spend"]
    assert all({field.name for field in dataclasses.fields(check)} == CHECK_KEYS for check in alone.values())
    assert alone["failed_runs"].figure is None  # a bill has no run states
    assert alone["idle_capacity"].figure == pytest.approx(73_247.73)  # the reservation idle before / after
    assert alone["storage_growth"].figure == pytest.approx(368.0)  # checkpoints: $46, $207, $368 a month

    joined = {check.id: check for check in waste_checklist(billing, runs)}
    assert 0 < joined["failed_runs"].figure < 100
    assert 0 < joined["successful_runs"].figure < 100
    # make_run_samples.py: sweep jobs of one day differ in node count or length, and on 9 April bob submits the
    # 1-node cosine config of ablate-lr-schedule a second time, 2 h 10 min after the first: the one repeat.
    repeats = joined["duplicate_runs"].rows
    assert len(repeats) == 1
    repeat = repeats.iloc[0]
    first = runs.loc[runs["resource_id"] == repeat["duplicate_of"]].iloc[0]
    assert repeat["run_id"] == first["run_id"] == "ablate-lr-schedule"
    assert repeat["period_start"] - first["period_start"] == pd.Timedelta(hours=2, minutes=10)
    assert first["period_start"].date() == date(2025, 4, 9)
    assert repeat["gpu_hours"] / ((repeat["period_end"] - repeat["period_start"]).total_seconds() / 3600) == (
        pytest.approx(8))


def test_the_headline_adds_the_waste_in_dollars_and_leaves_the_rest_apart():
    table = usage(
        {"gpu_hours": 10.0, "cost": 30.0, "run_id": "a", "run_state": "FAILED", "team": "t"},
        {"gpu_hours": 30.0, "cost": 90.0, "run_id": "b", "run_state": "COMPLETED", "team": "t"},
        {"cost": 20.0, "pricing": "reserved", "charge_kind": "unused_commitment"},  # unused commitment, untagged
        {"cost": 60.0},  # support: untagged, not waste
    )
    checklist = waste_checklist(table)
    by_id = {check.id: check for check in checklist}
    assert by_id["untagged_spend"].usd == pytest.approx(80.0)
    assert by_id["untagged_spend"].kind == "hygiene" and by_id["successful_runs"].kind == "kpi"
    summary = waste_summary(checklist, total_cost=200.0)
    # failed run $30 and idle commitment $20: $50, a quarter of the $200 spent; largest first
    assert summary.total_usd == pytest.approx(50.0) and summary.share == pytest.approx(0.25)
    assert [(item.check, item.usd, item.share) for item in summary.items] == [
        ("Failed runs", 30.0, 0.15), ("Idle capacity", 20.0, 0.10)]
