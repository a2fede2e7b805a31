"""A new session's first Plan run draws the tiles alone; the rest of the page follows once the browser shows them.

The browser loads each element type's code the first time the page uses it, and draws one update only when all of
it has arrived: a first run that sent the sidebar's widgets, the "Can it run?" panel and the charts kept the tiles
off screen until plotly's 4.7 MB bundle had loaded and run (a blank page for 3-5 s; `bench.browser_bench`). So the
first run of a session in a server sends the title, the tiles and their notes with a line saying what is loading,
and a script-only component (`st.components.v2`) asks for the next run once the tiles are on screen; that run, and
every later one, draws the whole page. Under AppTest, or outside a server, the whole page is drawn at once.
"""

from __future__ import annotations

import streamlit as st

from dashboard.ui.warm import in_server

PAINTED = "plan.first_paint_done"
LOADING = "Loading the controls, *Can it run?* and the charts…"
# Once a tile is in the page and a frame has been drawn, ask for the next run (a trigger value: one rerun).
SIGNAL_JS = """
export default function ({ setTriggerValue }) {
  const shown = () => document.querySelector('[data-testid="stMetricValue"]') !== null;
  const ask = () => requestAnimationFrame(() => setTimeout(() => setTriggerValue("painted", true), 0));
  if (shown()) { ask(); return; }
  const watch = new MutationObserver(() => { if (shown()) { watch.disconnect(); ask(); } });
  watch.observe(document.body, { childList: true, subtree: true });
  return () => watch.disconnect();
}
"""
_signal = st.components.v2.component("planner.first_paint", js=SIGNAL_JS)


def _rest() -> None:
    """The signal's callback: nothing to do, the rerun it starts draws the whole page."""


def tiles_only() -> bool:
    """Whether this run draws the tiles alone: the session's first Plan run, in a `streamlit run` server. The next
    run draws everything, whether the browser asks for it or the user moves a control first."""
    state = st.session_state
    if state.get(PAINTED) or not in_server():
        return False
    state[PAINTED] = True
    return True


def rest_follows() -> None:
    """Under the tiles of a first run: what is still loading, and the signal that asks for it."""
    st.caption(LOADING)
    _signal(key="plan.first_paint_signal", on_painted_change=_rest)
