"""A W&B runs export written with known MFU (tests/retro/test_calibrate_params.py, tests/app/test_retro_model_sizes.py):
pretrain jobs that log their model size, jobs that log none, and an evaluation run."""

from __future__ import annotations

import csv
from pathlib import Path

H100_PEAK = 989e12  # dense BF16 FLOP/s, NVIDIA's H100 SXM product page (989.4; 1,979 is sparse)
PARAMS = 7e9
GPUS, RUNTIME_S = 8, 36_000  # 80 GPU-hours a job
# (state, the MFU the job ran at): the finished jobs' median is 0.38; the failed and crashed ones are left out
JOBS = [("finished", 0.30), ("finished", 0.42), ("finished", 0.38), ("failed", 0.10), ("crashed", 0.15)]


def tokens_at(mfu: float, params: float = PARAMS) -> int:
    """The tokens a job of 80 GPU-hours processes at ``mfu``: MFU · GPU-h · 3600 · peak / (6 · params)."""
    return round(mfu * GPUS * RUNTIME_S / 3600 * 3600 * H100_PEAK / (6 * params))


PLAN_PARAMS = 13e9  # the sample organisation's 13B plan: the size of a job that logs none
# Jobs that log no size, (state, the MFU each ran at with the plan's 13e9 parameters): measured at the plan's size
UNSIZED = [("finished", 0.40), ("finished", 0.41)]


def write_export(path: Path, column: str = "model.n_params", size: str = "7000000000",
                 unsized: list[tuple[str, float]] | None = None, layout: dict[str, str] | None = None) -> Path:
    """The jobs above; ``unsized`` jobs log no size, and log ``layout`` (config column → value) when given."""
    fields = ["Name", "State", "User", "Tags", "Created", "Runtime", "ID", "num_gpus", "gpu_type", column,
              "tokens_seen", *(layout or {})]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for number, (state, mfu) in enumerate(JOBS):
            writer.writerow({"Name": f"pretrain-{number}", "State": state, "User": "ada", "Tags": "project:pretrain",
                             "Created": f"2025-05-0{number + 1}T00:00:00.000Z", "Runtime": str(RUNTIME_S),
                             "ID": f"job{number}", "num_gpus": str(GPUS), "gpu_type": "H100", column: size,
                             "tokens_seen": str(tokens_at(mfu))})
        for number, (state, mfu) in enumerate(unsized or []):
            writer.writerow({"Name": f"pretrain-u{number}", "State": state, "User": "ada", "Tags": "project:pretrain",
                             "Created": f"2025-05-1{number}T00:00:00.000Z", "Runtime": str(RUNTIME_S),
                             "ID": f"unsized{number}", "num_gpus": str(GPUS), "gpu_type": "H100", column: "",
                             "tokens_seen": str(tokens_at(mfu, PLAN_PARAMS))} | (layout or {}))
        writer.writerow({"Name": "eval-1", "State": "finished", "User": "ada", "Tags": "project:evals",
                         "Created": "2025-05-09T00:00:00.000Z", "Runtime": "3600", "ID": "eval1", "num_gpus": "8",
                         "gpu_type": "H100", column: "", "tokens_seen": ""})
    return path
