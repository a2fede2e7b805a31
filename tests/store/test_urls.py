"""What a page may say of where the store is: its kind, never a path, host, user or password."""

import pytest

from dashboard.store.urls import described


@pytest.mark.parametrize(("url", "words", "hidden"), [
    ("sqlite:////srv/planner/secret-dir/scenarios.db", "a SQLite file on this server", "secret-dir"),
    ("sqlite:///relative/scenarios.db", "a SQLite file on this server", "relative"),
    ("postgresql://alice:pw@db.internal:5432/planner", "the shared PostgreSQL database", "db.internal"),
    ("postgres://bob@10.0.0.5/planner", "the shared PostgreSQL database", "10.0.0.5"),
    ("postgresql+psycopg://carol@db/planner", "the shared PostgreSQL database", "carol"),
    ("not a url at all", "a store whose address cannot be read", "not a url"),
])
def test_the_store_is_described_by_its_kind_only(url, words, hidden):
    assert described(url) == words
    assert hidden not in described(url)
