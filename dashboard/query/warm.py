"""The query layer warmed once per process: Ibis and DuckDB imported (about 1 s) and each Retrospective tab's
first-view queries compiled and run on the bundled FOCUS sample, so that a server's first Retrospective view does
not pay for them (the compiled SQL is kept by shape, ``compiled``)."""

from __future__ import annotations

import logging
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "samples" / "focus_sample.csv"


def warm_up(sample: Path = SAMPLE) -> None:
    """Import ``sample`` and run every tab's queries on it (``tabs.TAB_QUERIES``); the results are dropped. A
    failure is logged, never raised: the pages then compile their queries when first drawn, as without it."""
    try:
        from dashboard.ingest import import_path
        from dashboard.query import tables, tabs

        usage = import_path(sample)[0]
        tabs.time_tabs(tables.table_of(usage))
    except Exception:  # noqa: BLE001 (a warm-up that fails costs nothing but its time)
        logging.getLogger(__name__).warning("the query layer's warm-up failed", exc_info=True)
