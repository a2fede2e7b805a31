"""`bench.reference_app` served like the planner (`dashboard.ui.server`): its start-up objects frozen out of each
rerun's garbage collection, so the benches compare the two pages' own work on equal servers."""

import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dashboard.ui import server  # noqa: E402  (after the path is set)

REFERENCE = Path(__file__).with_name("reference_app.py")


@st.cache_resource(show_spinner=False)
def _tuned() -> bool:
    """Once per process, after the page's first run has loaded its modules (as the planner does after its first)."""
    server.freeze_start_up(modules=())
    return True


exec(compile(REFERENCE.read_text(encoding="utf-8"), str(REFERENCE), "exec"))  # our own file
_tuned()
