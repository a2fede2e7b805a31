"""The run-state vocabulary shared by job and run exports (Slurm's names), and the mapping onto it."""

from __future__ import annotations

import pandas as pd

RUN_STATES: tuple[str, ...] = (
    "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL",
    "DEADLINE", "RUNNING", "PENDING", "REQUEUED", "RESIZING", "REVOKED", "SUSPENDED",
)

# States whose GPU-hours count as failed work in the retrospective (waste and the plan-vs-actual gap).
FAILED_STATES: tuple[str, ...] = ("FAILED", "NODE_FAIL", "PREEMPTED", "TIMEOUT", "CANCELLED", "OUT_OF_MEMORY")

# Interrupted is not failed. A segment of a run in a failed state is an interruption when the run resumed after it:
# the next segment of the same run id (a job export's rows of one run, ordered by start) starts at or after its
# end, within RESUME_WINDOW_HOURS, on as many GPUs (GPU-hours / duration, rounded). A segment the scheduler
# restarted itself (sacct -D prints the requeued attempt as REQUEUED) is an interruption whatever follows it. An
# interruption loses the work since the last checkpoint (half a checkpoint interval on average, Young 1974) and the
# restart, on the segment's GPUs; the rest of its GPU-hours is work kept. A failed segment the run never resumed
# after is failed, its work lost.
RESTARTED_STATES: tuple[str, ...] = ("REQUEUED",)
RESUME_WINDOW_HOURS = 24.0
# Per-segment checkpoint interval and restart time in minutes, read where a run export carries them (a run log
# mapped with these columns); elsewhere the plan scenario's, else the scenario defaults.
CHECKPOINT_COLUMNS: tuple[str, str] = ("checkpoint_interval_min", "restart_min")


# Slurm short codes (squeue / sacct -o State%2) and W&B run states, upper-cased, onto RUN_STATES.
_RUN_STATE_ALIASES: dict[str, str] = {
    "CD": "COMPLETED", "F": "FAILED", "CA": "CANCELLED", "TO": "TIMEOUT", "NF": "NODE_FAIL",
    "PR": "PREEMPTED", "OOM": "OUT_OF_MEMORY", "BF": "BOOT_FAIL", "DL": "DEADLINE", "R": "RUNNING",
    "PD": "PENDING", "RQ": "REQUEUED", "RS": "RESIZING", "RV": "REVOKED", "S": "SUSPENDED",
    "FINISHED": "COMPLETED", "CRASHED": "FAILED", "KILLED": "CANCELLED",
} | {state: state for state in RUN_STATES}


def normalise_run_state(states: pd.Series) -> pd.Series:
    """States as RUN_STATES names, NA where missing or unknown.

    Accepts Slurm long names, ``CANCELLED by 1234`` and the truncated ``CANCELLED+``, Slurm short codes
    and W&B states (finished → COMPLETED, failed/crashed → FAILED, killed → CANCELLED), in any case.
    """
    word = states.astype("string").str.upper().str.extract(r"^\s*([A-Z_]+)", expand=False)
    return word.map(_RUN_STATE_ALIASES).astype("string")
