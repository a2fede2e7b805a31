"""JSON from users, decoded within limits: bounded size, nesting depth and number length, no duplicate keys.

Every scenario file, bundle, `--set` value and link parameter is decoded here, so a 5,000-digit integer, a
100,000-deep nesting or a key given twice is refused with one line instead of a traceback or a silent choice.
"""

from __future__ import annotations

import json
import os
import re
import stat
from itertools import accumulate
from pathlib import Path
from typing import Any

from dashboard.safe_text import preview

MAX_JSON_BYTES = 1_000_000  # a scenario is ~3 KB: a bundle of every scenario a team keeps fits easily
MAX_DEPTH = 16  # a bundle is an array of flat objects (depth 2); deeper input is refused before it is parsed
MAX_NUMBER_CHARS = 40  # digits in a row: a float needs at most 17; Python refuses ints of more than 4,300
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # a JSON string, escapes included
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_LONG_DIGITS = re.compile(f"[0-9]{{{MAX_NUMBER_CHARS + 1},}}")


class JSONLimitError(ValueError):
    """JSON refused at the boundary (too large, too deep, a huge number, a key twice); one-line message."""


def _check_numbers(text: str) -> None:
    """Refuse a run of more than MAX_NUMBER_CHARS digits outside strings (a quick scan first, strings only if hit)."""
    if _LONG_DIGITS.search(text) is None:
        return
    found = _LONG_DIGITS.search(_STRINGS.sub('""', text))
    if found is not None:
        digits = found.group()
        raise JSONLimitError(
            f"the number {preview(digits, 20)} has {len(digits):,} digits: at most {MAX_NUMBER_CHARS} are read"
        )


def _constant(text: str) -> Any:
    raise JSONLimitError(f"{text} is not a number JSON allows: use a finite number")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise JSONLimitError(f"the key {preview(key)!r} appears twice in one object: keep one of them")
        found[key] = value
    return found


def _depth(text: str) -> int:
    if text.count("[") + text.count("{") <= MAX_DEPTH:  # cannot nest deeper than it has openers
        return 0
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    return max(accumulate(1 if char in "[{" else -1 for char in brackets), default=0)


def load_json(text: str | bytes, *, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Decode JSON text; JSONLimitError past a limit, json.JSONDecodeError or UnicodeDecodeError if malformed.

    `NaN` and `Infinity` are refused here; a number that overflows to infinity (`1e999`) is refused by the
    scenario's own check that every number is finite.
    """
    if len(text) > max_bytes:
        raise JSONLimitError(f"{len(text):,} bytes is more than the {max_bytes:,} bytes a scenario file may hold")
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode(json.detect_encoding(text))
    text = text.removeprefix("\ufeff")  # a byte-order mark left by some editors
    depth = _depth(text)
    if depth > MAX_DEPTH:
        raise JSONLimitError(
            f"nested {depth:,} levels deep: a scenario file is one flat object or an array of them "
            f"(at most {MAX_DEPTH} levels are read)"
        )
    _check_numbers(text)
    return json.loads(text, parse_constant=_constant, object_pairs_hook=_object)


def read_json_file(path: Path, *, max_bytes: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; JSONLimitError otherwise, OSError if unreadable.

    Devices, FIFOs and folders are refused before they are opened (reading /dev/zero never ends, a FIFO blocks).
    """
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise JSONLimitError(f"{path} is not a regular file: give a scenario JSON file")
    with open(path, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise JSONLimitError(f"{path} holds more than the {max_bytes:,} bytes a scenario file may hold")
    return data
