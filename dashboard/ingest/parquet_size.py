"""A Parquet file's real size, measured before any of its data is decoded (issue 53).

A few hundred bytes of Parquet can decode to gigabytes: one list of 3×10⁸ run-length-encoded values, a dictionary
of 4,000-character strings referenced by millions of rows, a footer naming 380,000 columns. Nothing the file
declares about itself is trusted as a bound (not ``total_byte_size``, not a chunk's value count): before a column
is read, ``open_checked`` reads the footer's length and the count of its schema's fields (refused past
``PLANNER_MAX_COLUMNS`` before pyarrow parses the footer, whose parse is charged to the import budget), and
``measure`` walks the page headers of every column chunk that will be read (a few bytes each, read from the file
itself, never the pages) to count the values pyarrow will decode, the bytes its pages inflate to and each
dictionary's entries. From them ``ColumnSize.decoded_bytes`` estimates each column in memory: fixed-width values,
strings (a dictionary-encoded chunk as its values × its entries' mean length), repetition and definition levels;
``ParquetSize.need`` turns that into the import's peak (``budget.parquet_need``) and ``check`` refuses a file
whose peak passes the import budget, naming the column and the figure. ``BatchPlan`` sizes a streamed import's
batches from the estimate: a batch of rows of flat columns, but a nested column's whole row group (one row may
hold all its values).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from dashboard import settings
from dashboard.ingest import budget
from dashboard.ingest.bounded import LimitExceeded
from dashboard.ingest.schema import UnreadableFile

ReadAt = Callable[[int, int], bytes]  # (offset, size) -> at most size bytes of the file from offset

METADATA_BYTES_FACTOR = 16  # memory parsing a Parquet footer takes, per byte of footer
_TAIL = 8  # a Parquet file ends with its footer's length (4 bytes) and b"PAR1"
_HEADER_WINDOW = 1 << 8  # bytes read for a page header, grown 16× while it does not fit
_MAX_PAGE_HEADER = 1 << 24  # pyarrow's own bound on a page header (16 MiB)
_MAX_DEPTH = 16  # nesting of Thrift structs and lists a page header or footer may have
_WIDTH = {"BOOLEAN": 1, "INT32": 4, "INT64": 8, "INT96": 12, "FLOAT": 4, "DOUBLE": 8}
_OFFSET_BYTES = 8  # a large_string offset per value
_LEVEL_BYTES = 2  # one decoded repetition or definition level (int16)
_DICTIONARY_PAGE = 2
ALLOCATION_SLACK_BYTES = 64_000_000


class _Short(Exception):
    """A Thrift struct ran past the bytes at hand."""


class _Thrift:
    """Just enough of Thrift's compact protocol to read a page header and the start of a footer."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def byte(self) -> int:
        try:
            octet = self.data[self.at]
        except IndexError:
            raise _Short from None
        self.at += 1
        return octet

    def varint(self) -> int:
        value, shift = 0, 0
        while True:
            octet = self.byte()
            value |= (octet & 0x7F) << shift
            if octet < 0x80:
                return value
            shift += 7
            if shift > 63:
                raise ValueError("a varint longer than 64 bits")

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def skip_bytes(self, count: int) -> None:
        if self.at + count > len(self.data):
            raise _Short
        self.at += count

    def list_header(self) -> tuple[int, int]:
        octet = self.byte()
        size = octet >> 4
        return (self.varint() if size == 15 else size), octet & 0x0F

    def fields(self, depth: int = 0):
        """The (field id, type) of a struct's fields in turn; a field the caller does not read must be skipped."""
        if depth > _MAX_DEPTH:
            raise ValueError("structs nested too deep")
        last = 0
        while True:
            octet = self.byte()
            kind = octet & 0x0F
            if kind == 0:
                return
            delta = octet >> 4
            last = last + delta if delta else self.zigzag()
            yield last, kind

    def skip(self, kind: int, depth: int = 0) -> None:
        if depth > _MAX_DEPTH:
            raise ValueError("values nested too deep")
        if kind in (1, 2):
            return
        if kind == 3:
            self.skip_bytes(1)
        elif kind in (4, 5, 6):
            self.varint()
        elif kind == 7:
            self.skip_bytes(8)
        elif kind == 8:
            self.skip_bytes(self.varint())
        elif kind in (9, 10):
            size, element = self.list_header()
            for _ in range(size):
                if element in (1, 2):
                    self.skip_bytes(1)
                else:
                    self.skip(element, depth + 1)
        elif kind == 11:
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self.skip(types >> 4, depth + 1)
                    self.skip(types & 0x0F, depth + 1)
        elif kind == 12:
            for _, inner in self.fields(depth + 1):
                self.skip(inner, depth + 1)
        else:
            raise ValueError(f"unknown Thrift type {kind}")


