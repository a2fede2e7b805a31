"""The overrun's causes carried into the next plan: Plan vs actual's parts (``gap.decompose``) each become an input
change of the next plan or an explicit line of dollars beside it, and the next plan is compared with the old plan
and with what last quarter actually cost. docs/calibration.md, "The next plan carries the overrun", has the rules:

- The next plan starts as ``calibrate.scenario_from`` (the measured inputs; thin ones only when chosen).
- scale, with tokens known: the work actually done is the next plan's work: ``tokens`` = last quarter's main-run
  tokens. Without tokens, the main run's extra GPU-hours cannot be told from efficiency: a line of them at the next
  plan's price per GPU-hour.
- efficiency, with tokens known: the GPU-hours per token last quarter over the plan's give the MFU that would have
  needed them: ``mfu`` = the old plan's MFU × (planned hours for the work done) / (hours it took). The per-job MFU
  measured (``calibrate``) is named beside it; it leaves out stalls, restarts and slow segments that this holds.
- failures and restarts: a line of the GPU-hours lost beyond the old plan's rework, less the rework the measured
  failure inputs add to the next plan (``FAILURE_KEYS`` applied, against the same plan at the old plan's), at the
  next plan's price per GPU-hour.
- experiments: the overheads measured (``calibrate``) are the input change; a part calibrate cannot measure stays
  a line.
- idle / unattributed: a line: the share of last quarter's dollars paid for capacity no run used (unused
  commitment included), reserved on top of the next plan's GPU dollars ("reserve 9 % idle capacity or cut the
  commitment").
- price: the prices and purchase shares measured (``calibrate``) are the input change.

Dollars are GPU dollars as Plan vs actual counts them: (main run + experiments GPU-hours) × blended price.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import ibis.expr.types as ir
import pandas as pd

from dashboard.core import engine
from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_dict
from dashboard.format import count_sig, number, usd_sig
from dashboard.query import tables
from dashboard.retro.calibrate import Measured, measured_mfu, scenario_from, table_shape
from dashboard.retro.gap import GapSummary, decompose, suggest_main_runs
from dashboard.retro.join import join_usage

INPUT = "input"  # carried as an input change of the next plan
LINE = "line"  # carried as an explicit line of dollars beside it
NOTHING = "nothing"  # nothing to carry (the part saved money, or is 0)
FAILURE_KEYS = ("node_failures_per_1000_node_days", "spot_interruptions_per_1000_node_days", "checkpoint_interval_min",
                "restart_min")


@dataclass(frozen=True)
class CarriedPart:
    """One part of last quarter's gap and how the next plan carries it."""

    part: str  # one of gap.PARTS
    gpu_hours: float  # last quarter's part
    usd: float  # last quarter's part, in US dollars
    how: str  # INPUT, LINE or NOTHING
    text: str  # one sentence: "idle +$82.1k last quarter: reserve 9.4 % idle capacity or cut the commitment"
    line_usd: float = 0.0  # dollars the next plan adds as an explicit line (LINE only)


@dataclass(frozen=True)
class NextPlan:
    """The next plan with last quarter's overrun carried, and the three figures compared: the old plan's GPU
    dollars, last quarter's actual and the next plan's (its GPU dollars plus the explicit lines)."""

    scenario: Scenario
    applied: dict[str, Measured]  # the measured inputs set into it (``scenario_from``)
    parts: tuple[CarriedPart, ...]
    old_plan_usd: float
    actual_usd: float
    next_gpu_usd: float  # the next scenario's GPU dollars, as Plan vs actual counts them
    lines_usd: float  # the explicit lines' dollars

    @property
    def next_usd(self) -> float:
        return self.next_gpu_usd + self.lines_usd

    @property
    def carried(self) -> tuple[str, ...]:
        """The parts the next plan carries (an input change or a line), in ``gap.PARTS`` order."""
        return tuple(p.part for p in self.parts if p.how != NOTHING)


def _gpu_usd(outputs: Mapping[str, Any]) -> tuple[float, float]:
    """(GPU dollars, blended price per GPU-hour) of a plan, as Plan vs actual counts them."""
    price = float(outputs["blended_price_per_gpu_hour"])
    hours = float(outputs["gpu_hours_main_run"]) + float(outputs["gpu_hours_experiments"])
    return hours * price, price


def _signed(usd: float) -> str:
    return ("+" if usd >= 0 else "−") + usd_sig(abs(usd))


def _with(scenario: Scenario, values: Mapping[str, object]) -> Scenario:
    """``scenario`` with ``values`` set (ScenarioError when it does not accept them)."""
    return scenario_from_dict(scenario.to_json_dict() | {"name": scenario.name} | dict(values))


