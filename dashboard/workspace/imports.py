"""Importing a file into a workspace dataset: in memory when it is small, streamed in bounded batches when large.

A file under ``STREAM_MIN_BYTES`` goes through today's in-memory import (``ingest.import_path``), so small
exports keep its speed; a larger one through ``ingest.stream``, whose memory does not grow with the file.
A file the streamed reader cannot read row for row (blank lines, cells with line breaks, a zip, another
encoding) falls back to the in-memory import when it is within ``PLANNER_MAX_IMPORT_MB``, and is refused with
the reason otherwise. The dataset is built in a new version folder (``<workspace>/.versions``) and its link is
switched to it in one rename when it is complete (``datasets``), so readers see the old version or the new one,
and a failed import (a full disk, a bad file, a closed writer that raises) deletes its build folder in every path
and leaves the workspace as it was.

Owners. Every import acts as an ``Identity`` (the anonymous local user by default: the command line, and the app with
sign-in off). A replacement or deletion is refused, audited and leaves the dataset as it was unless the actor may
change it (`dashboard.workspace.owners`): checked before the file is read, and again under the workspace's owners
lock at the switch. A replacement keeps the dataset's owner and records who imported the new version.
"""

from __future__ import annotations

import errno
import os
import shutil
import uuid
from contextlib import suppress
from dataclasses import replace as replaced
from datetime import UTC, datetime
from pathlib import Path

from ibis.backends import BaseBackend

from dashboard import settings
from dashboard.identity import LOCAL, Identity
from dashboard.ingest import import_path, plausible
from dashboard.ingest.load import DEFAULT_OPTIONS, Progress
from dashboard.ingest.schema import ImportReport, ReadOptions, UnreadableFile
from dashboard.ingest.stream import NotStreamable, stream_import
from dashboard.query import engine
from dashboard.workspace import datasets, job_rollup, owners, rollups, sorting
from dashboard.workspace.datasets import (
    METADATA,
    SUPERSEDED,
    USAGE,
    DatasetError,
    DatasetExists,
    Metadata,
    checked_name,
    folder,
    root,
    write_metadata,
)
from dashboard.workspace.writer import MonthWriter

STREAM_MIN_BYTES = 64_000_000


def _source_bytes(source: Path) -> int:
    if source.is_dir():
        return sum(p.stat().st_size for p in source.rglob("*.parquet") if p.is_file())
    return source.stat().st_size


def _in_memory(source: Path, writer: MonthWriter, format: str | None, options: ReadOptions, batch_rows: int,
               progress: Progress | None) -> ImportReport:
    usage, report = import_path(source, format=format, options=options, progress=progress)
    for start in range(0, len(usage), batch_rows):
        writer.write(usage.iloc[start:start + batch_rows])
    return report


def _metadata(name: str, source: Path, size: int, writer: MonthWriter, report: ImportReport,
              streamed: bool, build: str, actor: Identity, imported_at: str, appended_to: Metadata | None,
              built: list[dict]) -> Metadata:
    usage = writer.folder
    months = sorted(p.name.split("=", 1)[1] for p in usage.glob("*=*") if p.is_dir()) if usage.is_dir() else []
    start = writer.start.isoformat() if writer.start is not None else None
    end = writer.end.isoformat() if writer.end is not None else None
    rows = writer.rows
    if appended_to is not None:  # ISO 8601 times of one zone compare as text
        rows += appended_to.rows
        start = min(filter(None, (start, appended_to.start)), default=None)
        end = max(filter(None, (end, appended_to.end)), default=None)
    return Metadata(
        name=name, source=source.name, source_bytes=size, imported_at=imported_at,
        rows=rows, bytes=sum(p.stat().st_size for p in usage.rglob("*.parquet")) if usage.is_dir() else 0,
        start=start, end=end, months=months, streamed=streamed,
        report={"format": report.format, "rows_read": report.rows_read, "rows_used": report.rows_used,
                "rows_excluded": report.rows_excluded, "rows_rejected": report.rows_rejected,
                "warnings": list(report.warnings)},
        build=build, imported_by_issuer=actor.issuer, imported_by_subject=actor.subject, imported_by_email=actor.email,
        rollups=built, sorted_by=list(sorting.SORTED_BY), sorted_within=sorting.SORTED_WITHIN,
        plausible=plausible.bounds() if appended_to is None or appended_to.plausible == plausible.bounds() else {},
    )


def _link_tree(source: Path, target: Path) -> None:
    """The files under ``source`` hard-linked (copied where links are refused) to the same places under ``target``:
    the months an append leaves alone cost no copy. A linked file is never written to, only replaced."""
    for path in sorted(source.rglob("*.parquet")):
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, destination)
        except OSError:
            shutil.copy2(path, destination)