@dataclass(frozen=True)
class _Page:
    kind: int
    uncompressed: int
    compressed: int
    values: int
    header: int  # bytes of the header itself


def _page_header(data: bytes) -> _Page:
    """A Parquet ``PageHeader`` (type, sizes, the value count of its data, dictionary or v2 header)."""
    thrift = _Thrift(data)
    kind = uncompressed = compressed = values = 0
    for number, wire in thrift.fields():
        if number in (1, 2, 3) and wire == 5:
            value = thrift.zigzag()
            kind, uncompressed, compressed = (value, uncompressed, compressed) if number == 1 else (
                (kind, value, compressed) if number == 2 else (kind, uncompressed, value))
        elif number in (5, 7, 8) and wire == 12:
            for inner, inner_wire in thrift.fields(1):
                if inner == 1 and inner_wire == 5:
                    values = thrift.zigzag()
                else:
                    thrift.skip(inner_wire, 1)
        else:
            thrift.skip(wire)
    if uncompressed < 0 or compressed < 0 or values < 0:
        raise ValueError("a page header with a negative size or count")
    return _Page(kind, uncompressed, compressed, values, thrift.at)


def _read_page(read_at: ReadAt, offset: int) -> _Page:
    window = _HEADER_WINDOW
    while True:
        data = read_at(offset, window)
        try:
            return _page_header(data)
        except _Short:
            if len(data) < window or window >= _MAX_PAGE_HEADER:
                raise ValueError("a page header runs past the end of the file") from None
            window *= 16


@dataclass
class ColumnSize:
    """What one top-level column's chunks decode to, over the row groups measured."""

    name: str
    values: int = 0  # leaf values decoded (levels: a list's elements, nulls included)
    decoded_bytes: int = 0  # estimated bytes in memory once decoded (values, strings, offsets, levels)
    nested: bool = False  # a list, map or struct, turned into JSON text value by value


@dataclass
class ParquetSize:
    """A file's (or parts') measured size: rows, columns read, inflated page bytes, and each column's estimate."""

    rows: int = 0
    columns: int = 0
    uncompressed_bytes: int = 0
    column_sizes: dict[str, ColumnSize] = field(default_factory=dict)

    def need(self) -> int:
        """The import's estimated peak (``budget.parquet_need``)."""
        decoded = sum(c.decoded_bytes for c in self.column_sizes.values())
        nested = sum(c.values for c in self.column_sizes.values() if c.nested)
        return budget.parquet_need(decoded, self.rows * self.columns, nested)

    def largest(self) -> ColumnSize | None:
        return max(self.column_sizes.values(), key=lambda c: c.decoded_bytes, default=None)


def _mb(nbytes: int) -> str:
    return f"{nbytes / 1e6:,.0f} MB"


def _column_limit(fields: int, name: str) -> None:
    ceiling = settings.limit(settings.MAX_COLUMNS)
    if fields > ceiling:
        raise LimitExceeded(
            f"{name} has {fields:,} columns, more than the {ceiling:,} an import reads ({settings.MAX_COLUMNS}). "
            "Export only the columns you need, or have the server's operator raise the limit."
        )


def _schema_fields(head: bytes) -> int:
    """The fields of a footer's schema (its root excluded), from the first bytes of the footer."""
    thrift = _Thrift(head)
    for number, wire in thrift.fields():
        if number == 2 and wire == 9:
            return max(thrift.list_header()[0] - 1, 0)
        thrift.skip(wire)
    return 0


def bytes_reader(data: bytes) -> ReadAt:
    """``ReadAt`` over bytes in memory (no copy of the whole)."""
    view = memoryview(data)
    return lambda offset, size: bytes(view[max(offset, 0): max(offset, 0) + size])


def file_reader(path: Path) -> tuple[ReadAt, Callable[[], None]]:
    """``ReadAt`` over a file, and its closer."""
    stream = open(path, "rb")  # noqa: SIM115 (closed by the caller through the closer)

    def read_at(offset: int, size: int) -> bytes:
        stream.seek(max(offset, 0))
        return stream.read(size)

    return read_at, stream.close


