"""Calibration: the Plan page's guessed inputs measured from last quarter's imports, each with its provenance and
spread (``calibrate``), and a scenario with the measured values set (``scenario_from``). docs/calibration.md explains
each rule; they are:

- Which table. MFU, interruptions, experiment overhead and the checkpoint figures read ``runs`` when given (its own
  GPU-hours, not the bill's), else the bill (which then has to carry run ids, states or tokens). Prices and purchase
  shares read the bill only: a run export's costs are 0.
- Main runs. ``main_run_ids`` when given, else ``gap.suggest_main_runs``: by run_id, or by project when the run ids
  are per job (W&B gives every job its own ID). Run ids are per job when no run id is on two GPU rows and there
  are more run ids than projects among the GPU rows that have a run.
- MFU, per main-run row with tokens > 0 and GPU-hours > 0 that is not in a failed state (``FAILED_STATES``; a
  row with no state counts): 6 · model_params · tokens / (GPU-hours · peak · 3600), peak the row's GPU type's dense
  BF16 TFLOP/s from the hardware catalogue (``units.catalogue_peak_tflops``); where the run export names no GPU the
  catalogue knows, the GPU type the bill's rows of the main run (its run ids, or its project for per-job run ids)
  ran on most (``bill_gpu_type``). A failed segment's tokens stop at the
  failure while its GPU-hours run to the end of the segment, so it would drag the figure down. model_params: each
  job's as the run export logs it (``run_params``, the W&B reader's ``ImportReport.model_params``), else the given
  one. Value: the median; low and high: the P10 and P90 (numpy, linear). Thin below ``MFU_MIN_JOBS`` rows.
- Not measured is not zero: an input with no observations (no run of an overhead's kind, no interruption) has value
  None and a caveat starting "not measured:"; a rate keeps its interval. A thin input is set into a scenario only
  when chosen (``scenario_from``'s ``use_thin``).
- Interruptions, over the GPU job rows (a run id, a state and an end after the start: ``waste._jobs``). Node
  failures = NODE_FAIL rows + FAILED and TIMEOUT rows their run resumed after (``waste.marked``'s ``interrupted``
  mark; with per-job run ids a job's run is its project for that test) + REQUEUED rows; spot interruptions =
  PREEMPTED rows, resumed or not. Exposure: node-days = Σ GPU-hours / gpus_per_node / 24 over the job rows (for
  spot interruptions over the spot job rows when any job row has a pricing, else over all job rows, which the
  caveat says). Rate = count / node-days × 1000; low and high: the exact (Garwood) 90 % Poisson interval of the
  count over the node-days. Thin when the count is below ``RATE_MIN_COUNT`` or the node-days below
  ``RATE_MIN_NODE_DAYS``.
- Experiment overhead: GPU-hours of GPU rows of other runs over the main runs' GPU-hours, split on the run id,
  project and team (lower-cased): a word starting with "eval" → eval_overhead; one starting with "debug", "dev",
  "test" or "smoke" → debug_overhead; everything else (ablations, sweeps, fine-tunes, burn-in) →
  experiment_overhead. GPU rows with no run are idle or unattributed capacity, not experiments. No spread.
- Prices paid: Σ cost / Σ GPU-hours per pricing (reserved, on_demand, spot) over the bill's GPU rows with that
  pricing and a non-zero cost (the amortised ``cost``; a row at 0, such as reserved usage in an actual-cost view,
  says nothing of the price), of the plan's GPU type (``gpu_type``) where the bill bought it in that pricing, else
  of every GPU type with a caveat; the basis lists each type's price. No spread: what was paid by type is not the
  next quarter's price uncertainty, so the plan's price ranges stay. Only for a bill in US dollars, the plan's
  currency. reserved_share and spot_share: GPU-hours on that pricing over the GPU-hours with a
  known pricing.
- checkpoint_interval_min and restart_min: the median of the run export's ``CHECKPOINT_COLUMNS`` over its job
  rows, when it carries them. Without restart records, restart_min is the median over the interruptions a run
  resumed after (``RESTART_STATES``, resumed as ``waste.marked`` says) of the minutes from the job's end to the
  run's next job's start, P10–P90 the spread: wall-clock, so queueing and waits for a repaired node are in it.

Every figure is a query over the table (a pandas frame is bound to the engine, a workspace dataset is read where it
is); only small results (the main run's token rows, sums by group, the source rows cited: ``_found``) come back to
pandas. Over a workspace dataset's own rows (``rollups``, its chooser) the sums read its rollups by run, price and
job segment (``RUN_GRAIN``, ``PRICE_GRAIN``, ``JOB_GRAIN``) and the rows only what is a row (docs/calibration.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, cast

import ibis
import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.core.hardware import resolve_gpu_type
from dashboard.core.provenance import KEYS
from dashboard.core.scenario import Scenario, ScenarioError, field_errors, scenario_from_dict
from dashboard.format import SIGNIFICANT, count_sig
from dashboard.ingest import plausible
from dashboard.ingest.gpus import gpu_name
from dashboard.ingest.run_states import CHECKPOINT_COLUMNS, FAILED_STATES
from dashboard.ingest.schema import PRICING_VALUES
from dashboard.query import tables
from dashboard.query.columns import failed, gpu, holds, rows_where
from dashboard.query.columns import number as as_float
from dashboard.query.compiled import built, execute, query
from dashboard.retro.gap import suggest_main_runs
from dashboard.retro.units import catalogue_peak_tflops
from dashboard.retro.view import Rollups, rollup_of
from dashboard.retro.waste import _jobs, checkpointing, marked

MFU_MIN_JOBS = 3
RATE_MIN_COUNT = 3
RATE_MIN_NODE_DAYS = 1_000.0
INTERVAL = 0.90  # the rates' Poisson interval
SOURCE_ROWS = 1_000  # source rows kept per figure: the first found, in source order (``_found``)
LINES_SHOWN = 10  # source lines named in a refusal
MFU_ROWS = 100_000  # main-run token rows read back
USD = "USD"
PRICINGS: dict[str, str] = {"reserved": "price_reserved_per_gpu_hour", "on_demand": "price_on_demand_per_gpu_hour",
                            "spot": "price_spot_per_gpu_hour"}
PRICING_WORDS = {"reserved": "reserved", "on_demand": "on-demand", "spot": "spot"}
EVAL_WORDS = r"(^|[^a-z])eval"
DEBUG_WORDS = r"(^|[^a-z])(debug|dev|test|smoke)"
OVERHEADS: dict[str, str] = {"experiment": "experiment_overhead", "eval": "eval_overhead", "debug": "debug_overhead"}
NAMED: dict[str, str] = {"experiment": "other than the main run, evaluation or debugging",
                        "eval": "eval…", "debug": "debug…, dev…, test… or smoke…"}
OVERHEAD_MIN_RUNS = 3  # an overhead measured over fewer runs is thin
NODE_FAILURE_STATES = ("FAILED", "TIMEOUT", "REQUEUED")  # counted when their run resumed (REQUEUED: always)
# Scenario range keys (multiples of the likely value) set from a measured spread.
RANGES: dict[str, str] = {
    "mfu": "mfu", "price_reserved_per_gpu_hour": "price_reserved", "price_on_demand_per_gpu_hour": "price_on_demand",
    "price_spot_per_gpu_hour": "price_spot", "node_failures_per_1000_node_days": "node_failures",
    "spot_interruptions_per_1000_node_days": "spot_interruptions",
}
NEEDS_PARAMS = "needs the model size: give --params or choose the plan that describes this run"
NEEDS_TOKENS = "the run export has no tokens (W&B tokens_seen); Slurm logs carry none"
NEEDS_STATES = "needs a run export with job states (Slurm sacct, W&B)"
NEEDS_BILL = "needs a bill (FOCUS, AWS CUR, GCP or Azure): a run export carries no prices"
NO_CHECKPOINTS = "this export carries no checkpoint or restart records"
RESTART_RULE = ("Median over the interruptions a run resumed after (node failures, failures, time-outs, "
                "preemptions) of the minutes from the job's end to the run's next job's start; P10–P90 the spread.")

RULES: dict[str, str] = {
    "mfu": "Median over the main run's rows with tokens, not in a failed state, of 6 · parameters · tokens / "
           "(GPU-hours · catalogue dense BF16 peak · 3600); the range is their P10 to P90.",
    "node_failures_per_1000_node_days": "NODE_FAIL jobs, FAILED and TIMEOUT jobs their run resumed after, and "
                                        "REQUEUED jobs, per 1,000 node-days of jobs (GPU-hours / GPUs per node / "
                                        "24); the range is the exact 90 % Poisson interval.",
    "spot_interruptions_per_1000_node_days": "PREEMPTED jobs per 1,000 node-days of spot jobs (of all jobs when "
                                             "the export names no pricing); the range is the exact 90 % Poisson "
                                             "interval.",
    "experiment_overhead": "GPU-hours of other runs (not evaluation or debugging) over the main runs' GPU-hours.",
    "eval_overhead": "GPU-hours of runs whose run id, project or team has a word starting with 'eval', over the "
                     "main runs' GPU-hours.",
    "debug_overhead": "GPU-hours of runs whose run id, project or team has a word starting with 'debug', 'dev', "
                      "'test' or 'smoke', over the main runs' GPU-hours.",
    "reserved_share": "GPU-hours on reserved capacity over the bill's GPU-hours with a known pricing.",
    "spot_share": "GPU-hours on spot capacity over the bill's GPU-hours with a known pricing.",
    "checkpoint_interval_min": "Median of the run export's checkpoint interval over its jobs.",
    "restart_min": "Median of the run export's restart time over its jobs; without such records, the median "
                   "wall-clock from an interrupted job's end to its run's next job's start.",
} | {key: f"Cost over GPU-hours of the bill's {PRICING_WORDS[pricing]} GPU rows with a cost (amortised); the range "
           "is the lowest to highest price of one GPU type." for pricing, key in PRICINGS.items()}


@dataclass(frozen=True)
class Measured:
    """One plan input measured from the imports (``KEYS``), with where it came from."""

    key: str  # one of KEYS
    value: float | None  # None: cannot be measured from these files (caveat says why)
    low: float | None  # low end of the observed spread (P10 for MFU), None if none
    high: float | None  # high end (P90 for MFU)
    count: int  # observations behind it (jobs with MFU, interruptions, priced rows ...)
    exposure: float | None  # node-days for rates, GPU-hours for prices, overheads and shares
    basis: str  # short provenance for a sidebar
    rule: str  # one sentence: how it was measured
    caveat: str | None  # thin support, or why it cannot be measured; None when well supported
    source_rows: tuple[int, ...]  # source_row values of the rows it came from (at most SOURCE_ROWS, ``_found``)
    thin: bool  # True when the data cannot really support it (the caveat says why)
    refused: str | None = None  # why it was not measured from implausible values (``plausible``); None when not


def _missing(key: str, caveat: str, basis: str = "not measured") -> Measured:
    return Measured(key, None, None, None, 0, None, basis, RULES[key], caveat, (), False)


def _rows(values: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in list(values)[:SOURCE_ROWS])


def _pct(value: float) -> str:
    return f"{100 * value:.0f} %"


def _found(rows: ir.Table) -> ir.Table:
    """``SOURCE_ROWS`` of ``rows`` (all when fewer), the first the scan finds, in source order: a bounded read that
    stops once it has them, where the first in source order would read and sort every row."""
    return rows.limit(SOURCE_ROWS).order_by("source_row")


def _counted(rows: ir.Table, test: ir.BooleanValue | None = None) -> ir.IntegerScalar:
    """How many usage rows ``rows`` holds (where ``test`` holds): its rows, or for a rollup read as rows
    (``rollup_rows.as_rows``) the sum of its ``row_count``."""
    if "row_count" not in rows.columns:
        return rows.count() if test is None else test.sum()
    return rows.row_count.sum() if test is None else ibis.ifelse(holds(test), rows.row_count, 0).sum()


TAGS = ("run_id", "project", "team")  # what a GPU row's kind is a function of
Triples = tuple[tuple[str | None, ...], ...]  # rows' run id, project and team (``TAGS``), None for none


def _triples(frame: pd.DataFrame) -> Triples:
    """The rows of ``frame`` (``TAGS`` columns) as ``Triples``."""
    return tuple(tuple(None if pd.isna(value) else str(value) for value in row)
                 for row in frame[list(TAGS)].itertuples(index=False))


def _tagged(usage: ir.Table, tagged: Triples, tags: tuple[str, ...] = TAGS) -> ir.BooleanValue:
    """Rows whose ``tags`` (of ``TAGS``) are each one of ``tagged``'s: every row of those triples (and maybe more,
    of their mixes), a test of the rows' sort key (team, project) that lets the engine skip other row groups."""
    tests = []
    for at, tag in enumerate(TAGS):
        if tag not in tags:
            continue
        values = {triple[at] for triple in tagged}
        named = sorted(value for value in values if value is not None)
        test = usage[tag].isin(named) if named else ibis.literal(False)
        tests.append(holds(test | usage[tag].isnull()) if None in values else holds(test))
    return ibis.and_(*tests)


