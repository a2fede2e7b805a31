"""The jobs rollup of a workspace dataset (issue 52): its rows summed by run, state, pricing tier and charge kind,
by the signs of their GPU-hours, cost and tokens, and by the marks of each run segment that no setting changes (its
duration where it may be an interruption, and whether its run resumed after it: ``dashboard.query.segments``).

Plan vs actual reads it in place of the rows: a row test of its sums ("the GPU rows", "with a cost", "with tokens")
reads the signs, the failed states chosen are a test of ``run_state``, and the GPU-hours an interruption lost are
Σ min(1, (τ/2 + restart) / duration) × GPU-hours over its groups, exact for any checkpoint interval and restart time
(``dashboard.retro.waste.marked``). The marks come from a window over the job rows of every month at once: a run
whose segment ends in one month and resumes in the next is seen resumed, so an import or an append builds the jobs
rollup over all the months (one sort of the job rows). The rows that cannot be job rows (no GPU-hours, no run state or
no run id: nearly all of a bill) need no marks, and their groups are the runs rollup's summed over its GPU types, so
when the runs rollup is built only the others are read back (``from_runs``). Its totals are proven equal to the
rows' as every rollup's (``rollups.prove``), and it is kept within the rollups' size budget."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import ibis
import ibis.expr.types as ir
from ibis.backends import BaseBackend

from dashboard import settings
from dashboard.query import segments
from dashboard.query.columns import rows_where
from dashboard.workspace import rollups
from dashboard.workspace.datasets import USAGE
from dashboard.workspace.writer import PARTITION

JOBS = rollups.JOBS
FIRST_START = "first_start"  # the measure of the earliest start (Waste's first day)
SIGNED = {"gpu_sign": "gpu_hours", "cost_sign": "cost", "tokens_sign": "tokens"}  # a sign column and its amount


def keyed(usage: ir.Table) -> ir.Table:
    """The rows of ``usage`` with the jobs rollup's keys: the job rows with their marks (a window over them alone)
    beside the other rows with none, each with the signs of its amounts."""
    is_job = segments.job(usage)
    jobs = rows_where(usage, is_job)
    jobs = jobs.mutate(**segments.marks(jobs))
    others = usage.filter(~is_job).mutate(**{segments.SEGMENT: ibis.null("int8"),
                                             segments.JOB_HOURS: ibis.null("float64")})
    rows = ibis.union(jobs, others.select(*jobs.columns), distinct=False)
    return rows.mutate(**{sign: rollups._sign(rows[amount]) for sign, amount in SIGNED.items()})


def summed(usage: ir.Table) -> ir.Table:
    """The jobs rollup of ``usage`` (canonical rows with their ``month``): a row per month and ``JOBS.columns``,
    with every rollup's ``MEASURES`` (sums exact, in ``rollups.AMOUNT``)."""
    rows = keyed(usage)
    measures = {}
    for measure in rollups.MEASURES:
        if measure.kind == "count":
            measures[measure.name] = rows.count() if measure.column is None else rows[measure.column].count()
        elif measure.kind == "sum":
            measures[measure.name] = rows[measure.column].cast(rollups.AMOUNT).sum()
        else:
            value = rows[measure.column]
            measures[measure.name] = value.max() if measure.kind == "max" else value.min()
    return rows.group_by([PARTITION, *JOBS.columns]).aggregate(**measures)


def from_runs(runs: ir.Table, usage: ir.Table) -> ir.Table:
    """The jobs rollup (as ``summed``) of the rows ``usage`` whose runs rollup (with its ``month``) is ``runs``: the
    groups of the rows that are no ``segments.run_row`` summed from the runs rollup's over its further columns (its GPU
    type: they have no marks), those of the run rows from their rows."""
    jobs = summed(usage.filter(segments.run_row(usage)))
    others = runs.filter(~segments.run_row(runs))
    marks = {segments.SEGMENT: ibis.null("int8"), segments.JOB_HOURS: ibis.null("float64")}
    by = [PARTITION, *(column for column in JOBS.columns if column not in marks)]
    sums = others.group_by(by).aggregate(**rollups._summed_again(others)).mutate(**marks)
    schema = jobs.schema()
    return ibis.union(jobs, sums.select(*(sums[name].cast(schema[name]).name(name) for name in schema.names)),
                      distinct=False)


def months_of(at: Path) -> list[str]:
    """The month partitions of the rows of the version folder ``at``."""
    return sorted(path.name.split("=", 1)[1] for path in (at / USAGE).glob(f"{PARTITION}=*"))


def build(backend: BaseBackend, at: Path, built_at: str, kept: list[dict] | None, entries: list[dict]) -> list[dict]:
    """Build the jobs rollup of the version folder ``at`` over all its months; its ``dataset.json`` entry ([] when
    not built). ``kept``: the entries of the version appended to (built again when it had one; None for a new
    dataset: built when it fits in the size budget beside the other rollups' ``entries``)."""
    if kept is not None and not any(entry.get("name") == JOBS.name for entry in kept):
        return []
    months = months_of(at)
    if not months:
        return []
    usage = rollups._usage(backend, at)
    runs = rollups.BY_NAME["runs"]
    if any(entry["name"] == runs.name for entry in entries):  # built (as declared) with the measures of today
        table = from_runs(rollups._partitioned(backend, rollups.folder(at, runs)), usage).cache()
    else:
        table = summed(usage).cache()
    try:
        if kept is None:
            size = table.aggregate(n=table.count(), rows=table["rows"].sum()).to_pyarrow().to_pylist()[0]
            bound = max((size["rows"] or 0) * settings.limit(settings.ROLLUP_MAX_PERCENT) // 100,
                        settings.limit(settings.ROLLUP_FREE_ROWS))
            if sum(entry["rows"] for entry in entries) + size["n"] > bound:
                return []
        rollups._write_rollup(backend, table, at, JOBS, months)
    finally:
        table.release()
    counts = {month: sum(rollups._count(path) for path in (rollups.folder(at, JOBS) / f"{PARTITION}={month}")
                         .glob("*.parquet")) for month in months}
    return [{"name": JOBS.name, "grain": list(JOBS.grain), "measures": [m.name for m in rollups.MEASURES],
             "rows": sum(counts.values()), "built_at": built_at, "months": {m: n for m, n in counts.items() if n}}]


def prove(backend: BaseBackend, at: Path, entries: list[dict], months: Iterable[str]) -> None:
    """``rollups.prove`` of ``entries`` for ``months`` (those built), the jobs rollup's over every month (it is built
    over all of them): one query of the rows' totals when those are the same months."""
    months, every = sorted(months), months_of(at)
    jobs = [entry for entry in entries if entry["name"] == JOBS.name]
    others = [entry for entry in entries if entry["name"] != JOBS.name]
    if not jobs or months == every:
        rollups.prove(backend, at, entries, months if not jobs else every)
        return
    rollups.prove(backend, at, others, months)
    rollups.prove(backend, at, jobs, every)
