"""Issue 52: the Retrospective's first view over a workspace dataset's own rows reads its rollups. What is to be done
with commitments (``amortise.commitment_status``), the lone bill's join stats, its currencies and the tiles' sums come
from the smallest rollup that holds the row tests they make (the hourly one, grouped by the signs of GPU-hours and
cost), and equal the rows' and the figures worked out by hand; without such a rollup they read the rows. With
tokens, or under a team filter, the tiles read the runs rollup (by the signs of tokens too, and by team)."""

import dataclasses
import math
from pathlib import Path

import pandas as pd
import pytest
from written_dataset import written

from dashboard.query import engine
from dashboard.retro import amortise, join, units
from dashboard.retro.view import Filters, export_currencies, filtered, rollup_of, tile_costs, tiles_source, whole
from dashboard.workspace import rollup_rows
from dashboard.workspace.datasets import Metadata

CENT = 0.005  # a rollup adds exact decimals, the rows doubles
NAN = float("nan")


def _written(folder: Path, table: list[tuple], tokens: float = NAN) -> tuple[Metadata, object]:
    """``table``'s rows (start hour on 1 or 2 April 2025, GPU-hours, cost, pricing, charge kind, team) written and
    rolled up (and proven) as an import does, its metadata by hand, and its rows as the engine reads them; the first
    row carries ``tokens``."""
    frame = pd.DataFrame(table, columns=["period_start", "gpu_hours", "cost", "pricing", "charge_kind", "team"])
    frame["period_start"] = frame["period_start"].map(lambda text: pd.Timestamp(text, tz="UTC"))
    frame["period_end"] = frame["period_start"] + pd.Timedelta(1, "h")
    for column in ("period_start", "period_end"):
        frame[column] = frame[column].astype("datetime64[ns, UTC]")
    frame = frame.assign(billed_cost=frame["cost"], currency="EUR", project=None, run_id=None, gpu_type="H100",
                         resource_id=None, run_state=None, tokens=[tokens] + [NAN] * (len(frame) - 1),
                         source_row=range(2, len(frame) + 2))
    return written(folder, frame)


H10, H12, DAY2 = "2025-04-01 10:00", "2025-04-01 12:00", "2025-04-02 00:00"
ACTUAL_COST = [  # start, GPU-hours, cost, pricing, charge kind, team: the reserved usage at $0, its fees apart
    (H10, 8.0, 0.0, "reserved", "usage", "a"),
    (H10, 8.0, 0.0, "reserved", "usage", "a"),
    (H12, 4.0, 10.0, "on_demand", "usage", "b"),
    (H12, -2.0, -5.0, "on_demand", "usage", "b"),  # a credit in the same hour and tier: no GPU row
    (H12, 2.0, None, "spot", "usage", "b"),  # a GPU row without a cost
    (H10, None, 100.0, "reserved", "commitment", None),
    (DAY2, None, 50.0, "reserved", "commitment", None),
    (DAY2, None, 3.0, None, "usage", "a"),  # storage
]
PROVIDER = [  # the export amortises itself: the reserved usage priced, the unused part on its own line
    (H10, 8.0, 20.0, "reserved", "usage", "a"),
    (H12, 4.0, 10.0, "on_demand", "usage", "b"),
    (DAY2, None, 30.0, "reserved", "unused_commitment", None),
]
PRICED_AND_PAID = [  # fees billed apart, but the reserved usage is priced already: nothing to spread them over
    (H10, 8.0, 20.0, "reserved", "usage", "a"),
    (H10, None, 100.0, "reserved", "commitment", None),
]
NO_GPU = [  # storage only, one line without a cost
    (H10, None, None, None, "usage", "a"),
    (DAY2, 0.0, 3.0, None, "usage", "a"),
]
NONE = [(H10, 8.0, 20.0, "on_demand", "usage", "a")]

