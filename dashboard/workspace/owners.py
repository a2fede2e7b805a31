"""Who owns a workspace dataset, who may replace or delete it, and the audit trail of those changes.

A dataset's owner is who first imported it (OIDC issuer, subject and e-mail; none for the anonymous local user: the
app with sign-in off, and the command line), kept in each version's ``dataset.json`` with who imported that version
(``datasets.Metadata``). Only its owner and the administrators may replace or delete it; a dataset without an owner
(imported without sign-in, or before owners were recorded) is changed by the local user and by administrators
(`dashboard.identity`).

Every import, replacement and deletion, and every refused replacement or deletion, appends one JSON line to
``<workspace>/.audit.jsonl``: when, what, the dataset, who (issuer, subject, e-mail), its owner's e-mail and the
version folders before and after. The trail lives beside the data it describes, written by the code that changes
it, for the page and the command line alike (the workspace layer does not reach the scenario store, and the command
line has none). Checks, version switches and audit lines of one workspace are serialised by an advisory lock on
``<workspace>/.owners.lock`` (``flock``: between threads and processes). Reads of the trail are bounded
(``AUDIT_READ_BYTES``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from dashboard.identity import Identity, shown_actor, shown_owner
from dashboard.workspace import datasets
from dashboard.workspace.datasets import DatasetError, Metadata

AUDIT = ".audit.jsonl"
LOCK = ".owners.lock"
AUDIT_READ_BYTES = 1_000_000  # the trail's tail read at most (about 3,000 lines)
ACTIONS = ("import", "replace", "append", "delete", "refused replace", "refused delete")
_held = threading.local()  # .depth: how many ``locked`` blocks this thread is inside


class NotOwnerError(DatasetError):
    """The actor may not replace or delete the dataset; nothing was changed (and the refusal is audited)."""


@dataclass(frozen=True)
class AuditLine:
    """One change, or refused change, to a dataset: who by issuer, subject and e-mail (all None: the local user)."""

    at: str  # ISO 8601, UTC
    action: str  # one of ACTIONS
    dataset: str
    actor_issuer: str | None
    actor_subject: str | None
    actor_email: str | None
    owner_email: str | None  # the dataset's owner when it happened ("(no owner)" when it had none)
    build: str | None = None  # the version folder current afterwards (None: deleted or refused)
    previous_build: str | None = None  # the version folder current before (None: a new dataset)

    @property
    def actor(self) -> str:
        """Who, as a page shows it: the e-mail only, never the subject."""
        return shown_actor(self.actor_subject, self.actor_email)


LINE_FIELDS = tuple(AuditLine.__dataclass_fields__)
REQUIRED_FIELDS = ("at", "action", "dataset")


def owner_of(info: Metadata) -> str:
    """The dataset's owner as pages show it: the e-mail only, never the subject."""
    return shown_owner(info.owner_subject, info.owner_email)


def may_change(info: Metadata, actor: Identity) -> bool:
    """Whether ``actor`` may replace or delete the dataset ``info`` describes."""
    return actor.may_change(info.owner_issuer, info.owner_subject)


@contextlib.contextmanager
def locked() -> Iterator[None]:
    """Hold the workspace's owners lock (blocking): one check-and-change at a time, across threads and processes.
    A thread already holding it goes on (a change made inside another's switch does not wait for itself)."""
    if getattr(_held, "depth", 0):
        _held.depth += 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    base = datasets.root()
    base.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(base / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        _held.depth = 1
        yield
    finally:
        _held.depth = 0
        os.close(descriptor)  # releases the lock


def record(action: str, name: str, actor: Identity, owner_email: str, *, build: str | None = None,
           previous_build: str | None = None) -> None:
    """Append one audit line (call it holding ``locked``); ``owner_email``: the dataset's owner as pages show it."""
    if action not in ACTIONS:
        raise ValueError(f"unknown workspace audit action {action!r}")
    line = AuditLine(at=datetime.now(UTC).isoformat(timespec="milliseconds"), action=action, dataset=name,
                     actor_issuer=actor.issuer, actor_subject=actor.subject, actor_email=actor.email,
                     owner_email=owner_email, build=build, previous_build=previous_build)
    text = json.dumps(asdict(line), ensure_ascii=True) + "\n"
    descriptor = os.open(datasets.root() / AUDIT, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, text.encode("ascii"))
    finally:
        os.close(descriptor)


def refuse_unless_allowed(name: str, actor: Identity, doing: str) -> Metadata | None:
    """The current metadata of dataset ``name`` (None when it does not exist, or is too damaged to name its owner)
    when ``actor`` may ``doing`` it ("replace" or "delete"); otherwise the refusal is audited and NotOwnerError
    raised, nothing changed. A damaged dataset's owner is unknown: only the local user and administrators may change
    it. Call it holding ``locked`` (it takes no lock itself)."""
    if not datasets.exists(name):
        return None
    try:
        info = datasets.metadata(name)
    except DatasetError:
        if actor.admin or actor.anonymous:
            return None
        record(f"refused {doing}", name, actor, "(unknown: its dataset.json cannot be read)")
        raise NotOwnerError(f"You may not {doing} the dataset {name}: its metadata cannot be read, so its owner is "
                            f"unknown, and only an administrator (PLANNER_ADMINS) may {doing} it; nothing was "
                            "changed.") from None
    if may_change(info, actor):
        return info
    record(f"refused {doing}", name, actor, owner_of(info), previous_build=info.build or None)
    if info.owner_subject is None:
        why = "it has no owner (it was imported without sign-in), and only an administrator (PLANNER_ADMINS) may"
    else:
        why = f"it belongs to {owner_of(info)}, and only its owner or an administrator (PLANNER_ADMINS) may"
    raise NotOwnerError(f"You may not {doing} the dataset {name}: {why} {doing} it; nothing was changed. Import "
                        "under another name to keep a dataset of your own.")


def audit(name: str | None = None, limit: int = 100) -> list[AuditLine]:
    """The latest ``limit`` audit lines (of dataset ``name`` only, when given), oldest first, read from at most the
    trail's last ``AUDIT_READ_BYTES``; lines that do not parse are skipped."""
    path = datasets.root() / AUDIT
    try:
        with path.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(0, size - AUDIT_READ_BYTES))
            data = file.read(AUDIT_READ_BYTES)
    except FileNotFoundError:
        return []
    if size > AUDIT_READ_BYTES:
        data = data.split(b"\n", 1)[-1]  # the first line read may be a partial one
    found: list[AuditLine] = []
    for raw in data.splitlines():
        try:
            fields = json.loads(raw)
        except ValueError:
            continue
        if (not isinstance(fields, dict) or not all(isinstance(fields.get(key), str) for key in REQUIRED_FIELDS)
                or not all(isinstance(fields.get(key), str | None) for key in LINE_FIELDS)):
            continue
        values: dict[str, Any] = {key: fields.get(key) for key in LINE_FIELDS}  # each checked above
        line = AuditLine(**values)
        if name is None or line.dataset == name:
            found.append(line)
    return found[-limit:]