def open_checked(source: bytes | Path, read_at: ReadAt, file_bytes: int, name: str) -> pq.ParquetFile:
    """``source`` opened as Parquet once its footer is within bounds: its length charged to the import budget
    (``METADATA_BYTES_FACTOR`` bytes a byte) and its schema's fields within ``PLANNER_MAX_COLUMNS``, both read
    from the file's last bytes before pyarrow parses the footer. Opened without pre-buffering: a pre-buffered
    reader keeps every column chunk it has read until the file object goes, and a folder's parts are open
    together (3 GB of Arrow memory held by the end of a 10⁸-row quarter)."""
    tail = read_at(file_bytes - _TAIL, _TAIL) if file_bytes >= 12 else b""
    if len(tail) == _TAIL and tail[4:] == b"PAR1":
        footer = int.from_bytes(tail[:4], "little")
        if 0 < footer <= file_bytes - 12:
            budget.need(METADATA_BYTES_FACTOR * footer, name, "reading its metadata")
            try:
                fields = _schema_fields(read_at(file_bytes - _TAIL - footer, min(footer, 1 << 10)))
            except (_Short, ValueError):
                fields = 0  # pyarrow's own parse says what is wrong
            _column_limit(fields, name)
    try:
        parquet = pq.ParquetFile(pa.BufferReader(source) if isinstance(source, bytes) else source)
    except (pa.ArrowException, OSError) as exc:
        raise UnreadableFile(
            f"{name} starts like a Parquet file but cannot be read ({exc}); it is probably truncated or corrupt. "
            "Export it again, or export CSV instead."
        ) from None
    _column_limit(parquet.metadata.num_columns, name)
    strings = [f.name for f in parquet.schema_arrow if _spelt(f.type)]  # read as dictionaries: ``hold_spelt_out``
    if not strings:
        return pq.ParquetFile(pa.BufferReader(source) if isinstance(source, bytes) else source,
                              metadata=parquet.metadata, pre_buffer=False)
    return pq.ParquetFile(pa.BufferReader(source) if isinstance(source, bytes) else source,
                          metadata=parquet.metadata, read_dictionary=strings, pre_buffer=False)


def _spelt(kind: pa.DataType) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind)
                or pa.types.is_large_binary(kind))


def hold_spelt_out(column: pa.ChunkedArray, column_name: str) -> None:
    """Before a dictionary-encoded string ``column`` is spelt out value by value: when its values' bytes pass
    all the running import holds (a dictionary whose long entries most rows reference, beyond its mean the page
    walk counted), the reservation grows by them first, or the import is refused."""
    if not pa.types.is_dictionary(column.type) or not _spelt(column.type.value_type):
        return
    spelt = 0
    for chunk in column.chunks:
        lengths = pc.binary_length(chunk.dictionary).fill_null(0)
        spelt += int(pc.sum(lengths.take(chunk.indices)).as_py() or 0) + _OFFSET_BYTES * len(chunk)
    held = budget.reserved_bytes()
    if spelt > held:
        budget.need(held + spelt, "The Parquet file", f"its column {column_name!r} spelt out: {_mb(spelt)}")


class _Pages:
    """The page headers one measure may still read (``PLANNER_MAX_PARQUET_PAGES``): pyarrow writes up to 20,000
    rows a page, so a file of many more pages than that is crafted, and walking them would take minutes."""

    def __init__(self, name: str) -> None:
        self.name, self.left = name, settings.limit(settings.MAX_PARQUET_PAGES)

    def take(self, count: int = 1) -> None:
        self.left -= count
        if self.left < 0:
            ceiling = settings.limit(settings.MAX_PARQUET_PAGES)
            raise LimitExceeded(
                f"{self.name} has more than {ceiling:,} pages, more than an import measures "
                f"({settings.MAX_PARQUET_PAGES}). Export it again with fewer, larger pages (pyarrow's defaults), "
                "split it into parts, or have the server's operator raise the limit."
            )


