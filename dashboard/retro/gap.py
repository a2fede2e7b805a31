"""Plan vs actual: split the gap between a plan (engine.scenario_outputs) and the usage table into waterfall parts.

Only GPU compute is compared. The plan side is the plan's GPU-hours priced at its blended price:
``(H_p_main + H_p_exp) * p_p`` with H_p_main = main-run GPU-hours (compute + planned stall + planned rework
R_p), H_p_exp = experiments + evaluation + debugging; its non-GPU line items (storage, data, egress, people,
TST pilot and switching) are left out (``plan_non_gpu_usd_excluded`` in the summary). D_p = the scenario's
tokens (times the raw-token multiplier for TST).

The actual side is the rows with GPU-hours > 0 (plus the GPU dollars with no GPU-hours, below). A row with
a run_id in ``main_run_ids`` is main run; a row with no run_id is unattributed. Interrupted is not failed: a
segment in a failed state (``FAILED_STATES``) that its run resumed after, or one the scheduler restarted
(``dashboard.ingest.run_states``), lost I = (τ/2 + restart) × its GPUs (at most its GPU-hours; Young 1974, the
plan's rework assumption, with the plan scenario's checkpoint interval τ and restart time unless the run export
gives them: ``dashboard.retro.waste``), and its other GPU-hours are work kept, main run or experiment as its run
is. Any other row in a failed state is failed, work lost, whatever its run. H_int = the interruptions' loss,
H_fail = failed work lost, H_main_ok / H_exp = main / other runs' hours not failed (with the work the
interruptions kept), H_unattr = hours with no run (idle or untagged capacity). D_a = tokens of the main run's
rows not failed (an interrupted row's less the share it lost); when only some of those rows carry tokens, the
rest are assumed to run at the same tokens per GPU-hour.

Parts in GPU-hours (they add up to actual - plan):

- scale = (H_p_main - R_p) * (D_a / D_p - 1): more or fewer tokens at the plan's efficiency;
- efficiency = H_main_ok - (H_p_main - R_p) * D_a / D_p: GPU-hours per token (MFU, stalls) differing from
  the plan. The interaction of scale and efficiency lands here, because scale is valued at plan efficiency;
- failures and restarts = (H_int - R_p) + H_fail: the interruptions' measured loss against the plan's rework
  R_p (``gpu_hours_rework``), and the failed work lost, which the plan does not foresee, told apart in the note;
- experiments = H_exp - H_p_exp;
- idle / unattributed = H_unattr.

Without tokens for the main run, scale = H_main_ok - (H_p_main - R_p) and efficiency = 0. Without any run
state, failed hours cannot be told apart: the plan's rework R_p is assumed to have happened inside the main
run (H_main_ok = main-run hours - R_p), so failures = 0 and any difference shows in efficiency.

Dollars: each GPU-hour part x p_p, plus price = H_a * (p_a - p_p), where H_a = actual GPU-hours and
p_a = (actual $ - unused commitment $) / H_a, so the price x volume interaction is assigned to price.
Actual $ is the cost of the GPU rows, plus the cost of rows without GPU-hours of runs that have GPU-hours
(e.g. a VM's vCPU SKU), plus commitment lines (``columns.commitment``: what the import marks as paid commitments
and unused-commitment lines). The unused-commitment lines' cost goes to idle / unattributed, since it is paid-for
capacity nobody used; a commitment paid on its own line and not spread (an actual-cost view, as in Azure's
actual-cost dataset or GCP's commitment fees) is the price of the reserved hours and stays in price. GPU rows with
no known cost are valued at p_p; when the table carries no cost at all (a run export: every cost 0 or NA),
actual $ = H_a * p_p and price = 0.

The actual side's sums are one query (the queries in this module).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ibis
import ibis.expr.types as ir
import pandas as pd

from dashboard.core.scenario import Scenario
from dashboard.format import USD, count_sig, money, number, usd_sig
from dashboard.ingest.run_states import FAILED_STATES
from dashboard.query import tables
from dashboard.query.columns import (
    commitment,
    failed,
    flag,
    found,
    gpu,
    holds,
    nonzero_cost,
    reserved_gpu,
    reserved_gpu_priced,
    rows_where,
    unused_commitment,
)
from dashboard.query.columns import (
    number as as_float,
)
from dashboard.query.compiled import built, query, table_result
from dashboard.retro.waste import InterruptionSums, checkpointing, interruptions

PARTS: tuple[str, ...] = (
    "scale", "efficiency", "failures and restarts", "experiments", "idle / unattributed", "price",
)
GAP_COLUMNS: tuple[str, ...] = ("part", "gpu_hours", "usd", "known", "needs", "note")
NEEDS_TOKENS = "a run export with tokens (the W&B runs table)"
NEEDS_STATES = "a run export with job states (Slurm sacct or W&B)"
NEEDS_COST = "a billing export (FOCUS, AWS CUR, GCP or Azure)"
MISMATCH_RATIO = 2.0  # plan and actual main runs this far apart in GPU-hours are probably different runs


def suggest_main_runs(usage: pd.DataFrame | ir.Table, by: str = "run_id") -> list[str]:
    """The main run's ids: the run with the most GPU-hours ([] when no row has a run).

    With ``by="project"`` (exports joined on project, such as W&B, whose run ids are per job) every run id of
    the project with the most GPU-hours, sorted.
    """
    usage = tables.table_of(usage)
    hours = gpu_hours_by(usage, by)
    if not len(hours):
        return []
    top = str(hours.at[int(hours["gpu_hours"].to_numpy(dtype=float).argmax()), "key"])
    return [top] if by == "run_id" else run_ids_of(usage, by, top)


@dataclass(frozen=True)
class PlanTotals:
    """The plan side of Plan vs actual: its main run (with the rework allowance ``plan_rework_gpu_hours`` R_p) and
    experiments' GPU-hours, their sum, its blended US dollars per GPU-hour, its GPU dollars, the non-GPU line items
    left out (None when the plan gives no total) and its tokens D_p."""

    plan_main_run_gpu_hours: float
    plan_rework_gpu_hours: float
    plan_experiment_gpu_hours: float
    plan_gpu_hours: float
    plan_price_per_gpu_hour: float
    plan_usd: float
    plan_non_gpu_usd_excluded: float | None
    plan_tokens: float


@dataclass(frozen=True)
class ActualTotals:
    """The actual side of Plan vs actual (module docstring): GPU-hours and dollars, p_a (actual $ less unused
    commitment per GPU-hour; None without GPU-hours), the main run's hours kept and all, the failed work lost, the
    interruptions (count, loss, how many the export costs, and the τ and restart they are costed with), experiment
    and unattributed hours, main-run tokens (None when unknown) and the share of main-run hours they cover, the
    commitment dollars, the GPU-hours valued at the plan's price, and what the table carries (cost, states, tokens)."""

    actual_gpu_hours: float
    actual_usd: float
    actual_price_per_gpu_hour: float | None
    actual_main_ok_gpu_hours: float
    actual_main_run_gpu_hours: float
    actual_failed_gpu_hours: float  # failed, work lost
    actual_interruptions: int
    actual_interruption_gpu_hours: float  # lost to interruptions: since the checkpoint + restart
    interruptions_from_export: int
    checkpoint_interval_min: float
    restart_min: float
    checkpoint_source: str
    actual_experiment_gpu_hours: float
    actual_unattributed_gpu_hours: float
    actual_tokens: float | None
    token_coverage: float | None
    commitment_usd: float  # commitment lines with no GPU-hours, in actual $
    unused_commitment_usd: float
    gpu_hours_valued_at_plan_price: float
    cost_known: bool
    states_known: bool
    tokens_known: bool


