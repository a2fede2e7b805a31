"""Waste checklist for the retrospective: failed runs, successful share, idle commitment, repeats, storage growth.

Each check is a dict ``{"id", "check", "kind", "figure", "unit", "usd", "detail", "rows"}``: ``kind`` says how
to read it (``KINDS``: "waste", one-off dollars that add up to the headline; "monthly", a cost that grows every
month, shown apart; "hygiene", spend nobody can be asked about; "kpi", a share to watch, not waste), ``figure``
is the number to show (None when the export cannot answer the check, ``detail`` then says which export would),
``usd`` the dollars behind it (None when unknown) and ``rows`` the usage rows behind it. ``waste_summary`` adds
the "waste" checks' dollars into the headline, each as a share of all spend. Rules:

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

Every figure is a query (``dashboard.query.waste``); the duplicate-run rule compares each job with the jobs just
before it, which is row-level, and runs here on the candidate jobs the query returns.
"""

from __future__ import annotations

from typing import Any

import ibis
import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.core.scenario import Scenario
from dashboard.format import count_sig, number, usd_sig
from dashboard.ingest.run_states import RESUME_WINDOW_HOURS
from dashboard.query import tables
from dashboard.query import waste as waste_query
from dashboard.query.compiled import one_view
from dashboard.query.join import join_usage

DUPLICATE_START_WINDOW = pd.Timedelta(hours=24)
DUPLICATE_DURATION_TOLERANCE = 0.10  # relative to the earlier run's duration
STORAGE_GROWTH_MIN = 0.05  # cost per day must grow by more than this share every month
NEEDS_STATES = "Needs run states: a Slurm sacct or W&B runs export, or pass one as `runs` to join it."


KINDS: dict[str, str] = {
    "failed_runs": "waste", "interrupted_runs": "waste", "successful_runs": "kpi", "idle_capacity": "waste",
    "duplicate_runs": "waste",
    "storage_growth": "monthly", "untagged_spend": "hygiene",
}


def _check(
    check_id: str, check: str, figure: float | None, unit: str, detail: str, rows: pd.DataFrame | None,
    usd_value: float | None = None,
) -> dict[str, Any]:
    return {"id": check_id, "check": check, "kind": KINDS[check_id], "figure": figure, "unit": unit,
            "usd": usd_value, "detail": detail, "rows": rows}




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


def failed_runs_check(usage: pd.DataFrame | ir.Table,
                      checkpoint: dict[str, Any] | None = None) -> dict[str, Any]:
    """Share of GPU-hours (with a known state) spent in failed runs that never resumed: failed, work lost
    (``checkpoint``, from ``checkpointing``, costs the interruptions left out)."""
    usage = tables.table_of(usage)
    facts = waste_query.failed_runs(usage)
    if not facts["known"]:
        return _check("failed_runs", "Failed runs", None, "% of GPU-hours", NEEDS_STATES, None)
    setting = _states_setting(checkpoint)
    tau, restart = setting["interval_min"], setting["restart_min"]
    interrupted = waste_query.interruptions(usage, tau, restart)
    known_h, gpu_h = facts["known_h"], facts["gpu_h"]
    failed_h = facts["failed_h"] - interrupted["failed_h"]
    by_state = waste_query.failed_by_state(usage)
    resumed = waste_query.interrupted_by_state(usage, tau, restart)
    lost = dict(by_state.itertuples(index=False))
    for state, hours, in_failed, _ in resumed.itertuples(index=False):
        if in_failed and state in lost:
            lost[state] -= hours
    lost = sorted(((state, hours) for state, hours in lost.items() if hours > 1e-9 * max(known_h, 1.0)),
                  key=lambda item: (-item[1], item[0]))  # largest first, ties by name
    detail = (f"{count_sig(failed_h)} of {count_sig(known_h)} GPU-hours in runs that failed and never resumed "
              "(work lost)")
    if lost:
        detail += " (" + ", ".join(f"{state} {count_sig(h)}" for state, h in lost) + ")"
    if interrupted["count"]:
        detail += (f"; {count_sig(interrupted['failed_h'])} more in a failed state resumed from a checkpoint: "
                   "see Interrupted runs")
    if known_h < gpu_h:
        detail += f"; states known for {number(known_h / gpu_h, 'fraction')} of all GPU-hours"
    cost = facts["failed_cost"] - interrupted["failed_cost"] if facts["cost_known"] else None
    rows = waste_query.failed_rows(usage, tau, restart)
    return _check("failed_runs", "Failed runs", 100.0 * failed_h / known_h, "% of GPU-hours", detail + ".",
                  rows, cost)


