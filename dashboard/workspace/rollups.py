"""Rollups of a workspace dataset: its rows summed at a coarser grain at import, proven equal to the rows, and the
smallest one that answers a question chosen for it.

Each rollup is declared once (``ROLLUPS``: a time unit, the columns it groups by; every rollup keeps the same
``MEASURES``) and built by one function, ``grouped``, an Ibis expression any engine of the query layer runs (DuckDB
at import; Spark runs the same expression). A rollup lives beside the rows, ``rollups/<name>/month=YYYY-MM/``, one
file per month of the rows' start times, so a month appended rebuilds that month's files only (``build``).

Time. A row is counted in the day (or hour) of its start; a row that runs past the end of that day keeps its own
``start_s`` and ``end_s`` (UTC seconds) in the grain, so a figure that spreads a row over the days or hours it
covers spreads it from the rollup exactly as from the row (NULL for the rows within one unit: nearly all of a
billing export's hourly or daily lines).

Proofs. Sums are kept as ``DECIMAL(38, 9)``: each row's amount cast once, then summed exactly, so a total does not
depend on the order rows are added in. After building, ``prove`` reads each rollup back from its files and compares
its totals with the rows' per currency: rows, GPU-hours and both cost bases (``cost``, amortised or effective,
and ``billed_cost``), to the last of the nine decimals; ``RollupMismatch`` (the import is not published) names the
first that differs.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import partial
from pathlib import Path

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir
import pyarrow.parquet as pq
from ibis.backends import BaseBackend

from dashboard.workspace.datasets import USAGE, DatasetError, Metadata, open_table
from dashboard.workspace.writer import PARTITION

ROLLUPS_FOLDER = "rollups"
AMOUNT = dt.Decimal(38, 9)  # exact sums: 29 digits before the point, 9 after
UNIT_SECONDS = {"day": 86_400, "hour": 3_600}
SPAN = ("start_s", "end_s")  # a row's own times, kept in the grain when it runs past its day or hour
PROVEN = ("rows", "gpu_hours", "cost", "billed_cost")  # the totals compared with the rows', per currency
COST_BASES = ("cost", "billed_cost")


class RollupMismatch(DatasetError):
    """A rollup's totals differ from the rows'; the import that built it is not published."""


@dataclass(frozen=True)
class Measure:
    """One quantity of every rollup: ``kind`` "sum" (an exact sum of ``column``), "count" (rows with a value in
    ``column``; all rows for None) or "max" (the latest value of ``column``)."""

    name: str
    kind: str
    column: str | None


MEASURES: tuple[Measure, ...] = (
    Measure("rows", "count", None),
    Measure("gpu_hours", "sum", "gpu_hours"),
    Measure("cost", "sum", "cost"),
    Measure("billed_cost", "sum", "billed_cost"),
    Measure("tokens", "sum", "tokens"),
    Measure("gpu_hours_rows", "count", "gpu_hours"),  # rows with GPU-hours: a sum over none is NULL, not 0
    Measure("cost_rows", "count", "cost"),  # rows with a cost: a missing cost shows in rows - cost_rows
    Measure("last_start", "max", "period_start"),  # the latest start and end: a rollup read as rows (``as_rows``)
    Measure("last_end", "max", "period_end"),
)


@dataclass(frozen=True)
class Rollup:
    """A rollup's declaration: its name, its time unit ("day", "hour" or None: the whole dataset) and the canonical
    columns it groups by (``currency`` always among them: amounts of two currencies are never added)."""

    name: str
    unit: str | None
    columns: tuple[str, ...]

    @property
    def grain(self) -> tuple[str, ...]:
        """The rollup's group columns, its time unit's first."""
        return ((self.unit, *SPAN) if self.unit else ()) + self.columns

    @property
    def title(self) -> str:
        """What a page says read it ("daily rollup by team")."""
        unit = {"day": "daily", "hour": "hourly", None: "whole-period"}[self.unit]
        return f"{unit} rollup by {', '.join(self.columns)}"


ROLLUPS: tuple[Rollup, ...] = (
    # spend per day per team, one team's month, the filters' date range and labels
    Rollup("daily_team", "day", ("team", "pricing", "charge_kind", "currency")),
    # per day and project or run: Attribution over a date range, plan vs actual per run and day
    Rollup("daily_run", "day", ("team", "project", "run_id", "pricing", "charge_kind", "currency")),
    # GPU-hours by type per day: unit costs, the purchase mix
    Rollup("daily_gpu", "day", ("gpu_type", "pricing", "charge_kind", "currency")),
    # the load profile, reserved hours against the commitment
    Rollup("hourly", "hour", ("pricing", "charge_kind", "currency")),
    # whole-period totals per run and its state: top runs, waste, plan vs actual, unit costs
    Rollup("runs", None, ("team", "project", "run_id", "run_state", "pricing", "charge_kind", "gpu_type",
                          "currency")),
)
BY_NAME = {rollup.name: rollup for rollup in ROLLUPS}


def _measure(usage: ir.Table, measure: Measure) -> ir.Scalar:
    if measure.kind == "count":
        return usage.count() if measure.column is None else usage[measure.column].count()
    if measure.kind == "max":
        return usage[measure.column].max()
    return usage[measure.column].cast(AMOUNT).sum()


def grouped(usage: ir.Table, rollup: Rollup) -> ir.Table:
    """``usage`` (canonical rows, with their ``month`` partition when it has one) summed at ``rollup``'s grain
    (and month): an Ibis expression any engine runs."""
    keys: dict[str, ir.Value] = {PARTITION: usage[PARTITION]} if PARTITION in usage.columns else {}
    if rollup.unit:
        size = UNIT_SECONDS[rollup.unit]
        start = usage.period_start.epoch_seconds().cast("int64")
        end = ibis.greatest(ibis.coalesce(usage.period_end.epoch_seconds().cast("int64"), start), start)
        unit = start // size
        across = end > (unit + 1) * size
        null = ibis.null().cast("int64")
        keys.update({rollup.unit: unit, "start_s": ibis.ifelse(across, start, null),
                     "end_s": ibis.ifelse(across, end, null)})
    keys.update({column: usage[column] for column in rollup.columns})
    return usage.group_by(**keys).aggregate(**{m.name: _measure(usage, m) for m in MEASURES})


def folder(at: Path, rollup: Rollup) -> Path:
    """Where ``rollup`` of the version folder ``at`` lives."""
    return at / ROLLUPS_FOLDER / rollup.name


def stale(at: Path, months: Iterable[str], kept: list[dict] | None) -> list[str]:
    """The months of the version folder ``at`` whose rollups an import builds: ``months`` (those written), and every
    month of the rows when the ``kept`` entries (of the version appended to) hold other measures than ``MEASURES``
    (built before a measure was added: their files lack its column)."""
    names = [measure.name for measure in MEASURES]
    if any(entry.get("measures") != names for entry in kept or []):
        months = [*months, *(path.name.split("=", 1)[1] for path in (at / USAGE).glob(f"{PARTITION}=*"))]
    return sorted(set(months))


def build(backend: BaseBackend, at: Path, months: Iterable[str], built_at: str,
          kept: list[dict] | None = None) -> list[dict]:
    """Build every rollup of the version folder ``at`` for ``months`` (the month partitions written; the others'
    files are already there, ``kept``: the previous entries); each rollup's ``dataset.json`` entry."""
    months = sorted(months)
    previous = {entry["name"]: entry for entry in kept or []}
    entries = []
    usage = None
    if months:
        usage = _usage(backend, at)
        usage = usage.filter(usage[PARTITION].isin(months))
    for rollup in ROLLUPS:
        if usage is not None:
            staged = at / ROLLUPS_FOLDER / f".{rollup.name}"
            _write_by_month(backend, _over(backend, usage, rollup.name), staged)
            for month in months:
                target = folder(at, rollup) / f"{PARTITION}={month}"
                shutil.rmtree(target, ignore_errors=True)  # a linked file is unlinked, never written to
                if (staged / target.name).is_dir():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    (staged / target.name).rename(target)
            shutil.rmtree(staged, ignore_errors=True)
        counts: dict[str, int] = {}
        for path in sorted(folder(at, rollup).rglob("*.parquet")):
            month = path.parent.name.split("=", 1)[1]
            counts[month] = counts.get(month, 0) + _count(path)
        entries.append({"name": rollup.name, "grain": list(rollup.grain),
                        "measures": [m.name for m in MEASURES], "rows": sum(counts.values()),
                        "built_at": previous.get(rollup.name, {}).get("built_at", built_at)
                        if not set(months) & set(counts) else built_at,
                        "months": counts})
    return entries