def _frame(expr: ir.Table) -> pd.DataFrame:
    """A table expression's result (``execute`` of a table is a frame)."""
    return cast(pd.DataFrame, execute(expr))


# --- the table's shape --------------------------------------------------------------------------------------------

@built
def _shape_expr(usage: ir.Table) -> ir.Table:
    run_rows = gpu(usage) & usage.run_id.notnull()
    return usage.aggregate(
        run_rows=run_rows.sum(), run_ids=usage.run_id.nunique(where=run_rows),
        projects=usage.project.nunique(where=run_rows),
        first=usage.period_start.min(), last=usage.period_end.max())


@dataclass(frozen=True)
class TableShape:
    """`table_shape`: the GPU rows with a run (``run_rows``), their distinct run ids and projects, whether run ids are
    per job (``per_job``: none on two GPU rows, and more of them than projects) and the table's first start and last
    end (None when empty)."""

    run_rows: int
    run_ids: int
    projects: int
    per_job: bool
    first: pd.Timestamp | None
    last: pd.Timestamp | None


@query
def table_shape(usage: ir.Table) -> TableShape:
    """How the table's run ids are laid out, and the period it covers."""
    row = _frame(_shape_expr(usage)).iloc[0]
    return _shape_of(row, first=None if pd.isna(row["first"]) else pd.Timestamp(row["first"]),
                     last=None if pd.isna(row["last"]) else pd.Timestamp(row["last"]))


def _shape_of(row: pd.Series, first: pd.Timestamp | None, last: pd.Timestamp | None) -> TableShape:
    run_rows, run_ids, projects = (int(as_float(row[name])) for name in ("run_rows", "run_ids", "projects"))
    return TableShape(run_rows, run_ids, projects,
                      per_job=run_rows > 0 and run_ids == run_rows and run_ids > projects > 0, first=first, last=last)


@built
def _rolled_shape_expr(rolled: ir.Table) -> ir.Table:
    rows = rows_where(rolled, gpu(rolled) & rolled.run_id.notnull() & holds(rolled.row_count > 0))
    return rows.aggregate(run_rows=rows.row_count.sum(), run_ids=rows.run_id.nunique(),
                          projects=rows.project.nunique())


@query
def rolled_shape(rolled: ir.Table) -> TableShape:
    """``table_shape`` of the rows a rollup by run and the sign of GPU-hours stands for (``RUN_GRAIN``), read as rows:
    the same counts (a group's GPU-hours are all above zero, or none is); the period is not read (None)."""
    return _shape_of(_frame(_rolled_shape_expr(rolled)).iloc[0], first=None, last=None)


def period_text(first: pd.Timestamp | None, last: pd.Timestamp | None) -> str:
    """"2025-04-01 to 2025-06-30" (the day before an end at midnight), or "" when unknown."""
    if first is None or last is None:
        return ""
    end = last - pd.Timedelta(seconds=1) if last == last.normalize() and last > first else last
    return f"{first:%Y-%m-%d} to {end:%Y-%m-%d}"


def _main_runs(usage: ir.Table, shape: TableShape, main_run_ids: list[str] | None,
               summed: ir.Table | None = None) -> tuple[list[str], str]:
    """The main run ids, and how to name them in a basis; suggested from ``summed`` (a rollup by ``RUN_GRAIN`` read
    as rows) when given, else from the rows."""
    if main_run_ids:
        ids = [str(run) for run in main_run_ids]
        return ids, _name_runs(ids, "given")
    by = "project" if shape.per_job else "run_id"
    ids = suggest_main_runs(usage if summed is None else summed, by=by)
    if not ids:
        return [], ""
    if by == "project":
        project = _project_of(usage, ids[0])
        return ids, f"project {project} ({len(ids)} run ids)"
    return ids, ids[0]


def _name_runs(ids: list[str], how: str) -> str:
    shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    return f"{shown} ({how})"


@built
def _project_expr(usage: ir.Table, run_id: str) -> ir.Table:
    return rows_where(usage, holds(usage.run_id == run_id)).select("project").limit(1)


@query
def _project_of(usage: ir.Table, run_id: str) -> str:
    frame = _frame(_project_expr(usage, run_id))
    return str(frame["project"].iloc[0]) if len(frame) and not pd.isna(frame["project"].iloc[0]) else run_id


# --- MFU ----------------------------------------------------------------------------------------------------------

def _main(usage: ir.Table, main: tuple[str, ...]) -> ir.BooleanColumn:
    return holds(usage.run_id.isin(list(main))) if main else ibis.literal(False)


@built
def _mfu_facts_expr(usage: ir.Table, main: tuple[str, ...]) -> ir.Table:
    tokens = gpu(usage) & holds(usage.tokens > 0)
    main_tokens = tokens & _main(usage, main)
    return usage.aggregate(token_rows=_counted(usage, tokens), main_token_rows=_counted(usage, main_tokens),
                           failed_token_rows=_counted(usage, main_tokens & failed(usage, FAILED_STATES)))


@built
def _mfu_rows_expr(usage: ir.Table, main: tuple[str, ...], projects: tuple[str, ...] | None = None) -> ir.Table:
    """The main run's rows with tokens, not failed; within ``projects`` (the main run's, when known: a filter on the
    rows' sort key skips the row groups of other projects)."""
    within = ibis.literal(True) if projects is None else holds(usage.project.isin(list(projects)))
    rows = rows_where(usage, within & gpu(usage) & holds(usage.tokens > 0) & _main(usage, main)
                      & ~failed(usage, FAILED_STATES))
    return rows.select("gpu_hours", "tokens", "gpu_type", "run_id", "source_row").order_by("source_row").limit(
        MFU_ROWS)


