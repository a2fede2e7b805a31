"""Each Retrospective figure's result, by one runner: ``run(entry, view)`` gives a registry entry's typed result over
a `RetroView` (the page's sections and the report take it through one cache, ``dashboard.ui.retro_cache.run``; the
warm-up runs it over the bundled sample). And each tab's aggregates by name, to time them on any engine
(``make bench-scale`` runs them on DuckDB and on Spark over the same dataset, beside hand-written SQL of the same
sums): ``TAB_QUERIES`` maps a tab to a function of the usage table that runs the aggregate queries its figure reads
(``AGGREGATES``; an entry without them is timed by its ``run`` over the whole table) and returns them; ``time_tabs``
gives each tab's seconds."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import ibis.expr.types as ir

from dashboard.ingest.run_states import FAILED_STATES
from dashboard.query.compiled import one_view
from dashboard.retro import attribution, filters, gap, load, mix, spend, units, waste
from dashboard.retro.registry import FIGURES, RetroFigure
from dashboard.retro.view import RetroView, whole

R = TypeVar("R")


def run(entry: RetroFigure[R], view: RetroView) -> R:
    """The typed result ``entry``'s figure is drawn from, over ``view`` (its widgets' choices in ``view.choices``)."""
    return entry.query(view)


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
