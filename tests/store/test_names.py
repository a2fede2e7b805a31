"""Scenario names: which are accepted (stripped and NFC-normalised), which are refused, and the message."""

import pytest

from dashboard.store.errors import InvalidNameError, StoreError
from dashboard.store.names import validate_name

RULE = "Scenario names are 1–120 characters: letters, digits, spaces and - – — _ . , ( ) + & # ' % :"


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("Option A (8k H100)", "Option A (8k H100)"),
        ("  padded name \t\n", "padded name"),
        ("Default: 7B dense, 2T tokens on 512 H100", "Default: 7B dense, 2T tokens on 512 H100"),
        ("O'Brien & co. #2 + spares", "O'Brien & co. #2 + spares"),
        ("under_score-dash", "under_score-dash"),
        ("Prüfung Größe", "Prüfung Größe"),
        ("计划 A", "计划 A"),
        ("e\u0301te\u0301", "\u00e9t\u00e9"),  # e + combining accent becomes é
        ("a" * 120, "a" * 120),
        ("B — spot 30 %", "B — spot 30 %"),
        ("Sample organisation: 13B dense, 1T tokens on 64 H100 (plan for the bundled quarter)",
         "Sample organisation: 13B dense, 1T tokens on 64 H100 (plan for the bundled quarter)"),
        ("7", "7"),
    ],
)
def test_accepted_names(given, stored):
    assert validate_name(given) == stored


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("", "an empty name"),
        ("   ", "an empty name"),
        ("a" * 121, "121 characters"),
        ("../etc/passwd", "'../etc/passwd', which contains '/'"),
        ("a/b", "'a/b', which contains '/'"),
        ("a\\b", "'a\\\\b', which contains '\\\\'"),
        ("tab\there", "'tab\\there', which contains '\\t'"),
        ("line\nbreak", "'line\\nbreak', which contains '\\n'"),
        ("nul\x00", "'nul\\x00', which contains '\\x00'"),
        ("bell\x07", "'bell\\x07', which contains '\\x07'"),
        ("x'); DROP TABLE scenarios;--", "\"x'); DROP TABLE scenarios;--\", which contains ';'"),
        ("50$", "'50$', which contains '$'"),
        ("a=b", "'a=b', which contains '='"),
        ("<script>", "'<script>', which contains '<'"),
        ("name\u200b", "'name\\u200b', which contains '\\u200b'"),
    ],
)
def test_refused_names_say_what_is_allowed(given, shown):
    with pytest.raises(InvalidNameError) as error:
        validate_name(given)
    assert str(error.value) == f"{RULE} (got {shown})"
    assert "\n" not in str(error.value)


def test_a_name_that_is_not_text_is_refused():
    with pytest.raises(InvalidNameError, match=r"\(got int, not text\)$"):
        validate_name(7)


def test_invalid_name_is_a_store_error():
    assert issubclass(InvalidNameError, StoreError)
