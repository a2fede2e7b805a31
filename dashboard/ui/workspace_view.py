"""The Retrospective's workspace controls: import a large local file into a dataset, choose a dataset by name and
see its size and date range before any query, open it for the page, and download a view as a capped CSV.

Datasets live in ``PLANNER_WORKSPACE_DIR`` (``dashboard.workspace``). Their metadata is a small JSON file, so
the size line costs no query. A dataset is opened as an Ibis table over its Parquet files on the configured engine
(``datasets.open_table``) and never read into pandas, whatever its size: every figure, the join with a run export
and the amortisation of commitments are queries over it, as over an upload's table, and a view's download streams
the first rows of a query.

Owners. An import acts as the signed-in user (`dashboard.ui.identity`; the local user with sign-in off); the size
line names the dataset's owner by e-mail, as text; a taken name is offered for replacement, and a chosen dataset for
deletion, only to its owner or an administrator, and anyone else's attempt is refused with the owner's e-mail and
audited (`dashboard.workspace.owners`).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Hashable
from datetime import date

import pandas as pd
import streamlit as st

from dashboard import settings
from dashboard.core.safe_csv import to_safe_csv
from dashboard.format import number
from dashboard.identity import Identity
from dashboard.ingest.schema import UnreadableFile
from dashboard.query import engine, opened
from dashboard.query.opened import Table
from dashboard.retro.summary import accounting
from dashboard.retro.view import Rollups
from dashboard.safe_text import markdown_text
from dashboard.ui import identity, upload_store
from dashboard.ui.sources import Imported, LocalFile, content_digest
from dashboard.workspace import datasets, owners, rollup_rows
from dashboard.workspace.datasets import DatasetError, DatasetExists, Metadata
from dashboard.workspace.imports import delete_dataset, import_to_workspace, no_space

NONE = "(none)"
DELETE_ERROR = "retro.workspace.delete_error"  # (name, why) the last "Delete" of that dataset failed
CSV_CHUNK_ROWS = 100_000


def size_line(info: Metadata) -> str:
    """Markdown: a dataset's rows, size on disk, date range and source file (from its metadata only)."""
    start = info.start[:10] if info.start else "no dates"
    end = f" to {info.end[:10]}" if info.end else ""
    return (f"Workspace dataset **{markdown_text(info.name)}**: {info.rows:,} rows · {number(info.bytes, 'bytes')} "
            f"(Parquet) · {start}{end} · from {markdown_text(info.source)} "
            f"({markdown_text(info.report.get('format', '?'))}, {info.report.get('rows_read', 0):,} rows read) · "
            f"owner: {markdown_text(owners.owner_of(info))}")


def _taken_line(name: str) -> str:
    """Markdown: what the dataset ``name`` holds now, for the question whether to replace it."""
    try:
        info = datasets.metadata(name)
    except DatasetError:
        return f"The workspace already has a dataset **{markdown_text(name)}**."
    return (f"The workspace already has a dataset **{markdown_text(name)}**: {info.rows:,} rows from "
            f"{markdown_text(info.source)}, imported {markdown_text(info.imported_at.replace('T', ' '))} UTC, owner "
            f"{markdown_text(owners.owner_of(info))}.")


def _confirmed(name: str, local: LocalFile, key: str, clicked: bool, actor: Identity) -> bool | None:
    """Whether to import over the taken name ``name``: True once "Replace" is pressed, None while the question is
    open or after "Cancel". The question is asked (kept in the session) when "Import to workspace" met a taken
    name that ``actor`` may replace, and dropped when the name or the file changes; NotOwnerError (audited) when
    ``actor`` may not."""
    asked = f"{key}.asked"
    question = (name, local.key)
    if st.session_state.get(asked) not in (None, question):
        del st.session_state[asked]
    if clicked:
        taken = datasets.exists(name)
        if taken:
            with owners.locked():
                owners.refuse_unless_allowed(name, actor, "replace")
            st.session_state[asked] = question
        else:
            st.session_state.pop(asked, None)
            return False
    if st.session_state.get(asked) != question:
        return None
    st.warning(f"{_taken_line(name)} Replace it with {markdown_text(local.filename)}? Everyone who opens "
               f"{markdown_text(name)} then sees the new rows; choose another name to keep both.")
    yes, no = st.columns(2)
    if yes.button(f"Replace {markdown_text(name)}", key=f"{key}.replace", type="primary"):
        del st.session_state[asked]
        return True
    no.button("Cancel", key=f"{key}.cancel", on_click=lambda: st.session_state.pop(asked, None))
    return None


