"""Commitments amortised onto the GPU usage they cover, as Ibis expressions, so every export's $/GPU-hour means the
same thing, on any engine and any size of data.

The import marks each bill row from what the bill says (``charge_kind``, ``dashboard.ingest.charges``): a commitment
purchase or fee billed at what was paid ("commitment"), the provider's line of commitment nobody used
("unused_commitment"), or usage (covered usage included). Amortised exports (FOCUS EffectiveCost, AWS CUR's effective
costs, Azure's amortized dataset) already put the commitment on the usage it covers and state the unused part on its
own lines. Actual-cost exports (GCP commitment fees, Azure's actual-cost dataset) bill the commitment on lines of its
own and show the reserved usage at $0. ``amortise_commitments`` turns the second kind into the first. Method:

1. Commitment charges are the paid commitment lines with a cost; covered usage is the reserved GPU rows. A bill with
   no GPU rows is "no_gpu"; without paid lines the export amortises itself ("provider", or "none" without any
   commitment line); paid lines are spread only when reserved GPU rows exist and none has a cost ("to_spread"
   from ``commitment_status``, "amortised" once done), else they are "excluded" from the $/GPU-hour.
2. Each charge covers a window: its own [period_start, period_end) when that is longer than a day; for charges
   that recur (the same resource_id, all unnamed charges together) until the next one starts, the last one for the
   median interval between them; a single short charge from its start to the end of the export (the midnight
   after the latest period_start or period_end).
3. The charge is spread evenly over the days of its window. The part on days after the export ends belongs to a
   later period and leaves the figures (``after_export_usd``). On each day in the export, that day's part is
   shared among the covered rows in proportion to their GPU-hours that day; on a day with no covered usage it
   stays on the charge's line, which becomes an unused-commitment line (idle capacity).

So the covered rows' cost plus what is left on the lines equals the charges less the part after the export;
``billed_cost`` (what was invoiced) is never changed. Times are seconds since 1970 (``epoch_seconds``); a
window may end on a half second (the median of an even number of intervals).

As queries: the charges (a bill's few paid lines) are numbered with ``row_number`` over all their columns, period
start and source row first, so a charge has the same number however often an engine evaluates it (rows equal in
every column may swap numbers, to the same result); the next start of a group is ``lead`` in that order, and its
median interval is exact on both engines (DuckDB ``percentile_cont(0.5)``, Spark ``percentile(x, 0.5)``: the mean
of the two middle intervals, as numpy's). The covered rows take no number: a row's share is its GPU-hours over its
duration times the sum, over its days, of its seconds that day times that day's rate (the day's charges over its
covered GPU-hours), read from the rate of its first and last day and the running total of the daily rates (every
day between is one of its own, so covered), two joins with the table of covered days. The result is the rows
other than the charges, so changed, and the charges as unused-commitment lines, in no particular row order.
`Amortisation` takes the status (``commitment_status``: the idle-capacity check's flag tests and the cost of the paid
and unused lines, which a workspace dataset's hourly rollup answers exactly) and, when the charges are spread, one
aggregate of their day pieces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import ibis
import ibis.expr.types as ir
import pandas as pd

from dashboard.ingest.charges import UNUSED_COMMITMENT
from dashboard.query.columns import found, number, paid_commitment, reserved_gpu, rows_where, unused_commitment
from dashboard.query.compiled import built, execute, query, table_result
from dashboard.query.periods import SECONDS_PER_DAY, day_pieces, start_end
from dashboard.retro import waste

STATUSES: tuple[str, ...] = ("none", "no_gpu", "provider", "amortised", "excluded", "to_spread")
LABELS: dict[str, str] = {
    "none": "",
    "no_gpu": "no GPU usage in this bill",
    "provider": "commitments amortised",
    "amortised": "commitments amortised",
    "excluded": "excluding commitments",
    "to_spread": "excluding commitments",
}


@dataclass(frozen=True)
class Amortisation:
    """What was done with a bill's commitments (`amortise_commitments`): the ``status`` (one of ``STATUSES``), the
    cost on commitment lines (``commitment_usd``), the part spread onto GPU rows (``spread_usd``), the part left on
    the lines (``unused_usd``: days without covered usage, or the unused part the export states), the part that
    belongs to days after the export (``after_export_usd``), all in the bill's currency, and the reserved GPU rows'
    ``covered_gpu_hours``."""

    status: str = "none"
    commitment_usd: float = 0.0
    spread_usd: float = 0.0
    unused_usd: float = 0.0
    after_export_usd: float = 0.0
    covered_gpu_hours: float = 0.0

    @property
    def label(self) -> str:
        """How the $/GPU-hour tile treats commitments ("commitments amortised"; "" without any)."""
        return LABELS[self.status]


def _status(gpu: bool, paid_usd: float | None, unused_usd: float | None, reserved_gpu_rows: bool,
            reserved_gpu_priced: bool) -> Amortisation:
    """Step 1 of the method: "no_gpu", "none", "provider" or "excluded", or "to_spread" when the paid lines are to
    be spread over the reserved GPU usage (``paid_usd``/``unused_usd`` None: no such line)."""
    commitment_usd, unused = (paid_usd or 0.0) + (unused_usd or 0.0), unused_usd or 0.0
    if not gpu:
        status = "no_gpu"
    elif paid_usd is None:
        status = "none" if unused_usd is None else "provider"
    else:
        status = "to_spread" if reserved_gpu_rows and not reserved_gpu_priced else "excluded"
    return Amortisation(status, commitment_usd=commitment_usd, unused_usd=unused)


STATUS_FLAGS = ("gpu", "paid", "commitment", "reserved_gpu", "reserved_gpu_priced")  # of ``waste.FLAG_TESTS``
# The columns step 1's row tests read (a rollup grouped by them and the signs of GPU-hours and cost answers it).
STATUS_GRAIN = ("pricing", "charge_kind", "gpu_sign", "cost_sign")


@built
def _status_flags_expr(usage: ir.Table) -> ir.Table:
    return found(usage, {name: waste.FLAG_TESTS[name](usage) for name in STATUS_FLAGS})


@built
def _status_sums_expr(usage: ir.Table) -> ir.Table:
    return usage.aggregate(paid_usd=usage.cost.sum(where=paid_commitment(usage)),
                           unused_usd=usage.cost.sum(where=unused_commitment(usage)))


@query
def commitment_status(usage: ir.Table) -> Amortisation:
    """Step 1 of the method (``amortise_commitments`` spreads the paid lines): the flags of the idle-capacity check
    it reads (the first row passing each of their tests) and the cost of the paid and the unused-commitment lines,
    two queries. Every test is of a row's pricing, charge kind and the signs of its GPU-hours and cost, so a rollup
    by ``STATUS_GRAIN`` read as rows (``rollup_rows.as_rows``) gives the rows' status."""
    flags = frozenset(table_result(_status_flags_expr(usage))["name"])
    row = table_result(_status_sums_expr(usage)).iloc[0]
    return _status("gpu" in flags, number(row["paid_usd"]) if "paid" in flags else None,
                   number(row["unused_usd"]) if "commitment" in flags else None, "reserved_gpu" in flags,
                   "reserved_gpu_priced" in flags)