@dataclass(frozen=True)
class GapSummary(ActualTotals, PlanTotals):
    """The totals behind Plan vs actual's parts: the plan's (``PlanTotals``) and the actual side's
    (``ActualTotals``), the gap between them in GPU-hours and dollars, and the main runs compared."""

    gap_gpu_hours: float
    gap_usd: float
    main_run_ids: tuple[str, ...]


def _plan_totals(plan: Mapping[str, Any], scenario: Scenario) -> PlanTotals:
    tokens = scenario.tokens * (scenario.tst_token_multiplier if scenario.method == "tst" else 1.0)
    main_h = float(plan["gpu_hours_main_run"])
    experiments_h = float(plan["gpu_hours_experiments"])
    price = float(plan["blended_price_per_gpu_hour"])
    gpu_usd = (main_h + experiments_h) * price
    return PlanTotals(
        plan_main_run_gpu_hours=main_h,
        plan_rework_gpu_hours=float(plan["gpu_hours_rework"]),
        plan_experiment_gpu_hours=experiments_h,
        plan_gpu_hours=main_h + experiments_h,
        plan_price_per_gpu_hour=price,
        plan_usd=gpu_usd,
        plan_non_gpu_usd_excluded=float(plan["cost_total_usd"]) - gpu_usd if "cost_total_usd" in plan else None,
        plan_tokens=float(tokens),
    )


