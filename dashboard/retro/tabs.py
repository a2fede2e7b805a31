"""Running the Retrospective's figures: ``run`` answers a registry entry over a view, from the smallest rollup of a
workspace dataset that holds the entry's grain and the filters in force, or from the rows, and says which table it
read. Each tab's queries by name, to time them on any engine (``make bench-scale`` runs them on DuckDB and on Spark
over the same dataset): ``TAB_QUERIES`` maps a tab to a function of the usage table that runs every aggregate the
tab's first view needs (the registry's ``query`` of its figure, `dashboard.retro.registry`) and returns them;
``time_tabs`` gives each tab's seconds."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

import ibis.expr.types as ir

from dashboard.query.opened import Table
from dashboard.retro import filters, units
from dashboard.retro.registry import FIGURES, RetroFigure
from dashboard.retro.view import RetroView, whole
from dashboard.retro.view import filtered as filtered_view


@dataclass(frozen=True)
class Answered:
    """A figure's result and the table it was read from, as the page names it ("the daily rollup by team, …, built
    12:03", "the rows (1,000,000)"; "" for a view that is not a workspace dataset's own rows: nothing to say)."""

    result: object
    label: str


def grain_in_force(entry: RetroFigure, view: RetroView) -> tuple[tuple[str, ...], str | None] | None:
    """The columns and time unit a rollup needs to answer ``entry`` under ``view``'s filters: the entry's grain, the
    columns of the team, project and pricing filters chosen, and a day for dates (a narrowed view filters by its
    dates); None when the entry reads the rows."""
    if entry.grain is None:
        return None
    narrowed = view.narrowed
    chosen = zip(filters.FILTERED_COLUMNS, view.filters.as_tuple()[2:], strict=True)
    columns = tuple(dict.fromkeys((*entry.grain.columns,
                                   *(column for column, values in chosen if narrowed and values is not None))))
    dated = narrowed and (view.filters.start is not None or view.filters.end is not None)
    return columns, entry.grain.unit or ("day" if dated else None)


def source(entry: RetroFigure, view: RetroView) -> tuple[Table | None, str]:
    """The table ``entry`` reads over ``view`` (a rollup read as rows, with the view's filters; None: the view's
    own rows) and what the page says read it (``Answered.label``). Reads no rows: a rollup is chosen by the dataset's
    metadata."""
    if view.rollups is None:
        return None, ""
    needed = grain_in_force(entry, view)
    table, label = view.rollups(None, None) if needed is None else view.rollups(*needed)
    return (None if table is None else filtered_view(table, view.filters, view.narrowed)), label


def run(entry: RetroFigure, view: RetroView) -> Answered:
    """``entry``'s queries over ``view`` (``entry.query``), read from the smallest rollup that answers them when
    the view is a workspace dataset's own rows and its filters are among the grain's columns (the view's rows
    replaced by the rollup's: the same sums, to the cent), else from the view's rows; with the table's label."""
    table, label = source(entry, view)
    return Answered(entry.query(view if table is None else dataclasses.replace(view, shown=table)), label)


def _on_table(entry: RetroFigure) -> Callable[[ir.Table], object]:
    return lambda usage: entry.query(whole(usage))


TAB_QUERIES: dict[str, Callable[[ir.Table], object]] = {
    "Filters and tiles": lambda usage: (filters.filter_options(usage), units.unit_sums(usage)),
    **{entry.tab: _on_table(entry) for entry in FIGURES},
}


def time_tabs(usage: ir.Table) -> dict[str, float]:
    """Seconds each tab's queries take on ``usage``'s engine, in ``TAB_QUERIES`` order."""
    seconds = {}
    for tab, queries in TAB_QUERIES.items():
        started = time.perf_counter()
        queries(usage)
        seconds[tab] = time.perf_counter() - started
    return seconds
