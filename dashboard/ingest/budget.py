"""One memory budget for every in-memory import of the process, shared by all sessions.

An in-memory import (``load.import_bytes`` / ``import_path``, and ``decode.decode`` on its own) holds a
*reservation*: the bytes it is estimated to need at its peak, in a ledger of the whole process bounded by
``PLANNER_IMPORT_MEMORY_MB``. The estimate grows as the import learns more: while a .gz or .zip layer is inflated
(twice the bytes inflated so far), then from the rows, columns and bytes of the table about to be read (a Parquet
file's pages as ``parquet_size`` measures them, a text file's lines and header) before any of it is parsed. A
reservation larger than the whole budget is refused (``LimitExceeded``: import it into the workspace, which reads in
batches); one that does not fit beside the other imports' waits up to ``PLANNER_IMPORT_WAIT_S`` for them to finish,
then is refused (``ImportsBusy``: retry, or use ``workspace import``). So N sessions importing at once cannot add up
past the budget, and a hostile file is refused from its estimate, before its memory is spent. The reservation is
released when the import ends, whatever way it ends; the imported table then lives in the upload store, which has
its own bound (``PLANNER_IMPORT_STORE_MB``).

The estimates' factors were measured on FOCUS exports (`bench.ingest_bench.focus_table`): the fast pyarrow path
peaks at about 1.4× the inflated text, the careful csv-module path at about 11× (≈ 230 bytes a cell), Parquet at
about 10 bytes a cell when dictionary-encoded; each factor here is rounded up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from dashboard import settings
from dashboard.ingest.bounded import LimitExceeded

INFLATE_FACTOR = 2  # a layer being inflated: its output buffer and the copy handed on
FAST_TEXT_FACTOR = 2  # the fast path: the text, plus…
FAST_CELL_BYTES = 24  # …per cell read: Arrow offsets, the pandas frame and the format reader's columns
CAREFUL_TEXT_FACTOR = 10  # the careful path: the text as a Python str and its cells as Python strings, plus…
CAREFUL_CELL_BYTES = 64  # …per cell (short rows' missing cells included): list slots, object arrays, masks
PARQUET_BYTES_FACTOR = 2  # Parquet: its columns decoded (`parquet_size`: values, strings, levels), plus…
PARQUET_CELL_BYTES = 40  # …per cell turned into strings, plus…
PARQUET_NESTED_VALUE_BYTES = 120  # …per value of a list, map or struct (a Python object, then JSON text)


class ImportsBusy(LimitExceeded):
    """An import that did not fit beside the other imports' reservations in time; the message says to retry."""


_CONDITION = threading.Condition()
_HELD = [0]  # bytes reserved by every import in the process


def _mb(nbytes: int) -> str:
    return f"{nbytes / 1e6:,.0f} MB"


def budget_bytes() -> int:
    """The budget of all imports together, in bytes (``PLANNER_IMPORT_MEMORY_MB``)."""
    return settings.megabytes(settings.IMPORT_MEMORY_MB)


def held_bytes() -> int:
    """Bytes reserved by the imports running now."""
    with _CONDITION:
        return _HELD[0]


@dataclass
class Reservation:
    """One import's share of the budget; ``need`` grows it, leaving it closes it."""

    name: str
    held: int = 0
    waiting: Callable[[str], None] | None = None  # told once when the import starts waiting for memory

    def need(self, nbytes: int, what: str) -> None:
        """Hold at least ``nbytes`` for this import (``what`` says what they are for, in the messages).

        Refused at once when ``nbytes`` passes the whole budget; waits up to ``PLANNER_IMPORT_WAIT_S`` when it
        does not fit beside the other imports, then is refused with ``ImportsBusy``.
        """
        budget = budget_bytes()
        if nbytes <= self.held:
            return
        if nbytes > budget:
            raise LimitExceeded(
                f"{self.name} needs about {_mb(nbytes)} of memory to be imported here ({what}), more than the "
                f"{_mb(budget)} this server gives all imports together ({settings.IMPORT_MEMORY_MB}). Import it "
                "into the workspace instead (`python -m dashboard workspace import FILE NAME`, which reads it in "
                f"batches), export a shorter period, or have the server's operator raise {settings.IMPORT_MEMORY_MB}."
            )
        deadline = time.monotonic() + settings.limit(settings.IMPORT_WAIT_S)
        told = False
        with _CONDITION:
            while _HELD[0] - self.held + nbytes > budget:
                left = deadline - time.monotonic()
                if left <= 0:
                    free = max(budget - _HELD[0] + self.held, 0)
                    raise ImportsBusy(
                        f"The server is busy with other imports: {self.name} needs about {_mb(nbytes)} of memory "
                        f"({what}), and only {_mb(free)} of the {_mb(budget)} all imports share "
                        f"({settings.IMPORT_MEMORY_MB}) came free within {settings.limit(settings.IMPORT_WAIT_S)} s. "
                        "Try again in a minute, or import it into the workspace with `python -m dashboard "
                        "workspace import FILE NAME`, which reads it in batches."
                    )
                if not told and self.waiting is not None:
                    told = True
                    self.waiting("waiting for memory other imports hold")
                _CONDITION.wait(min(left, 1.0))
            _HELD[0] += nbytes - self.held
            self.held = nbytes

    def release(self) -> None:
        """Give the reservation back (every waiting import looks again)."""
        with _CONDITION:
            _HELD[0] -= self.held
            self.held = 0
            _CONDITION.notify_all()


_CURRENT: ContextVar[Reservation | None] = ContextVar("import_reservation", default=None)


@contextmanager
def reserved(name: str, waiting: Callable[[str], None] | None = None) -> Iterator[Reservation]:
    """This import's reservation, opened here and released on leaving; an import already running in this
    context (``decode`` called by ``import_bytes``) keeps its own."""
    outer = _CURRENT.get()
    if outer is not None:
        yield outer
        return
    reservation = Reservation(name or "The file", waiting=waiting)
    token = _CURRENT.set(reservation)
    try:
        yield reservation
    finally:
        _CURRENT.reset(token)
        reservation.release()


def need(nbytes: int, name: str, what: str) -> None:
    """Grow the running import's reservation to ``nbytes`` (a one-off check against the budget outside one)."""
    reservation = _CURRENT.get()
    if reservation is not None:
        reservation.need(nbytes, what)
        return
    with reserved(name) as once:
        once.need(nbytes, what)


def reserved_bytes() -> int:
    """Bytes the running import holds (0 outside one)."""
    reservation = _CURRENT.get()
    return reservation.held if reservation is not None else 0


def text_need(text_bytes: int, cells: int, careful: bool) -> int:
    """The estimated peak of reading ``text_bytes`` of delimited text into ``cells`` cells."""
    if careful:
        return CAREFUL_TEXT_FACTOR * text_bytes + CAREFUL_CELL_BYTES * cells
    return FAST_TEXT_FACTOR * text_bytes + FAST_CELL_BYTES * cells


def parquet_need(decoded_bytes: int, cells: int, nested_values: int = 0) -> int:
    """The estimated peak of reading a Parquet file's columns (``decoded_bytes`` once decoded, ``nested_values``
    of them inside lists, maps and structs) into string cells."""
    return (PARQUET_BYTES_FACTOR * decoded_bytes + PARQUET_CELL_BYTES * cells
            + PARQUET_NESTED_VALUE_BYTES * nested_values)