STATUSES = [  # rows, status, commitment cost, unused cost (EUR)
    (ACTUAL_COST, "to_spread", 150.0, 0.0),
    (PROVIDER, "provider", 30.0, 30.0),
    (PRICED_AND_PAID, "excluded", 100.0, 0.0),
    (NO_GPU, "no_gpu", 0.0, 0.0),
    (NONE, "none", 0.0, 0.0),
]


@pytest.mark.parametrize(("table", "status", "commitment_usd", "unused_usd"), STATUSES)
def test_the_commitment_status_from_a_rollup_by_the_signs_is_the_rows_and_the_hand_worked_one(
        tmp_path, table, status, commitment_usd, unused_usd):
    info, usage = _written(tmp_path, table)
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)
    assert chooser(amortise.STATUS_GRAIN, None)[1].startswith(("the hourly rollup", "the whole-period rollup"))
    rolled = rollup_of(chooser, amortise.STATUS_GRAIN)
    from_rollup, from_rows = amortise.commitment_status(rolled), amortise.commitment_status(usage)
    assert (from_rollup.status, from_rollup.commitment_usd, from_rollup.unused_usd) == pytest.approx(
        (status, commitment_usd, unused_usd), abs=CENT)
    assert dataclasses.astuple(from_rollup) == pytest.approx(dataclasses.astuple(from_rows), abs=CENT)


def test_commitments_spread_with_the_status_from_the_rollup_are_spread_as_from_the_rows(tmp_path):
    info, usage = _written(tmp_path, ACTUAL_COST)
    rolled = rollup_of(rollup_rows.chooser(engine.default(), info, tmp_path), amortise.STATUS_GRAIN)
    table, done = amortise.amortise_commitments(usage, status_from=rolled)
    # 1 April's 100 EUR goes on its 16 reserved GPU-hours; 2 April has none: its 50 EUR stay on the line, unused
    assert (done.status, done.spread_usd, done.unused_usd) == pytest.approx(("amortised", 100.0, 50.0), abs=CENT)
    assert done == amortise.amortise_commitments(usage)[1]
    assert table is not usage  # the rows themselves are amortised


# rows, GPU-hours of the GPU rows, their cost, those with a cost's GPU-hours, the others' cost, positive GPU-hours
TILES = [
    (ACTUAL_COST, 8 + 8 + 4 - 2 + 2, 0 + 0 + 10 - 5, 8 + 8 + 4 - 2, 100 + 50 + 3, 8 + 8 + 4 + 2),
    (PROVIDER, 12.0, 30.0, 12.0, 30.0, 12.0),
    (NO_GPU, 0.0, 0.0, 0.0, NAN, 0.0),  # a line without a cost and without GPU-hours: the others' cost unknown
]


@pytest.mark.parametrize(("table", "gpu_hours", "gpu_cost", "priced_gpu_hours", "non_gpu_cost", "positive_gpu_hours"),
                         TILES)
def test_the_tiles_and_the_join_stats_from_the_rollup_are_the_rows_and_the_hand_worked_ones(
        tmp_path, table, gpu_hours, gpu_cost, priced_gpu_hours, non_gpu_cost, positive_gpu_hours):
    info, usage = _written(tmp_path, table)
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)
    sums = units.rollup_unit_sums(rollup_of(chooser, units.SUMS_GRAIN))
    assert sums is not None
    worked = (len(table), gpu_hours, gpu_cost, priced_gpu_hours, non_gpu_cost)
    got = (sums.rows, sums.gpu_hours, sums.gpu_cost, sums.priced_gpu_hours, sums.non_gpu_cost)
    assert got == pytest.approx(worked, abs=CENT, nan_ok=True)
    assert (sums.has_prices, sums.tokens, sums.token_cost) == (True, 0.0, 0.0)
    rows = units.unit_sums(usage)
    assert dataclasses.astuple(sums) == pytest.approx(dataclasses.astuple(rows), abs=CENT, nan_ok=True)
    view = dataclasses.replace(whole(usage), rollups=chooser)
    assert tile_costs(view).rows == len(table)  # the view's tiles read the rollup's sums
    stats = join.join_usage(usage, None, stats_from=rollup_of(chooser, join.STATS_GRAIN))[1]
    assert stats.billing_gpu_hours == pytest.approx(positive_gpu_hours, abs=CENT)
    assert stats == join.join_usage(usage, None)[1]


