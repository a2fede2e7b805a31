"""The three Parquet bombs of issue 53, generated (none is stored), for `tests/security/test_parquet_bombs.py` and
the `parquet_*_bomb_*` benchmarks.

- `list_bomb`: some 300 bytes holding one row whose list has 3×10⁸ int32 values, run-length encoded through a
  one-entry dictionary (its row group declares 151 bytes); written here byte by byte, since pyarrow would need
  the 3×10⁸ values in memory to write it.
- `dictionary_bomb`: some 581 KB of 145 distinct 4,000-character strings referenced by 2,000,000 rows (8 GB once
  decoded), written by pyarrow from a dictionary array.
- `wide_file`: 380,000 one-value int32 columns, its pages padded so that the file passes 64 MB (the workspace's
  streamed path), written byte by byte.

`write_parquet` writes a file of flat or list columns from pages it is given, with a minimal Thrift compact
encoder: enough for these files, not a general writer.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

LIST_VALUES = 300_000_000
DICTIONARY_ENTRIES = 145
DICTIONARY_ENTRY_CHARS = 4_000
DICTIONARY_ROWS = 2_000_000
WIDE_COLUMNS = 380_000
WIDE_BYTES = 64_500_000

_I32, _I64, _BINARY, _LIST, _STRUCT = 5, 6, 8, 9, 12
_INT32, _REQUIRED, _REPEATED, _LIST_TYPE = 1, 0, 2, 3
_PLAIN, _RLE, _RLE_DICTIONARY = 0, 3, 8
_DATA_PAGE, _DICTIONARY_PAGE = 0, 2


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _zigzag(value: int) -> bytes:
    return _varint((value << 1) ^ (value >> 63))


def _struct(*fields: tuple[int, int, bytes]) -> bytes:
    """A Thrift compact struct of (field id, type, encoded value), ids increasing."""
    out, last = bytearray(), 0
    for number, kind, value in fields:
        delta = number - last
        out += bytes([delta << 4 | kind]) if 0 < delta <= 15 else bytes([kind]) + _zigzag(number)
        out += value
        last = number
    return bytes(out + b"\x00")


def _list(kind: int, items: Sequence[bytes]) -> bytes:
    header = bytes([len(items) << 4 | kind]) if len(items) < 15 else bytes([0xF0 | kind]) + _varint(len(items))
    return header + b"".join(items)


def _i32(value: int) -> bytes:
    return _zigzag(value)


def _text(value: str) -> bytes:
    raw = value.encode()
    return _varint(len(raw)) + raw


def _page(kind: int, body: bytes, values: int, encoding: int) -> bytes:
    header = (5, _STRUCT, _struct((1, _I32, _i32(values)), (2, _I32, _i32(encoding)), (3, _I32, _i32(_RLE)),
                                  (4, _I32, _i32(_RLE)))) if kind == _DATA_PAGE else (
        7, _STRUCT, _struct((1, _I32, _i32(values)), (2, _I32, _i32(_PLAIN))))
    return _struct((1, _I32, _i32(kind)), (2, _I32, _i32(len(body))), (3, _I32, _i32(len(body))), header) + body


@dataclass(frozen=True)
class Column:
    """A column of one chunk: its schema elements, pages (a dictionary page first, if any), values and encodings."""

    schema: tuple[bytes, ...]
    path: tuple[str, ...]
    pages: tuple[bytes, ...]
    values: int
    encodings: tuple[int, ...]
    dictionary: bool


def write_parquet(columns: Sequence[Column], rows: int, padding: int = 0, declared_bytes: int | None = None) -> bytes:
    """A Parquet file of one row group holding ``columns``; ``padding`` zero bytes before the first page."""
    out = io.BytesIO()
    out.write(b"PAR1" + bytes(padding))
    chunks = []
    for column in columns:
        start = out.tell()
        first_data = start + (len(column.pages[0]) if column.dictionary else 0)
        for page in column.pages:
            out.write(page)
        size = out.tell() - start
        metadata = [(1, _I32, _i32(_INT32)), (2, _LIST, _list(_I32, [_i32(e) for e in column.encodings])),
                    (3, _LIST, _list(_BINARY, [_text(p) for p in column.path])), (4, _I32, _i32(0)),
                    (5, _I64, _zigzag(column.values)), (6, _I64, _zigzag(size)), (7, _I64, _zigzag(size)),
                    (9, _I64, _zigzag(first_data))]
        if column.dictionary:
            metadata.append((11, _I64, _zigzag(start)))
        chunks.append(_struct((2, _I64, _zigzag(start)), (3, _STRUCT, _struct(*metadata))))
    root = _struct((4, _BINARY, _text("schema")), (5, _I32, _i32(len(columns))))
    schema = [root] + [element for column in columns for element in column.schema]
    total = sum(len(page) for column in columns for page in column.pages)
    group = _struct((1, _LIST, _list(_STRUCT, chunks)), (2, _I64, _zigzag(declared_bytes or total)),
                    (3, _I64, _zigzag(rows)))
    footer = _struct((1, _I32, _i32(1)), (2, _LIST, _list(_STRUCT, schema)), (3, _I64, _zigzag(rows)),
                     (4, _LIST, _list(_STRUCT, [group])))
    out.write(footer + struct.pack("<I", len(footer)) + b"PAR1")
    return out.getvalue()


def _rle(runs: Sequence[tuple[int, int]]) -> bytes:
    """RLE runs (count, value) of bit width 1, with the 4-byte length a data page v1 puts before levels."""
    body = b"".join(_varint(count << 1) + bytes([value]) for count, value in runs)
    return struct.pack("<I", len(body)) + body


def int_column(name: str, value: int) -> Column:
    """One row of a required int32 column holding ``value``."""
    schema = (_struct((1, _I32, _i32(_INT32)), (3, _I32, _i32(_REQUIRED)), (4, _BINARY, _text(name))),)
    return Column(schema, (name,), (_page(_DATA_PAGE, struct.pack("<i", value), 1, _PLAIN),), 1, (_PLAIN,), False)


def list_column(values: int, name: str = "values", declared_values: int | None = None) -> Column:
    """One row of a required list of ``values`` required int32 zeros: a one-entry dictionary, levels and indices
    each one or two RLE runs. ``declared_values``, given, is what the chunk's metadata says instead (a lie)."""
    schema = (_struct((3, _I32, _i32(_REQUIRED)), (4, _BINARY, _text(name)), (5, _I32, _i32(1)),
                      (6, _I32, _i32(_LIST_TYPE))),
              _struct((3, _I32, _i32(_REPEATED)), (4, _BINARY, _text("list")), (5, _I32, _i32(1))),
              _struct((1, _I32, _i32(_INT32)), (3, _I32, _i32(_REQUIRED)), (4, _BINARY, _text("element"))))
    repetition = _rle([(1, 0), (values - 1, 1)] if values > 1 else [(1, 0)])
    definition = _rle([(values, 1)])
    indices = bytes([1]) + _varint(values << 1) + b"\x00"
    pages = (_page(_DICTIONARY_PAGE, struct.pack("<i", 0), 1, _PLAIN),
             _page(_DATA_PAGE, repetition + definition + indices, values, _RLE_DICTIONARY))
    return Column(schema, (name, "list", "element"), pages, values if declared_values is None else declared_values,
                  (_PLAIN, _RLE, _RLE_DICTIONARY), True)