def _write_by_month(backend: BaseBackend, table: ir.Table, target: Path) -> None:
    """``table`` written as Parquet under ``target``, one folder per value of its month column (the engine's own
    partitioned write: DuckDB's ``COPY … PARTITION_BY``, Spark's ``partitionBy``)."""
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    if getattr(backend, "name", "") == "duckdb":
        backend.to_parquet(table, str(target), partition_by=PARTITION, compression="zstd")
    else:
        backend.to_parquet(table, str(target), partitionBy=PARTITION)


def _count(path: Path) -> int:
    return int(pq.read_metadata(path).num_rows)


def _totals_of(table: ir.Table, summed: bool) -> ir.Table:
    """Per currency: the row count (the rows' own, or a rollup's ``rows`` ``summed``) and the exact sums of
    ``PROVEN``."""
    count = table["rows"].sum() if summed else table.count()
    return table.group_by("currency").aggregate(
        rows=count, **{name: table[name].cast(AMOUNT).sum() for name in PROVEN[1:]})


def _totals(backend: BaseBackend, table: ir.Table, summed: bool) -> dict[str | None, tuple]:
    frame = _over(backend, table, "totals of a rollup" if summed else "totals of the rows").to_pyarrow().to_pylist()
    return {row["currency"]: tuple(_exact(row[name]) for name in PROVEN) for row in frame}


