"""How good were our plans: a saved plan's estimate against the actuals it was matched to, and the accuracy of
the last few such comparisons in one sentence.

A ``PlanOutcome`` is what the Retrospective's Plan vs actual tab compared (``dashboard.retro.gap.decompose``): the
plan's GPU-hours and US dollars, the actual GPU-hours and money over the compared period, and the gap's parts
summed in three groups, in GPU-hours and in money:

- **price** = the ``price`` part (paid per GPU-hour against the plan's price; always 0 GPU-hours);
- **quantity** = ``scale`` + ``experiments`` + ``idle / unattributed`` (more or fewer GPU-hours bought: tokens,
  other runs, capacity nobody used);
- **efficiency** = ``efficiency`` + ``failures and restarts`` (GPU-hours per token, and work lost to failures).

The groups add up to actual − plan. Money is the plan's US dollars: the groups' money is kept only when the bill is
in US dollars or names no currency (as the tab shows it); with a bill in another currency it is None.

``accuracy`` reads a list of outcomes (the caller passes the last N): the largest and the median error
|actual − plan| / plan, in %, on GPU-hours over all of them, and on cost over those whose bill is in US dollars and
carries costs (the plans are priced in US dollars; a bill in another currency, or data without costs, whose money
is the plan's price times the actual GPU-hours, is left out and counted). ``accuracy_sentence`` says it: "Our last
4 plans were off by a median of 10 % on GPU-hours (worst 12 %) and a median of 5 % on cost (worst 18 %)."
``keep_flags`` says why a comparison should be looked at before it is kept (a plan more than twice or under half
the actuals' size, or a plan whose days do not overlap the compared period).

Pure: no streamlit, no store; numbers written by ``dashboard.format``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Protocol

import pandas as pd

from dashboard.format import USD, count_sig, number, usd_sig

GROUPS: dict[str, tuple[str, ...]] = {
    "price": ("price",),
    "quantity": ("scale", "experiments", "idle / unattributed"),
    "efficiency": ("efficiency", "failures and restarts"),
}
GROUP_NAMES: tuple[str, ...] = tuple(GROUPS)
CURRENCY_MAX_CHARS = 64  # a code, or a mixed bill's codes joined with "+"
LEFT_OUT_CURRENCY = "another currency"
LEFT_OUT_NO_COST = "no costs"
LEFT_OUT_NO_PLAN_COST = "no planned cost"


@dataclass(frozen=True)
class PlanOutcome:
    """One plan against its actuals over ``period_start``–``period_end`` (the first and last day compared).

    ``actual_usd`` is the bill's amount in ``currency`` (None: the bill names none); ``cost_known`` is False when
    the data carried no cost (its money is then the actual GPU-hours at the plan's price). ``*_gpu_hours`` and
    ``*_usd`` of price, quantity and efficiency are the groups of the module docstring; the money ones are None when
    the bill is in another currency. ``unknown_parts`` are the gap's parts the data could not tell (their figure is
    0 and the gap sits in another part)."""

    scenario_name: str
    period_start: date
    period_end: date
    currency: str | None
    plan_gpu_hours: float
    plan_usd: float
    actual_gpu_hours: float
    actual_usd: float
    price_gpu_hours: float
    quantity_gpu_hours: float
    efficiency_gpu_hours: float
    price_usd: float | None = None
    quantity_usd: float | None = None
    efficiency_usd: float | None = None
    cost_known: bool = True
    unknown_parts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.scenario_name, str) or not self.scenario_name.strip():
            raise ValueError("a plan outcome needs the plan's name")
        for name in ("period_start", "period_end"):
            value = getattr(self, name)
            if not isinstance(value, date):
                raise ValueError(f"{name} is a date, not {type(value).__name__}")
            if type(value) is not date:  # a datetime (or a pandas Timestamp) is a date too: keep its day
                object.__setattr__(self, name, date(value.year, value.month, value.day))
        if self.period_start > self.period_end:
            raise ValueError(f"the period starts after it ends ({self.period_start} > {self.period_end})")
        if self.currency is not None and (not isinstance(self.currency, str) or not self.currency
                                          or len(self.currency) > CURRENCY_MAX_CHARS):
            raise ValueError(f"a currency is 1–{CURRENCY_MAX_CHARS} characters of text, or None")
        for name in ("plan_gpu_hours", "plan_usd", "actual_gpu_hours", "actual_usd", "price_gpu_hours",
                     "quantity_gpu_hours", "efficiency_gpu_hours", "price_usd", "quantity_usd", "efficiency_usd"):
            value = getattr(self, name)
            if value is None and name.endswith("_usd") and name not in ("plan_usd", "actual_usd"):
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{name} is a finite number, not {value!r}")
            object.__setattr__(self, name, float(value))
        if self.plan_gpu_hours <= 0:
            raise ValueError("a plan with no GPU-hours cannot be compared with its actuals")
        if self.plan_usd < 0 or self.actual_gpu_hours < 0:
            raise ValueError("planned cost and actual GPU-hours are not negative")
        object.__setattr__(self, "cost_known", bool(self.cost_known))
        object.__setattr__(self, "unknown_parts", tuple(str(part) for part in self.unknown_parts))

    @property
    def gpu_hours_error(self) -> float:
        """(actual − plan) / plan GPU-hours, signed (0.1 is 10 % more than planned)."""
        return (self.actual_gpu_hours - self.plan_gpu_hours) / self.plan_gpu_hours

    @property
    def cost_compared(self) -> bool:
        """Whether the money is a cost to compare with the plan's US dollars: a bill in US dollars, with costs."""
        return self.cost_left_out is None

    @property
    def cost_left_out(self) -> str | None:
        """Why the cost is not compared (``LEFT_OUT_*``), None when it is."""
        if self.currency != USD:
            return LEFT_OUT_CURRENCY
        if not self.cost_known:
            return LEFT_OUT_NO_COST
        if self.plan_usd <= 0:
            return LEFT_OUT_NO_PLAN_COST
        return None

    @property
    def cost_error(self) -> float | None:
        """(actual − plan) / plan cost, signed; None when the cost is not compared (``cost_left_out``)."""
        return (self.actual_usd - self.plan_usd) / self.plan_usd if self.cost_compared else None