def _engine() -> BaseBackend:
    """The import's own DuckDB connection of the engine layer, holding at most ``PLANNER_IMPORT_ENGINE_MB`` (it
    spills to disk past it), so the import's memory stays bounded: it sums the rollups' partials and proves them.
    One thread: a batch's query is small, and one thread runs the five sets of 10⁶ rows in about 2.0 CPU-seconds
    where two spend 3.7 (measured), on a worker thread (``rollups.Partials.add``) while the reader keeps the other
    core; once the last row is written, every core (``_finish``)."""
    backend = engine.connect(settings.DEFAULT_ENGINE_URL)
    backend.con.execute(f"SET memory_limit = '{settings.limit(settings.IMPORT_ENGINE_MB)}MB'")
    backend.con.execute("SET threads = 1")
    return backend


def _writer(folder: Path, prefix: str, partials: rollups.Partials) -> MonthWriter:
    """The writer of an import's rows: each batch sorted (``sorting``) and its rollups' sums taken (``partials``)
    as it is written."""
    return MonthWriter(folder, prefix, order=sorting.sorted_rows, observe=partials.add)


def _finish(backend: BaseBackend, building: Path, months: list[str], imported_at: str, kept: list[dict] | None,
            partials: rollups.Partials) -> list[dict]:
    """Build the rollups of ``months`` (the month partitions written) from ``partials`` (``kept``: the rollups of
    the version appended to; None for a new dataset), proven equal to the rows (``rollups.RollupMismatch``
    otherwise); the rollups' ``dataset.json`` entries. Nothing else runs by then: the engine takes every core."""
    partials.settle()  # the last batches summed before this thread uses the connection
    backend.con.execute("RESET threads")
    months = rollups.stale(building, months, kept)
    entries = rollups.build(backend, building, months, imported_at, kept, partials)
    entries += job_rollup.build(backend, building, imported_at, kept, entries)
    job_rollup.prove(backend, building, entries, months)
    return entries


def _owned(info: Metadata, previous: Metadata | None, actor: Identity) -> Metadata:
    """``info`` owned by the owner of the version it replaces (``previous``), or by ``actor`` for a new dataset."""
    if previous is None:
        return replaced(info, owner_issuer=actor.issuer, owner_subject=actor.subject, owner_email=actor.email)
    return replaced(info, owner_issuer=previous.owner_issuer, owner_subject=previous.owner_subject,
                    owner_email=previous.owner_email)


def _taken(name: str) -> DatasetExists:
    return DatasetExists(f"The workspace already has a dataset {name}; choose another name or replace it.")


def _supersede(old: Path) -> None:
    """Mark the replaced version folder ``old``: it is deleted ``REPLACED_GRACE_S`` from now (``datasets.sweep``)."""
    with suppress(OSError):
        (old / SUPERSEDED).touch()


def _switch(name: str, building: Path, replace: bool) -> None:
    """Make the version folder ``building`` dataset ``name``'s current one: a new link, or (``replace``) a new link
    renamed over the old one, atomically. DatasetExists when the name was taken meanwhile and not ``replace``."""
    target = folder(name)
    relative = Path(datasets.VERSIONS) / building.name
    if not replace:
        try:
            os.symlink(relative, target, target_is_directory=True)
        except FileExistsError:
            raise _taken(name) from None
        return
    link = root() / f"{datasets.NEW_LINK}{name}-{uuid.uuid4().hex[:8]}"
    os.symlink(relative, link, target_is_directory=True)
    try:
        old = datasets.current(name) if target.is_symlink() else None
        if target.exists() and not target.is_symlink():  # a dataset written before versions: moved in first
            old = datasets.versions_folder() / f"{name}.legacy-{uuid.uuid4().hex[:8]}"
            target.rename(old)
            try:
                os.replace(link, target)
            except OSError:
                old.rename(target)  # put it back
                raise
        else:
            os.replace(link, target)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(link)
    if old is not None and old != building:
        _supersede(old)


