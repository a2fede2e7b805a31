"""Scenario bundles: several scenarios in one JSON file, for export and import.

One scenario is written as its plain scenario object, so the file also works with
``python -m dashboard estimate FILE``; several are written as a JSON array of scenario objects.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from dashboard.core.scenario import Scenario, ScenarioError, decode_json, scenario_from_dict


def export_bundle(scenarios: Sequence[Scenario]) -> str:
    """One scenario: its JSON object; several: a JSON array of them. Indented, ends with a newline."""
    if not scenarios:
        raise ScenarioError("nothing to export: choose at least one scenario")
    objects = [scenario.to_json_dict() for scenario in scenarios]
    payload = objects[0] if len(objects) == 1 else objects
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def read_bundle(text: str | bytes) -> list[Scenario]:
    """The scenarios in a bundle (one object or an array of objects); ScenarioError naming a bad element.

    The text is decoded within `dashboard.core.json_input`'s limits (size, depth, number length, duplicate keys)
    and every scenario is validated with strict types.
    """
    data = decode_json(text)
    if isinstance(data, dict):
        return [scenario_from_dict(data)]
    if not isinstance(data, list):
        raise ScenarioError(
            f"a scenario file holds one scenario object or an array of them, not a JSON {_json_type(data)}"
        )
    if not data:
        raise ScenarioError("the file holds an empty array: it has no scenarios to import")
    scenarios = []
    for number, item in enumerate(data, start=1):
        try:
            scenarios.append(scenario_from_dict(item))
        except ScenarioError as error:
            raise ScenarioError(f"scenario {number} of {len(data)}: {error}") from None
    return scenarios


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "true/false value"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return "number"
    return "string"
