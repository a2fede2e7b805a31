"""The text helpers leave no markdown, directive or HTML live (cases written by hand)."""

import pytest

from dashboard.safe_text import markdown_text, plotly_text, preview


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("[Click](https://evil.example/login)", r"\[Click\]\(https\:\/\/evil\.example\/login\)"),
        ("![x](http://a/p.png)", r"\!\[x\]\(http\:\/\/a\/p\.png\)"),
        (":red[alert]", r"\:red\[alert\]"),
        ("<b>bold</b>", r"\<b\>bold\<\/b\>"),
        ("$x$ and *y*", r"\$x\$ and \*y\*"),
        ("two\nlines", "two lines"),
        ("团队 A", "团队 A"),
    ],
)
def test_markdown_text(raw, shown):
    assert markdown_text(raw) == shown


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ('<a href="http://evil">x</a>', '&lt;a href="http://evil"&gt;x&lt;/a&gt;'),
        ("R&D", "R&amp;D"),
        ("a<br>b", "a&lt;br&gt;b"),
    ],
)
def test_plotly_text(raw, shown):
    assert plotly_text(raw) == shown


def test_preview_cuts_long_values():
    assert preview("x" * 10, limit=4) == "xxxx… (10 characters)"
    assert preview("short") == "short"
