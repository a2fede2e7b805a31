"""The waste checklist's aggregates as queries: the sums, counts and flags each check reports, the storage lines'
cost by calendar month, and the rows behind a check (``rows``, in source order). The rules are
``dashboard.retro.waste``'s."""

from __future__ import annotations

import ibis
import ibis.expr.types as ir
import pandas as pd

from dashboard.ingest.run_states import FAILED_STATES
from dashboard.query.columns import commitment, failed, flag, gpu, holds, number, reserved
from dashboard.query.compiled import execute, query
from dashboard.query.periods import as_utc


def states_known(usage: ir.Table) -> ir.BooleanColumn:
    """GPU rows with a run state."""
    return gpu(usage) & usage.run_state.notnull()


def cost_known(usage: ir.Table) -> ir.BooleanScalar:
    """Some cost is non-zero (run exports carry none and read as cost 0)."""
    return holds(usage.cost.fill_null(0.0) != 0).any()


@query
def has_cost(usage: ir.Table) -> bool:
    return flag(execute(cost_known(usage)))


def rows(usage: ir.Table, where: ir.BooleanColumn) -> pd.DataFrame:
    """The rows ``where`` holds, in source order, times as UTC timestamps."""
    return _utc_times(execute(usage.filter(where).order_by("source_row")))


def _utc_times(frame: pd.DataFrame) -> pd.DataFrame:
    for column in ("period_start", "period_end"):
        stamps = pd.to_datetime(frame[column])
        frame[column] = (stamps.dt.tz_localize("UTC") if stamps.dt.tz is None else stamps.dt.tz_convert("UTC")
                         ).dt.as_unit("ns")
    return frame


def _scalars(usage: ir.Table, **values: ir.Scalar) -> dict[str, object]:
    return execute(usage.aggregate(**values)).iloc[0].to_dict()


@query
def failed_runs(usage: ir.Table) -> dict[str, object]:
    """``known`` (any state known), ``known_h``, ``failed_h`` and ``gpu_h`` (all GPU rows), ``cost_known`` and
    ``failed_cost``."""
    known = states_known(usage)
    is_failed = known & failed(usage, FAILED_STATES)
    row = _scalars(usage, known=known.any(), known_h=usage.gpu_hours.sum(where=known),
                   failed_h=usage.gpu_hours.sum(where=is_failed), gpu_h=usage.gpu_hours.sum(where=gpu(usage)),
                   cost_known=cost_known(usage), failed_cost=usage.cost.sum(where=is_failed))
    return {name: flag(row[name]) if name in ("known", "cost_known") else number(row[name]) for name in row}


@query
def failed_by_state(usage: ir.Table) -> pd.DataFrame:
    """``run_state`` and ``gpu_hours`` of the failed rows with a known state, largest first."""
    where = usage.filter(states_known(usage) & failed(usage, FAILED_STATES))
    frame = execute(where.group_by("run_state").agg(gpu_hours=where.gpu_hours.sum()))
    return frame.sort_values("gpu_hours", ascending=False, ignore_index=True)


@query
def failed_rows(usage: ir.Table) -> pd.DataFrame:
    return rows(usage, states_known(usage) & failed(usage, FAILED_STATES))


@query
def successful_runs(usage: ir.Table) -> dict[str, object]:
    """``known``, ``cost_known``, and the cost and GPU-hours of the COMPLETED rows (``part_*``), of the rows with a
    known state (``whole_*``) and of the whole table (``total_cost``)."""
    known = states_known(usage)
    completed = known & holds(usage.run_state == "COMPLETED")
    row = _scalars(usage, known=known.any(), cost_known=cost_known(usage),
                   part_cost=usage.cost.sum(where=completed), whole_cost=usage.cost.sum(where=known),
                   part_h=usage.gpu_hours.sum(where=completed), whole_h=usage.gpu_hours.sum(where=known),
                   total_cost=usage.cost.sum())
    return {name: flag(row[name]) if name in ("known", "cost_known") else number(row[name]) for name in row}


@query
def completed_rows(usage: ir.Table) -> pd.DataFrame:
    return rows(usage, states_known(usage) & holds(usage.run_state == "COMPLETED"))


def _untagged_reserved(usage: ir.Table) -> ir.BooleanColumn:
    return reserved(usage) & gpu(usage) & usage.run_id.isnull()


