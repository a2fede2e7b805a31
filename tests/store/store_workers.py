"""Work done in child processes by the store tests (multiprocessing 'spawn' imports this module by name)."""

from __future__ import annotations

from dashboard.core.scenario import Scenario
from dashboard.identity import Identity
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


def save_as(url: str, subject: str, count: int, start, results) -> None:
    """As the user `subject`, save `subject 0..count-1`, overwrite each once and try to delete the other user's
    `other 0..`; report (subject, 'ok' or the error text, refusals seen)."""
    from dashboard.store.errors import NotAllowedError, ScenarioNotFoundError

    actor = Identity(subject, f"{subject}@example.org", issuer="https://sso.example.org")
    other = "b" if subject == "a" else "a"
    refused = 0
    try:
        with ScenarioStore(url) as store:
            start.wait(60)
            for number in range(count):
                store.save(f"{subject} {number}", Scenario(gpu_count=number + 1), actor=actor)
                store.save(f"{subject} {number}", Scenario(gpu_count=number + 100), overwrite=True, actor=actor)
                try:
                    store.delete(f"{other} {number}", actor=actor)
                except NotAllowedError:
                    refused += 1
                except ScenarioNotFoundError:  # not saved yet by the other process
                    pass
        results.put((subject, "ok", refused))
    except Exception as error:  # reported to the parent test, which fails with it
        results.put((subject, f"{type(error).__name__}: {error}", refused))


def churn(url: str, worker: int, shared: list[str], seconds: float, start, results) -> None:
    """For `seconds`, mix the writes a team makes at once; report (worker, saved names, operations, errors).

    Each round replaces the shared names in an order of its own (overwrite import: rows locked in different
    orders, PostgreSQL's classic deadlock), saves a new name of its own, renames it, duplicates it and deletes
    the duplicate. Every name this worker saved and did not delete must be in the store at the end.
    """
    import random
    import time

    saved: list[str] = []
    errors: list[str] = []
    operations = 0
    order = random.Random(worker)
    try:
        with ScenarioStore(url) as store:
            start.wait(60)
            deadline = time.monotonic() + seconds
            round_number = 0
            while time.monotonic() < deadline:
                round_number += 1
                names = order.sample(shared, len(shared))
                batch = [Scenario(name=name, gpu_count=worker * 1000 + round_number) for name in names]
                own = f"w{worker} r{round_number}"
                steps = (
                    (store.import_scenarios, (batch,), {"overwrite": True}),
                    (store.save, (own, Scenario(gpu_count=round_number)), {}),
                    (store.rename, (own, f"{own} kept"), {}),
                    (store.duplicate, (f"{own} kept", f"{own} copy"), {}),
                    (store.delete, (f"{own} copy",), {}),
                )
                for operation, args, options in steps:
                    operations += 1
                    try:
                        operation(*args, **options)
                    except Exception as error:  # reported to the parent test, which fails with it
                        errors.append(f"{type(error).__name__}: {error}")
                saved.append(f"{own} kept")
    except Exception as error:
        errors.append(f"{type(error).__name__}: {error}")
    results.put((worker, saved, operations, errors))
