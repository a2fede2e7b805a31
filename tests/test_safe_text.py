"""The text helpers leave no markdown, directive or HTML live (cases written by hand)."""

import pytest

from dashboard.safe_text import markdown_text, plotly_text, preview


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("[Click](https://evil.example/login)", "\\[Click\\]\\(https\\:\u2060\\/\\/evil\\.example\\/login\\)"),
        ("![x](http://a/p.png)", "\\!\\[x\\]\\(http\\:\u2060\\/\\/a\\/p\\.png\\)"),
        (":red[alert]", "\\:\u2060red\\[alert\\]"),
        # GFM autolinks bare URLs, www. hosts and e-mail addresses even when escaped: a word joiner breaks each.
        ("see www.evil.example", "see www\u2060\\.evil\\.example"),
        ("WWW.evil.example", "WWW\u2060\\.evil\\.example"),
        ("ops@evil.example", "ops\\@\u2060evil\\.example"),
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
