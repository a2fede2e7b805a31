"""Values of a page's link (its URL parameters) that the page could not use, said on the page.

Widgets bound to the URL (``bind="query-params"``) drop a value they cannot take (a team the data does not
have, a tab or a sample that does not exist) without a word. ``given`` notes the page's parameters on its first
run in a session, before its widgets read them; ``ignored`` lists, after the widgets, each noted value that the URL
no longer holds and that the widget does not show either (a valid value equal to the default is dropped from the
URL, but the widget shows it). A widget the run did not draw (a closed tab's) keeps its parameter and is not
judged.
"""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from dashboard.safe_text import markdown_text, preview

MAX_LISTED = 8  # values named in the message; the rest are counted
VALUE_CHARS = 40  # characters of a value quoted


def given(prefix: str) -> dict[str, list[str]] | None:
    """The URL parameters starting with ``prefix`` on the page's first run in this session; None on later runs."""
    flag = f"{prefix}link_noted"
    if st.session_state.get(flag):
        return None
    st.session_state[flag] = True
    return {key: list(st.query_params.get_all(key)) for key in st.query_params if key.startswith(prefix)}


def _texts(value: object) -> set[str]:
    items: Iterable[object] = value if isinstance(value, (list, tuple, set)) else [value]
    return {str(item) for item in items}


def _same(text: str, shown: set[str]) -> bool:
    if text in shown:
        return True
    try:
        number = float(text)
    except ValueError:
        return False
    return any(_float(item) == number for item in shown)


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def ignored(noted: dict[str, list[str]] | None) -> list[tuple[str, str]]:
    """The (parameter, value) pairs of ``noted`` the page did not use."""
    dropped = []
    for key, values in (noted or {}).items():
        kept = set(st.query_params.get_all(key))
        shown = _texts(st.session_state[key]) if key in st.session_state else set()
        for value in values:
            if value not in kept and not _same(value, shown):
                dropped.append((key, value))
    return dropped


def say_ignored(place, noted: dict[str, list[str]] | None, prefix: str) -> None:
    """A warning in ``place`` naming the link values the page ignored (as text, each value cut short)."""
    dropped = ignored(noted)
    if not dropped:
        return
    listed = ", ".join(f"{key.removeprefix(prefix)}={preview(value, VALUE_CHARS)!r}"
                       for key, value in dropped[:MAX_LISTED])
    more = f" and {len(dropped) - MAX_LISTED:,} more" if len(dropped) > MAX_LISTED else ""
    place.warning(markdown_text(f"This link's values that do not apply to this data were ignored: {listed}{more}. "
                                "The page shows its defaults for them."))