@dataclass(frozen=True)
class MfuRows:
    """`mfu_rows`: the counts of GPU rows with tokens (all, the main run's, the main run's in a failed state), and
    the main run's rows the MFU is measured on (``rows``: GPU-hours, tokens, GPU type, run id, source row), in source
    order."""

    token_rows: int
    main_token_rows: int
    failed_token_rows: int
    rows: pd.DataFrame


@built
def _main_projects_expr(rolled: ir.Table, main: tuple[str, ...]) -> ir.Table:
    rows = rows_where(rolled, _main(rolled, main))
    return rows.select(project=rows.project.cast("string")).distinct().order_by("project")


@query
def _mfu_facts(usage: ir.Table, main: tuple[str, ...]) -> tuple[pd.Series, tuple[str, ...] | None]:
    """The counts of ``mfu_rows``, and the main run's projects when ``usage`` is a rollup read as rows (None
    otherwise, or when one of its rows has none)."""
    row = _frame(_mfu_facts_expr(usage, main)).iloc[0]
    if "row_count" not in usage.columns:
        return row, None
    projects = _frame(_main_projects_expr(usage, main))["project"]
    return row, None if projects.isna().any() else tuple(str(project) for project in projects)


@query
def _mfu_rows(usage: ir.Table, main: tuple[str, ...], projects: tuple[str, ...] | None, read: bool) -> pd.DataFrame:
    expr = _mfu_rows_expr(usage, main, projects)
    return _frame(expr if read else expr.limit(0))


def mfu_rows(usage: ir.Table, main: tuple[str, ...], summed: ir.Table | None = None) -> MfuRows:
    """The main run's rows with tokens, not in a failed state, and the counts that say why there are none (the rows
    are not read when the main run has no row with tokens, or every one is in a failed state). ``summed``: a rollup
    by ``RUN_GRAIN`` read as rows, which the counts and the main run's projects are read from."""
    row, projects = _mfu_facts(usage if summed is None else summed, main)
    token_rows, main_token_rows, failed_token_rows = (
        int(as_float(row[name])) for name in ("token_rows", "main_token_rows", "failed_token_rows"))
    rows = _mfu_rows(usage, main, projects, main_token_rows > failed_token_rows)
    return MfuRows(token_rows, main_token_rows, failed_token_rows, rows)


@built
def _bill_gpu_type_expr(bill: ir.Table, column: str, keys: tuple[str, ...]) -> ir.Table:
    rows = rows_where(bill, gpu(bill) & bill.gpu_type.notnull() & holds(bill[column].cast("string").isin(list(keys))))
    return rows.group_by(gpu_type=rows.gpu_type).agg(gpu_hours=rows.gpu_hours.sum()).order_by(
        [ibis.desc("gpu_hours"), "gpu_type"]).limit(1)


@query
def bill_gpu_type(bill: ir.Table, column: str, keys: tuple[str, ...]) -> str | None:
    """The GPU type the bill's GPU rows of these keys (run ids or projects) ran on most, None if none says."""
    frame = _frame(_bill_gpu_type_expr(bill, column, tuple(keys)))
    return str(frame["gpu_type"].iloc[0]) if len(frame) else None


def _sizes_text(sizes: np.ndarray, logged: int) -> str:
    """"1.3e+10 parameters", with how many jobs' sizes the run export logged."""
    low, high = float(sizes.min()), float(sizes.max())
    text = f"{low:.3g} parameters" if low == high else f"{low:.3g}–{high:.3g} parameters"
    if logged == len(sizes):
        return text + " as the run export logs them"
    return text + (f" ({logged} of them as the run export logs them)" if logged else "")


def job_mfu(gpu_hours: np.ndarray, tokens: np.ndarray, model_params: np.ndarray, peak_tflops: np.ndarray
            ) -> np.ndarray:
    """Each job's MFU: 6 · model_params · tokens / (GPU-hours · peak · 3600), the peak in dense BF16 TFLOP/s."""
    return 6.0 * model_params * tokens / (gpu_hours * peak_tflops * 1e12 * 3600.0)


def model_sizes(logged: Mapping[int, float] | None, params: float | None = None, plan_params: float | None = None
                ) -> tuple[dict[int, float] | None, float | None]:
    """``calibrate``'s ``run_params`` and ``model_params`` (the CLI and the Retrospective both call this): a size
    given by hand (``--params``) is every job's; else each job's own as the run export logs it (``logged``, the
    reader's ``ImportReport.model_params``), and the plan's (``plan_params``) for a job that logs none."""
    if params is not None:
        return None, float(params)
    return (dict(logged) if logged else None), plan_params


def _runs_named(run_ids: list[str]) -> str:
    """"job1, job2 and 3 more" (the first ``LINES_SHOWN``)."""
    shown = ", ".join(run_ids[:LINES_SHOWN])
    return shown + (f" and {len(run_ids) - LINES_SHOWN} more" if len(run_ids) > LINES_SHOWN else "")


def _unsized_caveat(run_ids: list[str], model_params: float | None, logged_any: bool) -> str | None:
    """Which jobs log no model size, and what became of them: the given size, or left out."""
    if not run_ids or not logged_any and model_params is not None:
        return None  # nothing logged: the given size is every job's, as the basis says
    jobs = f"{len(run_ids)} job{'s' if len(run_ids) != 1 else ''} ({_runs_named(run_ids)})"
    if model_params is None:
        return f"{jobs} log no model size and none was given: left out"
    return f"{jobs} log no model size: measured at the plan's {model_params:.3g} parameters"


def _mfu(usage: ir.Table, main: tuple[str, ...], runs_text: str, model_params: float | None,
         billed_type: str | None = None, run_params: Mapping[int, float] | None = None,
         summed: ir.Table | None = None) -> Measured:
    key = "mfu"
    if not main:
        return _missing(key, "no GPU row of the run export has a run id, so there is no main run to measure")
    facts = mfu_rows(usage, main, summed)
    rows = facts.rows
    if not facts.token_rows:
        return _missing(key, NEEDS_TOKENS)
    if not facts.main_token_rows:
        return _missing(key, f"the main run, {runs_text}, has no rows with tokens (W&B tokens_seen)")
    if not len(rows):
        return _missing(key, f"every row of {runs_text} with tokens is in a failed state")
    logged = np.array([(run_params or {}).get(int(row), math.nan) for row in rows["source_row"]], dtype=float)
    sizes = np.where(np.isfinite(logged), logged, math.nan if model_params is None else float(model_params))
    if not np.isfinite(sizes).any():
        return _missing(key, NEEDS_PARAMS, f"{len(rows)} jobs of the main run, {runs_text}, carry tokens")
    peaks = np.array([catalogue_peak_tflops(value) for value in rows["gpu_type"]], dtype=float)
    billed_peak = catalogue_peak_tflops(billed_type) if billed_type is not None else math.nan
    from_bill = int((~np.isfinite(peaks)).sum()) if math.isfinite(billed_peak) else 0
    if from_bill:  # the run export does not name a GPU the catalogue knows: the bill's GPU type of the main run
        peaks = np.where(np.isfinite(peaks), peaks, billed_peak)
    sized = np.isfinite(sizes)
    known = np.isfinite(peaks) & sized
    if not np.isfinite(peaks).any():
        types = ", ".join(sorted({str(v) for v in rows["gpu_type"] if not pd.isna(v)})) or "none given"
        return _missing(key, f"the GPU type of the main run's rows ({types}) is not in the hardware catalogue "
                             "(data/hardware.csv) and the bill names none for the main run, so its peak FLOP/s is "
                             "unknown")
    hours = rows["gpu_hours"].to_numpy(dtype=float)[known]
    tokens = rows["tokens"].to_numpy(dtype=float)[known]
    mfu = job_mfu(hours, tokens, sizes[known], peaks[known])
    value, low, high = (float(v) for v in np.percentile(mfu, [50, 10, 90]))
    count = int(known.sum())
    caveats = []
    if count < MFU_MIN_JOBS:
        caveats.append(f"only {count} job{'s' if count != 1 else ''} with tokens: one run is not a distribution")
    if (~np.isfinite(peaks)).any():
        caveats.append(f"{int((~np.isfinite(peaks)).sum())} rows of a GPU type not in the catalogue left out")
    unsized = [str(run) for run, size in zip(rows["run_id"], logged, strict=True) if not math.isfinite(size)]
    if (unsized_text := _unsized_caveat(unsized, model_params, bool(np.isfinite(logged).any()))) is not None:
        caveats.append(unsized_text)
    if facts.failed_token_rows:
        caveats.append(f"{facts.failed_token_rows} failed segments left out (their tokens stop at the failure)")
    return Measured(key, value, low, high, count, float(hours.sum()),
                    f"measured over {count} jobs of the main run, {runs_text}, {_pct(low)}–{_pct(high)} (P10–P90), "
                    + _sizes_text(sizes[known], int(np.isfinite(logged)[known].sum()))
                    + (f", GPU type {billed_type} from the bill for {from_bill} of them" if from_bill else ""),
                    RULES[key], "; ".join(caveats) or None, _rows(rows["source_row"].to_numpy()[known]),
                    count < MFU_MIN_JOBS)


# --- interruptions ------------------------------------------------------------------------------------------------