def _export_end(usage: ir.Table) -> ir.Table:
    """One row: ``export_end_s``, the midnight after the latest period_start or period_end, in seconds (a table of
    its own: a reduction of ``usage`` inside an expression over its charges would be one over the charges)."""
    latest_start_s = usage.period_start.max().epoch_seconds()
    latest_s = ibis.greatest(ibis.coalesce(usage.period_end.max().epoch_seconds(), latest_start_s), latest_start_s)
    return usage.aggregate(export_end_s=(latest_s / SECONDS_PER_DAY).ceil() * SECONDS_PER_DAY)


def _charges(usage: ir.Table) -> ir.Table:
    """The commitment charges with ``charge_id``, their start (``start_s``) and the end of the window they cover
    (``window_end_s``), and ``export_end_s`` (step 2)."""
    charges = rows_where(usage, paid_commitment(usage)).cross_join(_export_end(usage))
    start_s, end_s = start_end(charges)
    first_keys = ["period_start", "source_row"]
    order = [charges[name] for name in [*first_keys, *(name for name in usage.columns if name not in first_keys)]]
    group = ibis.coalesce(charges.resource_id, "")
    charges = charges.mutate(
        charge_id=ibis.row_number().over(order_by=order), charge_group=group,
        start_s=start_s.cast("float64"), end_s=end_s.cast("float64"),
        next_start_s=start_s.cast("float64").lead().over(ibis.window(group_by=group, order_by=order)))
    intervals = charges.group_by("charge_group").aggregate(
        median_interval_s=(charges.next_start_s - charges.start_s).median())
    joined = charges.left_join(intervals, "charge_group")
    following_s = ibis.coalesce(joined.next_start_s, joined.start_s + joined.median_interval_s, joined.export_end_s)
    short = joined.end_s - joined.start_s <= SECONDS_PER_DAY
    return joined.select(*charges.columns, window_end_s=ibis.ifelse(short, ibis.greatest(joined.end_s, following_s),
                                                                    joined.end_s))


