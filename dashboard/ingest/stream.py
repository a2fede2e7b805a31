"""Streamed import: a large export read in bounded batches through the same format descriptions and row book.

``stream_import`` reads a delimited text file (optionally .gz) with pyarrow's streaming CSV reader, or a
Parquet file or folder of parts batch by batch, and hands each batch of canonical rows to a ``sink``; memory
grows with the batch size, not with the file. Each batch goes through ``engine.read_table`` exactly as an
in-memory import does, with its rows numbered by their source line, so the row accounting, the rejected-row
reasons and the refusals are those of ``load.import_path``. What needs the whole file is checked across
batches: one currency, every line one row (blank lines, cells with line breaks and malformed rows need the
careful reader, which is in-memory: ``NotStreamable``). A note that differs between batches (one carrying a
count or an amount) is kept per batch, prefixed with the lines it covers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from dashboard.ingest import budget, parquet_size
from dashboard.ingest.billing import single_currency
from dashboard.ingest.bounded import checked_parts
from dashboard.ingest.decode import (
    DELIMITER_NAMES,
    decode_arrow,
    detect_decimal_comma,
    header_line_of,
    header_names,
    refuse_decimal_comma,
    selected_frame,
    to_utf8,
)
from dashboard.ingest.detect import detect_format
from dashboard.ingest.engine import column_plan, read_table
from dashboard.ingest.formats import FORMAT_IDS, FORMATS
from dashboard.ingest.load import DEFAULT_OPTIONS, Progress
from dashboard.ingest.schema import ImportReport, ReadOptions, UnreadableFile, empty_usage, issues_frame

BATCH_ROWS = 200_000
_PREFIX_BYTES = (1 << 22) + (1 << 16)  # the longest header decode reads, plus its sniffing window
_COUNT_CHUNK = 1 << 24

Sink = Callable[[pd.DataFrame], None]


class NotStreamable(UnreadableFile):
    """A file the streamed reader cannot read row for row; the in-memory import can (the message says why)."""


_GROUPS = ["team", "pricing", "currency"]
_TOTALS = ["period_start", "period_end", "gpu_hours", "cost", *_GROUPS]


class Totals:
    """A sink that keeps what an import's summary reads: GPU-hours and cost summed by team, pricing and currency,
    with each group's earliest start and latest end.

    ``table`` has those columns of the usage table, and the file's totals, per-team sums, spot share, currency and
    period; its memory grows with the groups, not with the rows.
    """

    def __init__(self) -> None:
        self.table = empty_usage()[_TOTALS]

    def add(self, usage: pd.DataFrame) -> None:
        """Fold one batch of canonical rows into the sums."""
        rows = usage[_TOTALS] if len(self.table) == 0 else pd.concat([self.table, usage[_TOTALS]], ignore_index=True)
        sums = rows.groupby(_GROUPS, dropna=False, sort=False).agg(
            period_start=("period_start", "min"), period_end=("period_end", "max"),
            gpu_hours=("gpu_hours", "sum"), cost=("cost", "sum"))
        self.table = sums.reset_index()[_TOTALS]


ISSUES_SAMPLE_ROWS = 10_000  # rejected rows kept with their line and reason; the rest are counted


@dataclass
class SampledReport(ImportReport):
    """An import report whose ``rejected`` frame holds the first rows only, with the full count (``excluded`` is
    whole: the summary breaks it down by rule)."""

    excluded_count: int = 0
    rejected_count: int = 0

    @property
    def rows_excluded(self) -> int:
        return self.excluded_count

    @property
    def rows_rejected(self) -> int:
        return self.rejected_count


@dataclass
class _Book:
    """What the batches add up to: the report's parts (every excluded row; the first ISSUES_SAMPLE_ROWS rejected
    rows and how many there were), the currencies seen and the notes of each batch."""

    format_id: str
    rows_read: int = 0
    rows_used: int = 0
    excluded: list[pd.DataFrame] = field(default_factory=list)
    rejected: list[pd.DataFrame] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {"excluded": 0, "rejected": 0})
    notes: list[tuple[int, int, list[str]]] = field(default_factory=list)  # first line, last line, notes
    currencies: set[str] = field(default_factory=set)

    def keep(self, kind: str, part: pd.DataFrame) -> None:
        """Count the excluded or rejected rows ``part``; keep every excluded row, and rejected ones while fewer than
        ISSUES_SAMPLE_ROWS are kept (a file of unreadable rows would otherwise hold them all in memory)."""
        kept = getattr(self, kind)
        room = ISSUES_SAMPLE_ROWS - sum(len(p) for p in kept) if kind == "rejected" else len(part)
        if room > 0:
            kept.append(part.iloc[:room])
        self.counts[kind] += len(part)

    def report(self, file_warnings: list[str]) -> ImportReport:
        """The import report of every batch together."""
        excluded = _joined(self.excluded)
        rejected = _joined(self.rejected)
        listed = [f"{self.counts['rejected']:,} rows were rejected; the first {ISSUES_SAMPLE_ROWS:,} are listed "
                  "with their line and reason."] if self.counts["rejected"] > ISSUES_SAMPLE_ROWS else []
        return SampledReport(format=self.format_id, rows_read=self.rows_read, rows_used=self.rows_used,
                             excluded=excluded, rejected=rejected,
                             warnings=file_warnings + _merged(self.notes) + listed,
                             excluded_count=self.counts["excluded"], rejected_count=self.counts["rejected"])


def _joined(parts: list[pd.DataFrame]) -> pd.DataFrame:
    if not parts:
        return issues_frame()
    joined = pd.concat(parts, ignore_index=True)
    return issues_frame(joined["line"], joined["reason"]).sort_values("line", ignore_index=True, kind="stable")


def _merged(notes: list[tuple[int, int, list[str]]]) -> list[str]:
    """Each batch's notes: a note every batch gave alike once, the others prefixed with their batch's lines."""
    everywhere = set.intersection(*(set(n) for _, _, n in notes)) if notes else set()
    merged: list[str] = []
    for first, last, batch_notes in notes:
        for note in batch_notes:
            text = note if note in everywhere or len(notes) == 1 else f"Lines {first:,}–{last:,}: {note}"
            if text not in merged:
                merged.append(text)
    return merged


def _read_batch(book: _Book, frame: pd.DataFrame, filename: str, options: ReadOptions, sink: Sink) -> None:
    """One batch through the format's description: used rows to ``sink``, the rest into the book."""
    result = read_table(FORMATS[book.format_id], frame, options, filename)
    usage = result.usage
    book.currencies.update(usage["currency"].dropna().unique().tolist())
    if len(book.currencies) > 1:
        single_currency(pd.Series(sorted(book.currencies), dtype="string"), filename)
    book.rows_read += len(frame)
    book.rows_used += len(usage)
    for kind, part in (("excluded", result.excluded), ("rejected", result.rejected)):
        if len(part):
            book.keep(kind, part)
    if len(frame):
        book.notes.append((int(frame.index[0]), int(frame.index[-1]), result.warnings))
    if len(usage):
        sink(usage)


