"""Joining billing and run exports (``dashboard.retro.join``, a query over their tables): per-day prices on run hours
capped at the bill, uncovered billing kept, unmatched run hours reported apart, match rates by hand."""

from pathlib import Path

import pandas as pd
import pytest
from usage_rows import usage

from dashboard.ingest import import_path
from dashboard.ingest.schema import CANONICAL_COLUMNS, ReadOptions
from dashboard.query import tables
from dashboard.retro.join import JOIN_SIDES, JoinStats, join_usage, match_warning

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"


def _bound(frame: pd.DataFrame | None):
    """``frame`` as a table of the default engine (None stays None: a side not loaded)."""
    return None if frame is None else tables.table_of(frame)


def _rows(joined) -> pd.DataFrame:
    """The joined table's rows, sorted by side, source row and start (the query's rows come in no order)."""
    return joined.to_pandas().sort_values(["join_side", "source_row", "period_start"], ignore_index=True)


def _join(billing: pd.DataFrame | None, runs: pd.DataFrame | None, on: str = "run_id"):
    """The two frames bound and joined: the joined rows (``_rows``) and the stats."""
    joined, stats = join_usage(_bound(billing), _bound(runs), on=on)
    return _rows(joined), stats


# Run A is billed at $2/GPU-h on 1 May and $4/GPU-h on 2 May; B is billed but not in the run export.
RESERVED_A = {"run_id": "A", "project": "p", "pricing": "reserved"}
BILLING = usage(
    {"period_start": "2025-05-01", "gpu_hours": 10.0, "cost": 20.0, **RESERVED_A},
    {"period_start": "2025-05-02", "gpu_hours": 10.0, "cost": 40.0, **RESERVED_A},
    {"period_start": "2025-05-01", "gpu_hours": 5.0, "cost": 5.0, "run_id": "B", "project": "q", "pricing": "spot"},
    {"period_start": "2025-05-01", "gpu_hours": 3.0, "cost": 3.0},  # untagged
    {"period_start": "2025-05-01", "cost": 7.0, "resource_id": "bucket", "project": "p"},  # storage
)
# Run A's job spans noon 1 May to noon 2 May (4 GPU-h on each day); run C is not billed, its project is.
RUNS = usage(
    {"period_start": "2025-05-01T12:00", "period_end": "2025-05-02T12:00", "gpu_hours": 8.0, "run_id": "A",
     "project": "p", "run_state": "COMPLETED", "tokens": 100.0, "resource_id": "1001", "currency": None},
    {"period_start": "2025-05-01T00:00", "period_end": "2025-05-01T06:00", "gpu_hours": 6.0, "run_id": "C",
     "project": "p", "run_state": "FAILED", "resource_id": "1002", "currency": None},
)


def test_run_hours_are_priced_per_day_and_the_rest_of_the_bill_is_kept():
    table, stats = join_usage(_bound(BILLING), _bound(RUNS))
    assert list(table.columns) == [*CANONICAL_COLUMNS, "join_side"]
    joined = _rows(table)
    assert set(joined["join_side"]) == set(JOIN_SIDES)
    both = joined[joined["join_side"] == "both"]
    assert len(both) == 1
    priced = both.iloc[0]
    assert priced["cost"] == pytest.approx(4 * 2.0 + 4 * 4.0)
    assert priced["billed_cost"] == pytest.approx(24.0)
    assert (priced["run_state"], priced["tokens"], priced["resource_id"]) == ("COMPLETED", 100.0, "1001")
    assert (priced["currency"], priced["pricing"]) == ("USD", "reserved")

    residual = joined[(joined["join_side"] == "billing") & joined["run_id"].eq("A").fillna(False)]
    assert residual["gpu_hours"].tolist() == pytest.approx([6.0, 6.0])  # 10 billed - 4 in the run export, each day
    assert residual["cost"].tolist() == pytest.approx([12.0, 24.0])
    assert residual["run_state"].isna().all()

    assert not joined["run_id"].eq("C").any()  # run C has no bill: reported, never added to the billed hours
    assert (stats.runs_without_bill_gpu_hours, stats.runs_without_bill_rows) == (6.0, 1)
    assert joined["gpu_hours"].sum() == pytest.approx(BILLING["gpu_hours"].sum())
    assert joined["cost"].sum() == pytest.approx(BILLING["cost"].sum())
    assert stats.runs_gpu_hours_beyond_billing == 0.0


