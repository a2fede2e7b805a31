"""Decimal commas chosen for a file whose numbers contradict them are refused by the import layer itself, so the
Import page, the CLI and the workspace import (in memory or streamed) refuse alike; files they fit still read."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dashboard.ingest import import_bytes, import_path
from dashboard.ingest.schema import ReadOptions, UnreadableFile
from dashboard.ingest.stream import stream_import

DECIMAL_COMMA = ReadOptions(decimal_comma=True)
HEADER = ["ChargePeriodStart", "ChargePeriodEnd", "BilledCost", "EffectiveCost", "BillingCurrency", "ConsumedQuantity"]


def _focus(cells: list[tuple[str, str]], delimiter: str = ",") -> bytes:
    """A minimal FOCUS file: one hour per row, the given (cost, quantity) cells."""
    rows = [[f"2025-06-03T{h:02d}:00:00Z", f"2025-06-03T{h + 1:02d}:00:00Z", cost, cost, "EUR", quantity]
            for h, (cost, quantity) in enumerate(cells)]
    return "".join(delimiter.join(row) + "\n" for row in [HEADER, *rows]).encode()


def test_dot_decimals_under_decimal_commas_are_refused_naming_the_column_and_the_inflated_figure():
    data = _focus([("950733.64", "1"), ("12.5", "2")])
    with pytest.raises(UnreadableFile) as refused:
        import_bytes(data, filename="bill.csv", options=DECIMAL_COMMA)
    assert str(refused.value) == (
        "Decimal commas were chosen for bill.csv, but its column 'BilledCost' holds numbers with decimal points "
        "(e.g. '950733.64', which they would read as 95,073,364). Read it without decimal commas (untick "
        '"Decimal commas", or drop --decimal-comma).'
    )
    _, report = import_bytes(data, filename="bill.csv")  # without the option it reads
    assert report.rows_used == 2


def test_points_that_may_be_thousands_separators_are_read_as_asked():
    # '1.234' is one thousand two hundred and thirty-four with decimal commas: no contradiction.
    usage, _ = import_bytes(_focus([("1.234", "1"), ("2.000", "1,5")], delimiter=";"), filename="bill.csv",
                            options=DECIMAL_COMMA)
    assert usage["cost"].tolist() == [1234.0, 2000.0]


def test_decimal_commas_on_a_comma_delimited_file_without_one_are_refused():
    # Comma-delimited, and no cell holds a decimal comma: '1.234' would silently read as 1,234 instead of 1.234.
    with pytest.raises(UnreadableFile, match="it is comma-delimited and none of its cells holds a number with a "
                                             "decimal comma"):
        import_bytes(_focus([("1.234", "1"), ("2.000", "1")]), filename="bill.csv", options=DECIMAL_COMMA)


def test_a_comma_delimited_file_with_quoted_decimal_commas_reads():
    data = _focus([('"1,5"', "1"), ('"2,25"', "1")])
    usage, _ = import_bytes(data, filename="bill.csv", options=DECIMAL_COMMA)
    assert usage["cost"].tolist() == [1.5, 2.25]


def test_a_semicolon_file_with_decimal_commas_reads_with_the_option():
    data = _focus([("1.234,5", "1,5"), ("0,25", "2")], delimiter=";")
    usage, _ = import_bytes(data, filename="bill.csv", options=DECIMAL_COMMA)
    assert usage["cost"].sum() == 1234.75  # 1234.5 + 0.25


def test_a_column_mostly_of_whole_numbers_is_not_a_contradiction():
    # One dot decimal in four cells is under half: the choice stands ('7.5' then reads as 75, as asked).
    usage, _ = import_bytes(_focus([("10", "1"), ("20", "1"), ("30", "1"), ("7.5", "1,5")], delimiter=";"),
                            filename="bill.csv", options=DECIMAL_COMMA)
    assert usage["cost"].tolist() == [10.0, 20.0, 30.0, 75.0]


def test_parquet_under_decimal_commas_is_refused_in_memory_and_streamed(tmp_path):
    path = tmp_path / "bill.parquet"
    pq.write_table(pa.table({"ChargePeriodStart": ["2025-06-03T10:00:00Z"], "ChargePeriodEnd": ["2025-06-03T11:00:00Z"],
                             "BilledCost": [98.32], "EffectiveCost": [98.32], "BillingCurrency": ["USD"]}), path)
    message = "bill.parquet is Parquet, whose numbers are stored as numbers"
    with pytest.raises(UnreadableFile, match=message):
        import_path(path, options=DECIMAL_COMMA)
    with pytest.raises(UnreadableFile, match=message):
        stream_import(path, lambda usage: None, options=DECIMAL_COMMA)
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "part-0.parquet").write_bytes(path.read_bytes())
    with pytest.raises(UnreadableFile, match="parts is Parquet"):
        import_path(folder, options=DECIMAL_COMMA)


def test_the_streamed_import_refuses_as_the_in_memory_one_does(tmp_path):
    path = tmp_path / "bill.csv"
    path.write_bytes(_focus([("98.32", "1"), ("11.05", "1")]))
    with pytest.raises(UnreadableFile) as in_memory:
        import_path(path, options=DECIMAL_COMMA)
    sunk: list[object] = []
    with pytest.raises(UnreadableFile) as streamed:
        stream_import(path, sunk.append, options=DECIMAL_COMMA, batch_rows=1_000)
    assert str(streamed.value) == str(in_memory.value)
    assert "'98.32', which they would read as 9,832" in str(streamed.value)
    assert sunk == []  # refused before any row was read into the sink


def test_chosen_decimal_commas_that_fit_stream_with_the_in_memory_notes(tmp_path):
    path = tmp_path / "bill.csv"
    path.write_bytes(_focus([("1.234,5", "1,5"), ("0,25", "2")], delimiter=";"))
    usage, report = import_path(path, options=DECIMAL_COMMA)
    sunk: list = []
    streamed = stream_import(path, sunk.append, options=DECIMAL_COMMA, batch_rows=1_000)
    assert streamed.warnings == report.warnings
    assert "Columns are separated by semicolons." in streamed.warnings
    assert sunk[0]["cost"].tolist() == usage["cost"].tolist() == [1234.5, 0.25]
