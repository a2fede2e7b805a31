"""The once-per-process warm-up: after it, the tabs' first views on an upload compile no query, a failure is only
logged, and the setting reads on and off."""

import logging

import pytest

from dashboard import settings
from dashboard.ingest import import_path
from dashboard.query import compiled, tables
from dashboard.retro import registry, tabs, warm
from dashboard.retro.view import whole


def test_after_the_warm_up_the_tabs_compile_nothing(tmp_path):
    compiled._COMPILED.clear()
    warm.warm_up()
    kept = dict(compiled._COMPILED)
    assert len(kept) >= len(tabs.TAB_QUERIES)  # at least a query per tab
    copy = tmp_path / "focus.csv"  # another upload of the same export: a new frame, the same query shapes
    copy.write_bytes(warm.SAMPLE.read_bytes())
    table = tables.table_of(import_path(copy)[0])
    tabs.time_tabs(table)
    for entry in registry.FIGURES:  # each figure's result as the page runs it
        tabs.run(entry, whole(table))
    assert set(compiled._COMPILED) == set(kept)


def test_a_failed_warm_up_is_logged_not_raised(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        warm.warm_up(tmp_path / "missing.csv")
    assert "warm-up failed" in caplog.text


@pytest.mark.parametrize(("text", "on"), [("", True), ("1", True), ("on", True), ("TRUE", True),
                                          ("0", False), ("off", False), ("false", False)])
def test_the_setting(monkeypatch, text, on):
    monkeypatch.setenv(settings.WARM_UP, text)
    assert settings.warm_up() is on


def test_a_bad_setting_names_the_variable(monkeypatch):
    monkeypatch.setenv(settings.WARM_UP, "sometimes")
    with pytest.raises(settings.SettingError, match="PLANNER_WARM_UP"):
        settings.warm_up()
