"""Serve the app with a given command on a free port of 127.0.0.1 for the browser tests, and stop it after."""

import contextlib
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

START_TIMEOUT_S = 60


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


@contextlib.contextmanager
def served(command: list[str], port: int, cwd: Path, env: dict[str, str]) -> Iterator[str]:
    """Run `command` (a Streamlit server on `port`), yield its base URL once it answers 'ok', stop it after."""
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as stderr:
        server = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _healthy(url):
            exit_code = server.poll()
            if exit_code is not None or time.monotonic() > deadline:
                server.kill()
                server.wait()
                stderr.seek(0)
                why = f"timed out after {START_TIMEOUT_S} s" if exit_code is None else f"exited with code {exit_code}"
                pytest.fail(f"Streamlit did not answer 'ok' on {url}/_stcore/health: {why}.\n"
                            f"Command: {' '.join(command)}\nstderr:\n{stderr.read().decode(errors='replace')}")
            time.sleep(0.25)
        try:
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
