"""The server process's own settings, made once: browser connections without Nagle's delay, and the objects alive
after start-up left out of the garbage collector's passes. Measured by `bench.server_bench`.

Nagle: Streamlit binds its listening socket itself, with protocol number 0, and asyncio turns Nagle's algorithm off
only on sockets whose protocol reads TCP (the bug of uvicorn issue 3149), so after the first message of a rerun each
small message waited for the browser's delayed acknowledgement, about 40 ms on Linux. TCP_NODELAY set on the
listening socket is passed on to every connection Linux accepts from it; the connections already open get it too.

Garbage collector: Streamlit collects every generation after each script run (`runner.postScriptGC`), and with
pandas, pyarrow, plotly, pydantic, Ibis and DuckDB loaded that pass took about 100 ms per rerun here, during which no
message went out and the next rerun could not start. `gc.freeze()` once the pages' modules are loaded moves what is
alive then (modules, classes, compiled queries) to a generation no pass walks, so each pass looks only at what later
runs made; the pass itself, and the memory it frees, stay.
"""

from __future__ import annotations

import gc
import importlib
import os
import socket
import stat

# The modules every page imports; loaded before the freeze so that their objects are frozen too.
PAGE_MODULES = (
    "dashboard.ui.compare_view", "dashboard.ui.compare_cache", "dashboard.ui.retro_view", "dashboard.ui.retro_cache",
    "dashboard.ui.workspace_view", "dashboard.ui.upload_store", "dashboard.ui.sources", "dashboard.report",
)
_FDS = "/proc/self/fd"


def _tcp(sock: socket.socket) -> bool:
    return sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM


def connections_without_delay() -> int:
    """Set TCP_NODELAY on every TCP socket of this process; returns how many. A listening socket passes it on to the
    connections it accepts later. Where the open files cannot be listed (not Linux), nothing is changed."""
    try:
        descriptors = [int(name) for name in os.listdir(_FDS)]
    except (OSError, ValueError):
        return 0
    changed = 0
    for descriptor in descriptors:
        try:
            if not stat.S_ISSOCK(os.fstat(descriptor).st_mode):
                continue
            with socket.socket(fileno=os.dup(descriptor)) as sock:  # a duplicate: closing it leaves the server's open
                if _tcp(sock):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    changed += 1
        except OSError:  # closed meanwhile, or not ours to change
            continue
    return changed


def freeze_start_up(modules: tuple[str, ...] = PAGE_MODULES) -> None:
    """Load `modules`, then move every object alive into the generation the garbage collector never walks."""
    for name in modules:
        importlib.import_module(name)
    gc.collect()  # what is garbage already is freed, not frozen
    gc.freeze()
