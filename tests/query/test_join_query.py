"""The billing x run-export join of the query layer (``dashboard.retro.join``): hand-worked cases, and equality with
the pandas join it replaced (``tests/oracle/join_pandas.py``) on the bundled samples and on random small tables, on
DuckDB (and once on Spark)."""

import dataclasses
import tempfile
from datetime import timedelta
from pathlib import Path

import ibis.expr.types as ir
import join_pandas_reference as oracle
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from usage_rows import usage

from dashboard.ingest import import_path
from dashboard.ingest.schema import CANONICAL_COLUMNS, ReadOptions
from dashboard.query import engine, tables
from dashboard.retro.join import JOIN_KEYS, JOIN_SIDES, LOW_MATCH_SHARE, JoinStats, join_usage, match_warning

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
PRICED = ["gpu_hours", "cost", "billed_cost"]
DESCRIPTIVE = [column for column in CANONICAL_COLUMNS if column not in PRICED]
DUST_GPU_HOURS = 1e-9  # an uncovered remainder this small is rounding (run hours equal to the bill's), not a row
ORIGIN = pd.Timestamp("2025-05-01", tz="UTC")
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)  # each example runs three queries: shrinking takes minutes


def approx(value):
    return pytest.approx(value, rel=1e-9, abs=1e-9)


def _bind(backend, billing: pd.DataFrame, runs: pd.DataFrame) -> tuple[ir.Table, ir.Table]:
    return tables.usage_table(backend, billing), tables.usage_table(backend, runs)


def _frame(joined: ir.Table) -> pd.DataFrame:
    """The joined table's rows as the oracle gives them (canonical dtypes, UTC times)."""
    frame = engine.execute(joined)
    for column in tables.TIME_COLUMNS:
        times = pd.to_datetime(frame[column])
        frame[column] = times.dt.tz_localize("UTC") if times.dt.tz is None else times.dt.tz_convert("UTC")
    return frame.astype(CANONICAL_COLUMNS | {"join_side": "string"})


def _without_dust(joined: pd.DataFrame) -> pd.DataFrame:
    dust = (joined["join_side"] == "billing") & joined["gpu_hours"].gt(0) & joined["gpu_hours"].le(DUST_GPU_HOURS)
    return joined.loc[~dust.fillna(False).to_numpy(dtype=bool)]


def _sides(joined: pd.DataFrame) -> dict[str, dict]:
    """Per join_side: rows, and sums of GPU-hours and both costs."""
    joined = _without_dust(joined)
    return {side: {"rows": int((joined["join_side"] == side).sum()),
                   **{column: float(joined.loc[joined["join_side"] == side, column].sum()) for column in PRICED}}
            for side in JOIN_SIDES}


def _by_run(joined: pd.DataFrame) -> pd.DataFrame:
    """Sums of GPU-hours and both costs per (join_side, run_id), an NA run as "(untagged)"."""
    keys = [joined["join_side"], joined["run_id"].astype("string").fillna("(untagged)")]
    return joined.groupby(keys)[PRICED].sum()


def _stats_dict(stats: JoinStats | dict) -> dict:
    """The stats by name, their tuples as lists (as the pandas join gives them)."""
    fields = dataclasses.asdict(stats) if isinstance(stats, JoinStats) else stats
    return {name: list(value) if isinstance(value, tuple) else value for name, value in fields.items()}


def _same_stats(got: JoinStats, want: dict) -> None:
    got = _stats_dict(got)
    assert list(got) == list(want)
    for key, value in want.items():
        if isinstance(value, float):
            assert got[key] == approx(value), key
        else:
            assert got[key] == value, key


def _same_as_oracle(backend, billing: pd.DataFrame, runs: pd.DataFrame, on: str) -> None:
    """The query join and the pandas join agree: stats, rows and sums per join_side, sums per run, and every row
    (rounding dust aside)."""
    joined, stats = join_usage(*_bind(backend, billing, runs), on=on)
    want, want_stats = oracle.join_usage(billing, runs, on=on)
    assert isinstance(joined, ir.Table)
    assert list(joined.columns) == [*CANONICAL_COLUMNS, "join_side"]
    _same_stats(stats, want_stats)
    got = _frame(joined)
    got_sides, want_sides = _sides(got), _sides(want)
    for side in JOIN_SIDES:
        assert got_sides[side]["rows"] == want_sides[side]["rows"], side
        for column in PRICED:
            assert got_sides[side][column] == approx(want_sides[side][column]), (side, column)
    got_runs, want_runs = _by_run(got), _by_run(want)
    cells = got_runs.index.union(want_runs.index)
    pd.testing.assert_frame_equal(got_runs.reindex(cells, fill_value=0.0), want_runs.reindex(cells, fill_value=0.0),
                                  check_exact=False, rtol=1e-9, atol=1e-9)
    order = ["join_side", *DESCRIPTIVE, *PRICED]
    rows = [_without_dust(frame).sort_values(order, na_position="first").reset_index(drop=True)
            for frame in (got, want)]
    pd.testing.assert_frame_equal(*rows, check_exact=False, rtol=1e-9, atol=1e-9)