def _open(path: Path, compression: str | None) -> pa.NativeFile:
    return pa.input_stream(str(path), compression=compression)


def _line_count(path: Path, compression: str | None) -> tuple[int, bytes]:
    """Physical lines of a (possibly gzipped) text file, counted in chunks, and its last 64 KiB."""
    newlines = 0
    tail = b""
    with _open(path, compression) as stream:
        while chunk := stream.read(_COUNT_CHUNK):
            newlines += int(np.count_nonzero(np.frombuffer(chunk, dtype=np.uint8) == 10))
            tail = (tail + chunk)[-(1 << 16):]
    return newlines + (0 if tail.endswith(b"\n") else 1), tail


def _text_batches(path: Path, compression: str | None, names: list[str], delimiter: str, keep: list[str],
                  categorical: set[str], batch_rows: int, block_bytes: int) -> Iterator[pa.Table]:
    """Tables of at least ``batch_rows`` rows (the last one fewer) read from the text file in blocks."""
    invalid: list[object] = []

    def on_invalid(row: object) -> str:
        invalid.append(row)
        return "skip"

    reader = pa_csv.open_csv(
        _open(path, compression),
        read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1, block_size=block_bytes),
        parse_options=pa_csv.ParseOptions(delimiter=delimiter, invalid_row_handler=on_invalid,
                                          ignore_empty_lines=True),
        convert_options=pa_csv.ConvertOptions(
            column_types={name: pa.dictionary(pa.int32(), pa.large_string()) if name in categorical
                          else pa.large_string() for name in keep},
            include_columns=keep, strings_can_be_null=True, quoted_strings_can_be_null=True),
    )
    pending: list[pa.RecordBatch] = []
    count = 0
    for batch in reader:
        if invalid:
            raise NotStreamable(f"{path.name} has a row that does not fit its header")
        pending.append(batch)
        count += batch.num_rows
        if count >= batch_rows:
            yield pa.Table.from_batches(pending)
            pending, count = [], 0
    if invalid:
        raise NotStreamable(f"{path.name} has a row that does not fit its header")
    if pending:
        yield pa.Table.from_batches(pending)


