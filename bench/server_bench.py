"""Reruns on real `streamlit run` servers as a browser's websocket sees them (`bench.websocket_client`), from the
rerun request to its last message, without the browser's drawing: a Plan slider move and a Retrospective filter
change, each against a slider move of the reference page (`bench.reference_app`: one slider, one tile, four
100-point plotly charts) served like the planner (`bench.tuned_reference_app`).

Both servers run at once; their start-up work is let finish first (`SETTLE_S`); the two sides' reruns alternate so
that a noisy neighbour slows both alike, every one to a value not seen before (no cache hit). Figures are medians.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack

from bench.harness import Measurement
from bench.served import ROOT, serve
from bench.websocket_client import Session, connection, multiselect, slider

PLAN_APP = ROOT / "dashboard" / "app.py"
REFERENCE_APP = ROOT / "bench" / "tuned_reference_app.py"
SETTLE_S = 8.0  # the planner's start-up thread (warm-up, then the freeze) ends within this on this machine
PLAN_MOVES = 40
PLAN_SLIDER = "MFU (%)"  # entered at 40 % (the default predicts it): moved to 10, 10.5, ... 29.5 %
PLAN_QUERY = "mfu=0.4"  # an entered MFU: the slider is live (with the MFU predicted it is disabled)
REFERENCE_SLIDER = "Frequency"  # default 10: moved to 11, 12, ... (the page caches nothing)
FILTER_PASSES = 4


def _paired(page: str, reruns: Callable[[Session], Iterator[float]], query: str = "") -> Measurement:
    """Serve the planner (its `page`, at the address's `query`) and the reference; each planner rerun `reruns`
    times is followed by a timed reference slider move. Medians, in ms."""
    with ExitStack() as stack:
        planner = Session(stack.enter_context(connection(stack.enter_context(serve(PLAN_APP)).url)), page=page,
                          query=query)
        reference = Session(stack.enter_context(connection(stack.enter_context(serve(REFERENCE_APP)).url)))
        frequency = reference.rerun().widget("slider", REFERENCE_SLIDER)
        time.sleep(SETTLE_S)
        measured, compared = [], []
        for seconds in reruns(planner):
            measured.append(seconds)
            compared.append(reference.rerun(slider(frequency, 11 + len(compared) % 89)).finished_s)
    return Measurement(statistics.median(measured) * 1e3, statistics.median(compared) * 1e3,
                       f"median of {len(measured)} reruns each")


def plan_slider_move() -> Measurement:
    """MFU moved PLAN_MOVES times, each to a new value."""

    def moves(planner: Session) -> Iterator[float]:
        planner.rerun()  # a session's first Plan run draws the tiles alone (`dashboard.ui.first_paint`)
        mfu = planner.rerun().widget("slider", PLAN_SLIDER)
        for i in range(PLAN_MOVES):
            yield planner.rerun(slider(mfu, 10.0 + 0.5 * i)).finished_s

    return _paired("", moves, PLAN_QUERY)


def retro_filter_change() -> Measurement:
    """The Teams filter on the Retrospective's default view (the bundled samples): each team alone, then all teams
    but it; pass k first ends the date range k days early (not timed), so that no cache has seen a selection."""

    def changes(planner: Session) -> Iterator[float]:
        drawn = planner.rerun()
        teams, dates = drawn.widget("multiselect", "Teams"), drawn.widget("slider", "Dates (UTC)")
        names = list(teams.options)
        selections = [s for team in names for s in ([team], [t for t in names if t != team])]
        for days in range(FILTER_PASSES):
            planner.rerun(multiselect(teams, []), slider(dates, dates.min, dates.max - days * dates.step))
            for selection in selections:
                yield planner.rerun(multiselect(teams, selection)).finished_s

    return _paired("retrospective", changes)
