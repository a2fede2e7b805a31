"""Importing a chosen file on a page: once per choice, with a progress bar, and a message instead of a traceback.

A choice is named by a key of its contents (a sample's name; an upload's name and the SHA-256 of its bytes, hashed
once per upload; a local path with its modification time and size), so reruns that change nothing neither reread
nor rehash the file, an upload replaced by other rows has a new key (even within the same second) and the same file
uploaded again the same key; its bytes are read only to import them. The imported tables are
held in `upload_store` (bounded, released when the session ends), never in `st.session_state`.

Local paths (the Import page's "Local path" and the Retrospective's "Large export on this machine") go through
`choose_local`: they are read only inside the data folder (`dashboard.settings.data_dir`), resolved with every
link and `..` followed first so that nothing outside it is reached, and a folder is walked once per path and
modification time with a bound on its entries. Messages about a local file that was not recognised as an export
quote nothing from it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from dashboard import ingest, settings
from dashboard.format import money
from dashboard.ingest.bounded import LimitExceeded, read_regular_file
from dashboard.ingest.decode import decode
from dashboard.ingest.schema import ReadOptions, UnreadableFile
from dashboard.query.opened import Table
from dashboard.retro.summary import Accounting, ImportSummary, describe, summarize
from dashboard.safe_text import markdown_text
from dashboard.ui import upload_store

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
# What the uploaders take: delimited text (sacct output is often saved as .log), Parquet, and either compressed.
UPLOAD_TYPES: list[str] = ["csv", "txt", "tsv", "log", "parquet", "gz", "zip"]
IMPORT_SLOT = "import_result"  # the Import usage page's upload-store slot, which the Retrospective may read
RETRO_SLOTS = {"billing": "billing export", "runs": "run export"}  # the Retrospective's uploads, by format kind
LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_FOLDER_ENTRIES = 10_000  # files and folders looked at when walking a folder of Parquet parts
FOLDER_TTL_S = 60  # a folder's parts are walked again after this long (changes deeper than its top level)
_QUOTED = re.compile(r"'.*'|\".*\"")
NOT_QUOTED = "(value not shown)"
UPLOAD_KEYS = "sources.upload_keys"  # uploader's widget key -> (upload id, content key) of the file it holds
# Time zones of local times (sacct prints the cluster's clock without an offset). Every page assumes UTC, says so,
# and offers the same control to change it.
DEFAULT_ZONE = "UTC"
ZONES = [DEFAULT_ZONE, "America/Los_Angeles", "America/New_York", "Europe/London", "Europe/Berlin", "Asia/Shanghai",
         "Asia/Singapore", "Asia/Tokyo"]
ZONE_LABEL = "Time zone of Slurm times"
ZONE_HELP = ("sacct prints the cluster's local time without an offset. UTC is assumed (the bundled samples are in "
             "UTC); change it to the cluster's zone if its clock is local.")
# Where a file on a page came from, as the page's data line says it.
SOURCE_LABELS = {"sample": "bundled sample", "upload": "uploaded", "handoff": "from Import usage",
                 "path": "on this machine", "workspace": "workspace dataset"}


@dataclass(frozen=True)
class Imported:
    """One imported file: the canonical usage table (rows in memory, or an Ibis table of a workspace dataset queried
    where it lies), the CLI's summary of it (its row accounting only for a queried table) and its rejected rows."""

    key: Hashable
    filename: str
    usage: pd.DataFrame | Table
    summary: Accounting  # an ImportSummary for a file read into memory
    rejected: pd.DataFrame
    model_params: Mapping[int, float] = field(default_factory=dict)  # a run export's logged model sizes by source row


@dataclass(frozen=True)
class LocalFile:
    """A local file or folder of Parquet parts inside the data folder, with the key that names its contents."""

    key: Hashable
    filename: str
    path: Path


def _error(message: str) -> None:
    """A refusal on the page, shown as text (file names and paths come from users)."""
    st.error(markdown_text(message))


def sample_names() -> list[str]:
    """The bundled sample files (data/samples/*, not its generator folder)."""
    return sorted(p.name for p in SAMPLES.iterdir() if p.is_file())


def content_digest(data: bytes | memoryview) -> str:
    """The SHA-256 of ``data``, in hex: what names an upload's bytes."""
    return hashlib.sha256(data).hexdigest()


def upload_key(upload: UploadedFile, widget_key: str) -> Hashable:
    """What names an upload's contents: ``("upload", name, digest)``, the name (which chooses the decoder: .gz,
    .zip, .parquet) and the bytes' SHA-256. Hashed once per upload: the key is kept for the uploader
    ``widget_key`` while it holds the same upload."""
    held = st.session_state.setdefault(UPLOAD_KEYS, {})
    if widget_key in held and held[widget_key][0] == upload.file_id:
        return held[widget_key][1]
    with upload.getbuffer() as data:
        key = ("upload", upload.name, content_digest(data))
    held[widget_key] = (upload.file_id, key)
    return key


