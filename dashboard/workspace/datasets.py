"""Datasets of the workspace: their names, their metadata file, listing them and opening them.

A dataset is the folder ``<workspace>/<name>/`` holding ``usage/`` (the canonical table, partitioned by month),
``dataset.json`` (rows, bytes, date range, source file, the import report's counts and notes, and who owns it and
who imported this version: `dashboard.workspace.owners`) and the report's excluded and rejected rows as
``excluded.parquet`` and ``rejected.parquet``. Names are short words of letters, digits, ``.``, ``_`` and ``-`` that
start with a letter or digit, so no name reaches outside the workspace folder; a name is checked before any path is
built from it.

Versions. ``<workspace>/<name>`` is a symbolic link to one version folder ``<workspace>/.versions/<name>.<id>``;
an import builds a new version there and switches the link with one ``rename`` (atomic), so a reader that
resolves the link once (``current``, and the ``at`` argument of the readers below) sees one whole version, never a
mix. A replaced version is marked (``superseded``) and deleted ``REPLACED_GRACE_S`` later, so a reader still
inside it finishes. The first use of a workspace folder in a process sweeps version folders no link names that
are older than ``BUILD_MAX_AGE_S`` (builds of killed imports), and replaced ones past their grace (``sweep``).
A dataset written before versions (a plain folder) is still read, and moved into ``.versions`` when replaced.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dashboard import settings
from dashboard.ingest.schema import ImportReport, issues_frame
from dashboard.ingest.stream import SampledReport
from dashboard.query import engine
from dashboard.workspace.writer import PARTITION, to_frame

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
METADATA = "dataset.json"
USAGE = "usage"
EXCLUDED = "excluded.parquet"
REJECTED = "rejected.parquet"
VERSION = 1
VERSIONS = ".versions"  # the version folders, inside the workspace folder
SUPERSEDED = ".superseded"  # a file in a replaced version folder: when it was replaced (its mtime)
LEGACY_BUILDS = (".import-", ".replaced-")  # hidden build folders of the imports before versions
NEW_LINK = ".link-"  # a link made beside a dataset's link, then renamed over it
BUILD_MAX_AGE_S = 24 * 3600  # a version folder no link names is a killed import's build after this long
REPLACED_GRACE_S = 3600  # a replaced version is kept this long for the readers still inside it
PEOPLE_FIELDS = ("owner_issuer", "owner_subject", "owner_email", "imported_by_issuer", "imported_by_subject",
                 "imported_by_email")
_swept: set[Path] = set()
_sweep_lock = threading.Lock()


class DatasetError(ValueError):
    """A dataset name that is not allowed, or a dataset that is missing or damaged; the message says which."""


class DatasetExists(DatasetError):
    """The name is taken and the import was not asked to replace it."""


@dataclass(frozen=True)
class Metadata:
    """What ``dataset.json`` says about a dataset."""

    name: str
    source: str  # the imported file's name
    source_bytes: int
    imported_at: str  # ISO 8601, UTC
    rows: int
    bytes: int  # Parquet bytes of the usage table
    start: str | None  # earliest period_start (ISO 8601), None without times
    end: str | None  # latest period_end
    months: list[str]
    streamed: bool  # read in batches (False: the in-memory import)
    report: dict = field(default_factory=dict)  # format, rows_read, rows_used, rows_excluded, rows_rejected, warnings
    version: int = VERSION
    build: str = ""  # the version folder's name in .versions ("" for a dataset written before versions)
    # Who owns the dataset (who first imported it; kept through replacements) and who imported this version: OIDC
    # issuer, subject and e-mail, all None for the anonymous local user and for datasets written before owners.
    owner_issuer: str | None = None
    owner_subject: str | None = None
    owner_email: str | None = None
    imported_by_issuer: str | None = None
    imported_by_subject: str | None = None
    imported_by_email: str | None = None
    # The rollups built at import (``dashboard.workspace.rollups``): name, grain, measures, rows, built_at and rows
    # per month; none for a dataset imported before rollups (its questions read the rows). The rows' sort order,
    # and what it holds within: "batch" (each batch written sorted), "month" (a month sorted whole, as imports did
    # before the sort moved into the writer); none for a dataset imported before sorting.
    rollups: list[dict] = field(default_factory=list)
    sorted_by: list[str] = field(default_factory=list)
    sorted_within: str = "month"
    # The plausibility bounds every row was checked with at import (``ingest.plausible.bounds``); none for a dataset
    # imported before the record, or appended to one without it (its rows are tested as the measured inputs read).
    plausible: dict = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Metadata:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise DatasetError("The dataset's dataset.json is not one this version wrote; import the file again.")
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        if any(not isinstance(known.get(name), str | None) for name in PEOPLE_FIELDS):
            raise DatasetError("The dataset's dataset.json names its owner in a form this version did not write; "
                               "import the file again.")
        return cls(**known)


def checked_name(name: str) -> str:
    """``name`` when it is an allowed dataset name; DatasetError otherwise."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or ".." in name:
        shown = repr(name[:40]) if isinstance(name, str) else type(name).__name__
        raise DatasetError(f"{shown} is not a dataset name: use 1 to 64 letters, digits, '.', '_' or '-', starting "
                           "with a letter or digit (for example q2-2025_focus).")
    return name


