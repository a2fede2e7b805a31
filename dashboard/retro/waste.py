"""Waste checklist for the retrospective: failed runs, successful share, idle commitment, repeats, storage growth.

Each check is a `WasteCheck` (``id``, ``check``, ``kind``, ``figure``, ``unit``, ``usd``, ``detail``, ``rows``):
``kind`` says how to read it (``KINDS``: "waste", one-off dollars that add up to the headline; "monthly", a cost
that grows every month, shown apart; "hygiene", spend nobody can be asked about; "kpi", a share to watch, not
waste), ``figure`` is the number to show (None when the export cannot answer the check, ``detail`` then says which
export would), ``usd`` the dollars behind it (None when unknown) and ``rows`` the usage rows behind it.
``waste_summary`` adds the "waste" checks' dollars into the headline (a `WasteSummary`), each as a share of all
spend. Rules:

- Interrupted is not failed. A segment in a failed state (``FAILED_STATES``) that its run resumed after (the next
  segment of the same run id starts at or after its end, within a day, on as many GPUs), or one the scheduler
  restarted itself (REQUEUED), is an interruption: it lost the work since the last checkpoint, half a checkpoint
  interval on average (Young 1974, as the plan's rework (τ/2 + restart)/M assumes), plus the restart, on its GPUs:
  (τ/2 + restart) × GPUs GPU-hours, at most the segment's; the rest of its GPU-hours is work kept. The interval
  and restart time come from the run export where it carries them (``run_states.CHECKPOINT_COLUMNS``), else from
  the plan scenario, else the scenario defaults; the detail says which (``checkpointing``).
- Failed runs (work lost): GPU-hours in a failed state that were not an interruption, as a % of the GPU-hours
  whose state is known.
- Interrupted runs (work kept): the GPU-hours the interruptions lost, and their cost.
- Successful runs: cost of COMPLETED rows as a % of the cost of the GPU rows whose state is known (the detail
  says what share of all cost that is); a table without cost (run export) uses GPU-hours instead.
- Idle capacity: commitment nobody used, as the bill states it: the provider's unused-commitment lines (FOCUS
  ``CommitmentDiscountStatus = Unused``, Azure ``UnusedReservation`` / ``UnusedSavingsPlan``, AWS CUR fee rows at
  their unused part) or what ``amortise.amortise_commitments`` left on a purchase's line on days with no covered
  usage (``charge_kind`` "unused_commitment", ``columns.unused_commitment``), plus reserved GPU rows with no run.
  Covered usage is usage. A purchase billed on its own line at what was paid and not spread (an actual-cost view)
  does not say how much of it was used, so it is not counted. A bill with no GPU rows and no unused-commitment
  line says so. Daily billing lines cannot show nights and weekends; the load pattern does.
- Duplicate runs: among run rows (GPU-hours and a known state, not failed), a run is a repeat of an earlier one
  with the same team, project, run_id, GPU type and GPU count (GPU-hours / duration, rounded) that started at
  most ``DUPLICATE_START_WINDOW`` before it and lasted within ``DUPLICATE_DURATION_TOLERANCE`` of it. Restarts
  after a failure are not repeats (failed runs are left out); recurring jobs days apart are not either. The
  table carries no hyperparameters, so sweep members of equal shape are flagged too: these are candidates.
  Needs run ids that repeat across jobs (Slurm job names); W&B ids are unique hashes.
- Storage growth: storage lines are rows with no GPU-hours, no run, a positive cost, not a commitment line, and
  a name: their resource_id, or else their team and project (the canonical table keeps no service name, so
  other recurring named resources count too). A line whose cost per day (month cost / days in the month) grew
  by more than ``STORAGE_GROWTH_MIN`` every calendar month, over two or more months, shows no sign of a
  retention policy (a keep-last-K policy levels off). The figure is those lines' cost in their last month.
- Untagged spend: the cost of rows with no team, no project and no run (nobody to ask about it).

The four waste checks count disjoint GPU-hours: failed runs are rows in a failed state that were not interrupted,
interruptions the lost part of the others, duplicates are not failed, idle capacity is unused-commitment lines and
reserved rows with no run.

Every figure is a query (the queries in this module); the duplicate-run rule compares each job with the jobs just
before it, which is row-level, and runs here on the candidate jobs the query returns. The rows behind a check can be
left unread (``read_rows``: the page's) and read when asked (``WasteCheck.behind``, ``rows_behind``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ibis
import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.core.scenario import Scenario
from dashboard.format import count_sig, counted, number, usd_sig
from dashboard.ingest.run_states import CHECKPOINT_COLUMNS, FAILED_STATES, RESUME_WINDOW_HOURS
from dashboard.query import segments, tables
from dashboard.query.columns import (
    failed,
    found,
    gpu,
    holds,
    nonzero_cost,
    paid_commitment,
    reserved_gpu,
    reserved_gpu_priced,
    rows_where,
    storage_name,
    storage_test,
    unused_commitment,
)
from dashboard.query.columns import (
    number as as_float,
)
from dashboard.query.compiled import built, one_view, query, table_result
from dashboard.query.periods import as_utc
from dashboard.retro.join import join_usage

DUPLICATE_START_WINDOW = pd.Timedelta(hours=24)
DUPLICATE_DURATION_TOLERANCE = 0.10  # relative to the earlier run's duration
STORAGE_GROWTH_MIN = 0.05  # cost per day must grow by more than this share every month
NEEDS_STATES = "Needs run states: a Slurm sacct or W&B runs export, or pass one as `runs` to join it."


KINDS: dict[str, str] = {
    "failed_runs": "waste", "interrupted_runs": "waste", "successful_runs": "kpi", "idle_capacity": "waste",
    "duplicate_runs": "waste",
    "storage_growth": "monthly", "untagged_spend": "hygiene",
}


@dataclass(frozen=True)
class RowsBehind:
    """Which usage rows stand behind a check, to read them when asked (``rows_behind``): ``kind`` a key of
    ``BEHIND``, the checkpoint interval and restart (minutes) that mark the failed and interrupted rows, and the
    storage lines' ``names`` (None: every storage line). Data only: a page caches it with the check."""

    kind: str
    interval_min: float = 0.0
    restart_min: float = 0.0
    names: tuple[str, ...] | None = None