def interrupted_runs_check(usage: pd.DataFrame | ir.Table,
                           checkpoint: dict[str, Any] | None = None) -> dict[str, Any]:
    """GPU-hours lost to interruptions of runs that resumed from a checkpoint: interrupted, work kept (module
    docstring; ``checkpoint`` from ``checkpointing``)."""
    usage = tables.table_of(usage)
    facts = waste_query.failed_runs(usage)
    if not facts["known"]:
        return _check("interrupted_runs", "Interrupted runs", None, "GPU-hours", NEEDS_STATES, None)
    setting = _states_setting(checkpoint)
    tau, restart = setting["interval_min"], setting["restart_min"]
    found = waste_query.interruptions(usage, tau, restart)
    count = int(found["count"])
    how = checkpointing_note(setting, count, int(found["from_export"]))
    if not count:
        detail = (f"No run resumed after an interruption (the same run id continuing within "
                  f"{RESUME_WINDOW_HOURS:g} h of a failed segment's end on as many GPUs, or a REQUEUED record). "
                  f"{how}.")
        return _check("interrupted_runs", "Interrupted runs", 0.0, "GPU-hours", detail,
                      waste_query.interrupted_rows(usage, tau, restart),
                      0.0 if facts["cost_known"] else None)
    by_state = waste_query.interrupted_by_state(usage, tau, restart)
    states = ", ".join(f"{state} {int(n)}" for state, _, _, n in by_state.itertuples(index=False))
    segment_h = float(by_state["gpu_hours"].sum())
    detail = (f"{count:,} interruption{'s' if count != 1 else ''} of runs that resumed from a checkpoint ({states}): "
              f"{count_sig(found['lost_h'])} GPU-hours lost of the segments' {count_sig(segment_h)}, the rest is "
              f"work kept. {how}.")
    cost = found["lost_cost"] if facts["cost_known"] else None
    return _check("interrupted_runs", "Interrupted runs", found["lost_h"], "GPU-hours", detail,
                  waste_query.interrupted_rows(usage, tau, restart), cost)


def successful_runs_check(usage: pd.DataFrame | ir.Table) -> dict[str, Any]:
    """Cost of COMPLETED runs as a share of the cost of runs with a known state (GPU-hours without cost)."""
    usage = tables.table_of(usage)
    facts = waste_query.successful_runs(usage)
    if not facts["known"]:
        return _check("successful_runs", "Successful runs", None, "% of cost", NEEDS_STATES, None)
    if facts["cost_known"]:
        part, whole = facts["part_cost"], facts["whole_cost"]
        unit, total = "% of cost", facts["total_cost"]
        what = f"{usd_sig(part)} of the {usd_sig(whole)} spent on runs with a known state"
        if total > 0:
            what += f" ({number(whole / total, 'fraction')} of all cost in the table)"
    else:
        part, whole = facts["part_h"], facts["whole_h"]
        unit, what = "% of GPU-hours", f"{count_sig(part)} of {count_sig(whole)} GPU-hours (the table carries no cost)"
    figure = 100.0 * part / whole if whole > 0 else None
    return _check("successful_runs", "Successful runs", figure, unit, f"Runs that completed: {what}.",
                  waste_query.completed_rows(usage))