# Hand-worked cases: billing rows, run rows, then per join_side (rows, GPU-hours, cost) and the stats they set.
# Billing rows default to one day from 1 May 2025 in USD; run rows are in no currency.
RUN_2_DAYS = {"period_start": "2025-05-01T12:00", "period_end": "2025-05-03T12:00", "gpu_hours": 16.0,
              "run_id": "A", "run_state": "COMPLETED", "currency": None}
DAILY_BILL = [{"period_start": day, "gpu_hours": 10.0, "cost": 20.0, "run_id": "A", "pricing": "reserved"}
              for day in ("2025-05-01", "2025-05-02", "2025-05-03")]
CASES = {
    # the run spends 12 h on 1 May, 24 h on 2 May, 12 h on 3 May: 4 + 8 + 4 GPU-h of its 16. Each day is billed
    # 10 GPU-h for $20, $2/GPU-h, so the run costs 16 x $2 = $32 and the bill keeps 30 - 16 = 14 GPU-h, $28, as
    # three rows: 6 GPU-h ($12), 2 GPU-h ($4) and 6 GPU-h ($12)
    "two-day run priced per day": (
        DAILY_BILL, [RUN_2_DAYS],
        {"both": (1, 16.0, 32.0), "billing": (3, 14.0, 28.0)},
        {"keys_matched": 1, "billing_gpu_hours": 30.0, "runs_gpu_hours": 16.0,
         "billing_gpu_hours_matched_share": 1.0, "runs_gpu_hours_matched_share": 1.0,
         "runs_gpu_hours_beyond_billing": 0.0}),
    # 40 GPU-h over the same days: 10 + 20 + 10. 2 May's 20 are capped at its 10 billed, so the run keeps
    # 10 + 10 + 10 = 30 GPU-h at $2 = $60, 10 GPU-h are beyond the bill, and no billed hour is left uncovered
    "run beyond its bill is capped": (
        DAILY_BILL, [RUN_2_DAYS | {"gpu_hours": 40.0}],
        {"both": (1, 30.0, 60.0), "billing": (0, 0.0, 0.0)},
        {"runs_gpu_hours": 40.0, "runs_gpu_hours_beyond_billing": 10.0, "runs_gpu_hours_matched_share": 1.0}),
    # the bill's run B is not in the run export and the export's run C is not billed: nothing is priced, the
    # bill stays as it is (5 GPU-h, $5), run C's 6 GPU-h are reported apart
    "unmatched keys": (
        [{"gpu_hours": 5.0, "cost": 5.0, "run_id": "B"}],
        [{"gpu_hours": 6.0, "run_id": "C", "currency": None}],
        {"both": (0, 0.0, 0.0), "billing": (1, 5.0, 5.0)},
        {"keys_matched": 0, "billing_keys_unmatched": ["B"], "runs_keys_unmatched": ["C"],
         "billing_gpu_hours_matched_share": 0.0, "billing_cost_matched_share": 0.0,
         "runs_gpu_hours_matched_share": 0.0, "runs_without_bill_gpu_hours": 6.0, "runs_without_bill_rows": 1}),
    # the storage line of run A has no GPU-hours: it is kept unchanged ($7) beside A's GPU line, which the run
    # covers in full (8 GPU-h of 8, $16); the billing cost matched is A's GPU cost only, $16 of $16
    "storage row kept": (
        [{"gpu_hours": 8.0, "cost": 16.0, "run_id": "A"},
         {"cost": 7.0, "run_id": "A", "resource_id": "bucket"}],
        [{"gpu_hours": 8.0, "run_id": "A", "currency": None}],
        {"both": (1, 8.0, 16.0), "billing": (1, 0.0, 7.0)},
        {"keys_matched": 1, "billing_cost_matched_share": 1.0}),
    # an NA run id never matches, not even another NA: the bill's 3 GPU-h stay, the run's 2 GPU-h are reported
    "NA keys never match": (
        [{"gpu_hours": 3.0, "cost": 3.0, "run_id": None}],
        [{"gpu_hours": 2.0, "run_id": None, "currency": None}],
        {"both": (0, 0.0, 0.0), "billing": (1, 3.0, 3.0)},
        {"keys_matched": 0, "billing_keys_unmatched": [], "runs_keys_unmatched": [],
         "runs_without_bill_gpu_hours": 2.0, "runs_without_bill_rows": 1}),
}


