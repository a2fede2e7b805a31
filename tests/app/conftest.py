"""AppTest fixtures (tests/support/app_fixtures.py): the entry point by absolute path and clean caches per test."""

from app_fixtures import APP, app, clear_caches, no_sign_in, store_url  # noqa: F401 - fixtures pytest finds by name
