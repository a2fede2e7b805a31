"""What a database driver's error means for the user: retry it (deadlock, serialisation failure), or say why not.

PostgreSQL reports a deadlock or a serialisation failure when two writers cross; the transaction did nothing and
succeeds when run again, so it is retried a bounded number of times with jittered exponential backoff. A store
that is read-only or out of disk space is named as such, so the message says what to do.
"""

from __future__ import annotations

import errno
import random
import sqlite3

from sqlalchemy.exc import DBAPIError

RETRYABLE_SQLSTATES = {"40001": "serialization failure", "40P01": "deadlock detected"}
READ_ONLY_SQLSTATES = {"25006", "42501"}  # read_only_sql_transaction, insufficient_privilege
DISK_FULL_SQLSTATES = {"53100"}  # disk_full
MAX_ATTEMPTS = 10
BACKOFF_BASE_S = 0.01
BACKOFF_CAP_S = 1.0
READ_ONLY = "read-only"
DISK_FULL = "disk full"


def _original(error: BaseException | None) -> BaseException | None:
    return error.orig if isinstance(error, DBAPIError) and error.orig is not None else error


def is_retryable(error: BaseException | None) -> bool:
    """Whether the transaction failed only because another one crossed it (PostgreSQL deadlock/serialisation)."""
    return getattr(_original(error), "sqlstate", None) in RETRYABLE_SQLSTATES


def cause(error: BaseException | None) -> str | None:
    """READ_ONLY or DISK_FULL when that is why the database refused, else None."""
    orig = _original(error)
    state = getattr(orig, "sqlstate", None)
    sqlite_code = getattr(orig, "sqlite_errorcode", None)
    primary = sqlite_code & 0xFF if isinstance(sqlite_code, int) else None  # extended codes keep it in the low byte
    os_code = orig.errno if isinstance(orig, OSError) else None
    if state in READ_ONLY_SQLSTATES or primary == sqlite3.SQLITE_READONLY or os_code in (errno.EROFS, errno.EACCES):
        return READ_ONLY
    if state in DISK_FULL_SQLSTATES or primary == sqlite3.SQLITE_FULL or os_code in (errno.ENOSPC, errno.EDQUOT):
        return DISK_FULL
    return None


def backoff_s(attempt: int, rng: random.Random) -> float:
    """Seconds to wait before attempt ``attempt + 1``: full jitter over an exponential ceiling (capped)."""
    return rng.uniform(0.0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**attempt))
