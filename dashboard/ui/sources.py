"""Importing a chosen file on a page: once per choice, with a progress bar, and a message instead of a traceback.

A choice is named by a cheap key (sample name, upload id, path and modification time), so reruns that change
nothing neither reread nor rehash the file; its bytes are read only to import them. Results live in
`st.session_state[state_key]`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import ingest
from dashboard.ingest.schema import ReadOptions, UnreadableFile
from dashboard.retro.summary import summarize

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"


@dataclass(frozen=True)
class Imported:
    """One imported file: the canonical usage table, the CLI's summary of it and its rejected rows."""

    key: Hashable
    filename: str
    usage: pd.DataFrame
    summary: dict
    rejected: pd.DataFrame


def sample_names() -> list[str]:
    """The bundled sample files (data/samples/*, not its generator folder)."""
    return sorted(p.name for p in SAMPLES.iterdir() if p.is_file())


def import_once(state_key: str, key: Hashable, filename: str, read: Callable[[], bytes] | Path,
                format: str | None = None, options: ReadOptions = ingest.DEFAULT_OPTIONS) -> Imported | None:
    """Import `read()` (bytes) or a path unless `key` was imported last time; None after showing an error."""
    previous = st.session_state.get(state_key)
    if previous is not None and previous.key == key:
        return previous
    bar = st.progress(0.0, text=f"Importing {filename}")

    def show(fraction: float, stage: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=f"{filename}: {stage}")

    try:
        if isinstance(read, Path):
            usage, report = ingest.import_path(read, format=format, options=options, progress=show)
        else:
            usage, report = ingest.import_bytes(read(), filename=filename, format=format, options=options,
                                                progress=show)
    except UnreadableFile as error:
        st.session_state.pop(state_key, None)
        st.error(str(error))
        return None
    except Exception as error:  # noqa: BLE001 - the page boundary: a message, never a traceback
        st.session_state.pop(state_key, None)
        st.error(f"{filename} could not be imported ({type(error).__name__}: {error}). Nothing was loaded; "
                 "check the format and options, or run `python -m dashboard ingest FILE` to see more.")
        return None
    finally:
        bar.empty()
    imported = Imported(key, filename, usage, summarize(usage, report), report.rejected)
    st.session_state[state_key] = imported
    return imported
