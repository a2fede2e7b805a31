"""ScenarioStore: named scenarios saved in one database table (a SQLite file or PostgreSQL).

Every operation is one transaction. Name clashes are settled by the table's UNIQUE constraint, never by
reading first and writing after, so two programs saving at once both keep their work or one gets a clear
StoreError. A transaction that PostgreSQL aborts as a deadlock or serialisation failure is run again (bounded,
with jittered backoff: `dashboard.store.driver_errors`); a read-only or full store is named as such. A stored
scenario's ``name`` field is kept equal to its store name, so exported files and re-imports carry the name the
user chose.

Every write names its actor (`dashboard.identity.Identity`, explicitly; the anonymous local user by default).
A scenario records its owner (OIDC issuer, subject and e-mail) and created/updated times; rename, overwrite and
delete are refused with NotAllowedError, nothing changed, unless the actor may change it (its owner, an
administrator, or, for a scenario without owner, the anonymous local user). Every save, overwrite, rename,
duplicate, delete and adoption writes a row to the ``scenario_audit`` table in the same transaction: who (issuer,
subject, e-mail), what, when and the previous value. Opening a store made before owners existed adds the owner
columns and the audit table (SQLite and PostgreSQL); its rows keep no owner until an administrator adopts them.
Opening one made before issuers were recorded adds the issuer columns; its owners' issuer is
``legacy_owner_issuer`` when the operator names it (``PLANNER_LEGACY_OWNER_ISSUER``), else unknown, and a scenario
whose owner has no issuer is changed only by administrators.

The same database keeps how saved plans compared with their actuals (``plan_outcomes``,
`dashboard.store.plan_outcomes`): ``record_outcome`` writes one (as ``actor``; the same plan and period again
replaces it) and ``outcomes`` reads the latest ones, at most ``plan_outcomes.MAX_OUTCOMES``. Opening a store made
before that table existed adds it.
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
    Index,
    Integer,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    delete,
    func,
    inspect,
    null,
    select,
    update,
)
from sqlalchemy import insert as plain_insert
from sqlalchemy import text as sql_text
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
from sqlalchemy.schema import CreateIndex, CreateTable

from dashboard.core.plan_accuracy import PlanOutcome
from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_json
from dashboard.identity import LOCAL, Identity, shown_actor, shown_owner
from dashboard.store import driver_errors, plan_outcomes, sqlite_file
from dashboard.store.errors import (
    NameTakenError,
    NotAllowedError,
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
    # Who saved it first (None: saved before sign-in existed, or by the anonymous local user). Added on open to a
    # store made before owners existed (ADDED_COLUMNS).
    Column("owner_subject", Text, nullable=True),
    Column("owner_email", Text, nullable=True),
    # The owner's OIDC issuer (None with a subject: recorded before issuers were, so nobody's). Added on open.
    Column("owner_issuer", Text, nullable=True),
    UniqueConstraint("name", name="scenarios_name_key"),
)
audit_table = Table(
    "scenario_audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scenario_id", Integer, nullable=False),  # scenarios.id (no foreign key: a deleted scenario's rows stay)
    Column("at", DateTime(timezone=True), nullable=False),
    Column("action", Text, nullable=False),  # one of ACTIONS
    Column("name", Text, nullable=False),  # the scenario's name after the change (the deleted name for a delete)
    Column("previous_name", Text, nullable=True),  # rename: the old name; duplicate: the copied scenario's name
    Column("previous_json", Text, nullable=True),  # overwrite and delete: the scenario as it was
    Column("previous_owner_email", Text, nullable=True),  # adopt: who owned it (None: nobody)
    Column("actor_subject", Text, nullable=True),  # None: the anonymous local user
    Column("actor_email", Text, nullable=True),
    Column("actor_issuer", Text, nullable=True),  # added on open to an audit table made before issuers
)
Index("scenario_audit_scenario_id", audit_table.c.scenario_id)
ACTIONS = ("save", "overwrite", "rename", "duplicate", "delete", "adopt", "remove outcome")
# Columns added on open to a store made before them (fixed names, never user text), and the subject column whose
# rows get the operator's legacy issuer (``legacy_owner_issuer``) when they have none.
ADDED_COLUMNS: dict[str, tuple[str, ...]] = {
    "scenarios": ("owner_subject", "owner_email", "owner_issuer"),
    "scenario_audit": ("actor_issuer",),
    "plan_outcomes": ("recorded_by_issuer",),
}
LEGACY_ISSUER_OF = {"owner_issuer": "owner_subject", "actor_issuer": "actor_subject",
                    "recorded_by_issuer": "recorded_by_subject"}
_t = scenarios_table
_a = audit_table
T = TypeVar("T")


@dataclass(frozen=True)
class StoredScenario:
    """One saved scenario. ``scenario`` is None, and ``error`` says why, when its JSON no longer validates."""

    name: str
    scenario: Scenario | None
    updated_at: datetime
    error: str | None = None
    owner_subject: str | None = None
    owner_email: str | None = None
    created_at: datetime | None = None
    owner_issuer: str | None = None

    @property
    def owner(self) -> str:
        """The owner as a page shows it: the e-mail, "(no owner)"; never the subject."""
        return shown_owner(self.owner_subject, self.owner_email)


@dataclass(frozen=True)
class AuditEntry:
    """One change to a saved scenario: who (subject and e-mail; both None for the local user), what, when, and
    the value before (``previous_name`` for a rename or duplicate, ``previous_json`` for an overwrite or delete)."""

    at: datetime
    action: str
    name: str
    actor_subject: str | None
    actor_email: str | None
    previous_name: str | None = None
    previous_json: str | None = None
    previous_owner_email: str | None = None
    actor_issuer: str | None = None

    @property
    def actor(self) -> str:
        """Who, as a page shows it: the e-mail only."""
        return shown_actor(self.actor_subject, self.actor_email)


@dataclass(frozen=True)
class _Row:
    id: int
    scenario_json: str
    owner_subject: str | None
    owner_email: str | None
    owner_issuer: str | None


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

    def __init__(self, url: str | URL, *, legacy_owner_issuer: str | None = None) -> None:
        self.url: URL = parse_url(url)
        self._legacy_issuer = legacy_owner_issuer
        self.display_url = display_url(url)  # as the user wrote it, password hidden
        self.notice: str | None = None
        self._random = random.Random()
        self._has_owners = True  # False: an old store opened read-only, so its owner columns could not be added
        self._missing: set[str] = set()  # "table.column" of ADDED_COLUMNS a read-only old store lacks
        self._has_audit = True  # False: likewise for the audit table
        self._has_outcomes = True  # False: likewise for the plan_outcomes table
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
        timeout = self.url.query.get("timeout")
        if not isinstance(timeout, str):  # absent, or given more than once (a tuple)
            return sqlite_file.BUSY_TIMEOUT_S
        try:
            return float(timeout)
        except ValueError:
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
        """Check that a SQLite file reads as a database, then create the tables if missing and add the owner columns
        to a store made before owners existed (its rows keep no owner)."""
        with self._writer() as connection:
            if self._path is not None:
                sqlite_file.raise_unless_ok(connection.exec_driver_sql("PRAGMA quick_check").fetchall())
            if connection.dialect.name == "postgresql":
                # Two programs creating the table at once would clash in PostgreSQL's catalog even with
                # IF NOT EXISTS; this transaction-scoped lock makes the second wait and then find the table.
                connection.execute(select(func.pg_advisory_xact_lock(CREATE_TABLE_LOCK_ID)))
            # A read-only store still opens for reading: nothing is created unless it is missing.
            if not connection.dialect.has_table(connection, _t.name):
                connection.execute(CreateTable(_t, if_not_exists=True))
            else:
                self._migrate(connection, _t.name)
            if not connection.dialect.has_table(connection, _a.name):
                self._has_audit = self._in_savepoint(connection, lambda: self._create_audit(connection))
            else:
                self._migrate(connection, _a.name)
            if not connection.dialect.has_table(connection, plan_outcomes.plan_outcomes_table.name):
                self._has_outcomes = self._in_savepoint(connection, lambda: plan_outcomes.create(connection))
            else:
                self._migrate(connection, plan_outcomes.plan_outcomes_table.name)

    def _migrate(self, connection: Connection, table: str) -> None:
        """Add the columns of ADDED_COLUMNS a table made before them lacks (NULL in its rows), and give rows with a
        subject but no issuer the operator's legacy issuer, when one is named."""
        present = {column["name"] for column in inspect(connection).get_columns(table)}
        missing = [name for name in ADDED_COLUMNS[table] if name not in present]
        backfill = [name for name in ADDED_COLUMNS[table] if name in LEGACY_ISSUER_OF] if self._legacy_issuer else []

        def change() -> None:
            for name in missing:  # fixed names from ADDED_COLUMNS, never user text
                connection.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {name} TEXT")
            for name in backfill:  # the issuer is a bound parameter
                subject = LEGACY_ISSUER_OF[name]
                connection.execute(sql_text(f"UPDATE {table} SET {name} = :issuer WHERE {subject} IS NOT NULL "
                                        f"AND {name} IS NULL"), {"issuer": self._legacy_issuer})

        if not (missing or backfill) or self._in_savepoint(connection, change):
            return
        self._missing |= {f"{table}.{name}" for name in missing}
        if table == _t.name and "owner_subject" in missing:
            self._has_owners = False

    def _column(self, table: Table, name: str) -> Any:
        """``table``'s column ``name``, or NULL when a read-only old store lacks it."""
        return null() if f"{table.name}.{name}" in self._missing else table.c[name]

    @staticmethod
    def _create_audit(connection: Connection) -> None:
        connection.execute(CreateTable(_a, if_not_exists=True))
        for index in _a.indexes:
            connection.execute(CreateIndex(index, if_not_exists=True))

    @staticmethod
    def _in_savepoint(connection: Connection, work: Callable[[], None]) -> bool:
        """Run schema changes in a savepoint; False (and nothing changed) when the store is read-only."""
        try:
            with connection.begin_nested():
                work()
        except DBAPIError as error:
            if driver_errors.cause(error) != driver_errors.READ_ONLY:
                raise
            return False
        return True

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

    def _audit(self, connection: Connection, actor: Identity, action: str, scenario_id: int, name: str,
               **previous: str | None) -> None:
        connection.execute(plain_insert(_a).values(
            scenario_id=scenario_id, at=_now(), action=action, name=name, actor_subject=actor.subject,
            actor_email=actor.email, actor_issuer=actor.issuer, **previous))

    def _row(self, connection: Connection, name: str, *, lock: bool = False) -> _Row:
        """The row saved as ``name`` (locked for this transaction when ``lock``); ScenarioNotFoundError if none."""
        query = select(_t.c.id, _t.c.scenario_json, *self._owner_columns()).where(_t.c.name == name)
        found = connection.execute(query.with_for_update() if lock else query).first()
        if found is None:
            raise ScenarioNotFoundError(f"no saved scenario is named {name!r}: pick one of the saved names")
        return _Row(found[0], found[1], found[2], found[3], found[4])

    def _owner_columns(self) -> tuple[Any, Any, Any]:
        """The owner's subject, e-mail and issuer columns (NULL where a read-only old store lacks them)."""
        return tuple(self._column(_t, name) for name in ("owner_subject", "owner_email", "owner_issuer"))

    @staticmethod
    def _check_allowed(actor: Identity, row: _Row, name: str, doing: str) -> None:
        if actor.may_change(row.owner_issuer, row.owner_subject):
            return
        if row.owner_subject is None:
            why = "it has no owner, and only an administrator (PLANNER_ADMINS) may change or adopt it"
        elif row.owner_issuer is None:
            why = (f"it was saved by {shown_owner(row.owner_subject, row.owner_email)} before owners were recorded "
                   "with their sign-in provider, so only an administrator (PLANNER_ADMINS) may change or adopt it")
        else:
            why = (f"it belongs to {shown_owner(row.owner_subject, row.owner_email)}, and only its owner or an "
                   "administrator (PLANNER_ADMINS) may rename, overwrite or delete it")
        raise NotAllowedError(f"you may not {doing} {name!r}: {why}; nothing was changed. Duplicate it to change "
                              "a copy of your own")

    def _insert_new(self, connection: Connection, name: str, text: str, actor: Identity) -> int | None:
        """Insert a new row and return its id; None, with nothing written, when the name is taken (or being taken
        by a transaction not yet committed, which this waits for). Never fails on the clash, so the transaction
        goes on (PostgreSQL aborts a transaction whose statement raised)."""
        now = _now()
        make = postgresql_insert if connection.dialect.name == "postgresql" else sqlite_insert
        owner = ({"owner_subject": actor.subject, "owner_email": actor.email, "owner_issuer": actor.issuer}
                 if self._has_owners else {})
        statement = (make(_t).values(name=name, scenario_json=text, created_at=now, updated_at=now, **owner)
                     .on_conflict_do_nothing(index_elements=[_t.c.name]).returning(_t.c.id))
        return connection.execute(statement).scalar_one_or_none()

    def _write(self, connection: Connection, name: str, text: str, actor: Identity, *, overwrite: bool) -> None:
        """Save ``text`` as ``name``: a new row owned by ``actor``, or, with ``overwrite`` and the actor's right to
        change it, the existing row's scenario (its owner kept). Audited either way."""
        for _ in range(driver_errors.MAX_ATTEMPTS):
            scenario_id = self._insert_new(connection, name, text, actor)
            if scenario_id is not None:
                self._audit(connection, actor, "save", scenario_id, name)
                return
            if not overwrite:
                raise NameTakenError(f"a scenario named {name!r} already exists: choose another name or overwrite it")
            try:
                row = self._row(connection, name, lock=True)
            except ScenarioNotFoundError:  # deleted between the two statements: insert again
                continue
            self._check_allowed(actor, row, name, "overwrite")
            connection.execute(update(_t).where(_t.c.id == row.id).values(scenario_json=text, updated_at=_now()))
            self._audit(connection, actor, "overwrite", row.id, name, previous_json=row.scenario_json)
            return
        raise StoreUnavailableError(f"could not save {name!r}: other programs kept saving and deleting it; try again")

    # -- public API ------------------------------------------------------------------------------------

    def save(self, name: str, scenario: Scenario, *, overwrite: bool = False, actor: Identity = LOCAL) -> None:
        """Save under ``name`` as ``actor``'s; an existing name raises NameTakenError unless ``overwrite``, and
        overwriting a scenario the actor may not change raises NotAllowedError."""
        name = validate_name(name)
        text = _payload(name, scenario)
        self._run(lambda connection: self._write(connection, name, text, actor, overwrite=overwrite))

    def import_scenarios(self, scenarios: Iterable[Scenario], *, overwrite: bool = False,
                         actor: Identity = LOCAL) -> list[str]:
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

        def work(connection: Connection) -> None:
            for name, text in rows:
                self._write(connection, name, text, actor, overwrite=overwrite)

        self._run(work)
        return names

    def names(self) -> list[str]:
        """Saved names, ordered case-insensitively."""
        return _sorted(self._run(lambda connection: list(connection.execute(select(_t.c.name)).scalars()), write=False))

    def entries(self) -> list[StoredScenario]:
        """Every saved scenario, ordered by name; one whose JSON no longer validates carries ``error``."""
        query = select(_t.c.name, _t.c.scenario_json, _t.c.updated_at, _t.c.created_at, *self._owner_columns())
        rows: list[Any] = list(self._run(lambda connection: connection.execute(query).all(), write=False))
        found = []
        for name, text, updated_at, created_at, owner_subject, owner_email, owner_issuer in rows:
            about = {"owner_subject": owner_subject, "owner_email": owner_email, "owner_issuer": owner_issuer,
                     "created_at": _utc(created_at)}
            try:
                found.append(StoredScenario(name, scenario_from_json(text), _utc(updated_at), None, **about))
            except ScenarioError as error:
                found.append(StoredScenario(name, None, _utc(updated_at), self._invalid(name, error), **about))
        return sorted(found, key=lambda entry: (entry.name.casefold(), entry.name))

    def load(self, name: str) -> Scenario:
        """The scenario saved as ``name``; ScenarioNotFoundError, or StoreError if it no longer validates."""
        name = validate_name(name)
        text = self._run(lambda connection: self._row(connection, name).scenario_json, write=False)
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

    def rename(self, old: str, new: str, *, actor: Identity = LOCAL) -> None:
        """Give a saved scenario a new name (its ``name`` field follows); NotAllowedError unless ``actor`` may."""
        old, new = validate_name(old), validate_name(new)

        def work(connection: Connection) -> None:
            row = self._row(connection, old, lock=True)
            self._check_allowed(actor, row, old, "rename")
            if new == old:
                return
            try:
                values = {"name": new, "scenario_json": _renamed(row.scenario_json, new), "updated_at": _now()}
                connection.execute(update(_t).where(_t.c.id == row.id).values(**values))
            except IntegrityError:
                raise NameTakenError(
                    f"cannot rename {old!r}: a scenario named {new!r} already exists; choose another name"
                ) from None
            self._audit(connection, actor, "rename", row.id, new, previous_name=old)

        self._run(work)

    def duplicate(self, name: str, new_name: str, *, actor: Identity = LOCAL) -> None:
        """Save a copy of ``name`` as ``new_name``, owned by ``actor`` (anyone may copy any scenario)."""
        name, new_name = validate_name(name), validate_name(new_name)

        def work(connection: Connection) -> None:
            text = _renamed(self._row(connection, name).scenario_json, new_name)
            scenario_id = self._insert_new(connection, new_name, text, actor)
            if scenario_id is None:
                raise NameTakenError(
                    f"a scenario named {new_name!r} already exists: choose another name or overwrite it")
            self._audit(connection, actor, "duplicate", scenario_id, new_name, previous_name=name)

        self._run(work)

    def delete(self, name: str, *, actor: Identity = LOCAL) -> None:
        """Remove a saved scenario; ScenarioNotFoundError if there is none of that name, NotAllowedError unless
        ``actor`` may change it."""
        name = validate_name(name)

        def work(connection: Connection) -> None:
            try:
                row = self._row(connection, name, lock=True)
            except ScenarioNotFoundError:
                raise ScenarioNotFoundError(f"no saved scenario is named {name!r}: nothing was deleted") from None
            self._check_allowed(actor, row, name, "delete")
            connection.execute(delete(_t).where(_t.c.id == row.id))
            self._audit(connection, actor, "delete", row.id, name, previous_json=row.scenario_json)

        self._run(work)

    def adopt(self, name: str, *, actor: Identity) -> None:
        """Make ``actor`` (an administrator) the owner of a scenario; NotAllowedError for anyone else."""
        name = validate_name(name)
        if not actor.admin or actor.anonymous:
            raise NotAllowedError(f"you may not adopt {name!r}: only an administrator (PLANNER_ADMINS) who is "
                                  "signed in may take over a scenario")

        def work(connection: Connection) -> None:
            row = self._row(connection, name, lock=True)
            if actor.owns(row.owner_issuer, row.owner_subject):
                return
            values = {"owner_subject": actor.subject, "owner_email": actor.email, "owner_issuer": actor.issuer,
                      "updated_at": _now()}
            connection.execute(update(_t).where(_t.c.id == row.id).values(**values))
            self._audit(connection, actor, "adopt", row.id, name, previous_owner_email=(
                shown_owner(row.owner_subject, row.owner_email) if row.owner_subject is not None else None))

        self._run(work)

    def history(self, name: str) -> list[AuditEntry]:
        """The changes to the scenario now saved as ``name``, oldest first (from its last save on; a name deleted
        and saved again starts afresh)."""
        name = validate_name(name)
        if not self._has_audit:
            return []

        def work(connection: Connection) -> list[Any]:
            row = self._row(connection, name)
            query = select(*self._audit_columns())
            return list(connection.execute(query.where(_a.c.scenario_id == row.id).order_by(_a.c.id)).all())

        rows = self._run(work, write=False)
        # A SQLite row id can be reused after a delete: what an earlier scenario of that id did ends at its delete.
        last_delete = max((index for index, found in enumerate(rows) if found.action == "delete"), default=-1)
        return [AuditEntry(_utc(row[0]), *row[1:]) for row in rows[last_delete + 1:]]

    def _audit_columns(self) -> list[Any]:
        """The audit table's columns in AuditEntry's order."""
        return [_a.c.at, _a.c.action, _a.c.name, _a.c.actor_subject, _a.c.actor_email, _a.c.previous_name,
                _a.c.previous_json, _a.c.previous_owner_email, self._column(_a, "actor_issuer")]

    def audit_trail(self) -> list[AuditEntry]:
        """Every audited change in the store, oldest first."""
        if not self._has_audit:
            return []
        query = select(*self._audit_columns()).order_by(_a.c.id)
        rows: list[Any] = list(self._run(lambda connection: connection.execute(query).all(), write=False))
        return [AuditEntry(_utc(row[0]), *row[1:]) for row in rows]

    def record_outcome(self, outcome: PlanOutcome, *, actor: Identity) -> None:
        """Keep how the saved plan ``outcome.scenario_name`` compared with its actuals over the outcome's period,
        recorded by ``actor`` now (UTC); a record of the same plan and period is replaced. ScenarioNotFoundError
        unless the plan is saved in this store (anyone who may read it may record it)."""
        if not isinstance(outcome, PlanOutcome):
            raise TypeError(f"expected a PlanOutcome, got {type(outcome).__name__}")
        if not isinstance(actor, Identity):
            raise TypeError(f"expected the acting Identity, got {type(actor).__name__}")
        name = validate_name(outcome.scenario_name)
        if not self._has_outcomes:
            raise StoreReadOnlyError(f"the scenario store at {self.display_url} is read-only and has no plan_outcomes "
                                     "table: nothing was kept; ask its owner for write access")

        def work(connection: Connection) -> None:
            try:
                row = self._row(connection, name)
            except ScenarioNotFoundError:
                raise ScenarioNotFoundError(f"no saved scenario is named {name!r}: only a plan saved in the store "
                                            "can be kept; save it on the Compare page first") from None
            plan_outcomes.upsert(connection, outcome, name, row.id, actor, _now())

        self._run(work)

    def outcomes(self, limit: int = plan_outcomes.DEFAULT_OUTCOMES) -> list[plan_outcomes.RecordedOutcome]:
        """The ``limit`` (1 to ``plan_outcomes.MAX_OUTCOMES``) kept outcomes of the latest periods, newest first."""
        limit = plan_outcomes.checked_limit(limit)
        if not self._has_outcomes:
            return []
        issuer = self._column(plan_outcomes.plan_outcomes_table, "recorded_by_issuer")
        return self._run(lambda connection: plan_outcomes.latest(connection, limit, issuer), write=False)

    def remove_outcome(self, outcome_id: int, *, actor: Identity) -> None:
        """Remove a kept outcome (its ``RecordedOutcome.outcome_id``): allowed to who kept it and to an
        administrator (as ``Identity.may_change`` says of a scenario's owner), audited as "remove outcome" with the
        outcome's figures, in one transaction. ScenarioNotFoundError when there is none, NotAllowedError for anyone
        else (nothing removed)."""
        if isinstance(outcome_id, bool) or not isinstance(outcome_id, int):
            raise TypeError(f"expected an outcome id, got {type(outcome_id).__name__}")
        if not isinstance(actor, Identity):
            raise TypeError(f"expected the acting Identity, got {type(actor).__name__}")
        if not self._has_outcomes:
            raise ScenarioNotFoundError("this store keeps no plan outcomes: nothing was removed")

        def work(connection: Connection) -> None:
            kept = plan_outcomes.removal(connection, outcome_id)
            if kept is None:
                raise ScenarioNotFoundError("no such kept comparison (removed meanwhile?): nothing was removed")
            name = kept.outcome.scenario_name
            if not actor.may_change(kept.recorded_by_issuer, kept.recorded_by_subject):
                raise NotAllowedError(f"you may not remove the comparison of {name!r}: only who kept it "
                                      f"({kept.recorded_by}) or an administrator (PLANNER_ADMINS) may; nothing was "
                                      "removed")
            plan_outcomes.remove(connection, outcome_id)
            if self._has_audit:
                self._audit(connection, actor, "remove outcome", kept.scenario_id or 0, name,
                            previous_json=plan_outcomes.described(kept.outcome))

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


__all__ = ["AuditEntry", "ScenarioStore", "StoredScenario", "audit_table", "scenarios_table"]
