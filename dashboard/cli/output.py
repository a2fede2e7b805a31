"""Printing for the CLI: JSON for machines, an aligned table for people (read from the catalogue), one-line errors."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dashboard.core.catalogue import Entry


def _finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def print_json(result: dict[str, Any]) -> None:
    """One JSON object on stdout; infinities and NaN become null (valid JSON)."""
    print(json.dumps(_finite(result), indent=2, sort_keys=False))


def _format(value: Any) -> str:
    """A number the catalogue does not know: up to four significant digits."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return "n/a"
        if value != 0 and (abs(value) >= 1e7 or abs(value) < 1e-3):
            return f"{value:.4g}"
        return f"{value:,.4f}".rstrip("0").rstrip(".") if abs(value) < 10 else f"{value:,.1f}"
    return str(value)


VALUE_WIDTH = 16


def _lookup(name: str) -> Entry | None:
    from dashboard.core import catalogue  # here, not at import: `ingest` and `workspace` never load the engine

    try:
        return catalogue.entry(name)
    except KeyError:
        return None


# (dotted name, value) -> (label, value text): how a command's own figures read in its table. An item of a list of
# objects (a programme's stages) is named with "[]" after its list's name: "programme.stages[]".
Describe = Callable[[str, Any], tuple[str, str]]


def from_catalogue(name: str, value: Any) -> tuple[str, str]:
    """The catalogue's label and text of a value (an object or a list of objects: its label only)."""
    entry = _lookup(name)
    label = entry.label if entry else ""
    if isinstance(value, dict) or _is_records(value):
        return label, ""
    return label, entry.text(value) if entry and not isinstance(value, (list, tuple)) else _format(value)


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def _rows(result: dict[str, Any], prefix: str, depth: int, describe: Describe) -> list[tuple[str, str, str]]:
    """(indented key, value text, label) for every item, nested objects under their key's header row, and a list of
    objects one row each (keyed 1, 2, …)."""
    rows = []
    for key, value in result.items():
        label, text = describe(f"{prefix}{key}", value)
        indent = "  " * depth
        if isinstance(value, dict):
            rows.append((f"{indent}{key}:", "", label))
            rows.extend(_rows(value, f"{prefix}{key}.", depth + 1, describe))
        elif _is_records(value):
            rows.append((f"{indent}{key}:", "", label))
            for number, item in enumerate(value, 1):
                item_label, item_text = describe(f"{prefix}{key}[]", item)
                rows.append((f"{indent}  {number}", item_text, item_label))
        else:
            rows.append((f"{indent}{key}", text, label))
    return rows


def print_table(result: dict[str, Any], describe: Describe = from_catalogue) -> None:
    """Key / value / label lines, nested objects indented under their key; values and labels from the catalogue
    unless `describe` says otherwise (three significant figures, as the app shows them; `--json` gives the exact
    values)."""
    rows = _rows(result, "", 0, describe)
    key_width = max(len(row[0]) for row in rows)
    value_width = min(VALUE_WIDTH, max(len(row[1]) for row in rows))  # a long name runs over
    for key, text, label in rows:
        print(f"{key:<{key_width}}  {text:<{value_width}}  {label}".rstrip())


def fail(message: str) -> int:
    """Report a user error on one line and return exit status 2."""
    print(f"error: {message}", file=sys.stderr)
    return 2