def _set(scenario: Scenario, values: Mapping[str, object]) -> Scenario:
    """``scenario`` with ``values`` set when it accepts them together (else unchanged)."""
    try:
        return _with(scenario, values)
    except ScenarioError:
        return scenario


def next_plan(parts: pd.DataFrame, summary: GapSummary, measured: dict[str, Measured], base: Scenario,
              use_thin: Collection[str] = ()) -> NextPlan:
    """The next plan from ``base`` (the plan last quarter was compared with), the measured inputs and Plan vs
    actual's ``parts`` and ``summary`` (``gap.decompose`` of ``base`` against last quarter), by the rules of the
    module docstring."""
    by = {str(row.part): (float(row.gpu_hours), float(row.usd), bool(row.known))
          for row in parts.itertuples(index=False)}
    scenario, applied = scenario_from(measured, base, use_thin)
    old = engine.scenario_outputs(base)
    tokens_known = summary.tokens_known
    texts: dict[str, tuple[str, str]] = {}

    scale_h, scale_usd, _ = by["scale"]
    if tokens_known and summary.actual_tokens:
        tokens = float(f"{summary.actual_tokens:.3g}")
        scenario = _set(scenario, {"tokens": tokens})
        texts["scale"] = (INPUT, f"scale {_signed(scale_usd)} last quarter: the next plan's work is the work done, "
                                 f"{count_sig(tokens)} tokens (planned {count_sig(summary.plan_tokens)})")
    efficiency_h, efficiency_usd, efficiency_known = by["efficiency"]
    if tokens_known and efficiency_known:
        planned_h = summary.plan_main_run_gpu_hours - summary.plan_rework_gpu_hours + scale_h
        taken_h = planned_h + efficiency_h
        if planned_h > 0 and taken_h > 0:
            mfu = float(f"{float(old['mfu_used']) * planned_h / taken_h:.3g}")
            scenario = _set(scenario, measured_mfu(mfu, "the rate last quarter's main run took: the old plan's "
                                                        "MFU × the hours planned for the work done / the hours it "
                                                        "took"))
            item = measured.get("mfu")
            beside = (f"; the per-job MFU measured is {number(item.value, 'fraction')}, without stalls and slow "
                      "segments" if item is not None and item.value is not None else "")
            texts["efficiency"] = (INPUT, f"efficiency {_signed(efficiency_usd)} last quarter: MFU "
                                          f"{number(float(old['mfu_used']), 'fraction')} → "
                                          f"{number(mfu, 'fraction')}, the rate the work done took{beside}")
    new = engine.scenario_outputs(scenario)
    next_gpu_usd, price = _gpu_usd(new)

    lines: dict[str, float] = {}
    if not tokens_known and scale_h > 0:
        lines["scale"] = scale_h * price
        texts["scale"] = (LINE, f"scale {_signed(scale_usd)} last quarter ({count_sig(scale_h)} main-run GPU-h over "
                                "the plan, tokens unknown so not told from efficiency): reserve "
                                f"{usd_sig(lines['scale'])}, or import a run export with tokens")
    failures_h, failures_usd, failures_known = by["failures and restarts"]
    # the rework the measured failure inputs add to the next plan (not its longer run at the old plan's rates)
    unmeasured = _with(scenario, {key: getattr(base, key) for key in FAILURE_KEYS})
    added_rework_h = float(new["gpu_hours_rework"]) - float(engine.scenario_outputs(unmeasured)["gpu_hours_rework"])
    if failures_known and failures_h - added_rework_h > 0:
        lines["failures and restarts"] = (failures_h - max(0.0, added_rework_h)) * price
        texts["failures and restarts"] = (
            LINE, f"failures and restarts {_signed(failures_usd)} last quarter ({count_sig(failures_h)} GPU-h lost "
                  f"beyond the plan's rework): reserve {usd_sig(lines['failures and restarts'])}, or apply the "
                  "measured failure rate and checkpoint more often")
    experiments_h, experiments_usd, _ = by["experiments"]
    overheads = [key for key in ("experiment_overhead", "eval_overhead", "debug_overhead") if key in applied]
    if overheads:
        texts["experiments"] = (INPUT, f"experiments {_signed(experiments_usd)} last quarter: the overheads measured "
                                       "(" + ", ".join(f"{key.split('_')[0]} {number(applied[key].value or 0.0, '×')}"
                                                        for key in overheads) + ") set")
    elif experiments_h > 0:
        lines["experiments"] = experiments_h * price
        texts["experiments"] = (LINE, f"experiments {_signed(experiments_usd)} last quarter, not measured by run: "
                                      f"reserve {usd_sig(lines['experiments'])}")
    idle_h, idle_usd, _ = by["idle / unattributed"]
    actual_usd = summary.actual_usd
    if idle_usd > 0 and actual_usd > idle_usd:
        share = idle_usd / actual_usd  # of what was paid, the share nobody used
        used_usd = next_gpu_usd + math.fsum(lines.values())
        lines["idle / unattributed"] = used_usd * share / (1.0 - share)
        texts["idle / unattributed"] = (
            LINE, f"idle {_signed(idle_usd)} last quarter: reserve {number(share, 'fraction')} idle capacity "
                  f"({usd_sig(lines['idle / unattributed'])}) or cut the commitment")
    _, price_usd, price_known = by["price"]
    prices = [key for key in applied if key.startswith("price_") or key.endswith("_share")]
    if price_known and prices:
        texts["price"] = (INPUT, f"price {_signed(price_usd)} last quarter: the prices paid and the purchase mix "
                                 "measured set")

    needs = {str(row.part): str(row.needs) for row in parts.itertuples(index=False)}
    carried = []
    for part, (hours, usd, known) in by.items():
        nothing = (f"{part} {_signed(usd)} last quarter: nothing to carry" if known
                   else f"{part}: not known last quarter ({needs[part]})")
        how, text = texts.get(part, (NOTHING, nothing))
        carried.append(CarriedPart(part, hours, usd, how, text, lines.get(part, 0.0)))
    return NextPlan(scenario, applied, tuple(carried), summary.plan_usd, actual_usd, next_gpu_usd,
                    math.fsum(lines.values()))