@dataclass(frozen=True)
class WasteCheck:
    """One check of the checklist (see the module's docstring): ``figure`` in ``unit`` (None: the export cannot
    answer it), ``usd`` the bill's amount behind it in its currency (None: unknown), ``rows`` at most
    ``ROWS_BEHIND`` usage rows behind it (None: none, or not read: ``behind`` then says which, for
    ``rows_behind``)."""

    id: str
    check: str
    kind: str
    figure: float | None
    unit: str
    usd: float | None
    detail: str
    rows: pd.DataFrame | None
    behind: RowsBehind | None = None


@dataclass(frozen=True)
class WasteItem:
    """A "waste" check in the headline: its name, its amount and that amount's share of all spend (None: no
    spend)."""

    check: str
    usd: float
    share: float | None


@dataclass(frozen=True)
class WasteSummary:
    """The headline (`waste_summary`): the waste checks' amounts added up, their share of all spend (None: no
    spend) and each check with an amount, largest first."""

    total_usd: float
    share: float | None
    items: tuple[WasteItem, ...]


def _check(
    check_id: str, check: str, figure: float | None, unit: str, detail: str, rows: pd.DataFrame | None,
    usd_value: float | None = None, behind: RowsBehind | None = None,
) -> WasteCheck:
    return WasteCheck(check_id, check, KINDS[check_id], figure, unit, usd_value, detail, rows, behind)


def _behind(check_id: str, check: str, figure: float | None, unit: str, detail: str, usage: ir.Table,
            behind: RowsBehind, read_rows: bool, usd_value: float | None = None) -> WasteCheck:
    """A check whose rows are ``behind``: read now (``read_rows``), else when asked (``rows_behind``)."""
    rows = rows_behind(usage, behind) if read_rows else None
    return _check(check_id, check, figure, unit, detail, rows, usd_value, behind)




def checkpointing(scenario: Scenario | None = None) -> dict[str, Any]:
    """The checkpoint interval and restart time (minutes) an interruption is costed with where the run export does
    not give them: the plan ``scenario``'s, else the scenario defaults; ``source`` says which."""
    if scenario is not None:
        return {"interval_min": float(scenario.checkpoint_interval_min), "restart_min": float(scenario.restart_min),
                "source": "the plan scenario"}
    fields = Scenario.model_fields
    return {"interval_min": float(fields["checkpoint_interval_min"].default),
            "restart_min": float(fields["restart_min"].default), "source": "the scenario defaults"}


def checkpointing_note(setting: dict[str, Any], count: int = 0, from_export: int = 0) -> str:
    """How each interruption is costed, and where its checkpoint interval and restart time come from."""
    given = (f"{setting['interval_min']:g} min between checkpoints and {setting['restart_min']:g} min to restart, "
             f"from {setting['source']}")
    if from_export and from_export >= count:
        given = "the checkpoint interval and restart time the run export gives"
    elif from_export:
        given = (f"the run export's checkpoint interval and restart time for {from_export:,} of them, else "
                 + given)
    return ("Each interruption loses the work since the last checkpoint, half a checkpoint interval on average "
            "(Young 1974, as the plan's rework (τ/2 + restart)/M assumes), plus the restart, on the segment's "
            f"GPUs: (τ/2 + restart) × GPUs, with {given}")


def _states_setting(checkpoint: dict[str, Any] | None) -> dict[str, Any]:
    return checkpointing() if checkpoint is None else checkpoint


def _facts_of(usage: ir.Table, sums: ir.Table | None) -> ir.Table:
    """What a check's sums read: ``sums`` (the jobs rollup read as rows) where given, else the rows ``usage``."""
    return usage if sums is None else sums


def failed_runs_check(usage: pd.DataFrame | ir.Table, checkpoint: dict[str, Any] | None = None,
                      sums: ir.Table | None = None, read_rows: bool = True) -> WasteCheck:
    """Share of GPU-hours (with a known state) spent in failed runs that never resumed: failed, work lost
    (``checkpoint``, from ``checkpointing``, costs the interruptions left out; ``sums``: what its sums read, the
    rows behind it are ``usage``'s, read now with ``read_rows``, else when asked: ``WasteCheck.behind``)."""
    usage = tables.table_of(usage)
    summed = _facts_of(usage, sums)
    facts = failed_runs(summed)
    if not facts.known:
        return _check("failed_runs", "Failed runs", None, "% of GPU-hours", NEEDS_STATES, None)
    setting = _states_setting(checkpoint)
    tau, restart = setting["interval_min"], setting["restart_min"]
    interrupted = interruptions(summed, tau, restart)
    known_h, gpu_h = facts.known_gpu_hours, facts.gpu_hours
    failed_h = facts.failed_gpu_hours - interrupted.failed_gpu_hours
    by_state = failed_by_state(summed)
    resumed = interrupted_by_state(summed, tau, restart)
    lost_by_state = dict(by_state.itertuples(index=False))
    for state, hours, in_failed, _ in resumed.itertuples(index=False):
        if in_failed and state in lost_by_state:
            lost_by_state[state] -= hours
    scale = max(known_h, 1.0)
    lost = sorted(((state, hours) for state, hours in lost_by_state.items() if hours > 1e-9 * scale),
                  key=lambda item: (-round(item[1] / scale, 9), item[0]))  # largest first, ties (to 1e-9) by name
    detail = (f"{count_sig(failed_h)} of {count_sig(known_h)} GPU-hours in runs that failed and never resumed "
              "(work lost)")
    if lost:
        detail += " (" + ", ".join(f"{state} {count_sig(h)}" for state, h in lost) + ")"
    if interrupted.count:
        detail += (f"; {count_sig(interrupted.failed_gpu_hours)} more in a failed state resumed from a checkpoint: "
                   "see Interrupted runs")
    if known_h < gpu_h:
        detail += f"; states known for {number(known_h / gpu_h, 'fraction')} of all GPU-hours"
    cost = facts.failed_cost - interrupted.failed_cost if facts.cost_known else None
    return _behind("failed_runs", "Failed runs", 100.0 * failed_h / known_h, "% of GPU-hours", detail + ".",
                   usage, RowsBehind("failed", tau, restart), read_rows, cost)


