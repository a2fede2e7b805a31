"""Write the bundled run samples: the Slurm jobs and W&B runs behind the billing samples' quarter (2025-04-01 to 06-30).

Run from the repository root: ``.venv/bin/python data/samples/generator/make_run_samples.py``. The app never runs this
script; it reads the two files it writes into ``data/samples/``, which are committed: ``slurm_sample.txt`` (``sacct
--parsable2``, times in UTC, the cluster's time zone) and ``wandb_sample.csv`` (the W&B runs table). It reads the
usage plan of ``make_billing_samples.py`` so the jobs stay inside the bills. The output is deterministic (fixed seed).

The organisation and its quarter are those of the billing samples. Slurm job names are the billing run tags, Account
is the team and WCKey the billing project, so a join on run_id (or project) matches every billed GPU run tag:
- April: ``tokenize-corpus`` on four CPU nodes (``data``, 1-4 April, and 4 May). Ablation sweeps of a 1.3B proxy
  on on-demand H100 (``research``, project ``ablations``): ``ablate-lr-schedule`` (7-11 April),
  ``ablate-batch-size`` (14-18) and ``ablate-seq-len`` (21-25), three jobs a weekday of different node counts and
  lengths (node counts doubled on days billed 50 machine-hours or more), one of them cancelled, one diverged, one
  out of memory; on 9 April the cosine config is submitted twice (the one repeat the duplicate-run check finds); on
  25 April a job is cancelled before it starts. A sweep job that would look like a repeat of an earlier one (same
  GPUs, within 10 % of its length, started less than a day later) is shortened by 15 % until it does not.
  ``data-mix-pilot`` (``data``, project ``data-mix``): one 2-node job a day, 14-17 April.
- ``pretrain-13b-burnin`` on the eight committed 8xH100 machines h[001-008] from 1 May: three jobs, the first failed.
- ``pretrain-13b`` (``llm-pretrain``) from 5 May 06:00 to 27 June 13:10 as 22 successive 64-GPU jobs under a 3-day
  time limit (``MAIN_SEGMENTS``): 14 COMPLETED (the training script saves and exits when less than 2 h remain, or
  at a planned stop), NODE_FAIL on 7 May, 29 May and 12 June, FAILED on 8 May (a loss spike after resuming) and
  13 June (the repaired node), TIMEOUT twice (a hang in all-reduce, a stalled final checkpoint), CANCELLED once
  (12 May, to change the data mix). A restart follows 15 min after a completed job, 25-45 min after a time-out, the
  cancellation or the loss spike, and after a node failure once the node is back (the machine-hours the bill's
  FLEET_CHANGES lose); the hot spare h009 stands in for h005 from 8 to 10 May. The run's GPU-hours stay within its
  billed GPU-hours every day.
- May: ``ablate-lr-warmup`` (an array of four 1-node tasks and a 2-node rerun, 8 May), ``ablate-data-mix`` (two
  2-node jobs) and ``ablate-tokenizer`` (one node) on 10 May; ``finetune-13b-chat`` (``research``, project
  ``chat``) on two nodes from 17 to 28 May as five jobs, one out of memory.
- ``llm-eval``: ``eval-harness`` on spot A100 every third day (one job, two nodes when billed over 6 machine-hours;
  three preempted, one cancelled) and ``eval-full-suite`` every Monday from 5 May on four spot H100 nodes, a
  heterogeneous job whose second component is a CPU node (the judge); the one of 30 June is still RUNNING when
  sacct runs (30 June 22:00), and an ``eval-harness`` array for 1 July is PENDING.
- The untagged dev box of June is a VM outside Slurm, so it has no job.

Every job that started lists its steps (``.batch``, ``.extern`` and the ``.0`` srun step; a heterogeneous job
``+0.batch``, ``+0.extern``, ``+1.extern``, ``+0.0``, ``+1.0``). The W&B table has one run per GPU job that started
(``slurm_job_id`` = its JobID, the ``+0`` component for heterogeneous jobs; the project as a ``project:`` tag, or the
Group for evaluations), plus a 0-GPU debug run, a pending run and a run that crashed before logging its runtime.
Tokens (``tokens_seen``, per run): the main run's jobs process 85-89 % of the plan's tokens per GPU-hour (plan
``sample_org_13b``: 1e12 tokens in 54,769 ideal GPU-hours at 40 % MFU); a failed job's tokens are those it processed
before failing (the hung one: 31 h), and its work is lost (the next job resumes from the last job that did not fail;
failed means a state the retrospective counts as failed, so TIMEOUT and CANCELLED too). Before writing,
the script checks that every run's GPU-hours per UTC day are at most those billed for its tag, and that the
duplicate-run rule of the Waste check finds exactly the one repeat.
"""

from __future__ import annotations

import csv
import importlib.util
import math
import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent
rng = random.Random(20250630)

YEAR = 2025
EXPORT = datetime(2025, 6, 30, 22, 0)  # when sacct ran and the W&B table was exported (UTC)
PLAN_TOKENS = 1e12
PLAN_IDEAL_GPU_HOURS = 54_769  # sample_org_13b: 6 x 13e9 x 1e12 FLOPs at 40 % of the H100's 989 dense TFLOP/s
PLAN_TOKENS_PER_GPU_HOUR = PLAN_TOKENS / PLAN_IDEAL_GPU_HOURS
MAIN_EFFICIENCY = (0.85, 0.89)  # main-run tokens per GPU-hour as a share of the plan's
MAIN_BATCH_TOKENS = 1024 * 4096
UIDS = {"alice": 20117, "bob": 20152, "carol": 20208, "dave": 20433, "erin": 20301}
# Mirrors dashboard.ingest.run_states.FAILED_STATES and dashboard.retro.waste's duplicate rule.
FAILED_STATES = {"FAILED", "NODE_FAIL", "PREEMPTED", "TIMEOUT", "CANCELLED", "OUT_OF_MEMORY"}
DUPLICATE_WINDOW = timedelta(hours=24)
DUPLICATE_TOLERANCE = 0.10