def from_quarter(bill: pd.DataFrame | ir.Table, runs: pd.DataFrame | ir.Table | None,
                 measured: dict[str, Measured], base: Scenario, use_thin: Collection[str] = (),
                 main_run_ids: list[str] | None = None) -> NextPlan:
    """``next_plan`` from a quarter's bill and run export as the Retrospective compares them: joined on project
    when the run ids are per job (W&B), else on run id, the main run ``main_run_ids`` or the suggested one
    (``gap.suggest_main_runs`` by the join key), decomposed against ``base``."""
    bill_table = tables.table_of(bill)
    run_table = None if runs is None else tables.table_of(runs)
    on = "project" if run_table is not None and table_shape(run_table).per_job else "run_id"
    joined, _ = join_usage(bill_table, run_table, on=on)
    assert joined is not None
    main = list(main_run_ids) if main_run_ids else suggest_main_runs(joined, by=on)
    parts, summary = decompose(engine.scenario_outputs(base), base, joined, main)
    return next_plan(parts, summary, measured, base, use_thin)


def as_json(plan: NextPlan) -> dict[str, Any]:
    """The carried overrun as the CLI's JSON gives it: the three figures, the banner and each part."""
    return {"old_plan_usd": plan.old_plan_usd, "actual_usd": plan.actual_usd, "next_gpu_usd": plan.next_gpu_usd,
            "lines_usd": plan.lines_usd, "next_usd": plan.next_usd, "banner": banner(plan),
            "parts": [asdict(part) for part in plan.parts]}


def banner(plan: NextPlan) -> str:
    """The Plan page's line: how far the last plan missed and which parts the new plan carries (plain text)."""
    old, actual = plan.old_plan_usd, plan.actual_usd
    miss = (actual - old) / old if old > 0 else math.nan
    over = "over" if actual >= old else "under"
    text = (f"The last plan missed by {number(abs(miss), 'fraction')} ({usd_sig(old)} planned, {usd_sig(actual)} "
            f"actual, {over} its GPU dollars). ")
    carried = plan.carried
    text += ("This plan carries " + ", ".join(carried) + f": {usd_sig(plan.next_usd)} "
             f"({usd_sig(plan.next_gpu_usd)} planned + {usd_sig(plan.lines_usd)} in explicit lines)."
             if carried else "Nothing of it is carried.")
    return text


def comparison(plan: NextPlan) -> pd.DataFrame:
    """The next plan beside the old plan and what last quarter actually cost (GPU dollars)."""
    rows = [("Old plan", plan.old_plan_usd), ("Last quarter, actual", plan.actual_usd),
            ("Next plan (inputs)", plan.next_gpu_usd), ("Next plan (explicit lines)", plan.lines_usd),
            ("Next plan, total", plan.next_usd)]
    return pd.DataFrame(rows, columns=["what", "usd"])
