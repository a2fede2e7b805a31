"""Per-format sample files: hand-computed GPU-hour and cost totals, exclusions and tags."""

import gzip
import io
import zipfile

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from dashboard.ingest import import_bytes, import_path
from dashboard.retro.summary import summarize

CASES = [
    # FOCUS: gpu 1×8 + 1×8 (spot) + 2×8 (committed) + 0.5×4 (g6e.12xlarge table) = 34;
    # EffectiveCost 98.32 + 11.05 + 122.80 + 12.60 + 4.10 + 0 - 20.00 + 5.00 = 233.87
    ("focus_small.csv", "focus", 34.0, 233.87, 8 / 34, {}),
    # CUR legacy: gpu 8 + 8 (spot) + 8 (SP) + 2×4 (g5.12xlarge RI) = 32;
    # cost 98.32 + 11.048 + 61.40 (SP effective) + 7.50 (RI effective) + 3.00 + 12.34 - 5.00 = 188.608
    (
        "aws_cur_legacy.csv",
        "aws_cur",
        32.0,
        188.608,
        0.25,
        {"savings plan negation (offsets covered usage; amortised cost 0)": 1},
    ),
    # CUR 2.0: gpu 8 + 8 + 4 = 20; cost 98.32 + 11.048 + 5.672 = 115.04
    ("aws_cur2.csv", "aws_cur", 20.0, 115.04, 0.4, {}),
    # GCP: gpu 8 + 1 (+0 for the core SKU); cost (23.47-13.14) + 1.10 + (3.00-0.5) + 0.53 = 14.46
    ("gcp_small.csv", "gcp", 9.0, 14.46, 1 / 9, {}),
    # Azure: gpu 24×4 + 6×1 + 1.2×10 h×8 = 198; cost 353.28 + 3.12 + 0 + 5120 = 5476.40
    ("azure_small.csv", "azure", 198.0, 5476.40, 6 / 198, {}),
]


@pytest.mark.parametrize(("name", "fmt", "gpu_hours", "cost", "spot_share", "excluded"), CASES)
def test_sample_totals(data_dir, name, fmt, gpu_hours, cost, spot_share, excluded):
    usage, report = import_path(data_dir / name)
    summary = summarize(usage, report)
    assert summary.format == fmt
    assert summary.gpu_hours_total == pytest.approx(gpu_hours, abs=1e-9)
    assert summary.cost_total == pytest.approx(cost, abs=1e-9)
    assert summary.spot_share_of_gpu_hours == pytest.approx(spot_share, abs=1e-6)
    assert summary.excluded_by_rule == excluded
    assert report.balanced and summary.currency == "USD"


def test_cur_billed_cost_matches_unblended_column(data_dir):
    usage, report = import_path(data_dir / "aws_cur_legacy.csv")
    # unblended over all rows: 98.32+11.048+98.32-98.32+0+3+12.34-5 = 119.708; the covered row bills 0
    # and its negation is excluded, so Σ billed_cost is the same figure.
    assert usage["billed_cost"].sum() == pytest.approx(119.708)


def test_azure_braceless_tags_and_bom(data_dir):
    usage, _ = import_path(data_dir / "azure_small.csv")
    assert list(usage["team"].fillna("-")) == ["llm-pretrain", "eval", "llm-pretrain", "-"]
    assert list(usage["pricing"]) == ["on_demand", "spot", "reserved", "reserved"]


def test_focus_variants_give_same_totals(data_dir):
    raw = (data_dir / "focus_small.csv").read_bytes()
    semicolon = raw.decode().replace(",", ";")  # no decimals with ',' in this file except inside JSON
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("focus.csv", raw)
    table = pa_csv.read_csv(
        io.BytesIO(raw),
        convert_options=pa_csv.ConvertOptions(column_types={"ConsumedQuantity": pa.float64()}),
    )
    parquet = io.BytesIO()
    pq.write_table(table, parquet)
    variants = [
        gzip.compress(raw),
        archive.getvalue(),
        raw.decode().encode("utf-16"),
        b"\xef\xbb\xbf" + raw,
        parquet.getvalue(),
    ]
    for data in variants:
        usage, report = import_bytes(data)
        assert report.format == "focus"
        assert usage["cost"].sum() == pytest.approx(233.87)
        assert usage["gpu_hours"].sum() == pytest.approx(34.0)
    assert semicolon  # the ';' variant with decimal commas is covered in test_decode


def test_parquet_folder(tmp_path, data_dir):
    table = pa_csv.read_csv(data_dir / "focus_small.csv")
    folder = tmp_path / "parts"
    folder.mkdir()
    pq.write_table(table.slice(0, 4), folder / "part-0.parquet")
    pq.write_table(table.slice(4), folder / "part-1.parquet")
    usage, report = import_path(folder)
    assert report.rows_read == 8 and usage["cost"].sum() == pytest.approx(233.87)


def test_gcp_commitment_fee_rows_carry_cost_but_no_gpu_hours():
    header = ("billing_account_id,cost_type,service.description,sku.description,usage_start_time,usage_end_time,"
              "labels,usage.amount_in_pricing_units,usage.pricing_unit,cost,currency,credits\n")
    fee = ("A,regular,Compute Engine,Commitment v1: Nvidia H100 80GB GPU in Americas for 1 Year,"
           "2025-05-01 00:00:00 UTC,2025-05-02 00:00:00 UTC,[],1536,hour,9847.68,USD,[]\n")
    usage = ("A,regular,Compute Engine,Nvidia H100 80GB GPU running in Americas,2025-05-01 00:00:00 UTC,"
             "2025-05-02 00:00:00 UTC,[],1536,hour,16988.16,USD,"
             '"[{""name"":""Committed use discount: GPU"",""amount"":-16988.16,'
             '""type"":""COMMITTED_USAGE_DISCOUNT""}]"\n')
    usage_rows, _ = import_bytes((header + fee + usage).encode(), filename="gcp.csv")
    # Only the usage row counts its 1,536 GPU-hours; the fee row's 9,847.68 is the whole net cost
    # (the usage row's 16,988.16 is cancelled by its committed-use credit).
    assert usage_rows["gpu_hours"].tolist() == [0.0, 1536.0]
    assert usage_rows["cost"].sum() == pytest.approx(9847.68)
    assert usage_rows["pricing"].tolist() == ["reserved", "reserved"]


def test_azure_actual_cost_export_is_flagged(data_dir):
    # azure_small.csv has one reservation purchase row of 5,120 USD, written as the app writes dollars.
    _, report = import_path(data_dir / "azure_small.csv")
    expected = ("azure_small.csv is the actual-cost dataset: reservations and savings plans are charged when "
                "bought (1 purchase row, $5.12k)")
    assert any(w.startswith(expected) for w in report.warnings)
