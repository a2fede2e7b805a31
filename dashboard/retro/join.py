"""Join a billing usage table with a run export (Slurm, W&B) so every GPU-hour carries its run, state, tokens and cost,
as Ibis expressions: the joined table is a query on the tables' engine (DuckDB, Spark), of any size.

Method (``join_usage``), for the chosen key (``run_id`` or ``project``, compared as strings; a NULL key never
matches):

- Both sides are spread over UTC days in proportion to the time each row spends in each day
  (``dashboard.query.periods.day_pieces``: a 3-day job puts a third of its GPU-hours on each day; a daily billing
  line stays on its day).
- The bill is the truth about how many GPU-hours were paid for (its GPU rows: ``gpu_hours > 0``); the run export
  says what they were used for (its hours read below 0 as 0, NULL as 0). For each key and day the run hours are
  capped at the billed hours: every run piece of a key and day is scaled by min(1, billed hours / run hours) of
  that key and day (0 on a day with no billed hours for the key). ``runs_gpu_hours_beyond_billing`` in the stats
  is the run hours cut off this way, max(0, run hours - billed hours) summed over keys and days.
- For each key and day the billing price is that day's billing cost / billing GPU-hours of the key (NULL costs
  read as 0). Each matching run-export row gets cost = its capped GPU-hours on each day x that day's price, summed
  over its days; ``billed_cost`` is priced the same way. Matched run rows keep their run, state and tokens, take
  the bill's currency (the least non-NULL currency of its GPU rows: a bill has one) and take the key's pricing
  tier when all its billing GPU rows share one (NULL counts as a tier), else NULL.
- Billing GPU-hours the run export does not cover stay as their own rows: all of an unmatched key's GPU rows and,
  for a matched key, each billing GPU row scaled by 1 - min(run hours, billed hours) / billed hours of its key and
  day (hours and both costs), kept when GPU-hours are left. So the joined GPU-hours and cost equal the bill's,
  whatever the match rate.
- Run-export rows whose key is not in the billing GPU rows are not in the joined table (no bill; adding their hours
  would count the same work twice when the join fails); the stats report them.
- Billing rows that are not GPU rows (storage, CPU, fees, credits, tax) are kept unchanged.

The pieces of a row are summed back by a row identity: ``row_number()`` within the row's key, ordered by every
canonical column. Rows tied on all of them are the same row, so the numbering is the same each time an engine
computes it (Spark computes a subquery again for each place it is read), and partitioning by the key keeps the
window spread over Spark's executors.

The result has the canonical columns (the billing table's types) plus ``join_side``: "both" (run-export row priced
from billing) or "billing" (billing row, or the part of it the run export does not cover). Rows come in no order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import ibis
import ibis.expr.types as ir
import pandas as pd

from dashboard.format import number
from dashboard.ingest.schema import CANONICAL_COLUMNS
from dashboard.query import columns, engine
from dashboard.query.columns import gpu, rows_where
from dashboard.query.periods import day_pieces

JOIN_KEYS: tuple[str, ...] = ("run_id", "project")
JOIN_SIDES: tuple[str, ...] = ("both", "billing")
LOW_MATCH_SHARE = 0.8  # below this share of billed GPU-hours matched, the page warns
PRICED: tuple[str, ...] = ("gpu_hours", "cost", "billed_cost")
DESCRIPTIVE: tuple[str, ...] = tuple(column for column in CANONICAL_COLUMNS if column not in PRICED)
KEY = "join_key"  # the key as a string
ROW = "join_row"  # a row's number within its key
CELL = (KEY, "day")


@dataclass(frozen=True)
class JoinStats:
    """How a billing export and a run export matched (`join_usage`): the key joined ``on``; which side is missing;
    the GPU-hours of each side (negative hours read as 0; None for a missing side); the shares 0..1 of the billing
    GPU rows' hours and cost whose key is in the run export and of the run export's GPU-hours whose key is in the
    billing GPU rows (None when missing or the total is 0); the keys matched and, sorted, those of either side
    unmatched; the run-export hours above the billed hours of the same key and day, cut off; and the run-export
    hours and rows whose key has no bill."""

    on: str
    billing_missing: bool
    runs_missing: bool
    billing_gpu_hours: float | None = None
    runs_gpu_hours: float | None = None
    billing_gpu_hours_matched_share: float | None = None
    billing_cost_matched_share: float | None = None
    runs_gpu_hours_matched_share: float | None = None
    keys_matched: int = 0
    billing_keys_unmatched: tuple[str, ...] = ()
    runs_keys_unmatched: tuple[str, ...] = ()
    runs_gpu_hours_beyond_billing: float = 0.0
    runs_without_bill_gpu_hours: float = 0.0
    runs_without_bill_rows: int = 0


def _share(part: float, whole: float) -> float | None:
    return float(part / whole) if whole > 0 else None


STATS_GRAIN = ("gpu_sign",)  # the column a rollup groups by for a lone bill's stats to be read from it


def _positive_gpu_hours(usage: ir.Table) -> float:
    """GPU-hours of ``usage`` with negative hours (corrections) read as 0 (one query)."""
    return columns.number(engine.execute(usage.gpu_hours.clip(lower=0).sum()))


def _stats(on: str, billing: ir.Table | None, runs: ir.Table | None) -> JoinStats:
    """Stats of a join with a side missing: which one, the total of the side present, shares None."""
    return JoinStats(on=on, billing_missing=billing is None, runs_missing=runs is None,
                     billing_gpu_hours=None if billing is None else _positive_gpu_hours(billing),
                     runs_gpu_hours=None if runs is None else _positive_gpu_hours(runs))


def _rows_of(expr: ir.Table) -> pd.DataFrame:
    """The rows of ``expr`` (a small result), fetched."""
    return cast(pd.DataFrame, engine.execute(expr))


def _keys(usage: ir.Table, on: str) -> ir.Table:
    """The distinct keys of ``usage`` as strings, in column ``KEY`` (NULL among them: it never joins)."""
    return usage.select(**{KEY: usage[on].cast("string")}).distinct()


def _gpu_rows_and_keys(billing: ir.Table, runs: ir.Table, on: str) -> tuple[ir.Table, ir.Table, ir.Table]:
    """The billing GPU rows, the run export's keys and the billing GPU rows' keys."""
    bill_gpu = rows_where(billing, gpu(billing))
    return bill_gpu, _keys(runs, on), _keys(bill_gpu, on)


def _pieces(usage: ir.Table, on: str, **values: ir.Value) -> ir.Table:
    """Day pieces of ``usage`` carrying its descriptive columns, ``KEY``, the row identity ``ROW`` and ``values``
    (expressions over ``usage``, each multiplied by the piece's fraction of the row)."""
    keyed = usage.mutate(**{KEY: usage[on].cast("string")}, **values)
    numbered = keyed.mutate(**{ROW: ibis.row_number().over(
        group_by=keyed[KEY], order_by=[keyed[column] for column in CANONICAL_COLUMNS])})
    pieces = day_pieces(numbered, **{name: numbered[name] for name in (*DESCRIPTIVE, KEY, ROW, *values)})
    return pieces.mutate(**{name: pieces[name] * pieces.fraction for name in values})


def _rows(pieces: ir.Table, **sums: ir.NumericValue) -> ir.Table:
    """The pieces summed back to their rows: the descriptive columns and ``KEY`` of each row, and ``sums``."""
    return pieces.group_by([KEY, ROW]).aggregate(
        **{column: pieces[column].arbitrary() for column in DESCRIPTIVE}, **{name: value.sum()
                                                                             for name, value in sums.items()})


def _canonical(usage: ir.Table, schema: ibis.Schema, side: str, **values: ir.Value) -> ir.Table:
    """``usage`` as the canonical columns of ``schema`` (``values`` replacing some), plus ``join_side``."""
    chosen = {column: values.get(column, usage[column]).cast(schema[column]) for column in CANONICAL_COLUMNS}
    return usage.select(**chosen, join_side=ibis.literal(side, "string"))


def _joined(billing: ir.Table, runs: ir.Table, on: str) -> tuple[ir.Table, ir.Table]:
    """The joined table, and the one-row table of the run-export hours above the bill of their key and day."""
    schema = billing.schema()
    bill_gpu, run_keys, bill_keys = _gpu_rows_and_keys(billing, runs, on)
    matched_bill = bill_gpu.semi_join(run_keys, bill_gpu[on].cast("string") == run_keys[KEY])
    unmatched_bill = bill_gpu.anti_join(run_keys, bill_gpu[on].cast("string") == run_keys[KEY])
    matched_runs = runs.semi_join(bill_keys, runs[on].cast("string") == bill_keys[KEY])

    bill_pieces = _pieces(matched_bill, on, gpu_hours=matched_bill.gpu_hours, cost=matched_bill.cost.fill_null(0),
                          billed_cost=matched_bill.billed_cost.fill_null(0))
    billed = bill_pieces.group_by(CELL).aggregate(bill_gpu_hours=bill_pieces.gpu_hours.sum(),
                                                  bill_cost=bill_pieces.cost.sum(),
                                                  bill_billed_cost=bill_pieces.billed_cost.sum())
    run_pieces = _pieces(matched_runs, on, run_gpu_hours=matched_runs.gpu_hours.clip(lower=0).fill_null(0))
    used = run_pieces.group_by(CELL).aggregate(day_run_gpu_hours=run_pieces.run_gpu_hours.sum())

    # per (key, day) a run piece is on: the cap and the prices per GPU-hour (0 where the key has no bill that day)
    on_bill = used.left_join(billed, [used[KEY] == billed[KEY], used.day == billed.day])
    bill_hours = on_bill.bill_gpu_hours.fill_null(0)
    priced_hours = bill_hours > 0
    cells = on_bill.select(
        KEY, "day", "day_run_gpu_hours", bill_gpu_hours=bill_hours,
        cap=ibis.ifelse(on_bill.day_run_gpu_hours > 0, ibis.least(1.0, bill_hours / on_bill.day_run_gpu_hours), 0.0),
        cost_per_gpu_hour=ibis.ifelse(priced_hours, on_bill.bill_cost / bill_hours, 0.0),
        billed_cost_per_gpu_hour=ibis.ifelse(priced_hours, on_bill.bill_billed_cost / bill_hours, 0.0))
    priced = run_pieces.join(cells, [run_pieces[KEY] == cells[KEY], run_pieces.day == cells.day])
    capped_hours = priced.run_gpu_hours * priced.cap
    run_rows = _rows(priced, gpu_hours=capped_hours, cost=capped_hours * priced.cost_per_gpu_hour,
                     billed_cost=capped_hours * priced.billed_cost_per_gpu_hour)
    keyed_bill = matched_bill.mutate(**{KEY: matched_bill[on].cast("string")})
    tiers = keyed_bill.group_by(KEY).aggregate(tier=ibis.ifelse(
        (keyed_bill.pricing.nunique() == 1) & (keyed_bill.pricing.count() == keyed_bill.count()),
        keyed_bill.pricing.min(), ibis.null("string")))
    currency = bill_gpu.aggregate(bill_currency=bill_gpu.currency.min())
    both = run_rows.join(tiers, KEY).cross_join(currency)

    # the share of each matched billing piece the run export does not cover
    covered = billed.left_join(used, [billed[KEY] == used[KEY], billed.day == used.day])
    uncovered = covered.select(KEY, "day", uncovered_share=1 - ibis.least(
        covered.day_run_gpu_hours.fill_null(0), covered.bill_gpu_hours) / covered.bill_gpu_hours)
    left = bill_pieces.join(uncovered, [bill_pieces[KEY] == uncovered[KEY], bill_pieces.day == uncovered.day])
    residual = _rows(left, **{column: left[column] * left.uncovered_share for column in PRICED})

    joined = ibis.union(
        _canonical(both, schema, "both", currency=both.bill_currency, pricing=both.tier),
        _canonical(residual.filter(residual.gpu_hours > 0), schema, "billing"),
        _canonical(unmatched_bill, schema, "billing"),
        _canonical(billing.filter(~gpu(billing)), schema, "billing"),
        distinct=False)
    beyond = cells.aggregate(runs_gpu_hours_beyond_billing=ibis.greatest(
        cells.day_run_gpu_hours - cells.bill_gpu_hours, 0.0).sum())
    return joined, beyond


def _matched_stats(billing: ir.Table, runs: ir.Table, on: str, beyond: ir.Table) -> JoinStats:
    """The stats of a join in two queries: one row of sums over both sides (the billing rows against the run keys,
    the run rows against the billing GPU keys, and ``beyond``), and the unmatched keys."""
    _, run_keys, bill_keys = _gpu_rows_and_keys(billing, runs, on)
    bills = billing.left_join(run_keys.select(run_key=run_keys[KEY]), billing[on].cast("string") == run_keys[KEY])
    is_gpu = gpu(bills)
    matched = is_gpu & bills.run_key.notnull()
    bill_cost = bills.cost.fill_null(0)
    billing_sums = bills.aggregate(
        bill_gpu_hours=bills.gpu_hours.sum(where=is_gpu), bill_gpu_hours_matched=bills.gpu_hours.sum(where=matched),
        bill_cost=bill_cost.sum(where=is_gpu), bill_cost_matched=bill_cost.sum(where=matched),
        keys_matched=bills.run_key.nunique(where=is_gpu))
    run_rows = runs.left_join(bill_keys.select(bill_key=bill_keys[KEY]), runs[on].cast("string") == bill_keys[KEY])
    run_hours = run_rows.gpu_hours.clip(lower=0).fill_null(0)
    billed = run_rows.bill_key.notnull()
    run_sums = run_rows.aggregate(
        run_gpu_hours=run_hours.sum(), run_gpu_hours_matched=run_hours.sum(where=billed),
        runs_without_bill_gpu_hours=run_hours.sum(where=~billed), runs_without_bill_rows=run_rows.count(where=~billed))
    sums = _rows_of(billing_sums.cross_join(run_sums).cross_join(beyond)).iloc[0]
    unmatched = ibis.union(
        bill_keys.anti_join(run_keys, KEY).mutate(side=ibis.literal("billing")),
        run_keys.anti_join(bill_keys, KEY).mutate(side=ibis.literal("runs")), distinct=False)
    keys = _rows_of(unmatched.filter(unmatched[KEY].notnull()))
    value = columns.number
    bill_gpu_hours, run_gpu_hours = value(sums.bill_gpu_hours), value(sums.run_gpu_hours)
    return JoinStats(
        on=on, billing_missing=False, runs_missing=False,
        billing_gpu_hours=bill_gpu_hours,  # the GPU rows' hours: those of all rows with negative ones read as 0
        runs_gpu_hours=run_gpu_hours,
        billing_gpu_hours_matched_share=_share(value(sums.bill_gpu_hours_matched), bill_gpu_hours),
        billing_cost_matched_share=_share(value(sums.bill_cost_matched), value(sums.bill_cost)),
        runs_gpu_hours_matched_share=_share(value(sums.run_gpu_hours_matched), run_gpu_hours),
        keys_matched=int(sums.keys_matched),
        billing_keys_unmatched=tuple(sorted(str(key) for key in keys.loc[keys.side == "billing", KEY])),
        runs_keys_unmatched=tuple(sorted(str(key) for key in keys.loc[keys.side == "runs", KEY])),
        runs_gpu_hours_beyond_billing=value(sums.runs_gpu_hours_beyond_billing),
        runs_without_bill_gpu_hours=value(sums.runs_without_bill_gpu_hours),
        runs_without_bill_rows=int(sums.runs_without_bill_rows),
    )


def join_usage(billing: ir.Table | None, runs: ir.Table | None, on: str = "run_id",
               stats_from: ir.Table | None = None) -> tuple[ir.Table | None, JoinStats]:
    """Join a billing usage table and a run-export table (both canonical, on one backend) on ``on`` ("run_id" or
    "project").

    Returns ``(joined, stats)``. ``joined`` is a lazy table expression: the canonical columns plus ``join_side`` (see
    the module docstring for the method). ``stats`` is the `JoinStats` of the match. When either side is None the
    other is returned unchanged (None when both are). The stats take two queries (one when a side is None); the
    joined table runs none until it is executed. ``stats_from`` (None: the side present) is what the stats of a
    lone bill read: a workspace dataset's rollup by ``STATS_GRAIN`` read as rows, whose sums clipped at zero are the
    rows' (each group's GPU-hours are all above, below or at zero).
    """
    if on not in JOIN_KEYS:
        raise ValueError(f"join key must be one of {', '.join(JOIN_KEYS)}, not {on!r}")
    if billing is not None and runs is not None and ibis.get_backend(billing) is not ibis.get_backend(runs):
        raise ValueError("the billing table and the run export must be on the same engine to be joined; "
                         "bind both to one backend (dashboard.query.tables.usage_table)")
    if billing is None or runs is None:
        bill = billing if billing is None or stats_from is None else stats_from
        return (runs if billing is None else billing), _stats(on, bill, runs)
    joined, beyond = _joined(billing, runs, on)
    return joined, _matched_stats(billing, runs, on, beyond)


def match_warning(stats: JoinStats) -> str | None:
    """The warning to show beside the tiles when the join matched under ``LOW_MATCH_SHARE`` of the billed
    GPU-hours (None when both exports are loaded and enough matched, or when one is missing)."""
    share = stats.billing_gpu_hours_matched_share
    if stats.billing_missing or stats.runs_missing or share is None or share >= LOW_MATCH_SHARE:
        return None
    other = "project" if stats.on == "run_id" else "run_id"
    return (f"Only {number(share, 'fraction')} of billed GPU-hours matched the run export on {stats.on} "
            f"({stats.keys_matched} keys). Run states, failures and tokens cover that share only, and the "
            f"run export's unmatched hours are not added to the bill. Try joining on {other}. W&B run ids are "
            "random hashes no bill carries: join a W&B table on project, or join the bill's run tags with the "
            "Slurm export, whose run ids are job names (a W&B table's slurm_job_id column says which job a run "
            "was).")
