"""Decoding and refusals: a clear message for every malformed file; short rows padded, misaligned ones rejected."""

import gzip

import pandas as pd
import pytest

from dashboard.ingest import import_bytes
from dashboard.ingest.decode import column_names, decode
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


@pytest.mark.parametrize(("header", "names"), [
    # Azure's export from a German portal: every localized cell names its English column in parentheses.
    (["Abonnement-GUID (SubscriptionGuid)", "UsageDateTime (UsageDateTime)", "PreTaxCost (PreTaxCost)", "Currency"],
     ["SubscriptionGuid", "UsageDateTime", "PreTaxCost", "Currency"]),
    # A non-ASCII name is always read as its English one, even among plain English columns.
    (["date", "costInBillingCurrency", "Maßeinheit (UnitOfMeasure)", "Tags"],
     ["date", "costInBillingCurrency", "UnitOfMeasure", "Tags"]),
    # An English header's units in parentheses stay: a minority of cells, or the same "name" twice.
    (["Date", "Cost (USD)", "Project"], ["Date", "Cost (USD)", "Project"]),
    (["Cost (USD)", "Credits (USD)", "Day"], ["Cost (USD)", "Credits (USD)", "Day"]),
    # Cleaning and uniqueness as before: BOM, quotes, blanks, repeats.
    (["\ufeff\"Name\"", " ", "Name"], ["Name", "column_2", "Name.2"]),
])
def test_column_names(header, names):
    assert column_names(header) == names


def test_an_azure_export_with_german_headers_imports_as_azure():
    header = ("Abonnement-GUID (SubscriptionGuid),UsageDateTime (UsageDateTime),Kategorie der Verbrauchseinheit "
              "(MeterCategory),Name der Verbrauchseinheit (MeterName),UsageQuantity (UsageQuantity),"
              "PreTaxCost (PreTaxCost),Currency\n")
    rows = "s1,2021-02-02,Storage,LRS,3,0.075,EUR\ns1,2021-02-03,Storage,LRS,2,0.05,EUR\n"
    usage, report = import_bytes((header + rows).encode(), filename="Nutzung.csv")
    assert report.format == "azure" and (report.rows_read, report.rows_used) == (2, 2)
    assert usage["cost"].sum() == pytest.approx(0.125)  # 0.075 + 0.05, the PreTaxCost column
    assert set(usage["currency"]) == {"EUR"}
    assert list(usage["period_start"].dt.strftime("%Y-%m-%d")) == ["2021-02-02", "2021-02-03"]


def test_fast_and_careful_paths_give_the_same_focus_rows(data_dir):
    raw = (data_dir / "focus_small.csv").read_bytes()
    header, _, body = raw.partition(b"\n")
    fast, _ = import_bytes(raw)
    careful, report = import_bytes(header + b"\n\n" + body)  # a blank line sends the file down the careful path
    assert report.rows_read == len(fast)
    pd.testing.assert_frame_equal(fast.drop(columns="source_row"), careful.drop(columns="source_row"))
    assert list(careful["source_row"]) == [line + 1 for line in fast["source_row"]]
