"""The jobs behind a measured MFU, each with its model size and where it came from, and the step-time model's
efficiency refitted on them (dashboard.retro.refit_runs; `calibrate --json`'s `model_sizes` and `refit`)."""

import json
import math
from pathlib import Path

import pytest
from sized_runs import GPUS, PLAN_PARAMS, UNSIZED, write_export

from dashboard.cli import main
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import scenario_from_json
from dashboard.ingest import import_path
from dashboard.retro import refit_runs
from dashboard.retro.calibrate import calibrate, model_sizes

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples"
SAMPLE_PLAN = ROOT / "data" / "scenarios" / "presets" / "sample_org_13b.json"
BASE = scenario_from_json(SAMPLE_PLAN.read_text(encoding="utf-8"))  # 13B on 64 H100, its layout proposed


def _model_mfu(**changes) -> float:
    return scenario_outputs(BASE.model_copy(update={"mfu": None, **changes}))["throughput"]["mfu_predicted"]


def test_each_job_with_its_size_and_its_mfu(tmp_path):
    """The written file: three jobs log 7e9 (MFU 0.30, 0.42, 0.38), two log none (0.40, 0.41 at the plan's
    13e9); the failed and crashed ones are not behind the MFU. Each ran on 8 GPUs."""
    runs, report = import_path(write_export(tmp_path / "runs.csv", unsized=UNSIZED))
    run_params, params = model_sizes(report.model_params, None, PLAN_PARAMS)
    measured = calibrate(None, runs, run_params=run_params, model_params=params)
    found = refit_runs.jobs(runs, measured["mfu"], BASE, run_params, params)
    assert [(job.run_id, job.size_from, job.model_params, job.gpus) for job in found] == [
        ("job0", "logged", 7e9, GPUS), ("job1", "logged", 7e9, GPUS), ("job2", "logged", 7e9, GPUS),
        ("unsized0", "given", 13e9, GPUS), ("unsized1", "given", 13e9, GPUS)]
    assert [job.mfu for job in found] == pytest.approx([0.30, 0.42, 0.38, 0.40, 0.41], rel=1e-6)
    fitted = refit_runs.refit_of(found, BASE)
    # the two 13e9 jobs are the plan's model on 8 GPUs: the engine's prediction for it is their rows' prediction
    on_eight = _model_mfu(gpu_count=GPUS)
    assert [row.predicted_mfu for row in fitted.rows[3:]] == pytest.approx([on_eight, on_eight], rel=1e-12)
    ratios = [row.measured_mfu / row.predicted_mfu for row in fitted.rows]
    assert fitted.efficiency == pytest.approx(math.exp(sum(map(math.log, ratios)) / len(ratios)), rel=1e-12)
    assert all(not row.layout_logged for row in fitted.rows)


def test_the_bundled_sample_refits_the_cluster_s_efficiency():
    """The W&B sample's 16 main-run jobs ran the 13B model on 64 H100 at the generator's 0.340-0.356 (P10 lower:
    the burn-in jobs); the model predicts one MFU for the plan's proposed layout on 64 GPUs, so the efficiency
    is the geometric mean of the jobs' MFU over it, and the plan's layout is predicted at that times the model."""
    runs, report = import_path(SAMPLES / "wandb_sample.csv")
    bill, _ = import_path(SAMPLES / "focus_sample.csv")
    measured = calibrate(bill, runs, run_params=report.model_params, gpu_type=BASE.gpu_type)
    found = refit_runs.jobs(runs, measured["mfu"], BASE, report.model_params)
    assert len(found) == 16 and {job.gpus for job in found} == {64} and {job.size_from for job in found} == {"logged"}
    model = _model_mfu()
    fitted = refit_runs.refit_of(found, BASE)
    geometric = math.exp(sum(math.log(job.mfu / model) for job in found) / len(found))
    assert fitted.efficiency == pytest.approx(geometric, rel=1e-12)
    assert 0.30 / model < fitted.efficiency < 0.356 / model
    plan = refit_runs.as_json(found, fitted, BASE)["refit"]["plan"]
    assert plan["mfu"] == pytest.approx(geometric * model, rel=1e-12)
    # docs/calibration.md gives these figures: each recomputed here must be in its paragraph
    doc = " ".join((ROOT / "docs" / "calibration.md").read_text(encoding="utf-8").split())
    start = doc.index("On the bundled quarter (W&B runs, the sample 13B plan on 64 H100")
    paragraph = doc[start:doc.index("Tests:", start)]
    wider = {"gpu_count": 256}
    narrower = {"tensor_parallel": 2, "pipeline_parallel": 1}
    figures = [f"{min(job.mfu for job in found):.3f}–{max(job.mfu for job in found):.3f}",
               f"predicts {100 * model:.1f} %", f"e = {fitted.efficiency:.3g}",
               f"mean error {100 * fitted.mean_error:.2g} %", f"worst {100 * fitted.worst_error:.2g} %",
               f"is then {100 * plan['mfu']:.1f} %", f"model {100 * _model_mfu(**wider):.1f} %) "
               f"{100 * geometric * _model_mfu(**wider):.1f} %", f"(model {100 * _model_mfu(**narrower):.1f} %) "
               f"{100 * geometric * _model_mfu(**narrower):.1f} %"]
    assert [figure for figure in figures if figure not in paragraph] == []


