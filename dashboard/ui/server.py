"""The server process's garbage collection made cheap: the objects alive after start-up are frozen out of its passes.
Measured by `bench.server_bench`.

Streamlit collects every generation after each script run (`runner.postScriptGC`, on by default), and with pandas,
pyarrow, plotly, pydantic, Ibis and DuckDB loaded that pass walked every object of the process, about 140 ms per
rerun on the development machine, during which no message went out and the next rerun could not start.
`gc.freeze()` once the pages' modules are loaded moves what is alive then (modules, classes, compiled queries) to a
generation no pass walks, so each pass looks only at what later runs made; the pass itself, and the memory it frees,
stay.
"""

from __future__ import annotations

import gc
import importlib

# The modules every page imports; loaded before the freeze so that their objects are frozen too.
PAGE_MODULES = (
    "dashboard.ui.compare_view", "dashboard.ui.compare_cache", "dashboard.ui.retro_view", "dashboard.ui.retro_cache",
    "dashboard.ui.workspace_view", "dashboard.ui.upload_store", "dashboard.ui.sources", "dashboard.report",
    "dashboard.ui.retro_sources",
)


def freeze_start_up(modules: tuple[str, ...] = PAGE_MODULES) -> None:
    """Load `modules`, then move every object alive into the generation the garbage collector never walks."""
    for name in modules:
        importlib.import_module(name)
    gc.collect()  # what is garbage already is freed, not frozen
    gc.freeze()
