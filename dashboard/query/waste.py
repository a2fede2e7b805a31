"""The waste checklist's aggregates as queries: the sums, counts and flags each check reports, the storage lines'
cost by calendar month, and the rows behind a check (``rows``, in source order). The rules are
``dashboard.retro.waste``'s; the interruptions (``interruptions``, ``marked``: a failed segment the run resumed
after, ``dashboard.ingest.run_states``) are read by the waste checks and by plan vs actual (``dashboard.query.gap``)."""

from __future__ import annotations

from collections.abc import Callable

import ibis
import ibis.expr.types as ir
import pandas as pd

from dashboard.ingest.run_states import CHECKPOINT_COLUMNS, FAILED_STATES, RESTARTED_STATES, RESUME_WINDOW_HOURS
from dashboard.query.columns import (
    commitment,
    failed,
    flag,
    found,
    gpu,
    holds,
    nonzero_cost,
    number,
    paid_commitment,
    reserved_gpu,
    reserved_gpu_priced,
    rows_where,
    unused_commitment,
)
from dashboard.query.compiled import built, execute, query
from dashboard.query.periods import as_utc


def states_known(usage: ir.Table) -> ir.BooleanColumn:
    """GPU rows with a run state."""
    return gpu(usage) & usage.run_state.notnull()


@built
def _cost_known_expr(usage: ir.Table) -> ir.Table:
    return found(usage, {"priced": nonzero_cost(usage)})


@query
def has_cost(usage: ir.Table) -> bool:
    """Some cost is non-zero (run exports carry none and read as cost 0)."""
    return len(execute(_cost_known_expr(usage))) > 0


ROWS_BEHIND = 10_000  # the rows behind a waste figure are its first this many, in source order


@built
def _rows_expr(usage: ir.Table, where: Callable[[ir.Table], ir.BooleanColumn]) -> ir.Table:
    return rows_where(usage, where(usage)).order_by("source_row").limit(ROWS_BEHIND)


def rows(usage: ir.Table, where: Callable[[ir.Table], ir.BooleanColumn]) -> pd.DataFrame:
    """The rows for which the test ``where`` (a function of the table) holds, in source order, times as UTC
    timestamps."""
    return _utc_times(execute(_rows_expr(usage, where)))


def _utc_times(frame: pd.DataFrame) -> pd.DataFrame:
    for column in ("period_start", "period_end"):
        stamps = pd.to_datetime(frame[column])
        frame[column] = (stamps.dt.tz_localize("UTC") if stamps.dt.tz is None else stamps.dt.tz_convert("UTC")
                         ).dt.as_unit("ns")
    return frame


def _scalars(usage: ir.Table, check: str) -> dict[str, object]:
    """The aggregates of ``check`` (a key of ``CHECK_FACTS``) and its flags (``CHECK_FLAGS``) by name, from the one
    query of every check's aggregates (``_checks_expr``) and the one of every flag (``_flags_expr``): a tab's
    checks read the rows once (see ``compiled.one_view``)."""
    row = execute(_checks_expr(usage)).iloc[0]
    flags = set(execute(_flags_expr(usage))["name"])
    prefix = f"{check}__"
    return ({name.removeprefix(prefix): row[name] for name in row.index if name.startswith(prefix)}
            | {name: test in flags for name, test in CHECK_FLAGS.get(check, {}).items()})


def _failed(usage: ir.Table) -> ir.BooleanColumn:
    return states_known(usage) & failed(usage, FAILED_STATES)


def _failed_facts(rows: ir.Table) -> dict[str, ir.Scalar]:
    return dict(known_h=rows.gpu_hours.sum(where=rows.known), failed_h=rows.gpu_hours.sum(where=rows.failed),
                gpu_h=rows.gpu_hours.sum(where=rows.gpu), failed_cost=rows.cost.sum(where=rows.failed))


@query
def failed_runs(usage: ir.Table) -> dict[str, object]:
    """``known`` (any state known), ``known_h``, ``failed_h`` and ``gpu_h`` (all GPU rows), ``cost_known`` and
    ``failed_cost``."""
    row = _scalars(usage, "failed_runs")
    return {name: flag(row[name]) if name in ("known", "cost_known") else number(row[name]) for name in row}


@built
def _by_state_expr(usage: ir.Table) -> ir.Table:
    where = rows_where(usage, _failed(usage))
    return where.group_by("run_state").agg(gpu_hours=where.gpu_hours.sum())