@pytest.mark.parametrize(("on", "billing_hours_share", "billing_cost_share", "runs_hours_share", "matched"), [
    # billing GPU rows: A 20 h / $60, B 5 h / $5, untagged 3 h / $3; runs: A 8 h, C 6 h
    ("run_id", 20 / 28, 60 / 68, 8 / 14, 1),
    # projects: billing p (A) and q (B); both runs are in p
    ("project", 20 / 28, 60 / 68, 14 / 14, 1),
])
def test_match_rates(on, billing_hours_share, billing_cost_share, runs_hours_share, matched):
    _, stats = _join(BILLING, RUNS, on=on)
    assert stats.billing_gpu_hours_matched_share == pytest.approx(billing_hours_share)
    assert stats.billing_cost_matched_share == pytest.approx(billing_cost_share)
    assert stats.runs_gpu_hours_matched_share == pytest.approx(runs_hours_share)
    assert stats.keys_matched == matched
    assert stats.billing_gpu_hours == 28.0 and stats.runs_gpu_hours == 14.0
    assert not stats.billing_missing and not stats.runs_missing


def test_unmatched_keys_are_listed():
    _, stats = _join(BILLING, RUNS)
    assert stats.billing_keys_unmatched == ("B",)
    assert stats.runs_keys_unmatched == ("C",)


def test_run_hours_beyond_the_bill_are_capped_at_the_bill():
    runs = usage({"period_start": "2025-05-01", "gpu_hours": 15.0, "run_id": "A", "run_state": "COMPLETED"},
                 {"period_start": "2025-05-03", "gpu_hours": 2.0, "run_id": "A", "run_state": "COMPLETED"})
    joined, stats = _join(BILLING, runs)
    both = joined[joined["join_side"] == "both"]
    # 1 May: 15 h run against 10 h billed at $2, so 10 h and $20; 3 May has no billed hours for A: 0 h, $0
    assert both["gpu_hours"].tolist() == pytest.approx([10.0, 0.0])
    assert both["cost"].tolist() == pytest.approx([20.0, 0.0])
    assert stats.runs_gpu_hours_beyond_billing == pytest.approx(5.0 + 2.0)
    residual = joined[(joined["join_side"] == "billing") & joined["run_id"].eq("A").fillna(False)]
    assert residual["period_start"].dt.day.tolist() == [2]  # 1 May is fully covered by the run export


def test_mixed_pricing_tiers_leave_the_tier_unknown():
    billing = usage({"gpu_hours": 10.0, "cost": 20.0, "run_id": "A", "pricing": "reserved"},
                    {"gpu_hours": 10.0, "cost": 60.0, "run_id": "A", "pricing": "on_demand"})
    runs = usage({"gpu_hours": 5.0, "run_id": "A", "run_state": "COMPLETED"})
    joined, _ = _join(billing, runs)
    priced = joined[joined["join_side"] == "both"].iloc[0]
    assert priced["cost"] == pytest.approx(5 * 4.0)
    assert pd.isna(priced["pricing"])


@pytest.mark.parametrize("missing", ["billing", "runs", "both"])
def test_a_missing_side_returns_the_other_unchanged(missing):
    billing = None if missing in ("billing", "both") else _bound(BILLING)
    runs = None if missing in ("runs", "both") else _bound(RUNS)
    joined, stats = join_usage(billing, runs)
    assert joined is (runs if billing is None else billing)
    assert stats.billing_missing == (billing is None)
    assert stats.runs_missing == (runs is None)
    assert stats.billing_gpu_hours_matched_share is None
    assert stats.runs_gpu_hours_matched_share is None


def test_nothing_matches():
    runs = usage({"gpu_hours": 5.0, "run_id": "Z", "run_state": "COMPLETED"})
    joined, stats = _join(BILLING, runs)
    assert stats.keys_matched == 0
    assert stats.billing_gpu_hours_matched_share == 0.0 and stats.runs_gpu_hours_matched_share == 0.0
    assert set(joined["join_side"]) == {"billing"}
    assert len(joined) == len(BILLING)
    assert stats.runs_without_bill_gpu_hours == 5.0