def test_the_currencies_come_from_the_smallest_rollup(tmp_path):
    info, usage = _written(tmp_path, PROVIDER)
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)
    assert rollup_of(chooser, ("currency",)) is not None
    assert export_currencies(usage, chooser) == ("EUR",) == export_currencies(usage)


def test_a_row_with_tokens_moves_the_tiles_to_the_rollup_by_the_sign_of_tokens(tmp_path):
    """The hourly rollup keeps the tokens' sum, not which GPU rows carry them: the tiles read the runs rollup, which
    groups by the sign of tokens and the GPU type too (before it did, they read the rows)."""
    info, usage = _written(tmp_path, ACTUAL_COST, tokens=2e9)
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)
    assert units.rollup_unit_sums(rollup_of(chooser, units.SUMS_GRAIN)) is None
    view = dataclasses.replace(whole(usage), rollups=chooser)
    assert tiles_source(view)[1].startswith("the whole-period rollup by team, project, run_id, run_state, pricing, "
                                            "charge_kind, gpu_type, gpu_sign, cost_sign, tokens_sign,")
    tiles = tile_costs(view)
    assert (tiles.rows, tiles.tokens, tiles.token_gpu_hours) == (8, 2e9, 8.0)  # the first row's 8 GPU-hours
    assert tiles.usd_per_million_tokens == 0.0  # its cost is 0


@pytest.mark.parametrize(("kept", "answered"), [
    (("hourly", "daily_team"), True),
    (("runs",), True),  # the whole-period rollup by run groups by the signs too
    (("daily_team", "daily_gpu", "daily_run"), False),  # none groups by the signs: the rows answer
    ((), False),  # a dataset imported before rollups
])
def test_without_a_rollup_by_the_signs_the_first_view_reads_the_rows(tmp_path, kept, answered):
    info, usage = _written(tmp_path, ACTUAL_COST)
    info = dataclasses.replace(info, rollups=[entry for entry in info.rollups if entry["name"] in kept])
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)
    for grain in (amortise.STATUS_GRAIN, units.SUMS_GRAIN, join.STATS_GRAIN):
        assert (rollup_of(chooser, grain) is not None) == answered
    assert amortise.amortise_commitments(usage, rollup_of(chooser, amortise.STATUS_GRAIN))[1].status == "amortised"
    assert tile_costs(dataclasses.replace(whole(usage), rollups=chooser)).gpu_hours == pytest.approx(20.0, abs=CENT)
    assert rollup_of(None, amortise.STATUS_GRAIN) is None  # a view that is not a dataset's own rows


def test_a_team_filtered_view_reads_its_tiles_from_a_rollup_by_team_and_the_signs(tmp_path):
    """The runs rollup keeps the team beside the signs (before it did, a filtered view read its rows)."""
    info, usage = _written(tmp_path, ACTUAL_COST)
    chooser = rollup_rows.chooser(engine.default(), info, tmp_path)
    chosen = Filters(teams=("b",))
    view = dataclasses.replace(whole(usage), filters=chosen, shown=filtered(usage, chosen, True), rollups=chooser)
    assert tiles_source(view)[1].startswith("the whole-period rollup by team,")
    tiles = tile_costs(view)
    # team b: 4 + 2 GPU-hours with a credit of 2: three rows, 4 GPU-hours; 10 − 5 EUR
    assert (tiles.rows, tiles.gpu_hours, tiles.gpu_cost) == pytest.approx((3, 4.0, 5.0), abs=CENT)
    assert not math.isnan(tiles.usd_per_gpu_hour)
