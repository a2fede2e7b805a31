"""The corpus of real exports written by others (../shared/real-exports) and its SOURCES.md table, for the tests that
read it when it is there; ``real_export`` skips loudly (a warning in the summary) when it is not."""

import re
import warnings
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "real-exports"


def sources() -> list[tuple[str, str]]:
    """(file, expected behaviour) for every row of SOURCES.md's table."""
    rows = []
    for line in (CORPUS / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 7 and "/" in cells[0] and not cells[0].startswith("Folder"):
            rows.append((cells[0], cells[6].replace("\\|", "|")))
    return rows


def real_export(name: str, untested: str, *, module: bool = False) -> Path:
    """The corpus file ``name``; when it is absent, a warning naming what goes ``untested`` and a skip (of the
    whole module when ``module``)."""
    path = CORPUS / name
    if not path.exists():
        message = f"SKIPPED LOUDLY: {path} is not here (no ../shared/real-exports), so {untested}"
        warnings.warn(message, stacklevel=2)
        pytest.skip(message, allow_module_level=module)
    return path