def idle_capacity_check(usage: pd.DataFrame | ir.Table) -> dict[str, Any]:
    """Commitment nobody used as the bill states it, plus reserved GPU-hours no run claims (USD)."""
    usage = tables.table_of(usage)
    facts = waste_query.idle_capacity(usage)
    paid = (f"Commitment purchases ({usd_sig(facts['paid_usd'])}) are billed on their own lines at what was paid"
            if facts["paid"] else "")
    if not (facts["gpu"] or facts["commitment"]):
        detail = "No GPU usage in this bill" + (f". {paid}; they cover no GPU-hours in it." if paid else ".")
        return _check("idle_capacity", "Idle capacity", None, "USD", detail, None)
    if not (facts["commitment"] or facts["reserved_gpu"] or facts["paid"]):
        return _check("idle_capacity", "Idle capacity", None, "USD", (
            "No reserved or committed capacity in this table. A billing export with commitment lines (FOCUS "
            "CommitmentDiscountStatus, AWS savings-plan fees, GCP commitment fees, Azure reservations) answers it."
        ), None)
    if not facts["commitment"] and facts["paid"]:
        return _check("idle_capacity", "Idle capacity", None, "USD", (
            f"{paid} (an actual-cost view), so the unused part cannot be separated. The amortised view (FOCUS "
            "EffectiveCost, Azure amortized cost, AWS CUR) answers it."
        ), waste_query.paid_rows(usage))
    unused_usd, untagged_usd = facts["commitment_usd"], facts["untagged_usd"]
    if facts["commitment"]:
        detail = (f"{usd_sig(unused_usd)} of commitment nobody used ({facts['lines']} unused-commitment lines, "
                  f"{facts['days'][0]} to {facts['days'][1]})")
    else:
        detail = "No unused-commitment line in this bill"
    if facts["untagged"]:
        detail += (f"; {count_sig(facts['untagged_h'])} reserved GPU-hours "
                   f"({usd_sig(untagged_usd)}) used with no run")
    detail += ". Daily billing lines cannot show nights and weekends: see the load pattern."
    total = unused_usd + untagged_usd
    return _check("idle_capacity", "Idle capacity", total, "USD", detail,
                  waste_query.idle_rows(usage), total)


def duplicate_runs_check(usage: pd.DataFrame | ir.Table) -> dict[str, Any]:
    """GPU-hours of runs that repeat an earlier run of the same shape (see the module docstring)."""
    usage = tables.table_of(usage)
    facts = waste_query.job_facts(usage)
    if not facts["jobs"]:
        return _check("duplicate_runs", "Duplicate runs", None, "GPU-hours",
                      "Needs a run export with job start and end times (Slurm sacct or W&B).", None)
    if not facts["repeated"]:
        return _check("duplicate_runs", "Duplicate runs", None, "GPU-hours", (
            "No run id occurs on more than one job, so repeats cannot be recognised (W&B ids are unique hashes). "
            "A Slurm sacct export, where run_id is the job name, answers it."
        ), None)
    runs = waste_query.repeat_candidates(usage)
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
    detail = (f"{len(rows)} runs repeat an earlier run of the same name, GPU count and duration (within "
              f"{number(DUPLICATE_DURATION_TOLERANCE, 'fraction')}) started less than a day before: "
              f"{count_sig(repeat_h)} GPU-hours. "
              "Sweep members of equal shape are flagged too (the table has no hyperparameters).")
    cost = float(rows["cost"].sum()) if waste_query.has_cost(usage) else None
    return _check("duplicate_runs", "Duplicate runs", repeat_h, "GPU-hours", detail, rows, cost)