def interrupted_runs_check(usage: pd.DataFrame | ir.Table, checkpoint: dict[str, Any] | None = None,
                           sums: ir.Table | None = None, read_rows: bool = True) -> WasteCheck:
    """GPU-hours lost to interruptions of runs that resumed from a checkpoint: interrupted, work kept (module
    docstring; ``checkpoint`` from ``checkpointing``; ``sums`` and ``read_rows`` as for ``failed_runs_check``)."""
    usage = tables.table_of(usage)
    summed = _facts_of(usage, sums)
    facts = failed_runs(summed)
    if not facts.known:
        return _check("interrupted_runs", "Interrupted runs", None, "GPU-hours", NEEDS_STATES, None)
    setting = _states_setting(checkpoint)
    tau, restart = setting["interval_min"], setting["restart_min"]
    found = interruptions(summed, tau, restart)
    count = found.count
    behind = RowsBehind("interrupted", tau, restart)
    how = checkpointing_note(setting, count, found.from_export)
    if not count:
        detail = (f"No run resumed after an interruption (the same run id continuing within "
                  f"{RESUME_WINDOW_HOURS:g} h of a failed segment's end on as many GPUs, or a REQUEUED record). "
                  f"{how}.")
        return _behind("interrupted_runs", "Interrupted runs", 0.0, "GPU-hours", detail, usage, behind, read_rows,
                       0.0 if facts.cost_known else None)
    by_state = interrupted_by_state(summed, tau, restart)
    states = ", ".join(f"{state} {int(n)}" for state, _, _, n in by_state.itertuples(index=False))
    segment_h = float(by_state["gpu_hours"].sum())
    detail = (f"{count:,} interruption{'s' if count != 1 else ''} of runs that resumed from a checkpoint ({states}): "
              f"{count_sig(found.lost_gpu_hours)} GPU-hours lost of the segments' {count_sig(segment_h)}, the rest is "
              f"work kept. {how}.")
    cost = found.lost_cost if facts.cost_known else None
    return _behind("interrupted_runs", "Interrupted runs", found.lost_gpu_hours, "GPU-hours", detail, usage, behind,
                   read_rows, cost)


def successful_runs_check(usage: pd.DataFrame | ir.Table, sums: ir.Table | None = None,
                          read_rows: bool = True) -> WasteCheck:
    """Cost of COMPLETED runs as a share of the cost of runs with a known state (GPU-hours without cost);
    ``read_rows`` as for ``failed_runs_check``."""
    usage = tables.table_of(usage)
    facts = successful_runs(_facts_of(usage, sums))
    if not facts.known:
        return _check("successful_runs", "Successful runs", None, "% of cost", NEEDS_STATES, None)
    if facts.cost_known:
        part, whole = facts.completed_cost, facts.known_cost
        unit, total = "% of cost", facts.total_cost
        what = f"{usd_sig(part)} of the {usd_sig(whole)} spent on runs with a known state"
        if total > 0:
            what += f" ({number(whole / total, 'fraction')} of all cost in the table)"
    else:
        part, whole = facts.completed_gpu_hours, facts.known_gpu_hours
        unit, what = "% of GPU-hours", f"{count_sig(part)} of {count_sig(whole)} GPU-hours (the table carries no cost)"
    figure = 100.0 * part / whole if whole > 0 else None
    return _behind("successful_runs", "Successful runs", figure, unit, f"Runs that completed: {what}.", usage,
                   RowsBehind("completed"), read_rows)


def idle_capacity_check(usage: pd.DataFrame | ir.Table, sums: ir.Table | None = None,
                        read_rows: bool = True) -> WasteCheck:
    """Commitment nobody used as the bill states it, plus reserved GPU-hours no run claims (USD); ``read_rows`` as
    for ``failed_runs_check``."""
    usage = tables.table_of(usage)
    facts = idle_capacity(_facts_of(usage, sums))
    paid = (f"Commitment purchases ({usd_sig(facts.paid_cost)}) are billed on their own lines at what was paid"
            if facts.paid else "")
    if not (facts.gpu or facts.commitment):
        detail = "No GPU usage in this bill" + (f". {paid}; they cover no GPU-hours in it." if paid else ".")
        return _check("idle_capacity", "Idle capacity", None, "USD", detail, None)
    if not (facts.commitment or facts.reserved_gpu or facts.paid):
        return _check("idle_capacity", "Idle capacity", None, "USD", (
            "No reserved or committed capacity in this table. A billing export with commitment lines (FOCUS "
            "CommitmentDiscountStatus, AWS savings-plan fees, GCP commitment fees, Azure reservations) answers it."
        ), None)
    if not facts.commitment and facts.paid:
        return _behind("idle_capacity", "Idle capacity", None, "USD", (
            f"{paid} (an actual-cost view), so the unused part cannot be separated. The amortised view (FOCUS "
            "EffectiveCost, Azure amortized cost, AWS CUR) answers it."
        ), usage, RowsBehind("paid"), read_rows)
    unused_usd, untagged_usd = facts.unused_cost, facts.untagged_cost
    if facts.commitment:
        detail = (f"{usd_sig(unused_usd)} of commitment nobody used ({facts.unused_lines} unused-commitment lines, "
                  f"{facts.first_day} to {facts.last_day})")
    else:
        detail = "No unused-commitment line in this bill"
    if facts.untagged:
        detail += (f"; {count_sig(facts.untagged_gpu_hours)} reserved GPU-hours "
                   f"({usd_sig(untagged_usd)}) used with no run")
    detail += ". Daily billing lines cannot show nights and weekends: see the load pattern."
    total = unused_usd + untagged_usd
    return _behind("idle_capacity", "Idle capacity", total, "USD", detail, usage, RowsBehind("idle"), read_rows,
                   total)