def root() -> Path:
    """The workspace folder (``PLANNER_WORKSPACE_DIR``); swept (``sweep``) the first time a process uses it."""
    base = settings.workspace_dir()
    if base not in _swept:
        with _sweep_lock:
            if base not in _swept:
                _swept.add(base)
                sweep(base)
    return base


def versions_folder() -> Path:
    """The folder of version folders (``<workspace>/.versions``)."""
    return root() / VERSIONS


def folder(name: str) -> Path:
    """The path of dataset ``name`` (checked) in the workspace folder: the link to its current version (or the
    folder of a dataset written before versions)."""
    base = root()
    path = base / checked_name(name)
    if not _allowed(path.resolve(), base.resolve()):
        raise DatasetError(f"The dataset {name} leads outside the workspace folder, so it is not opened.")
    return path


def _allowed(resolved: Path, base: Path) -> bool:
    """A dataset's resolved folder is its own folder in the workspace, or a version folder."""
    return resolved.parent == base or resolved.parent == base / VERSIONS


def current(name: str) -> Path:
    """The folder of the current version of dataset ``name``, the link resolved once: read every part of one
    import through it (``at=``) to see that import whole while another replaces it."""
    return Path(os.path.realpath(folder(name)))


def _at(name: str, at: Path | None) -> Path:
    return current(name) if at is None else at


def sweep(base: Path | None = None, now: float | None = None) -> list[Path]:
    """Delete the version folders of ``base`` (the workspace folder) that no dataset link names and that are older
    than ``BUILD_MAX_AGE_S`` (a killed import's build) or were replaced more than ``REPLACED_GRACE_S`` ago, and
    the hidden build folders of older imports past ``BUILD_MAX_AGE_S``; the folders deleted. Errors are ignored
    (another process may sweep the same folder)."""
    base = settings.workspace_dir() if base is None else base
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(base.iterdir())
        linked = {Path(os.path.realpath(p)) for p in entries if p.is_symlink() and NAME.fullmatch(p.name)}
        candidates = list((base / VERSIONS).iterdir()) if (base / VERSIONS).is_dir() else []
        candidates += [p for p in entries if p.name.startswith(LEGACY_BUILDS)]
    except OSError:
        return removed
    for path in entries:  # links a killed import made and never renamed
        try:
            if path.name.startswith(NEW_LINK) and path.is_symlink() and now - path.lstat().st_mtime > BUILD_MAX_AGE_S:
                path.unlink()
                removed.append(path)
        except OSError:
            continue
    for path in candidates:
        try:
            if path.resolve() in linked or not path.is_dir() or path.is_symlink():
                continue
            marker = path / SUPERSEDED
            if marker.exists():
                expired = now - marker.stat().st_mtime > REPLACED_GRACE_S
            else:
                expired = now - path.stat().st_mtime > BUILD_MAX_AGE_S
            if expired:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
        except OSError:
            continue
    return removed


