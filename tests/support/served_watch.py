"""A watchdog for a served app under attack: it kills the server past a resident-memory bound or a deadline, so a
regression fails the test instead of taking the machine down."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from bench.served import memory_mb


@contextmanager
def watched(process: subprocess.Popen, kill_mb: float, deadline_s: float) -> Iterator[list[str]]:
    """Watch ``process`` while the block runs; yields the list that says why it was killed (empty if it was not)."""
    stop, killed = threading.Event(), []

    def watchdog() -> None:
        deadline = time.monotonic() + deadline_s
        while not stop.wait(0.05):
            try:
                rss = memory_mb(process.pid)["VmRSS"]
            except (FileNotFoundError, KeyError):
                return
            if rss > kill_mb or time.monotonic() > deadline:
                killed.append(f"server killed: {rss:,.0f} MB resident, {deadline_s} s deadline")
                process.kill()
                return

    guard = threading.Thread(target=watchdog, daemon=True)
    guard.start()
    try:
        yield killed
    finally:
        stop.set()
        guard.join()