def at(text: str) -> datetime:
    """'05-07 13:00' -> datetime(2025, 5, 7, 13, 0)."""
    return datetime.strptime(f"{YEAR}-{text}", "%Y-%m-%d %H:%M")


def hosts(prefix: str, numbers) -> list[str]:
    return [f"{prefix}{n:03d}" for n in numbers]


FLEET = hosts("h", range(1, 9))
WITH_SPARE = hosts("h", [1, 2, 3, 4, 6, 7, 8, 9])  # h009 (on-demand hot spare) for h005, 8-10 May

# The main run: (start, end, state, nodes, W&B note, hours trained before a hang). Times UTC.
MAIN_SEGMENTS = [
    ("05-05 06:00", "05-06 06:00", "COMPLETED", FLEET, "first segment: one day to check throughput and loss", None),
    ("05-06 06:15", "05-07 13:00", "NODE_FAIL", FLEET, "node h005 lost (GPU fell off the bus)", None),
    ("05-08 00:50", "05-08 07:35", "FAILED", WITH_SPARE, "loss spike -> NaN after resuming on the spare", None),
    ("05-08 08:20", "05-10 22:50", "COMPLETED", WITH_SPARE, "planned stop: back to h005, spare released", None),
    ("05-10 23:05", "05-12 07:05", "CANCELLED", FLEET, "stopped to change the data mix", None),
    ("05-12 07:50", "05-15 05:50", "COMPLETED", FLEET, "-", None),
    ("05-15 06:05", "05-18 06:05", "TIMEOUT", FLEET, "hung in all-reduce after 31 h, killed at the time limit", 31.0),
    ("05-18 06:30", "05-21 04:30", "COMPLETED", FLEET, "-", None),
    ("05-21 04:45", "05-24 02:45", "COMPLETED", FLEET, "-", None),
    ("05-24 03:00", "05-27 01:00", "COMPLETED", FLEET, "-", None),
    ("05-27 01:15", "05-29 06:15", "NODE_FAIL", FLEET, "node h003 lost (PSU)", None),
    ("05-29 15:45", "06-01 13:45", "COMPLETED", FLEET, "-", None),
    ("06-01 14:00", "06-04 14:00", "TIMEOUT", FLEET, "final checkpoint upload stalled, killed at the time limit", None),
    ("06-04 14:25", "06-07 12:25", "COMPLETED", FLEET, "-", None),
    ("06-07 12:40", "06-10 10:40", "COMPLETED", FLEET, "-", None),
    ("06-10 10:55", "06-12 08:00", "NODE_FAIL", FLEET, "node h006 lost (NVLink errors)", None),
    ("06-12 22:30", "06-13 03:10", "FAILED", FLEET, "NCCL error on the repaired h006", None),
    ("06-13 08:40", "06-16 06:40", "COMPLETED", FLEET, "-", None),
    ("06-16 06:55", "06-19 04:55", "COMPLETED", FLEET, "-", None),
    ("06-19 05:10", "06-22 03:10", "COMPLETED", FLEET, "-", None),
    ("06-22 03:25", "06-25 01:25", "COMPLETED", FLEET, "-", None),
    ("06-25 01:40", "06-27 13:10", "COMPLETED", FLEET, "final segment: stopped before the fleet's release", None),
]
BURN_IN = [
    ("05-01 08:10", "05-01 20:40", "FAILED", "Xid 79 on h005 during the NCCL soak; reseated"),
    ("05-01 22:00", "05-03 10:00", "COMPLETED", "-"),
    ("05-03 10:30", "05-04 22:30", "COMPLETED", "-"),
]
FINETUNE = [
    ("05-17 06:50", "05-20 04:50", "COMPLETED", "-"),
    ("05-20 05:05", "05-21 02:30", "OUT_OF_MEMORY", "CUDA OOM on a batch of very long conversations"),
    ("05-21 03:10", "05-24 01:10", "COMPLETED", "-"),
    ("05-24 01:25", "05-26 23:25", "COMPLETED", "-"),
    ("05-26 23:40", "05-28 21:30", "COMPLETED", "final epoch"),
]
TOKENIZE = [("04-01 00:20", "04-04 23:40"), ("05-04 17:55", "05-04 23:50")]