def import_controls(local: LocalFile | None, key: str) -> None:
    """A dataset name and an "Import to workspace" button for the local file ``local`` (streamed when large).

    A name the workspace already has is never replaced silently: the page asks first (like the CLI's
    ``--replace``), and a name taken by another session while this import ran is asked about afterwards.
    """
    name = st.text_input("Dataset name for the workspace", key=f"{key}.name", placeholder="e.g. q2-2025_focus",
                         help=f"Letters, digits, '.', '_' or '-'. Stored under {settings.workspace_dir()} "
                              f"({settings.WORKSPACE_DIR}).").strip()
    clicked = st.button("Import to workspace", key=f"{key}.import", disabled=local is None or not name,
                        help="Reads the file in batches of rows, so an export larger than memory can be imported.")
    if local is None or not name:
        st.session_state.pop(f"{key}.asked", None)
        return
    actor = identity.current()
    if actor is None:  # signed out meanwhile (the sign-in page shows first otherwise)
        st.error("You are signed out: sign in again to import into the workspace.")
        return
    try:
        replace = _confirmed(name, local, key, clicked, actor)
    except DatasetError as error:
        st.error(markdown_text(str(error)))
        return
    if replace is None:
        return
    with st.status(f"Importing {markdown_text(local.filename)} into {markdown_text(name)}…",
                   expanded=True) as status:
        bar = st.progress(0.0)

        def show(fraction: float, stage: str) -> None:
            bar.progress(min(max(fraction, 0.0), 1.0), text=markdown_text(stage))

        try:
            info = import_to_workspace(local.path, name, progress=show, replace=replace, actor=actor)
        except DatasetExists:
            status.update(label="Not imported: the name was taken meanwhile", state="error")
            st.session_state[f"{key}.asked"] = (name, local.key)
            st.rerun()
        except (DatasetError, UnreadableFile) as error:
            status.update(label="Not imported", state="error")
            st.error(markdown_text(str(error)))
            return
        except MemoryError:
            status.update(label="Not imported", state="error")
            st.error(f"{markdown_text(local.filename)} needs more memory than the server has free: it has blank "
                     "lines or multi-line cells, which are read whole. Export it with one row per line.")
            return
        except OSError as error:
            status.update(label="Not imported", state="error")
            if no_space(error):
                st.error("The workspace's disk is full, so nothing was imported and the workspace is as it was. "
                         "Free some space there, or ask the server's operator to.")
            else:
                st.error(f"The workspace could not be written "
                         f"({markdown_text(error.strerror or type(error).__name__)}); nothing was imported.")
            return
        status.update(label=f"Imported {info.rows:,} rows into {markdown_text(name)}", state="complete")
    st.session_state["retro.dataset"] = name


def _delete(name: str, actor: Identity) -> None:
    """The "Delete" button's callback: delete dataset ``name`` as ``actor`` and drop the choice, or keep why not."""
    try:
        delete_dataset(name, actor)
    except (DatasetError, OSError) as error:
        st.session_state[DELETE_ERROR] = (name, f"{name} was not deleted: {error}")
        return
    st.session_state.pop(DELETE_ERROR, None)
    st.session_state.pop("retro.dataset", None)


def delete_control(info: Metadata) -> None:
    """A "Delete dataset" button, behind a confirmation, for the dataset's owner and the administrators only."""
    actor = identity.current()
    if actor is None or not owners.may_change(info, actor):
        return
    with st.popover("Delete dataset", icon=":material/delete:"):
        st.write(f"Delete **{markdown_text(info.name)}** ({info.rows:,} rows) from the workspace for everyone? Readers "
                 "still inside it finish; the deletion is audited.")
        st.button(f"Delete {markdown_text(info.name)}", key="retro.workspace.delete", type="primary",
                  on_click=_delete, args=(info.name, actor))