def _group_sums(parts: pd.DataFrame, column: str) -> dict[str, float]:
    by_part = dict(zip(parts["part"].astype(str), pd.to_numeric(parts[column], errors="coerce"), strict=True))
    missing = [part for members in GROUPS.values() for part in members if part not in by_part]
    if missing:
        raise ValueError(f"the gap's parts lack {', '.join(missing)}")
    return {group: float(sum(by_part[part] for part in members)) for group, members in GROUPS.items()}


class GapTotals(Protocol):
    """The totals an outcome keeps of Plan vs actual's summary (``dashboard.retro.gap.GapSummary``)."""

    @property
    def plan_gpu_hours(self) -> float: ...
    @property
    def plan_usd(self) -> float: ...
    @property
    def actual_gpu_hours(self) -> float: ...
    @property
    def actual_usd(self) -> float: ...
    @property
    def cost_known(self) -> bool: ...


def outcome_from(summary: GapTotals, parts: pd.DataFrame, *, scenario_name: str, period_start: date,
                 period_end: date, currency: str | None) -> PlanOutcome:
    """The outcome of ``dashboard.retro.gap.decompose``'s ``parts`` and ``summary`` for the plan ``scenario_name``
    over ``period_start``–``period_end``, the bill in ``currency`` (as the Retrospective names it: None for none).

    A parts frame without a ``usd`` column (a bill in another currency, as the tab shows it) or a bill in another
    currency gives no money for the groups. ValueError when the plan has no GPU-hours or a part is missing."""
    hours = _group_sums(parts, "gpu_hours")
    money_comparable = "usd" in parts.columns and (currency is None or currency == USD)
    money: dict[str, float | None] = (dict(_group_sums(parts, "usd")) if money_comparable
                                      else dict.fromkeys(GROUPS))
    known = parts["known"] if "known" in parts.columns else pd.Series(True, index=parts.index)
    unknown = tuple(str(part) for part, ok in zip(parts["part"], known, strict=True) if not bool(ok))
    return PlanOutcome(
        scenario_name=scenario_name, period_start=period_start, period_end=period_end, currency=currency,
        plan_gpu_hours=summary.plan_gpu_hours, plan_usd=summary.plan_usd,
        actual_gpu_hours=summary.actual_gpu_hours, actual_usd=summary.actual_usd,
        price_gpu_hours=hours["price"], quantity_gpu_hours=hours["quantity"],
        efficiency_gpu_hours=hours["efficiency"], price_usd=money["price"], quantity_usd=money["quantity"],
        efficiency_usd=money["efficiency"], cost_known=summary.cost_known, unknown_parts=unknown,
    )


