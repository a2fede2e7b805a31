"""The store says why it cannot write (read-only, disk full), retries crossed transactions, and refuses bad URLs."""

import random
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import create_engine, event, text
from sqlalchemy.exc import OperationalError

from dashboard.core.scenario import Scenario
from dashboard.store import driver_errors
from dashboard.store.errors import StoreFullError, StoreReadOnlyError, StoreUnavailableError
from dashboard.store.scenario_store import ScenarioStore

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
URL_RULE = "use sqlite:///PATH or postgresql://USER@HOST:PORT/DB"


@pytest.mark.parametrize(("url", "message"), [
    ("postgresql://planner@db:notaport/plans", "the scenario store URL is not a database URL: " + URL_RULE),
    ("postgresql://planner@[::1/plans", "the scenario store URL is not a database URL: " + URL_RULE),
    ("sqlite:///plans\x00.db", "cannot use the scenario store at sqlite:///plans%00.db: the file name holds a NUL"),
    ("sqlite:///plans.db?timeout=abc", "cannot use the scenario store at sqlite:///plans.db?timeout=abc: "),
])
def test_malformed_store_urls_get_a_message(url, message):
    with pytest.raises(StoreUnavailableError) as error:
        ScenarioStore(url)
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value)


def test_the_compare_page_explains_a_malformed_store_url(app_test, monkeypatch):
    monkeypatch.setenv("PLANNER_STORE_URL", "postgresql://planner:secret@db:notaport/plans")
    at = app_test.run().switch_page("app_pages/compare.py").run()
    assert not at.exception
    assert "the scenario store URL is not a database URL" in at.error[0].value.replace("\\", "")
    assert "secret" not in at.error[0].value


@pytest.fixture
def app_test():
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_resource.clear()
    yield AppTest.from_file(str(APP), default_timeout=60)
    st.cache_resource.clear()


def test_a_read_only_sqlite_store_opens_for_reading_and_says_read_only_on_save(tmp_path):
    path = tmp_path / "scenarios.db"
    with ScenarioStore(f"sqlite:///{path}") as store:
        store.save("Kept", Scenario())
    with ScenarioStore(f"sqlite:///file:{path}?mode=ro&uri=true") as read_only:
        assert read_only.names() == ["Kept"]
        with pytest.raises(StoreReadOnlyError) as error:
            read_only.save("New", Scenario())
    assert " is read-only (attempt to write a readonly database): nothing was saved; " in str(error.value)


def test_a_read_only_postgresql_store_opens_for_reading_and_says_read_only_on_save(postgres_url):
    admin = create_engine(postgres_url.replace("postgresql://", "postgresql+psycopg://", 1).rsplit("/", 1)[0]
                          + "/postgres", isolation_level="AUTOCOMMIT")
    with ScenarioStore(postgres_url) as store:
        for name in store.names():
            store.delete(name)
        store.save("Kept", Scenario())
    with admin.connect() as connection:
        connection.execute(text("ALTER DATABASE planner_test SET default_transaction_read_only = on"))
    try:
        with ScenarioStore(postgres_url) as read_only:
            assert read_only.names() == ["Kept"]
            with pytest.raises(StoreReadOnlyError) as error:
                read_only.save("New", Scenario())
    finally:
        with admin.connect() as connection:
            connection.execute(text("ALTER DATABASE planner_test RESET default_transaction_read_only"))
        admin.dispose()
    assert " is read-only (cannot execute INSERT in a read-only transaction): nothing was saved; " in str(error.value)


def test_a_full_sqlite_store_says_disk_full(tmp_path):
    with ScenarioStore(f"sqlite:///{tmp_path / 'scenarios.db'}") as store:
        pages = store._engine.connect().exec_driver_sql("PRAGMA page_count").scalar()

        @event.listens_for(store._engine, "connect")
        def _cap(dbapi_connection, record):  # the file may not grow: SQLite answers SQLITE_FULL
            dbapi_connection.execute(f"PRAGMA max_page_count = {pages}")

        store._engine.dispose()
        with pytest.raises(StoreFullError) as error:
            for number in range(200):
                store.save(f"Plan {number}", Scenario())
    assert " has no disk space left (database or disk is full): nothing was saved; free space " in str(error.value)


@pytest.mark.parametrize(("orig", "expected"), [
    (psycopg.errors.DiskFull("could not extend file"), driver_errors.DISK_FULL),
    (psycopg.errors.ReadOnlySqlTransaction("read-only transaction"), driver_errors.READ_ONLY),
    (psycopg.errors.InsufficientPrivilege("permission denied for table scenarios"), driver_errors.READ_ONLY),
    (psycopg.errors.DeadlockDetected("deadlock detected"), None),
    (OSError(28, "No space left on device"), driver_errors.DISK_FULL),
    (OSError(30, "Read-only file system"), driver_errors.READ_ONLY),
])
def test_driver_errors_are_named_by_cause(orig, expected):
    assert driver_errors.cause(OperationalError("INSERT", {}, orig)) == expected


@pytest.mark.parametrize(("orig", "retry"), [
    (psycopg.errors.DeadlockDetected("deadlock detected"), True),
    (psycopg.errors.SerializationFailure("could not serialize access"), True),
    (psycopg.errors.UniqueViolation("duplicate key"), False),
    (psycopg.errors.ReadOnlySqlTransaction("read-only transaction"), False),
])
def test_only_crossed_transactions_are_retried(orig, retry):
    assert driver_errors.is_retryable(OperationalError("INSERT", {}, orig)) is retry


def test_backoff_is_jittered_and_capped():
    rng = random.Random(0)
    waits = [driver_errors.backoff_s(attempt, rng) for attempt in range(1, 30)]
    assert all(0 <= wait <= driver_errors.BACKOFF_CAP_S for wait in waits)
    assert len(set(waits)) == len(waits)
    assert all(wait <= driver_errors.BACKOFF_BASE_S * 2**attempt for attempt, wait in enumerate(waits[:5], start=1))