def _job_rows(usage: ir.Table, per_job: bool) -> ir.Table:
    """The GPU job rows with the interruption marks; with per-job run ids, a job's run is its project."""
    if per_job:
        usage = usage.mutate(run_id=ibis.coalesce(usage.project, usage.run_id))
    setting = checkpointing()
    rows = marked(rows_where(usage, _jobs(usage) & gpu(usage)), FAILED_STATES, setting["interval_min"],
                  setting["restart_min"])
    node = (holds(rows.run_state == "NODE_FAIL")
            | (rows.interrupted & holds(rows.run_state.isin(list(NODE_FAILURE_STATES)))))
    return rows.mutate(node_failure=node, preempted=holds(rows.run_state == "PREEMPTED"),
                       spot=holds(rows.pricing == "spot"))


@built
def _interruptions_expr(usage: ir.Table, per_job: bool) -> ir.Table:
    rows = _job_rows(usage, per_job)
    slurm_only = holds(rows.run_state.isin(["NODE_FAIL", "PREEMPTED", "TIMEOUT", "REQUEUED", "OUT_OF_MEMORY"]))
    return rows.aggregate(
        jobs=_counted(rows), gpu_hours=rows.gpu_hours.sum(), spot_gpu_hours=rows.gpu_hours.sum(where=rows.spot),
        priced=_counted(rows, rows.pricing.notnull()), node_failures=_counted(rows, rows.node_failure),
        preemptions=_counted(rows, rows.preempted),
        spot_preemptions=_counted(rows, rows.preempted & rows.spot), slurm_only=_counted(rows, slurm_only),
        failed_jobs=_counted(rows, failed(rows, FAILED_STATES)))


@built
def _event_runs_expr(rolled: ir.Table, states: tuple[str, ...] | None) -> ir.Table:
    """The run ids of a jobs rollup's (``JOB_GRAIN``) interruptions counted (``states`` None), or of those it resumed
    after in ``states``: the runs whose rows hold them (a job row's marks depend on its run's job rows only)."""
    rows = _job_rows(rolled, False)
    events = (rows.node_failure | rows.preempted) if states is None else (
        rows.interrupted & holds(rows.run_state.isin(list(states))))
    rows = rows.filter(events & holds(rows.row_count > 0))
    return rows.select("run_id").distinct().order_by("run_id")


@built
def _run_tags_expr(rolled: ir.Table, run_ids: tuple[str, ...]) -> ir.Table:
    rows = rows_where(rolled, rolled.run_id.isin(list(run_ids)))
    return rows.select(*TAGS).distinct().order_by(list(TAGS))


@query
def event_runs(rolled: ir.Table, states: tuple[str, ...] | None = None) -> Triples:
    """The tags (``TAGS``) of every row of the runs ``_event_runs_expr`` names, from the rollup."""
    run_ids = tuple(str(run) for run in _frame(_event_runs_expr(rolled, states))["run_id"])
    return _triples(_frame(_run_tags_expr(rolled, run_ids))) if run_ids else ()


def _of_runs(usage: ir.Table, tagged: Triples) -> ir.Table:
    """The rows of the runs ``tagged`` names, all of them (``tagged`` holds every tag triple of their rows)."""
    return rows_where(usage, _tagged(usage, tagged))


@built
def _interruption_rows_expr(usage: ir.Table, per_job: bool) -> ir.Table:
    rows = _job_rows(usage, per_job)
    rows = rows.filter(rows.node_failure | rows.preempted)
    return rows.select("source_row", "node_failure", "preempted", "spot").order_by("source_row").limit(
        4 * SOURCE_ROWS)


@dataclass(frozen=True)
class InterruptionCounts:
    """`interruption_counts`: over the GPU job rows (``_job_rows``), their count, GPU-hours (of all and of spot
    jobs), the jobs with a pricing, node failures, preemptions (of all and of spot jobs), jobs in a
    state only Slurm writes and failed jobs; and the counted rows' source rows with their marks (``rows``:
    ``source_row``, ``node_failure``, ``preempted``, ``spot``)."""

    jobs: int
    gpu_hours: float
    spot_gpu_hours: float
    priced_jobs: int
    node_failures: int
    preemptions: int
    spot_preemptions: int
    slurm_only_jobs: int
    failed_jobs: int
    rows: pd.DataFrame


@query
def _interruption_sums(usage: ir.Table, per_job: bool) -> pd.Series:
    return _frame(_interruptions_expr(usage, per_job)).iloc[0]


@query
def _interruption_rows(usage: ir.Table, per_job: bool) -> pd.DataFrame:
    return _frame(_interruption_rows_expr(usage, per_job))


def interruption_counts(usage: ir.Table, per_job: bool, summed: ir.Table | None = None) -> InterruptionCounts:
    """Sums over the GPU job rows (``_job_rows``) and the counted rows' source rows with their marks. ``summed``: the
    jobs rollup read as rows (``JOB_GRAIN``; not with ``per_job``, whose runs are projects), which the sums are read
    from, the rows only for the source rows of the runs with an interruption counted."""
    row = _interruption_sums(usage if summed is None else summed, per_job)
    count = {name: int(as_float(row[name])) for name in ("jobs", "priced", "node_failures", "preemptions",
                                                         "spot_preemptions", "slurm_only", "failed_jobs")}
    runs = None if summed is None else event_runs(summed) if count["node_failures"] or count["preemptions"] else ()
    if runs == ():  # no interruption counted: no row to cite
        rows = pd.DataFrame({"source_row": pd.Series(dtype="int64"), **{
            mark: pd.Series(dtype=bool) for mark in ("node_failure", "preempted", "spot")}})
    else:
        rows = _interruption_rows(usage if runs is None else _of_runs(usage, runs), per_job)
    return InterruptionCounts(
        count["jobs"], as_float(row["gpu_hours"]), as_float(row["spot_gpu_hours"]), count["priced"],
        count["node_failures"], count["preemptions"], count["spot_preemptions"],
        count["slurm_only"], count["failed_jobs"], rows)


def _poisson_cdf(k: int, mean: float) -> float:
    """P(X ≤ k) for X ~ Poisson(mean)."""
    if mean <= 0:
        return 1.0
    i = np.arange(k + 1, dtype=float)
    logs = i * math.log(mean) - mean - np.array([math.lgamma(v + 1.0) for v in i])
    top = logs.max()
    return float(min(1.0, math.exp(top) * np.exp(logs - top).sum()))


def _solve(target: float, k: int) -> float:
    """The mean at which P(X ≤ k) = target (decreasing in the mean), by bisection."""
    low, high = 0.0, max(10.0, 4.0 * (k + 1) + 20.0 * math.sqrt(k + 1))
    for _ in range(200):
        mid = (low + high) / 2
        if _poisson_cdf(k, mid) > target:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * max(1.0, high):
            break
    return (low + high) / 2


def poisson_interval(count: int, level: float = INTERVAL) -> tuple[float, float]:
    """The exact (Garwood 1936) two-sided interval of a Poisson mean from ``count`` events: the lower end is the mean
    at which P(X ≥ count) = (1 - level)/2 (0 for no events), the upper the mean at which P(X ≤ count) = (1 - level)/2;
    the same as the chi-square quantiles χ²(α/2; 2k)/2 and χ²(1 - α/2; 2k + 2)/2."""
    tail = (1.0 - level) / 2.0
    low = 0.0 if count == 0 else _solve(1.0 - tail, count - 1)
    return low, _solve(tail, count)


def _rate(key: str, count: int, node_days: float, what: str, rows: tuple[int, ...], extra: list[str]) -> Measured:
    rate = count / node_days * 1000.0
    low, high = (end / node_days * 1000.0 for end in poisson_interval(count))
    if count == 0:  # no event is no measurement: the plan's value stays, the interval says what is ruled out
        caveat = (f"not measured: no {what} over {count_sig(node_days)} node-days of jobs (90 % interval "
                  f"0–{high:.3g}), so the plan's value stays")
        return Measured(key, None, 0.0, high, 0, node_days, "not measured", RULES[key],
                        "; ".join([caveat, *extra]), (), True)
    thin = count < RATE_MIN_COUNT or node_days < RATE_MIN_NODE_DAYS
    caveats = list(extra)
    if thin:
        one_more = 1000.0 / node_days
        few = f"only {count}" if count else "no"
        caveats.insert(0, f"{few} {what} over {count_sig(node_days)} node-days: one more moves it by {one_more:.3g}")
    return Measured(key, rate, low, high, count, node_days,
                    f"{count} {what} over {count_sig(node_days)} node-days of jobs, 90 % interval "
                    f"{low:.3g}–{high:.3g}", RULES[key], "; ".join(caveats) or None, rows, thin)