def write_metadata(path: Path, metadata: Metadata, report: ImportReport) -> None:
    """``dataset.json`` and the report's excluded and rejected rows, in the dataset folder ``path``."""
    report.excluded.to_parquet(path / EXCLUDED, index=False)
    report.rejected.to_parquet(path / REJECTED, index=False)
    (path / METADATA).write_text(metadata.to_json(), encoding="utf-8")


def metadata(name: str, at: Path | None = None) -> Metadata:
    """The metadata of dataset ``name`` (of its version folder ``at``); DatasetError when missing or damaged."""
    path = _at(name, at) / METADATA
    try:
        return Metadata.from_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"There is no dataset {name} in the workspace {root()}.") from None
    except (OSError, ValueError, TypeError) as error:
        if isinstance(error, DatasetError):
            raise
        raise DatasetError(f"The metadata of dataset {name} cannot be read ({type(error).__name__}); import the "
                           "file again.") from None


def report(name: str, at: Path | None = None) -> ImportReport:
    """The import report of dataset ``name``, with its excluded and rejected rows (the first ones of a streamed
    import, which keeps a sample) and their counts."""
    path = _at(name, at)
    info = metadata(name, path).report
    issues = []
    for file in (EXCLUDED, REJECTED):
        frame = pd.read_parquet(path / file)
        issues.append(issues_frame(frame["line"], frame["reason"]))
    return SampledReport(format=info["format"], rows_read=info["rows_read"], rows_used=info["rows_used"],
                         excluded=issues[0], rejected=issues[1], warnings=list(info["warnings"]),
                         excluded_count=info.get("rows_excluded", len(issues[0])),
                         rejected_count=info.get("rows_rejected", len(issues[1])))


def version_of(info: Metadata) -> Path:
    """The version folder ``info`` was read from (the current one for a dataset written before versions)."""
    if info.build:
        path = versions_folder() / info.build
        if path.parent == versions_folder() and path.is_dir():
            return path
    return current(info.name)


def exists(name: str) -> bool:
    """True when the workspace has a dataset (or a damaged one) called ``name`` (checked)."""
    path = folder(name)
    return path.exists() or path.is_symlink()


def names() -> list[str]:
    """The datasets of the workspace, by name (folders with a metadata file and an allowed name)."""
    base = root()
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir()
                  if p.is_dir() and NAME.fullmatch(p.name) and ".." not in p.name and (p / METADATA).is_file())


def usage_folder(name: str, at: Path | None = None) -> Path:
    """The month-partitioned Parquet folder of dataset ``name`` (of its current version, or of ``at``)."""
    return _at(name, at) / USAGE


def open_table(backend, name: str, at: Path | None = None):
    """Dataset ``name`` as an Ibis table of ``backend`` (its ``read_parquet``), the canonical columns only.

    DuckDB reads the month folders with ``hive_partitioning``; other engines (Spark) find them themselves.
    """
    at = _at(name, at)
    metadata(name, at)  # a clear message for a missing dataset
    path = usage_folder(name, at)
    with engine.lock(backend):  # a statement of the connection every session shares: one at a time
        if getattr(backend, "name", "") == "duckdb":
            table = backend.read_parquet(str(path / "**" / "*.parquet"), hive_partitioning=True)
        else:
            table = backend.read_parquet(str(path))
    return table.drop(PARTITION) if PARTITION in table.columns else table


def batches(name: str, batch_rows: int, at: Path | None = None) -> Iterator[pd.DataFrame]:
    """Dataset ``name`` as canonical frames of at most ``batch_rows`` rows, month by month (bounded memory)."""
    for part in sorted(usage_folder(name, at).rglob("*.parquet")):
        for batch in pq.ParquetFile(part).iter_batches(batch_size=batch_rows):
            yield to_frame(pa.Table.from_batches([batch]))
