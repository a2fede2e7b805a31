"""Each Retrospective tab's queries by name, to time them on any engine (``make bench-scale`` runs them on DuckDB
and on Spark over the same dataset): ``TAB_QUERIES`` maps a tab to a function of the usage table that runs every
aggregate the tab's first view needs and returns them; ``time_tabs`` gives each tab's seconds."""

from __future__ import annotations

import time
from collections.abc import Callable

import ibis.expr.types as ir

from dashboard.ingest.run_states import FAILED_STATES
from dashboard.query.compiled import one_view
from dashboard.retro import attribution, filters, gap, load, mix, spend, units, waste


def _spend(usage: ir.Table) -> tuple:
    return spend.spend_over_time(usage, "D", "team"), spend.daily_total(usage, "cost"), spend.latest_instant(usage)


def _gap(usage: ir.Table) -> tuple:
    main = gap.gpu_hours_by(usage, "run_id")
    main_ids = [str(main.at[int(main["gpu_hours"].to_numpy().argmax()), "key"])] if len(main) else []
    return main, gap.actual_sums(usage, main_ids, FAILED_STATES)


def _waste(usage: ir.Table) -> tuple:
    with one_view():  # as dashboard.retro.waste.waste_checklist draws them
        return (waste.failed_runs(usage), waste.successful_runs(usage), waste.idle_capacity(usage),
                waste.job_facts(usage), waste.storage_by_month(usage), waste.untagged_spend(usage))


TAB_QUERIES: dict[str, Callable[[ir.Table], object]] = {
    "Filters and tiles": lambda usage: (filters.filter_options(usage), units.unit_sums(usage)),
    "Spend": _spend,
    "Attribution": attribution.attribution_cells,
    "Plan vs actual": _gap,
    "Waste": _waste,
    "Load profile": lambda usage: (load.hourly_concurrency(usage), load.commitment_span(usage)),
    "Purchase mix": lambda usage: (mix.tier_totals(usage), mix.price_facts(usage)),
    "Unit costs": lambda usage: (units.unit_sums(usage), units.token_hours_by_gpu_type(usage)),
}


def time_tabs(usage: ir.Table) -> dict[str, float]:
    """Seconds each tab's queries take on ``usage``'s engine, in ``TAB_QUERIES`` order."""
    seconds = {}
    for tab, queries in TAB_QUERIES.items():
        started = time.perf_counter()
        queries(usage)
        seconds[tab] = time.perf_counter() - started
    return seconds