def _interruptions(usage: ir.Table, per_job: bool, gpus_per_node: int, summed: ir.Table | None = None
                   ) -> dict[str, Measured]:
    facts = interruption_counts(usage, per_job, None if per_job else summed)
    rows = facts.rows
    keys = ("node_failures_per_1000_node_days", "spot_interruptions_per_1000_node_days")
    if not facts.jobs or facts.gpu_hours <= 0:
        return {key: _missing(key, NEEDS_STATES) for key in keys}
    extra = []
    if facts.failed_jobs and not facts.slurm_only_jobs:
        extra.append("no job is in NODE_FAIL, TIMEOUT or PREEMPTED: a W&B export's states (finished, failed, "
                     "crashed, killed) cannot tell a node failure or a preemption from a crash, so only failed jobs "
                     "their run resumed after count")
    if per_job:
        extra.append("run ids are per job, so a job's run is its project for the resume test")
    node_days = facts.gpu_hours / gpus_per_node / 24.0
    node = _rate(keys[0], facts.node_failures, node_days, "node failures",
                 _rows(rows.loc[rows["node_failure"].astype(bool), "source_row"]), extra)
    if facts.priced_jobs:
        spot_days = facts.spot_gpu_hours / gpus_per_node / 24.0
        preempted = rows["preempted"].astype(bool) & rows["spot"].astype(bool)
        if spot_days <= 0:
            spot = _missing(keys[1], "no job of the export ran on spot capacity",
                            f"{facts.preemptions} preemptions, no spot jobs")
        else:
            spot = _rate(keys[1], facts.spot_preemptions, spot_days, "preemptions",
                         _rows(rows.loc[preempted, "source_row"]), [])
            spot = _replace(spot, basis=spot.basis.replace("node-days of jobs", "node-days of spot jobs"))
    else:
        spot = _rate(keys[1], facts.preemptions, node_days, "preemptions",
                     _rows(rows.loc[rows["preempted"].astype(bool), "source_row"]),
                     ["the export names no pricing, so the rate is over all jobs' node-days, not spot ones: "
                      "the spot rate is higher by the inverse of the spot share"] + extra[:1])
    return {keys[0]: node, keys[1]: spot}


def _replace(measured: Measured, **changes: Any) -> Measured:
    return Measured(**(asdict(measured) | changes))


# --- experiment overhead ------------------------------------------------------------------------------------------

def _kind(usage: ir.Table, main: tuple[str, ...]) -> ir.StringColumn:
    text = (usage.run_id.cast("string").fill_null("") + " " + usage.project.cast("string").fill_null("") + " "
            + usage.team.cast("string").fill_null("")).lower()
    return ibis.cases((_main(usage, main), "main"), (usage.run_id.isnull(), "none"),
                      (holds(text.re_search(EVAL_WORDS)), "eval"), (holds(text.re_search(DEBUG_WORDS)), "debug"),
                      else_="experiment")



def _tag_kinds(usage: ir.Table, main: tuple[str, ...]) -> ir.Table:
    """The GPU rows' GPU-hours and count by their tags, each tag triple with its kind: the words are matched once a
    triple (a few hundred), not once a row (6× faster over 10⁶ rows)."""
    rows = rows_where(usage, gpu(usage))
    tags = rows.group_by(list(TAGS)).aggregate(gpu_hours=rows.gpu_hours.sum(), rows=_counted(rows))
    return tags.mutate(kind=_kind(tags, main))


@built
def _overhead_expr(usage: ir.Table, main: tuple[str, ...]) -> ir.Table:
    tags = _tag_kinds(usage, main)
    return tags.group_by("kind").aggregate(gpu_hours=tags.gpu_hours.sum(), rows=tags.rows.sum(),
                                           runs=tags.run_id.nunique())


@built
def _overhead_rows_expr(usage: ir.Table, main: tuple[str, ...], kinds: tuple[str, ...]) -> ir.Table:
    """``SOURCE_ROWS`` source rows of each overhead kind in ``kinds`` (one or more: those with runs; ``_found``): the
    GPU rows whose tags are of that kind."""
    tags, rows = _tag_kinds(usage, main), rows_where(usage, gpu(usage))
    firsts = []
    for kind in kinds:
        these = tags.filter(tags.kind == kind)
        of_kind = rows.semi_join(these, [rows[tag].identical_to(these[tag]) for tag in TAGS])
        firsts.append(_found(of_kind.select("source_row", kind=ibis.literal(kind))))
    return _by_source_row(firsts)


def _by_source_row(firsts: list[ir.Table]) -> ir.Table:
    return ibis.union(*firsts, distinct=False).select("kind", "source_row").order_by("source_row")


@built
def _overhead_keyed_rows_expr(usage: ir.Table, main: tuple[str, ...], keys: tuple[tuple[str, Triples], ...]
                              ) -> ir.Table:
    """``SOURCE_ROWS`` source rows of each overhead kind of ``keys`` (kind, the tag triples of its rows, from a
    rollup): the GPU rows of that kind (``_found``) within those triples' teams and projects (``_tagged``, which
    skips other row groups: the words are matched on the rows of those only)."""
    firsts = []
    for kind, tagged in keys:
        rows = rows_where(usage, _tagged(usage, tagged, ("project", "team")) & gpu(usage))
        rows = rows_where(rows, holds(_kind(rows, main) == kind))
        firsts.append(_found(rows.select("source_row", kind=ibis.literal(kind))))
    return _by_source_row(firsts)


@built
def _tag_keys_expr(rolled: ir.Table, main: tuple[str, ...], kinds: tuple[str, ...]) -> ir.Table:
    tags = _tag_kinds(rolled, main)
    tags = tags.filter(tags.kind.isin(list(kinds)))
    return tags.select("kind", *TAGS).order_by(["kind", *TAGS])


@query
def _overhead_sums(usage: ir.Table, main: tuple[str, ...]) -> pd.DataFrame:
    return _frame(_overhead_expr(usage, main))


@query
def _tag_keys(rolled: ir.Table, main: tuple[str, ...], kinds: tuple[str, ...]) -> pd.DataFrame:
    return _frame(_tag_keys_expr(rolled, main, kinds))


@query
def _overhead_rows(usage: ir.Table, main: tuple[str, ...], kinds: tuple[str, ...],
                   keys: tuple[tuple[str, Triples], ...] | None = None) -> pd.DataFrame:
    return _frame(_overhead_rows_expr(usage, main, kinds) if keys is None else
                  _overhead_keyed_rows_expr(usage, main, keys))