def import_to_workspace(source: str | Path, name: str, *, format: str | None = None,
                        options: ReadOptions = DEFAULT_OPTIONS, batch_rows: int | None = None,
                        progress: Progress | None = None, replace: bool = False,
                        stream_min_bytes: int | None = None, actor: Identity = LOCAL,
                        append: bool = False) -> Metadata:
    """Import the file or Parquet folder ``source`` into the workspace dataset ``name`` as ``actor``; its metadata.

    ``append`` adds the file's rows to the dataset's: a new version made of the old version's files (linked), the
    new rows, and the rollups of the months the new rows fall in rebuilt. As for ``replace``, the old version is
    read until the new one, its rollups built and proven, is complete.

    Raises DatasetExists for a taken name (unless ``replace``), NotOwnerError (audited) when ``actor`` may not replace
    it, DatasetError for a bad name, UnreadableFile as the import does, OSError when the workspace cannot be written
    (nothing of the import is left behind).
    """
    source = Path(source)
    target = folder(checked_name(name))
    appended_to: Metadata | None = None
    if append:
        if not (target.exists() or target.is_symlink()):
            raise DatasetError(f"There is no dataset {name} in the workspace {root()} to append to.")
        with owners.locked():
            appended_to = owners.refuse_unless_allowed(name, actor, "replace")
        if appended_to is None:
            raise DatasetError(f"The dataset {name} cannot be read, so nothing can be appended to it; replace it.")
        replace = True
    elif target.exists() or target.is_symlink():
        if not replace:
            raise _taken(name)
        with owners.locked():  # refused before the file is read
            owners.refuse_unless_allowed(name, actor, "replace")
    if not source.exists():
        raise UnreadableFile(f"{source.name} does not exist.")
    batch_rows = batch_rows or settings.limit(settings.STREAM_BATCH_ROWS)
    stream_min_bytes = STREAM_MIN_BYTES if stream_min_bytes is None else stream_min_bytes
    size = _source_bytes(source)
    building = datasets.versions_folder() / f"{name}.{uuid.uuid4().hex[:12]}"
    backend = _engine()
    building.mkdir(parents=True)
    prefix = f"append-{uuid.uuid4().hex[:8]}" if appended_to else "part"
    kept = appended_to.rollups if appended_to else None
    existing = appended_to.months if appended_to else []
    partials = rollups.Partials(backend, rollups.chosen(kept), existing)
    writer = _writer(building / USAGE, prefix, partials)
    committed = False
    try:
        if appended_to is not None:
            old = datasets.version_of(appended_to)
            for part in (USAGE, rollups.ROLLUPS_FOLDER):
                _link_tree(old / part, building / part)
        streamed = size >= stream_min_bytes
        if streamed:
            try:
                report = stream_import(source, writer.write, format=format, options=options,
                                       batch_rows=batch_rows, progress=progress)
            except NotStreamable as reason:
                writer.abort()
                for path in (building / USAGE).rglob(f"{prefix}-*.parquet"):
                    path.unlink()
                partials.drop()
                partials = rollups.Partials(backend, rollups.chosen(kept), existing)
                writer = _writer(building / USAGE, prefix, partials)
                if size > settings.megabytes(settings.MAX_IMPORT_MB):
                    raise UnreadableFile(
                        f"{source.name} cannot be imported in batches ({reason}), and at {size / 1e6:,.0f} MB it "
                        f"is larger than the {settings.limit(settings.MAX_IMPORT_MB):,} MB read in one piece "
                        f"({settings.MAX_IMPORT_MB}). Export it as a UTF-8 CSV with one row per line, or as "
                        "Parquet, or split it into parts.") from None
                streamed = False
        if not streamed:
            report = _in_memory(source, writer, format, options, batch_rows, progress)
        writer.close()
        imported_at = datetime.now(UTC).isoformat(timespec="seconds")
        built = _finish(backend, building, writer.months, imported_at, kept, partials)
        info = _metadata(name, source, size, writer, report, streamed, building.name, actor, imported_at,
                         appended_to, built)
        write_metadata(building, info, report)
        with owners.locked():  # checked again: it may have been replaced or deleted while this import ran
            previous = owners.refuse_unless_allowed(name, actor, "replace") if replace else None
            if appended_to is not None and (previous is None or previous.build != appended_to.build):
                raise DatasetError(f"The dataset {name} was replaced or deleted while rows were appended to it; "
                                   "nothing was appended. Append the file again.")
            replacing = replace and (target.exists() or target.is_symlink())  # previous is None for a damaged one
            info = _owned(info, previous, actor)
            (building / METADATA).write_text(info.to_json(), encoding="utf-8")
            _switch(name, building, replace)
            action = "append" if appended_to else "replace" if replacing else "import"
            owners.record(action, name, actor, owners.owner_of(info), build=building.name,
                          previous_build=(previous.build or None) if previous else None)
        committed = True
    finally:
        partials.close()  # no batch is being summed when the connection closes
        backend.disconnect()
        if not committed:
            writer.abort()  # never raises: the build folder below goes in every path
            shutil.rmtree(building, ignore_errors=True)
    datasets.sweep(root())  # replaced versions past their grace
    return info


def delete_dataset(name: str, actor: Identity = LOCAL) -> Metadata | None:
    """Delete dataset ``name`` as ``actor``; its metadata (None for a damaged one). Its link goes at once, its version
    folder after ``REPLACED_GRACE_S`` (a reader inside it finishes). NotOwnerError (audited) unless ``actor`` may;
    DatasetError when there is none."""
    target = folder(checked_name(name))
    with owners.locked():
        info = owners.refuse_unless_allowed(name, actor, "delete")
        if not (target.exists() or target.is_symlink()):
            raise DatasetError(f"There is no dataset {name} in the workspace {root()}; nothing was deleted.")
        if target.is_symlink():
            old = datasets.current(name)
            target.unlink()
        else:  # a dataset written before versions: moved into .versions, then swept like a replaced version
            datasets.versions_folder().mkdir(exist_ok=True)
            old = datasets.versions_folder() / f"{name}.legacy-{uuid.uuid4().hex[:8]}"
            target.rename(old)
        _supersede(old)
        owner = owners.owner_of(info) if info is not None else "(unknown: its dataset.json cannot be read)"
        owners.record("delete", name, actor, owner, previous_build=old.name)
    return info


def no_space(error: OSError) -> bool:
    """True for a full disk or an exceeded quota."""
    return error.errno in (errno.ENOSPC, errno.EDQUOT)