@query
def idle_capacity(usage: ir.Table) -> dict[str, object]:
    """Whether commitment lines or reserved GPU rows exist, whether the commitment cost is unused capacity (not an
    actual-cost view), the commitment lines' count, cost and first and last day, and the reserved GPU rows with no
    run's GPU-hours and cost."""
    is_commitment = commitment(usage)
    reserved_gpu = reserved(usage) & gpu(usage)
    untagged = _untagged_reserved(usage)
    row = _scalars(usage, commitment=is_commitment.any(), reserved_gpu=reserved_gpu.any(),
                   reserved_gpu_priced=(reserved_gpu & holds(usage.cost.fill_null(0.0) != 0)).any(),
                   lines=is_commitment.sum(), commitment_usd=usage.cost.sum(where=is_commitment),
                   first=usage.period_start.min(where=is_commitment), last=usage.period_start.max(where=is_commitment),
                   untagged=untagged.any(), untagged_h=usage.gpu_hours.sum(where=untagged),
                   untagged_usd=usage.cost.sum(where=untagged))
    flags = ("commitment", "reserved_gpu", "reserved_gpu_priced", "untagged")
    facts = {name: flag(row[name]) for name in flags}
    facts |= {name: number(row[name]) for name in ("commitment_usd", "untagged_h", "untagged_usd")}
    facts["lines"] = int(number(row["lines"]))
    facts["days"] = tuple(None if pd.isna(row[end]) else as_utc(row[end]).strftime("%Y-%m-%d")
                          for end in ("first", "last"))
    facts["unused"] = not (facts["reserved_gpu"] and not facts["reserved_gpu_priced"])
    return facts


@query
def commitment_rows(usage: ir.Table) -> pd.DataFrame:
    return rows(usage, commitment(usage))


@query
def idle_rows(usage: ir.Table) -> pd.DataFrame:
    return rows(usage, commitment(usage) | _untagged_reserved(usage))


def _jobs(usage: ir.Table) -> ir.BooleanColumn:
    """Run rows with a known state, a run id and a duration."""
    return states_known(usage) & usage.run_id.notnull() & holds(usage.period_end > usage.period_start)


@query
def job_facts(usage: ir.Table) -> dict[str, bool]:
    """``jobs`` (any run row with a state and a duration) and ``repeated`` (a run id on more than one of them)."""
    jobs = usage.filter(_jobs(usage))
    row = _scalars(jobs, count=jobs.count(), ids=jobs.run_id.nunique())
    count = int(number(row["count"]))
    return {"jobs": count > 0, "repeated": count > int(number(row["ids"]))}


@query
def repeat_candidates(usage: ir.Table) -> pd.DataFrame:
    """The jobs not in a failed state (the rows the duplicate-run rule compares), in source order."""
    return rows(usage, _jobs(usage) & ~failed(usage, FAILED_STATES))


def _storage(usage: ir.Table) -> ir.Table:
    """Storage lines with their ``name`` (resource id, else "team / project")."""
    named = usage.resource_id.notnull() | (usage.team.notnull() & usage.project.notnull())
    lines = usage.filter(~gpu(usage) & usage.run_id.isnull() & ~commitment(usage) & holds(usage.cost > 0) & named)
    return lines.mutate(name=ibis.coalesce(lines.resource_id, lines.team.concat(" / ", lines.project)))


@query
def storage_by_month(usage: ir.Table) -> pd.DataFrame:
    """``name``, ``month`` (a monthly pandas Period, UTC) and ``cost`` of every storage line, sorted."""
    lines = _storage(usage)
    frame = execute(lines.group_by("name", year=lines.period_start.year(), month=lines.period_start.month())
                    .agg(cost=lines.cost.sum()))
    months = pd.PeriodIndex.from_fields(year=frame["year"].astype(int), month=frame["month"].astype(int), freq="M")
    frame = pd.DataFrame({"name": frame["name"].astype(str), "month": months, "cost": frame["cost"].astype(float)})
    return frame.sort_values(["name", "month"], ignore_index=True)


@query
def storage_rows(usage: ir.Table, names: list[str] | None = None) -> pd.DataFrame:
    """The storage lines (of ``names`` only, when given), without their name column."""
    lines = _storage(usage)
    if names is not None:
        lines = lines.filter(lines.name.isin(names) if names else ibis.literal(False))
    return _utc_times(execute(lines.drop("name").order_by("source_row")))


@query
def untagged_spend(usage: ir.Table) -> dict[str, object]:
    """``cost_known``, the cost and count of rows with no team, project or run and a non-zero cost, and all cost."""
    where = _untagged_costed(usage)
    row = _scalars(usage, cost_known=cost_known(usage), dollars=usage.cost.sum(where=where), count=where.sum(),
                   total=usage.cost.sum())
    return {"cost_known": flag(row["cost_known"]), "dollars": number(row["dollars"]),
            "count": int(number(row["count"])), "total": number(row["total"])}


def _untagged_costed(usage: ir.Table) -> ir.BooleanColumn:
    return (usage.team.isnull() & usage.project.isnull() & usage.run_id.isnull()
            & holds(usage.cost.fill_null(0.0) != 0))


@query
def untagged_rows(usage: ir.Table) -> pd.DataFrame:
    return rows(usage, _untagged_costed(usage))
