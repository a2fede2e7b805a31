"""Where the store lives: the default URL, URL normalisation and a password-free form for messages."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from dashboard.store.errors import StoreUnavailableError

STORE_URL_ENV = "PLANNER_STORE_URL"
DATA_DIR_NAME = "pretraining-planner"
STORE_FILE_NAME = "scenarios.db"
_POSTGRES_SCHEMES = {"postgresql", "postgres"}


def data_dir() -> Path:
    """$XDG_DATA_HOME/pretraining-planner, else ~/.local/share/pretraining-planner; created if missing."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    path = Path(base) / DATA_DIR_NAME
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_store_url() -> str:
    """$PLANNER_STORE_URL if set, else a SQLite file in the planner's data directory."""
    configured = os.environ.get(STORE_URL_ENV, "").strip()
    if configured:
        return configured
    return f"sqlite:///{data_dir() / STORE_FILE_NAME}"


def parse_url(url: str | URL) -> URL:
    """The URL as SQLAlchemy's URL, with postgresql:// (and postgres://) routed to psycopg 3."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise StoreUnavailableError(
            "the scenario store URL is not a database URL: use sqlite:///PATH or postgresql://USER@HOST:PORT/DB"
        ) from None
    if parsed.drivername in _POSTGRES_SCHEMES:
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def display_url(url: str | URL) -> str:
    """The URL for messages, password replaced by ***."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return "(unparseable URL)"


def described(url: str | URL) -> str:
    """Where the store is, in words a page may show any user: its kind, never a file path, host or user name."""
    try:
        scheme = make_url(url).drivername.split("+")[0]
    except (ArgumentError, ValueError):
        return "a store whose address cannot be read"
    if scheme == "sqlite":
        return "a SQLite file on this server"
    if scheme in _POSTGRES_SCHEMES:
        return "the shared PostgreSQL database"
    return f"a {scheme} database"