def test_calibrate_json_carries_the_sizes_and_the_refit(tmp_path, capsys):
    path = write_export(tmp_path / "runs.csv", unsized=UNSIZED)
    assert main(["calibrate", str(path), "--plan", str(SAMPLE_PLAN), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(size["run_id"], size["size_from"]) for size in out["model_sizes"]] == [
        ("job0", "logged"), ("job1", "logged"), ("job2", "logged"), ("unsized0", "given"), ("unsized1", "given")]
    refit = out["refit"]
    assert len(refit["rows"]) == 5 and refit["layout_source"].startswith("the plan's")
    assert {"efficiency", "mean_error", "worst_error", "plan"} <= set(refit)
    assert [row["measured_mfu"] for row in refit["rows"]] == pytest.approx([0.30, 0.42, 0.38, 0.40, 0.41], rel=1e-6)


def test_no_measured_mfu_no_refit(tmp_path, capsys):
    """A Slurm export has no tokens: no MFU, so no job sizes and no refit."""
    assert main(["calibrate", str(SAMPLES / "focus_sample.csv"), str(SAMPLES / "slurm_sample.txt"),
                 "--timezone", "UTC", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model_sizes"] == [] and out["refit"] is None


def test_a_plan_beyond_the_anchor_takes_the_refit_s_mfu(tmp_path, capsys):
    """The sample's jobs ran on 64 GPUs; the same plan on 256 GPUs was never measured, so `--write` gives it the
    cluster's efficiency × the model's prediction for 256 GPUs, recorded as measured; on 64 GPUs the measured
    median stands."""
    runs, report = import_path(SAMPLES / "wandb_sample.csv")
    bill, _ = import_path(SAMPLES / "focus_sample.csv")
    measured = calibrate(bill, runs, run_params=report.model_params, gpu_type=BASE.gpu_type)
    found = refit_runs.jobs(runs, measured["mfu"], BASE, report.model_params)
    efficiency = math.exp(sum(math.log(job.mfu / _model_mfu()) for job in found) / len(found))
    wider = tmp_path / "plan256.json"
    wider.write_text(json.dumps(BASE.model_copy(update={"gpu_count": 256}).to_json_dict()), encoding="utf-8")
    written = {}
    for name, plan in (("anchor", SAMPLE_PLAN), ("beyond", wider)):
        out = tmp_path / f"{name}.json"
        assert main(["calibrate", str(SAMPLES / "focus_sample.csv"), str(SAMPLES / "wandb_sample.csv"),
                     "--plan", str(plan), "--write", str(out), "--json"]) == 0
        capsys.readouterr()
        written[name] = json.loads(out.read_text(encoding="utf-8"))
    assert written["anchor"]["mfu"] == float(f"{measured['mfu'].value:.3g}")
    assert written["anchor"]["mfu_measured_from"].startswith("measured over 16 jobs")
    beyond = written["beyond"]
    assert beyond["mfu"] == float(f"{efficiency * _model_mfu(gpu_count=256):.3g}") == beyond["mfu_measured"]
    assert beyond["mfu_measured_from"].startswith("refit: ") and "on 64 GPUs" in beyond["mfu_measured_from"]
    assert main(["estimate", str(tmp_path / "beyond.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["throughput"]["mfu_source"] == "measured"


LOGGED = {"megatron.tensor_model_parallel_size": "2", "megatron.pipeline_model_parallel_size": "2",
          "megatron.micro_batch_size": "2"}


def test_a_logged_layout_is_the_one_priced(tmp_path, capsys):
    """The two jobs that log no size (the plan's 13B) log TP 2 · PP 2 · micro-batch 2 on their 8 GPUs: they are
    priced at that layout (the engine's prediction for the plan so laid out), the three others at the plan's."""
    path = write_export(tmp_path / "runs.csv", unsized=UNSIZED, layout=LOGGED)
    assert main(["calibrate", str(path), "--plan", str(SAMPLE_PLAN), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [size["layout"] for size in out["model_sizes"]] == [None] * 3 + [
        {"tensor_parallel": 2, "pipeline_parallel": 2, "micro_batch_size": 2}] * 2
    rows = out["refit"]["rows"]
    assert [row["layout_logged"] for row in rows] == [False] * 3 + [True] * 2
    assert rows[3]["layout"] == "8 GPUs · TP 2 · PP 2 · DP 2 · micro-batch 2"
    laid_out = _model_mfu(gpu_count=GPUS, tensor_parallel=2, pipeline_parallel=2, micro_batch_size=2)
    assert [row["predicted_mfu"] for row in rows[3:]] == pytest.approx([laid_out] * 2, rel=1e-12)
    assert out["refit"]["layout_source"] == "logged for 2 of 5 jobs, the plan's for the rest"


def test_the_layouts_priced_are_bounded(tmp_path, capsys, monkeypatch):
    """With PLANNER_REFIT_MAX_LAYOUTS=1 only the first layout met is priced: the three 7e9 jobs on 8 GPUs; the two
    13e9 jobs, another scenario, are left out and counted."""
    monkeypatch.setenv("PLANNER_REFIT_MAX_LAYOUTS", "1")
    path = write_export(tmp_path / "runs.csv", unsized=UNSIZED)
    assert main(["calibrate", str(path), "--plan", str(SAMPLE_PLAN), "--json"]) == 0
    refit = json.loads(capsys.readouterr().out)["refit"]
    assert [row["label"].split()[0] for row in refit["rows"]] == ["job0", "job1", "job2"]
    assert refit["left_out"] == 2
