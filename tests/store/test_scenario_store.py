"""ScenarioStore on SQLite and on a real PostgreSQL server: CRUD, errors, concurrent writers, damaged files."""

from __future__ import annotations

import json
import multiprocessing
import socket
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, insert, text

from dashboard.core.scenario import Scenario
from dashboard.store import sqlite_file
from dashboard.store.errors import (
    InvalidNameError,
    NameTakenError,
    ScenarioNotFoundError,
    StoreError,
    StoreUnavailableError,
)
from dashboard.store.scenario_store import ScenarioStore, StoredScenario, scenarios_table
from dashboard.store.urls import default_store_url

HERE = Path(__file__).resolve().parent


def named(name: str, **values) -> Scenario:
    return Scenario(name=name, **values)


def sqlalchemy_url(url: str) -> str:
    return url.replace("postgresql://", "postgresql+psycopg://", 1)


def raw_rows(url: str) -> list[tuple]:
    engine = create_engine(sqlalchemy_url(url))
    with engine.connect() as connection:
        rows = connection.execute(text("SELECT name, scenario_json FROM scenarios ORDER BY id")).all()
    engine.dispose()
    return [tuple(row) for row in rows]


def insert_raw(url: str, name: str, scenario_json: str) -> None:
    now = datetime.now(UTC)
    engine = create_engine(sqlalchemy_url(url))
    with engine.begin() as connection:
        connection.execute(
            insert(scenarios_table).values(name=name, scenario_json=scenario_json, created_at=now, updated_at=now)
        )
    engine.dispose()


# -- saving and loading --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "scenario",
    [
        Scenario(name="Option A (8k H100)", gpu_count=8192, mfu=0.38),
        Scenario(name="MoE", total_params=671e9, active_params=37e9, tokens=14.8e12, gpu_type="H800"),
        Scenario(name="Custom chip", gpu_type="custom", peak_tflops=1234.5, checkpoint_write_s=12.0, mfu=0.4),
        Scenario(name="TST on spot", method="tst", reserved_share=0.25, spot_share=0.75, attention_flops=True),
    ],
)
def test_save_then_load_gives_the_same_scenario(store, scenario):
    store.save(scenario.name, scenario)
    assert store.load(scenario.name) == scenario


def test_the_stored_name_field_follows_the_store_name(store):
    store.save("  Plan B  ", Scenario(name="Something else", mfu=0.5))
    loaded = store.load("Plan B")
    assert loaded == Scenario(name="Plan B", mfu=0.5)
    assert store.names() == ["Plan B"]


def test_names_are_ordered_ignoring_case(store):
    for name in ["beta", "Alpha", "zeta", "alpha 2", "Ärger", "10 GPUs", "Beta"]:
        store.save(name, Scenario())
    assert store.names() == ["10 GPUs", "Alpha", "alpha 2", "Beta", "beta", "zeta", "Ärger"]


def test_an_empty_store_has_no_names(store):
    assert store.names() == []
    assert store.entries() == []


def test_entries_carry_scenarios_and_utc_times(store):
    before = datetime.now(UTC) - timedelta(seconds=1)
    store.save("b", Scenario(mfu=0.3))
    store.save("A", Scenario(mfu=0.2))
    entries = store.entries()
    assert [(entry.name, entry.scenario.mfu, entry.error) for entry in entries] == [("A", 0.2, None), ("b", 0.3, None)]
    for entry in entries:
        assert isinstance(entry, StoredScenario)
        assert entry.updated_at.tzinfo is not None
        assert entry.updated_at.utcoffset() == timedelta(0)
        assert before <= entry.updated_at <= datetime.now(UTC) + timedelta(seconds=1)


def test_a_taken_name_is_refused_and_the_first_scenario_kept(store):
    store.save("Plan", Scenario(mfu=0.3))
    with pytest.raises(NameTakenError) as error:
        store.save("Plan", Scenario(mfu=0.5))
    assert str(error.value) == "a scenario named 'Plan' already exists: choose another name or overwrite it"
    assert store.load("Plan").mfu == 0.3
    assert store.names() == ["Plan"]