def serving_beyond_localhost() -> bool:
    """True when the server listens on an address other machines can reach (or on every interface)."""
    return (st.get_option("server.address") or "") not in LOOPBACK


def data_folder() -> Path | None:
    """The folder local paths are read from, or None when reading local paths is off on this server."""
    return settings.data_dir(serving_beyond_localhost())


def local_path_help() -> str:
    """Help text for a local-path box: where files may be read from."""
    folder = data_folder()
    if folder is None:
        return (f"Off on this server. Its operator can turn it on by setting {settings.DATA_DIR} to the folder "
                "that holds the exports.")
    return (f"A file or folder inside {folder} (relative to it, or a full path). Nothing outside that folder is "
            f"read; the server's operator sets it with {settings.DATA_DIR}.")


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


@st.cache_data(max_entries=32, ttl=FOLDER_TTL_S, show_spinner="Looking for Parquet parts…")
def _folder_parts(folder: str, mtime_ns: int) -> tuple[tuple[tuple[str, int, int], ...], str | None]:
    """The Parquet parts under ``folder`` (name, mtime, size), or a message; links are not followed.

    Walked once per path and modification time (and at most every FOLDER_TTL_S), looking at no more than
    MAX_FOLDER_ENTRIES entries.
    """
    parts, pending, seen = [], [folder], 0
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    seen += 1
                    if seen > MAX_FOLDER_ENTRIES:
                        return (), (f"{Path(folder).name} holds more than {MAX_FOLDER_ENTRIES:,} files and folders; "
                                    "give the folder of one export's Parquet parts.")
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                        elif entry.name.endswith(".parquet") and entry.is_file(follow_symlinks=False):
                            info = entry.stat(follow_symlinks=False)
                            parts.append((os.path.relpath(entry.path, folder), info.st_mtime_ns, info.st_size))
                    except FileNotFoundError:
                        continue  # vanished while walking (as under /proc)
        except PermissionError:
            return (), f"The server may not read the folder {Path(current).name} (permission denied)."
        except FileNotFoundError:
            continue
        except OSError as error:
            return (), f"The folder {Path(current).name} cannot be read ({error.strerror or type(error).__name__})."
    return tuple(sorted(parts)), None


def choose_local(typed: str) -> LocalFile | None:
    """The file or folder ``typed`` names inside the data folder; None after showing why it cannot be read."""
    folder = data_folder()
    if folder is None:
        _error(f"Reading files on this machine is off on this server (it listens beyond localhost). Upload the "
                 f"file instead, or have the server's operator set {settings.DATA_DIR} to the folder of exports.")
        return None
    if "\x00" in typed:
        _error("That path holds a NUL character, which no file name on this machine can hold; nothing was read. "
               "Type the path again.")
        return None
    given = Path(typed).expanduser()
    path = Path(os.path.realpath(given if given.is_absolute() else folder / given))
    if not _inside(path, folder):
        _error(f"Only files inside the data folder {folder} are read on this server, and that path leads outside "
                 "it. Copy the export there, or give its path inside the folder.")
        return None
    try:
        info = os.stat(path)
    except FileNotFoundError:
        _error(f"There is no file or folder {path.relative_to(folder)} in the data folder {folder}. Check the "
                 "path and try again.")
        return None
    except OSError as error:
        _error(f"{path.name} cannot be read on this server ({error.strerror or type(error).__name__}).")
        return None
    name = path.name or str(path)
    if stat.S_ISDIR(info.st_mode):
        parts, problem = _folder_parts(str(path), info.st_mtime_ns)
        if problem:
            _error(problem)
            return None
        if not parts:
            _error(f"The folder {name} holds no .parquet files. Give a file, or a folder of one export's Parquet "
                     "parts.")
            return None
        return LocalFile(("path", str(path), info.st_mtime_ns, parts), name, path)
    if not stat.S_ISREG(info.st_mode):
        _error(f"{name} is not a regular file (a device, a pipe or a socket), so it is not read. Give the path of "
                 "an exported CSV, Parquet, .gz or .zip file.")
        return None
    return LocalFile(("path", str(path), info.st_mtime_ns, info.st_size), name, path)


def _unrecognised_message(filename: str) -> str:
    return (f"{filename} could not be imported: it is not an export this page recognises, or it is damaged. Files "
            "read on this machine are never quoted here; run `python -m dashboard ingest FILE` on the machine "
            "for the full message, or choose the format and columns above.")


def local_columns(local: LocalFile) -> list[str] | None:
    """The header of a local file (for the generic mapping); None after showing a message that quotes nothing."""
    try:
        return list(decode(read_regular_file(local.path), local.filename).table.columns)
    except LimitExceeded as error:
        _error(str(error))
    except (UnreadableFile, OSError):
        _error(_unrecognised_message(local.filename))
    return None


