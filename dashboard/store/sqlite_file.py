"""SQLite specifics: connection settings for concurrent writers, and moving a damaged store file aside.

Writers use BEGIN IMMEDIATE, so two programs saving at once queue on SQLite's write lock (waiting up to
BUSY_TIMEOUT_S) instead of one failing half-way; WAL lets readers go on while a writer works. A file that
is not a readable database is never overwritten: it is renamed to ``<file>.corrupt-YYYYmmddTHHMMSSZ``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

BUSY_TIMEOUT_S = 30
WRITE_OPTION = "planner_write"  # execution option marking a connection whose transaction will write
# sqlite3 result codes for "not a database" and "database disk image is malformed".
_CORRUPT_CODES = {sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT}
_SIDECARS = ("-wal", "-shm", "-journal")


def configure(engine: Engine, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
    """Take over BEGIN from the sqlite3 driver: BEGIN IMMEDIATE for writers, plain BEGIN for readers; WAL."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, connection_record) -> None:
        dbapi_connection.isolation_level = None  # the driver must not emit BEGIN itself; _on_begin does
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            try:
                cursor.execute("PRAGMA journal_mode = WAL")
            except sqlite3.OperationalError as error:
                if error.sqlite_errorcode in _CORRUPT_CODES:
                    raise
                # Another program is switching the file to WAL right now; the rollback journal is correct too.
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:
        immediate = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def file_path(database: str | None) -> Path | None:
    """The store file of a sqlite URL's database part; None for an in-memory database."""
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


def is_corruption(error: BaseException) -> bool:
    """Whether a database error says the file is not (or no longer) a readable SQLite database."""
    orig = error.orig if isinstance(error, DBAPIError) else error
    return getattr(orig, "sqlite_errorcode", None) in _CORRUPT_CODES


def raise_unless_ok(quick_check_rows: Sequence[Sequence[object]]) -> None:
    """Raise a corruption error (sqlite3.DatabaseError, code SQLITE_CORRUPT) unless quick_check said ok."""
    if [tuple(row) for row in quick_check_rows] != [("ok",)]:
        first = quick_check_rows[0][0] if quick_check_rows else "no answer"
        error = sqlite3.DatabaseError(f"PRAGMA quick_check: {first}")
        error.sqlite_errorcode = sqlite3.SQLITE_CORRUPT
        raise error


def check_readable(path: Path, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
    """Raise sqlite3.DatabaseError if the file is not a readable database (a quick, read-only check)."""
    connection = sqlite3.connect(path, timeout=busy_timeout_s)
    try:
        raise_unless_ok(connection.execute("PRAGMA quick_check").fetchall())
    finally:
        connection.close()


@contextlib.contextmanager
def recovery_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file's folder so that only one program at a time moves it aside.

    The folder itself is locked (flock on its descriptor), so no lock file is left behind.
    """
    try:
        import fcntl
    except ImportError:  # not POSIX: no cross-process lock; recovery still re-checks the file before moving it
        yield
        return
    descriptor = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


def move_aside(path: Path, now: datetime | None = None) -> Path:
    """Rename the file (and its -wal/-shm/-journal companions) to a new ``.corrupt-<UTC stamp>`` name.

    Never replaces an existing file: a taken name gets ``-2``, ``-3``… appended.
    """
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    base = f"{path}.corrupt-{stamp}"
    for attempt in range(1, 1000):
        backup = Path(base if attempt == 1 else f"{base}-{attempt}")
        if any(Path(f"{backup}{suffix}").exists() for suffix in ("", *_SIDECARS)):
            continue
        try:
            _rename_no_replace(path, backup)
        except FileExistsError:
            continue
        for suffix in _SIDECARS:
            companion = Path(f"{path}{suffix}")
            if companion.exists():
                _rename_no_replace(companion, Path(f"{backup}{suffix}"))
        return backup
    raise FileExistsError(f"no free backup name next to {path}")


def _rename_no_replace(source: Path, target: Path) -> None:
    """Rename, failing with FileExistsError instead of replacing the target (hard link, then unlink)."""
    try:
        os.link(source, target)
    except FileExistsError:
        raise
    except OSError:  # the file system has no hard links: check, then rename
        if target.exists():
            raise FileExistsError(target) from None
        os.rename(source, target)
        return
    os.unlink(source)
