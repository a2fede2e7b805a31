"""Each Retrospective figure's result, by one runner: ``run(entry, view)`` gives a registry entry's typed result over
a `RetroView`, read from the smallest rollup of a workspace dataset that holds the entry's grain and the filters in
force, or from the rows; ``source`` says which table that is, for the page to name (the page's sections and the
report take the result through one cache, ``dashboard.ui.retro_cache.run``; the warm-up runs it over the bundled
sample). And each tab's aggregates by name, to time them on any engine (``make bench-scale`` runs them on DuckDB and
on Spark over the same dataset, beside hand-written SQL of the same sums): ``TAB_QUERIES`` maps a tab to a function of
the usage table that runs the aggregate queries its figure reads (``AGGREGATES``; an entry without them is timed by
its ``run`` over the whole table) and returns them; ``time_tabs`` gives each tab's seconds."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any, TypeVar

import ibis.expr.types as ir

from dashboard.ingest.run_states import FAILED_STATES
from dashboard.query.compiled import one_view
from dashboard.query.opened import Table
from dashboard.retro import attribution, filters, gap, load, mix, spend, units, waste
from dashboard.retro.registry import FIGURES, Grain, RetroFigure
from dashboard.retro.view import RetroView, whole

R = TypeVar("R")


def grain_in_force(entry: RetroFigure[Any], view: RetroView) -> tuple[tuple[str, ...], str | None] | None:
    """The columns and time unit a rollup needs to answer ``entry`` under ``view`` (`RetroView.grain`): the entry's
    grain, the column of the view's grouping choice when the grain takes it (``Grain.chosen``) and the filters'
    columns and day; None when the entry reads the rows."""
    if entry.grain is None:
        return None
    return view.grain(_columns(entry.grain, view), entry.grain.unit)


def _columns(grain: Grain, view: RetroView) -> tuple[str, ...]:
    return (*grain.columns, *((view.choices.by,) if grain.chosen else ()))


def source(entry: RetroFigure[Any], view: RetroView) -> tuple[Table | None, str]:
    """The table ``entry`` reads over ``view`` (a rollup read as rows, with the view's filters: `RetroView.rolled`;
    None: the view's own rows) and what the page says it read ("the daily rollup by team, …, built 12:03", "the
    rows (1,000,000)"; "…; the rows behind it from the rows (1,000,000)" for a grain with ``rows_behind``, "…; storage
    lines from the whole-period rollup by storage_line, …" for a part of ``Grain.whole`` a rollup answers; "" for a
    view that is not a workspace dataset's own rows: nothing to say). Reads no rows: a rollup is chosen by the
    dataset's metadata."""
    if view.rollups is None:
        return None, ""
    if entry.grain is None:
        return None, view.rollups(None, None)[1]
    table, label = view.rolled(_columns(entry.grain, view), entry.grain.unit)
    for what, columns in entry.grain.whole:  # a part from a rollup of its own
        if part := view.whole_rollup(columns)[1]:
            label += f"; {what} from {part}"
    if table is not None and entry.grain.rows_behind:  # its sums from the rollup, the rows behind from the rows
        label += f"; the rows behind it from {view.rollups(None, None)[1]}"
    return table, label


def run(entry: RetroFigure[R], view: RetroView) -> R:
    """The typed result ``entry``'s figure is drawn from, over ``view`` (its widgets' choices in ``view.choices``):
    ``entry.query`` read from the smallest rollup that answers it when the view is a workspace dataset's own rows and
    its filters are among the grain's columns (the view's rows replaced by the rollup's: the same sums, to the cent),
    else from the view's rows (``source``). A view with rollups is a dataset's own rows, its bill too: the bill is
    read from the rollup as well (Load profile's reserved capacity reads it). A grain with ``rows_behind`` keeps the
    view's rows beside it (``RetroView.rows_behind``), for the rows behind a figure."""
    table, _ = source(entry, view)
    if table is None:
        return entry.query(view)
    behind = view.shown if entry.grain is not None and entry.grain.rows_behind else None
    return entry.query(dataclasses.replace(view, shown=table, billing=None if view.billing is None else table,
                                           rows_behind=behind))


def bill_read(entry: RetroFigure[Any], view: RetroView) -> Table | None:
    """The bill ``entry``'s figure reads over ``view`` (``run``), for a query of its section beside it (Purchase
    mix's what-if at another mix): the rollup ``source`` gives, else the view's bill under its filters."""
    table = source(entry, view)[0]
    return view.narrowed_side(view.billing) if table is None or view.billing is None else table


def _spend(usage: ir.Table) -> tuple[object, ...]:
    return spend.spend_over_time(usage, "D", "team"), spend.daily_total(usage, "cost"), spend.latest_instant(usage)


def _gap(usage: ir.Table) -> tuple[object, ...]:
    main = gap.gpu_hours_by(usage, "run_id")
    main_ids = [str(main.at[int(main["gpu_hours"].to_numpy().argmax()), "key"])] if len(main) else []
    return main, gap.actual_sums(usage, main_ids, tuple(FAILED_STATES))


def _waste(usage: ir.Table) -> tuple[object, ...]:
    with one_view():  # as dashboard.retro.waste.waste_checklist reads them
        return (waste.failed_runs(usage), waste.successful_runs(usage), waste.idle_capacity(usage),
                waste.job_facts(usage), waste.storage_by_month(usage), waste.untagged_spend(usage))


AGGREGATES: dict[str, Callable[[ir.Table], object]] = {  # by entry name: the sums the bench's hand SQL also computes
    "spend": _spend,
    "attribution": attribution.attribution_cells,
    "gap": _gap,
    "waste": _waste,
    "load": lambda usage: (load.hourly_concurrency(usage), load.commitment_span(usage)),
    "mix": lambda usage: (mix.tier_totals(usage), mix.price_facts(usage)),
    "units": lambda usage: (units.unit_sums(usage), units.token_hours_by_gpu_type(usage)),
}


def _on_table(entry: RetroFigure[object]) -> Callable[[ir.Table], object]:
    return AGGREGATES.get(entry.name) or (lambda usage: run(entry, whole(usage)))


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
