"""Issue 52: Purchase mix (and its what-if at another mix), Unit costs and the tiles of a team- or project-filtered
view read a workspace dataset's smallest rollup by the signs of GPU-hours and cost (and, where rows carry tokens,
of tokens, with their GPU types: the runs rollup), and equal the rows' answer and the figures worked out by hand;
under a date filter no daily rollup keeps the signs, and a dataset without such a rollup reads the rows."""

import dataclasses
import math
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from written_dataset import written

from dashboard.query import engine
from dashboard.retro import mix, tabs
from dashboard.retro.registry import MIX, UNITS
from dashboard.retro.units import unit_costs
from dashboard.retro.view import Filters, filtered, tile_costs, tiles_source, whole
from dashboard.workspace import rollup_rows
from dashboard.workspace.datasets import Metadata

CENT = 0.005  # a rollup adds exact decimals, the rows doubles
NAN = float("nan")
H100_TFLOPS, A100_TFLOPS = 989.0, 312.0  # NVIDIA's dense BF16 peaks (the hardware catalogue's)
ACTIVE = 1e9  # the plan's active parameters, for MFU


def _written(folder: Path, table: list[tuple]) -> tuple[Metadata, object]:
    """``table``'s rows (start, GPU-hours, cost, pricing, team, project, GPU type, tokens; an hour long each)
    written and rolled up (and proven) as an import does, its metadata by hand, and its rows as the engine reads
    them."""
    frame = pd.DataFrame(table, columns=["period_start", "gpu_hours", "cost", "pricing", "team", "project",
                                         "gpu_type", "tokens"])
    frame["period_start"] = frame["period_start"].map(lambda text: pd.Timestamp(text, tz="UTC"))
    frame["period_end"] = frame["period_start"] + pd.Timedelta(1, "h")
    for column in ("period_start", "period_end"):
        frame[column] = frame[column].astype("datetime64[ns, UTC]")
    frame = frame.assign(billed_cost=frame["cost"], currency="EUR", charge_kind="usage",
                         run_id=frame["project"].map(lambda project: None if project is None else f"r-{project}"),
                         resource_id=None, run_state=None, source_row=range(2, len(frame) + 2))
    return written(folder, frame)


NO_FILTERS = Filters()


def _view(info: Metadata, usage, folder: Path, filters: Filters = NO_FILTERS, kept: tuple[str, ...] | None = None):
    """The page's view of the dataset's own rows under ``filters`` (its rollups those named in ``kept``; None:
    all built), and the same view without rollups (the rows' answer)."""
    if kept is not None:
        info = dataclasses.replace(info, rollups=[entry for entry in info.rollups if entry["name"] in kept])
    rows = dataclasses.replace(whole(usage), filters=filters)  # its bill is the rows, narrowed by ``narrowed_side``
    rows = dataclasses.replace(rows, shown=filtered(usage, filters, rows.narrowed),
                               plan=rows.plan.model_copy(update={"active_params": ACTIVE}))
    return dataclasses.replace(rows, rollups=rollup_rows.chooser(engine.default(), info, folder)), rows


H10, H12, DAY2 = "2025-04-01 10:00", "2025-04-01 12:00", "2025-04-02 00:00"
PRICED = [  # start, GPU-hours, cost, pricing, team, project, GPU type, tokens
    (H10, 8.0, 16.0, "reserved", "a", "p1", "H100", 1e9),
    (H10, 8.0, 24.0, "on_demand", "a", "p1", "H100", 3e9),
    (H12, 4.0, 4.0, "spot", "b", "p2", "A100", NAN),
    (H12, -2.0, -6.0, "on_demand", "a", "p1", "H100", NAN),  # a credit: a GPU row of negative GPU-hours
    (DAY2, None, 5.0, None, "a", None, None, NAN),  # storage
]
UNPRICED = [  # a GPU row with tokens and no cost; a line with neither GPU-hours nor a cost
    (H10, 8.0, 16.0, "reserved", "a", "p1", "H100", 2e9),
    (H12, 2.0, None, "spot", "b", "p2", "A100", 1e9),
    (H12, 0.0, 3.0, None, "b", "p2", None, NAN),  # 0 GPU-hours: not a GPU row
    (DAY2, None, None, None, "a", None, None, NAN),  # no cost: the other rows' cost is unknown
]
NO_TOKENS = [  # GPU-hours of unknown pricing; no row counts tokens
    (H10, 4.0, 12.0, "on_demand", "a", "p1", "H100", NAN),
    (H10, 2.0, 2.0, None, "b", "p2", "A100", NAN),
]
COSTLESS_GPU = [  # a GPU row without a cost, the other rows costed
    (H10, 8.0, None, "spot", "a", "p1", "H100", NAN),
    (DAY2, None, 5.0, None, "a", None, None, NAN),
]