def duplicate_runs_check(usage: pd.DataFrame | ir.Table, sums: ir.Table | None = None) -> WasteCheck:
    """GPU-hours of runs that repeat an earlier run of the same shape (see the module docstring); the jobs it
    compares are rows (their start times), read only when some run id repeats."""
    usage = tables.table_of(usage)
    facts = job_facts(_facts_of(usage, sums))
    if not facts.jobs:
        return _check("duplicate_runs", "Duplicate runs", None, "GPU-hours",
                      "Needs a run export with job start and end times (Slurm sacct or W&B).", None)
    if not facts.repeated:
        return _check("duplicate_runs", "Duplicate runs", None, "GPU-hours", (
            "No run id occurs on more than one job, so repeats cannot be recognised (W&B ids are unique hashes). "
            "A Slurm sacct export, where run_id is the job name, answers it."
        ), None)
    runs = repeat_candidates(usage)
    hours = ((runs["period_end"] - runs["period_start"]).dt.total_seconds() / 3600.0).to_numpy(dtype=float)
    keys = pd.DataFrame({column: runs[column].astype("string").fillna("") for column in
                         ("team", "project", "run_id", "gpu_type")})
    keys["gpus"] = np.rint(runs["gpu_hours"].to_numpy(dtype=float) / hours)
    group = keys.groupby(list(keys.columns), sort=False).ngroup().to_numpy()
    start_ns = runs["period_start"].dt.as_unit("ns").array.asi8
    order = np.lexsort((start_ns, group))
    group, start_ns, hours = group[order], start_ns[order], hours[order]
    earlier = np.full(len(order), -1)
    window_ns = DUPLICATE_START_WINDOW.value
    for offset in range(1, len(order)):  # sorted by group then start: the window ends at the first miss
        same = (group[offset:] == group[:-offset]) & (start_ns[offset:] - start_ns[:-offset] <= window_ns)
        if not same.any():
            break
        alike = same & (np.abs(hours[offset:] - hours[:-offset]) <= DUPLICATE_DURATION_TOLERANCE * hours[:-offset])
        later = np.flatnonzero(alike & (earlier[offset:] < 0)) + offset
        earlier[later] = later - offset
    repeats = np.flatnonzero(earlier >= 0)
    rows = runs.iloc[order[repeats]].copy()
    rows["duplicate_of"] = pd.array(runs["resource_id"].to_numpy(dtype=object)[order[earlier[repeats]]],
                                    dtype="string")
    repeat_h = float(rows["gpu_hours"].sum())
    verb = "repeats" if len(rows) == 1 else "repeat"
    detail = (f"{counted(len(rows), 'run')} {verb} an earlier run of the same name, GPU count and duration (within "
              f"{number(DUPLICATE_DURATION_TOLERANCE, 'fraction')}) started less than a day before: "
              f"{count_sig(repeat_h)} GPU-hours. "
              "Sweep members of equal shape are flagged too (the table has no hyperparameters).")
    cost = float(rows["cost"].sum()) if has_cost(_facts_of(usage, sums)) else None
    return _check("duplicate_runs", "Duplicate runs", repeat_h, "GPU-hours", detail, rows, cost)


def storage_growth_check(usage: pd.DataFrame | ir.Table, lines: ir.Table | None = None,
                         read_rows: bool = True) -> WasteCheck:
    """Storage lines whose cost grew every month (no sign of a retention policy); figure in USD/month. ``lines``:
    the storage rollup of ``usage`` read as rows, which the lines' monthly cost reads in place of the rows (the same
    sums, to the cent); ``read_rows`` as for ``failed_runs_check``."""
    usage = tables.table_of(usage)
    monthly = storage_by_month(usage if lines is None else lines)
    if monthly.empty:
        return _check("storage_growth", "Storage growth", None, "USD/month", (
            "No storage lines: a billing export with storage lines (bucket resource ids, or team and project tags) "
            "answers it."
        ), None)
    if monthly["month"].nunique() < 2:
        return _behind("storage_growth", "Storage growth", None, "USD/month",
                       "Storage lines cover one month only; an export of two or more months answers it.", usage,
                       RowsBehind("storage"), read_rows)
    growing = _growing(monthly)
    last_usd = float(sum(costs[-1] for _, costs in growing))
    if growing:
        detail = "; ".join(
            f"{line}: " + " → ".join(usd_sig(value) for value in costs) + " a month" for line, costs in growing
        ) + ". Growing every month: no sign of a retention policy."
    else:
        detail = f"No storage line grew every month ({monthly['name'].nunique()} lines checked)."
    behind = RowsBehind("storage", names=tuple(str(line) for line, _ in growing))
    return _behind("storage_growth", "Storage growth", last_usd, "USD/month", detail, usage, behind, read_rows,
                   last_usd)


def _growing(monthly: pd.DataFrame) -> list[tuple[str, np.ndarray]]:
    """The lines of ``monthly`` (``storage_by_month``: sorted by name and month) whose cost per day grew by more than
    ``STORAGE_GROWTH_MIN`` from each of their months to the next, over two or more, with their monthly costs, by
    name: one pass over the arrays (a loop over the lines took up to 2 s for 486 on a loaded machine)."""
    names = monthly["name"].to_numpy(dtype=object)
    costs = monthly["cost"].to_numpy(dtype=float)
    per_day = costs / pd.PeriodIndex(monthly["month"]).days_in_month.to_numpy()
    first = np.r_[True, names[1:] != names[:-1]]  # a line's first month
    grew = np.r_[False, per_day[1:] > per_day[:-1] * (1 + STORAGE_GROWTH_MIN)]
    line = np.cumsum(first) - 1
    months = np.bincount(line)
    kept = np.flatnonzero((np.bincount(line, weights=~(grew | first)) == 0) & (months >= 2))
    starts = np.flatnonzero(first)
    return [(str(names[starts[at]]), costs[starts[at]:starts[at] + months[at]]) for at in kept]


def untagged_spend_check(usage: pd.DataFrame | ir.Table, sums: ir.Table | None = None,
                         read_rows: bool = True) -> WasteCheck:
    """Cost of rows with no team, project or run: a tagging finding with its dollars; ``read_rows`` as for
    ``failed_runs_check``."""
    usage = tables.table_of(usage)
    facts = untagged_spend(_facts_of(usage, sums))
    if not facts.cost_known:
        return _check("untagged_spend", "Untagged spend", None, "USD",
                      "Needs a billing export: a run export carries no prices.", None)
    dollars, total = facts.untagged_cost, facts.total_cost
    share = f" ({number(dollars / total, 'fraction')} of spend)" if total > 0 else ""
    detail = (f"{usd_sig(dollars)} on {facts.untagged_row_count:,} rows with no team, project or run tag{share}: "
              "support, tax, credits and fees are usually untagged; GPU or storage rows here have no owner to ask.")
    return _behind("untagged_spend", "Untagged spend", dollars, "USD", detail, usage, RowsBehind("untagged"),
                   read_rows, dollars)


