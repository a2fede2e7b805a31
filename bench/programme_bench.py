"""Plan links whose programme asks for a lot of pricing (issue 53), loaded on a real `streamlit run` server as a
browser's websocket sees it (`bench.websocket_client`): from the connection to the first rerun's last message.

The probe is 20 scaling ladders of 100 runs over 7 decades with the two costliest chart tabs open (refused at the
boundary: 2,000 priced runs against `PLANNER_PROGRAMME_MAX_RUNS`' 200); the bounded link is the largest programme
the default allows, 2 ladders of 100 runs, with the same tabs (priced; the charts past `PLANNER_RERUN_MAX_ROWS` are
not drawn). Every load is a new session at an MFU no cache has seen, so each prices its plan. The reference is a
new session on the Plan page's default plan at an unseen MFU, on the same server, alternating with the measured
loads. `links_with_another_user` loads three bounded links at once, each in its own session and thread, while a
fourth session opens the default plan: the figure is that fourth load.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlencode

from bench.harness import Measurement
from bench.served import ROOT, serve
from bench.websocket_client import Session, connection

PLAN_APP = ROOT / "dashboard" / "app.py"
SETTLE_S = 8.0  # the server's start-up thread ends within this
ROUNDS = 5
CHARTS = "step,checkpoint"  # the two costliest tabs: "Where the step goes" and "Checkpoint interval"
PROBE = [{"runs": 100, "kind": "scaling_ladder", "span_decades": 7}] * 20
BOUNDED = [{"runs": 100, "kind": "scaling_ladder", "span_decades": 7}] * 2
ISSUE_TARGET_S = 2.0
_counter = iter(range(1, 1_000_000))


def _query(stages: list[dict] | None) -> str:
    """An address no cache has seen: the programme (if any), the open tabs and a new MFU."""
    params = {"mfu": f"{0.3 + next(_counter) * 1e-5:.5f}"}
    if stages:
        params |= {"programme": json.dumps(stages, separators=(",", ":")), "charts": CHARTS}
    return urlencode(params)


def _load_s(url: str, query: str) -> float:
    """Seconds from opening a session's websocket to the end of the run that draws the whole page (its second: a
    session's first Plan run draws the tiles alone, `dashboard.ui.first_paint`)."""
    started = time.perf_counter()
    with connection(url) as socket_:
        Session(socket_, query=query).rerun()
    return time.perf_counter() - started


def _load_into(times: list[float], url: str, query: str) -> None:
    times.append(_load_s(url, query))


def _paired(stages: list[dict]) -> Iterator[tuple[float, float]]:
    with serve(PLAN_APP) as server:
        _load_s(server.url, _query(None))
        time.sleep(SETTLE_S)
        for _ in range(ROUNDS):
            yield _load_s(server.url, _query(stages)), _load_s(server.url, _query(None))


def _measurement(pairs: list[tuple[float, float]], what: str, stages: list[dict]) -> Measurement:
    measured, reference = [p[0] for p in pairs], [p[1] for p in pairs]
    return Measurement(statistics.median(measured) * 1e3, statistics.median(reference) * 1e3,
                       f"{what}: median of {len(pairs)} new sessions, slowest {max(measured):.2f} s (issue 53's "
                       f"target: under {ISSUE_TARGET_S:g} s); link of {len(_query(stages)):,} characters")


def probe_link_load() -> Measurement:
    """The 20 × 100-run ladder link: refused at the boundary, the rest of the link applied."""
    return _measurement(list(_paired(PROBE)), "20 ladders × 100 runs, refused", PROBE)


def bounded_link_load() -> Measurement:
    """The largest programme the default bound allows, priced, with the two costliest tabs open."""
    return _measurement(list(_paired(BOUNDED)), "2 ladders × 100 runs, priced", BOUNDED)


def _beside_three(url: str, stages: list[dict] | None, links: list[float]) -> float:
    """Another session's default Plan page load while three sessions load `stages` (None: the default plan)."""
    threads = [threading.Thread(target=_load_into, args=(links, url, _query(stages))) for _ in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)  # the three links are being priced
    seconds = _load_s(url, _query(None))
    for thread in threads:
        thread.join()
    return seconds


def links_with_another_user() -> Measurement:
    """Three probe links loading at once, each in its own session; another session's default Plan page load
    meanwhile, against the same load alone (and, in the detail, beside three bounded links and beside three loads
    of the default plan)."""
    beside: dict[str, list[float]] = {"probe": [], "bounded": [], "default": []}
    loads: dict[str, list[float]] = {"probe": [], "bounded": [], "default": []}
    alone: list[float] = []
    with serve(PLAN_APP) as server:
        _load_s(server.url, _query(None))
        time.sleep(SETTLE_S)
        for _ in range(ROUNDS):
            alone.append(_load_s(server.url, _query(None)))
            for name, stages in (("probe", PROBE), ("bounded", BOUNDED), ("default", None)):
                beside[name].append(_beside_three(server.url, stages, loads[name]))
    median = {name: statistics.median(values) for name, values in beside.items()}
    return Measurement(median["probe"] * 1e3, statistics.median(alone) * 1e3,
                       f"median of {ROUNDS} rounds, slowest {max(beside['probe']):.2f} s (issue 53's target: under "
                       f"{ISSUE_TARGET_S:g} s); the three probe links loaded in a median "
                       f"{statistics.median(loads['probe']):.2f} s. Beside three links of the largest programme "
                       f"allowed: {median['bounded']:.2f} s (the links {statistics.median(loads['bounded']):.2f} s); "
                       f"beside three sessions opening the default plan: {median['default']:.2f} s")