def _actual_totals(
    usage: pd.DataFrame | ir.Table, main_run_ids: list[str], failed_states: tuple[str, ...], plan_price: float,
    checkpoint: dict[str, Any] | None = None,
) -> ActualTotals:
    """The actual side's totals; ``checkpoint`` (``waste.checkpointing``, the scenario defaults when None) costs the
    interruptions."""
    table = tables.table_of(usage)
    setting = checkpointing() if checkpoint is None else checkpoint
    sums = actual_sums(table, main_run_ids, failed_states)
    cut = interruption_sums(table, main_run_ids, failed_states, setting["interval_min"],
                                      setting["restart_min"])
    # an interrupted segment's hours leave the failed ones: its loss is the interruptions', the rest work kept
    main_ok_h = sums.main_ok_gpu_hours + cut.main_failed_gpu_hours - cut.main_lost_gpu_hours
    token_hours = sums.token_gpu_hours + cut.main_token_failed_gpu_hours - cut.main_token_lost_gpu_hours
    tokens = sums.tokens + cut.main_failed_tokens - cut.main_lost_tokens
    experiment_h = (sums.experiment_gpu_hours + (cut.failed_gpu_hours - cut.main_failed_gpu_hours)
                    - (cut.lost_gpu_hours - cut.main_lost_gpu_hours))
    # Tokens of the rows that carry them, scaled up to all main-run hours; unknown if that overflows.
    actual_tokens = tokens * main_ok_h / token_hours if token_hours > 0 else math.nan
    tokens_known = math.isfinite(actual_tokens)
    gpu_h = sums.gpu_hours
    cost_known = sums.cost_known
    if cost_known:
        commitment_usd, unused_usd = sums.commitment_usd, sums.unused_commitment_usd
        costless_h = sums.costless_gpu_hours
        actual_usd = sums.gpu_usd + sums.host_usd + commitment_usd + costless_h * plan_price
    else:
        commitment_usd = unused_usd = 0.0
        costless_h = gpu_h
        actual_usd = gpu_h * plan_price
    return ActualTotals(
        actual_gpu_hours=gpu_h,
        actual_usd=actual_usd,
        actual_price_per_gpu_hour=(actual_usd - unused_usd) / gpu_h if gpu_h > 0 else None,
        actual_main_ok_gpu_hours=main_ok_h,
        actual_main_run_gpu_hours=sums.main_gpu_hours,
        actual_failed_gpu_hours=sums.failed_gpu_hours - cut.failed_gpu_hours,
        actual_interruptions=cut.count,
        actual_interruption_gpu_hours=cut.lost_gpu_hours,
        interruptions_from_export=cut.from_export,
        checkpoint_interval_min=setting["interval_min"],
        restart_min=setting["restart_min"],
        checkpoint_source=setting["source"],
        actual_experiment_gpu_hours=experiment_h,
        actual_unattributed_gpu_hours=sums.unattributed_gpu_hours,
        actual_tokens=actual_tokens if tokens_known else None,
        token_coverage=token_hours / main_ok_h if main_ok_h > 0 else None,
        commitment_usd=commitment_usd,
        unused_commitment_usd=unused_usd,
        gpu_hours_valued_at_plan_price=costless_h,
        cost_known=cost_known,
        states_known=sums.states_known,
        tokens_known=tokens_known,
    )


