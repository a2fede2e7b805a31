"""The query layer warmed once per process: Ibis and DuckDB imported (about 1 s) and each Retrospective tab's
aggregates and figure's queries compiled and run on the bundled FOCUS sample (its registry entry's ``run`` over the
whole sample, compared with the default scenario), so that a server's first Retrospective view does not pay for them
(the compiled SQL is kept by shape, ``compiled``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "samples" / "focus_sample.csv"


def warm_up(sample: Path = SAMPLE, stop: threading.Event | None = None) -> None:
    """Import ``sample`` and run every tab's aggregates on it (``tabs.TAB_QUERIES``), then every figure's queries
    (``tabs.run`` of each ``registry.FIGURES`` entry over `view.whole`); the results are dropped. Ends before the next
    step once ``stop`` is set (the process is exiting). A failure is logged, never raised: the
    pages then compile their queries when first drawn, as without it; an engine the settings cannot open (say
    Spark without PySpark) is logged in one line, the pages say the same."""
    log = logging.getLogger(__name__)
    try:
        from dashboard import settings
        from dashboard.ingest import import_path
        from dashboard.query import engine, tables
        from dashboard.retro import registry, tabs
        from dashboard.retro.view import whole

        try:
            backend = engine.default()
        except settings.SettingError as error:
            log.warning("the query layer's warm-up was skipped: %s", error)
            return
        usage = tables.table_of(import_path(sample)[0], backend)
        view = whole(usage)
        steps: list[Callable[[], object]] = [partial(queries, usage) for queries in tabs.TAB_QUERIES.values()]
        steps += [partial(tabs.run, entry, view) for entry in registry.FIGURES]
        for step in steps:
            if stop is not None and stop.is_set():
                return
            step()
    except Exception:  # a warm-up that fails costs nothing but its time
        log.warning("the query layer's warm-up failed", exc_info=True)