def _chunk_size(chunk: pq.ColumnChunkMetaData, physical: str, fixed_width: int, levels: int,
                read_at: ReadAt | None, name: str, pages: _Pages) -> tuple[int, int, int]:
    """One column chunk's (values, inflated page bytes, decoded bytes), from its page headers (``read_at``; None:
    from what the footer declares alone, a first look that refuses a file by its own account).

    The pages are walked over the byte range pyarrow reads (from the dictionary page or the first data page, for
    the chunk's compressed size) until the values it declares are seen; the larger of the declared and the
    counted values is kept, and every page's inflated size is counted, whatever the chunk's metadata says.
    """
    dictionary_at = chunk.dictionary_page_offset if chunk.has_dictionary_page else None
    start = dictionary_at if dictionary_at and 0 < dictionary_at < chunk.data_page_offset else chunk.data_page_offset
    end = start + chunk.total_compressed_size
    declared = chunk.num_values
    values = inflated = entries = dictionary = 0
    offset = start
    if read_at is None:
        inflated, end = chunk.total_uncompressed_size, start
    try:
        while read_at is not None and offset < end and values < max(declared, 1):
            if offset != start:
                pages.take()  # a chunk's first page is counted with the chunks (``measure``)
            page = _read_page(read_at, offset)
            inflated += page.uncompressed
            if page.kind == _DICTIONARY_PAGE:
                entries, dictionary = entries + page.values, dictionary + page.uncompressed
            else:
                values += page.values
            offset += page.header + page.compressed
    except LimitExceeded:
        raise
    except ValueError as exc:
        raise UnreadableFile(
            f"{name} starts like a Parquet file but a page of its column {chunk.path_in_schema} cannot be read "
            f"({exc}); it is probably truncated or corrupt. Export it again, or export CSV instead."
        ) from None
    values = max(values, declared)
    if physical == "BYTE_ARRAY":
        mean_entry = max(dictionary - 4 * entries, 0) // entries if entries else 0
        width = _OFFSET_BYTES
        strings = inflated + values * mean_entry
    else:
        width = fixed_width or _WIDTH.get(physical, 8)
        strings = 0
    return values, inflated, values * (width + _LEVEL_BYTES * levels) + strings


def _leaves(kind: pa.DataType) -> int:
    """The Parquet leaf columns an Arrow type is stored in."""
    if pa.types.is_map(kind):
        return _leaves(kind.key_type) + _leaves(kind.item_type)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _leaves(kind.value_type)
    if pa.types.is_struct(kind):
        return sum(_leaves(kind.field(i).type) for i in range(kind.num_fields))
    return 1


def _nested(kind: pa.DataType) -> bool:
    return bool(pa.types.is_map(kind) or pa.types.is_struct(kind) or pa.types.is_list(kind)
                or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind))


def _top_columns(parquet: pq.ParquetFile) -> list[tuple[str, bool]]:
    """Each leaf column's top-level column name and whether that column is nested, in leaf order."""
    tops: list[tuple[str, bool]] = []
    for arrow_field in parquet.schema_arrow:
        tops += [(arrow_field.name, _nested(arrow_field.type))] * _leaves(arrow_field.type)
    if len(tops) != parquet.metadata.num_columns:  # a schema pyarrow maps otherwise: each leaf on its own
        schema = parquet.schema
        tops = [(schema.column(i).path, schema.column(i).max_repetition_level > 0)
                for i in range(parquet.metadata.num_columns)]
    return tops


def measure(files: Sequence[tuple[pq.ParquetFile, ReadAt]], name: str, columns: Sequence[str] | None = None,
            each_group: Callable[[ParquetSize, ParquetSize], None] | None = None, walk: bool = True) -> ParquetSize:
    """The measured size of ``files`` (the parts of one table), of their top-level ``columns`` (None: all);
    without ``walk``, from what their footers declare alone.

    ``each_group``, given, is called with each row group's size and the running total after it (to refuse a
    bomb before the rest of its pages are walked).
    """
    size = ParquetSize()
    wanted = None if columns is None else set(columns)
    pages = _Pages(name)
    for parquet, read_at in files:
        metadata, schema = parquet.metadata, parquet.schema
        leaves = []
        for index, (top, nested) in enumerate(_top_columns(parquet)):
            if wanted is None or top in wanted:
                leaf = schema.column(index)
                levels = int(leaf.max_repetition_level > 0) + int(leaf.max_definition_level > 0)
                fixed = (leaf.length or 0) if leaf.physical_type == "FIXED_LEN_BYTE_ARRAY" else 0
                leaves.append((index, top, leaf.physical_type, fixed, levels, nested))
        size.columns = max(size.columns, len({leaf[1] for leaf in leaves}))
        pages.take(metadata.num_row_groups * len(leaves))  # every chunk has a page: refused before the loop
        for group in range(metadata.num_row_groups):
            row_group = metadata.row_group(group)
            this = ParquetSize(rows=row_group.num_rows, columns=size.columns)
            for index, top, physical, fixed, levels, nested in leaves:
                values, inflated, decoded = _chunk_size(row_group.column(index), physical, fixed, levels,
                                                        read_at if walk else None, name, pages)
                for total in (this, size):
                    column = total.column_sizes.setdefault(top, ColumnSize(top, nested=nested))
                    column.values += values
                    column.decoded_bytes += decoded
                    total.uncompressed_bytes += inflated
            size.rows += this.rows
            if each_group is not None:
                each_group(this, size)
    return size


