"""Saved scenarios: a named, persistent store (SQLite file or PostgreSQL) plus JSON bundles for import/export.

Pure Python, never imports streamlit. Modules: ``errors`` (StoreError and its kinds), ``names`` (which
scenario names are allowed), ``urls`` (the default store location and URL handling), ``sqlite_file``
(SQLite connection settings and recovery from a damaged file), ``scenario_store`` (ScenarioStore, with each
scenario's owner and an audit trail; who acts is `dashboard.identity`), ``plan_outcomes`` (how saved plans compared
with their actuals: the ``plan_outcomes`` table) and ``bundle`` (several scenarios in one JSON file).
"""
