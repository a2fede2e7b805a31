"""Decoding and refusals: a clear message for every malformed file; short rows padded, misaligned ones rejected."""

import gzip

import pandas as pd
import pytest

from dashboard.ingest import import_bytes
from dashboard.ingest.decode import decode
from dashboard.ingest.schema import ColumnPlan, UnreadableFile

FOCUS_HEADER = "ChargePeriodStart;ChargePeriodEnd;BilledCost;EffectiveCost;BillingCurrency;ConsumedQuantity\n"


def test_semicolon_decimal_comma():
    data = (
        FOCUS_HEADER + "2025-06-03T10:00:00Z;2025-06-03T11:00:00Z;1.234,5;1.234,5;EUR;1,5\n"
        "2025-06-03T11:00:00Z;2025-06-03T12:00:00Z;0,25;0,25;EUR;2\n"
    ).encode("latin-1")
    usage, report = import_bytes(data)
    assert usage["cost"].sum() == pytest.approx(1234.75)  # 1234.5 + 0.25
    assert any("decimal commas" in w for w in report.warnings)


def test_truncated_last_row_is_rejected_with_line():
    data = b"a,b,c\n1,2,3\n4,5"  # the last line stops short and the file has no final line break
    decoded = decode(data)
    assert list(decoded.table.index) == [2]
    assert decoded.rejected.to_dict("records") == [
        {"line": 3, "reason": "expected 3 fields, found fewer and the file ends here (file truncated?)"}
    ]


ALIGNMENT_CASES = [
    # a complete line one or two fields short: the missing trailing fields are empty (as pandas reads it)
    pytest.param(b"a,b,c\n1,2,3\n4,5\n", [["1", "2", "3"], ["4", "5", None]], [], 1, id="one-short"),
    pytest.param(b"a,b,c\n4\n", [["4", None, None]], [], 1, id="two-short"),
    # a trailing delimiter (an extra empty field) is dropped
    pytest.param(b"a,b,c\n1,2,3,\n", [["1", "2", "3"]], [], 0, id="trailing-empty"),
    # an extra field with a value cannot be aligned: rejected with its line
    pytest.param(b"a,b,c\n1,2,3\n1,2,3,4\n", [["1", "2", "3"]], [(3, "expected 3 fields, found 4")], 0,
                 id="extra-value"),
]


@pytest.mark.parametrize(("data", "rows", "rejected", "short"), ALIGNMENT_CASES)
def test_rows_are_aligned_with_the_header(data, rows, rejected, short):
    decoded = decode(data, "t.csv")
    assert decoded.table.astype(object).where(decoded.table.notna(), None).values.tolist() == rows
    assert [tuple(r) for r in decoded.rejected.itertuples(index=False)] == rejected
    assert len([w for w in decoded.warnings if "fewer fields than the header" in w]) == (1 if short else 0)


def test_blank_lines_keep_line_numbers():
    decoded = decode(b"a,b\n1,2\n\n3,4\n")
    assert list(decoded.table.index) == [2, 4]


REFUSALS = [
    (b"", "is empty"),
    (b"a,b\n", "no data rows"),
    (bytes(range(256)) * 8, "binary data"),
    (b'a,b\n1,"unterminated\n', "never closed"),
    (gzip.compress(b"a,b\n1,2\n")[:15], "gzip archive that cannot be decompressed"),
    (b"justonecolumn\n1\n", "single column"),
    (b"Date,Amount,Who\n2025-06-01,3,x\n", "does not match any known"),
    (
        b"ChargePeriodStart,BilledCost,EffectiveCost,BillingCurrency\n"
        b"2025-06-01T00:00:00Z,1,1,USD\n2025-06-01T00:00:00Z,1,1,EUR\n",
        "mixes currencies",
    ),
    (
        b"ChargePeriodEnd,BilledCost,EffectiveCost,BillingCurrency,ChargeCategory\n2025-06-01T00:00:00Z,1,1,USD,Usage\n",
        "'ChargePeriodStart'",
    ),
    (
        b"ChargePeriodStart,ChargePeriodEnd,BilledCost,BillingCurrency,ChargeCategory\n"
        b"2025-06-01T00:00:00Z,2025-06-01T01:00:00Z,1,USD,Usage\n",
        "'EffectiveCost'",
    ),
]


@pytest.mark.parametrize(("data", "message"), REFUSALS)
def test_refusals(data, message):
    with pytest.raises(UnreadableFile, match=message.replace("(", r"\(")):
        import_bytes(data, filename="x.csv")


def test_unknown_header_message_explains_generic():
    with pytest.raises(UnreadableFile) as info:
        import_bytes(b"Date,Amount\n2025-06-01,3\n")
    text = str(info.value)
    assert "--format generic" in text and "aws_cur" in text and "focus" in text


def test_column_plan_keeps_named_columns_and_reads_categoricals():
    data = b'A,B,Tags\n1,x,"{""team"": ""a""}"\n2,y,"{""team"": ""a""}"\n'
    plan = ColumnPlan(keep=("a", "TAGS"), categorical=("tags",))
    decoded = decode(data, "f.csv", lambda names: plan)
    assert list(decoded.table.columns) == ["A", "Tags"]
    assert isinstance(decoded.table["Tags"].dtype, pd.CategoricalDtype)
    assert list(decoded.table["Tags"].astype(str)) == ['{"team": "a"}', '{"team": "a"}']
    assert list(decoded.table["A"]) == ["1", "2"]
    assert list(decoded.table.index) == [2, 3]


def test_fast_and_careful_paths_give_the_same_focus_rows(data_dir):
    raw = (data_dir / "focus_small.csv").read_bytes()
    header, _, body = raw.partition(b"\n")
    fast, _ = import_bytes(raw)
    careful, report = import_bytes(header + b"\n\n" + body)  # a blank line sends the file down the careful path
    assert report.rows_read == len(fast)
    pd.testing.assert_frame_equal(fast.drop(columns="source_row"), careful.drop(columns="source_row"))
    assert list(careful["source_row"]) == [line + 1 for line in fast["source_row"]]