# Ablation sweeps: run -> (nodes, duration weight, config, learning rate) of the three jobs of each weekday.
SWEEPS = {
    "ablate-lr-schedule": ((1, 1.0, "cosine", 3e-4), (1, 0.8, "wsd", 3e-4), (2, 0.9, "linear", 3e-4)),
    "ablate-batch-size": ((1, 1.0, "bs256", 3e-4), (2, 0.6, "bs512", 4.2e-4), (4, 0.35, "bs1024", 6e-4)),
    "ablate-seq-len": ((1, 1.0, "seq2k", 3e-4), (2, 0.85, "seq4k", 3e-4), (2, 0.7, "seq8k", 3e-4)),
}
# (run, day, job index) -> (state, share of its planned length it ran, or hours for OUT_OF_MEMORY)
SWEEP_ENDINGS = {
    ("ablate-lr-schedule", date(2025, 4, 10), 2): ("CANCELLED", 0.3),
    ("ablate-batch-size", date(2025, 4, 16), 2): ("FAILED", 0.45),
    ("ablate-seq-len", date(2025, 4, 21), 2): ("OUT_OF_MEMORY", 0.2),
}
REPEAT = ("ablate-lr-schedule", date(2025, 4, 9))  # the first config is submitted again 2 h 10 min later
NEVER_STARTED = ("ablate-seq-len", date(2025, 4, 25))  # a fourth job, cancelled while pending
EVAL_ENDINGS = {  # eval-harness days that did not complete: (state, share of the planned length)
    date(2025, 4, 26): ("PREEMPTED", 0.4),
    date(2025, 5, 14): ("CANCELLED", 0.03),
    date(2025, 5, 20): ("PREEMPTED", 0.55),
    date(2025, 6, 10): ("PREEMPTED", 0.3),
}
FULL_SUITE_ENDINGS = {date(2025, 6, 9): ("PREEMPTED", 0.45)}
FULL_SUITE_RUNNING_START = at("06-30 15:30")


@dataclass
class Job:
    name: str
    user: str
    team: str
    project: str
    partition: str
    gpu: str  # "h100", "a100", or "" for CPU nodes
    state: str  # a Slurm state word; CANCELLED is written "CANCELLED by <uid>"
    start: datetime | None  # None: never started
    end: datetime | None  # None while RUNNING; the cancel time for a job that never started
    nodes: list[str] = field(default_factory=list)
    qos: str = "normal"
    step: str = "torchrun"  # name of the .0 srun step
    array_key: str = ""  # tasks of one array share its job id
    task: str = ""  # array task ("1") or pending range ("[1-4]")
    het: bool = False  # a second component on one CPU node
    submit: datetime | None = None
    repeat: bool = False  # the deliberate repeat
    wandb: dict | None = None
    job_id: str = ""

    @property
    def elapsed(self) -> timedelta:
        if self.start is None:
            return timedelta(0)
        return (self.end or EXPORT) - self.start

    @property
    def gpus(self) -> int:
        return 8 * len(self.nodes) if self.gpu else 0

    @property
    def gpu_hours(self) -> float:
        return self.gpus * self.elapsed.total_seconds() / 3600