def decompose(
    plan: Mapping[str, Any], scenario: Scenario, actual: pd.DataFrame | ir.Table, main_run_ids: list[str],
    failed_states: tuple[str, ...] = FAILED_STATES,
) -> tuple[pd.DataFrame, GapSummary]:
    """``plan_vs_actual``'s parts and ``decomposition_summary``'s totals from one reading of the actual side (a
    page that shows both asks once: on a workspace dataset each reading is a pass over its rows)."""
    p = _plan_totals(plan, scenario)
    a = _actual_totals(actual, list(main_run_ids), failed_states, p.plan_price_per_gpu_hour,
                       checkpointing(scenario))
    price_p = p.plan_price_per_gpu_hour
    rework_p = p.plan_rework_gpu_hours
    base_h = p.plan_main_run_gpu_hours - rework_p  # plan main run without its rework allowance
    main_ok_h = a.actual_main_ok_gpu_hours - (0.0 if a.states_known else rework_p)

    if a.actual_tokens is not None:
        ratio = a.actual_tokens / p.plan_tokens
        scale_h, efficiency_h = base_h * (ratio - 1.0), main_ok_h - base_h * ratio
    else:
        scale_h, efficiency_h = main_ok_h - base_h, 0.0
    failures_h = (a.actual_interruption_gpu_hours - rework_p + a.actual_failed_gpu_hours
                  if a.states_known else 0.0)
    experiments_h = a.actual_experiment_gpu_hours - p.plan_experiment_gpu_hours
    idle_h = a.actual_unattributed_gpu_hours
    price_usd = a.actual_usd - a.unused_commitment_usd - a.actual_gpu_hours * price_p if a.cost_known else 0.0

    hours = [scale_h, efficiency_h, failures_h, experiments_h, idle_h, 0.0]
    dollars = [h * price_p for h in hours[:5]] + [price_usd]
    dollars[4] += a.unused_commitment_usd
    summary = GapSummary(**vars(p), **vars(a), gap_gpu_hours=a.actual_gpu_hours - p.plan_gpu_hours,
                         gap_usd=a.actual_usd - p.plan_usd, main_run_ids=tuple(main_run_ids))
    notes = part_notes(summary)
    known = [True, a.tokens_known, a.states_known, True, True, a.cost_known]
    needs = ["", NEEDS_TOKENS, NEEDS_STATES, "", "", NEEDS_COST]
    parts = pd.DataFrame({"part": list(PARTS), "gpu_hours": hours, "usd": dollars, "known": known,
                          "needs": [need if not ok else "" for need, ok in zip(needs, known, strict=True)],
                          "note": notes}, columns=list(GAP_COLUMNS))
    return parts, summary