def test_overwrite_replaces_the_scenario_and_keeps_one_row(store, store_url):
    store.save("Plan", Scenario(mfu=0.3))
    first = store.entries()[0].updated_at
    store.save("Plan", Scenario(mfu=0.5), overwrite=True)
    assert store.load("Plan") == Scenario(name="Plan", mfu=0.5)
    assert store.entries()[0].updated_at >= first
    assert [name for name, _ in raw_rows(store_url)] == ["Plan"]


def test_overwrite_of_a_new_name_saves_it(store):
    store.save("New", Scenario(mfu=0.25), overwrite=True)
    assert store.load("New").mfu == 0.25


def test_names_differing_only_in_case_are_different_scenarios(store):
    store.save("plan", Scenario(mfu=0.1))
    store.save("PLAN", Scenario(mfu=0.2))
    assert (store.load("plan").mfu, store.load("PLAN").mfu) == (0.1, 0.2)


def test_loading_a_missing_name_says_so(store):
    store.save("Plan", Scenario())
    with pytest.raises(ScenarioNotFoundError) as error:
        store.load("Plann")
    assert str(error.value) == "no saved scenario is named 'Plann': pick one of the saved names"


def test_a_stored_scenario_that_no_longer_validates_is_reported_by_name(store, store_url):
    store.save("Good", Scenario())
    insert_raw(store_url, "Old", json.dumps({"schema": 1, "name": "Old", "mfu": 1.5}))
    insert_raw(store_url, "Broken", "{not json")
    with pytest.raises(StoreError) as error:
        store.load("Old")
    assert str(error.value) == (
        "the saved scenario 'Old' is no longer valid (mfu = 1.5 is out of range (allowed: ≥ 0.01 and ≤ 1)): "
        "overwrite it with a corrected scenario or delete it"
    )
    with pytest.raises(StoreError, match=r"^the saved scenario 'Broken' is no longer valid \(not valid JSON: "):
        store.load("Broken")
    entries = store.entries()
    assert [(entry.name, entry.scenario is None) for entry in entries] == [
        ("Broken", True), ("Good", False), ("Old", True)
    ]
    assert entries[2].error == (
        "the saved scenario 'Old' is no longer valid (mfu = 1.5 is out of range (allowed: ≥ 0.01 and ≤ 1)): "
        "overwrite it with a corrected scenario or delete it"
    )
    store.save("Old", Scenario(mfu=0.4), overwrite=True)
    assert store.load("Old").mfu == 0.4


@pytest.mark.parametrize("name", ["", "a/b", "../etc/passwd", "tab\there", "x" * 121])
@pytest.mark.parametrize("operation", ["save", "load", "delete", "rename_to", "duplicate_to"])
def test_every_operation_refuses_invalid_names(store, name, operation):
    store.save("Plan", Scenario())
    calls = {
        "save": lambda: store.save(name, Scenario()),
        "load": lambda: store.load(name),
        "delete": lambda: store.delete(name),
        "rename_to": lambda: store.rename("Plan", name),
        "duplicate_to": lambda: store.duplicate("Plan", name),
    }
    with pytest.raises(InvalidNameError, match="^Scenario names are 1–120 characters"):
        calls[operation]()
    assert store.names() == ["Plan"]


def test_sql_metacharacters_are_refused_or_stored_literally(store, store_url):
    with pytest.raises(InvalidNameError):
        store.save("x'); DROP TABLE scenarios;--", Scenario())
    literal = ["x' OR '1'", "Robert') -- (drop", "a, b: 'c' & 'd'", "#1 -- comment"]
    for name in literal:
        store.save(name, Scenario())
    assert store.names() == sorted(literal, key=str.casefold)
    assert sorted(name for name, _ in raw_rows(store_url)) == sorted(literal)
    for name in literal:
        assert store.load(name).name == name
    store.delete("x' OR '1'")
    assert len(store.names()) == 3


# -- rename, duplicate, delete -------------------------------------------------------------------------


def test_rename_moves_the_scenario_and_its_name_field(store):
    store.save("Old", Scenario(mfu=0.33))
    store.rename("Old", " New ")
    assert store.names() == ["New"]
    assert store.load("New") == Scenario(name="New", mfu=0.33)
    with pytest.raises(ScenarioNotFoundError):
        store.load("Old")