def choose_dataset() -> Metadata | None:
    """A workspace dataset chosen by name (bound to the URL), with its size line and, for its owner and the
    administrators, a delete button (a failed delete says why while the dataset stays chosen); None for none or a bad
    one."""
    try:
        names = datasets.names()
    except OSError:
        names = []
    chosen = st.session_state.get("retro.dataset")
    if chosen and chosen != NONE and chosen not in names:
        del st.session_state["retro.dataset"]
    name = st.selectbox("Workspace dataset (replaces the choices above)", [NONE, *names], key="retro.dataset",
                        bind="query-params", help="Datasets imported with “Import to workspace” or "
                        f"`python -m dashboard workspace import`, kept in {settings.workspace_dir()}.")
    failed = st.session_state.get(DELETE_ERROR)
    if failed and failed[0] == name:
        st.error(markdown_text(failed[1]))
    elif failed:
        del st.session_state[DELETE_ERROR]
    if name == NONE:
        return None
    try:
        info = datasets.metadata(name)
    except DatasetError as error:
        st.error(markdown_text(str(error)))
        return None
    delete_control(info)
    return info


def dataset_key(info: Metadata) -> Hashable:
    """What names a dataset's contents: its version id from dataset.json (the version folder, new for every import,
    replacement or append, so one replaced within the same second has a new key), or for a dataset written before
    versions the digest of its dataset.json; never a time or a path alone."""
    if info.build:
        return ("workspace", info.build)
    return ("workspace", info.name, content_digest(info.to_json().encode()))


def _queried_table(name: str, at) -> Table:
    """Dataset ``name`` (its version folder ``at``) as an Ibis table over its Parquet files on the configured engine
    (memory bounded), its small results kept while it is open."""
    return opened.fixed(datasets.open_table(engine.default(), name, at))


def open_dataset(state_key: str, info: Metadata) -> Imported | None:
    """The dataset as the page's import (held in the session's bounded store): an Ibis table over its Parquet
    files; None after a message."""
    key = dataset_key(info)
    held = upload_store.get(state_key, key)
    if held is not None:
        return held
    try:
        with st.spinner(f"Opening {markdown_text(info.name)} ({info.rows:,} rows)…", show_time=True):
            at = datasets.version_of(info)  # the import ``info`` describes, even if another replaces it now
            usage = _queried_table(info.name, at)
            report = datasets.report(info.name, at)
    except (DatasetError, OSError, ValueError) as error:
        st.error(markdown_text(f"The dataset {info.name} cannot be opened: {error}"))
        return None
    summary = accounting(report)
    imported = Imported(key, info.name, usage, summary, report.rejected)
    try:
        upload_store.put(state_key, key, imported, upload_store.table_bytes(report.rejected))
    except upload_store.TooLarge as error:
        st.error(markdown_text(str(error)))
        return None
    return imported


def rollups_of(info: Metadata) -> Rollups:
    """The rollups of dataset ``info`` (of the import it describes), chosen per question on the configured engine
    and read as rows (`dashboard.workspace.rollup_rows.rows_answer`), with what the page says read it."""
    return rollup_rows.chooser(engine.default(), info, datasets.version_of(info))


def _query_csv_file(table: Table, rows: int) -> Callable[[], bytes]:
    """A deferred download: the first ``rows`` rows of the query ``table``, streamed from the engine in chunks and
    rendered as bytes (at most ``rows`` rows, the download cap; never the whole view)."""
    def data() -> bytes:
        out = io.BytesIO()
        first = True
        for chunk in opened.first_rows(table, rows, CSV_CHUNK_ROWS):
            text = to_safe_csv(chunk)
            out.write(text if first else text.split(b"\n", 1)[1])
            first = False
        if first:
            out.write(to_safe_csv(pd.DataFrame(columns=list(table.columns))))
        return out.getvalue()

    return data


def download_button(table: Table, rows: int, name_hint: str = "retrospective") -> None:
    """The "Download this view (CSV)" button for the ``rows`` rows of ``table`` (a query whose first rows are
    streamed when pressed), capped at ``PLANNER_DOWNLOAD_MAX_ROWS`` rows with a message."""
    cap = settings.limit(settings.DOWNLOAD_MAX_ROWS)
    render = _query_csv_file(table, cap)
    st.download_button("Download this view (CSV)", data=render,
                       file_name=f"{name_hint}_{date.today():%Y%m%d}.csv", mime="text/csv",
                       help="The filtered rows, written in chunks when you press; cells starting with =, +, - or @ "
                       "are escaped for spreadsheets.")
    if rows > cap:
        st.caption(f"This view has {rows:,} rows; the download holds the first {cap:,} ({settings.DOWNLOAD_MAX_ROWS}). "
                   "For every row, run `python -m dashboard workspace export` on the server, or ask its operator to "
                   f"raise {settings.DOWNLOAD_MAX_ROWS}.")