def check(size: ParquetSize, name: str) -> None:
    """Refuse ``size`` when its inflated pages pass ``PLANNER_MAX_IMPORT_MB`` or its estimated peak the import
    budget (``budget.need``: the message names the largest column and its figure)."""
    if size.uncompressed_bytes > settings.megabytes(settings.MAX_IMPORT_MB):
        raise LimitExceeded(
            f"{name} holds {size.uncompressed_bytes / 1e6:,.0f} MB of uncompressed column data, more than the "
            f"{settings.limit(settings.MAX_IMPORT_MB):,} MB one import reads ({settings.MAX_IMPORT_MB}). Export a "
            "shorter period or split the export into parts and import them one by one, or import it into the "
            "workspace (`python -m dashboard workspace import FILE NAME`)."
        )
    budget.need(size.need(), name, describe(size))


def describe(size: ParquetSize) -> str:
    """Rows × columns, and the largest column's decoded estimate, for the messages."""
    largest = size.largest()
    text = f"{size.rows:,} rows × {size.columns:,} columns"
    if largest is None or not largest.decoded_bytes:
        return text
    kind = "list values" if largest.nested else "values"
    return (f"{text}; its column {largest.name!r} alone decodes to about {_mb(largest.decoded_bytes)} from "
            f"{largest.values:,} {kind}")


def measured(files: Sequence[tuple[pq.ParquetFile, ReadAt]], name: str,
             columns: Sequence[str] | None = None) -> ParquetSize:
    """``measure`` then ``check``: first from what the footers declare (a file too large by its own account is
    refused with its totals), then from the page headers, refusing as soon as the running total passes a bound."""
    check(measure(files, name, columns, walk=False), name)
    return measure(files, name, columns, each_group=lambda _, running: check(running, name))


class AllocationWatch:
    """Arrow's allocated bytes since it was made, held to what all imports of the process reserve: a file whose
    pages decode to more than they were measured at is refused at the next check, a row group at a time, instead
    of running on. (The pool is the process's, so the check is against every import's reservation, plus
    ``ALLOCATION_SLACK_BYTES`` for Arrow's other users.)"""

    def __init__(self, name: str) -> None:
        self.name, self.base = name, pa.total_allocated_bytes()

    def check(self) -> None:
        grown, held = pa.total_allocated_bytes() - self.base, budget.held_bytes()
        if held and grown > held + ALLOCATION_SLACK_BYTES:
            raise LimitExceeded(
                f"{self.name} decodes to more than its pages say: Arrow holds {_mb(grown)} more than before it was "
                f"read, past the {_mb(held)} reserved for imports. The file is probably corrupt or crafted; export "
                "it again, or export CSV instead."
            )


@dataclass
class BatchPlan:
    """A streamed import's batches, from its row groups' sizes: the largest need per row of flat columns, and the
    largest whole-group need of nested ones (a list's values may all sit in one row, so no batch size bounds them)."""

    per_row: float = 0.0
    nested: int = 0

    def add(self, group: ParquetSize) -> None:
        """Take one row group's measured size into account."""
        flat = ParquetSize(rows=group.rows, columns=group.columns,
                           column_sizes={n: c for n, c in group.column_sizes.items() if not c.nested})
        nested = ParquetSize(column_sizes={n: c for n, c in group.column_sizes.items() if c.nested})
        self.per_row = max(self.per_row, flat.need() / max(group.rows, 1))
        self.nested = max(self.nested, nested.need())

    def rows(self, batch_rows: int, budget_bytes: int) -> int:
        """Rows a batch reads: ``batch_rows``, or fewer when a batch of them would pass half of ``budget_bytes``."""
        room = budget_bytes // 2 - self.nested
        if self.per_row <= 0:
            return batch_rows
        return max(min(batch_rows, int(room / self.per_row)), 1)

    def need(self, rows: int) -> int:
        """The estimated peak of one batch of ``rows`` rows."""
        return int(self.per_row * rows) + self.nested
