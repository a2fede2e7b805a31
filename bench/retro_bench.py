"""A Retrospective filter change on a 1,000,000-row upload in this process: the queries a rerun of the default
view runs after a new Teams selection (the filtered view, the tiles' sums and first priced row, the Spend tab's
days by team), against pandas' own sum of cost by team over the same rows in memory. The selections alternate
between one team (a twelfth of the rows) and every team but one.

The upload is the 1M-row FOCUS export of `bench.ingest_bench`, imported and bound to DuckDB once, as the page does
(`query.tables.usage_table`). Every timed change selects teams and a first day no call has asked before, so no
kept result is reused.
"""

from __future__ import annotations

import itertools
from functools import cache

import pandas as pd

from bench.harness import Measurement
from bench.ingest_bench import ROWS, focus_table, plain
from bench.timing import paired_medians_s
from dashboard.ingest.schema import ReadOptions
from dashboard.query import engine, tables
from dashboard.retro import filters, spend, units

ROUNDS = 15  # each round one small and one large view (two calls)


@cache
def _upload() -> tuple[pd.DataFrame, object]:
    """The 1M-row upload as the page holds it: the imported frame and its table on the engine."""
    import tempfile
    from pathlib import Path

    import pyarrow.csv as pa_csv

    from dashboard.ingest import import_path

    path = Path(tempfile.mkdtemp(prefix="planner-retro-bench-")) / "focus_1m.csv"
    pa_csv.write_csv(plain(focus_table(ROWS)), path)
    frame = import_path(path, options=ReadOptions(timezone="UTC"))[0]
    path.unlink()
    return frame, tables.usage_table(engine.default(), frame)


def filter_change_1m() -> Measurement:
    frame, table = _upload()
    teams = filters.filter_options(table).teams
    selections = itertools.cycle(itertools.chain.from_iterable(  # one team, then all but it: a small and a large view
        ((team,), tuple(t for t in teams if t != team)) for team in teams))
    first_days = itertools.count()

    def change() -> None:
        shown = filters.filtered(table, pd.Timestamp("2025-04-01") + pd.Timedelta(days=next(first_days) % 60), None,
                              next(selections), None, None)
        units.unit_costs(shown)
        spend.spend_over_time(shown, freq="D", by="team")

    value_s, reference_s = paired_medians_s(change, lambda: frame.groupby("team", observed=True)["cost"].sum(),
                                            ROUNDS, calls=2)
    return Measurement(value_s * 1e3, reference_s * 1e3,
                       f"{ROWS:,} rows, median of {ROUNDS} alternating rounds of a small and a large view, each a "
                       "selection not seen before")