def _charge_days(charges: ir.Table) -> ir.Table:
    """One row per (charge, UTC day of its window): ``charge_id``, ``day``, ``usd`` (the charge's part that day)
    and ``inside`` (the day is in the export) (step 3)."""
    timed = charges.window_end_s > charges.start_s
    first_day = (charges.start_s / SECONDS_PER_DAY).floor()
    last_day = ibis.ifelse(timed, (charges.window_end_s / SECONDS_PER_DAY).ceil() - 1, first_day)
    days = charges.select("charge_id", "cost", "start_s", "window_end_s", "export_end_s",
                          day=ibis.range(first_day, last_day + 1).unnest())
    overlap_s = (ibis.least(days.window_end_s, (days.day + 1) * SECONDS_PER_DAY)
                 - ibis.greatest(days.start_s, days.day * SECONDS_PER_DAY))
    fraction = ibis.ifelse(days.window_end_s > days.start_s, overlap_s / (days.window_end_s - days.start_s), 1.0)
    return days.select("charge_id", "day", usd=days.cost * fraction,
                       inside=days.day * SECONDS_PER_DAY < days.export_end_s)


def _covered_days(usage: ir.Table) -> ir.Table:
    """``day`` and the covered rows' ``gpu_hours`` that day, for the days with covered usage."""
    covered = rows_where(usage, reserved_gpu(usage))
    pieces = day_pieces(covered, gpu_hours=covered.gpu_hours)
    return pieces.group_by("day").aggregate(gpu_hours=(pieces.gpu_hours * pieces.fraction).sum())


def _day_rates(charge_days: ir.Table, covered_days: ir.Table) -> ir.Table:
    """For each day with covered usage: ``usd_per_gpu_hour`` (that day's charges over its covered GPU-hours) and
    ``running_usd_s_per_gpu_hour`` (the sum over that day and the days before of 86,400 s times their rate)."""
    inside = charge_days.filter(charge_days.inside)  # a part after the export's end is no day's charge
    usd_by_day = inside.group_by("day").aggregate(usd=inside.usd.sum())
    joined = covered_days.left_join(usd_by_day, "day")
    rates = joined.select(day=joined.day, usd_per_gpu_hour=ibis.coalesce(joined.usd, 0.0) / joined.gpu_hours)
    return rates.mutate(running_usd_s_per_gpu_hour=(rates.usd_per_gpu_hour * SECONDS_PER_DAY).cumsum(
        order_by=rates.day))


