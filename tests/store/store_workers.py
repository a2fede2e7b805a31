"""Work done in child processes by the store tests (multiprocessing 'spawn' imports this module by name)."""

from __future__ import annotations

from dashboard.core.scenario import Scenario
from dashboard.store.scenario_store import ScenarioStore


def save_names(url: str, prefix: str, count: int, start, results) -> None:
    """Open the store, wait for the start signal, save `prefix 0..count-1`; report 'ok' or the error text."""
    try:
        with ScenarioStore(url) as store:
            start.wait(60)
            for number in range(count):
                store.save(f"{prefix} {number}", Scenario(gpu_count=number + 1))
        results.put((prefix, "ok"))
    except Exception as error:  # reported to the parent test, which fails with it
        results.put((prefix, f"{type(error).__name__}: {error}"))
