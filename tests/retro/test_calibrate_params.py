"""MFU measured per job from the model size a W&B export logs in its config (no --params): a file written here
with known MFU, and the bundled sample."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from dashboard.cli import main
from dashboard.ingest import import_path
from dashboard.retro.calibrate import calibrate

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
H100_PEAK = 989e12  # dense BF16 FLOP/s, NVIDIA's H100 SXM product page (989.4; 1,979 is sparse)
PARAMS = 7e9
GPUS, RUNTIME_S = 8, 36_000  # 80 GPU-hours a job
# (state, the MFU the job ran at): the finished jobs' median is 0.38; the failed and crashed ones are left out
JOBS = [("finished", 0.30), ("finished", 0.42), ("finished", 0.38), ("failed", 0.10), ("crashed", 0.15)]


def tokens_at(mfu: float, params: float = PARAMS) -> int:
    """The tokens a job of 80 GPU-hours processes at ``mfu``: MFU · GPU-h · 3600 · peak / (6 · params)."""
    return round(mfu * GPUS * RUNTIME_S / 3600 * 3600 * H100_PEAK / (6 * params))


def write_export(path: Path, column: str = "model.n_params", size: str = "7000000000") -> Path:
    fields = ["Name", "State", "User", "Tags", "Created", "Runtime", "ID", "num_gpus", "gpu_type", column,
              "tokens_seen"]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for number, (state, mfu) in enumerate(JOBS):
            writer.writerow({"Name": f"pretrain-{number}", "State": state, "User": "ada", "Tags": "project:pretrain",
                             "Created": f"2025-05-0{number + 1}T00:00:00.000Z", "Runtime": str(RUNTIME_S),
                             "ID": f"job{number}", "num_gpus": str(GPUS), "gpu_type": "H100", column: size,
                             "tokens_seen": str(tokens_at(mfu))})
        writer.writerow({"Name": "eval-1", "State": "finished", "User": "ada", "Tags": "project:evals",
                         "Created": "2025-05-09T00:00:00.000Z", "Runtime": "3600", "ID": "eval1", "num_gpus": "8",
                         "gpu_type": "H100", column: "", "tokens_seen": ""})
    return path


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