def waste_summary(checklist: list[WasteCheck], total_cost: float) -> WasteSummary:
    """The headline: the "waste" checks with an amount, largest first, each with its share of ``total_cost`` (a
    check that found nothing, $0, is not an item); storage growth (monthly), untagged spend (hygiene) and the
    successful-run share (a KPI) are not in it."""
    share = (lambda value: value / total_cost) if total_cost > 0 else (lambda value: None)
    items = sorted((WasteItem(check.check, float(check.usd), share(float(check.usd)))
                    for check in checklist if check.kind == "waste" and check.usd),
                   key=lambda item: -item.usd)
    total = float(sum(item.usd for item in items))
    return WasteSummary(total, share(total), tuple(items))


def waste_checklist(usage: pd.DataFrame | ir.Table, runs: pd.DataFrame | ir.Table | None = None,
                    scenario: Scenario | None = None, sums: ir.Table | None = None, storage: ir.Table | None = None,
                    read_rows: bool = True) -> list[WasteCheck]:
    """The seven checks in order. ``runs`` (a run export) is joined to ``usage`` (a query) on run_id for the checks
    that need run states (failed, interrupted, successful, duplicates); idle capacity and storage always read
    ``usage``. The plan ``scenario`` gives the checkpoint interval and restart time the run export does not
    (``checkpointing``; the scenario defaults without one).
    The rows behind each figure are ``ROWS_BEHIND`` of them, in source order. ``sums``: the jobs rollup of
    ``usage`` read as rows (``dashboard.workspace.rollup_rows``; never with ``runs``), which the checks' sums read in
    place of the rows: the same figures, to the cent; the rows behind them and the duplicate-run rule's jobs are
    still read from ``usage``. ``storage``: the storage rollup of ``usage`` read as rows, which the storage lines'
    monthly cost reads in place of the rows (``storage_growth_check``). Without ``read_rows`` the rows behind the
    checks are not read: each check's ``behind`` says which they are, for ``rows_behind`` to read when asked (the
    duplicate runs found are the figure's own rows, always kept)."""
    usage = tables.table_of(usage)
    with_states = usage if runs is None else join_usage(usage, tables.table_of(runs, ibis.get_backend(usage)),
                                                        on="run_id")[0]
    setting = checkpointing(scenario)
    with one_view():  # the checks' aggregates are one query, run once
        return [
            failed_runs_check(with_states, setting, sums, read_rows),
            interrupted_runs_check(with_states, setting, sums, read_rows),
            successful_runs_check(with_states, sums, read_rows),
            idle_capacity_check(usage, sums, read_rows),
            duplicate_runs_check(with_states, sums),
            storage_growth_check(usage, storage, read_rows),
            untagged_spend_check(usage, sums, read_rows),
        ]


def states_known(usage: ir.Table) -> ir.BooleanColumn:
    """GPU rows with a run state."""
    return gpu(usage) & usage.run_state.notnull()


@built
def _cost_known_expr(usage: ir.Table) -> ir.Table:
    return found(usage, {"priced": nonzero_cost(usage)})


@query
def has_cost(usage: ir.Table) -> bool:
    """Some cost is non-zero (run exports carry none and read as cost 0)."""
    return len(table_result(_cost_known_expr(usage))) > 0


# The rows behind a waste figure: the first this many the engine finds (in the rows' stored order; all of them when
# fewer), shown in source order: the scan stops there, so a drill-down over 10^8 rows reads a few row groups
ROWS_BEHIND = 10_000


@built
def _rows_expr(usage: ir.Table, where: Callable[[ir.Table], ir.BooleanColumn], found_first: bool) -> ir.Table:
    found = rows_where(usage, where(usage))
    if found_first:
        return found.limit(ROWS_BEHIND).order_by("source_row")
    return found.order_by("source_row").limit(ROWS_BEHIND)


def rows(usage: ir.Table, where: Callable[[ir.Table], ir.BooleanColumn], found_first: bool = True) -> pd.DataFrame:
    """The rows for which the test ``where`` (a function of the table) holds (``ROWS_BEHIND`` of them; with
    ``found_first`` false, the first in source order, which reads every one), in source order, times as UTC
    timestamps."""
    return _utc_times(table_result(_rows_expr(usage, where, found_first)))


def _utc_times(frame: pd.DataFrame) -> pd.DataFrame:
    for column in ("period_start", "period_end"):
        stamps = pd.to_datetime(frame[column])
        frame[column] = (stamps.dt.tz_localize("UTC") if stamps.dt.tz is None else stamps.dt.tz_convert("UTC")
                         ).dt.as_unit("ns")
    return frame


def _sums(usage: ir.Table, check: str) -> pd.Series:
    """The aggregates of ``check`` (a key of ``CHECK_FACTS``) by name, from the one query of every check's aggregates
    (``_checks_expr``): a tab's checks read the rows once (see ``compiled.one_view``)."""
    row = table_result(_checks_expr(usage)).iloc[0]
    prefix = f"{check}__"
    return row[[name for name in row.index if name.startswith(prefix)]].rename(lambda name: name.removeprefix(prefix))


def _flags(usage: ir.Table) -> frozenset[str]:
    """The names of the flags (``FLAG_TESTS``) some row has, from their one query (``_flags_expr``)."""
    return frozenset(table_result(_flags_expr(usage))["name"])


def _failed(usage: ir.Table) -> ir.BooleanColumn:
    return states_known(usage) & failed(usage, FAILED_STATES)


def _failed_facts(rows: ir.Table) -> dict[str, ir.Scalar]:
    return dict(known_h=rows.gpu_hours.sum(where=rows.known), failed_h=rows.gpu_hours.sum(where=rows.failed),
                gpu_h=rows.gpu_hours.sum(where=rows.gpu), failed_cost=rows.cost.sum(where=rows.failed))


