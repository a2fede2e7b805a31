"""`python -m dashboard calibrate`: JSON with every input, a readable table, a scenario `estimate` accepts, exit 2 on
bad input."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.cli import main
from dashboard.core.scenario import default_scenario
from dashboard.retro.calibrate import KEYS

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples"
BILL, SLURM, WANDB = (str(SAMPLES / name) for name in ("focus_sample.csv", "slurm_sample.txt", "wandb_sample.csv"))
PLAN_13B = ROOT / "data" / "scenarios" / "presets" / "sample_org_13b.json"
FIELDS = {"value", "low", "high", "count", "exposure", "basis", "rule", "caveat", "thin", "refused", "source_rows",
          "source_lines", "reason", "measured"}


def calibrated(capsys, *args) -> dict:
    assert main(["calibrate", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_has_every_input(capsys):
    result = calibrated(capsys, BILL, WANDB, "--params", "13e9")
    assert result["period"] == "2025-04-01 to 2025-06-30"
    assert list(result["inputs"]) == list(KEYS)
    assert all(set(item) == FIELDS for item in result["inputs"].values())
    assert all(item["source_rows"] == len(item["source_lines"]) for item in result["inputs"].values())
    # the MFU's lines are the W&B file's 16 main-run jobs with tokens that did not fail; line 1 is the header
    with open(WANDB, newline="", encoding="utf-8") as handle:
        expected = [number + 2 for number, row in enumerate(csv.DictReader(handle))
                    if "project:pretrain-13b" in row["Tags"] and row["State"] == "finished" and row["tokens_seen"]]
    assert result["inputs"]["mfu"]["source_lines"] == expected and len(expected) == 16
    assert 0.34 <= result["inputs"]["mfu"]["value"] <= 0.36
    # p5.48xlarge committed at $57.63 an hour for 8 GPUs
    assert result["inputs"]["price_reserved_per_gpu_hour"]["value"] == pytest.approx(57.63 / 8, rel=1e-4)


def test_plan_gives_the_model_size(tmp_path, capsys):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"name": "13B", "total_params": 13e9, "tokens": 1e12}))
    with_plan = calibrated(capsys, BILL, WANDB, "--plan", str(plan))["inputs"]["mfu"]
    with_params = calibrated(capsys, BILL, WANDB, "--params", "13e9")["inputs"]["mfu"]
    assert with_plan["value"] == pytest.approx(with_params["value"])
    without = calibrated(capsys, BILL, WANDB)["inputs"]["mfu"]  # the export logs model.n_params
    assert without["value"] == pytest.approx(with_params["value"])


def test_slurm_needs_its_timezone_and_gives_rates(capsys):
    result = calibrated(capsys, BILL, SLURM, "--timezone", "UTC", "--format", "focus")["inputs"]
    assert result["node_failures_per_1000_node_days"]["count"] == 8
    assert result["mfu"]["value"] is None and "tokens" in result["mfu"]["caveat"]


def test_run_export_alone_and_files_either_way_round(capsys):
    alone = calibrated(capsys, SLURM, "--timezone", "UTC")["inputs"]
    assert alone["price_spot_per_gpu_hour"]["value"] is None and "bill" in alone["price_spot_per_gpu_hour"]["caveat"]
    assert alone["node_failures_per_1000_node_days"]["count"] == 8
    swapped = calibrated(capsys, WANDB, BILL, "--params", "13e9")["inputs"]
    assert swapped["price_reserved_per_gpu_hour"]["value"] == pytest.approx(57.63 / 8, rel=1e-4)


def test_write_gives_a_scenario_estimate_accepts(tmp_path, capsys):
    out = tmp_path / "calibrated.json"
    result = calibrated(capsys, BILL, WANDB, "--params", "13e9", "--write", str(out))
    assert result["written"]["path"] == str(out) and "mfu" in result["written"]["applied"]
    data = json.loads(out.read_text())
    assert data["name"] == default_scenario().name + " (calibrated)"
    # written to the three significant figures the pages show
    assert data["mfu"] == pytest.approx(result["inputs"]["mfu"]["value"], rel=5e-3) and len(str(data["mfu"])) <= 5
    assert data["spot_share"] == pytest.approx(result["inputs"]["spot_share"]["value"], rel=5e-3)
    done = subprocess.run([sys.executable, "-m", "dashboard", "estimate", str(out), "--json"], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["cost_total_usd"] > 0


def test_readable_table(capsys):
    assert main(["calibrate", BILL, WANDB, "--params", "13e9"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Calibrated from 2025-04-01 to 2025-06-30")
    lines = {line.split()[0]: line for line in out.splitlines() if line and not line.startswith(" ")}
    assert set(KEYS) <= set(lines)
    assert "(thin" in lines["node_failures_per_1000_node_days"]
    assert "note: this export carries no checkpoint or restart records" in out


def test_thin_and_unmeasured_inputs_are_null_with_a_reason(capsys):
    """Slurm sample: 8 node failures over about 511 node-days (thin: under 1,000); Garwood 90 % for 8 events is
    chi2(0.05; 16)/2 = 7.9616/2 to chi2(0.95; 18)/2 = 28.8693/2 events (chi-square tables)."""
    inputs = calibrated(capsys, BILL, SLURM, "--timezone", "UTC")["inputs"]
    node = inputs["node_failures_per_1000_node_days"]
    assert node["value"] is None and node["reason"].startswith("thin, so applied only when chosen")
    assert node["measured"] == pytest.approx(8 / node["exposure"] * 1000)
    assert node["low"] == pytest.approx(7.9616 / 2 / node["exposure"] * 1000, rel=1e-4)
    assert node["high"] == pytest.approx(28.8693 / 2 / node["exposure"] * 1000, rel=1e-4)
    assert node["source_rows"] == 8
    debug = inputs["debug_overhead"]
    assert debug["value"] is None and debug["measured"] is None
    assert debug["reason"].startswith("not measured: no runs named debug")
    chosen = calibrated(capsys, BILL, SLURM, "--timezone", "UTC", "--use-thin", "node_failures_per_1000_node_days")
    assert chosen["inputs"]["node_failures_per_1000_node_days"]["value"] == pytest.approx(node["measured"])
    assert chosen["inputs"]["node_failures_per_1000_node_days"]["reason"] is None


def test_use_thin_writes_the_chosen_thin_input(tmp_path, capsys):
    out = tmp_path / "calibrated.json"
    plain = calibrated(capsys, BILL, SLURM, "--timezone", "UTC", "--write", str(out))
    assert "node_failures_per_1000_node_days" not in plain["written"]["applied"]
    assert json.loads(out.read_text())["node_failures_per_1000_node_days"] == (
        default_scenario().node_failures_per_1000_node_days)
    chosen = calibrated(capsys, BILL, SLURM, "--timezone", "UTC", "--write", str(out),
                        "--use-thin", "node_failures_per_1000_node_days")
    assert "node_failures_per_1000_node_days" in chosen["written"]["applied"]
    rate = chosen["inputs"]["node_failures_per_1000_node_days"]["value"]
    assert json.loads(out.read_text())["node_failures_per_1000_node_days"] == pytest.approx(rate, rel=5e-3)


def test_carry_gives_the_next_plan_and_writes_it(tmp_path, capsys):
    """The sample quarter against the sample 13B plan: the next plan costs at least what the quarter did, every part
    of Plan vs actual named (the figures are pinned in tests/retro/test_carry.py)."""
    out = tmp_path / "next.json"
    result = calibrated(capsys, BILL, WANDB, "--plan", str(PLAN_13B), "--carry", "--write", str(out))
    carried = result["carried"]
    assert [part["part"] for part in carried["parts"]] == ["scale", "efficiency", "failures and restarts",
                                                          "experiments", "idle / unattributed", "price"]
    assert carried["next_usd"] >= carried["actual_usd"] > carried["old_plan_usd"]
    assert carried["next_usd"] == pytest.approx(carried["next_gpu_usd"] + carried["lines_usd"])
    assert carried["banner"].startswith("The last plan missed by 45.7 %")
    assert json.loads(out.read_text())["tokens"] > 1e12  # the work done, carried into the written plan


def test_carry_needs_a_plan(capsys):
    assert main(["calibrate", BILL, WANDB, "--carry"]) == 2
    assert "--carry needs --plan" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "needle"), [
    (["nope.csv"], "no such file"),
    ([BILL, "--params", "-1"], "--params"),
    ([BILL, "--plan", "missing.json"], "--plan"),
    ([WANDB, SLURM, "--timezone", "UTC"], "both run exports"),
    ([BILL, str(SAMPLES / "aws_cur_sample.csv")], "is a bill"),
    ([SLURM], "time zone"),
    ([BILL, "--timezone", "Mars/Olympus"], "time zone"),
    ([BILL, "--gpus-per-node", "0"], "--gpus-per-node"),
])
def test_bad_input_is_one_line(args, needle, capsys):
    assert main(["calibrate", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err and "Traceback" not in err


def test_an_unknown_use_thin_key_is_one_line_and_status_2(capsys):
    assert main(["calibrate", BILL, SLURM, "--timezone", "UTC", "--use-thin", "not_an_input"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--use-thin takes an input key" in err and "'not_an_input'" in err
