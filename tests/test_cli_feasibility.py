"""`estimate` and `optimal` on the command line: the feasibility keys, refused layouts, plans that cannot run."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MEMORY_KEYS = {"weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "logits_gb", "reserve_gb", "total_gb",
               "gpu_memory_gb", "fits", "headroom_gb"}
LAYOUT_KEYS = {"data_parallel", "tensor_parallel", "pipeline_parallel", "expert_parallel", "context_parallel",
               "virtual_pipeline_stages", "zero_stage"}


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "dashboard", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_estimate_json_has_the_feasibility_keys():
    done = run_cli("estimate", "--json", "--set", "unique_tokens=1e12")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert MEMORY_KEYS == set(result["memory"]) and LAYOUT_KEYS == set(result["layout"])
    for key in ("global_batch_sequences", "optimizer_steps", "pipeline_bubble_fraction", "max_useful_gpus",
                "epochs", "effective_tokens", "feasible"):
        assert key in result
    assert result["epochs"] == 2.0 and result["feasible"] is True


def test_estimate_reports_a_plan_that_cannot_run():
    done = run_cli("estimate", "--json", "--set", "total_params=70e9", "--set", "gpu_count=8",
                   "--set", "tensor_parallel=1", "--set", "pipeline_parallel=1", "--set", "zero_stage=0")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["feasible"] is False and result["memory"]["fits"] is False
    assert result["feasibility_problems"][0].startswith("does not fit: ")


@pytest.mark.parametrize(("assignment", "message"), [
    ("tensor_parallel=16", "tensor_parallel = 16 exceeds gpus_per_node = 8"),
    ("pipeline_parallel=3", "does not divide gpu_count = 512"),
    ("activation_recompute=partial", "activation_recompute = 'partial'"),
])
def test_refused_layouts_exit_2_with_one_line(assignment, message):
    done = run_cli("estimate", "--set", assignment)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr and "Traceback" not in done.stderr


def test_optimal_says_when_no_plan_fits():
    done = run_cli("optimal", "--target-loss", "1.9", "--set", "gpu_count=8")
    assert done.returncode == 2
    assert "needs a larger model than fits" in done.stderr and "Traceback" not in done.stderr


def test_optimal_returns_a_plan_that_fits():
    done = run_cli("optimal", "--budget-usd", "5e7", "--set", "gpu_count=8", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["feasible"] is True and result["memory_limited"] is True