@dataclass(frozen=True)
class FailedFacts:
    """`failed_runs`: whether any GPU row has a state (``known``) and any row a non-zero cost (``cost_known``); the
    GPU-hours with a known state, in a failed state and of all GPU rows, and the failed rows' cost."""

    known: bool
    cost_known: bool
    known_gpu_hours: float
    failed_gpu_hours: float
    gpu_hours: float
    failed_cost: float


@query
def failed_runs(usage: ir.Table) -> FailedFacts:
    """The GPU-hours in a failed state (interruptions included) against those with a known state."""
    row, flags = _sums(usage, "failed_runs"), _flags(usage)
    return FailedFacts("known" in flags, "priced" in flags, as_float(row["known_h"]), as_float(row["failed_h"]),
                       as_float(row["gpu_h"]), as_float(row["failed_cost"]))


@built
def _by_state_expr(usage: ir.Table) -> ir.Table:
    where = rows_where(usage, _failed(usage))
    return where.group_by("run_state").agg(gpu_hours=where.gpu_hours.sum())


@query
def failed_by_state(usage: ir.Table) -> pd.DataFrame:
    """``run_state`` and ``gpu_hours`` of the failed rows with a known state, largest first."""
    frame = table_result(_by_state_expr(usage))
    return frame.sort_values("gpu_hours", ascending=False, ignore_index=True)


@query
def failed_rows(usage: ir.Table, interval_min: float | None = None, restart_min: float | None = None) -> pd.DataFrame:
    """The failed rows with a known state; with a checkpoint interval and restart time, only those of failed work
    lost (the interrupted segments, ``marked``, left out)."""
    if interval_min is None or restart_min is None:
        return rows(usage, _failed)
    return _utc_times(table_result(_lost_rows_expr(usage, FAILED_STATES, float(interval_min), float(restart_min))))


MARKS: tuple[str, ...] = ("in_failed", "interrupted", "lost_share", "from_export")


def marked(usage: ir.Table, failed_states: tuple[str, ...], interval_min: float, restart_min: float) -> ir.Table:
    """``usage`` with the interruption marks (``MARKS``): ``in_failed`` (a state of ``failed_states``),
    ``interrupted`` (a job row, ``_jobs``, in a failed state whose run resumed after it, or a restarted segment:
    ``dashboard.ingest.run_states``), ``lost_share`` (of an interrupted row's GPU-hours, the work lost: (τ/2 +
    restart) / its duration, at most 1; else 0) and ``from_export`` (an interrupted row whose checkpoint interval or
    restart time the run export gives, ``CHECKPOINT_COLUMNS``; ``interval_min`` and ``restart_min`` fill the rest).
    The next segment of a run is found by a window over the job rows of each run id, ordered by start (then source
    row); read over the job rows alone (``rows_where(usage, _jobs(usage))``) it sorts only those. A jobs rollup read
    as rows carries a segment's duration and whether its run resumed (``dashboard.query.segments``): no window,
    and the same marks for any failed states, interval and restart."""
    job = _jobs(usage)
    hours = segments.hours(usage, job)
    in_failed = failed(usage, failed_states)
    resumed = segments.resumed(usage, job, hours)
    interrupted = job & ((in_failed & resumed) | segments.restarted(usage))
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


def row_count(rows: ir.Table, where: ir.BooleanValue | None = None) -> ir.IntegerScalar:
    """How many usage rows ``rows`` holds (``where`` holds on): its rows, or a rollup read as rows' ``rows`` (the
    jobs rollup keeps them: ``rollup_rows.as_rows``)."""
    if "rows" not in rows.columns:
        return rows.count() if where is None else where.sum()
    return rows["rows"].sum() if where is None else ibis.ifelse(where, rows["rows"], 0).sum()


@built
def _lost_rows_expr(usage: ir.Table, failed_states: tuple[str, ...], interval_min: float,
                    restart_min: float) -> ir.Table:
    jobs = marked(rows_where(usage, _jobs(usage)), failed_states, interval_min, restart_min)  # sorts the jobs only
    jobs = jobs.filter(jobs.in_failed & ~jobs.interrupted).drop(*MARKS)
    others = rows_where(usage, states_known(usage) & failed(usage, failed_states) & ~_jobs(usage))
    return ibis.union(jobs, others, distinct=False).order_by("source_row").limit(ROWS_BEHIND)


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
    return _utc_times(table_result(_interrupted_rows_expr(usage, tuple(failed_states), float(interval_min),
                                                     float(restart_min))))


@dataclass(frozen=True)
class InterruptionSums:
    """`interruptions`: the interrupted rows' ``count``, how many take their checkpoint interval or restart from the
    run export (``from_export``), the GPU-hours and cost of those in a failed state (``failed_*``: what the
    failed-state sums count as failed), the GPU-hours and cost lost (``lost_*``), and of the main run's rows the
    same GPU-hours (``main_failed_gpu_hours``, ``main_lost_gpu_hours``) and, of those with tokens, the GPU-hours
    and tokens (``main_token_*_gpu_hours``, ``main_*_tokens``)."""

    count: int
    from_export: int
    failed_gpu_hours: float
    failed_cost: float
    lost_gpu_hours: float
    lost_cost: float
    main_failed_gpu_hours: float
    main_lost_gpu_hours: float
    main_token_failed_gpu_hours: float
    main_token_lost_gpu_hours: float
    main_failed_tokens: float
    main_lost_tokens: float


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
        count=row_count(rows), from_export=row_count(rows, rows.from_export),
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
                                          count=row_count(rows))