@query
def failed_by_state(usage: ir.Table) -> pd.DataFrame:
    """``run_state`` and ``gpu_hours`` of the failed rows with a known state, largest first."""
    frame = execute(_by_state_expr(usage))
    return frame.sort_values("gpu_hours", ascending=False, ignore_index=True)


@query
def failed_rows(usage: ir.Table, interval_min: float | None = None, restart_min: float | None = None) -> pd.DataFrame:
    """The failed rows with a known state; with a checkpoint interval and restart time, only those of failed work
    lost (the interrupted segments, ``marked``, left out)."""
    if interval_min is None or restart_min is None:
        return rows(usage, _failed)
    return _utc_times(execute(_lost_rows_expr(usage, FAILED_STATES, float(interval_min), float(restart_min))))


MARKS: tuple[str, ...] = ("in_failed", "interrupted", "lost_share", "from_export")
SECONDS_PER_HOUR = 3600.0


def marked(usage: ir.Table, failed_states: tuple[str, ...], interval_min: float, restart_min: float) -> ir.Table:
    """``usage`` with the interruption marks (``MARKS``): ``in_failed`` (a state of ``failed_states``),
    ``interrupted`` (a job row, ``_jobs``, in a failed state whose run resumed after it, or a restarted segment:
    ``dashboard.ingest.run_states``), ``lost_share`` (of an interrupted row's GPU-hours, the work lost: (τ/2 +
    restart) / its duration, at most 1; else 0) and ``from_export`` (an interrupted row whose checkpoint interval or
    restart time the run export gives, ``CHECKPOINT_COLUMNS``; ``interval_min`` and ``restart_min`` fill the rest).
    The next segment of a run is found by a window over the job rows of each run id, ordered by start (then source
    row); read over the job rows alone (``rows_where(usage, _jobs(usage))``) it sorts only those."""
    job = _jobs(usage)
    start = usage.period_start.epoch_seconds()
    end = usage.period_end.epoch_seconds()
    hours = ibis.ifelse(job, (end - start) / SECONDS_PER_HOUR, ibis.null("float64"))
    gpus = usage.gpu_hours / hours
    window = ibis.window(group_by=[usage.run_id, job], order_by=[usage.period_start, usage.source_row])
    next_start, next_gpus = start.lead().over(window), gpus.lead().over(window)
    in_failed = failed(usage, failed_states)
    resumed = holds((next_start >= end) & (next_start - end <= RESUME_WINDOW_HOURS * SECONDS_PER_HOUR)
                    & ((next_gpus - gpus).abs() < 0.5))
    interrupted = job & ((in_failed & resumed) | holds(usage.run_state.isin(list(RESTARTED_STATES))))
    given = [usage[column] for column in CHECKPOINT_COLUMNS if column in usage.columns]
    interval = (usage[CHECKPOINT_COLUMNS[0]].cast("float64").fill_null(interval_min)
                if CHECKPOINT_COLUMNS[0] in usage.columns else ibis.literal(interval_min))
    restart = (usage[CHECKPOINT_COLUMNS[1]].cast("float64").fill_null(restart_min)
               if CHECKPOINT_COLUMNS[1] in usage.columns else ibis.literal(restart_min))
    lost_hours = (interval / 2.0 + restart) / 60.0
    from_export = interrupted & (ibis.or_(*(column.notnull() for column in given)) if given else ibis.literal(False))
    return usage.mutate(
        in_failed=in_failed, interrupted=interrupted,
        lost_share=ibis.ifelse(interrupted, ibis.least(1.0, lost_hours / hours), 0.0).fill_null(0.0),
        from_export=from_export)


@built
def _lost_rows_expr(usage: ir.Table, failed_states: tuple[str, ...], interval_min: float,
                    restart_min: float) -> ir.Table:
    rows = marked(usage, failed_states, interval_min, restart_min)
    rows = rows.filter(states_known(rows) & rows.in_failed & ~rows.interrupted)
    return rows.drop(*MARKS).order_by("source_row").limit(ROWS_BEHIND)


@built
def _interrupted_rows_expr(usage: ir.Table, failed_states: tuple[str, ...], interval_min: float,
                           restart_min: float) -> ir.Table:
    rows = marked(rows_where(usage, _jobs(usage)), failed_states, interval_min, restart_min)
    rows = rows.filter(rows.interrupted)
    rows = rows.mutate(lost_gpu_hours=rows.gpu_hours * rows.lost_share).drop(*MARKS)
    return rows.order_by("source_row").limit(ROWS_BEHIND)


