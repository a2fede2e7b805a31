"""Scenarios in a URL: the keys that differ from the default as query parameters, read back with validation.

A link carries the plan (`?mfu=0.35&gpu_count=1024`) and, under the `base.` prefix, the pinned baseline. Reading
never raises: unknown keys, repeated keys and values that fail strict validation are dropped one by one with a
warning; when the values left do not fit together (reserved + spot above 100 %, TP beyond a node), one of them is
dropped if one is enough (the last given first), else the last given ones, as few as make the rest fit, with the
reason, and the others still apply.
Warnings quote names and values as plain text; the page escapes them (`dashboard.safe_text`) when it shows them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dashboard.core.json_input import JSONLimitError, load_json
from dashboard.core.scenario import (
    TEXT_KEYS,
    Scenario,
    ScenarioError,
    default_scenario,
    field_errors,
    scenario_from_dict,
)
from dashboard.safe_text import preview

BASELINE_PREFIX = "base."
MAX_VALUE_CHARS = 200
MAX_PROGRAMME_CHARS = 2000  # the programme is one compact JSON list (the full preset: about 300 characters)


@dataclass(frozen=True)
class QueryScenarios:
    """What a query string decodes to: the plan, the pinned baseline and what was ignored, in plain words."""

    scenario: Scenario
    baseline: Scenario
    warnings: list[str] = field(default_factory=list)


def _text(value: Any) -> str:
    """Short, exact text for a value: `7e+09` rather than `7000000000.0`."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and float(f"{value:g}") == value:
        return f"{value:g}"
    return json.dumps(value)


def _value(text: str) -> Any:
    try:
        return load_json(text)
    except (json.JSONDecodeError, JSONLimitError):
        return text  # left as text, so strict validation names the key and refuses it


def _link_values(scenario: Scenario) -> dict[str, Any]:
    """The scenario's keys as a link writes them: the programme as compact JSON of each stage's own settings."""
    data = scenario.to_json_dict()
    data["programme"] = json.dumps([stage.model_dump(exclude_defaults=True) | {"kind": stage.kind}
                                    for stage in scenario.programme], separators=(",", ":"))
    return data


def scenario_to_query(scenario: Scenario, baseline: Scenario | None = None) -> dict[str, str]:
    """Query parameters for a scenario (and a baseline) that differ from the default scenario."""
    default = _link_values(default_scenario())
    params = {key: _text(value) for key, value in _link_values(scenario).items() if default.get(key) != value}
    if baseline is not None:
        params.update({
            BASELINE_PREFIX + key: _text(value)
            for key, value in _link_values(baseline).items() if default.get(key) != value
        })
    return params


def _decode(params: Mapping[str, list[str]], label: str, warnings: list[str]) -> Scenario:
    default = default_scenario()
    data = default.to_json_dict()
    given: list[str] = []
    for key, values in params.items():
        if key not in data or key == "schema":
            warnings.append(f"{label}: ignored unknown parameter {preview(repr(key))}")
        elif len(values) > 1:
            warnings.append(f"{label}: ignored {key!r}: given {len(values)} times in the address; keep one")
        elif len(values[0]) > (limit := MAX_PROGRAMME_CHARS if key == "programme" else MAX_VALUE_CHARS):
            warnings.append(f"{label}: ignored {key!r}: value longer than {limit:,} characters")
        else:
            data[key] = values[0] if key in TEXT_KEYS else _value(values[0])
            given.append(key)
    for key, message in field_errors(data).items():
        warnings.append(f"{label}: ignored {message}")
        data[key] = default.to_json_dict()[key]
        if key in given:
            given.remove(key)
    try:
        return scenario_from_dict(data)
    except ScenarioError as error:
        return _without_conflicts(data, given, str(error), label, warnings)


def _without_conflicts(data: dict[str, Any], given: list[str], error: str, label: str,
                       warnings: list[str]) -> Scenario:
    """The scenario of `data` with the fewest given keys set back to their defaults so that the rest fit together:
    one key if one is enough (the last given first), else the last given keys until they fit."""
    default = default_scenario().to_json_dict()

    def dropped(keys: list[str]) -> Scenario | None:
        try:
            return scenario_from_dict({**data, **{key: default[key] for key in keys}})
        except ScenarioError:
            return None

    for key in reversed(given):
        scenario = dropped([key])
        if scenario is not None:
            warnings.append(f"{label}: ignored {key} = {preview(_text(data[key]))}: it does not fit with the "
                            f"other values ({error})")
            return scenario
    for count in range(2, len(given) + 1):
        keys = given[-count:]
        scenario = dropped(keys)
        if scenario is not None:
            warnings.append(f"{label}: ignored {', '.join(keys)}: they do not fit with the other values ({error})")
            return scenario
    warnings.append(f"{label}: the values do not fit together ({error}); using the default scenario")
    return default_scenario()


def scenario_from_query(params: Mapping[str, str | list[str]]) -> QueryScenarios:
    """Decode query parameters into a plan and a baseline; never raises, reports what it dropped.

    A parameter given more than once (a list of several values) is ignored with a warning, never settled by
    taking one of them. Values are read with strict types: `gpu_count=true` or `checkpoint_async=1` are refused.
    """
    every = {key: value if isinstance(value, list) else [value] for key, value in params.items() if value != []}
    plan_params = {key: value for key, value in every.items() if not key.startswith(BASELINE_PREFIX)}
    base_params = {
        key.removeprefix(BASELINE_PREFIX): value for key, value in every.items() if key.startswith(BASELINE_PREFIX)
    }
    warnings: list[str] = []
    scenario = _decode(plan_params, "Link", warnings)
    baseline = _decode(base_params, "Link baseline", warnings)
    return QueryScenarios(scenario, baseline, warnings)
