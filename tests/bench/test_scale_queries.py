"""The hand-written SQL of `make bench-scale` computes what the query layer computes: on a generated FOCUS dataset,
Plan vs actual's, Unit costs' and Waste's hand queries give the layer's sums (so their ratio compares the same work)."""

import math

import pyarrow.parquet as pq
import pytest

from bench import scale_queries
from bench.ingest_bench import focus_table
from dashboard.query.columns import number
from dashboard.workspace.imports import import_to_workspace

PLAN_SUMS = ("gpu_hours", "main_ok_gpu_hours", "main_gpu_hours", "failed_gpu_hours", "experiment_gpu_hours",
             "unattributed_gpu_hours", "token_gpu_hours", "tokens", "costless_gpu_hours", "gpu_usd", "commitment_usd",
             "unused_commitment_usd")
UNIT_SUMS = ("gpu_hours", "priced_gpu_hours", "gpu_cost", "tokens", "token_gpu_hours", "priced_tokens", "token_cost",
             "non_gpu_cost")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scale")
    (folder / "parts").mkdir()
    pq.write_table(focus_table(6000, seed=3), folder / "parts" / "part-0000.parquet")
    workspace = folder / "workspace"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PLANNER_WORKSPACE_DIR", str(workspace))
        import_to_workspace(folder / "parts", "focus", stream_min_bytes=0)
        scale_queries.prepare("duckdb", str(workspace), "focus")
        yield


def _close(hand: object, layer: object) -> bool:
    return math.isclose(number(hand), number(layer), rel_tol=1e-9, abs_tol=1e-9)


def test_plan_vs_actual_hand_sql_gives_the_layers_sums(prepared):
    by_run, sums = scale_queries.run("duckdb", "focus", "Plan vs actual", "layer")
    hand = scale_queries.run("duckdb", "focus", "Plan vs actual", "sql")
    assert sums.gpu_hours > 0 and sums.host_usd > 0 and sums.main_gpu_hours > 0  # the data exercise them
    assert len(hand[0]) == len(by_run)
    assert all(_close(h, getattr(sums, name)) for h, name in zip(hand[1].iloc[0], PLAN_SUMS, strict=True))
    host_usd, states_known = hand[2].iloc[0]
    assert _close(host_usd, sums.host_usd) and bool(states_known) == sums.states_known
    assert list(hand[3].iloc[0]) == [sums.cost_known, sums.reserved_gpu, sums.reserved_gpu_priced]


def test_unit_costs_hand_sql_gives_the_layers_sums(prepared):
    sums, by_type = scale_queries.run("duckdb", "focus", "Unit costs", "layer")
    hand = scale_queries.run("duckdb", "focus", "Unit costs", "sql")
    row = hand[0].iloc[0]
    assert all(_close(h, getattr(sums, name)) for h, name in zip(row.iloc[:8], UNIT_SUMS, strict=True))
    assert (row.iloc[8] > 0) == math.isnan(sums.non_gpu_cost)
    assert bool(hand[1].iloc[0, 0]) == sums.has_prices
    assert len(hand[2]) == len(by_type)


def test_waste_hand_sql_gives_the_layers_checks(prepared):
    failed, successful, idle, jobs, storage, untagged = scale_queries.run("duckdb", "focus", "Waste", "layer")
    checks, flags, months = scale_queries.run("duckdb", "focus", "Waste", "sql")
    row = checks.iloc[0]
    assert idle.unused_lines > 0 and idle.untagged_gpu_hours > 0 and len(storage) > 0  # the data exercise them
    layer = [failed.known_gpu_hours, failed.failed_gpu_hours, failed.gpu_hours, failed.failed_cost,
             successful.completed_cost, successful.known_cost, successful.completed_gpu_hours, successful.total_cost,
             idle.unused_lines, idle.unused_cost, None, None, idle.untagged_gpu_hours, idle.untagged_cost, None, None,
             untagged.untagged_cost, untagged.untagged_row_count]
    assert all(_close(h, value) for h, value in zip(row, layer, strict=True) if value is not None)
    assert (str(row.iloc[10].date()), str(row.iloc[11].date())) == (idle.first_day, idle.last_day)
    assert (jobs.jobs, jobs.repeated) == (row.iloc[14] > 0, row.iloc[14] > row.iloc[15])
    assert list(flags.iloc[0]) == [failed.known, failed.cost_known, idle.commitment, idle.reserved_gpu,
                                   idle.reserved_gpu_priced, idle.untagged]
    assert len(months) == len(storage)
    assert _close(months.iloc[:, 3].sum(), storage["cost"].sum())
