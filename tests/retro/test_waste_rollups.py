"""Issue 52: Waste's storage growth over a workspace dataset's own rows reads the storage rollup (each storage line's
cost per month), and its rows behind each check are read only when asked. On hand-worked bills written to a
workspace as an import writes them: the figure from the rollup equals the hand-worked one and the rows' answer to the
cent; under a date or team filter, or on a dataset without the rollup, the rows answer, with the same figure."""

import dataclasses
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from written_dataset import written

from dashboard.core.scenario import Scenario
from dashboard.query import engine
from dashboard.retro import tabs, waste
from dashboard.retro.filters import FilterOptions
from dashboard.retro.registry import WASTE
from dashboard.retro.view import Filters, filtered, whole
from dashboard.workspace import rollup_rows
from dashboard.workspace.datasets import Metadata

CENT = 0.005  # a rollup adds exact decimals, the rows doubles
NAN = float("nan")
APR, MAY, JUN, JUL = "2025-04-01", "2025-05-01", "2025-06-01", "2025-07-01"
COLUMNS = ["period_start", "period_end", "gpu_hours", "cost", "charge_kind", "team", "project", "resource_id",
           "run_id"]
OTHERS = [  # never storage lines: a GPU row, a run's row without GPU-hours, a commitment fee, a credit, no name
    (APR, MAY, 8.0, 20.0, "usage", "a", "p", "i-1", None),
    (MAY, JUN, None, 7.0, "usage", "a", "p", None, "r-1"),
    (MAY, JUN, None, 100.0, "commitment", None, None, "sp-1", None),
    (JUN, JUL, None, -4.0, "usage", "a", "p", "ckpt", None),
    (JUN, JUL, None, 9.0, "usage", "a", None, None, None),
]


def _line(name: str | None, start: str, end: str, cost: float) -> tuple:
    """A storage line of bucket ``name`` (None: team "a", project "p", no resource)."""
    return (start, end, None, cost, "usage", "a", "p", name, None)


GROWING = [  # ckpt: $1.001 a day in April, $2.002 in May (two lines), $3.003 in June: growing; a / p level at $1
    _line("ckpt", APR, MAY, 30.03), _line("ckpt", MAY, JUN, 31.031), _line("ckpt", MAY, JUN, 31.031),
    _line("ckpt", JUN, JUL, 90.09), _line(None, APR, MAY, 30.0), _line(None, MAY, JUN, 31.0),
    _line(None, JUN, JUL, 30.0), *OTHERS]
LEVEL = [  # ckpt grows from April to May, then holds at $2 a day: a retention policy
    _line("ckpt", APR, MAY, 30.0), _line("ckpt", MAY, JUN, 62.0), _line("ckpt", JUN, JUL, 60.0), *OTHERS]
ONE_MONTH = [_line("ckpt", APR, MAY, 30.0), _line(None, APR, MAY, 5.0), OTHERS[0]]
NONE = OTHERS[:3]

# bill, the storage check's figure and amount (USD a month), growing lines, rows behind it (their costs)
CASES = [
    ("growing", GROWING, 90.09, ["ckpt"], [30.03, 31.031, 31.031, 90.09]),
    ("level", LEVEL, 0.0, [], []),
    ("one month", ONE_MONTH, None, None, [30.0, 5.0]),  # one month: no figure, its lines behind it
    ("none", NONE, None, None, None),  # no storage line
]
# each line's cost per month, by hand: name, month, cost
MONTHLY = {
    "growing": [("a / p", "2025-04", 30.0), ("a / p", "2025-05", 31.0), ("a / p", "2025-06", 30.0),
                ("ckpt", "2025-04", 30.03), ("ckpt", "2025-05", 62.062), ("ckpt", "2025-06", 90.09)],
    "level": [("ckpt", "2025-04", 30.0), ("ckpt", "2025-05", 62.0), ("ckpt", "2025-06", 60.0)],
    "one month": [("a / p", "2025-04", 5.0), ("ckpt", "2025-04", 30.0)],
    "none": [],
}


def _written(folder: Path, table: list[tuple]) -> tuple[Metadata, object]:
    """``table``'s rows written, rolled up and proven as an import does, its metadata by hand, and its rows as the
    engine reads them."""
    frame = pd.DataFrame(table, columns=COLUMNS)
    for column in ("period_start", "period_end"):
        frame[column] = pd.to_datetime(frame[column], utc=True).astype("datetime64[ns, UTC]")
    frame = frame.assign(billed_cost=frame["cost"], currency="USD", pricing="on_demand", gpu_type=None,
                         run_state=None, tokens=NAN, source_row=range(2, len(frame) + 2))
    return written(folder, frame)


def _view(usage, chooser=None, filters: Filters | None = None):
    """The whole dataset's view (its dates the export's), or under ``filters``, with its rollups where given."""
    bounds = FilterOptions(start=date(2025, 4, 1), end=date(2025, 6, 30))
    chosen = filters or Filters(bounds.start, bounds.end)
    view = dataclasses.replace(whole(usage), bounds=bounds, filters=chosen, rollups=chooser, plan=Scenario())
    return dataclasses.replace(view, shown=filtered(usage, chosen, view.narrowed))