# bill, per tier (reserved, on_demand, spot, then unknown when some GPU row has none): GPU-hours and cost; the cost
# of the rows without GPU-hours
MIXES = [
    (PRICED, [(8.0, 16.0), (8.0 - 2.0, 24.0 - 6.0), (4.0, 4.0)], 5.0),
    (UNPRICED, [(8.0, 16.0), (0.0, 0.0), (2.0, NAN)], NAN),  # a GPU row without a cost: its tier's cost unknown
    (NO_TOKENS, [(0.0, 0.0), (4.0, 12.0), (0.0, 0.0), (2.0, 2.0)], 0.0),
    # the GPU row's missing cost is no other row's: a rollup by the signs adds no row of NULL beside its sums
    (COSTLESS_GPU, [(0.0, 0.0), (0.0, 0.0), (8.0, NAN)], 5.0),
]


@pytest.mark.parametrize(("table", "tiers", "non_gpu_cost"), MIXES)
def test_the_purchase_mix_from_the_rollup_by_the_signs_is_the_rows_and_the_hand_worked_one(
        tmp_path, table, tiers, non_gpu_cost):
    info, usage = _written(tmp_path, table)
    view, rows = _view(info, usage, tmp_path)
    assert tabs.source(MIX, view)[1].startswith(("the hourly rollup", "the whole-period rollup"))  # the smallest
    shares = tabs.run(MIX, view).shares
    assert shares["gpu_hours"].tolist() == pytest.approx([hours for hours, _ in tiers], abs=CENT)
    assert shares["cost"].tolist() == pytest.approx([cost for _, cost in tiers], abs=CENT, nan_ok=True)
    from_rows = MIX.query(rows).shares
    for column in ("gpu_hours", "cost", "gpu_hours_share", "cost_share", "usd_per_gpu_hour"):
        assert shares[column].tolist() == pytest.approx(from_rows[column].tolist(), abs=1e-9, nan_ok=True), column
    assert shares["pricing"].tolist() == from_rows["pricing"].tolist()
    facts = mix.price_facts(tabs.bill_read(MIX, view))
    assert (facts.has_prices, facts.non_gpu_cost) == pytest.approx((True, non_gpu_cost), abs=CENT, nan_ok=True)
    rows_facts = mix.price_facts(usage)
    assert (facts.has_prices, facts.non_gpu_cost) == pytest.approx((rows_facts.has_prices, rows_facts.non_gpu_cost),
                                                                   abs=CENT, nan_ok=True)


def test_the_what_if_at_another_mix_reads_the_figures_rollup_and_is_the_rows(tmp_path):
    info, usage = _written(tmp_path, PRICED)
    view, _ = _view(info, usage, tmp_path)
    bill = tabs.bill_read(MIX, view)
    assert bill is not usage and bill is not None
    at_mix = mix.cost_at_mix(bill, 0.5, 0.25)
    # tiers paid 16/8 = 2, 18/6 = 3 and 4/4 = 1 EUR a GPU-hour: half reserved, a quarter spot, a quarter on-demand
    # blend to 0.5·2 + 0.25·1 + 0.25·3 = 2.0 EUR over the 8 + 6 + 4 = 18 GPU-hours, against 16 + 18 + 4 billed
    assert (at_mix.blended_usd_per_gpu_hour, at_mix.gpu_cost_at_mix, at_mix.actual_gpu_cost, at_mix.saving) == \
        pytest.approx((2.0, 36.0, 38.0, 2.0), abs=CENT)
    from_rows = dataclasses.asdict(mix.cost_at_mix(usage, 0.5, 0.25))
    for name, value in dataclasses.asdict(at_mix).items():
        assert value == (from_rows[name] if value is None else pytest.approx(from_rows[name], abs=CENT)), name


