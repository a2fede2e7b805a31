"""Which scenario names the store accepts. Names are data only: never used as file paths or in SQL text."""

from __future__ import annotations

import re
import unicodedata

from dashboard.store.errors import InvalidNameError

NAME_MAX_CHARS = 120  # the scenario file's own limit for `name`
NAME_PUNCTUATION = "-–—_.,()+&#'%:"
# \w is unicode letters, digits and underscore; the class adds the space and the listed punctuation.
_ALLOWED = re.compile(r"[\w " + re.escape(NAME_PUNCTUATION) + r"]+")
RULE = (
    f"Scenario names are 1–{NAME_MAX_CHARS} characters: letters, digits, spaces and "
    + " ".join(NAME_PUNCTUATION)
)


def validate_name(name: str) -> str:
    """The name with surrounding whitespace stripped, or InvalidNameError saying what is allowed."""
    if not isinstance(name, str):
        raise InvalidNameError(f"{RULE} (got {type(name).__name__}, not text)")
    stripped = unicodedata.normalize("NFC", name.strip())  # "é" typed as e + accent is one letter
    if not stripped or len(stripped) > NAME_MAX_CHARS or not _ALLOWED.fullmatch(stripped):
        raise InvalidNameError(f"{RULE} (got {_shown(name)})")
    return stripped


def _shown(name: str) -> str:
    """The rejected name as a one-line, bounded repr, naming its first disallowed character if any."""
    stripped = unicodedata.normalize("NFC", name.strip())
    if not stripped:
        return "an empty name"
    if len(stripped) > NAME_MAX_CHARS:
        return f"{len(stripped)} characters"
    bad = next(char for char in stripped if not _ALLOWED.fullmatch(char))
    return f"{stripped!r}, which contains {bad!r}"