@query
def interruptions(usage: ir.Table, interval_min: float, restart_min: float,
                  failed_states: tuple[str, ...] = FAILED_STATES, main_run_ids: tuple[str, ...] = ()
                  ) -> InterruptionSums:
    """Sums over the interrupted rows (``marked``, ``InterruptionSums``), with the share of ``main_run_ids``. One
    query over the job rows only (0 for none)."""
    row = table_result(_interruptions_expr(usage, tuple(failed_states), float(interval_min), float(restart_min),
                                      tuple(str(run) for run in main_run_ids))).iloc[0]
    return InterruptionSums(
        count=int(as_float(row["count"])), from_export=int(as_float(row["from_export"])),
        failed_gpu_hours=as_float(row["failed_h"]), failed_cost=as_float(row["failed_cost"]),
        lost_gpu_hours=as_float(row["lost_h"]), lost_cost=as_float(row["lost_cost"]),
        main_failed_gpu_hours=as_float(row["main_failed_h"]), main_lost_gpu_hours=as_float(row["main_lost_h"]),
        main_token_failed_gpu_hours=as_float(row["main_token_failed_h"]),
        main_token_lost_gpu_hours=as_float(row["main_token_lost_h"]),
        main_failed_tokens=as_float(row["main_failed_tokens"]), main_lost_tokens=as_float(row["main_lost_tokens"]))


@query
def interrupted_by_state(usage: ir.Table, interval_min: float, restart_min: float,
                         failed_states: tuple[str, ...] = FAILED_STATES) -> pd.DataFrame:
    """``run_state``, ``gpu_hours``, ``in_failed`` (a state of ``failed_states``) and ``count`` of the interrupted
    rows, by state, sorted by state."""
    frame = table_result(_interrupted_by_state_expr(usage, tuple(failed_states), float(interval_min),
                                               float(restart_min)))
    return frame.sort_values("run_state", ignore_index=True)


def _completed(usage: ir.Table) -> ir.BooleanColumn:
    return states_known(usage) & holds(usage.run_state == "COMPLETED")


def _successful_facts(rows: ir.Table) -> dict[str, ir.Scalar]:
    return dict(part_cost=rows.cost.sum(where=rows.completed), whole_cost=rows.cost.sum(where=rows.known),
                part_h=rows.gpu_hours.sum(where=rows.completed), whole_h=rows.gpu_hours.sum(where=rows.known),
                total_cost=rows.cost.sum())


@dataclass(frozen=True)
class SuccessfulFacts:
    """`successful_runs`: whether any GPU row has a state (``known``) and any row a non-zero cost (``cost_known``);
    the cost and GPU-hours of the COMPLETED rows, of the rows with a known state, and the whole table's cost."""

    known: bool
    cost_known: bool
    completed_cost: float
    known_cost: float
    completed_gpu_hours: float
    known_gpu_hours: float
    total_cost: float


@query
def successful_runs(usage: ir.Table) -> SuccessfulFacts:
    """The COMPLETED rows' cost and GPU-hours against those of the rows with a known state."""
    row, flags = _sums(usage, "successful_runs"), _flags(usage)
    return SuccessfulFacts("known" in flags, "priced" in flags, as_float(row["part_cost"]),
                           as_float(row["whole_cost"]), as_float(row["part_h"]), as_float(row["whole_h"]),
                           as_float(row["total_cost"]))


@query
def completed_rows(usage: ir.Table) -> pd.DataFrame:
    return rows(usage, _completed)


def _untagged_reserved(usage: ir.Table) -> ir.BooleanColumn:
    return reserved_gpu(usage) & usage.run_id.isnull()


def _idle_facts(rows: ir.Table) -> dict[str, ir.Scalar]:
    untagged = rows.reserved_gpu & rows.run_id.isnull()  # _untagged_reserved
    last_start = rows.last_start if "last_start" in rows.columns else rows.period_start  # a jobs rollup's
    return dict(lines=row_count(rows, rows.unused), commitment_usd=rows.cost.sum(where=rows.unused),
                first=rows.period_start.min(where=rows.unused),
                last=last_start.max(where=rows.unused),
                paid_usd=rows.cost.sum(where=rows.paid),
                untagged_h=rows.gpu_hours.sum(where=untagged),
                untagged_usd=rows.cost.sum(where=untagged))


@dataclass(frozen=True)
class IdleFacts:
    """`idle_capacity`: whether there is any GPU row (``gpu``), unused-commitment line (``commitment``), commitment
    paid on its own line (``paid``), reserved GPU row, priced one, and reserved GPU row with no run (``untagged``);
    the unused lines' count, cost (in the bill's currency) and first and last day ("2025-04-01", None without one),
    the paid lines' cost, and the untagged reserved GPU rows' GPU-hours and cost."""

    gpu: bool
    commitment: bool
    paid: bool
    reserved_gpu: bool
    reserved_gpu_priced: bool
    untagged: bool
    unused_lines: int
    unused_cost: float
    first_day: str | None
    last_day: str | None
    paid_cost: float
    untagged_gpu_hours: float
    untagged_cost: float


@query
def idle_capacity(usage: ir.Table) -> IdleFacts:
    """Commitment nobody used as the bill states it, and reserved GPU rows with no run."""
    row, flags = _sums(usage, "idle_capacity"), _flags(usage)
    first_day, last_day = (None if pd.isna(row[end]) else as_utc(row[end]).strftime("%Y-%m-%d")
                           for end in ("first", "last"))
    return IdleFacts(
        gpu="gpu" in flags, commitment="commitment" in flags, paid="paid" in flags,
        reserved_gpu="reserved_gpu" in flags, reserved_gpu_priced="reserved_gpu_priced" in flags,
        untagged="untagged" in flags, unused_lines=int(as_float(row["lines"])),
        unused_cost=as_float(row["commitment_usd"]), first_day=first_day, last_day=last_day,
        paid_cost=as_float(row["paid_usd"]), untagged_gpu_hours=as_float(row["untagged_h"]),
        untagged_cost=as_float(row["untagged_usd"]))


@query
def paid_rows(usage: ir.Table) -> pd.DataFrame:
    return rows(usage, paid_commitment)


def _idle(usage: ir.Table) -> ir.BooleanColumn:
    return unused_commitment(usage) | _untagged_reserved(usage)


@query
def idle_rows(usage: ir.Table) -> pd.DataFrame:
    return rows(usage, _idle)


def _jobs(usage: ir.Table) -> ir.BooleanColumn:
    """Run rows with a known state, a run id and a duration (``segments.job``)."""
    return segments.job(usage)


def _job_counts(rows: ir.Table) -> dict[str, ir.Scalar]:
    return dict(count=row_count(rows, rows.job), ids=rows.run_id.nunique(where=rows.job))