_BUILDERS: dict[str, Callable[[ir.Table], ir.Table]] = {
    **{rollup.name: partial(grouped, rollup=rollup) for rollup in ROLLUPS},
    "totals of a rollup": partial(_totals_of, summed=True), "totals of the rows": partial(_totals_of, summed=False)}
_COMPILED: dict[tuple, str] = {}
STAND_IN = "planner_rollup_rows"
OPENED_TABLES = 64  # rollup tables kept open (by engine, version folder and rollup)
_OPENED: dict[tuple[int, str, str], ir.Table] = {}


def _over(backend: BaseBackend, table: ir.Table, builder: str) -> ir.Table:
    """``_BUILDERS[builder](table)`` as a table of ``backend``, its SQL compiled once per engine, builder and schema
    (an expression of a rollup takes longer to compile than to run on a small import)."""
    key = (backend.name, builder, table.schema())
    sql = _COMPILED.get(key)
    if sql is None:
        sql = str(backend.compile(_BUILDERS[builder](ibis.table(table.schema(), name=STAND_IN))))
        if len(_COMPILED) > 4 * len(_BUILDERS):
            _COMPILED.clear()
        _COMPILED[key] = sql
    source = str(backend.compile(table))
    return backend.sql(re.sub(rf'(["`]?){STAND_IN}\1', lambda _: f"({source})", sql))


def _exact(value: object) -> Decimal | int:
    if value is None:
        return Decimal(0)
    return value if isinstance(value, int) else Decimal(value)  # type: ignore[arg-type]