def test_rename_to_the_same_name_changes_nothing(store):
    store.save("Same", Scenario(mfu=0.33))
    store.rename("Same", "Same")
    assert store.load("Same") == Scenario(name="Same", mfu=0.33)


@pytest.mark.parametrize(
    ("old", "new", "error", "message"),
    [
        ("Missing", "New", ScenarioNotFoundError, "no saved scenario is named 'Missing': pick one of the saved names"),
        ("A", "B", NameTakenError, "cannot rename 'A': a scenario named 'B' already exists; choose another name"),
    ],
)
def test_rename_errors_leave_both_scenarios_as_they_were(store, old, new, error, message):
    store.save("A", Scenario(mfu=0.1))
    store.save("B", Scenario(mfu=0.2))
    with pytest.raises(error) as raised:
        store.rename(old, new)
    assert str(raised.value) == message
    assert store.names() == ["A", "B"]
    assert (store.load("A").mfu, store.load("B").mfu) == (0.1, 0.2)


def test_duplicate_copies_under_the_new_name(store):
    store.save("Base", Scenario(gpu_count=64))
    store.duplicate("Base", "Base (copy)")
    assert store.names() == ["Base", "Base (copy)"]
    assert store.load("Base (copy)") == Scenario(name="Base (copy)", gpu_count=64)
    assert store.load("Base") == Scenario(name="Base", gpu_count=64)


@pytest.mark.parametrize(
    ("source", "target", "error", "message"),
    [
        ("Missing", "C", ScenarioNotFoundError, "no saved scenario is named 'Missing': pick one of the saved names"),
        ("A", "B", NameTakenError, "a scenario named 'B' already exists: choose another name or overwrite it"),
        ("A", "A", NameTakenError, "a scenario named 'A' already exists: choose another name or overwrite it"),
    ],
)
def test_duplicate_errors_save_nothing(store, source, target, error, message):
    store.save("A", Scenario(mfu=0.1))
    store.save("B", Scenario(mfu=0.2))
    with pytest.raises(error) as raised:
        store.duplicate(source, target)
    assert str(raised.value) == message
    assert store.names() == ["A", "B"]
    assert store.load("B").mfu == 0.2


def test_delete_removes_only_that_scenario(store):
    for name in ["A", "B", "C"]:
        store.save(name, Scenario())
    store.delete("B")
    assert store.names() == ["A", "C"]
    with pytest.raises(ScenarioNotFoundError) as error:
        store.delete("B")
    assert str(error.value) == "no saved scenario is named 'B': nothing was deleted"
    assert store.names() == ["A", "C"]


# -- importing several at once -------------------------------------------------------------------------


def test_import_saves_all_and_returns_their_names(store):
    saved = store.import_scenarios([named("One", mfu=0.1), named(" Two ", mfu=0.2), named("Three", mfu=0.3)])
    assert saved == ["One", "Two", "Three"]
    assert store.names() == ["One", "Three", "Two"]
    assert store.load("Two") == named("Two", mfu=0.2)


@pytest.mark.parametrize(
    ("batch", "error", "message"),
    [
        (
            [named("One"), named("Taken"), named("Three")],
            NameTakenError,
            "a scenario named 'Taken' already exists: choose another name or overwrite it",
        ),
        (
            [named("One"), named("Two"), named("One")],
            NameTakenError,
            "the import holds two scenarios named 'One': rename one and import again",
        ),
        (
            [named("One"), named("a/b"), named("Three")],
            InvalidNameError,
            "Scenario names are 1–120 characters: letters, digits, spaces and - – — _ . , ( ) + & # ' % : "
            "(got 'a/b', which contains '/')",
        ),
    ],
)
def test_import_is_all_or_nothing(store, batch, error, message):
    store.save("Taken", Scenario(mfu=0.9))
    with pytest.raises(error) as raised:
        store.import_scenarios(batch)
    assert str(raised.value) == message
    assert store.names() == ["Taken"]
    assert store.load("Taken").mfu == 0.9


def test_import_with_overwrite_replaces_taken_names(store):
    store.save("Taken", Scenario(mfu=0.9))
    assert store.import_scenarios([named("One"), named("Taken", mfu=0.2)], overwrite=True) == ["One", "Taken"]
    assert store.names() == ["One", "Taken"]
    assert store.load("Taken").mfu == 0.2