@query
def interrupted_rows(usage: ir.Table, interval_min: float, restart_min: float,
                     failed_states: tuple[str, ...] = FAILED_STATES) -> pd.DataFrame:
    """The interrupted rows (``marked``) in source order, with the GPU-hours each lost (``lost_gpu_hours``)."""
    return _utc_times(execute(_interrupted_rows_expr(usage, tuple(failed_states), float(interval_min),
                                                     float(restart_min))))


INTERRUPTION_SUMS: tuple[str, ...] = (
    "count", "from_export", "failed_h", "failed_cost", "lost_h", "lost_cost", "main_failed_h", "main_lost_h",
    "main_token_failed_h", "main_token_lost_h", "main_failed_tokens", "main_lost_tokens")


@built
def _interruptions_expr(usage: ir.Table, failed_states: tuple[str, ...], interval_min: float, restart_min: float,
                        main_run_ids: tuple[str, ...]) -> ir.Table:
    rows = marked(rows_where(usage, _jobs(usage)), failed_states, interval_min, restart_min)
    rows = rows.filter(rows.interrupted)
    rows = rows.mutate(lost_h=rows.gpu_hours * rows.lost_share, lost_cost=rows.cost * rows.lost_share,
                       lost_tokens=rows.tokens * rows.lost_share,
                       main=holds(rows.run_id.isin(list(main_run_ids))) if main_run_ids else ibis.literal(False))
    main, tokens = rows.main, rows.main & rows.tokens.notnull()
    return rows.aggregate(
        count=rows.count(), from_export=rows.from_export.sum(),
        failed_h=rows.gpu_hours.sum(where=rows.in_failed), failed_cost=rows.cost.sum(where=rows.in_failed),
        lost_h=rows.lost_h.sum(), lost_cost=rows.lost_cost.sum(),
        main_failed_h=rows.gpu_hours.sum(where=main & rows.in_failed), main_lost_h=rows.lost_h.sum(where=main),
        main_token_failed_h=rows.gpu_hours.sum(where=tokens & rows.in_failed),
        main_token_lost_h=rows.lost_h.sum(where=tokens),
        main_failed_tokens=rows.tokens.sum(where=tokens & rows.in_failed),
        main_lost_tokens=rows.lost_tokens.sum(where=tokens))


@built
def _interrupted_by_state_expr(usage: ir.Table, failed_states: tuple[str, ...], interval_min: float,
                               restart_min: float) -> ir.Table:
    rows = marked(rows_where(usage, _jobs(usage)), failed_states, interval_min, restart_min)
    rows = rows.filter(rows.interrupted)
    return rows.group_by("run_state").agg(gpu_hours=rows.gpu_hours.sum(), in_failed=rows.in_failed.any(),
                                          count=rows.count())


@query
def interruptions(usage: ir.Table, interval_min: float, restart_min: float,
                  failed_states: tuple[str, ...] = FAILED_STATES, main_run_ids: tuple[str, ...] = ()
                  ) -> dict[str, float]:
    """Sums over the interrupted rows (``marked``): their ``count``, how many take their checkpoint interval or
    restart from the run export (``from_export``), the GPU-hours and cost of those in a failed state (``failed_h``,
    ``failed_cost``: what the failed-state sums count as failed), the GPU-hours and cost lost (``lost_h``,
    ``lost_cost``), and of the rows of ``main_run_ids`` the same GPU-hours (``main_failed_h``, ``main_lost_h``)
    and, of those with tokens, the GPU-hours and tokens (``main_token_*``, ``main_*_tokens``). One query over the
    job rows only (0 for none)."""
    row = execute(_interruptions_expr(usage, tuple(failed_states), float(interval_min), float(restart_min),
                                      tuple(str(run) for run in main_run_ids))).iloc[0]
    return {name: number(row[name]) for name in INTERRUPTION_SUMS}


@query
def interrupted_by_state(usage: ir.Table, interval_min: float, restart_min: float,
                         failed_states: tuple[str, ...] = FAILED_STATES) -> pd.DataFrame:
    """``run_state``, ``gpu_hours``, ``in_failed`` (a state of ``failed_states``) and ``count`` of the interrupted
    rows, by state, sorted by state."""
    frame = execute(_interrupted_by_state_expr(usage, tuple(failed_states), float(interval_min),
                                               float(restart_min)))
    return frame.sort_values("run_state", ignore_index=True)


def _completed(usage: ir.Table) -> ir.BooleanColumn:
    return states_known(usage) & holds(usage.run_state == "COMPLETED")


