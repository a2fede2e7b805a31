"""Download file names made from user text (a scenario's name): safe on every common file system."""

from __future__ import annotations

import re
import unicodedata

STEM_MAX_CHARS = 80
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_TRIM = "-._"
# Names Windows reserves whatever the extension.
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


def download_name(text: str, suffix: str, fallback: str = "scenario") -> str:
    """`text` as a file name with `suffix`: accents dropped, runs of anything but letters, digits, `.`, `_` and
    `-` become one `-`, at most 80 characters (cut at a word); `fallback` when nothing is left or the name is
    reserved."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    stem = _UNSAFE.sub("-", ascii_text).strip(_TRIM)
    if len(stem) > STEM_MAX_CHARS:  # cut at a word when one ends in the second half
        cut = stem[:STEM_MAX_CHARS + 1].rfind("-")
        stem = stem[:cut if cut > STEM_MAX_CHARS // 2 else STEM_MAX_CHARS].rstrip(_TRIM)
    if not stem or stem.split(".")[0].upper() in _RESERVED:
        stem = fallback
    return f"{stem}{suffix}"
