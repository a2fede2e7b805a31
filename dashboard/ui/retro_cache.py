"""Bounded cache wrappers for the Retrospective page's analytics.

From the import on, usage is a table of the query engine (``dashboard.query``): an upload is bound once to the
engine (``bound``: an Arrow copy registered in DuckDB, or the engine's own table), a workspace dataset is its
Parquet files, and the join with a run export, the amortisation of commitments and the filtered view are
expressions over them (the join and an amortisation computed once into a temporary table of the engine and held
for the session in the bounded ``upload_store``). Tables are never hashed: every wrapper takes a cheap ``data_key``
(the imports' content keys, the join key and the filters) and the table itself as an underscore argument, which
Streamlit's caches leave out of the cache key. The same ``data_key`` must always mean the same table. Everything
derived from a table is a small query result, cached as data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar, cast

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import settings
from dashboard.core.scenario import Scenario
from dashboard.query import engine, tables
from dashboard.query.opened import Table, is_table
from dashboard.retro import amortise, calibrate, filters, join, mix, tabs, units, waste
from dashboard.retro.registry import RetroFigure
from dashboard.retro.view import Choices, RetroView, Rollups, export_options, rollup_of, tile_costs
from dashboard.safe_text import markdown_text
from dashboard.ui import upload_store
from dashboard.ui.cache import SCENARIO_HASH, DrawnChart
from dashboard.ui.sources import Imported

ENTRIES = 16
R = TypeVar("R")
SPINNER_ROWS = 20_000  # work on tables up to this size takes milliseconds: no spinner


def busy(text: str, rows: int | None) -> AbstractContextManager:
    """A spinner with the elapsed time over work on a table of ``rows`` rows, shown when it takes more than half a
    second (st.spinner's delay); none for at most ``SPINNER_ROWS`` rows, whose views take a few milliseconds (a
    spinner starts a timer thread, which costs more than they do)."""
    if rows is None or rows <= SPINNER_ROWS:
        return nullcontext()
    return st.spinner(text, show_time=True)


def moved_to_engine(slot: str, key: Hashable, part: Imported) -> Imported:
    """``part``, this page's own import held in ``slot`` under ``key``, with its rows moved into the query engine:
    the held import's frame is replaced by its table, so the server holds the rows once (a DuckDB table is about
    the frame's size). The copy takes about 0.65 s a million rows, under a spinner. An import held elsewhere (the
    Import page's, handed over) is left as it is: ``bound`` gives its table."""
    if is_table(part.usage) or upload_store.get(slot, key) is not part:
        return part
    nbytes = upload_store.table_bytes(part.usage) + upload_store.table_bytes(part.rejected)
    with busy("Loading the rows into the query engine…", len(part.usage)):
        moved = dataclasses.replace(part, usage=tables.usage_table(engine.default(), part.usage))
    upload_store.put(slot, key, moved, nbytes)
    return moved


def bound(side: str, import_key: Hashable, usage: pd.DataFrame | Table) -> Table:
    """An import's usage (the ``side`` "billing" or "runs") as a table of the query engine, bound once per import
    and held for this session in the bounded upload store (a workspace dataset already is one); the copy into the
    engine takes about 0.65 s a million rows, under a spinner."""
    if is_table(usage):
        return usage

    def bind() -> Table:
        with busy("Loading the rows into the query engine…", len(usage)):
            return tables.usage_table(engine.default(), usage)

    return upload_store.held(("retro.bound", side), import_key, bind, lambda _: upload_store.table_bytes(usage))


def joined(data_key: Hashable, _billing: Table | None, _runs: Table | None, on: str,
           rows: int | None = None, _rollups: Rollups | None = None) -> tuple[Table | None, join.JoinStats]:
    """The joined usage table (computed once into a temporary table of the engine when both sides are there) and
    the match figures, held for this session in the bounded upload store; ``rows`` (the inputs' size, when known)
    decides the spinner. A lone bill that is a workspace dataset's own rows (``_rollups``) reads its stats from its
    rollup by the sign of GPU-hours."""
    def build() -> tuple[Table | None, join.JoinStats]:
        with busy("Joining the billing and run exports…", rows):
            table, stats = join.join_usage(_billing, _runs, on=on, stats_from=rollup_of(_rollups, join.STATS_GRAIN))
            return (tables.materialised(table) if _billing is not None and _runs is not None else table), stats

    return upload_store.held(("retro.joined",), (data_key, on), build, lambda _: 0)


def engine_problem() -> str | None:
    """Why the query engine (``PLANNER_ENGINE_URL``) cannot be used, in one sentence; None when it opens."""
    try:
        engine.default()
    except settings.SettingError as error:
        return str(error)
    except Exception as error:  # a missing backend package, an unreachable or refusing server
        scheme = settings.engine_url().split("://")[0]
        return (f"The query engine {settings.ENGINE_URL} names ({scheme}) could not be opened "
                f"({type(error).__name__}). Check the server's setting, or unset it to use DuckDB.")
    return None


def require_engine() -> None:
    """Stop the page with a message when the query engine cannot be opened (before the first query)."""
    problem = engine_problem()
    if problem:
        st.error(markdown_text(problem))
        st.stop()


@st.cache_data(max_entries=ENTRIES, show_spinner=False, hash_funcs=SCENARIO_HASH)
def _result(key: Hashable, choices: Choices, name: str, plan: Scenario | None, _entry: RetroFigure[Any],
            _view: RetroView) -> object:
    """The result of the registry entry ``name`` over the view ``key`` names, with its ``choices`` and ``plan``."""
    return tabs.run(_entry, _view)