def _successful_facts(rows: ir.Table) -> dict[str, ir.Scalar]:
    return dict(part_cost=rows.cost.sum(where=rows.completed), whole_cost=rows.cost.sum(where=rows.known),
                part_h=rows.gpu_hours.sum(where=rows.completed), whole_h=rows.gpu_hours.sum(where=rows.known),
                total_cost=rows.cost.sum())


@query
def successful_runs(usage: ir.Table) -> dict[str, object]:
    """``known``, ``cost_known``, and the cost and GPU-hours of the COMPLETED rows (``part_*``), of the rows with a
    known state (``whole_*``) and of the whole table (``total_cost``)."""
    row = _scalars(usage, "successful_runs")
    return {name: flag(row[name]) if name in ("known", "cost_known") else number(row[name]) for name in row}


@query
def completed_rows(usage: ir.Table) -> pd.DataFrame:
    return rows(usage, _completed)


def _untagged_reserved(usage: ir.Table) -> ir.BooleanColumn:
    return reserved_gpu(usage) & usage.run_id.isnull()


def _idle_facts(rows: ir.Table) -> dict[str, ir.Scalar]:
    untagged = rows.reserved_gpu & rows.run_id.isnull()  # _untagged_reserved
    return dict(lines=rows.unused.sum(), commitment_usd=rows.cost.sum(where=rows.unused),
                first=rows.period_start.min(where=rows.unused),
                last=rows.period_start.max(where=rows.unused),
                paid_usd=rows.cost.sum(where=rows.paid),
                untagged_h=rows.gpu_hours.sum(where=untagged),
                untagged_usd=rows.cost.sum(where=untagged))


@query
def idle_capacity(usage: ir.Table) -> dict[str, object]:
    """Flags: ``gpu`` (any GPU row), ``commitment`` (any unused-commitment line), ``paid`` (any commitment paid on
    its own line), ``reserved_gpu``, ``reserved_gpu_priced`` and ``untagged`` (reserved GPU rows with no run); the
    unused lines' count (``lines``), cost (``commitment_usd``) and first and last day (``days``), the paid lines'
    cost (``paid_usd``), and the untagged reserved GPU rows' GPU-hours and cost."""
    row = _scalars(usage, "idle_capacity")
    facts = {name: flag(row[name]) for name in CHECK_FLAGS["idle_capacity"]}
    facts |= {name: number(row[name]) for name in ("commitment_usd", "paid_usd", "untagged_h", "untagged_usd")}
    facts["lines"] = int(number(row["lines"]))
    facts["days"] = tuple(None if pd.isna(row[end]) else as_utc(row[end]).strftime("%Y-%m-%d")
                          for end in ("first", "last"))
    return facts


@query
def paid_rows(usage: ir.Table) -> pd.DataFrame:
    return rows(usage, paid_commitment)


def _idle(usage: ir.Table) -> ir.BooleanColumn:
    return unused_commitment(usage) | _untagged_reserved(usage)


@query
def idle_rows(usage: ir.Table) -> pd.DataFrame:
    return rows(usage, _idle)


def _jobs(usage: ir.Table) -> ir.BooleanColumn:
    """Run rows with a known state, a run id and a duration."""
    return states_known(usage) & usage.run_id.notnull() & holds(usage.period_end > usage.period_start)


def _job_counts(rows: ir.Table) -> dict[str, ir.Scalar]:
    return dict(count=rows.job.sum(), ids=rows.run_id.nunique(where=rows.job))


@query
def job_facts(usage: ir.Table) -> dict[str, bool]:
    """``jobs`` (any run row with a state and a duration) and ``repeated`` (a run id on more than one of them)."""
    row = _scalars(usage, "job_facts")
    count = int(number(row["count"]))
    return {"jobs": count > 0, "repeated": count > int(number(row["ids"]))}


def _candidates(usage: ir.Table) -> ir.BooleanColumn:
    return _jobs(usage) & ~failed(usage, FAILED_STATES)


@query
def repeat_candidates(usage: ir.Table) -> pd.DataFrame:
    """The jobs not in a failed state (the rows the duplicate-run rule compares), in source order."""
    return rows(usage, _candidates)


def _storage(usage: ir.Table) -> ir.Table:
    """Storage lines with their ``name`` (resource id, else "team / project")."""
    named = usage.resource_id.notnull() | (usage.team.notnull() & usage.project.notnull())
    lines = rows_where(usage, ~gpu(usage) & usage.run_id.isnull() & ~commitment(usage) & holds(usage.cost > 0) & named)
    return lines.mutate(name=ibis.coalesce(lines.resource_id, lines.team.concat(" / ", lines.project)))