# Billed GPU rows: A 20 h / $60 (10 h each on 1 and 2 May), B 5 h / $5, untagged 3 h / $3: 28 h and $68.
@pytest.mark.parametrize(("runs", "matched_share"), [
    pytest.param([{"gpu_hours": 50.0, "run_id": "Z"}], 0.0, id="0 % matched"),
    pytest.param([{"period_start": "2025-05-01", "gpu_hours": 40.0, "run_id": "A"},
                  {"gpu_hours": 50.0, "run_id": "Z"}], 20 / 28, id="partial, more run hours than billed"),
    pytest.param([{"period_start": "2025-05-01", "gpu_hours": 10.0, "run_id": "A"},
                  {"period_start": "2025-05-02", "gpu_hours": 10.0, "run_id": "A"},
                  {"period_start": "2025-05-01", "gpu_hours": 5.0, "run_id": "B"}], 25 / 28, id="every run matched"),
])
def test_the_joined_hours_and_cost_never_exceed_the_bill(runs, matched_share):
    joined, stats = _join(BILLING, usage(*({"run_state": "COMPLETED", "currency": None} | row for row in runs)))
    assert stats.billing_gpu_hours_matched_share == pytest.approx(matched_share)
    assert joined["gpu_hours"].sum() == pytest.approx(28.0)
    assert joined["cost"].sum() == pytest.approx(68.0 + 7.0)  # GPU rows and the storage line


@pytest.mark.parametrize(("share", "warned", "written"), [
    (None, False, ""), (0.0, True, "0 %"), (0.79, True, "79 %"), (0.0123, True, "1.23 %"), (0.8, False, ""),
    (1.0, False, ""),
])
def test_a_low_match_is_warned_with_the_fix(share, warned, written):
    stats = JoinStats(on="run_id", billing_missing=False, runs_missing=share is None,
                      billing_gpu_hours_matched_share=share)
    message = match_warning(stats)
    assert (message is not None) == warned
    if warned:
        assert f"Only {written} of billed GPU-hours" in message and "joining on project" in message


def test_unknown_key_is_refused():
    with pytest.raises(ValueError, match="join key"):
        join_usage(_bound(BILLING), _bound(RUNS), on="team")


# Billing GPU run tags: the 13 tags less tokenize-corpus (CPU only) = 12, each a Slurm job name. Billing GPU projects:
# pretrain-13b, ablations, data-mix, tokenizer, chat, evals (dataprep is CPU only) = 6, the Slurm WCKeys and the W&B
# project tags (Group "evals" for evaluations). The untagged dev box has neither key.
@pytest.mark.parametrize(("runs_file", "on", "matched"), [("slurm_sample.txt", "run_id", 12),
                                                           ("slurm_sample.txt", "project", 6),
                                                           ("wandb_sample.csv", "project", 6)])
def test_bundled_samples(runs_file, on, matched):
    options = ReadOptions(timezone="UTC")
    billing, _ = import_path(SAMPLES / "focus_sample.csv", options=options)
    runs, _ = import_path(SAMPLES / runs_file, options=options)
    joined, stats = _join(billing, runs, on=on)
    assert stats.keys_matched == matched
    assert stats.billing_keys_unmatched == () and stats.runs_keys_unmatched == ()
    assert stats.runs_gpu_hours_matched_share == 1.0
    for share in ("billing_gpu_hours_matched_share", "billing_cost_matched_share"):
        assert 0 < getattr(stats, share) < 1  # the untagged dev box
    # the run exports cover the quarter and stay within the bill of their key every day, so the bill is kept exactly
    assert stats.runs_gpu_hours_beyond_billing == pytest.approx(0.0, abs=1e-6)
    assert joined["cost"].sum() == pytest.approx(billing["cost"].sum(), rel=1e-12)
    # every billed GPU-hour is kept and nothing is added
    assert joined["gpu_hours"].sum() == pytest.approx(billing["gpu_hours"].sum())
    assert joined.loc[joined["join_side"] == "both", "cost"].notna().all()
    assert len(joined[joined["gpu_hours"] == 0]) == len(billing[billing["gpu_hours"] == 0])