def load_billing():
    spec = importlib.util.spec_from_file_location("make_billing_samples", HERE / "make_billing_samples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def billed_gpu_hours() -> dict[tuple[str, date], float]:
    """GPU-hours billed per (run tag, day), from the billing samples' usage plan (8 GPUs per machine-hour)."""
    billing = load_billing()
    billed: dict[tuple[str, date], float] = defaultdict(float)
    for line in billing.usage_plan():
        gpus = billing.SHAPES[line["shape"]]["aws"][1]
        run = line["tags"].get("run_id")
        if run and gpus:
            billed[(run, line["day"])] += line["hours"] * gpus
    return dict(billed)


# --- tokens, loss and evaluation scores ------------------------------------------------------------------------


def loss(params: float, tokens: float) -> float:
    """Chinchilla-form loss with a little noise."""
    return 1.69 + 406.4 / params**0.34 + 410.7 / max(tokens, 1e8) ** 0.28 + rng.uniform(-0.01, 0.01)


def throughput(gpus: int, params: float, mfu: float) -> float:
    """Tokens per second at this MFU on H100 (989 dense TFLOP/s)."""
    return gpus * 989e12 * mfu / (6 * params)


def wandb_times(job: Job, ended_cleanly: bool) -> tuple[datetime, int]:
    """Created (process start, after Slurm's start) and Runtime in seconds."""
    created = job.start + timedelta(seconds=rng.randint(25, 110))
    end = job.end or EXPORT
    runtime = int((end - created).total_seconds()) - (rng.randint(5, 40) if ended_cleanly else 0)
    return created, runtime


WANDB_STATE = {
    "COMPLETED": "finished", "FAILED": "failed", "NODE_FAIL": "crashed", "OUT_OF_MEMORY": "crashed",
    "TIMEOUT": "killed", "CANCELLED": "killed", "PREEMPTED": "killed", "RUNNING": "running",
}


# --- the jobs ---------------------------------------------------------------------------------------------------


def main_run() -> tuple[list[Job], list[tuple[datetime, float]]]:
    """The 22 pretrain-13b jobs with their W&B runs, and (end, tokens kept so far) after each job that did not fail."""
    jobs, progress = [], []
    kept_tokens, kept_step = 0, 0
    for start, end, state, nodes, note, trained_h in MAIN_SEGMENTS:
        job = Job("pretrain-13b", "alice", "llm-pretrain", "pretrain-13b", "gpu-h100", "h100", state, at(start),
                  at(end), nodes)
        created, runtime = wandb_times(job, state == "COMPLETED")
        trained_s = runtime if trained_h is None else trained_h * 3600
        efficiency = rng.uniform(*MAIN_EFFICIENCY)
        steps = round(efficiency * PLAN_TOKENS_PER_GPU_HOUR * job.gpus * trained_s / 3600 / MAIN_BATCH_TOKENS)
        tokens = steps * MAIN_BATCH_TOKENS
        job.wandb = {
            "Name": f"pretrain-13b-seg{len(jobs) + 1:02d}", "State": WANDB_STATE[state], "Notes": note,
            "Tags": "pretrain,13b,team:llm-pretrain,project:pretrain-13b", "Group": "pretrain-13b",
            "Created": created, "Runtime": runtime, "model.n_params": "13000000000",
            "optimizer.lr": "0.00015" if job.start < at("05-12 00:00") else "0.00012",
            "trainer.devices": "8", "trainer.num_nodes": "8", "gpu_type": "NVIDIA H100 80GB HBM3",
            "tokens_seen": tokens, "_step": kept_step + steps, "train/loss": f"{loss(13e9, kept_tokens + tokens):.3f}",
            "train/tokens_per_second": int(round(tokens / trained_s, -2)),
        }
        if state not in FAILED_STATES:
            kept_tokens, kept_step = kept_tokens + tokens, kept_step + steps
            progress.append((job.end, kept_tokens))
        jobs.append(job)
    return jobs, progress


def burn_in() -> list[Job]:
    jobs, tokens_so_far = [], 0
    for k, (start, end, state, note) in enumerate(BURN_IN, 1):
        job = Job("pretrain-13b-burnin", "alice", "llm-pretrain", "pretrain-13b", "gpu-h100", "h100", state,
                  at(start), at(end), FLEET)
        created, runtime = wandb_times(job, state == "COMPLETED")
        tokens = round(throughput(64, 13e9, rng.uniform(0.28, 0.32)) * runtime / MAIN_BATCH_TOKENS) * MAIN_BATCH_TOKENS
        tokens_so_far += tokens
        job.wandb = {
            "Name": f"pretrain-13b-burnin-{k}", "State": WANDB_STATE[state], "Notes": note,
            "Tags": "burnin,13b,team:llm-pretrain,project:pretrain-13b", "Group": "pretrain-13b-burnin",
            "Created": created, "Runtime": runtime, "model.n_params": "13000000000", "optimizer.lr": "0.00015",
            "trainer.devices": "8", "trainer.num_nodes": "8", "gpu_type": "NVIDIA H100 80GB HBM3",
            "tokens_seen": tokens, "_step": tokens_so_far // MAIN_BATCH_TOKENS,
            "train/loss": f"{loss(13e9, tokens_so_far):.3f}",
            "train/tokens_per_second": int(round(tokens / runtime, -2)),
        }
        jobs.append(job)
    return jobs


def proxy_wandb(job: Job, name: str, team: str, project: str, lr: float, batch: int, note: str = "-",
                sweep: tuple[str, str] = ("", ""), group: str = "") -> dict:
    """The W&B run of a 1.3B-proxy job (ablations, data-mix pilot)."""
    created, runtime = wandb_times(job, job.state == "COMPLETED")
    oom = job.state == "OUT_OF_MEMORY"
    tokens = 0 if oom else round(throughput(job.gpus, 1.3e9, rng.uniform(0.34, 0.42)) * runtime / batch) * batch
    return {
        "Name": name, "Agent": sweep[1], "State": WANDB_STATE[job.state], "Notes": note,
        "Tags": f"ablation,team:{team},project:{project}", "Group": group or job.name, "Sweep": sweep[0],
        "Created": created, "Runtime": runtime, "model.n_params": "1300000000", "optimizer.lr": f"{lr:g}",
        "num_gpus": str(job.gpus), "gpu_type": "H100", "tokens_seen": tokens or "",
        "_step": tokens // batch if tokens else "",
        "train/loss": f"{loss(1.3e9, tokens) + rng.uniform(-0.03, 0.03):.3f}" if tokens else "",
        "train/tokens_per_second": int(round(tokens / runtime, -2)) if tokens else "",
    }


def wandb_id() -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))


def sweeps(billed: dict[tuple[str, date], float]) -> list[Job]:
    """April's research sweeps: three jobs each billed weekday, sized to 86-95 % of the billed machine-hours."""
    jobs, runs = [], []
    sweep_ids = {run: (wandb_id(), wandb_id()) for run in SWEEPS}
    for (run, day), gpu_hours in sorted(billed.items(), key=lambda item: (item[0][1], item[0][0])):
        if run not in SWEEPS:
            continue
        machine_hours = gpu_hours / 8
        scale = 2 if machine_hours >= 50 else 1
        members = [(nodes * scale, weight, config, lr, False) for nodes, weight, config, lr in SWEEPS[run]]
        if (run, day) == REPEAT:
            nodes, weight, config, lr, _ = members[0]
            members.append((nodes, weight * 1.02, config, lr, True))
        endings = [SWEEP_ENDINGS.get((run, day, k), ("COMPLETED", 1.0)) for k in range(len(members))]
        budget = rng.uniform(0.86, 0.95) * machine_hours
        fixed = sum(m[0] * share for m, (state, share) in zip(members, endings, strict=True)
                    if state == "OUT_OF_MEMORY")
        flexible = sum(m[0] * m[1] * share for m, (state, share) in zip(members, endings, strict=True)
                       if state != "OUT_OF_MEMORY")
        base = (budget - fixed) / flexible
        first = datetime.combine(day, datetime.min.time()) + timedelta(hours=7, minutes=rng.randint(0, 90))
        start, next_node = first, 21
        for k, ((nodes, weight, config, lr, repeat), (state, share)) in enumerate(zip(members, endings, strict=True)):
            if repeat:
                start = first + timedelta(hours=2, minutes=10)
            elif k:
                start += timedelta(minutes=rng.randint(3, 25))
            hours = share if state == "OUT_OF_MEMORY" else base * weight * share
            job = Job(run, "bob", "research", "ablations", "gpu-h100", "h100", state, start,
                      start + timedelta(seconds=round(hours * 3600)), hosts("h", range(next_node, next_node + nodes)),
                      repeat=repeat)
            next_node += nodes
            note = {"CANCELLED": "stopped early: clearly worse", "FAILED": "diverged at step 2.1k",
                    "OUT_OF_MEMORY": "CUDA OOM at seq 8192 without activation checkpointing"}.get(state, "-")
            jobs.append(job)
            runs.append((job, (f"{run}-{config}-{day:%m%d}", "research", "ablations", lr, 1 << 20, note,
                               sweep_ids[run])))
        if (run, day) == NEVER_STARTED:
            submit = datetime.combine(day, datetime.min.time()) + timedelta(hours=9, minutes=40)
            jobs.append(Job(run, "bob", "research", "ablations", "gpu-h100", "h100", "CANCELLED", None,
                            submit + timedelta(minutes=82), submit=submit))
    shorten_lookalikes(jobs)
    for job, args in runs:
        job.wandb = proxy_wandb(job, *args)
    return jobs