# -- concurrent writers --------------------------------------------------------------------------------


def _in_threads(targets) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(targets))

    def run(target):
        barrier.wait(30)
        try:
            target()
        except BaseException as error:  # collected for the test to assert on
            errors.append(error)

    threads = [threading.Thread(target=run, args=(target,)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads), "a writer hung"
    return errors


def test_two_writers_in_two_threads_keep_all_names(store_url):
    stores = [ScenarioStore(store_url), ScenarioStore(store_url)]

    def writer(store, prefix):
        return lambda: [store.save(f"{prefix} {number}", Scenario(gpu_count=number + 1)) for number in range(20)]

    errors = _in_threads([writer(stores[0], "left"), writer(stores[1], "right")])
    assert errors == []
    names = stores[0].names()
    assert len(names) == 40
    assert set(names) == {f"{side} {number}" for side in ("left", "right") for number in range(20)}
    assert stores[1].load("left 19").gpu_count == 20
    for store in stores:
        store.close()


def test_one_store_shared_by_threads_keeps_all_names(store):
    def writer(prefix):
        return lambda: [store.save(f"{prefix} {number}", Scenario()) for number in range(10)]

    assert _in_threads([writer(f"t{index}") for index in range(4)]) == []
    assert len(store.names()) == 40


def test_writers_that_read_first_do_not_fail_each_other(store_url):
    """duplicate and rename read the row, then write: on SQLite a writer's snapshot must not go stale."""
    stores = [ScenarioStore(store_url) for _ in range(4)]
    stores[0].save("Base", Scenario(gpu_count=64))

    def copier(store, index):
        def run():
            for number in range(10):
                store.duplicate("Base", f"copy {index}-{number}")
                store.rename(f"copy {index}-{number}", f"renamed {index}-{number}")
        return run

    assert _in_threads([copier(store, index) for index, store in enumerate(stores)]) == []
    names = stores[0].names()
    assert len(names) == 41
    assert stores[1].load("renamed 3-9") == Scenario(name="renamed 3-9", gpu_count=64)
    for store in stores:
        store.close()


@pytest.mark.parametrize("overwrite", [False, True])
def test_saving_the_same_name_at_once_has_one_winner(store_url, overwrite):
    writers = 6
    stores = [ScenarioStore(store_url) for _ in range(writers)]
    written = [Scenario(gpu_count=n + 1) for n in range(writers)]
    for round_number in range(3):
        name = f"Race {round_number}"
        errors = _in_threads([
            lambda s=s, n=n, name=name: s.save(name, written[n], overwrite=overwrite)
            for n, s in enumerate(stores)
        ])
        assert stores[0].names().count(name) == 1
        if overwrite:
            assert errors == []  # every save landed; the last one is kept whole
        else:
            assert len(errors) == writers - 1
            assert all(isinstance(error, NameTakenError) for error in errors), errors
            assert {str(error) for error in errors} == {
                f"a scenario named '{name}' already exists: choose another name or overwrite it"
            }
        # The stored scenario is exactly one writer's, field for field, under the race's name.
        assert stores[0].load(name) in [scenario.model_copy(update={"name": name}) for scenario in written]
    for store in stores:
        store.close()


def test_two_processes_keep_all_names(store_url, monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))  # spawned children import store_workers by name
    import store_workers

    context = multiprocessing.get_context("spawn")
    start, results = context.Event(), context.Queue()
    processes = [
        context.Process(target=store_workers.save_names, args=(store_url, prefix, 15, start, results))
        for prefix in ("first", "second")
    ]
    for process in processes:
        process.start()
    start.set()
    reports = dict(results.get(timeout=120) for _ in processes)
    for process in processes:
        process.join(60)
    assert reports == {"first": "ok", "second": "ok"}
    with ScenarioStore(store_url) as store:
        names = store.names()
    assert len(names) == 30
    assert set(names) == {f"{prefix} {number}" for prefix in ("first", "second") for number in range(15)}


# -- damaged SQLite files ------------------------------------------------------------------------------

GARBAGE = b"this is not a database\x00\xff" * 400


