"""The Method page's text: docs/method.md as a reader sees it, split into sections for a contents list, without the
code paths the file names for developers (`dashboard/core/`, `feasibility.py`, `format.change`) and with the Plan
page's labels for scenario keys."""

from __future__ import annotations

import re
from pathlib import Path

from dashboard.core import catalogue

METHOD = Path(__file__).resolve().parents[2] / "docs" / "method.md"
_CODE = r"`(?:dashboard/[^`]*|[\w/]+\.py|[a-z_]+\.[a-z_]+(?:\(\))?)`"  # a path, a module file or a module.function
# Phrases that only point at code, most specific first, each removed or shortened; whitespace inside a phrase may
# be a line break.
CODE_PHRASES = (
    # "Implemented in `dashboard/core/memory.py`, `layout.py` … and `feasibility.py`." (a whole sentence)
    (re.compile(rf"\s*Implemented in {_CODE}(?:,\s+{_CODE})*(?:,?\s+and\s+{_CODE})?\."), ""),
    # "(`dashboard/retro/amortise.py`)", "(`dashboard/format.py`, units from `dashboard/core/catalogue.py`)"
    (re.compile(rf"\s*\({_CODE}(?:,\s+[\w ]*?{_CODE})*\)"), ""),
    # "(`dashboard/query/`, Ibis on DuckDB …)": the path goes, the words stay
    (re.compile(rf"\({_CODE},\s+"), "("),
    # "from it, in `dashboard/retro/`, after": one comma stays
    (re.compile(rf",\s+in\s+{_CODE},"), ","),
    # "implemented once in `dashboard/core/` and", "are typed once in `dashboard/core/references.py`."
    (re.compile(rf"\s+in\s+{_CODE}"), ""),
    # "from one module, `dashboard/figures/palette.py`, in the app", "by one function, `format.change`:"
    (re.compile(rf",\s+{_CODE}(?=[,:])"), ""),
    (re.compile(rf"\s*{_CODE}"), ""),  # any other
)
SECTION = re.compile(r"^## (.+)$", re.MULTILINE)


KEY = re.compile(r"`(\w+)`")


def _label(match: re.Match) -> str:
    entry = catalogue.INPUTS.get(match.group(1))
    return match.group(0) if entry is None else f"*{entry.label}*"


def readable(text: str) -> str:
    """The text as the app shows it: each phrase that points at code is removed (the sentence around it kept), and
    a scenario key is written as the Plan page's label for it (`mfu` -> *MFU*)."""
    for pattern, replacement in CODE_PHRASES:
        text = pattern.sub(replacement, text)
    return KEY.sub(_label, text)


def slug(title: str) -> str:
    """A section's anchor: "5. Storage" -> "5-storage"."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def sections(text: str) -> tuple[str, str, list[tuple[str, str]]]:
    """The page title, the text before the first section, and each "## " section as (title, body)."""
    head, *rest = SECTION.split(text)
    lines = head.strip().splitlines()
    title = lines[0].removeprefix("# ").strip() if lines and lines[0].startswith("# ") else ""
    intro = "\n".join(lines[1:] if title else lines).strip()
    return title, intro, [(rest[i].strip(), rest[i + 1].strip()) for i in range(0, len(rest), 2)]


def contents(parts: list[tuple[str, str]]) -> str:
    """A markdown list of links to every section."""
    return "\n".join(f"- [{title}](#{slug(title)})" for title, _ in parts)