def prove(backend: BaseBackend, at: Path, entries: list[dict], months: Iterable[str]) -> None:
    """RollupMismatch unless, for ``months`` (those built; the others were proven when built), every rollup of
    ``entries`` in the version folder ``at`` totals the rows' amounts per currency exactly (rows, GPU-hours, cost,
    billed cost)."""
    months = sorted(months)
    if not months:
        return
    raw = _usage(backend, at)
    expected = _totals(backend, raw.filter(raw[PARTITION].isin(months)).drop(PARTITION), summed=False)
    for entry in entries:
        rollup = BY_NAME[entry["name"]]
        built = [month for month in months if entry["months"].get(month)]
        table = _partitioned(backend, folder(at, rollup)) if built else None
        found = _totals(backend, table.filter(table[PARTITION].isin(built)).drop(PARTITION), summed=True) \
            if table is not None else {}
        for currency in sorted(set(expected) | set(found), key=str):
            want = expected.get(currency, (0, Decimal(0), Decimal(0), Decimal(0)))
            got = found.get(currency, (0, Decimal(0), Decimal(0), Decimal(0)))
            for name, a, b in zip(PROVEN, want, got, strict=True):
                if a != b:
                    raise RollupMismatch(
                        f"The {rollup.title} totals {b:,} {name} in {currency or '(no currency)'} where the rows "
                        f"total {a:,}; the import was not published. Import the file again; if it happens again, "
                        "report it with the file.")


def _usage(backend: BaseBackend, at: Path) -> ir.Table:
    """The rows of the version folder ``at`` (its metadata not yet written) with their ``month`` partition."""
    return _partitioned(backend, at / USAGE)


def _partitioned(backend: BaseBackend, path: Path) -> ir.Table:
    """The month-partitioned Parquet folder ``path`` as a table of ``backend``, its ``month`` as text."""
    if getattr(backend, "name", "") == "duckdb":
        table = backend.read_parquet(str(path / "**" / "*.parquet"), hive_partitioning=True)
    else:
        table = backend.read_parquet(str(path))
    return table.mutate(**{PARTITION: table[PARTITION].cast("string")})


def read(backend: BaseBackend, at: Path, rollup: Rollup) -> ir.Table:
    """``rollup`` of the version folder ``at`` as a table of ``backend`` (opened once per engine, version and rollup:
    a version's files never change)."""
    key = (id(backend), str(at), rollup.name)
    table = _OPENED.get(key)
    if table is None:
        table = _partitioned(backend, folder(at, rollup))
        table = table.drop(PARTITION) if PARTITION in table.columns else table
        if len(_OPENED) >= OPENED_TABLES:
            _OPENED.pop(next(iter(_OPENED)))
        _OPENED[key] = table
    return table


@dataclass(frozen=True)
class Answer:
    """What answers a question: a rollup (None: the rows), its table and what the page says read it."""

    rollup: Rollup | None
    table: ir.Table
    label: str
    rows: int


def answers(rollup: Rollup, columns: Iterable[str], unit: str | None) -> bool:
    """Whether ``rollup`` answers a question grouping or filtering by ``columns`` (canonical names) at time ``unit``
    ("day", "hour" or None)."""
    return set(columns) <= set(rollup.columns) and (unit is None or unit == rollup.unit)


def choose(backend: BaseBackend, info: Metadata, at: Path, columns: Iterable[str], unit: str | None = None,
           measures: Iterable[str] = ()) -> Answer:
    """The smallest rollup of the dataset ``info`` (read from its version folder ``at``) that answers a question
    grouping or filtering by ``columns`` at time ``unit`` (and was built with ``measures``), as a table of
    ``backend`` with its label ("daily rollup by team, built 12:03"); the rows themselves ("the rows (1,000,000)")
    when none does."""
    columns, measures = tuple(columns), set(measures)
    entries = [entry for entry in getattr(info, "rollups", []) if entry.get("name") in BY_NAME
               and answers(BY_NAME[entry["name"]], columns, unit) and measures <= set(entry.get("measures", []))]
    if not entries:
        return Answer(None, open_table(backend, info.name, at), f"the rows ({info.rows:,})", info.rows)
    best = min(entries, key=lambda entry: (entry["rows"], entry["name"]))
    rollup = BY_NAME[best["name"]]
    built = datetime.fromisoformat(best["built_at"]).strftime("%H:%M")
    return Answer(rollup, read(backend, at, rollup), f"{rollup.title}, built {built}", int(best["rows"]))

