"""A run's segments (job rows) and the marks of each that no setting changes: its duration in hours and whether its
run resumed after it (the next segment of the same run id, by start then source row, starts at or after its end,
within ``RESUME_WINDOW_HOURS``, on as many GPUs: ``dashboard.ingest.run_states``). Whether a resumed segment was an
interruption depends on the failed states chosen, and what it lost on the checkpoint interval and restart time
(``dashboard.retro.waste.marked``); these marks do not, so an import computes them once for the jobs rollup
(``dashboard.workspace.job_rollup``) and the interruptions are read from it for any setting (issue 52)."""

from __future__ import annotations

import ibis
import ibis.expr.types as ir

from dashboard.ingest.run_states import RESTARTED_STATES, RESUME_WINDOW_HOURS
from dashboard.query.columns import gpu, holds
from dashboard.query.periods import SECONDS_PER_HOUR

# The marks a jobs rollup keeps in its grain: ``segment`` (NULL: not a job row; 1: its run resumed after it; 0: not)
# and ``job_hours`` (a job row's duration in hours where it may be an interruption: resumed, or restarted; else NULL).
SEGMENT, JOB_HOURS = "segment", "job_hours"


def job(usage: ir.Table) -> ir.BooleanColumn:
    """Run rows with a known state (GPU rows with a run state), a run id and a duration; a jobs rollup's rows with
    a ``segment`` mark."""
    if SEGMENT in usage.columns:
        return usage[SEGMENT].notnull()
    return run_row(usage) & holds(usage.period_end > usage.period_start)


def run_row(usage: ir.Table) -> ir.BooleanColumn:
    """The rows ``job`` tests but for their duration: GPU rows with a run state and a run id. Also a test of a
    rollup grouped by the sign of GPU-hours (``gpu_sign`` 1), which keeps the rest (the jobs rollup reads the others
    of a bill from the runs rollup: ``dashboard.workspace.job_rollup``)."""
    at_work = holds(usage.gpu_sign == 1) if "gpu_sign" in usage.columns else gpu(usage)
    return at_work & usage.run_state.notnull() & usage.run_id.notnull()


def hours(usage: ir.Table, is_job: ir.BooleanValue) -> ir.FloatingValue:
    """A job row's duration in hours (NULL for the others); a jobs rollup's ``job_hours``."""
    if JOB_HOURS in usage.columns:
        return usage[JOB_HOURS]
    start, end = usage.period_start.epoch_seconds(), usage.period_end.epoch_seconds()
    return ibis.ifelse(is_job, (end - start) / SECONDS_PER_HOUR, ibis.null("float64"))


def resumed(usage: ir.Table, is_job: ir.BooleanValue, duration_h: ir.FloatingValue) -> ir.BooleanValue:
    """Whether a job row's run resumed after it (module docstring): a window over the job rows of each run id in time
    order; a jobs rollup's ``segment`` mark."""
    if SEGMENT in usage.columns:
        return holds(usage[SEGMENT] == 1)
    start, end = usage.period_start.epoch_seconds(), usage.period_end.epoch_seconds()
    gpus = usage.gpu_hours / duration_h
    window = ibis.window(group_by=[usage.run_id, is_job], order_by=[usage.period_start, usage.source_row])
    next_start, next_gpus = start.lead().over(window), gpus.lead().over(window)
    return holds((next_start >= end) & (next_start - end <= RESUME_WINDOW_HOURS * SECONDS_PER_HOUR)
                 & ((next_gpus - gpus).abs() < 0.5))


def restarted(usage: ir.Table) -> ir.BooleanValue:
    """A segment the scheduler restarted itself (``RESTARTED_STATES``): an interruption whatever follows it."""
    return holds(usage.run_state.isin(list(RESTARTED_STATES)))


def marks(jobs: ir.Table) -> dict[str, ir.Value]:
    """The marks (``SEGMENT``, ``JOB_HOURS``) of the job rows ``jobs`` (``job`` holds on each), the window over them
    alone: a run's segments in every month it has, so one that resumes in the next month is seen resumed."""
    is_job = ibis.literal(True)
    duration_h = hours(jobs, is_job)
    again = resumed(jobs, is_job, duration_h)
    return {SEGMENT: ibis.ifelse(again, 1, 0).cast("int8"),
            JOB_HOURS: ibis.ifelse(again | restarted(jobs), duration_h, ibis.null("float64"))}