def storage_growth_check(usage: pd.DataFrame | ir.Table) -> dict[str, Any]:
    """Storage lines whose cost grew every month (no sign of a retention policy); figure in USD/month."""
    usage = tables.table_of(usage)
    monthly = waste_query.storage_by_month(usage)
    if monthly.empty:
        return _check("storage_growth", "Storage growth", None, "USD/month", (
            "No storage lines: a billing export with storage lines (bucket resource ids, or team and project tags) "
            "answers it."
        ), None)
    if monthly["month"].nunique() < 2:
        return _check("storage_growth", "Storage growth", None, "USD/month",
                      "Storage lines cover one month only; an export of two or more months answers it.",
                      waste_query.storage_rows(usage))
    growing = []
    for line, series in monthly.groupby("name", sort=True):
        per_day = series["cost"].to_numpy() / pd.PeriodIndex(series["month"]).days_in_month.to_numpy()
        if len(series) >= 2 and (per_day[1:] > per_day[:-1] * (1 + STORAGE_GROWTH_MIN)).all():
            growing.append((line, series["cost"].to_numpy()))
    last_usd = float(sum(costs[-1] for _, costs in growing))
    if growing:
        detail = "; ".join(
            f"{line}: " + " → ".join(usd_sig(value) for value in costs) + " a month" for line, costs in growing
        ) + ". Growing every month: no sign of a retention policy."
    else:
        detail = f"No storage line grew every month ({monthly['name'].nunique()} lines checked)."
    rows = waste_query.storage_rows(usage, [line for line, _ in growing])
    return _check("storage_growth", "Storage growth", last_usd, "USD/month", detail, rows, last_usd)


def untagged_spend_check(usage: pd.DataFrame | ir.Table) -> dict[str, Any]:
    """Cost of rows with no team, project or run: a tagging finding with its dollars."""
    usage = tables.table_of(usage)
    facts = waste_query.untagged_spend(usage)
    if not facts["cost_known"]:
        return _check("untagged_spend", "Untagged spend", None, "USD",
                      "Needs a billing export: a run export carries no prices.", None)
    dollars, total = facts["dollars"], facts["total"]
    share = f" ({number(dollars / total, 'fraction')} of spend)" if total > 0 else ""
    detail = (f"{usd_sig(dollars)} on {facts['count']:,} rows with no team, project or run tag{share}: support, tax, "
              "credits and fees are usually untagged; GPU or storage rows here have no owner to ask.")
    return _check("untagged_spend", "Untagged spend", dollars, "USD", detail,
                  waste_query.untagged_rows(usage), dollars)


def waste_summary(checklist: list[dict[str, Any]], total_cost: float) -> dict[str, Any]:
    """The headline: the "waste" checks with dollars, largest first, each with its share of ``total_cost``.

    Returns ``{"total_usd", "share" (of total_cost; None when it is not positive), "items": [{"check", "usd",
    "share"}, ...]}`` (a check that found nothing, $0, is not an item); storage growth (monthly), untagged spend
    (hygiene) and the successful-run share (a KPI)
    are not in it.
    """
    share = (lambda value: value / total_cost) if total_cost > 0 else (lambda value: None)
    items = sorted(({"check": check["check"], "usd": float(check["usd"]), "share": share(float(check["usd"]))}
                    for check in checklist if check["kind"] == "waste" and check["usd"]),
                   key=lambda item: -item["usd"])
    total = float(sum(item["usd"] for item in items))
    return {"total_usd": total, "share": share(total), "items": items}


def waste_checklist(usage: pd.DataFrame | ir.Table, runs: pd.DataFrame | ir.Table | None = None,
                    scenario: Scenario | None = None) -> list[dict[str, Any]]:
    """The seven checks in order. ``runs`` (a run export) is joined to ``usage`` (a query) on run_id for the checks
    that need run states (failed, interrupted, successful, duplicates); idle capacity and storage always read
    ``usage``. The plan ``scenario`` gives the checkpoint interval and restart time the run export does not
    (``checkpointing``; the scenario defaults without one).
    The rows behind each figure are its first ``waste_query.ROWS_BEHIND`` in source order."""
    usage = tables.table_of(usage)
    with_states = usage if runs is None else join_usage(usage, tables.table_of(runs, ibis.get_backend(usage)),
                                                        on="run_id")[0]
    setting = checkpointing(scenario)
    with one_view():  # the checks' aggregates are one query, run once
        return [
            failed_runs_check(with_states, setting),
            interrupted_runs_check(with_states, setting),
            successful_runs_check(with_states),
            idle_capacity_check(usage),
            duplicate_runs_check(with_states),
            storage_growth_check(usage),
            untagged_spend_check(usage),
        ]