def overhead_sums(usage: ir.Table, main: tuple[str, ...], summed: ir.Table | None = None
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """GPU-hours, rows and runs of the GPU rows by kind (main, none, eval, debug, experiment), and the source rows
    of each overhead kind with runs (those of a kind without are not read: it is not measured). ``summed``: a rollup
    by ``RUN_GRAIN`` read as rows, which the sums and the tags of each kind are read from (the rows are read for the
    source rows only)."""
    sums = _overhead_sums(usage if summed is None else summed, main)
    kinds = tuple(kind for kind in OVERHEADS if (sums.loc[sums["kind"] == kind, "runs"] > 0).any())
    if not kinds:
        return sums, pd.DataFrame({"kind": pd.Series(dtype=str), "source_row": pd.Series(dtype="int64")})
    if summed is None:
        return sums, _overhead_rows(usage, main, kinds)
    keyed = _tag_keys(summed, main, kinds)
    keys = tuple((kind, _triples(keyed.loc[keyed["kind"] == kind])) for kind in kinds)
    return sums, _overhead_rows(usage, main, kinds, keys)


def _overheads(usage: ir.Table, main: tuple[str, ...], runs_text: str, summed: ir.Table | None = None
               ) -> dict[str, Measured]:
    if not main:
        return {key: _missing(key, "no GPU row has a run id, so runs cannot be told from the main run")
                for key in OVERHEADS.values()}
    sums, firsts = overhead_sums(usage, main, summed)
    by = {str(kind): (float(h), int(n), int(r)) for kind, h, n, r in
          sums[["kind", "gpu_hours", "rows", "runs"]].itertuples(index=False)}
    main_h = by.get("main", (0.0, 0, 0))[0]
    if main_h <= 0:
        return {key: _missing(key, f"the main run, {runs_text}, has no GPU-hours") for key in OVERHEADS.values()}
    none_h = by.get("none", (0.0, 0, 0))[0]
    result = {}
    for kind, key in OVERHEADS.items():
        hours, count, runs = by.get(kind, (0.0, 0, 0))
        basis = (f"{count_sig(hours)} GPU-h in {runs} run{'s' if runs != 1 else ''} over the main run's "
                 f"{count_sig(main_h)} GPU-h; main run: {runs_text}")
        if none_h > 0:
            basis += f"; {count_sig(none_h)} GPU-h with no run are idle or unattributed, not counted"
        if runs == 0:
            result[key] = _missing(key, f"not measured: no runs named {NAMED[kind]} (the names are matched on "
                                        "words: docs/calibration.md), so the plan's value stays")
            continue
        thin = runs < OVERHEAD_MIN_RUNS
        caveat = (f"only {runs} {kind} run{'s' if runs != 1 else ''}: one run more or less moves it by "
                  "its own GPU-hours" if thin else None)
        result[key] = Measured(key, hours / main_h, None, None, count, hours, basis, RULES[key], caveat,
                               _rows(firsts.loc[firsts["kind"] == kind, "source_row"]), thin)
    return result


# --- prices and purchase shares -----------------------------------------------------------------------------------

@built
def _prices_expr(usage: ir.Table) -> ir.Table:
    rows = rows_where(usage, gpu(usage) & usage.pricing.notnull())
    priced = holds(rows.cost != 0)
    return rows.group_by(pricing=rows.pricing, gpu_type=rows.gpu_type.cast("string").fill_null("(unknown)"),
                         currency=rows.currency.cast("string").fill_null("")).aggregate(
        gpu_hours=rows.gpu_hours.sum(), priced_hours=rows.gpu_hours.sum(where=priced),
        cost=rows.cost.sum(where=priced), rows=_counted(rows), priced_rows=_counted(rows, priced))


@built
def _price_rows_expr(usage: ir.Table, pricings: tuple[str, ...]) -> ir.Table:
    """``SOURCE_ROWS`` GPU rows of each pricing tier of ``pricings`` (``_found``)."""
    firsts = []
    for pricing in pricings:
        rows = rows_where(usage, gpu(usage) & (usage.pricing == pricing))
        firsts.append(_found(rows.select("pricing", "source_row", priced=holds(rows.cost != 0))))
    return ibis.union(*firsts, distinct=False).select("pricing", "priced", "source_row").order_by("source_row")


@built
def _currencies_expr(usage: ir.Table) -> ir.Table:
    rows = rows_where(usage, holds(usage.cost != 0))
    return rows.select(currency=rows.currency.cast("string").fill_null("")).distinct().limit(20)


@query
def _price_sums(usage: ir.Table) -> tuple[pd.DataFrame, list[str]]:
    currencies = sorted(str(c) for c in _frame(_currencies_expr(usage))["currency"])
    return _frame(_prices_expr(usage)), currencies


@query
def _price_rows(usage: ir.Table, pricings: tuple[str, ...]) -> pd.DataFrame:
    if not pricings:
        return pd.DataFrame({"pricing": pd.Series(dtype=str), "priced": pd.Series(dtype=bool),
                             "source_row": pd.Series(dtype="int64")})
    return _frame(_price_rows_expr(usage, pricings))


def price_sums(usage: ir.Table, summed: ir.Table | None = None) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """GPU-hours, priced GPU-hours (non-zero cost), cost and rows by pricing, GPU type and currency of the GPU rows
    with a known pricing; the first source rows of each pricing they hold, with whether each is priced; and the
    currencies of the bill's rows with a cost, sorted ("" for none stated). ``summed``: a rollup by ``PRICE_GRAIN``
    read as rows, which the sums and currencies are read from (a group's GPU-hours and cost are all above, below or
    at zero, or all missing, as its sums are); the rows are read for the source rows only."""
    sums, currencies = _price_sums(usage if summed is None else summed)
    pricings = tuple(pricing for pricing in PRICING_VALUES if (sums["pricing"] == pricing).any())
    return sums, _price_rows(usage, pricings), currencies


@built
def _gpu_rows_expr(usage: ir.Table) -> ir.Table:
    return rows_where(usage, gpu(usage)).select("source_row").limit(1)


@query
def has_gpu_rows(usage: ir.Table) -> bool:
    """Whether some row has GPU-hours."""
    return bool(len(_frame(_gpu_rows_expr(usage))))


def _currency_caveat(currencies: list[str]) -> str | None:
    """Why the bill's prices cannot stand in the plan's US dollars; None when they can."""
    if currencies == [USD]:
        return None
    named = ", ".join(c for c in currencies if c)
    if not named:
        return "the bill states no currency; the plan is in US dollars"
    return f"the bill is in {named}; the plan is in US dollars"


def _catalogue_key(name: object) -> str | None:
    """The hardware catalogue's key of a GPU type cell or name ("H100 80GB HBM3" → "h100"); None if unknown."""
    for text in (name, gpu_name(name)):
        if isinstance(text, str):
            try:
                return resolve_gpu_type(text)
            except ValueError:
                continue
    return None


def _prices(bill: ir.Table | None, gpu_type: str | None = None, summed: ir.Table | None = None
            ) -> dict[str, Measured]:
    keys = (*PRICINGS.values(), "reserved_share", "spot_share")
    if bill is None:
        return {key: _missing(key, NEEDS_BILL) for key in keys}
    sums, firsts, currencies = price_sums(bill, summed)
    result: dict[str, Measured] = {}
    known_h = float(sums["gpu_hours"].sum())
    if not currencies:  # no row has a cost: a run export given as the bill
        no_cost = "no row of the bill has a cost (a run export's, such as Slurm's or W&B's, never has)"
        if known_h > 0:
            return {key: _missing(key, no_cost) for key in PRICINGS.values()} | _shares(sums, firsts, known_h)
        return {key: _missing(key, no_cost) for key in keys}
    caveat: str | None
    if known_h <= 0:
        caveat = ("the bill's GPU rows do not say how they were bought (reserved, on-demand or spot)"
                  if has_gpu_rows(bill) else "the bill has no GPU rows (GPU-hours), so it tells no GPU price or "
                  "purchase share")
        money = _currency_caveat(currencies)
        return {key: _missing(key, caveat if key.endswith("share") or money is None else f"{money}; {caveat}")
                for key in keys}
    for pricing, key in PRICINGS.items():
        part = sums.loc[(sums["pricing"] == pricing) & (sums["priced_hours"] > 0)]
        word = PRICING_WORDS[pricing]
        money = _currency_caveat(currencies)
        if money is not None:
            result[key] = _missing(key, money)
            continue
        if not len(part):
            unpriced = sums.loc[sums["pricing"] == pricing, "gpu_hours"].sum()
            result[key] = _missing(key, f"the bill has {count_sig(unpriced)} {word} GPU-hours at no cost (an "
                                        "actual-cost view bills a commitment on its own lines)" if unpriced > 0
                                   else f"the bill has no {word} GPU rows")
            continue
        by_type = part.groupby("gpu_type")[["priced_hours", "cost", "priced_rows"]].sum()
        prices = by_type["cost"] / by_type["priced_hours"]
        wanted = _catalogue_key(gpu_type) if gpu_type else None
        same = [name for name in by_type.index if wanted is not None and _catalogue_key(name) == wanted]
        chosen = by_type.loc[same] if same else by_type
        hours, cost = float(chosen["priced_hours"].sum()), float(chosen["cost"].sum())
        count = int(chosen["priced_rows"].sum())
        listed = ", ".join(f"{name} ${price:.3g}" for name, price in prices.sort_values().items())
        top = str(by_type["priced_hours"].idxmax())
        caveat = None
        if same:
            basis = f"${cost / hours:.3g}/GPU-h paid over {count_sig(hours)} {word} GPU-h of {', '.join(same)}"
            if len(by_type) > len(same):
                basis += f", the plan's GPU (all types: {listed})"
        elif len(by_type) == 1:
            basis = f"${cost / hours:.3g}/GPU-h paid over {count_sig(hours)} {word} GPU-h of {top}"
            if wanted is not None:
                caveat = f"paid for {top}, not the plan's {gpu_type}"
        else:
            basis = (f"${cost / hours:.3g}/GPU-h paid over {count_sig(hours)} {word} GPU-h; {top} is "
                     f"{_pct(by_type.at[top, 'priced_hours'] / hours)} of them ({listed})")
            caveat = ("mixes GPU types" + (f", none of them the plan's {gpu_type}" if wanted is not None else "")
                      + ": the price of one type is in the basis")
        rows = firsts.loc[(firsts["pricing"] == pricing) & firsts["priced"].astype(bool), "source_row"]
        # No spread: prices paid last quarter by GPU type are not the next quarter's uncertainty, so the plan's
        # price ranges stay as they were.
        result[key] = Measured(key, cost / hours, None, None, count, hours, basis, RULES[key], caveat, _rows(rows),
                               False)
    return result | _shares(sums, firsts, known_h)


def _shares(sums: pd.DataFrame, firsts: pd.DataFrame, known_h: float) -> dict[str, Measured]:
    result = {}
    for pricing, key in (("reserved", "reserved_share"), ("spot", "spot_share")):
        hours = float(sums.loc[sums["pricing"] == pricing, "gpu_hours"].sum())
        count = int(sums.loc[sums["pricing"] == pricing, "rows"].sum())
        rows = firsts.loc[firsts["pricing"] == pricing, "source_row"]
        result[key] = Measured(key, hours / known_h, None, None, count, known_h,
                               f"{count_sig(hours)} of {count_sig(known_h)} GPU-h with a known pricing were "
                               f"{PRICING_WORDS[pricing]}", RULES[key], None, _rows(rows), False)
    return result


# --- checkpoints --------------------------------------------------------------------------------------------------

@built
def _checkpoint_expr(usage: ir.Table, column: str) -> ir.Table:
    rows = rows_where(usage, _jobs(usage) & usage[column].notnull())
    value = rows[column].cast("float64")
    return rows.aggregate(median=value.median(), low=value.min(), high=value.max(), count=rows.count(),
                          first=rows.source_row.min())


@dataclass(frozen=True)
class CheckpointRecords:
    """The job rows' records of one of ``CHECKPOINT_COLUMNS`` (minutes): their median, lowest and highest value
    (NaN without records), how many there are and the first one's source row (None without records)."""

    median_min: float
    low_min: float
    high_min: float
    count: int
    first_source_row: int | None


NO_RECORDS = CheckpointRecords(math.nan, math.nan, math.nan, 0, None)


@query
def checkpoint_median(usage: ir.Table, column: str) -> CheckpointRecords:
    """The job rows' records of ``column``, one of ``CHECKPOINT_COLUMNS``."""
    row = _frame(_checkpoint_expr(usage, column)).iloc[0]
    count = int(as_float(row["count"]))
    if not count:
        return NO_RECORDS
    return CheckpointRecords(as_float(row["median"], math.nan), as_float(row["low"], math.nan),
                             as_float(row["high"], math.nan), count, int(as_float(row["first"])))


def _frame_checkpoint(frame: pd.DataFrame, column: str) -> CheckpointRecords:
    """``checkpoint_median`` of a pandas frame, whose columns beyond the canonical ones a bound table leaves out."""
    jobs = (frame["run_state"].notna() & frame["run_id"].notna()
            & (frame["period_end"] > frame["period_start"]).fillna(False).astype(bool))
    values = pd.to_numeric(frame.loc[jobs, column], errors="coerce")
    rows = frame.loc[jobs, "source_row"][values.notna()]
    values = values.dropna()
    if not len(values):
        return NO_RECORDS
    return CheckpointRecords(float(values.median()), float(values.min()), float(values.max()), len(values),
                             int(rows.min()))


RESTART_STATES: tuple[str, ...] = ("NODE_FAIL", "FAILED", "TIMEOUT", "PREEMPTED")  # the rates' interruptions
RESTART_CAVEAT = ("wall-clock from the interruption to the resumed job's start: it includes queueing and any wait "
                  "for a repaired node, which a hot spare or an automatic requeue would shorten")


@built
def _restart_expr(usage: ir.Table, per_job: bool) -> ir.Table:
    rows = _job_rows(usage, per_job)
    window = ibis.window(group_by=rows.run_id, order_by=[rows.period_start, rows.source_row])
    gap_s = rows.period_start.epoch_seconds().lead().over(window) - rows.period_end.epoch_seconds()
    rows = rows.mutate(gap_min=gap_s / 60.0)
    rows = rows.filter(rows.interrupted & holds(rows.run_state.isin(list(RESTART_STATES))) & rows.gap_min.notnull())
    return rows.select("gap_min", "source_row").order_by("source_row").limit(MFU_ROWS)


@query
def restart_gaps(usage: ir.Table, per_job: bool) -> pd.DataFrame:
    """``gap_min`` and ``source_row`` of every interruption its run resumed after (``waste.marked``; states
    ``RESTART_STATES``): minutes from the interrupted job's end to its run's next job's start, in source order."""
    return _frame(_restart_expr(usage, per_job))


def _restarts(usage: ir.Table, per_job: bool, summed: ir.Table | None = None) -> Measured:
    """restart_min from the gaps before resumed jobs, where the export gives no restart records; ``summed`` (the
    jobs rollup read as rows, not with ``per_job``) names the runs whose rows are read."""
    runs = event_runs(summed, RESTART_STATES) if summed is not None and not per_job else None
    gaps = (restart_gaps(usage if runs is None else _of_runs(usage, runs), per_job) if runs != () else
            pd.DataFrame({"gap_min": pd.Series(dtype=float), "source_row": pd.Series(dtype="int64")}))
    if not len(gaps):
        return _missing("restart_min", NO_CHECKPOINTS + ", and no interrupted job was resumed (no restart to time)")
    minutes = gaps["gap_min"].to_numpy(dtype=float)
    count = len(minutes)
    median, low, high = (float(np.percentile(minutes, q)) for q in (50, 10, 90))
    basis = (f"median of {count} restart{'s' if count != 1 else ''} after an interruption, {median:.3g} min "
             f"(P10–P90 {low:.3g}–{high:.3g} min)")
    thin = count < RATE_MIN_COUNT
    caveat = (f"only {count} restart{'s' if count != 1 else ''}; " if thin else "") + RESTART_CAVEAT
    return Measured("restart_min", median, low, high, count, None, basis, RESTART_RULE, caveat,
                    _rows(gaps["source_row"]), thin)


def _checkpoints(usage: ir.Table, given: pd.DataFrame | ir.Table, per_job: bool = False,
                 summed: ir.Table | None = None) -> dict[str, Measured]:
    result = {}
    for column in CHECKPOINT_COLUMNS:
        if isinstance(given, pd.DataFrame):
            facts = _frame_checkpoint(given, column) if column in given.columns else NO_RECORDS
        else:
            facts = checkpoint_median(usage, column) if column in usage.columns else NO_RECORDS
        if not facts.count and column == "restart_min":
            result[column] = _restarts(usage, per_job, summed)
            continue
        if not facts.count:
            result[column] = _missing(column, NO_CHECKPOINTS)
            continue
        count = facts.count
        result[column] = Measured(column, facts.median_min, facts.low_min, facts.high_min, count, None,
                                  f"median of {count} jobs' records, {facts.low_min:g}–{facts.high_min:g} min",
                                  RULES[column], "only one job's record" if count == 1 else None,
                                  _rows([] if facts.first_source_row is None else [facts.first_source_row]),
                                  count == 1)
    return result


# --- the rows behind a figure -------------------------------------------------------------------------------------

BILL_KEYS: tuple[str, ...] = (*PRICINGS.values(), "reserved_share", "spot_share")  # read from the bill


@built
def _rows_behind_expr(usage: ir.Table, source_rows: tuple[int, ...]) -> ir.Table:
    rows = rows_where(usage, usage.source_row.isin(list(source_rows)))
    return rows.order_by("source_row").limit(SOURCE_ROWS)


@query
def rows_behind(usage: ir.Table, measured: Measured) -> pd.DataFrame:
    """The rows a measured input came from (its ``source_rows``, at most ``SOURCE_ROWS``), in source order, from
    the table it read: the bill for prices and shares (``BILL_KEYS``), else the run export."""
    return _frame(_rows_behind_expr(usage, tuple(int(row) for row in measured.source_rows)))


# --- plausibility -------------------------------------------------------------------------------------------------

def _not_finite(value: ir.FloatingColumn) -> ir.BooleanColumn:
    return holds(value.isnan() | value.isinf())


def implausible_test(usage: ir.Table) -> ir.BooleanColumn:
    """The import's plausibility bounds (``ingest.plausible``) as a row test on a canonical table: a cost, billed
    cost or GPU-hours not finite, negative on a row that is not an adjustment, a cost beyond ``MAX_ROW_COST_USD``, a
    price above ``MAX_PRICE_PER_GPU_HOUR_USD`` or GPU-hours beyond ``MAX_ROW_GPUS`` running the row's period (each
    amount in the row's currency, by ``UNITS_PER_USD``). A table imported now holds none such; one written before
    those bounds, or built by hand, may."""
    cost, billed, hours = (usage[name].cast("float64") for name in ("cost", "billed_cost", "gpu_hours"))
    rate = usage.currency.cast("string").upper().substitute(plausible.UNITS_PER_USD, else_=plausible.LOOSEST_RATE)
    rate = rate.fill_null(plausible.LOOSEST_RATE)  # DuckDB types it DECIMAL: amounts are divided by it, in DOUBLE
    adjustment = holds(usage.charge_kind.cast("string").lower() == plausible.ADJUSTMENT)
    period_h = (usage.period_end.epoch_seconds() - usage.period_start.epoch_seconds()) / 3600.0
    period_h = ibis.ifelse(holds(period_h > 0), period_h, plausible.UNKNOWN_PERIOD_H)
    negative = holds((cost < -plausible.NEGATIVE_SLACK) | (billed < -plausible.NEGATIVE_SLACK)
                     | (hours < -plausible.NEGATIVE_SLACK))
    return (_not_finite(cost) | _not_finite(billed) | _not_finite(hours) | (negative & ~adjustment)
            | holds(cost.abs() / rate > plausible.MAX_ROW_COST_USD)
            | holds(billed.abs() / rate > plausible.MAX_ROW_COST_USD)
            | holds(hours > plausible.MAX_ROW_GPUS * period_h)
            | holds((hours > 0) & (ibis.greatest(cost, billed) / rate / hours > plausible.MAX_PRICE_PER_GPU_HOUR_USD)))


@built
def _implausible_expr(usage: ir.Table) -> ir.Table:
    return _found(rows_where(usage, implausible_test(usage)).select("source_row"))


@query
def implausible_rows(usage: ir.Table) -> tuple[int, ...]:
    """The source rows (``SOURCE_ROWS`` of them, ``_found``) of a table's implausible rows (``implausible_test``)."""
    return _rows(_frame(_implausible_expr(usage))["source_row"])


def _lines(rows: tuple[int, ...]) -> str:
    shown = ", ".join(f"{row:,}" for row in rows[:LINES_SHOWN])
    more = len(rows) - LINES_SHOWN
    return f"line{'s' if len(rows) > 1 else ''} {shown}" + (f" and {more:,} more" if more > 0 else "")


def _refused(key: str, reason: str, rows: tuple[int, ...]) -> Measured:
    return Measured(key, None, None, None, 0, None, "refused", RULES.get(key, ""), f"refused: {reason}", rows, False,
                    reason)


def _refuse_rows(measured: dict[str, Measured], keys: tuple[str, ...], rows: tuple[int, ...], what: str
                 ) -> dict[str, Measured]:
    """``measured`` with ``keys`` refused where they were measured: ``what`` (the bill, the run export) holds the
    implausible ``rows``."""
    reason = (f"{what} holds implausible values on {_lines(rows)} (a cost, GPU-hours or price beyond the import's "
              "bounds, docs/formats.md); import the file again, which rejects those rows, or drop them")
    return measured | {key: _refused(key, reason, rows) for key in keys if measured[key].value is not None}


def _bounds(key: str) -> tuple[float, float]:
    """The plausible range of a plan input: the scenario's own bounds on it (``Scenario``'s ge / le)."""
    low, high = -math.inf, math.inf
    for rule in Scenario.model_fields[key].metadata:
        low = float(getattr(rule, "ge", low))
        high = float(getattr(rule, "le", high))
    return low, high


def _refuse_values(measured: dict[str, Measured]) -> dict[str, Measured]:
    """``measured`` with every value outside its plausible range (``_bounds``, not finite) refused, naming the rows
    it came from."""
    result = dict(measured)
    for key, item in measured.items():
        if item.value is None:
            continue
        low, high = _bounds(key)
        if math.isfinite(item.value) and low <= item.value <= high:
            continue
        rows = f" from {_lines(item.source_rows)}" if item.source_rows else ""
        reason = (f"the value measured{rows}, {item.value:.3g}, is outside the plausible {low:g} to {high:g} of "
                  f"{key} (the plan's own bounds)")
        result[key] = _refused(key, reason, item.source_rows)
    return result


# --- the whole ----------------------------------------------------------------------------------------------------

# The columns a rollup groups by for its sums to stand in for the rows' (``rollups``): per run, with the signs of the
# row tests made ("the GPU rows", "with tokens"); per pricing tier and GPU type ("with a cost"); per job segment.
RUN_GRAIN = ("team", "project", "run_id", "run_state", "gpu_sign", "tokens_sign")
PRICE_GRAIN = ("pricing", "gpu_type", "currency", "gpu_sign", "cost_sign")
JOB_GRAIN = ("run_id", "run_state", "pricing", "gpu_sign", "segment", "job_hours")


def checked_at_import(rollups: Rollups | None) -> bool:
    """Whether every row the chooser ``rollups`` stands for was checked at import against today's plausibility
    bounds (``ingest.plausible``): a workspace dataset's chooser says so (``rollup_rows.Chooser.checked``)."""
    return rollups is not None and getattr(rollups, "checked", False) is True


def calibrate(bill: pd.DataFrame | ir.Table | None, runs: pd.DataFrame | ir.Table | None = None, *,
              main_run_ids: list[str] | None = None, model_params: float | None = None,
              gpus_per_node: int = 8, gpu_type: str | None = None,
              run_params: Mapping[int, float] | None = None, rollups: Rollups | None = None) -> dict[str, Measured]:
    """Every input of ``KEYS`` measured from a bill and a run export (canonical pandas frames or Ibis tables; at
    least one given), by the rules of the module docstring; ``gpu_type`` (the plan's) picks the prices of that GPU
    where the bill bought it; ``run_params`` (the run export's ``ImportReport.model_params``: source row → the
    run's logged model size) gives each job's model size for MFU, ``model_params`` that of a job that logs none. A
    key that cannot be measured has value None and a caveat saying what would tell it. ``rollups``: the chooser of a
    workspace dataset whose own rows ``bill`` is (never with ``runs`` or a filter): the sums are read from its
    smallest rollup holding their grain (``RUN_GRAIN``, ``PRICE_GRAIN``, ``JOB_GRAIN``), the same to the cent; the
    rows for the source rows cited, MFU's per-row values and the restart gaps, and the plausibility test unless the
    rows were checked at import against today's bounds (``checked_at_import``)."""
    if bill is None and runs is None:
        raise ValueError("calibrate needs a bill or a run export")
    if gpus_per_node < 1:
        raise ValueError("gpus_per_node must be 1 or more")
    if runs is not None:
        rollups = None  # the sums are the run export's
    bill_table = None if bill is None else tables.table_of(bill)
    run_table = tables.table_of(runs) if runs is not None else bill_table
    assert run_table is not None
    by_run, by_price, by_job = (rollup_of(rollups, grain) for grain in (RUN_GRAIN, PRICE_GRAIN, JOB_GRAIN))
    shape = table_shape(run_table) if by_run is None else rolled_shape(by_run)
    main, runs_text = _main_runs(run_table, shape, main_run_ids, by_run)
    main_ids = tuple(sorted(main))
    billed_type = None
    if bill_table is not None and runs is not None and main_ids:
        column, keys = ("project", (_project_of(run_table, main_ids[0]),)) if shape.per_job else ("run_id", main_ids)
        billed_type = bill_gpu_type(bill_table, column, keys)
    result = {"mfu": _mfu(run_table, main_ids, runs_text, model_params, billed_type, run_params, by_run)}
    result |= _interruptions(run_table, shape.per_job, int(gpus_per_node), by_job)
    result |= _overheads(run_table, main_ids, runs_text, by_run)
    result |= _prices(bill_table, gpu_type, by_price)
    result |= _checkpoints(run_table, runs if runs is not None else bill, shape.per_job, by_job)
    if bill_table is not None and not checked_at_import(rollups) and (rows := implausible_rows(bill_table)):
        result = _refuse_rows(result, BILL_KEYS if runs is not None else KEYS, rows, "the bill")
    if runs is not None and (rows := implausible_rows(run_table)):
        result = _refuse_rows(result, tuple(key for key in KEYS if key not in BILL_KEYS), rows, "the run export")
    return _refuse_values({key: result[key] for key in KEYS})


def calibration_period(bill: pd.DataFrame | ir.Table | None, runs: pd.DataFrame | ir.Table | None = None) -> str:
    """The period the imports cover ("2025-04-01 to 2025-06-30"), from the earliest start to the latest end."""
    firsts, lasts = [], []
    for table in (bill, runs):
        if table is not None:
            shape = table_shape(tables.table_of(table))
            firsts += [shape.first] if shape.first is not None else []
            lasts += [shape.last] if shape.last is not None else []
    return period_text(min(firsts), max(lasts)) if firsts and lasts else ""


def _ratio(end: float | None, value: float, low: bool) -> float | None:
    if end is None or value <= 0 or not math.isfinite(end):
        return None
    return min(1.0, max(0.01, end / value)) if low else min(100.0, max(1.0, end / value))


def _rounded(value: float | None) -> float | None:
    """A measured figure to the three significant figures the pages show (``format.SIGNIFICANT``): no measurement
    is better than that, and the Plan page's controls hold such a value exactly, so the plan is not "edited"."""
    return None if value is None else float(f"{value:.{SIGNIFICANT}g}")


def usable(item: Measured, use_thin: Collection[str] = ()) -> bool:
    """Whether a measured input goes into the next plan: it has a value, and it is not thin unless the user chose
    it (``use_thin``: keys)."""
    return item.value is not None and (not item.thin or item.key in use_thin)


def not_applied(item: Measured, use_thin: Collection[str] = ()) -> str | None:
    """Why a measured input does not go into the next plan (None when it does): its caveat when it has no value,
    else that it is thin and was not chosen."""
    if usable(item, use_thin):
        return None
    if item.value is None:
        return item.caveat or "not measured"
    return f"thin, so applied only when chosen: {item.caveat or 'few observations'}"


MEASURED_FROM_CHARS = 200  # the scenario's mfu_measured_from bound


def measured_mfu(value: float, basis: str) -> dict[str, float | str]:
    """The scenario keys that record an MFU as the team's measured one (``mfu`` and ``mfu_measured`` the value,
    ``mfu_measured_from`` the basis as one line of plain text within the scenario's bound), so Compare, the report
    and ``estimate --json`` grade it "measured" while the plan keeps it."""
    text = " ".join(re.sub(r"[\x00-\x1f\x7f]", " ", basis).split()) or "measured"
    if len(text) > MEASURED_FROM_CHARS:
        text = text[: MEASURED_FROM_CHARS - 1] + "…"
    return {"mfu": value, "mfu_measured": value, "mfu_measured_from": text}


def scenario_from(measured: dict[str, Measured], base: Scenario, use_thin: Collection[str] = ()
                  ) -> tuple[Scenario, dict[str, Measured]]:
    """``base`` with every measured value set (and, where a range key exists, its low and high ends as multiples of
    the value: ``RANGES``), validated by the scenario's own rules and named "<base name> (calibrated)". A thin value
    is set only when its key is in ``use_thin`` (the user chose it); a value the scenario refuses (out of its
    bounds) is left at ``base``'s; a measured MFU is recorded as the team's (``measured_mfu``); returns the
    scenario and the Measured applied."""
    data = base.to_json_dict()
    applied: dict[str, Measured] = {}
    for key, item in measured.items():
        if not usable(item, use_thin) or key not in Scenario.model_fields:
            continue
        assert item.value is not None
        if not math.isfinite(item.value):
            continue
        value = float(f"{item.value:.{SIGNIFICANT}g}")
        item = replace(item, value=value, low=_rounded(item.low), high=_rounded(item.high))
        trial = data | ({key: value} if key != "mfu" else measured_mfu(value, item.basis))
        if key in field_errors(trial):
            continue
        data, applied[key] = trial, item
        if key in RANGES and value > 0:
            for end, is_low in ((item.low, True), (item.high, False)):
                ratio = _rounded(_ratio(end, value, is_low))
                if ratio is not None:
                    data[f"range_{RANGES[key]}_{'low' if is_low else 'high'}"] = ratio
    suffix = " (calibrated)"
    data["name"] = base.name[: 120 - len(suffix)] + suffix
    try:
        return scenario_from_dict(data), applied
    except ScenarioError:
        # a rule across keys (the shares adding past 1 with the base's): keep the base's shares
        for key in ("reserved_share", "spot_share"):
            if key in applied:
                data[key] = getattr(base, key)
                applied.pop(key)
        return scenario_from_dict(data), applied