def accuracy(outcomes: Iterable[PlanOutcome]) -> dict[str, Any]:
    """How far the plans were from their actuals, over ``outcomes`` (the last N kept).

    Keys: ``n``; ``gpu_hours_within_pct`` (the largest |actual − plan| / plan GPU-hours, in %) and
    ``gpu_hours_median_pct``; ``cost_n`` (the outcomes whose cost is compared), ``cost_within_pct`` and
    ``cost_median_pct`` over them (None when there are none); ``cost_left_out`` (how many were not) and
    ``cost_left_out_by`` (reason → count, reasons in ``PlanOutcome.cost_left_out``)."""
    items = list(outcomes)
    gpu = [100.0 * abs(outcome.gpu_hours_error) for outcome in items]
    cost = [100.0 * abs(error) for outcome in items if (error := outcome.cost_error) is not None]
    left_out: dict[str, int] = {}
    for outcome in items:
        reason = outcome.cost_left_out
        if reason is not None:
            left_out[reason] = left_out.get(reason, 0) + 1
    return {
        "n": len(items),
        "gpu_hours_within_pct": max(gpu) if gpu else None,
        "gpu_hours_median_pct": statistics.median(gpu) if gpu else None,
        "cost_n": len(cost),
        "cost_within_pct": max(cost) if cost else None,
        "cost_median_pct": statistics.median(cost) if cost else None,
        "cost_left_out": len(items) - len(cost),
        "cost_left_out_by": left_out,
    }


def _pct(value: float) -> str:
    return number(value / 100.0, "fraction")


def _off(median: float, worst: float, count: int, unit: str, notes: tuple[str, ...] = ()) -> str:
    """"12 % on cost" for one comparison, "a median of 10 % on GPU-hours (worst 12.3 %)" for more; past 1,000 %
    "more than 10×" (``format.number``)."""
    head = _pct(worst) if count == 1 else f"a median of {_pct(median)}"
    said = ([] if count == 1 else [f"worst {_pct(worst)}"]) + list(notes)
    return f"{head} on {unit}" + (f" ({'; '.join(said)})" if said else "")


def _plans(count: int) -> str:
    return f"{count:,} plan{'' if count == 1 else 's'}"


def _left_out_words(by: Mapping[str, int]) -> str:
    words = {LEFT_OUT_CURRENCY: "billed in another currency", LEFT_OUT_NO_COST: "without costs in the data",
             LEFT_OUT_NO_PLAN_COST: "without a planned cost"}
    return ", ".join(f"{count:,} {words.get(reason, reason)}" for reason, count in by.items())


