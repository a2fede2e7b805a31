"""Rollups of a workspace dataset: its rows summed at a coarser grain at import, proven equal to the rows, and the
smallest one that answers a question chosen for it.

Each rollup is declared once (``ROLLUPS``: a time unit, the columns it groups by; every rollup keeps the same
``MEASURES``). A row's keys and exact amounts are computed in one place, ``keyed`` (an Ibis expression any engine of
the query layer runs), and every rollup an import builds is one grouping set of one query over it (``sets_sql``:
``GROUP BY GROUPING SETS``, which DuckDB and Spark SQL both run), so the rows are read once whatever the number of
rollups. At import the query runs over each batch while it is in memory, as it is written (``Partials``), and the
batches' sums are summed per set at the end: the rows are not read back, except a month an append adds rows to (its
rows of before are read with the new ones). A rollup whose grain is within another's is not a set of the batches:
it is summed from that one's sums at the end (``derived``: the daily rollup by team from the one by run). A rollup
lives beside the rows, ``rollups/<name>/month=YYYY-MM/``, one file per month of the rows' start times, so a month
appended rebuilds that month's files only (``build``).

Size. A rollup pays when it is much smaller than the rows; its rows are bounded by its grain, not by the rows. An
import (or a replacement) keeps the rollups smallest first while together they hold at most
``PLANNER_ROLLUP_MAX_PERCENT`` (5) % of the rows or ``PLANNER_ROLLUP_FREE_ROWS`` (100,000) rows, whichever is more;
the others are not written and their questions read the rows. An append builds the rollups the version it appends to
has, and no other (the months before it have no files of the others).

Time. A row is counted in the day (or hour) of its start; a row that runs past the end of that day keeps its own
``start_s`` and ``end_s`` (UTC seconds) in the grain, so a figure that spreads a row over the days or hours it
covers spreads it from the rollup exactly as from the row (NULL for the rows within one unit: nearly all of a
billing export's hourly or daily lines).

Proofs. Sums are kept as ``DECIMAL(38, 9)``: each row's amount cast once, then summed exactly, so a total does not
depend on the order rows are added in. After building, ``prove`` reads every rollup back from its files and compares
its totals with the rows' (read from the rows' own files as written, their few measure columns only, in a query of
their own: not from the batches' sums) per currency: rows, GPU-hours and
both cost bases (``cost``, amortised or effective, and ``billed_cost``), to the last of the nine decimals;
``RollupMismatch`` (the import is not published) names the first that differs.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir
import pyarrow as pa
import pyarrow.parquet as pq
import sqlglot.expressions as sge
from ibis.backends import BaseBackend

from dashboard import settings
from dashboard.query import engine
from dashboard.query.columns import storage_name
from dashboard.workspace.datasets import USAGE, DatasetError, Metadata, open_table
from dashboard.workspace.writer import PARTITION

ROLLUPS_FOLDER = "rollups"
AMOUNT = dt.Decimal(38, 9)  # exact sums: 29 digits before the point, 9 after
UNIT_SECONDS = {"day": 86_400, "hour": 3_600}
SPAN = ("start_s", "end_s")  # a row's own times, kept in the grain when it runs past its day or hour
PROVEN = ("rows", "gpu_hours", "cost", "billed_cost")  # the totals compared with the rows', per currency
COST_BASES = ("cost", "billed_cost")
# Signs a rollup may group by: a row's GPU-hours or cost above, below or at zero (NULL: none). A figure that tests
# each row ("the GPU rows": GPU-hours > 0; "with a cost": cost ≠ 0) reads a rollup grouped by the sign the same:
# a sum of positive amounts is positive, of negative ones negative.
SIGNS = {"gpu_sign": "gpu_hours", "cost_sign": "cost", "tokens_sign": "tokens"}
# Keys a rollup may group by that are a function of the row: a storage line's name, NULL for any other row
COMPUTED_KEYS: dict[str, Callable[[ir.Table], ir.Value]] = {"storage_line": storage_name}


class RollupMismatch(DatasetError):
    """A rollup's totals differ from the rows'; the import that built it is not published."""


@dataclass(frozen=True)
class Measure:
    """One quantity of every rollup: ``kind`` "sum" (an exact sum of ``column``), "count" (rows with a value in
    ``column``; all rows for None), "max" or "min" (the latest or earliest value of ``column``)."""

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
    Measure("first_start", "min", "period_start"),  # the earliest start: Waste's first day (the jobs rollup as rows)
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
    # the load profile, reserved GPU rows against the commitment's lines with a cost
    Rollup("hourly", "hour", ("pricing", "charge_kind", "gpu_sign", "cost_sign", "currency")),
    # whole-period totals per run, its state and GPU type, by the signs: top runs, waste, plan vs actual, unit costs,
    # the prices paid per GPU type (the GPU rows with a cost), a project's tiles
    Rollup("runs", None, ("team", "project", "run_id", "run_state", "pricing", "charge_kind", "gpu_type",
                          "gpu_sign", "cost_sign", "tokens_sign", "currency")),
    # Waste's storage growth: each storage line's cost per month (its files' month), the other rows in one NULL line
    Rollup("storage", None, ("storage_line", "currency")),
)
# Plan vs actual's and Waste's interruptions: per run, state, tier and charge kind, by the signs of GPU-hours, cost
# and tokens and a segment's marks (``dashboard.query.segments``). Built apart, over every month at once (a run's
# segments cross months): ``dashboard.workspace.job_rollup``.
JOBS = Rollup("jobs", None, ("team", "project", "run_id", "run_state", "pricing", "charge_kind", "gpu_sign",
                             "cost_sign", "tokens_sign", "segment", "job_hours", "currency"))
BY_NAME = {rollup.name: rollup for rollup in (*ROLLUPS, JOBS)}


SET = "rollup_set"  # the grouping set a row of ``sets_sql`` belongs to (its GROUPING_ID)
_AGGREGATES = {"count": "COUNT", "sum": "SUM", "max": "MAX", "min": "MIN"}  # a measure's kind as SQL
_TYPES: dict[str, dt.DataType] = {"count": dt.int64, "sum": AMOUNT}  # a summed measure's type, by kind


def _span(unit: str) -> tuple[str, str]:
    """``keyed``'s names of a row's own start and end at ``unit`` (a rollup's ``SPAN``)."""
    return f"{unit}_start_s", f"{unit}_end_s"


def keyed(usage: ir.Table) -> ir.Table:
    """Each row of ``usage`` (canonical rows, with their ``month`` partition when it has one) with every rollup's
    keys (its day and hour, with its own span at each unit it runs past, and the rollups' columns) and the columns
    the measures read, a summed one cast to ``AMOUNT``: an Ibis expression any engine runs."""
    keys: dict[str, ir.Value] = {PARTITION: usage[PARTITION]} if PARTITION in usage.columns else {}
    start = usage.period_start.epoch_seconds().cast("int64")
    end = ibis.greatest(ibis.coalesce(usage.period_end.epoch_seconds().cast("int64"), start), start)
    null = ibis.null().cast("int64")
    for unit, size in UNIT_SECONDS.items():
        at = start // size
        across = end > (at + 1) * size
        first, last = _span(unit)
        keys.update({unit: at, first: ibis.ifelse(across, start, null), last: ibis.ifelse(across, end, null)})
    keys.update({column: _sign(usage[SIGNS[column]]) if column in SIGNS
                 else COMPUTED_KEYS[column](usage) if column in COMPUTED_KEYS else usage[column]
                 for rollup in ROLLUPS for column in rollup.columns})
    summed = {m.column for m in MEASURES if m.kind == "sum"}
    read = {m.column: usage[m.column].cast(AMOUNT) if m.column in summed else usage[m.column]
            for m in MEASURES if m.column is not None}
    return usage.select(**keys, **read)


def _sign(value: ir.NumericValue) -> ir.IntegerValue:
    """1, -1 or 0 as ``value`` is above, below or at zero; NULL for none."""
    return ibis.cases((value > 0, 1), (value < 0, -1), (value == 0, 0), else_=ibis.null()).cast("int8")


def _grouped_by(rollup: Rollup, month: bool) -> list[str]:
    """``keyed``'s columns ``rollup`` groups by (its month first when the rows have one)."""
    unit = (rollup.unit, *_span(rollup.unit)) if rollup.unit else ()
    return [PARTITION] * month + [*unit, *rollup.columns]


def set_ids(rollups: Sequence[Rollup], month: bool) -> tuple[list[str], dict[str, int]]:
    """The key columns of ``sets_sql`` for ``rollups`` (in the order the grouping sets first name them, as Spark
    requires), and each rollup's GROUPING_ID there (a bit per key column, the first the highest, set for the columns
    it does not group by)."""
    keys = list(dict.fromkeys(column for rollup in rollups for column in _grouped_by(rollup, month)))
    ids = {rollup.name: sum(1 << (len(keys) - 1 - i) for i, column in enumerate(keys)
                            if column not in _grouped_by(rollup, month)) for rollup in rollups}
    return keys, ids


def sets_sql(backend: BaseBackend, usage: ir.Table, rollups: Sequence[Rollup]) -> str:
    """One query (``backend``'s SQL) of every rollup of ``rollups`` over ``usage``: a grouping set each, its rows
    told apart by ``SET`` (``set_ids``), the measures named as in ``MEASURES``."""
    rows = keyed(usage)
    dialect = backend.compiler.dialect
    keys, ids = set_ids(rollups, PARTITION in usage.columns)

    def name(column: str) -> str:
        return sge.to_identifier(column, quoted=True).sql(dialect)

    measures = [f"{_AGGREGATES[m.kind]}({name(m.column) if m.column else '*'}) AS {name(m.name)}" for m in MEASURES]
    sets = ", ".join("(" + ", ".join(name(c) for c in _grouped_by(r, PARTITION in usage.columns)) + ")"
                     for r in rollups)
    listed = ", ".join(name(c) for c in keys)
    return (f"SELECT GROUPING_ID({listed}) AS {name(SET)}, {listed}, {', '.join(measures)} "
            f"FROM ({backend.compile(rows)}) AS {name('keyed')} GROUP BY GROUPING SETS ({sets})")


def _one(sets: ir.Table, rollup: Rollup, set_id: int) -> ir.Table:
    """``rollup``'s rows of the grouping sets ``sets``, its columns named as it declares them (``grain``)."""
    rows = sets.filter(sets[SET] == set_id)
    spans = dict(zip(SPAN, _span(rollup.unit), strict=True)) if rollup.unit else {}
    month = [PARTITION] if PARTITION in sets.columns else []
    return rows.select(*month, *(rows[spans.get(c, c)].name(c) for c in rollup.grain),
                       *(m.name for m in MEASURES))


def folder(at: Path, rollup: Rollup) -> Path:
    """Where ``rollup`` of the version folder ``at`` lives."""
    return at / ROLLUPS_FOLDER / rollup.name


def stale(at: Path, months: Iterable[str], kept: list[dict] | None) -> list[str]:
    """The months of the version folder ``at`` whose rollups an import builds: ``months`` (those written), and every
    month of the rows when the ``kept`` entries (of the version appended to) hold other measures than ``MEASURES``
    or another grain than their declaration's (built before a measure or column was added: their files lack it)."""
    names = [measure.name for measure in MEASURES]
    if any(entry.get("measures") != names or not _as_declared(entry) for entry in kept or []):
        months = [*months, *(path.name.split("=", 1)[1] for path in (at / USAGE).glob(f"{PARTITION}=*"))]
    return sorted(set(months))


def _as_declared(entry: dict) -> bool:
    """Whether a ``dataset.json`` rollup entry has its declaration's grain (``ROLLUPS``)."""
    rollup = BY_NAME.get(entry.get("name", ""))
    return rollup is not None and entry.get("grain") == list(rollup.grain)


def _within_budget(sizes: dict[str, int], rows: int) -> list[Rollup]:
    """The rollups kept for ``rows`` rows when they would hold ``sizes`` rows: smallest first (declared order among
    equals) while together within ``PLANNER_ROLLUP_MAX_PERCENT`` % of the rows or ``PLANNER_ROLLUP_FREE_ROWS``,
    whichever is more."""
    bound = max(rows * settings.limit(settings.ROLLUP_MAX_PERCENT) // 100, settings.limit(settings.ROLLUP_FREE_ROWS))
    kept, total = [], 0
    for rollup in sorted(ROLLUPS, key=lambda r: sizes.get(r.name, 0)):
        total += sizes.get(rollup.name, 0)
        if total > bound:
            break
        kept.append(rollup)
    return [rollup for rollup in ROLLUPS if rollup in kept]


SUM_ROWS = 200_000  # rows of batches summed in one query (``Partials.add``): 400,000 took as long and 150 MB more
COMPACT_ROWS = 500_000  # the batches' sums kept before they are summed together (``compact``; 10⁶: 165 MB more)


class Partials:
    """The grouping sets (``sets_sql``) of the rows an import writes, summed batch by batch while each batch is in
    memory (``add``, the writer's ``observe``) into a table of the import's DuckDB connection ``backend`` (it spills
    to disk past the connection's memory limit), for ``rollups``; ``build`` sums them per set once the rows are
    written. A month of ``existing`` (the months of the version appended to) is not complete from the batches alone:
    ``build`` reads its rows back. Once the table holds more than ``COMPACT_ROWS`` rows, and twice as many as after
    the last time, its sums are summed in place (``compact``): a batch meets only part of each grain, so its sums are
    not much fewer than its rows until the grain is full, and the table stays a few times the rollups' size, not a
    share of the rows, for the same total work. A rollup derived from another of ``rollups`` (``derived``) is not
    summed per batch (``grouped`` are): ``summed`` sums it from its source's sums once the rows are written. A batch
    is summed on a worker thread of its own, with the batches before it up to ``SUM_ROWS`` rows in one query (one
    query at a time: DuckDB runs without the GIL; a query's fixed cost and its sums per row fall as it grows), while
    the import reads on; ``close`` (or ``drop``) before the connection is closed."""

    def __init__(self, backend: BaseBackend, rollups: Sequence[Rollup], existing: Iterable[str] = ()) -> None:
        self.backend = backend
        self.rollups = list(rollups)
        self.sources = derived(self.rollups)
        self.grouped = [rollup for rollup in self.rollups if rollup.name not in self.sources]
        self.existing = set(existing)
        self.months: set[str] = set()
        self.table = f"rollup_partials_{uuid.uuid4().hex}"
        self._batch = f"rollup_batch_{uuid.uuid4().hex}"
        self._sql: str | None = None  # the batch's grouping-sets query, compiled once
        self._made = False
        self._rows = 0  # rows in the table
        self._compact_at = COMPACT_ROWS
        self._worker: ThreadPoolExecutor | None = None  # sums a batch while the next is read (``add``)
        self._pending: Future[None] | None = None
        self._waiting: list[pa.Table] = []  # batches not yet summed, with their month
        self._waiting_rows = 0

    def add(self, month: str, rows: pa.Table) -> None:
        """Add the grouping sets of ``rows`` (canonical rows as written, ``writer.SCHEMA``) of ``month``: kept until
        ``SUM_ROWS`` rows are waiting, then summed together on the worker thread while the caller reads on, one
        group of batches at a time (the previous group's sums are waited for first, and its error raised here)."""
        if not self.rollups or not rows.num_rows:
            return
        self.months.add(month)
        self._waiting.append(rows.append_column(PARTITION, pa.repeat(pa.scalar(month), rows.num_rows)))
        self._waiting_rows += rows.num_rows
        if self._waiting_rows >= SUM_ROWS:
            self._submit()

    def _submit(self) -> None:
        """Sum the batches waiting on the worker thread, once the group before them is summed."""
        self._wait()
        if not self._waiting:
            return
        waiting, self._waiting, self._waiting_rows = self._waiting, [], 0
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rollup-sums")
        self._pending = self._worker.submit(self._add, pa.concat_tables(waiting))

    def _wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def settle(self) -> None:
        """Sum the batches still waiting and wait for every sum (``add``); raise their error."""
        self._submit()
        self._wait()

    def close(self) -> None:
        """Wait for the batches being summed, ignoring their error (the import stops), drop those waiting, and end
        the worker thread."""
        self._waiting, self._waiting_rows = [], 0
        with suppress(Exception):
            self._wait()
        if self._worker is not None:
            self._worker.shutdown()
            self._worker = None

    def _add(self, rows: pa.Table) -> None:
        """Add the grouping sets of ``rows`` (canonical rows with their ``month``) to the table."""
        con = self.backend.con
        con.register(self._batch, rows)
        try:
            if self._sql is None:
                self._sql = sets_sql(self.backend, self.backend.table(self._batch), self.grouped)
            self._insert(self._sql)
        finally:
            con.unregister(self._batch)
        if self._rows > self._compact_at:
            self.compact()

    def compact(self) -> None:
        """Replace the table's rows by their sums per set and grain (``summed``)."""
        con, summed = self.backend.con, self._summed_batches()
        if summed is None:
            return
        con.execute(f"CREATE TEMP TABLE {self.table}_summed AS {self.backend.compile(summed)}")
        con.execute(f"DROP TABLE {self.table}")
        con.execute(f"ALTER TABLE {self.table}_summed RENAME TO {self.table}")
        self._rows = self._count()
        self._compact_at = max(COMPACT_ROWS, 2 * self._rows)

    def complete(self, month: str) -> bool:
        """Whether every row of ``month`` was added: it was written, and the version appended to had none."""
        return month in self.months and month not in self.existing

    def read_back(self, usage: ir.Table, months: Sequence[str]) -> None:
        """Replace the sets of ``months`` by those of their rows ``usage`` (with their ``month``) read back."""
        self.settle()
        if self._made:
            listed = ", ".join(sge.convert(month).sql("duckdb") for month in months)
            self.backend.con.execute(f"DELETE FROM {self.table} WHERE {PARTITION} IN ({listed})")
        self._insert(sets_sql(self.backend, usage.filter(usage[PARTITION].isin(months)), self.grouped))

    def _insert(self, sql: str) -> None:
        verb = f"INSERT INTO {self.table} BY NAME " if self._made else f"CREATE TEMP TABLE {self.table} AS "
        self.backend.con.execute(verb + sql)
        self._made = True
        self._rows = self._count()

    def _count(self) -> int:
        return int(self.backend.con.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0])

    def _summed_batches(self) -> ir.Table | None:
        """The ``grouped`` sets of every row added, the batches' sums summed per set and grain (their GROUPING_IDs
        among ``grouped``); None when none was added."""
        if not self._made:
            return None
        parts = self.backend.table(self.table)
        keys, _ = set_ids(self.grouped, month=True)
        return parts.group_by([SET, *keys]).aggregate(**_summed_again(parts))

    def summed(self) -> ir.Table | None:
        """The sets of every rollup of ``rollups`` over the rows added (GROUPING_IDs among ``rollups``: ``set_ids``):
        the batches' sums summed per set and grain, and each derived rollup's summed from its source's (None when
        none was added)."""
        self.settle()
        if not self.sources:
            return self._summed_batches()
        if not self._made:
            return None
        self.compact()  # the table holds the grouped sets' sums, a row per set and grain
        parts = self.backend.table(self.table)
        keys, ids = set_ids(self.rollups, month=True)
        _, made = set_ids(self.grouped, month=True)
        renamed = ibis.cases(*((parts[SET] == made[rollup.name], ids[rollup.name]) for rollup in self.grouped))
        own = parts.select(renamed.cast(parts[SET].type()).name(SET), *keys,
                           *(parts[m.name].cast(_TYPES.get(m.kind, parts[m.name].type())).name(m.name)
                             for m in MEASURES))
        return ibis.union(own, *(_derived(parts.filter(parts[SET] == made[source.name]), BY_NAME[name], ids[name],
                                          own.schema()) for name, source in self.sources.items()), distinct=False)

    def drop(self) -> None:
        """Drop the table of partial sums (the batch being summed waited for first)."""
        self.close()
        self.backend.con.execute(f"DROP TABLE IF EXISTS {self.table}")


def derived(rollups: Sequence[Rollup]) -> dict[str, Rollup]:
    """Each rollup of ``rollups`` whose grain is within another's of them (the same time unit, fewer columns),
    with the one it is summed from: the source with the fewest columns among those within no other's. Its rows are
    its source's summed over the source's further columns: sums of exact sums, counts and maxima, as from the rows
    (the daily rollup by team is the one by run summed over project and run)."""
    def within(rollup: Rollup, other: Rollup) -> bool:
        return rollup.unit == other.unit and set(rollup.columns) < set(other.columns)

    roots = [rollup for rollup in rollups if not any(within(rollup, other) for other in rollups)]
    return {rollup.name: min((root for root in roots if within(rollup, root)), key=lambda root: len(root.columns))
            for rollup in rollups if rollup not in roots}


def _summed_again(sums: ir.Table) -> dict[str, ir.Value]:
    """``MEASURES`` of the rows whose measures ``sums`` holds: sums of its exact sums and counts, maxima of its
    maxima, minima of its minima."""
    return {m.name: sums[m.name].max() if m.kind == "max" else sums[m.name].min() if m.kind == "min"
            else sums[m.name].sum().cast(_TYPES[m.kind]) for m in MEASURES}


def _derived(source: ir.Table, rollup: Rollup, set_id: int, schema: ibis.Schema) -> ir.Table:
    """``rollup``'s set (GROUPING_ID ``set_id``) summed from its source's set ``source``, as rows of ``schema``
    (that of the sets: the keys it does not group by NULL)."""
    by = _grouped_by(rollup, month=True)
    sums = source.group_by(by).aggregate(**_summed_again(source))
    measures = [m.name for m in MEASURES]
    keys = [name for name in schema.names if name != SET and name not in measures]
    return sums.select(ibis.literal(set_id, schema[SET]).name(SET),
                       *(sums[key] if key in by else ibis.null(schema[key]).name(key) for key in keys),
                       *(sums[name].cast(schema[name]).name(name) for name in measures))


def chosen(kept: list[dict] | None) -> list[Rollup]:
    """The rollups an import builds: every one for a new dataset (``kept`` None; ``build`` keeps those within the
    budget), those of the version appended to (its ``kept`` entries) for an append."""
    names = {entry["name"] for entry in kept or []}
    return list(ROLLUPS) if kept is None else [rollup for rollup in ROLLUPS if rollup.name in names]


def build(backend: BaseBackend, at: Path, months: Iterable[str], built_at: str,
          kept: list[dict] | None = None, partials: Partials | None = None) -> list[dict]:
    """Build the rollups of the version folder ``at`` for ``months`` (the month partitions written; the others'
    files are already there); each rollup's ``dataset.json`` entry. ``kept``: the entries of the version appended
    to (its rollups are built, and no other); None for a new dataset (the rollups within the size budget).
    ``partials``: the sets summed as the rows were written (those of ``chosen(kept)``); the months it does not
    hold whole (``Partials.complete``) are read back from the rows' files, every month without it."""
    if partials is not None:
        partials.settle()  # its last batch summed before this thread queries the connection
    months = sorted(months)
    previous = {entry["name"]: entry for entry in kept or []}
    rollups = chosen(kept)
    if months and rollups:
        partials = partials or Partials(backend, rollups)
        if missing := [month for month in months if not partials.complete(month)]:
            partials.read_back(_usage(backend, at), missing)
        summed = partials.summed()
        if summed is not None:
            rollups = _built_from(backend, summed.cache(), at, months, rollups, kept is None)
        partials.drop()
    entries = []
    for rollup in rollups:
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


def _built_from(backend: BaseBackend, sets: ir.Table, at: Path, months: list[str], rollups: list[Rollup],
                budgeted: bool) -> list[Rollup]:
    """Write each rollup of ``rollups`` (those within the size budget when ``budgeted``) for ``months`` from its
    grouping set of ``sets``, then release ``sets``; the rollups written."""
    _, ids = set_ids(rollups, month=True)
    try:
        if budgeted:  # each set sums every row: any set's total is the rows'
            counted = sets.group_by(SET).aggregate(n=sets.count(), rows=sets["rows"].sum()).to_pyarrow()
            sizes = {row[SET]: row["n"] for row in counted.to_pylist()}
            rollups = _within_budget({rollup.name: sizes.get(ids[rollup.name], 0) for rollup in rollups},
                                     max((row["rows"] for row in counted.to_pylist()), default=0))
        for rollup in rollups:
            _write_rollup(backend, _one(sets, rollup, ids[rollup.name]), at, rollup, months)
    finally:
        sets.release()
    return rollups


def _write_rollup(backend: BaseBackend, table: ir.Table, at: Path, rollup: Rollup, months: list[str]) -> None:
    """``rollup``'s rows ``table`` for ``months`` written in the version folder ``at``, each month's folder replacing
    the one there (a linked file is unlinked, never written to)."""
    staged = at / ROLLUPS_FOLDER / f".{rollup.name}"
    _write_by_month(backend, table, staged)
    for month in months:
        target = folder(at, rollup) / f"{PARTITION}={month}"
        shutil.rmtree(target, ignore_errors=True)
        if (staged / target.name).is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            (staged / target.name).rename(target)
    shutil.rmtree(staged, ignore_errors=True)


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


_NONE = (0, Decimal(0), Decimal(0), Decimal(0))


def _totals(table: ir.Table, count: ir.Value, by: Sequence[str] = ()) -> dict[tuple, tuple]:
    """Per ``by`` and currency: the row count ``count`` and the exact sums of ``PROVEN`` of ``table``."""
    frame = table.group_by([*by, "currency"]).aggregate(
        rows=count, **{name: table[name].cast(AMOUNT).sum() for name in PROVEN[1:]}).to_pyarrow().to_pylist()
    return {(*(row[key] for key in by), row["currency"]): tuple(_exact(row[name]) for name in PROVEN)
            for row in frame}


def _exact(value: object) -> Decimal | int:
    if value is None:
        return Decimal(0)
    return value if isinstance(value, int) else Decimal(value)  # type: ignore[arg-type]


def prove(backend: BaseBackend, at: Path, entries: list[dict], months: Iterable[str]) -> None:
    """RollupMismatch unless, for ``months`` (those built; the others were proven when built), every rollup of
    ``entries`` in the version folder ``at`` totals the rows' amounts per currency exactly (rows, GPU-hours, cost,
    billed cost): the rows' totals in one query of their files, every rollup's in one query of theirs."""
    months = sorted(months)
    if not months or not entries:
        return
    raw = _usage(backend, at)
    raw = raw.filter(raw[PARTITION].isin(months))
    expected = {key[0]: value for key, value in _totals(raw, raw.count()).items()}
    parts = []
    for entry in entries:
        built = [month for month in months if entry["months"].get(month)]
        if built:
            table = _partitioned(backend, folder(at, BY_NAME[entry["name"]]))
            table = table.filter(table[PARTITION].isin(built))
            parts.append(table.select(ibis.literal(entry["name"]).name("rollup"), "currency", *PROVEN))
    found = _totals(union := ibis.union(*parts, distinct=False), union["rows"].sum(), ("rollup",)) if parts else {}
    for entry in entries:
        rollup = BY_NAME[entry["name"]]
        currencies = set(expected) | {currency for name, currency in found if name == rollup.name}
        for currency in sorted(currencies, key=str):
            want = expected.get(currency, _NONE)
            got = found.get((rollup.name, currency), _NONE)
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
    with engine.lock(backend):  # a statement of the connection every session shares: one at a time
        if getattr(backend, "name", "") == "duckdb":
            table = backend.read_parquet(str(path / "**" / "*.parquet"), hive_partitioning=True)
        else:
            table = backend.read_parquet(str(path))
    return table.mutate(**{PARTITION: table[PARTITION].cast("string")})


OPENED_TABLES = 64  # rollup tables kept open (by engine, version folder and rollup)
_OPENED: dict[tuple[int, str, str], ir.Table] = {}


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
    entries = [entry for entry in getattr(info, "rollups", []) if _as_declared(entry)
               and answers(BY_NAME[entry["name"]], columns, unit) and measures <= set(entry.get("measures", []))]
    if not entries:
        return Answer(None, open_table(backend, info.name, at), f"the rows ({info.rows:,})", info.rows)
    best = min(entries, key=lambda entry: (entry["rows"], entry["name"]))
    rollup = BY_NAME[best["name"]]
    built = datetime.fromisoformat(best["built_at"]).strftime("%H:%M")
    return Answer(rollup, read(backend, at, rollup), f"{rollup.title}, built {built}", int(best["rows"]))

