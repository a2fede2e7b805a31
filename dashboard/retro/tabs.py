"""Each Retrospective figure's result, by one runner: ``run(entry, view)`` gives a registry entry's typed result over
a `RetroView` (the page's sections and the report take it through one cache, ``dashboard.ui.retro_cache.run``).
And each tab's queries by name, to time them on any engine (``make bench-scale`` runs them on DuckDB and on Spark
over the same dataset): ``TAB_QUERIES`` maps a tab to a function of the usage table that runs every aggregate the
tab's view needs over the whole table (its entry's ``run`` over `dashboard.retro.view.whole`) and returns them;
``time_tabs`` gives each tab's seconds."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import ibis.expr.types as ir

from dashboard.retro import filters, units
from dashboard.retro.registry import FIGURES, RetroFigure
from dashboard.retro.view import RetroView, whole

R = TypeVar("R")


def run(entry: RetroFigure[R], view: RetroView) -> R:
    """The typed result ``entry``'s figure is drawn from, over ``view`` (its widgets' choices in ``view.choices``)."""
    return entry.query(view)


def _on_table(entry: RetroFigure[object]) -> Callable[[ir.Table], object]:
    return lambda usage: run(entry, whole(usage))


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