def alike(job: Job, earlier: Job) -> bool:
    """The Waste check's duplicate rule: same team, project, name and GPUs, started at most a day after the earlier
    job and lasting within 10 % of it, neither failed."""
    hours = earlier.elapsed.total_seconds()
    return ((job.team, job.project, job.name, job.gpu, job.gpus)
            == (earlier.team, earlier.project, earlier.name, earlier.gpu, earlier.gpus)
            and job.state not in FAILED_STATES and earlier.state not in FAILED_STATES
            and timedelta(0) <= job.start - earlier.start <= DUPLICATE_WINDOW
            and abs(job.elapsed.total_seconds() - hours) <= DUPLICATE_TOLERANCE * hours)


def shorten_lookalikes(jobs: list[Job]) -> None:
    """Shorten (by 15 % at a time) a sweep job that would look like a repeat of an earlier one, except the repeat."""
    ordered = sorted((job for job in jobs if job.start is not None), key=lambda job: job.start)
    for k, job in enumerate(ordered):
        while not job.repeat and any(alike(job, earlier) for earlier in ordered[:k]):
            job.end = job.start + timedelta(seconds=round(job.elapsed.total_seconds() * 0.85))


def data_jobs(billed: dict[tuple[str, date], float]) -> list[Job]:
    """data-mix-pilot (one 2-node job a day), ablate-data-mix and ablate-tokenizer (10 May), tokenize-corpus (CPU)."""
    jobs = []
    mixes = iter(["web60-code20", "web50-code30", "web55-books15", "web45-code25-math10"])
    for (run, day), gpu_hours in sorted(billed.items(), key=lambda item: item[0][1]):
        if run != "data-mix-pilot":
            continue
        start = datetime.combine(day, datetime.min.time()) + timedelta(hours=9, minutes=rng.randint(0, 60))
        hours = rng.uniform(0.86, 0.95) * gpu_hours / 8 / 2
        jobs.append(Job(run, "carol", "data", "data-mix", "gpu-h100", "h100", "COMPLETED", start,
                        start + timedelta(seconds=round(hours * 3600)), hosts("h", [37, 38])))
    shorten_lookalikes(jobs)
    for job in jobs:
        job.wandb = proxy_wandb(job, f"data-mix-pilot-{next(mixes)}", "data", "data-mix", 3e-4, 1 << 20,
                                group="data-ablations")
    for run, project, start, hours, nodes, name in [
        ("ablate-data-mix", "data-mix", "05-10 08:00", 9.2, [37, 38], "ablate-data-mix-a"),
        ("ablate-data-mix", "data-mix", "05-10 10:00", 7.9, [39, 40], "ablate-data-mix-b"),
        ("ablate-tokenizer", "tokenizer", "05-10 12:00", 3.5, [41], "ablate-tokenizer-64k"),
    ]:
        job = Job(run, "carol", "data", project, "gpu-h100", "h100", "COMPLETED", at(start),
                  at(start) + timedelta(hours=hours), hosts("h", nodes))
        job.wandb = proxy_wandb(job, name, "data", project, 3e-4, 1 << 20, group="data-ablations")
        jobs.append(job)
    for start, end in TOKENIZE:
        jobs.append(Job("tokenize-corpus", "erin", "data", "dataprep", "cpu", "", "COMPLETED", at(start), at(end),
                        hosts("c", range(1, 5)), step="tokenize"))
    return jobs


def lr_warmup() -> list[Job]:
    """8 May: an array of four 1-node warmup configs, then the out-of-memory config again on 2 nodes."""
    jobs = []
    submit = at("05-08 12:20")
    sweep = (wandb_id(), wandb_id())
    tasks = [  # task, start, hours, state, lr, note
        ("1", "05-08 12:27", 5.03, "COMPLETED", 3e-4, "-"),
        ("2", "05-08 12:30", 0.28, "OUT_OF_MEMORY", 6e-4, "OOM at micro-batch 64"),
        ("3", "05-08 12:33", 2.15, "FAILED", 2e-3, "diverged"),
        ("4", "05-08 12:36", 1.6, "CANCELLED", 1e-3, "stopped early: clearly worse"),
    ]
    for task, start, hours, state, lr, note in tasks:
        job = Job("ablate-lr-warmup", "bob", "research", "ablations", "gpu-h100", "h100", state, at(start),
                  at(start) + timedelta(hours=hours), hosts("h", [20 + int(task)]), array_key="lr-warmup",
                  task=task, submit=submit)
        job.wandb = proxy_wandb(job, f"ablate-lr-warmup-{task}", "research", "ablations", lr, 1 << 20, note, sweep)
        jobs.append(job)
    job = Job("ablate-lr-warmup", "bob", "research", "ablations", "gpu-h100", "h100", "COMPLETED", at("05-08 13:30"),
              at("05-08 13:30") + timedelta(hours=4.4), hosts("h", [25, 26]))
    job.wandb = proxy_wandb(job, "ablate-lr-warmup-2-ckpt", "research", "ablations", 6e-4, 1 << 20,
                            "task 2 again with activation checkpointing")
    jobs.append(job)
    return jobs


