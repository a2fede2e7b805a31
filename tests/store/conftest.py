"""Fixtures for the store tests: a `store_url`/`store` pair over SQLite and a real, throwaway PostgreSQL server.

The PostgreSQL server is started once per session with initdb + pg_ctl in a temporary folder (as the
`postgres` user when the tests run as root) and stopped at the end. Without the binaries the PostgreSQL
cases are skipped with a loud reason saying how to install them; they are never skipped silently.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from dashboard.store.scenario_store import ScenarioStore

PG_DATABASE = "planner_test"
INSTALL_HINT = "install PostgreSQL's server binaries with: apt-get install postgresql"


def _postgres_bin_dir() -> Path | None:
    """The folder holding initdb and pg_ctl: on PATH, else the newest /usr/lib/postgresql/*/bin."""
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb and pg_ctl and Path(initdb).parent == Path(pg_ctl).parent:
        return Path(initdb).parent
    def version(folder: str) -> int:
        number = Path(folder).parent.name
        return int(number) if number.isdigit() else 0

    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _skip_loudly(reason: str) -> None:
    pytest.skip(f"!!! PostgreSQL store tests SKIPPED: {reason}; {INSTALL_HINT} !!!")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """postgresql://postgres@127.0.0.1:PORT/planner_test on a server started for this test session."""
    bin_dir = _postgres_bin_dir()
    if bin_dir is None:
        _skip_loudly("initdb/pg_ctl not found on PATH or in /usr/lib/postgresql/*/bin")
    as_postgres: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="planner-pg-"))
    if os.geteuid() == 0:  # the server refuses to run as root
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(base)
            _skip_loudly("running as root and there is no 'postgres' user to run the server as")
        os.chown(base, account.pw_uid, account.pw_gid)
        as_postgres = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    data, log = base / "data", base / "log"
    pg_ctl = [*as_postgres, str(bin_dir / "pg_ctl"), "-D", str(data)]
    try:
        subprocess.run(
            [*as_postgres, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
            check=True, capture_output=True, text=True, timeout=120,
        )
        options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            [*pg_ctl, "-l", str(log), "-o", options, "-w", "-t", "60", "start"],
            check=True, capture_output=True, text=True, timeout=120,
        )
    except subprocess.CalledProcessError as error:
        server_log = log.read_text(errors="replace") if log.exists() else ""
        shutil.rmtree(base, ignore_errors=True)
        raise RuntimeError(f"could not start PostgreSQL: {error.stderr}\n{server_log}") from error
    try:
        admin = create_engine(f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres", isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f"CREATE DATABASE {PG_DATABASE}"))
        admin.dispose()
        yield f"postgresql://postgres@127.0.0.1:{port}/{PG_DATABASE}"
    finally:
        subprocess.run([*pg_ctl, "stop", "-m", "fast"], capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)


def _drop_table(url: str) -> None:
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as connection:
        connection.execute(text("DROP TABLE IF EXISTS scenarios"))
        connection.execute(text("DROP TABLE IF EXISTS scenario_audit"))
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path) -> str:
    """A fresh, empty store location per test: a new SQLite file, or the test server with the table dropped."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'scenarios.db'}"
    url = request.getfixturevalue("postgres_url")
    _drop_table(url)
    return url


@pytest.fixture
def store(store_url) -> Iterator[ScenarioStore]:
    with ScenarioStore(store_url) as opened:
        yield opened