@built
def _storage_expr(usage: ir.Table) -> ir.Table:
    lines = _storage(usage)
    return lines.group_by("name", year=lines.period_start.year(), month=lines.period_start.month()).agg(
        cost=lines.cost.sum())


@query
def storage_by_month(usage: ir.Table) -> pd.DataFrame:
    """``name``, ``month`` (a monthly pandas Period, UTC) and ``cost`` of every storage line, sorted."""
    frame = execute(_storage_expr(usage))
    months = pd.PeriodIndex.from_fields(year=frame["year"].astype(int), month=frame["month"].astype(int), freq="M")
    frame = pd.DataFrame({"name": frame["name"].astype(str), "month": months, "cost": frame["cost"].astype(float)})
    return frame.sort_values(["name", "month"], ignore_index=True)


@built
def _storage_rows_expr(usage: ir.Table, names: tuple[str, ...] | None) -> ir.Table:
    lines = _storage(usage)
    if names is not None:
        lines = lines.filter(lines.name.isin(list(names)) if names else ibis.literal(False))
    return lines.drop("name").order_by("source_row").limit(ROWS_BEHIND)


@query
def storage_rows(usage: ir.Table, names: list[str] | None = None) -> pd.DataFrame:
    """The storage lines (of ``names`` only, when given), without their name column."""
    return _utc_times(execute(_storage_rows_expr(usage, None if names is None else tuple(names))))


def _untagged_facts(rows: ir.Table) -> dict[str, ir.Scalar]:
    return dict(dollars=rows.cost.sum(where=rows.untagged_costed),
                count=rows.untagged_costed.sum(), total=rows.cost.sum())


@query
def untagged_spend(usage: ir.Table) -> dict[str, object]:
    """``cost_known``, the cost and count of rows with no team, project or run and a non-zero cost, and all cost."""
    row = _scalars(usage, "untagged_spend")
    return {"cost_known": flag(row["cost_known"]), "dollars": number(row["dollars"]),
            "count": int(number(row["count"])), "total": number(row["total"])}


def _untagged_costed(usage: ir.Table) -> ir.BooleanColumn:
    return (usage.team.isnull() & usage.project.isnull() & usage.run_id.isnull()
            & nonzero_cost(usage))


@query
def untagged_rows(usage: ir.Table) -> pd.DataFrame:
    return rows(usage, _untagged_costed)


CHECK_FACTS: dict[str, Callable[[ir.Table], dict[str, ir.Scalar]]] = {
    "failed_runs": _failed_facts, "successful_runs": _successful_facts, "idle_capacity": _idle_facts,
    "job_facts": _job_counts, "untagged_spend": _untagged_facts,
}


FLAG_TESTS: dict[str, Callable[[ir.Table], ir.BooleanColumn]] = {  # a flag: some row passes the test
    "known": states_known, "priced": nonzero_cost, "gpu": gpu, "commitment": unused_commitment,
    "paid": paid_commitment, "reserved_gpu": reserved_gpu,
    "reserved_gpu_priced": reserved_gpu_priced,
    "untagged": _untagged_reserved,
}
CHECK_FLAGS: dict[str, dict[str, str]] = {  # each check's flags: its name for one, and the flag's test
    "failed_runs": {"known": "known", "cost_known": "priced"},
    "successful_runs": {"known": "known", "cost_known": "priced"},
    "idle_capacity": {name: name for name in ("gpu", "commitment", "paid", "reserved_gpu", "reserved_gpu_priced",
                                              "untagged")},
    "untagged_spend": {"cost_known": "priced"},
}


@built
def _flags_expr(usage: ir.Table) -> ir.Table:
    """Every flag of ``FLAG_TESTS`` some row has, each from the first such row (``columns.found``)."""
    return found(usage, {name: test(usage) for name, test in FLAG_TESTS.items()})


@built
def _checks_expr(usage: ir.Table) -> ir.Table:
    """Every check's aggregates (``CHECK_FACTS``, named "check__name") in one pass, each row test computed once."""
    rows = usage.select(
        "period_start", "gpu_hours", "cost", "run_id", gpu=gpu(usage), known=states_known(usage),
        failed=_failed(usage), completed=_completed(usage),
        unused=unused_commitment(usage), paid=paid_commitment(usage), reserved_gpu=reserved_gpu(usage),
        job=_jobs(usage),
        untagged_costed=_untagged_costed(usage))
    return rows.aggregate(**{f"{check}__{name}": value for check, facts in CHECK_FACTS.items()
                             for name, value in facts(rows).items()})
