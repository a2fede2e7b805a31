"""A workspace dataset's rollups read as usage rows, for the Retrospective's figures (issue 52): ``as_rows`` turns
a rollup (``dashboard.workspace.rollups``) into rows a figure's own queries read as they read the dataset's, and
``chooser`` gives a page's view the smallest rollup that holds what a figure reads (``RetroView.rollups``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

import ibis
import ibis.expr.types as ir
from ibis.backends import BaseBackend

from dashboard.ingest import plausible
from dashboard.query import engine, opened
from dashboard.workspace.datasets import Metadata
from dashboard.workspace.rollups import BY_NAME, JOBS, OPENED_TABLES, Answer, Rollup, choose

AS_ROWS = ("rows", "gpu_hours", "cost", "tokens", "gpu_hours_rows", "cost_rows", "last_start", "last_end")  # read
_OPENED: dict[tuple[int, str, str], ir.Table] = {}  # rollups read as rows, as ``rollups.read`` keeps them
STORAGE = BY_NAME["storage"]


def as_rows(table: ir.Table, rollup: Rollup) -> ir.Table:
    """``rollup``'s ``table`` read as usage rows, for a figure that sums GPU-hours and cost by the rollup's columns
    (and spreads them over days or hours): a row per rollup row with its columns and its sums as ``gpu_hours`` and
    ``cost`` (floats), its ``tokens`` sum and its count of rows as ``row_count``, and, for a time rollup, its latest
    start and end as ``period_start`` and ``period_end``.
    Every row of a rollup row starts in its day or hour and ends by the unit's end, or else keeps its own start and
    end in the grain, so a spread over days or hours, a date filter and the latest instant read as over the rows.
    One more row of NULL (0 for the other sum) where some row had none: a sum skipping NULLs and a test that a row
    is NULL read as over the rows too (its ``row_count`` is 0, its ``tokens`` NULL); none for a sum the rollup
    groups by the sign of (``gpu_sign``, ``cost_sign``): its rows' sum is NULL exactly where each row's is, so the
    rows of a rollup by both signs read each row test of GPU-hours and cost as the rows do. No count of rows (but
    the sum of ``row_count``), other row test of a sum or other column can be read from it: a figure that needs
    one reads the rows."""
    if rollup.name == JOBS.name:
        return _jobs_as_rows(table)
    if rollup.name == STORAGE.name:
        return _storage_as_rows(table)
    keep = list(rollup.columns)
    times = {"period_start": table.last_start, "period_end": table.last_end} if rollup.unit else {}
    sums = table.select(*keep, **times, gpu_hours=table.gpu_hours.cast("float64"), cost=table.cost.cast("float64"),
                        tokens=table.tokens.cast("float64"), row_count=table["rows"].cast("int64"))
    counted = [count for count, sign in (("gpu_hours_rows", "gpu_sign"), ("cost_rows", "cost_sign"))
               if sign not in keep]  # a sum grouped by its sign is NULL exactly where each of its rows' is
    if not counted:
        return sums
    gaps = table.filter(ibis.or_(*(table[count] < table["rows"] for count in counted)))
    null = ibis.null().cast("float64")

    def missing(count: str) -> ir.FloatingValue:
        return ibis.ifelse(gaps[count] < gaps["rows"], null, 0.0) if count in counted else ibis.literal(0.0)

    nulls = gaps.select(*keep, **{name: gaps[value.get_name()] for name, value in times.items()},
                        gpu_hours=missing("gpu_hours_rows"), cost=missing("cost_rows"), tokens=null,
                        row_count=ibis.literal(0, "int64"))
    return ibis.union(sums, nulls, distinct=False)


def _jobs_as_rows(table: ir.Table) -> ir.Table:
    """The jobs rollup's ``table`` read as usage rows: a row per rollup row with its columns, its sums as
    ``gpu_hours``, ``cost`` and ``tokens`` (floats), its count of rows as ``rows`` (``waste.row_count``) and
    ``row_count`` (as the other rollups read as rows: ``units.rollup_unit_sums``), its
    earliest and latest start as ``period_start`` and ``last_start`` (Waste's first and last day). It groups
    by the signs of all three, so a sum is NULL exactly where its rows had none, and a test of each row's GPU-hours,
    cost or tokens reads its sum the same; its segment marks stand in for the order of a run's rows in time."""
    return table.select(*JOBS.columns, gpu_hours=table.gpu_hours.cast("float64"), cost=table.cost.cast("float64"),
                        tokens=table.tokens.cast("float64"), rows=table["rows"],
                        row_count=table["rows"].cast("int64"), period_start=table.first_start,
                        last_start=table.last_start)


def _storage_as_rows(table: ir.Table) -> ir.Table:
    """The storage rollup's ``table`` read as rows: each storage line's (``storage_line``, NULL for the other rows)
    cost of a month as ``cost`` (a float; its lines all have a positive cost), its count of rows as ``row_count`` and
    its latest start as ``period_start`` (in the month of the rollup file it was summed in: the month of every
    start it sums)."""
    return table.select(*STORAGE.columns, cost=table.cost.cast("float64"), row_count=table["rows"].cast("int64"),
                        period_start=table.last_start)


class Chooser:
    """The questions' chooser of a page's view (``dashboard.retro.view.Rollups``) over the dataset ``info`` (its
    version folder ``at``): for the columns and time unit a figure reads, its smallest rollup read as rows (None:
    the rows) and what the page says read it ("the daily rollup by team, …, built 12:03", "the rows (1,000)"); for
    no columns (None), the rows. ``checked``: every row was checked at import against today's plausibility bounds
    (the dataset's record of them equals ``plausible.bounds()``)."""

    def __init__(self, backend: BaseBackend, info: Metadata, at: Path) -> None:
        self.backend, self.info, self.at = backend, info, at
        self.checked = bool(info.plausible) and info.plausible == plausible.bounds()

    def __call__(self, columns: tuple[str, ...] | None, unit: str | None) -> tuple[ir.Table | None, str]:
        if columns is None:
            return None, f"the rows ({self.info.rows:,})"
        answer = rows_answer(self.backend, self.info, self.at, columns, unit)
        return (None, answer.label) if answer.rollup is None else (answer.table, f"the {answer.label}")


def chooser(backend: BaseBackend, info: Metadata, at: Path) -> Chooser:
    """The ``Chooser`` of the dataset ``info`` (its version folder ``at``) on ``backend``."""
    return Chooser(backend, info, at)


def rows_answer(backend: BaseBackend, info: Metadata, at: Path, columns: Iterable[str],
                unit: str | None = None) -> Answer:
    """``choose``'s answer with the rollup read as rows (``as_rows``; built once per engine, version and rollup, and
    its small results kept, as a version's files never change); the rows when no rollup answers."""
    with engine.lock(backend):  # opening a table is a statement of the engine: one at a time, as every query
        answer = choose(backend, info, at, columns, unit, measures=AS_ROWS)
    if answer.rollup is None:
        return answer
    key = (id(backend), str(at), answer.rollup.name)
    table = _OPENED.get(key)
    if table is None:
        table = opened.fixed(as_rows(answer.table, answer.rollup))
        if len(_OPENED) >= OPENED_TABLES:
            _OPENED.pop(next(iter(_OPENED)))
        _OPENED[key] = table
    return dataclasses.replace(answer, table=table)