def accuracy_sentence(acc: Mapping[str, Any]) -> str:
    """The accuracy in one sentence: how far off the plans were, the median and the worst miss and how many
    comparisons it rests on ("Our last 4 plans were off by a median of 10 % on GPU-hours (worst 12.3 %) and …";
    "Our last plan was off by 12 % … One comparison: not yet a track record."), with the plans whose cost is not
    compared said apart, and what to do when nothing has been kept yet. Never "within": a plan off by 100 % is
    off by 100 %."""
    n = int(acc["n"])
    if n == 0:
        return ("No plan has been compared with its actuals yet: on the Retrospective's Plan vs actual tab, choose "
                "a saved plan and keep the comparison.")
    subject = "Our last plan was" if n == 1 else f"Our last {n:,} plans were"
    head = f"{subject} off by {_off(acc['gpu_hours_median_pct'], acc['gpu_hours_within_pct'], n, 'GPU-hours')}"
    tail = " One comparison: not yet a track record." if n == 1 else ""
    cost_n, left = int(acc["cost_n"]), int(acc["cost_left_out"])
    if cost_n == 0:
        return f"{head}; cost is not compared ({_left_out_words(acc['cost_left_out_by'])}).{tail}"
    notes = () if left == 0 else (f"over the {_plans(cost_n)} billed in US dollars",
                                  f"left out: {_left_out_words(acc['cost_left_out_by'])}")
    cost = _off(acc["cost_median_pct"], acc["cost_within_pct"], cost_n, "cost", notes)
    return f"{head} and {cost}.{tail}"


SCALE_RATIO = 2.0  # a plan this many times the actuals' size, or a fraction as large, probably describes another run


RATIO_SHOWN_UP_TO = 1e6  # a larger ratio is written "more than 1,000,000×"


def _ratio_text(ratio: float) -> str:
    return number(ratio, "×") if ratio <= RATIO_SHOWN_UP_TO else f"more than {number(RATIO_SHOWN_UP_TO, '×')}"


def keep_flags(outcome: PlanOutcome, plan_start: date | None = None, plan_days: float | None = None) -> list[str]:
    """Why a comparison should be looked at before it is kept, one sentence each (none: nothing to flag): the plan's
    GPU-hours or cost differ from the actuals' by more than ``SCALE_RATIO`` either way (the cost only for a bill in
    US dollars with costs), or the plan's days (``plan_start`` and ``plan_days`` long; unknown without a start)
    do not overlap the compared period."""
    flags = []
    pairs = [("GPU-hours", outcome.plan_gpu_hours, outcome.actual_gpu_hours, count_sig)]
    if outcome.cost_compared:
        pairs.append(("cost", outcome.plan_usd, outcome.actual_usd, usd_sig))
    for what, planned, actual, text in pairs:
        if actual <= 0:
            flags.append(f"The actuals have no {what} against the plan's {text(planned)}: this plan probably "
                         "describes another run or another period.")
            continue
        ratio = max(planned, actual) / min(planned, actual) if planned > 0 else math.inf
        if ratio > SCALE_RATIO:
            more = "more" if planned > actual else "less"
            flags.append(f"The plan's {what} ({text(planned)}) is {_ratio_text(ratio)} {more} than the actuals' "
                         f"({text(actual)}): it probably describes another run or another period.")
    if plan_start is not None and plan_days is not None and math.isfinite(plan_days) and plan_days >= 0:
        plan_end = plan_start + timedelta(days=math.ceil(plan_days))
        if plan_end < outcome.period_start or plan_start > outcome.period_end:
            flags.append(f"The plan runs {plan_start:%Y-%m-%d} to {plan_end:%Y-%m-%d}; the actuals are "
                         f"{outcome.period_start:%Y-%m-%d} to {outcome.period_end:%Y-%m-%d}: the periods do not "
                         "overlap.")
    return flags


__all__ = ["GROUPS", "GROUP_NAMES", "PlanOutcome", "accuracy", "accuracy_sentence", "keep_flags", "outcome_from"]
