"""One Retrospective view: the value a page run makes once from its sources and filters (`RetroView`), which the
page's tabs, the report, the warm-up and the bench read instead of loose arguments.

It holds the bound tables (the joined usage, the filtered view of it, the amortised bill and the run export), the
key that names their contents (``data_key``: the imports' content keys and the join key; the same key always
means the same tables), the filters, the join, the bill's currency and its money formatter, the plan compared with
and the widgets' choices (`Choices`). Pure: never imports streamlit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from dashboard.core.scenario import Scenario, default_scenario
from dashboard.format import USD, money
from dashboard.ingest.run_states import FAILED_STATES
from dashboard.query.distinct import distinct_values
from dashboard.query.opened import Table
from dashboard.retro import filters as row_filters
from dashboard.retro.amortise import Amortisation
from dashboard.retro.budgets import view_id
from dashboard.retro.join import JoinStats
from dashboard.retro.units import SUMS_GRAIN, TOKENS_GRAIN, UnitCosts, rollup_unit_sums, unit_costs

EXPORT_BUDGET_USD = 1_000_000.0  # the bundled quarter's budget for its whole export


@dataclass(frozen=True)
class Filters:
    """The sidebar's filters: the first and last UTC day (None without dates) and the teams, projects and pricing
    tiers kept (None: all)."""

    start: date | None = None
    end: date | None = None
    teams: tuple[str, ...] | None = None
    projects: tuple[str, ...] | None = None
    pricing: tuple[str, ...] | None = None

    def as_tuple(self) -> tuple[Any, ...]:
        """``(start, end, teams, projects, pricing)``, as `dashboard.retro.filters.filtered` takes them."""
        return self.start, self.end, self.teams, self.projects, self.pricing


@dataclass(frozen=True)
class Choices:
    """What the page's widgets chose for the figures (hashable: part of the report's cache key); a widget whose tab
    is closed gives its default."""

    freq: str = "D"
    by: str = "team"
    metric: str = "cost"
    export_budget: float | None = EXPORT_BUDGET_USD
    view_budgets: tuple[tuple[str, float], ...] = ()
    quarter: str | None = None  # the quarter of the running total ("2025 Q2"; None: the latest)
    quarter_budgets: tuple[tuple[str, float], ...] = ()  # earlier quarters' whole-export budgets by label
    main_runs: tuple[str, ...] | None = None  # None: the page's suggestion
    failed_states: tuple[str, ...] = tuple(FAILED_STATES)
    gap_unit: str = "usd"


# A workspace dataset's rollups, chosen per question: for the columns a question groups and filters by (None: none,
# the rows asked for) and its time unit ("day", "hour" or None), the smallest rollup that answers it read as rows
# (None: the rows) and what the page says read it ("the daily rollup by team, …, built 12:03", "the rows (1,000)").
Rollups = Callable[[tuple[str, ...] | None, str | None], tuple[Table | None, str]]


@dataclass(frozen=True, eq=False)
class RetroView:
    """One run's Retrospective view (see the module's docstring). ``bounds`` is what the filters offer over the whole
    export (`dashboard.retro.filters.filter_options`), ``stats`` the join's match figures, ``amortisation`` what was
    done with commitments, ``notes`` the import notes that change the figures, ``files`` the data line ("bill.csv
    (billing export, 242 rows used)"), ``runs_file`` the run export's name and ``input_rows`` the inputs' size
    (for spinners); ``rollups`` chooses among the rollups of a workspace dataset whose own rows ``usage`` is (None
    otherwise: a join, an amortised bill, an upload); ``rows_behind`` keeps the view's rows for a figure whose
    sums read a rollup and whose drill-downs read the rows (``Grain.rows_behind``)."""

    data_key: Hashable
    usage: Table
    shown: Table
    billing: Table | None
    runs: Table | None
    bounds: row_filters.FilterOptions
    filters: Filters
    join_on: str
    stats: JoinStats
    amortisation: Amortisation
    currencies: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    runs_file: str | None = None  # the run export's file name (None: none)
    run_params: Mapping[int, float] | None = None  # the run export's logged model sizes by source row (None: none)
    plan: Scenario | None = None
    choices: Choices = field(default_factory=Choices)
    budget_default: float | None = EXPORT_BUDGET_USD
    input_rows: int | None = None
    rollups: Rollups | None = None
    rows_behind: Table | None = None  # the view's own rows where ``shown`` is a rollup read as rows (``tabs.run``)

    def whole_rows(self, columns: tuple[str, ...] = (), unit: str | None = "day") -> Table:
        """The whole export's rows (``usage``), or for a workspace dataset's own rows its smallest rollup holding
        ``columns`` at ``unit``, read as rows: the same labels, days and latest instant
        (`dashboard.workspace.rollup_rows.as_rows`), from a few thousand rows instead of a quarter's."""
        table = None if self.rollups is None else self.rollups(columns, unit)[0]
        return self.usage if table is None else table

    def grain(self, columns: tuple[str, ...], unit: str | None = None) -> tuple[tuple[str, ...], str | None]:
        """The columns and time unit a rollup needs to answer a question grouping by ``columns`` at ``unit`` over
        the view: ``columns``, those of the team, project and pricing filters chosen, and a day for dates narrower
        than the export's (``unit`` when it has one)."""
        narrowed = self.narrowed
        chosen = zip(row_filters.FILTERED_COLUMNS, self.filters.as_tuple()[2:], strict=True)
        columns = tuple(dict.fromkeys((*columns, *(column for column, values in chosen
                                                   if narrowed and values is not None))))
        return columns, unit or ("day" if narrowed and self.dates_narrowed else None)

    def rolled(self, columns: tuple[str, ...], unit: str | None = None) -> tuple[Table | None, str]:
        """The view's rows as the smallest rollup that answers a question of ``columns`` at ``unit`` over them
        (``grain``), read as rows under the view's filters, and what the page says read it ("the daily rollup by
        team, …, built 12:03"); None and "the rows (1,000)" when none does; None and "" for a view that is not a
        workspace dataset's own rows."""
        if self.rollups is None:
            return None, ""
        table, label = self.rollups(*self.grain(columns, unit))
        if table is None:
            return None, label
        chosen = self.filters if self.dates_narrowed else dataclasses.replace(self.filters, start=None, end=None)
        return _filtered_rollup(table, chosen, self.narrowed), label

    def whole_rollup(self, columns: tuple[str, ...]) -> tuple[Table | None, str]:
        """For a workspace dataset's own rows under no filter, its smallest rollup holding ``columns`` (at any time
        unit) read as rows and what the page says read it; (None, "") for any other view, or when none holds them
        (the rows answer): a part of a figure whose grain no filter's column is in (Waste's storage lines)."""
        if self.rollups is None or self.narrowed:
            return None, ""
        table, label = self.rollups(columns, None)
        return (None, "") if table is None else (table, label)

    @property
    def plan_label(self) -> str:
        """The plan's name as the captions write it ("" without a plan)."""
        return self.plan.name if self.plan is not None else ""

    @property
    def key(self) -> Hashable:
        """What names the filtered view's contents: the data key and the filters."""
        return self.data_key, self.filters

    @property
    def currency(self) -> str | None:
        """The one currency amounts are written in: the bill's code, None without one, and for a bill that mixes
        currencies their codes joined ("EUR+USD"), so no sum of unlike amounts reads as one currency."""
        return "+".join(self.currencies) if self.currencies else None

    def money(self, value: float | None) -> str:
        """An amount of the bill, as `dashboard.format.money` writes it in the bill's currency."""
        return money(value, self.currency)

    @property
    def has_bill(self) -> bool:
        """Whether a billing export is loaded."""
        return not self.stats.billing_missing

    @property
    def in_gpu_hours(self) -> bool:
        """Whether Plan vs actual compares GPU-hours only: the plan is in US dollars, and the bill is in another
        currency, or there is no bill (nothing to difference the plan's dollars with)."""
        return self.currency != USD

    @property
    def foreign(self) -> bool:
        """Whether the bill's amounts are in a currency other than the plan's US dollars."""
        return self.currency is not None and self.currency != USD

    @property
    def dates_narrowed(self) -> bool:
        return (self.filters.start, self.filters.end) != (self.bounds.start, self.bounds.end)

    @property
    def narrowed(self) -> bool:
        """Whether any filter keeps less than the whole export."""
        return self.dates_narrowed or any(self.filters.as_tuple()[2:])

    @property
    def chosen_dates(self) -> tuple[date, date] | None:
        """The chosen dates, when narrowed."""
        start, end = self.filters.start, self.filters.end
        return (start, end) if self.dates_narrowed and start is not None and end is not None else None

    @property
    def budget_view(self) -> str:
        """The name of the view a budget belongs to (`dashboard.retro.budgets.view_id`)."""
        return view_id(self.filters.teams, self.filters.projects, self.filters.pricing, self.chosen_dates)

    def narrowed_side(self, side: Table | None) -> Table | None:
        """One side's table (billing or runs) under the filters."""
        if side is None or not self.narrowed:
            return side
        return row_filters.filtered(side, *self.filters.as_tuple())


KEPT_ROLLUPS = 64  # filtered rollups kept, by rollup and filters (``_filtered_rollup``)
_ROLLED: dict[tuple[Any, Filters, bool], Table] = {}


def _filtered_rollup(rollup: Table, chosen: Filters, narrowed: bool) -> Table:
    """``filtered`` of a rollup read as rows (kept open while its dataset version is: ``rollup_rows.rows_answer``),
    the same expression for the same filters, so the query layer keeps its small results (``compiled.query``) as
    it does those of a view's own rows: a figure or the tiles asked for again read nothing."""
    key = (rollup.op(), chosen, narrowed)
    table = _ROLLED.get(key)
    if table is None:
        table = filtered(rollup, chosen, narrowed)
        if len(_ROLLED) >= KEPT_ROLLUPS:
            _ROLLED.pop(next(iter(_ROLLED)), None)
        _ROLLED[key] = table
    return table


def filtered(usage: Table, chosen: Filters, narrowed: bool) -> Table:
    """The filtered view of ``usage`` (the expression; nothing is read until a figure asks)."""
    return row_filters.filtered(usage, *chosen.as_tuple()) if narrowed else usage


def whole(usage: Table) -> RetroView:
    """A view of the whole of ``usage`` as a bill alone, compared with the default scenario (`default_scenario`):
    no filter or run export (the warm-up's and the bench's, which run each figure's queries on a table, Plan vs
    actual's too)."""
    return RetroView(data_key=("whole",), usage=usage, shown=usage, billing=usage, runs=None,
                     bounds=row_filters.FilterOptions(), filters=Filters(), join_on="run_id",
                     stats=JoinStats(on="run_id", billing_missing=False, runs_missing=True),
                     amortisation=Amortisation(), plan=default_scenario())


def rollup_of(rollups: Rollups | None, columns: tuple[str, ...]) -> Table | None:
    """A workspace dataset's smallest rollup holding ``columns`` (at any time unit), read as rows; None without
    rollups (a join, an amortised bill, an upload) or when none holds them: the rows answer."""
    return None if rollups is None else rollups(columns, None)[0]


def export_currencies(usage: Table, rollups: Rollups | None = None) -> tuple[str, ...]:
    """The bill's currency codes (one DISTINCT query): for a workspace dataset's own rows from its smallest rollup
    (every rollup groups by currency), else from the rows."""
    rolled = rollup_of(rollups, ("currency",))
    return tuple(distinct_values(usage if rolled is None else rolled, "currency"))


def tiles_source(view: RetroView) -> tuple[Table | None, str]:
    """The table the tiles of ``view`` read and what the page says read it (`RetroView.rolled`): for a workspace
    dataset's own rows, whole or under filters a rollup's columns hold, its smallest rollup by the signs of GPU-hours
    and cost (`units.SUMS_GRAIN`), or where some row has tokens its smallest by their signs and GPU types too
    (`units.TOKENS_GRAIN`); None (the shown rows) when none answers."""
    label = ""
    for grain in (SUMS_GRAIN, TOKENS_GRAIN):
        table, label = view.rolled(grain)
        if table is not None and rollup_unit_sums(table) is not None:
            return table, label
    return None, label


def tile_costs(view: RetroView, active_params: float | None = None) -> UnitCosts:
    """The tiles' unit costs of ``view``'s rows (`dashboard.retro.units.unit_costs`), from the table
    ``tiles_source`` gives: the same figures, to the cent."""
    table = tiles_source(view)[0]
    return unit_costs(view.shown if table is None else table, active_params=active_params)


def export_options(usage: Table, rollups: Rollups | None = None) -> row_filters.FilterOptions:
    """What the filters offer over the whole export (`dashboard.retro.filters.FilterOptions`): for a workspace
    dataset's own rows from its rollups (the labels from the smallest holding team, project and pricing, the first
    and last day from the smallest daily one), else one query of the rows."""
    labels = days = None
    if rollups is not None:
        labels, days = rollups(row_filters.FILTERED_COLUMNS, None)[0], rollups((), "day")[0]
    if labels is None or days is None:
        return row_filters.filter_options(usage)
    dated = row_filters.day_options(days)
    return dataclasses.replace(row_filters.label_options(labels), start=dated.start, end=dated.end)
