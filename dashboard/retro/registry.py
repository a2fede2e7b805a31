"""The Retrospective's figures, declared once each: the page draws its tabs from this list, the report its sections,
and the warm-up and the bench run each entry's queries (``dashboard.retro.tabs``).

An entry names its tab, the queries its first view runs over a `RetroView` (``query``, returning the result the
figure is drawn from), its figure builders by name in ``dashboard.figures`` ("retro_usage.spend_figure": the
figures import this layer, so it names them), the function of ``dashboard.ui.retro_view`` that draws the tab
(``page_section``, taking the view) and the heading of its section in the report (``report_section``; None: not in
the report; ``dashboard.ui.retro_report_view.SECTIONS`` builds it by the entry's name). Adding a figure is one entry
here and one module; tests/retro/test_registry.py checks that every name resolves.

An entry's ``grain`` (issue 52) is what its queries read: the columns they group and filter by and their time unit,
so over a workspace dataset they read the smallest rollup that has them (``dashboard.retro.tabs.run``); None where
they read the rows: a count of rows, or a test of each row's GPU-hours or cost (a rollup holds their sums only), or
per-job facts. Pure: never imports streamlit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dashboard.ingest.run_states import FAILED_STATES
from dashboard.query.compiled import one_view
from dashboard.retro import attribution, gap, load, mix, spend, units, waste
from dashboard.retro.view import RetroView


@dataclass(frozen=True)
class Grain:
    """What a figure's queries group and filter by: canonical ``columns`` and a time ``unit`` ("day", "hour"; None:
    no time) over which they spread or sum GPU-hours and cost (docs/engines.md, *Figures*)."""

    columns: tuple[str, ...]
    unit: str | None = None


@dataclass(frozen=True)
class RetroFigure:
    """One Retrospective figure (see the module's docstring)."""

    name: str
    tab: str
    query: Callable[[RetroView], object]
    figures: tuple[str, ...]
    page_section: str
    report_section: str | None = None
    grain: Grain | None = None  # None: the rows


def _spend(view: RetroView) -> tuple[object, ...]:
    usage = view.shown
    return spend.spend_over_time(usage, "D", "team"), spend.daily_total(usage, "cost"), spend.latest_instant(usage)


def _gap(view: RetroView) -> tuple[object, ...]:
    main = gap.gpu_hours_by(view.shown, "run_id")
    main_ids = [str(main.at[int(main["gpu_hours"].to_numpy().argmax()), "key"])] if len(main) else []
    return main, gap.actual_sums(view.shown, main_ids, tuple(FAILED_STATES))


def _waste(view: RetroView) -> tuple[object, ...]:
    usage = view.shown
    with one_view():  # as dashboard.retro.waste.waste_checklist draws them
        return (waste.failed_runs(usage), waste.successful_runs(usage), waste.idle_capacity(usage),
                waste.job_facts(usage), waste.storage_by_month(usage), waste.untagged_spend(usage))


FIGURES: tuple[RetroFigure, ...] = (
    RetroFigure("spend", "Spend", _spend, ("retro_usage.spend_figure",), "spend_section", "Spend",
                grain=Grain(("team",), "day")),
    RetroFigure("attribution", "Attribution", lambda view: attribution.attribution_cells(view.shown),
                ("retro_usage.attribution_figure",), "attribution_section",
                grain=Grain(("team", "project", "run_id"))),
    RetroFigure("gap", "Plan vs actual", _gap, ("retro_gap.gap_figure",), "plan_vs_actual_section", "Plan vs actual"),
    RetroFigure("waste", "Waste", _waste, ("retro_gap.waste_figure",), "waste_section", "Waste"),
    RetroFigure("load", "Load profile",
                lambda view: (load.hourly_concurrency(view.shown), load.commitment_span(view.shown)),
                ("retro_usage.load_figure", "retro_usage.hour_of_week_figure"), "load_section"),
    RetroFigure("mix", "Purchase mix", lambda view: (mix.tier_totals(view.shown), mix.price_facts(view.shown)),
                ("retro_usage.mix_figure",), "mix_section"),
    RetroFigure("units", "Unit costs",
                lambda view: (units.unit_sums(view.shown), units.token_hours_by_gpu_type(view.shown)), (),
                "unit_costs_section"),
)
REPORT_ORDER = ("spend", "waste", "gap")  # the report's sections, in the order the review reads them


def report_figures() -> list[RetroFigure]:
    """The entries with a report section, in ``REPORT_ORDER``."""
    by_name = {entry.name: entry for entry in FIGURES if entry.report_section}
    return [by_name[name] for name in REPORT_ORDER]