def part_notes(summary: GapSummary, currency: str | None = USD) -> list[str]:
    """The note of each part in ``PARTS`` (the waterfall's hover, the table's last column), from the totals of
    ``decomposition_summary``; amounts of the bill in its ``currency`` (``format.money``), the plan's in US dollars
    (written "2.5 USD" beside a bill in another currency, whose amounts carry their code too).
    With a bill in another currency the price part says it is not compared: the plan's dollars and the bill's
    money cannot be subtracted."""
    if summary.tokens_known:
        scale_note = (f"{count_sig(summary.actual_tokens)} tokens trained vs {count_sig(summary.plan_tokens)} "
                      "planned, at plan MFU")
        coverage = summary.token_coverage
        if coverage is not None and coverage < 1:
            scale_note += (f"; tokens known for {number(coverage, 'fraction')} of main-run GPU-hours, the rest "
                           "assumed at that rate")
        efficiency_note = "GPU-hours per token vs the plan (MFU, stalls); includes the scale x efficiency interaction"
    else:
        scale_note = "tokens unknown: all main-run hours above or below the plan"
        efficiency_note = "tokens unknown"
    if summary.states_known:
        failures_note = failures_text(summary)
    else:
        failures_note = "no run states: planned rework assumed to have happened inside the main run"
    experiments_note = (f"{count_sig(summary.actual_experiment_gpu_hours)} GPU-h in other runs vs "
                        f"{count_sig(summary.plan_experiment_gpu_hours)} planned (experiments, evaluation, "
                        "debugging)")
    idle_note = "GPU-hours with no run (untagged or idle capacity)"
    if summary.unused_commitment_usd:
        idle_note += (f"; plus {money(summary.unused_commitment_usd, currency)} of unused commitment with no "
                      "GPU-hours")
    price_p, price_a = summary.plan_price_per_gpu_hour, summary.actual_price_per_gpu_hour
    if not summary.cost_known:
        price_note = "no cost in the table: actual GPU-hours valued at the plan price"
    elif currency != USD:
        price_note = (f"not compared: the bill is in {currency or 'no stated currency'} and the plan in US dollars "
                      f"({money(price_a, currency)}/GPU-h paid, {count_sig(price_p)} USD/GPU-h planned)")
    else:
        price_note = (f"{usd_sig(price_a)}/GPU-h paid vs {usd_sig(price_p)}/GPU-h planned, over the actual GPU-hours"
                      if price_a is not None else "dollars with no GPU-hours behind them")
    if summary.cost_known and summary.gpu_hours_valued_at_plan_price:
        price_note += (f"; {count_sig(summary.gpu_hours_valued_at_plan_price)} GPU-h without a cost valued at "
                       "plan price")
    return [scale_note, efficiency_note, failures_note, experiments_note, idle_note, price_note]


def failures_text(summary: GapSummary) -> str:
    """The failures part's note: the interruptions' measured loss against the plan's rework, and the failed work
    lost apart."""
    count = summary.actual_interruptions
    lost = f"{count_sig(summary.actual_interruption_gpu_hours)} GPU-h lost to "
    lost += (f"{count:,} interruption{'s' if count != 1 else ''} (work since the last checkpoint + restart, "
             f"τ {summary.checkpoint_interval_min:g} min and restart "
             f"{summary.restart_min:g} min from {summary.checkpoint_source})"
             if count else "interruptions (no run resumed after a failed segment)")
    return (f"{lost} vs {count_sig(summary.plan_rework_gpu_hours)} GPU-h planned rework; "
            f"{count_sig(summary.actual_failed_gpu_hours)} GPU-h in failed runs that never resumed, work lost")


def plan_vs_actual(
    plan: Mapping[str, Any], scenario: Scenario, actual: pd.DataFrame | ir.Table, main_run_ids: list[str],
    failed_states: tuple[str, ...] = FAILED_STATES,
) -> pd.DataFrame:
    """Waterfall parts from the plan to the actual usage (method in the module docstring).

    ``plan`` is ``engine.scenario_outputs(scenario)``; ``actual`` a canonical usage table (billing, run export or
    ``join_usage`` output). Returns one row per part in ``PARTS`` with columns ``part``, ``gpu_hours``,
    ``usd``, ``known`` (False for a part the table cannot tell: efficiency without tokens, failures without run
    states, price without cost; its figure is then 0 and the gap sits in another part), ``needs`` (what to
    import to know it), ``note``; ``gpu_hours`` sums to actual - plan GPU-hours and ``usd`` to actual - plan dollars
    (the totals are in ``decomposition_summary``).
    """
    return decompose(plan, scenario, actual, main_run_ids, failed_states)[0]


def decomposition_summary(
    plan: Mapping[str, Any], scenario: Scenario, actual: pd.DataFrame | ir.Table, main_run_ids: list[str],
    failed_states: tuple[str, ...] = FAILED_STATES,
) -> GapSummary:
    """The totals behind ``plan_vs_actual`` (``GapSummary``): plan and actual GPU-hours, dollars, $/GPU-h and
    tokens, the flags of what the table carries, the gap and the main runs compared."""
    return decompose(plan, scenario, actual, main_run_ids, failed_states)[1]


