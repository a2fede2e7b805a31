"""Printing for the CLI: JSON for machines, an aligned two-column table for people, one-line errors."""

from __future__ import annotations

import json
import math
import sys
from typing import Any


def _finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def print_json(result: dict[str, Any]) -> None:
    """One JSON object on stdout; infinities and NaN become null (valid JSON)."""
    print(json.dumps(_finite(result), indent=2, sort_keys=False))


def _format(value: Any) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            return "n/a"
        if value != 0 and (abs(value) >= 1e7 or abs(value) < 1e-3):
            return f"{value:.4g}"
        return f"{value:,.4f}".rstrip("0").rstrip(".") if abs(value) < 10 else f"{value:,.1f}"
    return str(value)


def print_table(result: dict[str, Any], prefix: str = "") -> None:
    """Key / value lines, nested objects indented under their key."""
    width = max(len(key) for key in result) + len(prefix)
    for key, value in result.items():
        if isinstance(value, dict):
            print(f"{prefix}{key}:")
            print_table(value, prefix + "  ")
        else:
            print(f"{prefix}{key:<{width - len(prefix)}}  {_format(value)}")


def fail(message: str) -> int:
    """Report a user error on one line and return exit status 2."""
    print(f"error: {message}", file=sys.stderr)
    return 2