def _mfu(tokens: float, hours_by_peak: list[tuple[float, float]]) -> float:
    """6·N·tokens over the GPU-hours at their GPU-hour-weighted peak."""
    hours = sum(h for h, _ in hours_by_peak)
    peak = sum(h * p for h, p in hours_by_peak) / hours
    return 6 * ACTIVE * tokens / (hours * 3600 * peak * 1e12)


# bill, rows, GPU-hours, their cost, cost per GPU-hour, others' cost, tokens, cost per million tokens, MFU
UNITS_CASES = [
    (PRICED, 5, 8 + 8 + 4 - 2, 16 + 24 + 4 - 6, 38 / 18, 5.0, 1e9 + 3e9, (16 + 24) / 4e9 * 1e6,
     _mfu(4e9, [(16.0, H100_TFLOPS)])),
    # the A100 row's tokens count for MFU, not for the cost per million tokens (its cost is unknown)
    (UNPRICED, 4, 8 + 2, 16, 16 / 8, NAN, 2e9 + 1e9, 16 / 2e9 * 1e6,
     _mfu(3e9, [(8.0, H100_TFLOPS), (2.0, A100_TFLOPS)])),
    (NO_TOKENS, 2, 4 + 2, 12 + 2, 14 / 6, 0.0, 0.0, NAN, NAN),
]


@pytest.mark.parametrize(("table", "rows", "gpu_hours", "gpu_cost", "per_gpu_hour", "non_gpu_cost", "tokens",
                          "per_million_tokens", "mfu"), UNITS_CASES)
def test_the_unit_costs_from_the_runs_rollup_are_the_rows_and_the_hand_worked_ones(
        tmp_path, table, rows, gpu_hours, gpu_cost, per_gpu_hour, non_gpu_cost, tokens, per_million_tokens, mfu):
    info, usage = _written(tmp_path, table)
    view, from_rows = _view(info, usage, tmp_path)
    assert tabs.source(UNITS, view)[1].startswith("the whole-period rollup by team, project, run_id, run_state, "
                                                  "pricing, charge_kind, gpu_type,")
    numbers = tabs.run(UNITS, view).numbers
    got = (numbers.rows, numbers.gpu_hours, numbers.gpu_cost, numbers.usd_per_gpu_hour, numbers.non_gpu_cost,
           numbers.tokens, numbers.usd_per_million_tokens, numbers.mfu)
    worked = (rows, gpu_hours, gpu_cost, per_gpu_hour, non_gpu_cost, tokens, per_million_tokens, mfu)
    assert got == pytest.approx(worked, abs=CENT, rel=1e-9, nan_ok=True)
    expected = UNITS.query(from_rows).numbers
    assert dataclasses.astuple(numbers)[:-1] == pytest.approx(dataclasses.astuple(expected)[:-1], rel=1e-9,
                                                                abs=1e-9, nan_ok=True)
    assert numbers.reasons == expected.reasons


@pytest.mark.parametrize(("table", "kept", "read"), [
    (NO_TOKENS, None, "the hourly rollup"),  # no tokens: the smallest by the signs of GPU-hours and cost
    (PRICED, None, "the whole-period rollup by team, project, run_id, run_state, pricing, charge_kind, gpu_type,"),
    (PRICED, ("hourly", "daily_team"), None),  # tokens, and no rollup keeps their sign: the rows
    (NO_TOKENS, ("daily_team", "daily_gpu", "daily_run"), None),  # none groups by the signs
])
def test_the_whole_views_tiles_read_the_smallest_rollup_that_tells_their_rows_apart(tmp_path, table, kept, read):
    info, usage = _written(tmp_path, table)
    view, rows = _view(info, usage, tmp_path, kept=kept)
    source, label = tiles_source(view)
    assert (source is None) == (read is None) and label.startswith(read or "the rows (")
    assert dataclasses.astuple(tile_costs(view))[:-1] == pytest.approx(dataclasses.astuple(tile_costs(rows))[:-1],
                                                                       abs=CENT, nan_ok=True)
    # Unit costs read the runs rollup wherever it was kept (it alone keeps the GPU types), else the rows
    assert (tabs.source(UNITS, view)[0] is None) == (kept is not None and "runs" not in kept)
    assert dataclasses.astuple(tabs.run(UNITS, view).numbers)[:-1] == pytest.approx(
        dataclasses.astuple(UNITS.query(rows).numbers)[:-1], abs=CENT, nan_ok=True)


