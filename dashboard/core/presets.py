"""Preset scenarios for published runs (`data/scenarios/presets/*.json`), each loadable in one click.

Sources of every preset value are in `data/scenarios/presets/README.md`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from dashboard.core.scenario import Scenario, default_scenario, scenario_from_json

PRESET_DIR = Path(__file__).resolve().parents[2] / "data" / "scenarios" / "presets"


@cache
def presets() -> dict[str, Scenario]:
    """The default scenario and every bundled preset, keyed by scenario name (default first)."""
    found = [scenario_from_json(path.read_text(encoding="utf-8")) for path in sorted(PRESET_DIR.glob("*.json"))]
    default = default_scenario()
    return {default.name: default} | {scenario.name: scenario for scenario in found}
