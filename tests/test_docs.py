"""The documentation cannot drift from the code: every setting and every import format is documented, the README
stays a front page, and every relative link (and its #anchor) in README.md and docs/*.md leads somewhere."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from dashboard import settings
from dashboard.ingest.formats import FORMATS
from dashboard.store.urls import STORE_URL_ENV

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_BYTES = 15_000
SETTING_NAME = re.compile(r"PLANNER_[A-Z0-9_]+")


def _strings(value: object, depth: int = 0):
    """Every string inside a settings-module value: plain constants, dict keys and values, tuples, dataclasses."""
    if depth > 3:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key, depth + 1)
            yield from _strings(item, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _strings(item, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from _strings(getattr(value, field.name), depth + 1)


def _setting_names() -> list[str]:
    """The environment variables ``dashboard/settings.py`` reads, found by introspection (its name constants and
    its tables), plus the scenario store's URL, which ``dashboard/store/urls.py`` reads."""
    names = {STORE_URL_ENV}
    for attribute, value in vars(settings).items():
        if attribute.startswith("__"):
            continue
        names.update(text for text in _strings(value) if SETTING_NAME.fullmatch(text))
    return sorted(names)


def _format_cases() -> list[tuple[str, tuple[str, ...]]]:
    """(format id, what its row of the docs' format table must hold) for every format in the registry: its title,
    its kind (the Retrospective slot it fits) and its label, where the description has one."""
    cases = []
    for fid, fmt in FORMATS.items():
        texts = [getattr(fmt, attribute, None) for attribute in ("title", "label", "kind")]
        cases.append((fid, tuple(text for text in texts if isinstance(text, str) and text)))
    return cases


SETTINGS = _setting_names()
FORMAT_CASES = _format_cases()
DOCUMENTS = [README, *sorted(DOCS.glob("*.md"))]
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _links(document: Path) -> list[str]:
    """The link and image targets of a Markdown file, outside fenced code blocks."""
    text = FENCE.sub("", document.read_text(encoding="utf-8"))
    return LINK.findall(text)


def _relative_links() -> list[tuple[str, str]]:
    cases = []
    for document in DOCUMENTS:
        for target in _links(document):
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, https:, mailto:, ...
                continue
            cases.append((document.relative_to(ROOT).as_posix(), target))
    return list(dict.fromkeys(cases))  # each link of a document once


def _anchors(document: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown file: lower case, punctuation dropped, spaces as hyphens."""
    text = FENCE.sub("", document.read_text(encoding="utf-8"))
    anchors: set[str] = set()
    for heading in HEADING.findall(text):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        candidate, n = slug, 1
        while candidate in anchors:  # GitHub numbers repeated headings: name, name-1, ...
            candidate, n = f"{slug}-{n}", n + 1
        anchors.add(candidate)
    return anchors


RELATIVE_LINKS = _relative_links()


def test_the_cases_were_found():
    # A broken introspection must not pass as "nothing to check".
    assert "PLANNER_MAX_IMPORT_MB" in SETTINGS and "PLANNER_ENGINE_URL" in SETTINGS
    assert len(FORMAT_CASES) == len(FORMATS) >= 7 and all(len(texts) >= 2 for _, texts in FORMAT_CASES)
    assert any(target == "docs/screenshot.png" for _, target in RELATIVE_LINKS)


@pytest.mark.parametrize("name", SETTINGS)
def test_setting_is_documented(name):
    text = (DOCS / "settings.md").read_text(encoding="utf-8")
    assert f"`{name}`" in text, f"{name} (dashboard/settings.py) is not documented in docs/settings.md"


@pytest.mark.parametrize(("format_id", "texts"), FORMAT_CASES)
def test_format_is_documented(format_id, texts):
    lines = (DOCS / "formats.md").read_text(encoding="utf-8").splitlines()
    rows = [line for line in lines if line.startswith(f"| `{format_id}` |")]
    assert rows, f"format {format_id!r} (dashboard/ingest/formats/) has no row in docs/formats.md's format table"
    cells = {cell.strip() for cell in rows[0].strip().strip("|").split("|")}
    missing = [text for text in texts if text not in cells]
    assert not missing, f"docs/formats.md's row for {format_id!r} lacks {missing} (from its FORMAT description)"


def test_readme_is_a_front_page():
    size = README.stat().st_size
    assert size <= README_MAX_BYTES, f"README.md is {size:,} bytes; move detail into docs/ (limit {README_MAX_BYTES:,})"


@pytest.mark.parametrize(("document", "target"), RELATIVE_LINKS, ids=[f"{d}->{t}" for d, t in RELATIVE_LINKS])
def test_relative_link_resolves(document, target):
    path_part, _, anchor = target.partition("#")
    source = ROOT / document
    linked = (source.parent / path_part).resolve() if path_part else source
    hint = " (generated by `make bench`)" if linked == DOCS / "benchmarks.md" else ""
    assert linked.exists(), f"{document} links to {target}, which does not exist{hint}"
    if anchor and linked.suffix == ".md":
        assert anchor in _anchors(linked), f"{document} links to {target}: {linked.name} has no heading #{anchor}"