def _without_values(imported: Imported) -> Imported:
    """Rejected-row reasons and warnings with every quoted value replaced (a local file in no known format)."""
    rejected = imported.rejected.assign(reason=imported.rejected["reason"].str.replace(_QUOTED, NOT_QUOTED,
                                                                                        regex=True))
    summary = replace(imported.summary,
                      rejected_sample=tuple(replace(item, reason=_QUOTED.sub(NOT_QUOTED, item.reason))
                                            for item in imported.summary.rejected_sample),
                      warnings=tuple(_QUOTED.sub(NOT_QUOTED, w) for w in imported.summary.warnings))
    return replace(imported, rejected=rejected, summary=summary)


def import_once(state_key: str, key: Hashable, filename: str, read: Callable[[], bytes] | Path,
                format: str | None = None, options: ReadOptions = ingest.DEFAULT_OPTIONS,
                release_first: bool = True) -> Imported | None:
    """Import `read()` (bytes) or a local path unless `key` was imported last time; None after showing an error.

    A path must come from `choose_local`. The result is held in `upload_store` under `state_key`, in place of the
    slot's last import; ``release_first`` releases that one before reading (its memory is free during the import),
    while False keeps it held until the new one is read (a page that shows it again when the new file is refused,
    even to a run that overlaps this one).
    """
    previous = upload_store.get(state_key, key)
    if previous is not None:
        return previous
    if release_first:
        upload_store.drop(state_key)
    local = isinstance(read, Path)
    bar = st.progress(0.0, text=f"Importing {markdown_text(filename)}")

    def show(fraction: float, stage: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=f"{markdown_text(filename)}: {markdown_text(stage)}")

    try:
        if isinstance(read, Path):
            usage, report = ingest.import_path(read, format=format, options=options, progress=show)
        else:
            usage, report = ingest.import_bytes(read(), filename=filename, format=format, options=options,
                                                progress=show)
        imported = Imported(key, filename, usage, summarize(usage, report), report.rejected, report.model_params)
        if local and report.format == "generic":
            imported = _without_values(imported)
        upload_store.put(state_key, key, imported,
                         upload_store.table_bytes(usage) + upload_store.table_bytes(report.rejected))
    except (LimitExceeded, upload_store.TooLarge) as error:
        _error(str(error))
        return None
    except UnreadableFile as error:
        if local:
            _error(_unrecognised_message(filename))
        else:
            _error(str(error))
        return None
    except MemoryError:
        _error(f"{filename} needs more memory than the server has free. Import a shorter period, or split the "
                 "export into parts and import them one by one.")
        return None
    except Exception as error:  # the page boundary: a message, never a traceback
        detail = type(error).__name__ if local else f"{type(error).__name__}: {error}"
        _error(f"{filename} could not be imported ({detail}). Nothing was loaded; "
                 "check the format and options, or run `python -m dashboard ingest FILE` to see more.")
        return None
    finally:
        bar.empty()
    return imported


def zone_select(key: str, container=st) -> str:
    """The time zone of Slurm's local times, UTC assumed: the same control on the Import and Retrospective pages."""
    return container.selectbox(ZONE_LABEL, ZONES, key=key, help=ZONE_HELP,
                               format_func=lambda zone: f"{zone} (assumed)" if zone == DEFAULT_ZONE else zone)


def zone_line(zone: str) -> str:
    """How the page reads Slurm's local times, in words: "Slurm times read as UTC (assumed; change it …)"."""
    if zone == DEFAULT_ZONE:
        return f"Slurm times read as {DEFAULT_ZONE} (assumed; change it under *{ZONE_LABEL}*)"
    return f"Slurm times read as {markdown_text(zone)} (change it under *{ZONE_LABEL}*)"


def commitment_note(format_name: str, usage: pd.DataFrame, currency: str | None) -> str | None:
    """One line on how a GCP bill carries its commitments, as the Retrospective treats them; None for other formats.

    GCP bills committed-use discounts as fee lines of their own ("Commitment v1: …" SKUs) and the GPU usage they
    cover as ordinary rows with a committed-use credit; the Retrospective spreads the fees over the reserved
    GPU-hours they cover ("commitments amortised")."""
    if format_name != "gcp":
        return None
    fees = float(usage.loc[usage["charge_kind"] == "commitment", "cost"].sum()) if len(usage) else 0.0
    amount = f"{money(fees, currency)} of it" if fees else "none of it here"
    return (f"GCP bills show committed-use discounts as separate lines: commitment fees on their own SKU lines "
            f"({amount}) and the usage they cover as credits on the usage rows. The cost above counts the fees "
            "as billed; the Retrospective spreads them over the reserved GPU-hours they cover (commitments "
            "amortised).")


def file_summary(imported: Imported) -> ImportSummary:
    """The summary of a file ``import_once`` read: its totals as well as its row accounting."""
    if not isinstance(imported.summary, ImportSummary):  # a workspace dataset's accounting: not read by import_once
        raise TypeError(f"{imported.filename} was not read into memory: it has no totals")
    return imported.summary


def summary_text(summary: ImportSummary, name: str) -> str:
    """An import summary's figure as the CLI's readable table writes it ($951k, "unpriced" for a run log)."""
    return describe(summary)(name, getattr(summary, name))[1]