def _stream_text(path: Path, compression: str | None, filename: str, format: str | None, options: ReadOptions,
                 sink: Sink, batch_rows: int, progress: Progress) -> ImportReport:
    with _open(path, compression) as stream:
        prefix = stream.read(_PREFIX_BYTES)
    text, encoding, _ = to_utf8(prefix, filename)
    if encoding not in ("utf-8", "utf-8-sig"):
        raise NotStreamable(f"{filename} is not UTF-8 text")
    line = header_line_of(text, filename)
    if not line.strip() or text.startswith((b"\r", b"\n")):
        raise NotStreamable(f"{filename} does not start with its header line")
    delimiter, names = header_names(line, filename)
    format_id = format or detect_format(names, filename)
    if format_id not in FORMATS:
        raise UnreadableFile(f"Unknown format {format_id!r}. Known formats: {', '.join(FORMAT_IDS)}.")
    fmt = FORMATS[format_id]
    if not fmt.row_local:
        raise NotStreamable(f"{fmt.noun} is read as a whole (its rows depend on each other)")
    progress(0.02, "counting lines")
    lines, tail = _line_count(path, compression)
    last_line = tail.rstrip(b"\r\n")
    if last_line[last_line.rfind(b"\n") + 1:].count(b'"') % 2:
        raise NotStreamable(f"{filename} ends inside a quoted cell")
    plan = column_plan(fmt, names)
    wanted = {w.lower() for w in plan.keep} if plan else None
    keep = names if wanted is None else [n for n in names if n.lower() in wanted]
    as_category = {n for n in keep if plan and n.lower() in {c.lower() for c in plan.categorical}}
    row_bytes = max(len(text) // max(text.count(b"\n"), 1), 16)
    block_bytes = int(min(max(row_bytes * batch_rows // 4, 8 * row_bytes, 1 << 12), 1 << 24))
    book = _Book(format_id)
    file_warnings: list[str] = []
    first_line = 2
    try:
        for table in _text_batches(path, compression, names, delimiter, keep, as_category, batch_rows, block_bytes):
            frame = selected_frame(table, as_category, first_line)
            if first_line == 2:
                if options.decimal_comma:
                    refuse_decimal_comma(frame, delimiter, filename)
                if delimiter == ";" and detect_decimal_comma(frame):
                    options = replace(options, decimal_comma=True)
                    file_warnings.append("Numbers use decimal commas (semicolon-delimited file with values like "
                                         "'1,5'); they were read as 1.5.")
                if delimiter != ",":
                    file_warnings.append(f"Columns are separated by {DELIMITER_NAMES[delimiter]}s.")
            _read_batch(book, frame, filename, options, sink)
            first_line += len(frame)
            progress(min(0.05 + 0.9 * first_line / lines, 0.95), f"read {first_line - 2:,} of {lines - 1:,} rows")
    except pa.ArrowInvalid as error:
        raise NotStreamable(f"{filename} has a cell pyarrow cannot read as text ({error})") from None
    if first_line - 1 != lines:
        raise NotStreamable(f"{filename} has blank lines or cells with line breaks")
    if book.rows_read == 0:
        raise UnreadableFile(
            f"{filename or 'The file'} has a header ({len(names)} columns) but no data rows, so there is nothing "
            "to import. Check that the export covers the period you meant.")
    return book.report(file_warnings)


def _stream_parquet(parts: list[Path], filename: str, format: str | None, options: ReadOptions, sink: Sink,
                    batch_rows: int, progress: Progress) -> ImportReport:
    readers = [parquet_size.file_reader(part) for part in parts]
    try:
        with budget.reserved(filename):
            return _stream_parquet_files(parts, readers, filename, format, options, sink, batch_rows, progress)
    finally:
        for _, close in readers:
            close()


def _stream_parquet_files(parts: list[Path], readers: list[tuple[parquet_size.ReadAt, Callable[[], None]]],
                          filename: str, format: str | None, options: ReadOptions, sink: Sink, batch_rows: int,
                          progress: Progress) -> ImportReport:
    """The parts' footers and the page headers of the columns the format reads are checked first (the column
    limit, then a batch's estimated peak against the import budget, held for the import: ``batch_rows`` rows, or
    fewer when they would pass half the budget), then the parts are read a batch at a time, those columns only."""
    name = filename or "The Parquet file"
    files = [(parquet_size.open_checked(part, read_at, part.stat().st_size, name), read_at)
             for part, (read_at, _) in zip(parts, readers, strict=True)]
    total = sum(f.metadata.num_rows for f, _ in files)
    stored = files[0][0].schema_arrow.names
    header = decode_arrow(files[0][0].schema_arrow.empty_table()).table
    if options.decimal_comma:
        refuse_decimal_comma(header, None, filename)
    columns = header.columns
    format_id = format or detect_format(list(columns), filename)
    if format_id not in FORMATS:
        raise UnreadableFile(f"Unknown format {format_id!r}. Known formats: {', '.join(FORMAT_IDS)}.")
    fmt = FORMATS[format_id]
    if not fmt.row_local:
        raise NotStreamable(f"{fmt.noun} is read as a whole (its rows depend on each other)")
    plan = column_plan(fmt, list(columns))
    wanted = {c.lower() for c in plan.categorical} if plan else set()
    categorical = frozenset(c for c in columns if c.lower() in wanted)
    kept = {k.lower() for k in plan.keep} if plan else None
    read = None if kept is None or len(set(stored)) != len(stored) else [
        s for s, c in zip(stored, columns, strict=True) if c.lower() in kept]
    batches = parquet_size.BatchPlan()

    def add(group: parquet_size.ParquetSize, _: parquet_size.ParquetSize) -> None:
        batches.add(group)
        budget.need(batches.nested, name, f"{parquet_size.describe(group)}, a row group at a time")

    parquet_size.measure(files, name, read, each_group=add)
    batch_rows = batches.rows(batch_rows, budget.budget_bytes())
    budget.need(batches.need(batch_rows), name, f"{batch_rows:,} rows at a time")
    book = _Book(format_id)
    first_line = 2
    allocated = parquet_size.AllocationWatch(name)
    for part, _ in files:
        for batch in part.iter_batches(batch_size=batch_rows, columns=read):
            allocated.check()
            frame = decode_arrow(pa.Table.from_batches([batch]), first_line, categorical).table
            _read_batch(book, frame, filename, options, sink)
            first_line += len(frame)
            progress(min(0.05 + 0.9 * first_line / max(total, 1), 0.95), f"read {first_line - 2:,} of {total:,} rows")
    if book.rows_read == 0:
        raise UnreadableFile(f"{filename or 'The Parquet file'} has columns but no rows, so there is nothing to "
                             "import. Check that the export covers the period you meant.")
    return book.report([])


def _no_progress(fraction: float, stage: str) -> None:
    """Progress sink used when the caller passes none."""


def stream_import(path: str | Path, sink: Sink, *, format: str | None = None,
                  options: ReadOptions = DEFAULT_OPTIONS, batch_rows: int = BATCH_ROWS,
                  progress: Progress | None = None) -> ImportReport:
    """Import ``path`` (CSV/TSV, .gz, Parquet, or a folder of Parquet parts) batch by batch into ``sink``.

    Returns the report of the whole file. Raises ``NotStreamable`` (before or after batches were sunk: the
    caller discards them) when only the in-memory import can read the file, and ``UnreadableFile`` as it does.
    """
    path = Path(path)
    progress = progress or _no_progress
    if path.is_dir():
        parts = checked_parts(path.rglob("*.parquet"), path, bounded=False)
        if not parts:
            raise UnreadableFile(f"The folder {path.name} holds no .parquet files. Give a file, or a folder of "
                                 "Parquet parts of one export.")
        report = _stream_parquet(parts, path.name, format, options, sink, batch_rows, progress)
    else:
        with open(path, "rb") as stream:
            magic = stream.read(4)
        if magic == b"PK\x03\x04":
            raise NotStreamable(f"{path.name} is a zip archive")
        if magic == b"PAR1":
            report = _stream_parquet([path], path.name, format, options, sink, batch_rows, progress)
        else:
            compression = "gzip" if magic[:2] == b"\x1f\x8b" else None
            report = _stream_text(path, compression, path.name.removesuffix(".gz") if compression else path.name,
                                  format, options, sink, batch_rows, progress)
    if not report.balanced:
        raise RuntimeError(f"{report.format} reader lost rows: {report}")
    progress(1.0, "done")
    return report
