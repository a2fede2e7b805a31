"""ScenarioStore: named scenarios saved in one database table (a SQLite file or PostgreSQL).

Every operation is one transaction. Name clashes are settled by the table's UNIQUE constraint, never by
reading first and writing after, so two programs saving at once both keep their work or one gets a clear
StoreError. A transaction that PostgreSQL aborts as a deadlock or serialisation failure is run again (bounded,
with jittered backoff: `dashboard.store.driver_errors`); a read-only or full store is named as such. A stored
scenario's ``name`` field is kept equal to its store name, so exported files and re-imports carry the name the
user chose.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import random
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import (
    Column,
    DateTime,
    Integer,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    delete,
    func,
    select,
    update,
)
from sqlalchemy import insert as plain_insert
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    IntegrityError,
    InterfaceError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)
from sqlalchemy.pool import StaticPool
from sqlalchemy.schema import CreateTable

from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_json
from dashboard.store import driver_errors, sqlite_file
from dashboard.store.errors import (
    NameTakenError,
    ScenarioNotFoundError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
    StoreUnavailableError,
)
from dashboard.store.names import validate_name
from dashboard.store.urls import display_url, parse_url

POSTGRES_CONNECT_TIMEOUT_S = 10
BACKENDS = ("sqlite", "postgresql")
CREATE_TABLE_LOCK_ID = 0x5C3A_0001  # PostgreSQL advisory lock key held while creating the table

metadata = MetaData()
scenarios_table = Table(
    "scenarios",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", Text, nullable=False),
    Column("scenario_json", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("name", name="scenarios_name_key"),
)
_t = scenarios_table
T = TypeVar("T")


@dataclass(frozen=True)
class StoredScenario:
    """One saved scenario. ``scenario`` is None, and ``error`` says why, when its JSON no longer validates."""

    name: str
    scenario: Scenario | None
    updated_at: datetime
    error: str | None = None


def _now() -> datetime:
    return datetime.now(UTC)


def _utc(value: datetime) -> datetime:
    """SQLite hands timestamps back without a zone; they were written in UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _payload(name: str, scenario: Scenario) -> str:
    """The scenario's JSON text with its ``name`` field set to the store name."""
    if not isinstance(scenario, Scenario):
        raise TypeError(f"expected a Scenario, got {type(scenario).__name__}")
    data = scenario.to_json_dict()
    data["name"] = name
    return json.dumps(data)


def _renamed(text: str, name: str) -> str:
    """Stored JSON with its ``name`` field replaced; text that is not a JSON object is kept as it is."""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict):
        return text
    data["name"] = name
    return json.dumps(data)


def _one_line(error: BaseException) -> str:
    orig = error.orig if isinstance(error, DBAPIError) and error.orig is not None else error
    return " ".join(str(orig).split()) or type(orig).__name__


def _sorted(names: Iterable[str]) -> list[str]:
    return sorted(names, key=lambda name: (name.casefold(), name))