@pytest.mark.parametrize("case", CASES)
def test_hand_worked(duckdb_backend, case):
    bill_rows, run_rows, sides, stats = CASES[case]
    billing, runs = usage(*bill_rows), usage(*run_rows)
    joined, got_stats = join_usage(*_bind(duckdb_backend, billing, runs))
    for frame, frame_stats in ((_frame(joined), got_stats), oracle.join_usage(billing, runs)):
        summed = _sides(frame)
        for side, (rows, gpu_hours, cost) in sides.items():
            assert summed[side] == {"rows": rows, "gpu_hours": approx(gpu_hours), "cost": approx(cost),
                                    "billed_cost": approx(cost)}, side
        for key, value in stats.items():
            assert _stats_dict(frame_stats)[key] == (approx(value) if isinstance(value, float) else value), key


def test_matched_runs_take_the_bills_currency_and_the_keys_one_tier(duckdb_backend):
    billing = usage({"gpu_hours": 4.0, "cost": 8.0, "run_id": "A", "pricing": "spot", "currency": "EUR"},
                    {"gpu_hours": 4.0, "cost": 8.0, "run_id": "A", "pricing": None, "currency": "EUR"},
                    {"gpu_hours": 4.0, "cost": 8.0, "run_id": "B", "pricing": "spot", "currency": "EUR"})
    runs = usage({"gpu_hours": 2.0, "run_id": "A", "currency": None}, {"gpu_hours": 2.0, "run_id": "B"})
    joined, _ = join_usage(*_bind(duckdb_backend, billing, runs))
    both = _frame(joined).query("join_side == 'both'").set_index("run_id")
    assert both["currency"].tolist() == ["EUR", "EUR"]
    assert pd.isna(both.loc["A", "pricing"])  # spot and NA are two tiers
    assert both.loc["B", "pricing"] == "spot"


@pytest.mark.parametrize(("runs_file", "on"), [("slurm_sample.txt", "run_id"), ("slurm_sample.txt", "project"),
                                                ("wandb_sample.csv", "project")])
def test_bundled_samples_match_the_pandas_join(duckdb_backend, runs_file, on):
    options = ReadOptions(timezone="UTC")
    billing, _ = import_path(SAMPLES / "focus_sample.csv", options=options)
    runs, _ = import_path(SAMPLES / runs_file, options=options)
    _same_as_oracle(duckdb_backend, billing, runs, on)


def test_time_zone_aware_times_stay_so(duckdb_backend):
    """Tables stored as a workspace dataset stores them (Parquet, read as TIMESTAMP WITH TIME ZONE)."""
    options = ReadOptions(timezone="UTC")
    billing, _ = import_path(SAMPLES / "focus_sample.csv", options=options)
    runs, _ = import_path(SAMPLES / "slurm_sample.txt", options=options)
    with tempfile.TemporaryDirectory() as folder:
        billing.to_parquet(f"{folder}/billing.parquet")
        runs.to_parquet(f"{folder}/runs.parquet")
        joined, stats = join_usage(duckdb_backend.read_parquet(f"{folder}/billing.parquet"),
                                   duckdb_backend.read_parquet(f"{folder}/runs.parquet"))
        assert joined.schema()["period_start"].timezone == "UTC"
        want, want_stats = oracle.join_usage(billing, runs)
        _same_stats(stats, want_stats)
        got = _frame(joined)
        assert _sides(got) == {side: {key: approx(value) for key, value in sums.items()}
                               for side, sums in _sides(want).items()}


