"""Plan vs actual's actual side as queries: the sums ``dashboard.retro.gap`` splits into waterfall parts, and the
GPU-hours per run or project that suggest the main run."""

from __future__ import annotations

import ibis
import ibis.expr.types as ir
import pandas as pd

from dashboard.query.columns import (
    commitment,
    failed,
    flag,
    found,
    gpu,
    holds,
    nonzero_cost,
    number,
    reserved_gpu,
    reserved_gpu_priced,
    rows_where,
    unused_commitment,
)
from dashboard.query.compiled import built, execute, query
from dashboard.query.waste import interruptions

HOURS: tuple[str, ...] = ("gpu_hours", "main_ok_gpu_hours", "main_gpu_hours", "failed_gpu_hours",
                          "experiment_gpu_hours", "unattributed_gpu_hours", "token_gpu_hours", "tokens",
                          "costless_gpu_hours", "gpu_usd", "host_usd", "commitment_usd", "unused_commitment_usd")
FLAGS: tuple[str, ...] = ("cost_known", "states_known", "reserved_gpu", "reserved_gpu_priced")


@query
def actual_sums(usage: ir.Table, main_run_ids: list[str], failed_states: tuple[str, ...]) -> dict[str, object]:
    """The GPU-hour, token and dollar sums of the actual side (``HOURS``, NULLs skipped, 0 for no rows) and the
    flags ``FLAGS``: some cost is non-zero, some GPU row of a run has a state, reserved GPU rows exist, and one of
    them has a non-zero cost. Three queries: the sums in one pass over the rows, the runs' host cost (a run with
    GPU rows owns its other rows) and the flags, each of which stops at the first row that has it."""
    row = execute(_actual_expr(usage, tuple(str(run) for run in main_run_ids), tuple(failed_states))).iloc[0]
    runs = execute(_runs_expr(usage)).iloc[0]
    flags = set(execute(_flags_expr(usage))["name"])
    sums = {name: number(row[name]) for name in HOURS if name != "host_usd"}
    return (sums | {"host_usd": number(runs["host_usd"]), "states_known": flag(runs["states_known"])}
            | {name: name in flags for name in _FLAG_TESTS})


def interruption_sums(usage: ir.Table, main_run_ids: list[str], failed_states: tuple[str, ...],
                      interval_min: float, restart_min: float) -> dict[str, float]:
    """The interrupted segments' sums (``dashboard.query.waste.interruptions``: a failed segment its run resumed
    after, or a restarted one), with ``main_run_ids``' share: what ``dashboard.retro.gap`` moves from failed work
    to the interruptions' loss and the work kept. One query over the job rows, apart from ``actual_sums`` (whose
    failed-state sums stay one pass over the rows)."""
    return interruptions(usage, interval_min, restart_min, tuple(failed_states),
                         tuple(str(run) for run in main_run_ids))


@built
def _actual_expr(usage: ir.Table, main_run_ids: tuple[str, ...], failed_states: tuple[str, ...]) -> ir.Table:
    is_gpu = gpu(usage)
    has_run = usage.run_id.notnull()
    # each row test once, in the one pass over the rows the sums below read
    rows = usage.select(
        "gpu_hours", "cost", "tokens", is_gpu=is_gpu, has_run=has_run,
        is_failed=failed(usage, failed_states) & has_run,
        main=holds(usage.run_id.isin(list(main_run_ids))) if main_run_ids else ibis.literal(False),
        commitment=commitment(usage), unused=unused_commitment(usage))
    is_gpu, main, is_failed = rows.is_gpu, rows.main, rows.is_failed
    main_ok = is_gpu & main & ~is_failed
    with_tokens = main_ok & rows.tokens.notnull()
    return rows.aggregate(
        gpu_hours=rows.gpu_hours.sum(where=is_gpu),
        main_ok_gpu_hours=rows.gpu_hours.sum(where=main_ok),
        main_gpu_hours=rows.gpu_hours.sum(where=is_gpu & main),
        failed_gpu_hours=rows.gpu_hours.sum(where=is_gpu & is_failed),
        experiment_gpu_hours=rows.gpu_hours.sum(where=is_gpu & rows.has_run & ~main & ~is_failed),
        unattributed_gpu_hours=rows.gpu_hours.sum(where=is_gpu & ~rows.has_run),
        token_gpu_hours=rows.gpu_hours.sum(where=with_tokens),
        tokens=rows.tokens.sum(where=with_tokens),
        costless_gpu_hours=rows.gpu_hours.sum(where=is_gpu & rows.cost.isnull()),
        gpu_usd=rows.cost.sum(where=is_gpu),
        commitment_usd=rows.cost.sum(where=rows.commitment),
        unused_commitment_usd=rows.cost.sum(where=rows.unused),
    )


@built
def _runs_expr(usage: ir.Table) -> ir.Table:
    """Per run, its GPU rows, its GPU rows with a state and the cost of its other rows (a run's hosts, disks and
    network); summed over the runs that have GPU rows. A grouping by run, not a test of each row against the list of
    runs (which took DuckDB 6 s more on 100M rows)."""
    rows = rows_where(usage, usage.run_id.notnull())
    is_gpu = gpu(rows)
    runs = rows.group_by("run_id").aggregate(
        gpu_rows=is_gpu.sum(), state_rows=(is_gpu & rows.run_state.notnull()).sum(),
        other_usd=rows.cost.sum(where=~is_gpu))
    return runs.aggregate(host_usd=runs.other_usd.sum(where=runs.gpu_rows > 0),
                          states_known=(runs.state_rows > 0).any())


_FLAG_TESTS = {  # a flag holds when some row passes its test
    "cost_known": nonzero_cost,
    "reserved_gpu": reserved_gpu,
    "reserved_gpu_priced": reserved_gpu_priced,
}


@built
def _flags_expr(usage: ir.Table) -> ir.Table:
    return found(usage, {name: test(usage) for name, test in _FLAG_TESTS.items()})


@built
def _by_expr(usage: ir.Table, by: str) -> ir.Table:
    rows = rows_where(usage, gpu(usage) & usage.run_id.notnull())
    return rows.group_by(key=rows[by].cast("string")).agg(gpu_hours=rows.gpu_hours.sum())


@query
def gpu_hours_by(usage: ir.Table, by: str) -> pd.DataFrame:
    """``key`` (run_id or project, as text) and ``gpu_hours`` of the GPU rows that belong to a run, sorted by key."""
    frame = execute(_by_expr(usage, by))
    frame = frame.loc[frame["key"].notna()]
    return frame.sort_values("key", ignore_index=True)


@built
def _run_ids_expr(usage: ir.Table, by: str, key: str) -> ir.Table:
    rows = rows_where(usage, gpu(usage) & usage.run_id.notnull() & holds(usage[by].cast("string") == key))
    return rows.select("run_id").distinct()


@query
def run_ids_of(usage: ir.Table, by: str, key: str) -> list[str]:
    """The run ids, sorted, of the GPU rows whose ``by`` is ``key``."""
    return sorted(str(run) for run in execute(_run_ids_expr(usage, by, key))["run_id"])
