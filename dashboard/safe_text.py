"""Text from a user, a link or a file, made safe to show: inert in Streamlit markdown and in plotly labels."""

from __future__ import annotations

import html
import re

# CommonMark lets a backslash escape any ASCII punctuation; escaping all of it also breaks Streamlit's own
# directives (``:red[...]``, ``:material/icon:``, emoji shortcodes) and ``$`` maths.
_MARKDOWN_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")
# GFM turns bare `https://…`, `www.…` and `name@host` into links even when every character is escaped (the
# autolink pass reads the unescaped text), so an invisible WORD JOINER goes after ':' and '@' and before www's dot.
WORD_JOINER = "\u2060"
_AUTOLINK_TRIGGER = re.compile(r"(\\[:@])|(?i:(?<=www))(?=\\\.)")
PREVIEW_CHARS = 80


def markdown_text(value: object) -> str:
    """The value as literal text inside st.markdown, st.caption, st.warning and friends (one line)."""
    flat = _LINE_BREAKS.sub(" ", str(value))
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", flat)
    return _AUTOLINK_TRIGGER.sub(lambda match: (match.group(1) or "") + WORD_JOINER, escaped)


def plotly_text(value: object) -> str:
    """The value as literal text in a plotly label, legend, hover or title (plotly reads a subset of HTML)."""
    return html.escape(_LINE_BREAKS.sub(" ", str(value)), quote=False)


def preview(value: object, limit: int = PREVIEW_CHARS) -> str:
    """At most ``limit`` characters of a value for a message, with an ellipsis and the full length when cut."""
    text = str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"