def plan_mismatch(summary: GapSummary) -> str | None:
    """A warning when the plan's main run and the actual one differ by more than ``MISMATCH_RATIO`` in GPU-hours
    (probably another model or another quarter); None when they are comparable or either is unknown."""
    planned, actual = summary.plan_main_run_gpu_hours, summary.actual_main_run_gpu_hours
    if not planned or not actual or planned <= 0 or actual <= 0:
        return None
    ratio = max(planned, actual) / min(planned, actual)
    if ratio <= MISMATCH_RATIO:
        return None
    more = "more" if actual > planned else "fewer"
    return (f"The actual main run used {ratio:.1f}x {more} GPU-hours than the plan's ({count_sig(actual)} against "
            f"{count_sig(planned)}): this plan probably describes another run. Choose the plan that was made for this "
            "quarter, or the main run it describes.")


@dataclass(frozen=True)
class ActualSums:
    """The actual side's sums (NULLs skipped, 0 for no rows): GPU-hours of all GPU rows, of the main run's rows
    not failed and all, of failed rows, of other runs' rows not failed, of rows with no run, of the main run's rows
    with tokens and their tokens, of GPU rows with no cost; the cost of GPU rows, of the runs' other rows (hosts),
    of commitment and of unused-commitment lines; and the flags: some cost is non-zero, some GPU row of a run has a
    state, reserved GPU rows exist, and one of them has a non-zero cost."""

    gpu_hours: float
    main_ok_gpu_hours: float
    main_gpu_hours: float
    failed_gpu_hours: float
    experiment_gpu_hours: float
    unattributed_gpu_hours: float
    token_gpu_hours: float
    tokens: float
    costless_gpu_hours: float
    gpu_usd: float
    host_usd: float
    commitment_usd: float
    unused_commitment_usd: float
    cost_known: bool
    states_known: bool
    reserved_gpu: bool
    reserved_gpu_priced: bool


_ROW_SUMS: tuple[str, ...] = ("gpu_hours", "main_ok_gpu_hours", "main_gpu_hours", "failed_gpu_hours",
                              "experiment_gpu_hours", "unattributed_gpu_hours", "token_gpu_hours", "tokens",
                              "costless_gpu_hours", "gpu_usd", "commitment_usd", "unused_commitment_usd")


@query
def actual_sums(usage: ir.Table, main_run_ids: list[str], failed_states: tuple[str, ...]) -> ActualSums:
    """The sums and flags of the actual side (``ActualSums``). Three queries: the sums in one pass over the rows,
    the runs' host cost (a run with GPU rows owns its other rows) and the flags, each of which stops at the first
    row that has it."""
    row = table_result(_actual_expr(usage, tuple(str(run) for run in main_run_ids), tuple(failed_states))).iloc[0]
    runs = table_result(_runs_expr(usage)).iloc[0]
    flags = set(table_result(_flags_expr(usage))["name"])
    return ActualSums(**{name: as_float(row[name]) for name in _ROW_SUMS}, host_usd=as_float(runs["host_usd"]),
                      states_known=flag(runs["states_known"]), cost_known="cost_known" in flags,
                      reserved_gpu="reserved_gpu" in flags, reserved_gpu_priced="reserved_gpu_priced" in flags)


def interruption_sums(usage: ir.Table, main_run_ids: list[str], failed_states: tuple[str, ...],
                      interval_min: float, restart_min: float) -> InterruptionSums:
    """The interrupted segments' sums (``dashboard.retro.waste.interruptions``: a failed segment its run resumed
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
    frame = table_result(_by_expr(usage, by))
    frame = frame.loc[frame["key"].notna()]
    return frame.sort_values("key", ignore_index=True)


@built
def _run_ids_expr(usage: ir.Table, by: str, key: str) -> ir.Table:
    rows = rows_where(usage, gpu(usage) & usage.run_id.notnull() & holds(usage[by].cast("string") == key))
    return rows.select("run_id").distinct()


@query
def run_ids_of(usage: ir.Table, by: str, key: str) -> list[str]:
    """The run ids, sorted, of the GPU rows whose ``by`` is ``key``."""
    return sorted(str(run) for run in table_result(_run_ids_expr(usage, by, key))["run_id"])