def finetune() -> list[Job]:
    jobs, tokens_so_far = [], 0
    for k, (start, end, state, note) in enumerate(FINETUNE, 1):
        job = Job("finetune-13b-chat", "carol", "research", "chat", "gpu-h100", "h100", state, at(start), at(end),
                  hosts("h", [45, 46]))
        created, runtime = wandb_times(job, state == "COMPLETED")
        tokens = round(throughput(16, 13e9, rng.uniform(0.30, 0.36)) * runtime / (1 << 20)) * (1 << 20)
        tokens_so_far += tokens
        job.wandb = {
            "Name": f"finetune-13b-chat-part{k}", "State": WANDB_STATE[state], "Notes": note,
            "Tags": "finetune,team:research,project:chat", "Group": "finetune-13b-chat", "Created": created,
            "Runtime": runtime, "model.n_params": "13000000000", "optimizer.lr": "0.00002", "trainer.devices": "8",
            "trainer.num_nodes": "2", "gpu_type": "NVIDIA H100 80GB HBM3", "tokens_seen": tokens,
            "_step": tokens_so_far >> 20,
            "train/loss": f"{1.55 - 0.25 * k / len(FINETUNE) + rng.uniform(-0.02, 0.02):.3f}",
            "train/tokens_per_second": int(round(tokens / runtime, -2)),
        }
        jobs.append(job)
    return jobs


def hellaswag(when: datetime, progress: list[tuple[datetime, float]]) -> str:
    """Score of the newest kept main-run checkpoint (April: the ablation proxies)."""
    tokens = max([t for end, t in progress if end <= when], default=0.0)
    if not tokens:
        return f"{rng.uniform(0.31, 0.36):.3f}"
    return f"{0.25 + 0.5 * (1 - math.exp(-tokens / 3e11)) + rng.uniform(-0.01, 0.01):.3f}"


def evals(billed: dict[tuple[str, date], float], progress: list[tuple[datetime, float]]) -> list[Job]:
    """eval-harness on spot A100 every third day, eval-full-suite on spot H100 every Monday (a heterogeneous job)."""
    jobs, a100 = [], 1
    for (run, day), gpu_hours in sorted(billed.items(), key=lambda item: item[0][1]):
        if run not in ("eval-harness", "eval-full-suite"):
            continue
        machine_hours = gpu_hours / 8
        if run == "eval-harness":
            nodes = 2 if machine_hours > 6 else 1
            state, share = EVAL_ENDINGS.get(day, ("COMPLETED", 1.0))
            start = datetime.combine(day, datetime.min.time()) + timedelta(hours=11, minutes=rng.randint(0, 180))
            hours = rng.uniform(0.85, 0.95) * machine_hours / nodes * share
            job = Job(run, "dave", "llm-eval", "evals", "gpu-a100", "a100", state, start,
                      start + timedelta(seconds=round(hours * 3600)), hosts("a", range(a100, a100 + nodes)),
                      qos="preempt", step="lm_eval")
            a100 = a100 % 10 + 1
            gpu_type = "A100"
        else:
            if day == EXPORT.date():
                state, start, end = "RUNNING", FULL_SUITE_RUNNING_START, None
            else:
                state, share = FULL_SUITE_ENDINGS.get(day, ("COMPLETED", 1.0))
                start = datetime.combine(day, datetime.min.time()) + timedelta(hours=8, minutes=rng.randint(0, 120))
                hours = rng.uniform(0.86, 0.95) * machine_hours / 4 * share
                end = start + timedelta(seconds=round(hours * 3600))
            job = Job(run, "dave", "llm-eval", "evals", "h100-spot", "h100", state, start, end,
                      hosts("s", range(1, 5)), qos="preempt", step="vllm", het=True)
            gpu_type = "H100"
        created, runtime = wandb_times(job, state == "COMPLETED")
        job.wandb = {
            "Name": f"{run}-{day:%m%d}", "State": WANDB_STATE[state],
            "Notes": "preempted" if state == "PREEMPTED" else "-", "Tags": "eval,team:llm-eval", "Group": "evals",
            "Created": created, "Runtime": runtime, "num_gpus": str(job.gpus), "gpu_type": gpu_type,
            "eval/hellaswag": hellaswag(job.start, progress) if state in ("COMPLETED", "RUNNING") else "",
        }
        jobs.append(job)
    pending = at("06-30 20:40")
    jobs.append(Job("eval-harness", "dave", "llm-eval", "evals", "gpu-a100", "a100", "PENDING", None, None,
                    qos="preempt", array_key="pending-evals", task="[1-4]", submit=pending))
    return jobs


def all_jobs(billed) -> tuple[list[Job], list[tuple[datetime, float]]]:
    main, progress = main_run()
    jobs = burn_in() + main + sweeps(billed) + data_jobs(billed) + lr_warmup() + finetune() + evals(billed, progress)
    for job in jobs:
        if job.submit is None:
            job.submit = job.start - timedelta(minutes=rng.randint(1, 12))
    jobs.sort(key=lambda job: (job.submit, job.start or job.submit))
    next_id, arrays = 470_000, {}
    for job in jobs:
        if job.array_key in arrays:
            base = arrays[job.array_key]
        else:
            next_id += rng.randint(2, 40)
            base = arrays.setdefault(job.array_key, next_id) if job.array_key else next_id
        job.job_id = f"{base}_{job.task}" if job.task else str(base)
    return jobs, progress