def _with_shares(rows: ir.Table, rates: ir.Table) -> ir.Table:
    """``rows`` with the spread cost of the covered ones added to their cost (NA read as 0)."""
    start_s, end_s = start_end(rows)
    covered = reserved_gpu(rows)
    first_day = start_s // SECONDS_PER_DAY
    last_day = ibis.ifelse(end_s > start_s, (end_s - 1) // SECONDS_PER_DAY, first_day)
    none = ibis.null("int64")
    keyed = rows.mutate(amortise_start_s=start_s, amortise_end_s=end_s,
                        amortise_first_day=ibis.ifelse(covered, first_day, none),
                        amortise_last_day=ibis.ifelse(covered, last_day, none))
    on_first = rates.select(amortise_first_day=rates.day, first_rate=rates.usd_per_gpu_hour,
                            first_running=rates.running_usd_s_per_gpu_hour)
    on_last = rates.select(amortise_last_day=rates.day, last_rate=rates.usd_per_gpu_hour,
                           last_running=rates.running_usd_s_per_gpu_hour)
    joined = keyed.left_join(on_first, "amortise_first_day").left_join(on_last, "amortise_last_day")
    first_s = (joined.amortise_first_day + 1) * SECONDS_PER_DAY - joined.amortise_start_s
    last_s = joined.amortise_end_s - joined.amortise_last_day * SECONDS_PER_DAY
    between = joined.last_running - joined.last_rate * SECONDS_PER_DAY - joined.first_running
    per_gpu_hour = ibis.ifelse(
        joined.amortise_first_day == joined.amortise_last_day, joined.first_rate,
        (first_s * joined.first_rate + last_s * joined.last_rate + between)
        / (joined.amortise_end_s - joined.amortise_start_s))
    cost = ibis.ifelse(joined.amortise_first_day.notnull(),
                       ibis.coalesce(joined.cost, 0.0) + joined.gpu_hours * per_gpu_hour, joined.cost)
    return joined.select(*(cost.name("cost") if name == "cost" else joined[name] for name in rows.columns))


def _unused_lines(charges: ir.Table, charge_days: ir.Table, covered_days: ir.Table,
                  columns: tuple[str, ...]) -> ir.Table:
    """The charges (``columns`` of them) as unused-commitment lines carrying the parts of their days in the export
    without covered usage."""
    days = charge_days.left_join(covered_days, "day")
    left = days.group_by("charge_id").aggregate(left_usd=days.usd.sum(where=days.inside & days.gpu_hours.isnull()))
    lines = charges.left_join(left, "charge_id")
    changed = {"cost": ibis.coalesce(lines.left_usd, 0.0), "charge_kind": ibis.literal(UNUSED_COMMITMENT)}
    return lines.select(*(changed[name].name(name) if name in changed else lines[name] for name in columns))


def _amortised(usage: ir.Table) -> ir.Table:
    """``usage`` with the commitment charges spread over the covered rows (steps 2 and 3): a lazy expression of
    the same columns and types in the same order."""
    charges = _charges(usage)
    charge_days = _charge_days(charges)
    covered_days = _covered_days(usage)
    others = _with_shares(rows_where(usage, ~paid_commitment(usage)), _day_rates(charge_days, covered_days))
    lines = _unused_lines(charges, charge_days, covered_days, tuple(usage.columns))
    schema = usage.schema()
    return ibis.union(*(part.cast(schema) for part in (others, lines)), distinct=False)


@built
def _figures_expr(usage: ir.Table) -> ir.Table:
    """One row: the spread, left (unused) and after-export parts of the charges, and the covered GPU-hours."""
    days = _charge_days(_charges(usage)).left_join(_covered_days(usage), "day")
    covered = days.gpu_hours.notnull()
    parts = days.aggregate(spread_usd=days.usd.sum(where=days.inside & covered),
                           left_usd=days.usd.sum(where=days.inside & ~covered),
                           after_export_usd=days.usd.sum(where=~days.inside))
    hours = usage.aggregate(covered_gpu_hours=usage.gpu_hours.sum(where=reserved_gpu(usage)))
    return parts.cross_join(hours)


@dataclass(frozen=True)
class _Parts:
    """The charges' parts spread on covered days, left on days without covered usage and after the export's end,
    and the covered GPU-hours (`_figures_expr`'s row)."""

    spread_usd: float
    left_usd: float
    after_export_usd: float
    covered_gpu_hours: float


@query
def _figures(usage: ir.Table) -> _Parts:
    row = cast(pd.DataFrame, execute(_figures_expr(usage))).iloc[0]
    return _Parts(spread_usd=number(row["spread_usd"]), left_usd=number(row["left_usd"]),
                  after_export_usd=number(row["after_export_usd"]), covered_gpu_hours=number(row["covered_gpu_hours"]))


def amortise_commitments(usage: ir.Table, status_from: ir.Table | None = None) -> tuple[ir.Table, Amortisation]:
    """The usage table with commitment charges spread over the reserved GPU usage they cover, and what was done.

    Returns ``(usage, info)``; the table is ``usage`` itself unless ``info.status`` is "amortised", where it is
    a lazy expression of the same columns in which the covered rows' cost includes their share and the paid lines
    become unused-commitment lines carrying what was left on them. ``info`` is an `Amortisation`; its ``status``:
    "no_gpu" (the bill has no GPU rows), "none" (no commitment lines), "provider" (the export amortises commitments
    itself), "amortised" (done here) or "excluded" (paid lines but no unpriced reserved GPU usage to put them on,
    so the $/GPU-hour excludes them). ``status_from`` (None: ``usage``) is what step 1 reads: a workspace dataset's
    rollup by ``STATUS_GRAIN`` read as rows, the same status from a few thousand rows instead of a quarter's.
    """
    info = commitment_status(usage if status_from is None else status_from)
    if info.status != "to_spread":
        return usage, info
    parts = _figures(usage)
    return _amortised(usage), Amortisation(
        "amortised", commitment_usd=info.commitment_usd, spread_usd=parts.spread_usd,
        unused_usd=info.unused_usd + parts.left_usd, after_export_usd=parts.after_export_usd,
        covered_gpu_hours=parts.covered_gpu_hours)
