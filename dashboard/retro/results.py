"""The typed result each Retrospective figure is drawn from (the registry's ``query``, `dashboard.retro.registry`):
frozen values that the page's section, the report and the warm-up read, and that Streamlit's cache keeps as data."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import pandas as pd

from dashboard.retro.gap import GapSummary
from dashboard.retro.load import LoadSummary
from dashboard.retro.units import UnitCosts
from dashboard.retro.waste import WasteCheck, WasteSummary


@dataclass(frozen=True)
class SpendResult:
    """Spend per period stacked by a label (``frame``, `spend.spend_over_time`) and the running total of one
    calendar quarter with its forecast (``cumulative``, `spend.cumulative_with_forecast`): the export's quarters,
    the one shown (None without dates), its days narrowed to the chosen dates (``period``), the last day the data
    cover within them (``data_end``) and the days of data the running total covers (``days``; fewer than
    `spend.MIN_FORECAST_DAYS` forecast nothing)."""

    frame: pd.DataFrame
    cumulative: pd.DataFrame
    quarters: tuple[tuple[date, date], ...]
    quarter: tuple[date, date] | None
    period: tuple[date, date] | None
    data_end: date | None
    days: int


@dataclass(frozen=True)
class AttributionResult:
    """Cost and GPU-hours by team → project → run (`attribution.attribution_table`)."""

    table: pd.DataFrame


@dataclass(frozen=True)
class GapResult:
    """Plan vs actual: the view's run ids, the suggested main runs (`gap.suggest_main_runs`), the main runs and
    failed states compared and the unit ("usd" or "gpu_hours"; GPU-hours for a bill not in US dollars or no
    bill); ``parts`` and ``summary`` are `gap.decompose`'s (None without a plan), a bill in another currency's
    parts with their notes in its currency and no dollar column (`gap.part_notes`)."""

    run_ids: tuple[str, ...]
    suggestion: tuple[str, ...]
    main_runs: tuple[str, ...]
    failed_states: tuple[str, ...]
    unit: str
    parts: pd.DataFrame | None = None
    summary: GapSummary | None = None


@dataclass(frozen=True)
class WasteResult:
    """The waste checks (`waste.waste_checklist`), their headline (`waste.waste_summary`) and the view's cost they
    are shares of (``total_cost``, in the bill's currency)."""

    checklist: tuple[WasteCheck, ...]
    summary: WasteSummary
    total_cost: float


@dataclass(frozen=True)
class LoadResult:
    """Concurrent GPUs by hour (``series``), their peak, mean and 95th percentile (`load.load_summary`) with the
    reserved capacity in GPUs and its idle GPU-hours (None without reserved rows), the reserved tier's GPUs by hour
    (``reserved``) and the mean GPUs by weekday and hour (``hour_of_week``)."""

    series: pd.Series
    summary: LoadSummary
    reserved: pd.Series | None
    hour_of_week: pd.DataFrame


@dataclass(frozen=True)
class MixResult:
    """GPU-hours, cost and their shares by pricing tier, from the bill (`mix.mix_shares`; None without a bill)."""

    shares: pd.DataFrame | None


@dataclass(frozen=True)
class UnitsResult:
    """Cost per GPU-hour and per million tokens and the achieved MFU at the plan's active parameters, each with why
    it is unknown (`units.unit_costs`)."""

    numbers: UnitCosts