# --- checks -----------------------------------------------------------------------------------------------------


def hours_by_day(job: Job) -> dict[date, float]:
    """GPU-hours of a job per UTC day it touches."""
    out: dict[date, float] = defaultdict(float)
    start, end = job.start, job.end or EXPORT
    while start < end:
        cut = min(end, datetime.combine(start.date() + timedelta(days=1), datetime.min.time()))
        out[start.date()] += job.gpus * (cut - start).total_seconds() / 3600
        start = cut
    return out


def check_within_bills(jobs: list[Job], billed: dict[tuple[str, date], float]) -> None:
    used: dict[tuple[str, date], float] = defaultdict(float)
    for job in jobs:
        if job.start is not None and job.gpus:
            for day, hours in hours_by_day(job).items():
                used[(job.name, day)] += hours
    over = {key: (hours, billed.get(key, 0.0)) for key, hours in used.items() if hours > billed.get(key, 0.0) + 1e-9}
    assert not over, f"run GPU-hours beyond the bill: {over}"


def check_one_repeat(jobs: list[Job]) -> None:
    """The Waste check's duplicate rule finds only the deliberate repeat."""
    started = sorted((job for job in jobs if job.start is not None and job.gpus), key=lambda job: job.start)
    found = [job for k, job in enumerate(started) if any(alike(job, earlier) for earlier in started[:k])]
    assert [job.repeat for job in found] == [True], [(j.job_id, j.name, j.start) for j in found]


def check_tokens(jobs: list[Job]) -> None:
    kept = sum(j.wandb["tokens_seen"] for j in jobs if j.name == "pretrain-13b" and j.state not in FAILED_STATES)
    assert 0.9e12 <= kept <= 1.0e12, kept


# --- writing ----------------------------------------------------------------------------------------------------

SACCT_HEADER = ["JobID", "JobName", "User", "Account", "Partition", "QOS", "WCKey", "State", "Submit", "Start", "End",
                "Elapsed", "ElapsedRaw", "AllocNodes", "AllocTRES", "NodeList", "ExitCode"]
EXIT_CODES = {"COMPLETED": "0:0", "FAILED": "1:0", "NODE_FAIL": "0:0", "TIMEOUT": "0:0", "CANCELLED": "0:15",
              "OUT_OF_MEMORY": "0:125", "PREEMPTED": "0:0", "RUNNING": "0:0", "PENDING": "0:0"}
BATCH_STATES = {"TIMEOUT": "CANCELLED", "PREEMPTED": "CANCELLED"}
SRUN_STATES = {"NODE_FAIL": "FAILED", "TIMEOUT": "CANCELLED", "PREEMPTED": "CANCELLED"}


def stamp(when: datetime | None) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S") if when else ""


def duration(elapsed: timedelta) -> str:
    seconds = int(elapsed.total_seconds())
    days, rest = divmod(seconds, 86400)
    text = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{text}" if days else text


def node_list(nodes: list[str]) -> str:
    """h001..h004, h006 -> h[001-004,006]; one node -> h001."""
    if not nodes:
        return "None assigned"
    if len(nodes) == 1:
        return nodes[0]
    numbers = [int(n[1:]) for n in nodes]
    ranges, first = [], numbers[0]
    for previous, current in zip(numbers, [*numbers[1:], None], strict=True):
        if current != previous + 1:
            ranges.append(f"{first:03d}" if first == previous else f"{first:03d}-{previous:03d}")
            first = current
    return f"{nodes[0][0]}[{','.join(ranges)}]"


def tres(gpu: str, nodes: int, batch: bool = False) -> str:
    if gpu == "h100":
        return ("cpu=8,gres/gpu:h100=8,gres/gpu=8,mem=2000G,node=1" if batch else
                f"billing={64 * nodes},cpu={64 * nodes},gres/gpu:h100={8 * nodes},gres/gpu={8 * nodes},"
                f"mem={2000 * nodes}G,node={nodes}")
    if gpu == "a100":  # typed GPU entries only, as this partition's gres.conf reports them
        return ("cpu=8,gres/gpu:a100=8,mem=512G,node=1" if batch else
                f"billing={32 * nodes},cpu={32 * nodes},gres/gpu:a100={8 * nodes},mem={512 * nodes}G,node={nodes}")
    if batch:
        return "cpu=8,mem=500G,node=1"
    return f"billing={128 * nodes},cpu={128 * nodes},mem={500 * nodes}G,node={nodes}"


