"""MFU measured per job from the model size a W&B export logs in its config (no --params): a file written here
with known MFU, and the bundled sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sized_runs import PARAMS, PLAN_PARAMS, UNSIZED, write_export

from dashboard.cli import main
from dashboard.ingest import import_path
from dashboard.retro.calibrate import calibrate, model_sizes

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"


@pytest.mark.parametrize(("column", "size"), [("model.n_params", "7000000000"), ("num_params", "7e9"),
                                              ("params", "7B")])
def test_mfu_from_the_logged_model_size(tmp_path, column, size):
    runs, report = import_path(write_export(tmp_path / "runs.csv", column, size))
    got = calibrate(None, runs, run_params=report.model_params)["mfu"]
    assert got.value == pytest.approx(0.38, abs=0.01) and got.value == pytest.approx(0.38, rel=1e-6)
    assert got.count == 3 and "as the run export logs them" in got.basis


def test_a_given_size_covers_the_jobs_that_log_none(tmp_path):
    runs, _ = import_path(write_export(tmp_path / "runs.csv", "notes", ""))
    assert calibrate(None, runs)["mfu"].value is None
    assert calibrate(None, runs, model_params=PARAMS)["mfu"].value == pytest.approx(0.38, rel=1e-6)


def test_the_cli_needs_no_params(tmp_path, capsys):
    path = write_export(tmp_path / "runs.csv")
    assert main(["calibrate", str(path), "--json"]) == 0
    mfu = json.loads(capsys.readouterr().out)["inputs"]["mfu"]
    assert mfu["value"] == pytest.approx(0.38, abs=0.01) and mfu["count"] == 3
    # --params overrides what the export logs: twice the size, twice the MFU
    assert main(["calibrate", str(path), "--json", "--params", "14e9"]) == 0
    assert json.loads(capsys.readouterr().out)["inputs"]["mfu"]["value"] == pytest.approx(0.76, rel=1e-6)


def test_the_bundled_sample_without_params():
    """The W&B sample logs model.n_params 13e9 on the pretrain-13b jobs; the generator draws their throughput at
    85-89 % of the plan's at 40 % MFU (0.340-0.356), the two slower burn-in jobs pulling the P10 below."""
    runs, report = import_path(SAMPLES / "wandb_sample.csv")
    bill, _ = import_path(SAMPLES / "focus_sample.csv")
    got = calibrate(bill, runs, run_params=report.model_params)["mfu"]
    given = calibrate(bill, runs, model_params=13e9)["mfu"]
    assert 0.340 <= got.value <= 0.356 and got.count == 16
    assert got.value == pytest.approx(given.value, rel=1e-12)


@pytest.mark.parametrize(("logged", "params", "plan", "expected"), [
    ({5: 7e9}, None, 13e9, ({5: 7e9}, 13e9)),  # each job's own size, the plan's for a job that logs none
    ({5: 7e9}, 14e9, 13e9, (None, 14e9)),  # --params overrides what the export logs
    ({}, None, 13e9, (None, 13e9)),  # nothing logged: the plan's
    (None, None, None, (None, None)),  # nothing at all: MFU is not measured
])
def test_one_rule_for_the_model_size(logged, params, plan, expected):
    assert model_sizes(logged, params, plan) == expected


def test_jobs_that_log_no_size_take_the_plan_s_and_are_named(tmp_path):
    """Three jobs log 7e9 (MFU 0.30, 0.42, 0.38), two log none and ran at 0.40 and 0.41 with the plan's 13e9: the
    median of the five is 0.40, and the caveat names the two."""
    runs, report = import_path(write_export(tmp_path / "runs.csv", unsized=UNSIZED))
    run_params, params = model_sizes(report.model_params, None, PLAN_PARAMS)
    got = calibrate(None, runs, run_params=run_params, model_params=params)["mfu"]
    assert got.value == pytest.approx(0.40, abs=0.01) and got.value == pytest.approx(0.40, rel=1e-6)
    assert got.count == 5 and "(3 of them as the run export logs them)" in got.basis
    assert "2 jobs (unsized0, unsized1) log no model size: measured at the plan's 1.3e+10 parameters" in got.caveat
    alone = calibrate(None, runs, run_params=run_params)["mfu"]  # no plan: the two are left out
    assert alone.count == 3 and alone.value == pytest.approx(0.38, rel=1e-6)
    assert "2 jobs (unsized0, unsized1) log no model size and none was given: left out" in alone.caveat