def _storage(view) -> waste.WasteCheck:
    return {check.id: check for check in tabs.run(WASTE, view).checklist}["storage_growth"]


STORAGE_LABEL = "storage lines from the whole-period rollup by storage_line, currency, built 12:03"


@pytest.mark.parametrize(("case", "table", "figure", "growing", "behind"), CASES, ids=[c[0] for c in CASES])
def test_storage_growth_from_the_storage_rollup_is_the_hand_worked_figure_and_the_rows(
        tmp_path, case, table, figure, growing, behind):
    info, usage = _written(tmp_path, table)
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)
    view = _view(usage, chooser)
    assert STORAGE_LABEL in tabs.source(WASTE, view)[1]
    lines = view.whole_rollup(waste.STORAGE_GRAIN)[0]
    assert lines is not None and waste.STORAGE_GRAIN[0] in lines.columns
    monthly = waste.storage_by_month(lines)
    got = [(name, str(month), cost) for name, month, cost in monthly.itertuples(index=False)]
    assert [row[:2] for row in got] == [row[:2] for row in MONTHLY[case]]
    assert [row[2] for row in got] == pytest.approx([row[2] for row in MONTHLY[case]], abs=CENT)
    rows_monthly = waste.storage_by_month(usage)
    assert rows_monthly["cost"].tolist() == pytest.approx(monthly["cost"].tolist(), abs=CENT)
    check, from_rows = _storage(view), _storage(_view(usage))  # the rollup's answer, the rows'
    assert (check.figure is None) == (figure is None) and (check.usd is None) == (figure is None)
    if figure is not None:
        assert check.figure == pytest.approx(figure, abs=CENT) and check.usd == pytest.approx(figure, abs=CENT)
        assert from_rows.figure == pytest.approx(check.figure, abs=CENT)
    assert check.detail == from_rows.detail
    assert check.rows is None  # read when asked, as every check's the tab runs (but the duplicates it found)
    assert all(c.rows is None for c in tabs.run(WASTE, view).checklist if c.id != "duplicate_runs")
    if behind is None:
        assert check.behind is None
        return
    assert check.behind == from_rows.behind
    assert check.behind.names == (None if growing is None else tuple(growing))
    rows = waste.rows_behind(usage, check.behind)
    assert sorted(rows["cost"].tolist()) == pytest.approx(sorted(behind), abs=1e-9)
    eager = {c.id: c for c in waste.waste_checklist(usage)}["storage_growth"]  # read at once, as before
    assert eager.rows["source_row"].tolist() == rows["source_row"].tolist()


FALLBACKS = [  # the view, and the rollups it has (None: none, a view that is not a dataset's own rows)
    ("dates", Filters(date(2025, 4, 1), date(2025, 6, 29)), "all"),
    ("team", Filters(date(2025, 4, 1), date(2025, 6, 30), teams=("a",)), "all"),
    ("no storage rollup", None, "all but storage"),  # a dataset imported before it
    ("no rollups", None, None),
]


@pytest.mark.parametrize(("case", "filters", "kept"), FALLBACKS, ids=[c[0] for c in FALLBACKS])
def test_storage_growth_reads_the_rows_under_a_filter_or_without_the_rollup(tmp_path, case, filters, kept):
    info, usage = _written(tmp_path, GROWING)
    if kept == "all but storage":
        info = dataclasses.replace(info, rollups=[entry for entry in info.rollups if entry["name"] != "storage"])
    chooser = None if kept is None else rollup_rows.chooser(engine.default(), info, tmp_path)
    view = _view(usage, chooser, filters)
    assert view.whole_rollup(waste.STORAGE_GRAIN) == (None, "")
    assert STORAGE_LABEL not in tabs.source(WASTE, view)[1]
    # June ends a day early or team a only: the June lines are the same (they start on 1 June): $90.09 a month
    assert _storage(view).figure == pytest.approx(90.09, abs=CENT)


def test_the_storage_rollup_is_one_row_per_line_and_month_and_one_for_the_other_rows(tmp_path):
    info, _ = _written(tmp_path, GROWING)
    (entry,) = [entry for entry in info.rollups if entry["name"] == "storage"]
    # ckpt and a / p in each of three months, and the other rows' NULL line in each month they start in
    assert entry["rows"] == 2 * 3 + 3
    assert entry["months"] == {"2025-04": 3, "2025-05": 3, "2025-06": 3}


# Every check's rows behind it, read when asked, are those the checklist reads at once (the bundled-sample bill)
def test_every_checks_rows_read_when_asked_are_those_read_at_once(tmp_path):
    info, usage = _written(tmp_path, GROWING)
    lazy = waste.waste_checklist(usage, read_rows=False)
    eager = waste.waste_checklist(usage)
    for late, now in zip(lazy, eager, strict=True):
        assert (late.figure, late.usd, late.detail, late.behind) == (now.figure, now.usd, now.detail, now.behind)
        assert late.rows is None or late.id == "duplicate_runs"
        if late.behind is not None:
            assert waste.rows_behind(usage, late.behind)["source_row"].tolist() == now.rows["source_row"].tolist()
    untagged = {c.id: c for c in eager}["untagged_spend"]  # the commitment fee, by hand: no team, project or run
    assert untagged.rows["cost"].tolist() == [100.0]
