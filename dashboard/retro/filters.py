"""Row selection for the retrospective: what the filter widgets offer, and the labels they use.

Missing tags are never dropped: an NA team, project or run is shown and selected as ``UNTAGGED``
("(untagged)"), an NA pricing tier as ``UNKNOWN_PRICING`` ("(unknown)"); the labels are the query layer's
(``dashboard.query.columns``). The filtered view is a query (``filtered``): the page, the CLI's export and the report
all read that expression, never a filtered copy of the rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

import ibis
import ibis.expr.types as ir
import pandas as pd

from dashboard.ingest.schema import PRICING_VALUES
from dashboard.query import tables
from dashboard.query.columns import label, label_in
from dashboard.query.compiled import built, query, table_result
from dashboard.query.labels import NA_LABELS, UNKNOWN_PRICING, UNTAGGED
from dashboard.query.periods import as_utc

__all__ = ["NA_LABELS", "ONE_DAY", "UNKNOWN_PRICING", "UNTAGGED", "FilterOptions", "day_options", "filter_options",
           "filtered", "label_options", "ordered", "utc_day"]


@dataclass(frozen=True)
class FilterOptions:
    """What the filter widgets offer: the distinct team, project and pricing labels (teams and projects sorted with
    "(untagged)" last, pricing in the order reserved, on_demand, spot, "(unknown)", only those present) and the first
    and last UTC day of period_start (None for an empty table; the defaults: no data, so any date narrows)."""

    teams: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    pricing: tuple[str, ...] = ()
    start: date | None = None
    end: date | None = None


def filter_options(usage: pd.DataFrame | ir.Table) -> FilterOptions:
    """What the filter widgets offer over ``usage`` (`FilterOptions`). One query."""
    return _filter_options_query(tables.table_of(usage))


ONE_DAY = pd.Timedelta(days=1)
FILTERED_COLUMNS: tuple[str, ...] = ("team", "project", "pricing")


def utc_day(value: date | str | pd.Timestamp) -> pd.Timestamp:
    """Midnight UTC of the day ``value`` falls on (naive values are read as UTC)."""
    return as_utc(value).normalize()


def _instant(stamp: pd.Timestamp) -> ir.TimestampScalar:
    """A UTC instant as a plain timestamp literal (the tables' times are UTC; see ``tables.naive_utc``)."""
    return ibis.literal(stamp.tz_convert("UTC").tz_localize(None).to_pydatetime(), type="timestamp")


def filtered(
    usage: ir.Table,
    start: date | str | pd.Timestamp | None = None,
    end: date | str | pd.Timestamp | None = None,
    teams: Iterable[str] | None = None,
    projects: Iterable[str] | None = None,
    pricing: Iterable[str] | None = None,
) -> ir.Table:
    """The rows whose period_start falls on a UTC day from ``start`` to ``end`` (inclusive) and whose labelled team,
    project and pricing are among those given (None: no filter; empty: nothing)."""
    tests = []
    if start is not None:
        tests.append(usage.period_start >= _instant(utc_day(start)))
    if end is not None:
        tests.append(usage.period_start < _instant(utc_day(end) + ONE_DAY))
    for column, chosen in zip(FILTERED_COLUMNS, (teams, projects, pricing), strict=True):
        if chosen is not None:
            chosen = [str(value) for value in chosen]
            tests.append(label_in(usage, column, chosen) if chosen else ibis.literal(False))
    return usage.filter(*tests) if tests else usage


def ordered(labels: Iterable[str], first: Iterable[str] = ()) -> list[str]:
    """``first`` (in that order, when present), then the other labels sorted, with NA labels last."""
    labels = set(labels)
    first = [label for label in first if label in labels]
    rest = sorted(labels - set(first) - set(NA_LABELS.values()))
    missing = sorted(labels & set(NA_LABELS.values()))
    return first + rest + missing


def _day(stamp: object) -> date | None:
    return None if pd.isna(stamp) else as_utc(stamp).date()


@built
def _options_expr(usage: ir.Table) -> ir.Table:
    return usage.aggregate(**{column: label(usage, column).collect(distinct=True) for column in FILTERED_COLUMNS},
                           start=usage.period_start.min(), end=usage.period_start.max())


@built
def _days_expr(usage: ir.Table) -> ir.Table:
    return usage.aggregate(start=usage.period_start.min(), end=usage.period_start.max())


@built
def _labels_expr(usage: ir.Table) -> ir.Table:
    return usage.aggregate(**{column: label(usage, column).collect(distinct=True) for column in FILTERED_COLUMNS})


@query
def _filter_options_query(usage: ir.Table) -> FilterOptions:
    """The `FilterOptions` of ``usage``, in one query."""
    row = table_result(_options_expr(usage)).iloc[0]
    return dataclasses.replace(_labelled(row), start=_day(row["start"]), end=_day(row["end"]))


def day_options(usage: pd.DataFrame | ir.Table) -> FilterOptions:
    """The first and last UTC day of period_start over ``usage`` (`FilterOptions` without labels: a table without
    them, such as a daily rollup by GPU type, has them). One query."""
    return _day_options_query(tables.table_of(usage))


@query
def _day_options_query(usage: ir.Table) -> FilterOptions:
    row = table_result(_days_expr(usage)).iloc[0]
    return FilterOptions(start=_day(row["start"]), end=_day(row["end"]))


def label_options(usage: pd.DataFrame | ir.Table) -> FilterOptions:
    """The labels the filter widgets offer over ``usage`` (`FilterOptions` without days: a table without times,
    such as a whole-period rollup, has them). One query."""
    return _label_options_query(tables.table_of(usage))


@query
def _label_options_query(usage: ir.Table) -> FilterOptions:
    return _labelled(table_result(_labels_expr(usage)).iloc[0])


def _labelled(row: pd.Series) -> FilterOptions:
    present = {column: [str(value) for value in (row[column] if row[column] is not None else [])]
               for column in FILTERED_COLUMNS}
    return FilterOptions(teams=tuple(ordered(present["team"])), projects=tuple(ordered(present["project"])),
                         pricing=tuple(ordered(present["pricing"], first=PRICING_VALUES)))
