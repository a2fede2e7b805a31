"""Value parsers: numbers, timestamps, tags, durations (datasette-style case tables)."""

import math

import pandas as pd
import pytest

from dashboard.ingest.values import parse_datetime, parse_duration_s, parse_number, parse_tags, tag_value

NUMBER_CASES = [
    ("1234.5", False, 1234.5, False),
    (" $10,000.00 ", False, 10000.0, False),
    ("1.234,5", True, 1234.5, False),
    ("1,5", True, 1.5, False),
    ("1e3", False, 1000.0, False),
    ("(12.5)", False, -12.5, False),
    ("", False, math.nan, False),
    ("null", False, math.nan, False),
    ("abc", False, math.nan, True),
    ("inf", False, math.nan, True),
]


@pytest.mark.parametrize(("text", "decimal_comma", "expected", "bad"), NUMBER_CASES)
def test_parse_number(text, decimal_comma, expected, bad):
    values, is_bad = parse_number(pd.Series([text, "1"], dtype="string"), decimal_comma=decimal_comma)
    assert bool(is_bad.iloc[0]) is bad
    assert (math.isnan(values.iloc[0]) and math.isnan(expected)) or values.iloc[0] == expected


DATETIME_CASES = [
    ("2025-06-03T10:00:00Z", None, None, "2025-06-03T10:00:00+00:00", False),
    ("2025-06-03 10:00:00 UTC", None, None, "2025-06-03T10:00:00+00:00", False),
    ("2025-06-03T12:00:00+02:00", None, None, "2025-06-03T10:00:00+00:00", False),
    ("2025-06-03 10:00:00.000", None, None, "2025-06-03T10:00:00+00:00", False),
    ("2025-06-03T10:00:00", "America/New_York", None, "2025-06-03T14:00:00+00:00", False),
    ("2025-11-02T01:30:00", "America/New_York", None, None, True),  # ambiguous hour -> rejected
    ("06/03/2025", None, "%m/%d/%Y", "2025-06-03T00:00:00+00:00", False),
    ("13/03/2025", None, "%m/%d/%Y", None, True),
    ("garbage", None, None, None, True),
]


@pytest.mark.parametrize(("text", "tz", "fmt", "expected", "bad"), DATETIME_CASES)
def test_parse_datetime(text, tz, fmt, expected, bad):
    values, is_bad = parse_datetime(pd.Series([text], dtype="string"), timezone=tz, fmt=fmt)
    assert str(values.dtype) == "datetime64[ns, UTC]"
    assert bool(is_bad.iloc[0]) is bad
    if expected is None:
        assert pd.isna(values.iloc[0])
    else:
        assert values.iloc[0] == pd.Timestamp(expected)


TAG_CASES = [
    ('{"team":"llm","project":"x"}', "llm", "x"),
    ('"team": "eval", "project": "y"', "eval", "y"),
    ("{team=llm, project=x}", "llm", "x"),
    ('[{"key":"Team","value":"g"}]', "g", None),
    ("[{'key': 'team', 'value': 'p'}]", "p", None),
    ("not tags at all {", None, None),
    (None, None, None),
]


@pytest.mark.parametrize(("text", "team", "project"), TAG_CASES)
def test_tags(text, team, project):
    tags = parse_tags(pd.Series([text], dtype="object"))
    got_team = tag_value(tags, ["team"]).iloc[0]
    got_project = tag_value(pd.Series([text], dtype="object"), ["project"]).iloc[0]
    assert (pd.isna(got_team) and team is None) or got_team == team
    assert (pd.isna(got_project) and project is None) or got_project == project


@pytest.mark.parametrize(
    ("text", "seconds", "bad"),
    [
        ("1-02:03:04", 93784.0, False),
        ("04:00:15", 14415.0, False),
        ("00:29", 29.0, False),
        ("01:02.5", 62.5, False),
        ("01:02:03.25", 3723.25, False),
        ("x", math.nan, True),
        ("", math.nan, False),
    ],
)
def test_parse_duration(text, seconds, bad):
    values, is_bad = parse_duration_s(pd.Series([text], dtype="string"))
    assert bool(is_bad.iloc[0]) is bad
    assert (math.isnan(seconds) and math.isnan(values.iloc[0])) or values.iloc[0] == seconds


@pytest.mark.parametrize("as_category", [False, True])
def test_parsers_accept_categorical_columns(as_category):
    # decode hands low-cardinality columns over as Categoricals; the results must not depend on that.
    def column(values):
        series = pd.Series(values, dtype="string")
        return series.astype("category") if as_category else series

    numbers, bad_numbers = parse_number(column(["1.5", "x", None, "2"]))
    assert numbers.tolist()[::3] == [1.5, 2.0] and bad_numbers.tolist() == [False, True, False, False]
    times, bad_times = parse_datetime(column(["2025-01-01T00:00:00Z", None, "bad"]))
    assert times.iloc[0] == pd.Timestamp("2025-01-01", tz="UTC")
    assert bad_times.tolist() == [False, False, True]
