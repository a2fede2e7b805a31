"""Canonical usage rows written as a Parquet dataset partitioned by month (``month=YYYY-MM/part-N.parquet``).

One Parquet writer is open per month, so a batch that spans two months adds row groups to each and a file of any
length makes few files. Each batch's rows of a month are put in order (``order``: ``sorting.sorted_rows`` at import)
and written as row groups of at most ``ROW_GROUP_ROWS`` rows, then handed to ``observe`` (the rollups' partial sums
at import) while they are in memory, so nothing reads the rows back. The order is put on a worker thread while the
caller writes the batch before (Arrow's sort runs without the GIL), so a batch is written one ``write`` later, the
last by ``close``; an error of the worker is raised by the ``write`` or ``close`` that writes its batch.

Times are stored in microseconds (UTC), which every engine reads (Spark does not read nanosecond Parquet timestamps);
the export's times are whole seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dashboard.ingest.schema import CANONICAL_COLUMNS

PARTITION = "month"
NO_MONTH = "none"  # rows without a start time
MAX_OPEN_WRITERS = 48
ROW_GROUP_ROWS = 16_384  # a sorted batch of 200,000 rows is 13 row groups: a filter on one team skips most of them
_ARROW_TYPES = {"datetime64[ns, UTC]": pa.timestamp("us", tz="UTC"), "float64": pa.float64(), "string": pa.string(),
                "int64": pa.int64()}
SCHEMA = pa.schema([(name, _ARROW_TYPES[dtype]) for name, dtype in CANONICAL_COLUMNS.items()])


def to_arrow(usage: pd.DataFrame) -> pa.Table:
    """A canonical usage frame as an Arrow table of ``SCHEMA``."""
    table = pa.Table.from_pandas(usage[list(CANONICAL_COLUMNS)], preserve_index=False)
    return table.cast(SCHEMA, safe=False)


def to_frame(table: pa.Table) -> pd.DataFrame:
    """Rows read back from the dataset as a canonical usage frame (the dtypes of ``CANONICAL_COLUMNS``)."""
    table = table.select(list(CANONICAL_COLUMNS))
    frame = table.to_pandas(types_mapper={pa.string(): pd.StringDtype(), pa.large_string(): pd.StringDtype()}.get)
    return frame.astype(CANONICAL_COLUMNS)


class MonthWriter:
    """Writes batches of canonical rows under ``folder``, one open file per month; ``close`` when done. ``order``
    puts a batch's rows of a month in the order they are written in; ``observe`` sees them (the month, the rows as
    written) once written."""

    def __init__(self, folder: Path, prefix: str = "part", order: Callable[[pa.Table], pa.Table] | None = None,
                 observe: Callable[[str, pa.Table], None] | None = None) -> None:
        self.folder = folder
        self.prefix = prefix  # the files' names: ``<prefix>-N.parquet`` (an append's own, beside the linked files)
        self.order = order
        self.observe = observe
        self.rows = 0
        self.start: pd.Timestamp | None = None
        self.end: pd.Timestamp | None = None
        self._open: dict[str, pq.ParquetWriter] = {}
        self._parts: dict[str, int] = {}
        self._worker: ThreadPoolExecutor | None = None  # puts a batch in order while the one before is written
        self._ordering: Future[list[tuple[str, pa.Table]]] | None = None

    def _writer(self, month: str) -> pq.ParquetWriter:
        if month not in self._open:
            if len(self._open) >= MAX_OPEN_WRITERS:
                oldest = next(iter(self._open))
                self._open.pop(oldest).close()
            part = self._parts.get(month, 0)
            self._parts[month] = part + 1
            folder = self.folder / f"{PARTITION}={month}"
            folder.mkdir(parents=True, exist_ok=True)
            self._open[month] = pq.ParquetWriter(folder / f"{self.prefix}-{part}.parquet", SCHEMA, compression="zstd",
                                                compression_level=1)
        return self._open[month]

    @property
    def months(self) -> list[str]:
        """The month partitions written to (``YYYY-MM``, or ``NO_MONTH``)."""
        return sorted(self._parts)

    def write(self, usage: pd.DataFrame) -> None:
        """Add ``usage`` (canonical rows) to the month partitions of its rows' start times (with ``order``: its rows
        put in order on the worker thread while the batch before is written)."""
        if not len(usage):
            return
        pieces = self._months(usage)
        if self.order is None:
            self._write(pieces)
        else:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="month-order")
            before, self._ordering = self._ordering, self._worker.submit(self._ordered, pieces, self.order)
            if before is not None:
                self._write(before.result())
        self.rows += len(usage)
        for column, pick, attr in (("period_start", min, "start"), ("period_end", max, "end")):
            value = getattr(usage[column], pick.__name__)()
            if pd.notna(value):
                seen = getattr(self, attr)
                setattr(self, attr, value if seen is None else pick(seen, value))

    @staticmethod
    def _months(usage: pd.DataFrame) -> list[tuple[str, pa.Table]]:
        """``usage``'s rows of each month (``NO_MONTH`` last), as Arrow tables of ``SCHEMA``."""
        table = to_arrow(usage)
        starts = usage["period_start"]
        months = starts.dt.year.to_numpy(dtype=float, na_value=np.nan) * 12 + starts.dt.month.to_numpy(
            dtype=float, na_value=np.nan) - 1  # months since year 0, NaN without a start
        pieces = []
        for month in np.unique(months):  # NaN sorts last
            rows = np.isnan(months) if np.isnan(month) else months == month
            name = NO_MONTH if np.isnan(month) else f"{int(month) // 12:04d}-{int(month) % 12 + 1:02d}"
            pieces.append((name, table if rows.all() else table.filter(pa.array(rows))))
        return pieces

    @staticmethod
    def _ordered(pieces: list[tuple[str, pa.Table]],
                 order: Callable[[pa.Table], pa.Table]) -> list[tuple[str, pa.Table]]:
        return [(month, order(rows)) for month, rows in pieces]

    def _write(self, pieces: list[tuple[str, pa.Table]]) -> None:
        for month, rows in pieces:
            self._writer(month).write_table(rows, row_group_size=ROW_GROUP_ROWS)
            if self.observe is not None:
                self.observe(month, rows)

    def close(self) -> None:
        """Write the batch being put in order, then close every open file and end the worker thread; the first error
        (of that batch, or a full disk while flushing) is raised once all are closed."""
        first: BaseException | None = None
        last, self._ordering = self._ordering, None
        try:
            if last is not None:
                self._write(last.result())
        except Exception as error:  # raised below, after the files are closed
            first = error
        if self._worker is not None:
            self._worker.shutdown()
            self._worker = None
        while self._open:
            _, writer = self._open.popitem()
            try:
                writer.close()
            except Exception as error:  # raised below, after the other files are closed
                first = first or error
        if first is not None:
            raise first

    def abort(self) -> None:
        """Close every open file and ignore errors, the batch being put in order not written: the files are about to
        be deleted."""
        ordering, self._ordering = self._ordering, None
        if ordering is not None:
            with suppress(Exception):
                ordering.result()
        with suppress(Exception):
            self.close()