def list_bomb(values: int = LIST_VALUES, beside: Sequence[str] = ()) -> bytes:
    """Issue 53's list bomb: one row, one list of ``values`` int32 values, in some 200 bytes (its row group
    declares 151). With ``beside``, those one-value int32 columns first and the list named ``Tags`` (a FOCUS
    header, read by the streamed import: ``beside=FOCUS_COLUMNS``)."""
    name = "Tags" if beside else "values"
    columns = [*(int_column(c, 1) for c in beside), list_column(values, name)]
    return write_parquet(columns, rows=1, declared_bytes=151)


FOCUS_COLUMNS = ("ChargePeriodStart", "ChargePeriodEnd", "BilledCost", "EffectiveCost", "BillingCurrency")


def dictionary_bomb(rows: int = DICTIONARY_ROWS, entries: int = DICTIONARY_ENTRIES,
                    chars: int = DICTIONARY_ENTRY_CHARS) -> bytes:
    """Issue 53's dictionary bomb: ``entries`` random strings of ``chars`` letters, each referenced by a run of
    ``rows / entries`` rows (rows × chars bytes once decoded)."""
    letters = np.random.default_rng(53).integers(ord("a"), ord("z") + 1, size=(entries, chars), dtype=np.uint8)
    dictionary = pa.array([row.tobytes().decode() for row in letters])
    indices = pa.array(np.repeat(np.arange(entries, dtype=np.int32), -(-rows // entries))[:rows])
    out = io.BytesIO()
    pq.write_table(pa.table({"Tags": pa.DictionaryArray.from_arrays(indices, dictionary)}), out, compression="snappy",
                   row_group_size=rows, write_statistics=False)
    return out.getvalue()


def wide_file(columns: int = WIDE_COLUMNS, at_least_bytes: int = WIDE_BYTES) -> bytes:
    """Issue 53's wide file: ``columns`` required int32 columns of one row each (column i holds i), padded with
    zeros after the magic so that it passes ``at_least_bytes``. Each column's bytes are spelt out here (the struct
    ``write_parquet`` would build, field by field), as 380,000 columns through it take a minute."""
    page_header = _struct((1, _I32, _i32(_DATA_PAGE)), (2, _I32, _i32(4)), (3, _I32, _i32(4)),
                          (5, _STRUCT, _struct((1, _I32, _i32(1)), (2, _I32, _i32(_PLAIN)), (3, _I32, _i32(_RLE)),
                                               (4, _I32, _i32(_RLE)))))
    page_bytes = len(page_header) + 4
    size = _zigzag(page_bytes)
    names = [f"c{i:06}".encode() for i in range(columns)]
    pages, chunks, schema = [], [], []
    for index, name in enumerate(names):
        start = 4 + at_least_bytes + index * page_bytes
        pages.append(page_header + struct.pack("<i", index))
        at = _zigzag(start)
        # ColumnChunk{2: file_offset, 3: ColumnMetaData{1: INT32, 2: [PLAIN], 3: [name], 4: UNCOMPRESSED,
        # 5: 1 value, 6 and 7: the page's bytes, 9: data_page_offset}}
        chunks.append(b"\x26" + at + b"\x1c\x15\x02\x19\x15\x00\x19\x18" + _varint(len(name)) + name
                      + b"\x15\x00\x16\x02\x16" + size + b"\x16" + size + b"\x26" + at + b"\x00\x00")
        # SchemaElement{1: INT32, 3: REQUIRED, 4: name}
        schema.append(b"\x15\x02\x25\x00\x18" + _varint(len(name)) + name + b"\x00")
    root = _struct((4, _BINARY, _text("schema")), (5, _I32, _i32(columns)))
    group = _struct((1, _LIST, _list(_STRUCT, chunks)), (2, _I64, _zigzag(columns * page_bytes)),
                    (3, _I64, _zigzag(1)))
    footer = _struct((1, _I32, _i32(1)), (2, _LIST, _list(_STRUCT, [root, *schema])), (3, _I64, _zigzag(1)),
                     (4, _LIST, _list(_STRUCT, [group])))
    return b"".join([b"PAR1", bytes(at_least_bytes), *pages, footer, struct.pack("<I", len(footer)), b"PAR1"])