def _backups(folder: Path) -> list[Path]:
    return sorted(folder.glob("scenarios.db.corrupt-*"))


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda path: path.write_bytes(GARBAGE), id="garbage-bytes"),
        pytest.param(lambda path: path.write_bytes(b"SQLite format 3\x00" + GARBAGE), id="garbage-after-header"),
        pytest.param(
            lambda path: path.write_bytes(path.read_bytes()[:4096] + b"\xa5" * len(path.read_bytes()[4096:])),
            id="garbled-pages",
        ),
    ],
)
def test_a_damaged_file_is_kept_aside_and_a_new_store_started(tmp_path, damage):
    path = tmp_path / "scenarios.db"
    with ScenarioStore(f"sqlite:///{path}") as store:
        store.save("Lost", Scenario())
        assert store.notice is None
    damage(path)
    damaged_bytes = path.read_bytes()
    for sidecar in ("-wal", "-shm"):
        Path(f"{path}{sidecar}").unlink(missing_ok=True)

    with ScenarioStore(f"sqlite:///{path}") as store:
        backups = _backups(tmp_path)
        assert len(backups) == 1
        assert backups[0].read_bytes() == damaged_bytes
        assert backups[0].name.startswith("scenarios.db.corrupt-")
        stamp = backups[0].name.removeprefix("scenarios.db.corrupt-")
        assert datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC) <= datetime.now(UTC)
        assert store.notice == (
            f"The scenario store {path} was not a readable database: it was kept as {backups[0]} "
            "and a new, empty store was started."
        )
        assert store.names() == []
        store.save("Fresh", Scenario(mfu=0.3))
        assert store.load("Fresh").mfu == 0.3

    with ScenarioStore(f"sqlite:///{path}") as reopened:
        assert reopened.notice is None
        assert reopened.names() == ["Fresh"]
    assert _backups(tmp_path) == backups


def test_programs_opening_a_damaged_file_at_once_make_one_backup(tmp_path):
    path = tmp_path / "scenarios.db"
    path.write_bytes(GARBAGE)
    opened: list[ScenarioStore] = []

    def opener(index):
        def run():
            store = ScenarioStore(f"sqlite:///{path}")
            opened.append(store)
            store.save(f"saved by {index}", Scenario())
        return run

    assert _in_threads([opener(index) for index in range(4)]) == []
    backups = _backups(tmp_path)
    assert len(backups) == 1
    assert backups[0].read_bytes() == GARBAGE
    assert [store.notice is not None for store in opened].count(True) == 1
    assert opened[0].names() == ["saved by 0", "saved by 1", "saved by 2", "saved by 3"]
    for store in opened:
        store.close()


def test_moving_aside_never_replaces_an_earlier_backup(tmp_path):
    path = tmp_path / "scenarios.db"
    when = datetime(2026, 7, 1, 12, 30, 5, tzinfo=UTC)
    earlier = tmp_path / "scenarios.db.corrupt-20260701T123005Z"
    earlier.write_bytes(b"first backup")
    path.write_bytes(b"second damaged file")
    Path(f"{path}-wal").write_bytes(b"its wal")
    backup = sqlite_file.move_aside(path, now=when)
    assert backup == tmp_path / "scenarios.db.corrupt-20260701T123005Z-2"
    assert earlier.read_bytes() == b"first backup"
    assert backup.read_bytes() == b"second damaged file"
    assert Path(f"{backup}-wal").read_bytes() == b"its wal"
    assert not path.exists() and not Path(f"{path}-wal").exists()


def test_a_locked_database_is_reported_not_moved_aside(tmp_path):
    path = tmp_path / "scenarios.db"
    with ScenarioStore(f"sqlite:///{path}") as store:
        store.save("Kept", Scenario())
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreUnavailableError) as error:
            ScenarioStore(f"sqlite:///{path}?timeout=0.2")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert str(error.value) == f"cannot reach the scenario store at sqlite:///{path}?timeout=0.2: database is locked"
    assert _backups(tmp_path) == []
    with ScenarioStore(f"sqlite:///{path}") as store:
        assert store.names() == ["Kept"]


def test_a_missing_folder_is_created(tmp_path):
    path = tmp_path / "new" / "deeper" / "scenarios.db"
    with ScenarioStore(f"sqlite:///{path}") as store:
        store.save("A", Scenario())
    assert path.is_file()