@dataclass(frozen=True)
class JobFacts:
    """`job_facts`: whether there is any run row with a state and a duration (``jobs``) and a run id on more than one
    of them (``repeated``)."""

    jobs: bool
    repeated: bool


@query
def job_facts(usage: ir.Table) -> JobFacts:
    """Whether the duplicate-run rule has jobs to compare, and repeated run ids to compare them by."""
    row = _sums(usage, "job_facts")
    count = int(as_float(row["count"]))
    return JobFacts(count > 0, count > int(as_float(row["ids"])))


def _candidates(usage: ir.Table) -> ir.BooleanColumn:
    return _jobs(usage) & ~failed(usage, FAILED_STATES)


@query
def repeat_candidates(usage: ir.Table) -> pd.DataFrame:
    """The jobs not in a failed state (the rows the duplicate-run rule compares), the first ``ROWS_BEHIND`` in source
    order."""
    return rows(usage, _candidates, found_first=False)


STORAGE_GRAIN = ("storage_line",)  # the storage rollup's column: a storage line's name (``columns.storage_name``)


def _storage(usage: ir.Table) -> ir.Table:
    """Storage lines with their ``name`` (resource id, else "team / project"): the rows', or those of the storage
    rollup read as rows (``rollup_rows.as_rows``: a line's cost of a month)."""
    if STORAGE_GRAIN[0] in usage.columns:
        lines = usage.filter(usage[STORAGE_GRAIN[0]].notnull())
        return lines.mutate(name=lines[STORAGE_GRAIN[0]])
    lines = rows_where(usage, storage_test(usage))
    return lines.mutate(name=storage_name(lines))


@built
def _storage_expr(usage: ir.Table) -> ir.Table:
    lines = _storage(usage)
    return lines.group_by("name", year=lines.period_start.year(), month=lines.period_start.month()).agg(
        cost=lines.cost.sum())


@query
def storage_by_month(usage: ir.Table) -> pd.DataFrame:
    """``name``, ``month`` (a monthly pandas Period, UTC) and ``cost`` of every storage line, sorted: of the rows, or
    of the storage rollup read as rows."""
    frame = table_result(_storage_expr(usage))
    months = pd.PeriodIndex.from_fields(year=frame["year"].astype(int), month=frame["month"].astype(int), freq="M")
    frame = pd.DataFrame({"name": frame["name"].astype(str), "month": months, "cost": frame["cost"].astype(float)})
    return frame.sort_values(["name", "month"], ignore_index=True)


@built
def _storage_rows_expr(usage: ir.Table, names: tuple[str, ...] | None) -> ir.Table:
    lines = _storage(usage)  # the rows'
    if names is not None:
        lines = lines.filter(lines.name.isin(list(names)) if names else ibis.literal(False))
    return lines.drop("name").limit(ROWS_BEHIND).order_by("source_row")  # as ``rows``: the first found


@query
def storage_rows(usage: ir.Table, names: list[str] | None = None) -> pd.DataFrame:
    """The storage lines (of ``names`` only, when given), without their name column."""
    return _utc_times(table_result(_storage_rows_expr(usage, None if names is None else tuple(names))))


def _untagged_facts(rows: ir.Table) -> dict[str, ir.Scalar]:
    return dict(dollars=rows.cost.sum(where=rows.untagged_costed),
                count=row_count(rows, rows.untagged_costed), total=rows.cost.sum())


@dataclass(frozen=True)
class UntaggedFacts:
    """`untagged_spend`: whether any row has a non-zero cost (``cost_known``), the cost and count of the rows with no
    team, project or run and a non-zero cost, and the whole table's cost."""

    cost_known: bool
    untagged_cost: float
    untagged_row_count: int
    total_cost: float


@query
def untagged_spend(usage: ir.Table) -> UntaggedFacts:
    """The spend nobody can be asked about, against all spend."""
    row = _sums(usage, "untagged_spend")
    return UntaggedFacts("priced" in _flags(usage), as_float(row["dollars"]), int(as_float(row["count"])),
                         as_float(row["total"]))


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


@built
def _flags_expr(usage: ir.Table) -> ir.Table:
    """Every flag of ``FLAG_TESTS`` some row has, each from the first such row (``columns.found``)."""
    return found(usage, {name: test(usage) for name, test in FLAG_TESTS.items()})


@built
def _checks_expr(usage: ir.Table) -> ir.Table:
    """Every check's aggregates (``CHECK_FACTS``, named "check__name") in one pass, each row test computed once."""
    weighed = [column for column in ("rows", "last_start") if column in usage.columns]  # a jobs rollup's
    rows = usage.select(
        "period_start", "gpu_hours", "cost", "run_id", *weighed, gpu=gpu(usage), known=states_known(usage),
        failed=_failed(usage), completed=_completed(usage),
        unused=unused_commitment(usage), paid=paid_commitment(usage), reserved_gpu=reserved_gpu(usage),
        job=_jobs(usage),
        untagged_costed=_untagged_costed(usage))
    return rows.aggregate(**{f"{check}__{name}": value for check, facts in CHECK_FACTS.items()
                             for name, value in facts(rows).items()})


BEHIND: dict[str, Callable[[ir.Table, RowsBehind], pd.DataFrame]] = {  # ``RowsBehind.kind``: its rows' query
    "failed": lambda usage, behind: failed_rows(usage, behind.interval_min, behind.restart_min),
    "interrupted": lambda usage, behind: interrupted_rows(usage, behind.interval_min, behind.restart_min),
    "completed": lambda usage, behind: completed_rows(usage),
    "paid": lambda usage, behind: paid_rows(usage),
    "idle": lambda usage, behind: idle_rows(usage),
    "storage": lambda usage, behind: storage_rows(usage, None if behind.names is None else list(behind.names)),
    "untagged": lambda usage, behind: untagged_rows(usage),
}


def rows_behind(usage: pd.DataFrame | ir.Table, behind: RowsBehind) -> pd.DataFrame:
    """The rows of ``usage`` (the rows a checklist was drawn from, never a rollup) behind a check (``behind``): at
    most ``ROWS_BEHIND``, in source order, as the check would have read them."""
    return BEHIND[behind.kind](tables.table_of(usage), behind)
