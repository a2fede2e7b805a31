"""One `streamlit run` server on a free port of 127.0.0.1, stopped afterwards: the helper of the benchmarks and of
the browser tests (`tests/support/served_app.py` re-exports it). No pytest here."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 90
STOP_TIMEOUT_S = 10


class ServerDidNotStart(RuntimeError):
    """The server exited, or did not answer 'ok' on its health URL in time; the message carries its stderr."""


class Server(NamedTuple):
    url: str
    process: subprocess.Popen


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().decode().strip() == "ok"
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def running(command: list[str], port: int, cwd: Path, env: dict[str, str]) -> Iterator[Server]:
    """Run `command` (a Streamlit server on `port`) from `cwd`; yield it once it answers 'ok'; stop it after."""
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not _healthy(url):
                exit_code = process.poll()
                if exit_code is not None or time.monotonic() > deadline:
                    stderr.seek(0)
                    why = f"timed out after {START_TIMEOUT_S} s" if exit_code is None else f"exited with {exit_code}"
                    raise ServerDidNotStart(f"Streamlit did not answer 'ok' on {url}/_stcore/health: {why}.\n"
                                            f"Command: {' '.join(command)}\n"
                                            f"stderr:\n{stderr.read().decode(errors='replace')}")
                time.sleep(0.25)
            yield Server(url, process)
        finally:
            process.terminate()
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def served(command: list[str], port: int, cwd: Path, env: dict[str, str]) -> Iterator[str]:
    """`running`, yielding the server's base URL (the browser tests' form)."""
    with running(command, port, cwd, env) as server:
        yield server.url


def streamlit_command(app: Path | str, port: int, python: Path | str = sys.executable) -> list[str]:
    return [str(python), "-m", "streamlit", "run", str(app), "--server.headless", "true",
            "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"]


@contextmanager
def serve(app: Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> Iterator[Server]:
    """`streamlit run app` from `cwd` (its `.streamlit` settings apply) with an empty scenario store of its own,
    this process's environment plus `env`."""
    port = free_port()
    with tempfile.TemporaryDirectory() as store:
        environment = {**os.environ, "PLANNER_STORE_URL": f"sqlite:///{Path(store) / 'scenarios.db'}", **(env or {})}
        with running(streamlit_command(app, port), port, cwd, environment) as server:
            yield server


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of a process, in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) * 1024 / 1e6
    return fields