class ScenarioStore:
    """Named scenarios in the database at ``url`` (sqlite:///PATH or postgresql://USER@HOST:PORT/DB).

    Opening creates the table if missing. A SQLite file that is not a readable database is moved aside
    (``notice`` then says where to); a server that cannot be reached raises StoreUnavailableError.
    """

    def __init__(self, url: str | URL) -> None:
        self.url: URL = parse_url(url)
        self.display_url = display_url(url)  # as the user wrote it, password hidden
        self.notice: str | None = None
        self._random = random.Random()
        self._path = sqlite_file.file_path(self.url.database) if self._is_sqlite else None
        if self._path is not None:
            if "\x00" in str(self._path):
                raise StoreUnavailableError(
                    f"cannot use the scenario store at {self.display_url}: the file name holds a NUL character"
                )
            with contextlib.suppress(OSError):  # if this fails, opening the file says why
                self._path.parent.mkdir(parents=True, exist_ok=True)
        self._engine = self._create_engine()
        try:
            self._open()
        except BaseException:
            self._engine.dispose()
            raise

    # -- opening ---------------------------------------------------------------------------------------

    @property
    def _is_sqlite(self) -> bool:
        return self.url.get_backend_name() == "sqlite"

    @property
    def _busy_timeout_s(self) -> float:
        """How long a SQLite writer waits for another one: the URL's ?timeout=SECONDS, else 30 s."""
        try:
            return float(self.url.query.get("timeout", sqlite_file.BUSY_TIMEOUT_S))
        except (TypeError, ValueError):
            return sqlite_file.BUSY_TIMEOUT_S

    def _create_engine(self) -> Engine:
        if self.url.get_backend_name() not in BACKENDS:
            raise StoreUnavailableError(
                f"cannot use the scenario store at {self.display_url}: only SQLite and PostgreSQL are supported "
                "(use sqlite:///PATH or postgresql://USER@HOST:PORT/DB)"
            )
        try:
            if self._is_sqlite:
                options: dict[str, Any] = {"connect_args": {"timeout": self._busy_timeout_s}}
                if self._path is None:
                    options = {"connect_args": {"check_same_thread": False}, "poolclass": StaticPool}
                engine = create_engine(self.url, **options)
                sqlite_file.configure(engine, self._busy_timeout_s)
                return engine
            connect_args = {}
            if "connect_timeout" not in self.url.query:
                connect_args["connect_timeout"] = POSTGRES_CONNECT_TIMEOUT_S
            return create_engine(self.url, pool_pre_ping=True, connect_args=connect_args)
        except (ArgumentError, NoSuchModuleError, ImportError, ValueError, TypeError) as error:
            raise StoreUnavailableError(
                f"cannot use the scenario store at {self.display_url}: {_one_line(error)} "
                "(use sqlite:///PATH or postgresql://USER@HOST:PORT/DB)"
            ) from None

    def _open(self) -> None:
        try:
            with self._guard():
                self._prepare()
        except (StoreError, sqlite3.DatabaseError) as error:
            cause = error.__cause__ if isinstance(error, StoreError) else error
            if self._path is None or cause is None or not sqlite_file.is_corruption(cause):
                raise
            self._recover()

    def _prepare(self) -> None:
        """Check that a SQLite file reads as a database, then create the table if it is missing."""
        with self._writer() as connection:
            if self._path is not None:
                sqlite_file.raise_unless_ok(connection.exec_driver_sql("PRAGMA quick_check").fetchall())
            if connection.dialect.name == "postgresql":
                # Two programs creating the table at once would clash in PostgreSQL's catalog even with
                # IF NOT EXISTS; this transaction-scoped lock makes the second wait and then find the table.
                connection.execute(select(func.pg_advisory_xact_lock(CREATE_TABLE_LOCK_ID)))
            if not connection.dialect.has_table(connection, _t.name):  # a read-only store still opens for reading
                connection.execute(CreateTable(_t, if_not_exists=True))

    def _recover(self) -> None:
        """Move a damaged SQLite file aside (unless another program just did) and start a fresh store."""
        assert self._path is not None
        self._engine.dispose()
        backup: Path | None = None
        with sqlite_file.recovery_lock(self._path):
            try:
                sqlite_file.check_readable(self._path, self._busy_timeout_s)
            except Exception as error:  # still damaged: ours to move
                if not sqlite_file.is_corruption(error):
                    raise StoreUnavailableError(
                        f"cannot reach the scenario store at {self.display_url}: {_one_line(error)}"
                    ) from error
                try:
                    backup = sqlite_file.move_aside(self._path)
                except OSError as move_error:
                    raise StoreUnavailableError(
                        f"the scenario store {self._path} is damaged and could not be moved aside "
                        f"({_one_line(move_error)}): move it away by hand, or set PLANNER_STORE_URL to another file"
                    ) from None
            self._engine = self._create_engine()
            with self._guard():
                self._prepare()
        if backup is not None:
            self.notice = (
                f"The scenario store {self._path} was not a readable database: it was kept as {backup} "
                "and a new, empty store was started."
            )

    # -- plumbing --------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn driver errors (other than name clashes, handled by callers) into one-line StoreErrors."""
        try:
            yield
        except DBAPIError as error:
            why = driver_errors.cause(error)
            if why == driver_errors.READ_ONLY:
                message = (f"the scenario store at {self.display_url} is read-only ({_one_line(error)}): nothing was "
                           "saved; ask its owner for write access, or set PLANNER_STORE_URL to a writable store")
                raise StoreReadOnlyError(self._hide_password(message)) from error
            if why == driver_errors.DISK_FULL:
                message = (f"the scenario store at {self.display_url} has no disk space left ({_one_line(error)}): "
                           "nothing was saved; free space where the database lives and try again")
                raise StoreFullError(self._hide_password(message)) from error
            if isinstance(error, OperationalError | InterfaceError):
                message = f"cannot reach the scenario store at {self.display_url}: {_one_line(error)}"
            else:
                message = f"the scenario store at {self.display_url} failed: {_one_line(error)}"
            raise StoreUnavailableError(self._hide_password(message)) from error
        except SQLAlchemyError as error:
            message = f"the scenario store at {self.display_url} failed: {_one_line(error)}"
            raise StoreUnavailableError(self._hide_password(message)) from error

    def _hide_password(self, message: str) -> str:
        password = self.url.password
        return message.replace(str(password), "***") if password else message

    def _writer(self) -> contextlib.AbstractContextManager[Connection]:
        """A connection in a write transaction (BEGIN IMMEDIATE on SQLite), committed on success."""
        return self._engine.execution_options(**{sqlite_file.WRITE_OPTION: True}).begin()

    def _reader(self) -> contextlib.AbstractContextManager[Connection]:
        return self._engine.begin()

    def _run(self, work: Callable[[Connection], T], *, write: bool = True) -> T:
        """``work`` in one transaction; rerun when PostgreSQL aborted it as a deadlock or serialisation failure.

        At most driver_errors.MAX_ATTEMPTS runs, with jittered exponential backoff between them; any other error,
        or the last attempt's, is raised as a one-line StoreError.
        """
        for attempt in itertools.count(1):
            try:
                with self._guard(), (self._writer() if write else self._reader()) as connection:
                    return work(connection)
            except StoreUnavailableError as error:
                if attempt >= driver_errors.MAX_ATTEMPTS or not driver_errors.is_retryable(error.__cause__):
                    raise
            time.sleep(driver_errors.backoff_s(attempt, self._random))
        raise AssertionError("unreachable")

    def _insert(self, connection: Connection, name: str, text: str) -> None:
        now = _now()
        try:
            connection.execute(plain_insert(_t).values(name=name, scenario_json=text, created_at=now, updated_at=now))
        except IntegrityError:
            raise NameTakenError(
                f"a scenario named {name!r} already exists: choose another name or overwrite it"
            ) from None

    def _upsert(self, connection: Connection, name: str, text: str) -> None:
        """Insert, or replace the scenario of that name, in one statement (no window for a clash)."""
        now = _now()
        make = postgresql_insert if connection.dialect.name == "postgresql" else sqlite_insert
        statement = make(_t).values(name=name, scenario_json=text, created_at=now, updated_at=now)
        statement = statement.on_conflict_do_update(
            index_elements=[_t.c.name],
            set_={"scenario_json": statement.excluded.scenario_json, "updated_at": statement.excluded.updated_at},
        )
        connection.execute(statement)

    def _stored_json(self, connection: Connection, name: str, *, lock: bool = False) -> str:
        query = select(_t.c.scenario_json).where(_t.c.name == name)
        text = connection.execute(query.with_for_update() if lock else query).scalar_one_or_none()
        if text is None:
            raise ScenarioNotFoundError(f"no saved scenario is named {name!r}: pick one of the saved names")
        return text

    # -- public API ------------------------------------------------------------------------------------

    def save(self, name: str, scenario: Scenario, *, overwrite: bool = False) -> None:
        """Save under ``name``; an existing name raises NameTakenError unless ``overwrite``."""
        name = validate_name(name)
        text = _payload(name, scenario)
        self._run(lambda connection: (self._upsert if overwrite else self._insert)(connection, name, text))

    def import_scenarios(self, scenarios: Iterable[Scenario], *, overwrite: bool = False) -> list[str]:
        """Save every scenario under its own ``name`` in one transaction: all are saved, or none is."""
        items = list(scenarios)
        names = [validate_name(scenario.name) for scenario in items]
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise NameTakenError(f"the import holds two scenarios named {name!r}: rename one and import again")
            seen.add(name)
        # Rows are written in name order, so two imports of the same names lock them in the same order.
        rows = sorted((name, _payload(name, scenario)) for name, scenario in zip(names, items, strict=True))
        write = self._upsert if overwrite else self._insert

        def work(connection: Connection) -> None:
            for name, text in rows:
                write(connection, name, text)

        self._run(work)
        return names

    def names(self) -> list[str]:
        """Saved names, ordered case-insensitively."""
        return _sorted(self._run(lambda connection: list(connection.execute(select(_t.c.name)).scalars()), write=False))

    def entries(self) -> list[StoredScenario]:
        """Every saved scenario, ordered by name; one whose JSON no longer validates carries ``error``."""
        query = select(_t.c.name, _t.c.scenario_json, _t.c.updated_at)
        rows = self._run(lambda connection: connection.execute(query).all(), write=False)
        found = []
        for name, text, updated_at in rows:
            try:
                found.append(StoredScenario(name, scenario_from_json(text), _utc(updated_at)))
            except ScenarioError as error:
                found.append(StoredScenario(name, None, _utc(updated_at), self._invalid(name, error)))
        return sorted(found, key=lambda entry: (entry.name.casefold(), entry.name))

    def load(self, name: str) -> Scenario:
        """The scenario saved as ``name``; ScenarioNotFoundError, or StoreError if it no longer validates."""
        name = validate_name(name)
        text = self._run(lambda connection: self._stored_json(connection, name), write=False)
        try:
            return scenario_from_json(text)
        except ScenarioError as error:
            raise StoreError(self._invalid(name, error)) from None

    @staticmethod
    def _invalid(name: str, error: ScenarioError) -> str:
        return (
            f"the saved scenario {name!r} is no longer valid ({error}): "
            "overwrite it with a corrected scenario or delete it"
        )

    def rename(self, old: str, new: str) -> None:
        """Give a saved scenario a new name (its ``name`` field follows)."""
        old, new = validate_name(old), validate_name(new)

        def work(connection: Connection) -> None:
            text = self._stored_json(connection, old, lock=True)
            if new == old:
                return
            try:
                values = {"name": new, "scenario_json": _renamed(text, new), "updated_at": _now()}
                connection.execute(update(_t).where(_t.c.name == old).values(**values))
            except IntegrityError:
                raise NameTakenError(
                    f"cannot rename {old!r}: a scenario named {new!r} already exists; choose another name"
                ) from None

        self._run(work)

    def duplicate(self, name: str, new_name: str) -> None:
        """Save a copy of ``name`` as ``new_name``."""
        name, new_name = validate_name(name), validate_name(new_name)
        self._run(lambda connection: self._insert(
            connection, new_name, _renamed(self._stored_json(connection, name), new_name)))

    def delete(self, name: str) -> None:
        """Remove a saved scenario; ScenarioNotFoundError if there is none of that name."""
        name = validate_name(name)

        def work(connection: Connection) -> None:
            if not connection.execute(delete(_t).where(_t.c.name == name)).rowcount:
                raise ScenarioNotFoundError(f"no saved scenario is named {name!r}: nothing was deleted")

        self._run(work)

    def close(self) -> None:
        """Release the database connections; the store is not usable afterwards."""
        self._engine.dispose()

    def __enter__(self) -> ScenarioStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ScenarioStore({self.display_url!r})"


__all__ = ["ScenarioStore", "StoredScenario", "scenarios_table"]
