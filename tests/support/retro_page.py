"""The AppTest tests' way onto the Retrospective page, and the page's drawn elements in order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def open_retro(app: Any, url: dict[str, str] | None = None) -> Any:
    """The Retrospective page, first drawn with these URL parameters.

    The app opens on the Plan page, which drops parameters it does not know, and AppTest cannot start on a page
    with a custom url_path; so the parameters are set after switching, before the page's first run (as a link
    to /retrospective?… would deliver them)."""
    at = app.run()
    at.switch_page("app_pages/retro.py")
    for name, value in (url or {}).items():
        at.query_params[name] = value
    return at.run()


def leaves(node: Any) -> Iterator[Any]:
    """The elements under ``node`` (an AppTest block such as ``at.main``), in the order they are drawn."""
    children = getattr(node, "children", None)
    if children:
        for child in children.values():
            yield from leaves(child)
    else:
        yield node