def sacct_rows(job: Job) -> list[dict]:
    state = f"CANCELLED by {UIDS[job.user]}" if job.state == "CANCELLED" else job.state
    end = "Unknown" if job.end is None else stamp(job.end)
    row = {"JobID": job.job_id, "JobName": job.name, "User": job.user, "Account": job.team,
           "Partition": job.partition, "QOS": job.qos, "WCKey": job.project, "State": state,
           "Submit": stamp(job.submit), "Start": stamp(job.start) or "None", "End": end,
           "Elapsed": duration(job.elapsed), "ElapsedRaw": int(job.elapsed.total_seconds()),
           "AllocNodes": len(job.nodes), "AllocTRES": tres(job.gpu, len(job.nodes)) if job.nodes else "",
           "NodeList": node_list(job.nodes), "ExitCode": EXIT_CODES[job.state] if job.start else "0:0"}
    if job.start is None:
        return [row]
    running = job.state == "RUNNING"

    def step(suffix: str, name: str, state: str, nodes: list[str], gpu: str, batch: bool = False,
             delay: int = 0) -> dict:
        elapsed = job.elapsed - timedelta(seconds=delay)
        return row | {"JobID": f"{row['JobID']}{suffix}", "JobName": name, "User": "", "QOS": "", "WCKey": "",
                      "State": state, "Submit": "", "Start": stamp(job.start + timedelta(seconds=delay)),
                      "Elapsed": duration(elapsed), "ElapsedRaw": int(elapsed.total_seconds()),
                      "AllocNodes": 1 if batch else len(nodes), "AllocTRES": tres(gpu, len(nodes), batch),
                      "NodeList": nodes[0] if batch else node_list(nodes),
                      "ExitCode": "0:0" if suffix.endswith("extern") else row["ExitCode"]}

    batch_state = BATCH_STATES.get(job.state, job.state)
    srun_state = SRUN_STATES.get(job.state, job.state)
    extern_state = "RUNNING" if running else "COMPLETED"
    if not job.het:
        return [row,
                step(".batch", "batch", batch_state, job.nodes, job.gpu, batch=True),
                step(".extern", "extern", extern_state, job.nodes, job.gpu),
                step(".0", job.step, srun_state, job.nodes, job.gpu, delay=20)]
    judge = ["c010"]
    cpu = row | {"JobID": f"{job.job_id}+1", "Partition": "cpu", "AllocNodes": 1,
                 "AllocTRES": "billing=32,cpu=32,mem=128G,node=1", "NodeList": "c010"}
    row = row | {"JobID": f"{job.job_id}+0"}

    def cpu_step(suffix: str, name: str, state: str) -> dict:
        return step(suffix, name, state, judge, "", delay=20 if name != "extern" else 0) | {
            "JobID": f"{job.job_id}+1{suffix}", "Partition": "cpu", "AllocTRES": "cpu=32,mem=128G,node=1"}

    return [row, cpu,
            step(".batch", "batch", batch_state, job.nodes, job.gpu, batch=True) | {"JobID": f"{job.job_id}+0.batch"},
            step(".extern", "extern", extern_state, job.nodes, job.gpu) | {"JobID": f"{job.job_id}+0.extern"},
            cpu_step(".extern", "extern", extern_state),
            step(".0", job.step, srun_state, job.nodes, job.gpu, delay=20) | {"JobID": f"{job.job_id}+0.0"},
            cpu_step(".0", "judge", srun_state)]


WANDB_HEADER = ["Name", "Agent", "State", "Notes", "User", "Tags", "Created", "Runtime", "Sweep", "ID", "Group",
                "slurm_job_id", "model.n_params", "optimizer.lr", "trainer.devices", "trainer.num_nodes", "num_gpus",
                "gpu_type", "tokens_seen", "_step", "train/loss", "train/tokens_per_second", "eval/hellaswag"]


def wandb_rows(jobs: list[Job]) -> list[dict]:
    rows = []
    for job in jobs:
        if job.wandb is None:
            continue
        slurm_id = f"{job.job_id}+0" if job.het else job.job_id
        rows.append(job.wandb | {"User": job.user, "ID": wandb_id(), "slurm_job_id": slurm_id})
    rows += [  # runs with no GPU job behind them
        {"Name": "debug-dataloader", "State": "finished", "User": "erin", "Tags": "debug,team:data",
         "Created": at("04-01 09:12"), "Runtime": 640, "ID": wandb_id(), "Group": "debug", "num_gpus": "0",
         "Notes": "-"},
        {"Name": "eval-harness-smoke", "State": "crashed", "User": "dave", "Tags": "eval,team:llm-eval",
         "Created": at("06-30 19:10"), "Runtime": "", "ID": wandb_id(), "Group": "evals", "num_gpus": "8",
         "gpu_type": "A100", "Notes": "heartbeat lost before first log"},
        {"Name": "finetune-13b-chat-v2", "State": "pending", "User": "carol",
         "Tags": "finetune,team:research,project:chat", "Created": at("06-30 18:05"), "Runtime": "",
         "ID": wandb_id(), "Group": "finetune-13b-chat", "trainer.devices": "8", "trainer.num_nodes": "2",
         "gpu_type": "H100", "Notes": "-"},
    ]
    rows.sort(key=lambda r: r["Created"])
    for row in rows:
        row["Created"] = f"{row['Created']:%Y-%m-%dT%H:%M:%S}.000Z"
    return rows


def main() -> None:
    billed = billed_gpu_hours()
    jobs, _ = all_jobs(billed)
    check_within_bills(jobs, billed)
    check_one_repeat(jobs)
    check_tokens(jobs)
    rows = [row for job in jobs for row in sacct_rows(job)]
    with open(OUT / "slurm_sample.txt", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, SACCT_HEADER, delimiter="|", lineterminator="\n", quoting=csv.QUOTE_NONE)
        writer.writeheader()
        writer.writerows(rows)
    print(f"slurm_sample.txt: {len(rows)} rows ({len(jobs)} jobs)")
    runs = wandb_rows(jobs)
    with open(OUT / "wandb_sample.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, WANDB_HEADER, quoting=csv.QUOTE_ALL, lineterminator="\n", restval="")
        writer.writeheader()
        writer.writerows(runs)
    print(f"wandb_sample.csv: {len(runs)} rows")


if __name__ == "__main__":
    main()