@st.composite
def rows(draw, run_export: bool) -> dict:
    start = ORIGIN + timedelta(minutes=15 * draw(st.integers(0, 4 * 24 * 6)))
    duration = draw(st.sampled_from([None, 0, -60, 15, 60, 24 * 60, 26 * 60, 3 * 24 * 60 + 45]))
    return {
        "period_start": start,
        "period_end": pd.NaT if duration is None else start + timedelta(minutes=duration),
        "gpu_hours": draw(st.sampled_from([0.0, 8.0, 24.0, 2.5, 192.0, -4.0, np.nan])),
        "cost": np.nan if run_export else draw(st.sampled_from([0.0, 10.0, 99.5, 480.0, -20.0, np.nan])),
        "currency": None if run_export else draw(st.sampled_from(["USD", "USD", None])),
        "pricing": draw(st.sampled_from(["reserved", "on_demand", "spot", None])),
        "charge_kind": None if run_export else draw(st.sampled_from(["usage", "commitment", None])),
        "gpu_type": draw(st.sampled_from(["H100", None])),
        "resource_id": draw(st.sampled_from([None, "1", "bucket-a"])),
        "team": draw(st.sampled_from(["a", None])),
        "project": draw(st.sampled_from(["p1", "p2", "p3", None])),
        "run_id": draw(st.sampled_from(["r1", "r2", "r3", "r4", None])),
        "run_state": draw(st.sampled_from(["COMPLETED", "FAILED", None])) if run_export else None,
        "tokens": draw(st.sampled_from([np.nan, 1e9])) if run_export else np.nan,
    }


def canonical(drawn: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(drawn, columns=[column for column in CANONICAL_COLUMNS if column != "source_row"])
    frame["billed_cost"] = frame["cost"]
    frame["source_row"] = [2 + position // 2 for position in range(len(frame))]  # some rows alike in every column
    for column in tables.TIME_COLUMNS:
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame[list(CANONICAL_COLUMNS)].astype(CANONICAL_COLUMNS)


bills = st.lists(rows(run_export=False), min_size=1, max_size=12).map(
    lambda drawn: drawn + drawn[: len(drawn) // 3]).map(canonical)  # a third of the rows twice
run_exports = st.lists(rows(run_export=True), min_size=1, max_size=10).map(
    lambda drawn: drawn + drawn[: len(drawn) // 4]).map(canonical)


@settings(max_examples=40, deadline=None, phases=NO_SHRINK, suppress_health_check=[HealthCheck.too_slow])
@given(billing=bills, runs=run_exports, on=st.sampled_from(JOIN_KEYS))
def test_random_tables_match_the_pandas_join(duckdb_backend, billing, runs, on):
    _same_as_oracle(duckdb_backend, billing, runs, on)


def test_spark_matches_the_pandas_join(spark_backend):
    options = ReadOptions(timezone="UTC")
    billing, _ = import_path(SAMPLES / "focus_sample.csv", options=options)
    runs, _ = import_path(SAMPLES / "slurm_sample.txt", options=options)
    _same_as_oracle(spark_backend, billing, runs, "run_id")
    # rows alike in every column, across days, some beyond the bill: Spark numbers each row the same way every time
    _same_as_oracle(spark_backend, usage(*DAILY_BILL, *DAILY_BILL),
                    usage(RUN_2_DAYS, RUN_2_DAYS, RUN_2_DAYS | {"gpu_hours": 40.0}), "run_id")


@pytest.mark.parametrize("side", ["billing", "runs", "both"])
def test_a_missing_side_returns_the_other_unchanged(duckdb_backend, side):
    billing, runs = _bind(duckdb_backend, *[usage(*rows) for rows in CASES["two-day run priced per day"][:2]])
    billing = None if side in ("billing", "both") else billing
    runs = None if side in ("runs", "both") else runs
    joined, stats = join_usage(billing, runs)
    assert joined is (runs if billing is None else billing)
    assert stats.billing_missing is (billing is None) and stats.runs_missing is (runs is None)
    assert stats.billing_gpu_hours == (None if billing is None else 30.0)
    assert stats.runs_gpu_hours == (None if runs is None else 16.0)
    assert match_warning(stats) is None


def test_a_low_match_warns():
    bill_rows, run_rows, _, _ = CASES["unmatched keys"]
    _, stats = join_usage(*_bind(engine.default(), usage(*bill_rows), usage(*run_rows)))
    assert stats.billing_gpu_hours_matched_share == 0.0 < LOW_MATCH_SHARE
    assert "Try joining on project" in match_warning(stats)


def test_unknown_key_and_two_engines_are_refused(duckdb_backend):
    billing = usage({"gpu_hours": 1.0, "run_id": "A"})
    with pytest.raises(ValueError, match="join key"):
        join_usage(*_bind(duckdb_backend, billing, billing), on="team")
    with pytest.raises(ValueError, match="same engine"):
        join_usage(tables.usage_table(duckdb_backend, billing), tables.usage_table(engine.connect("duckdb"), billing))
