"""What a reader sees of a Streamlit markdown source: `safe_text.markdown_text`'s escapes and word joiners removed."""

import re

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark: a backslash before ASCII punctuation shows it literally


def shown(source: str) -> str:
    """The text a markdown source displays when it has no markup (escaped user text)."""
    return _ESCAPE.sub(r"\1", source).replace("\u2060", "")