def run(entry: RetroFigure[R], view: RetroView) -> R:
    """``entry``'s typed result over ``view`` (`dashboard.retro.tabs.run`), cached by the view's key, the widgets'
    choices, the entry's name and the plan compared with: the tab and the report draw from the same result, so a
    figure already shown is not computed again."""
    return cast(R, _result(view.key, view.choices, entry.name, view.plan, entry, view))


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def _rows_behind(key: Hashable, behind: waste.RowsBehind, _usage: Table) -> pd.DataFrame:
    """The rows behind a waste check of the view ``key`` names (``waste.rows_behind``)."""
    return waste.rows_behind(_usage, behind)


def rows_behind(view: RetroView, behind: waste.RowsBehind) -> pd.DataFrame:
    """The rows of ``view`` behind a waste check (``WasteCheck.behind``), read when the page asks for them (the
    checklist reads none: at 10⁸ rows a check's rows can take a scan) and kept by the view's key."""
    with busy("Reading the rows behind this figure…", view.input_rows):
        return _rows_behind(view.key, behind, view.shown)


@st.cache_data(max_entries=ENTRIES, show_spinner=False, hash_funcs=SCENARIO_HASH)
def _chart(key: Hashable, choices: Choices, name: str, plan: Scenario | None, builder: str, args: tuple[Any, ...],
           _entry: RetroFigure[Any], _view: RetroView, _build: Callable[..., go.Figure]) -> DrawnChart:
    """The figure ``builder`` draws from the entry ``name``'s result over the view and ``args``."""
    return DrawnChart(_build(run(_entry, _view), *args))


def chart(entry: RetroFigure[R], view: RetroView, build: Callable[..., go.Figure], *args: Any) -> DrawnChart:
    """The figure ``build(result, *args)`` of ``entry``'s result over ``view``, drawn once: a rerun that changes
    nothing it shows (another tab's widget) sends the cached chart, as building one can take a quarter of a second
    (the load profile's). ``args`` are hashable (a budget, a measure, the currency)."""
    return _chart(view.key, view.choices, entry.name, view.plan, f"{build.__module__}.{build.__qualname__}", args,
                  entry, view, build)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def options(data_key: Hashable, _usage: Table, _rollups: Rollups | None = None) -> filters.FilterOptions:
    """What the filters offer (one query; from the rollups of a workspace dataset's own rows, which ``data_key``
    names)."""
    return export_options(_usage, _rollups)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def calibration(data_key: Hashable, _bill: Table | None, _runs: Table | None, main_run_ids: tuple[str, ...] | None,
                model_params: float | None, gpus_per_node: int, gpu_type: str | None,
                _run_params: Mapping[int, float] | None = None,
                _rollups: Rollups | None = None) -> dict[str, calibrate.Measured]:
    """The inputs the view's imports measure (`dashboard.retro.calibrate`): prices from the bill (the plan's GPU
    type's where it was bought), the rest from the run export; MFU at each job's logged model size (`_run_params`,
    the run export's, which ``data_key`` names), else ``model_params`` (`calibrate.model_sizes`); the sums from the
    rollups of a workspace dataset whose own rows the bill is (`_rollups`, which ``data_key`` names)."""
    run_params, params = calibrate.model_sizes(_run_params, None, model_params)
    return calibrate.calibrate(_bill, _runs, main_run_ids=None if main_run_ids is None else list(main_run_ids),
                               model_params=params, gpus_per_node=gpus_per_node, gpu_type=gpu_type,
                               run_params=run_params, rollups=_rollups)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def calibration_rows(data_key: Hashable, _usage: Table, measured: calibrate.Measured) -> pd.DataFrame:
    """The rows a measured input came from (`calibrate.rows_behind`)."""
    return calibrate.rows_behind(_usage, measured)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def cost_at_mix(data_key: Hashable, _usage: Table, reserved_share: float, spot_share: float) -> mix.MixCost:
    return mix.cost_at_mix(_usage, reserved_share, spot_share)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def counts_tokens(data_key: Hashable, _usage: Table) -> bool:
    """Whether some GPU row of the table counts tokens (one query, shared with the unit costs' sums)."""
    return units.unit_sums(_usage).tokens > 0


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def _tiles(key: Hashable, _view: RetroView) -> units.UnitCosts:
    return tile_costs(_view, active_params=float("nan"))


def tiles(view: RetroView) -> units.UnitCosts:
    """The tiles' numbers of ``view`` (`dashboard.retro.view.tile_costs`: a workspace dataset's whole rows from its
    rollup), cached by the view's key."""
    return _tiles(view.key, view)


def amortised(data_key: Hashable, _billing: Table, rows: int | None = None,
              _rollups: Rollups | None = None) -> tuple[Table, amortise.Amortisation]:
    """The billing table with commitment charges spread over the reserved usage they cover (the input itself when
    there is nothing to amortise, else computed once into a temporary table of the engine) and what was done,
    held for this session in the bounded upload store. A workspace dataset's own bill (``_rollups``) reads what is
    to be done from its rollup by pricing, charge kind and signs."""
    def build() -> tuple[Table, amortise.Amortisation]:
        with busy("Amortising commitments…", rows):
            table, info = amortise.amortise_commitments(
                _billing, status_from=rollup_of(_rollups, amortise.STATUS_GRAIN))
            return (tables.materialised(table) if info.status == "amortised" else table), info

    return upload_store.held(("retro.amortised",), data_key, build, lambda _: 0)