# -- URLs, unreachable servers -------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_postgresql_server_is_reported_without_the_password():
    port = _closed_port()
    with pytest.raises(StoreUnavailableError) as error:
        ScenarioStore(f"postgresql://planner:s3cret-pw@127.0.0.1:{port}/planner?connect_timeout=5")
    message = str(error.value)
    assert message.startswith(
        f"cannot reach the scenario store at postgresql://planner:***@127.0.0.1:{port}/planner?connect_timeout=5: "
    )
    assert "s3cret-pw" not in message
    assert "Connection refused" in message or "connection failed" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("not a url", "the scenario store URL is not a database URL: use sqlite:///PATH or postgresql://"),
        ("mysql://u:pw@localhost/db", "cannot use the scenario store at mysql://u:***@localhost/db: only SQLite"),
        ("oracle+nodriver://u@h/db", "cannot use the scenario store at oracle+nodriver://u@h/db: only SQLite"),
    ],
)
def test_unusable_urls_are_refused(url, message):
    with pytest.raises(StoreUnavailableError) as error:
        ScenarioStore(url)
    assert str(error.value).startswith(message)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("postgresql://u@h:5432/db", "postgresql+psycopg"),
        ("postgres://u@h:5432/db", "postgresql+psycopg"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg"),
        ("sqlite:///x.db", "sqlite"),
    ],
)
def test_postgresql_urls_use_psycopg_3(given, expected):
    from dashboard.store.urls import parse_url

    assert parse_url(given).drivername == expected


def test_the_store_url_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("PLANNER_STORE_URL", "postgresql://planner@db.internal/plans")
    assert default_store_url() == "postgresql://planner@db.internal/plans"


def test_the_default_store_is_a_file_in_the_xdg_data_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("PLANNER_STORE_URL", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_store_url() == f"sqlite:///{tmp_path}/xdg/pretraining-planner/scenarios.db"
    assert (tmp_path / "xdg" / "pretraining-planner").is_dir()


def test_without_xdg_the_default_store_is_under_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("PLANNER_STORE_URL", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_store_url() == f"sqlite:///{tmp_path}/.local/share/pretraining-planner/scenarios.db"
    assert (tmp_path / ".local" / "share" / "pretraining-planner").is_dir()


def test_store_errors_are_one_kind_for_callers():
    for kind in (InvalidNameError, NameTakenError, ScenarioNotFoundError, StoreUnavailableError):
        assert issubclass(kind, StoreError)
    assert not issubclass(StoreError, ValueError)


# -- concurrent writers on PostgreSQL ------------------------------------------------------------------

CHURN_WRITERS = 4
CHURN_SECONDS = 10  # the 30 s run hit 15 deadlocks in 14,965 operations; 10 s reproduces them
SHARED_NAMES = [f"shared {letter}" for letter in "ABCDEFGH"]


def test_four_writers_on_postgresql_lose_nothing_and_see_no_error(postgres_url, monkeypatch):
    from sqlalchemy import create_engine, text

    engine = create_engine(postgres_url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as connection:
        connection.execute(text("DROP TABLE IF EXISTS scenarios"))
    engine.dispose()
    monkeypatch.syspath_prepend(str(HERE))
    import store_workers

    context = multiprocessing.get_context("spawn")
    start, results = context.Event(), context.Queue()
    processes = [
        context.Process(target=store_workers.churn,
                        args=(postgres_url, worker, SHARED_NAMES, CHURN_SECONDS, start, results))
        for worker in range(CHURN_WRITERS)
    ]
    for process in processes:
        process.start()
    start.set()
    reports = [results.get(timeout=CHURN_SECONDS + 120) for _ in processes]
    for process in processes:
        process.join(60)
    errors = [error for _, _, _, worker_errors in reports for error in worker_errors]
    operations = sum(count for _, _, count, _ in reports)
    assert errors == [], f"{len(errors)} errors in {operations:,} operations, first: {errors[:3]}"
    with ScenarioStore(postgres_url) as store:
        names = set(store.names())
    saved = {name for _, worker_saved, _, _ in reports for name in worker_saved}
    assert saved - names == set()
    assert names == saved | set(SHARED_NAMES)