RUNS = "the whole-period rollup by team, project, run_id, run_state, pricing, charge_kind, gpu_type,"
FILTERED_TILES = [  # filters, the table the tiles read (None: the rows), rows, GPU-hours, GPU cost, tokens
    (Filters(teams=("a",)), RUNS, 3 + 1, 8 + 8 - 2, 16 + 24 - 6, 4e9),  # team a: its storage line too
    (Filters(projects=("p2",)), RUNS, 1, 4.0, 4.0, 0.0),
    (Filters(teams=("a",), pricing=("on_demand",)), RUNS, 2, 8 - 2, 24 - 6, 3e9),
    # a date range: no daily rollup keeps the signs, the rows answer (1 April's four rows)
    (Filters(start=date(2025, 4, 1), end=date(2025, 4, 1)), None, 4, 18.0, 38.0, 4e9),
]


@pytest.mark.parametrize(("filters", "read", "rows", "gpu_hours", "gpu_cost", "tokens"), FILTERED_TILES)
def test_a_filtered_views_tiles_read_a_rollup_that_keeps_the_filters_columns(
        tmp_path, filters, read, rows, gpu_hours, gpu_cost, tokens):
    info, usage = _written(tmp_path, PRICED)
    view, from_rows = _view(info, usage, tmp_path, filters)
    source, label = tiles_source(view)
    assert (source is None) == (read is None) and label.startswith(read or "the rows (5)")
    tiles = tile_costs(view)
    assert (tiles.rows, tiles.gpu_hours, tiles.gpu_cost, tiles.tokens) == pytest.approx(
        (rows, gpu_hours, gpu_cost, tokens), abs=CENT)
    assert dataclasses.astuple(tiles)[:-1] == pytest.approx(dataclasses.astuple(tile_costs(from_rows))[:-1],
                                                            abs=CENT, nan_ok=True)
    assert tiles.mfu != tiles.mfu  # NaN: the tiles take no plan
    numbers = tabs.run(UNITS, view).numbers  # the Unit costs tab under the same filters
    assert (numbers.rows, numbers.gpu_hours) == pytest.approx((rows, gpu_hours), abs=CENT)
    assert (tabs.source(UNITS, view)[0] is None) == (read is None)


def test_a_rollup_by_the_signs_without_gpu_types_cannot_stand_in_for_rows_with_tokens(tmp_path):
    info, usage = _written(tmp_path, PRICED)
    hourly = rollup_rows.chooser(engine.default(), info, tmp_path)(("gpu_sign", "cost_sign"), None)[0]
    assert hourly is not None
    with pytest.raises(ValueError, match="tokens"):
        unit_costs(hourly)
    assert not math.isnan(unit_costs(usage).usd_per_million_tokens)  # the rows answer


def test_a_filtered_rollup_is_the_same_table_each_time_so_its_small_results_are_kept(tmp_path):
    info, usage = _written(tmp_path, PRICED)
    view, _ = _view(info, usage, tmp_path, Filters(teams=("a",)))
    first, again = tiles_source(view)[0], tiles_source(dataclasses.replace(view))[0]
    assert first is not None and first is again
    team_b = _view(info, usage, tmp_path, Filters(teams=("b",)))[0]
    assert tiles_source(team_b)[0] is not first
    assert (tile_costs(team_b).rows, tile_costs(team_b).gpu_hours) == (1, 4.0)  # team b's spot row alone
