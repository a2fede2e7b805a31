"""Bytes to a table of strings: unwrap gzip/zip, read Parquet or sniff a CSV's encoding and delimiter.

The result is a pandas DataFrame whose cells are all strings (NA for empty cells), whose column names are
cleaned of BOMs, whitespace and quotes, and whose index is the 1-based source line of each row (the header
is line 1; Parquet row i is "line" i + 2). Rows that cannot be split into the header's number of fields
are returned as rejected rows, never dropped silently. Files that cannot be read at all raise
``UnreadableFile``.

Zip archives must hold exactly one data file: several members (e.g. CUR parts) could come from different
report assemblies and summing them blindly double counts, so the user is asked to upload them one by one.
Clean UTF-8 CSVs take a fast path through ``pyarrow.csv`` (reading only the columns the format's reader
needs, when the caller says which); files with blank lines, multi-line cells or malformed rows go through
Python's ``csv`` module so that every row keeps its true line number.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from dashboard import settings
from dashboard.ingest.bounded import LimitExceeded, inflate
from dashboard.ingest.schema import ColumnPlan, UnreadableFile, issues_frame

DELIMITERS: tuple[str, ...] = (",", ";", "|", "\t")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "|": "pipe", "\t": "tab"}
_DECIMAL_COMMA_CELL = re.compile(r"^\s*-?(\d{1,3}(\.\d{3})+|\d+),\d+\s*$")
_PARENTHESISED_NAME = re.compile(r"^.+\s\(([A-Za-z][A-Za-z0-9_/.:]*)\)$")
_SNIFF_BYTES = 1 << 16

# Given the cleaned header, the reader's column plan (None: read every column as strings).
ColumnSelector = Callable[[list[str]], ColumnPlan | None]


@dataclass
class Decoded:
    """A decoded table plus what decoding learnt about the file."""

    table: pd.DataFrame  # all-string cells, index = 1-based source line
    rejected: pd.DataFrame = field(default_factory=issues_frame)  # rows with the wrong number of fields
    warnings: list[str] = field(default_factory=list)
    delimiter: str | None = None  # None for Parquet
    decimal_comma: bool = False
    encoding: str = "utf-8"


def clean_column_name(name: object, position: int) -> str:
    """A header cell without BOM, surrounding whitespace or quotes; localized ``Name (English)`` → English."""
    text = str(name).replace("\ufeff", "").strip().strip("'\"").strip()
    match = _PARENTHESISED_NAME.match(text)
    if match and not text.isascii():
        text = match.group(1)
    return text or f"column_{position + 1}"


def _unique_names(names: list[str]) -> list[str]:
    """Column names made unique by suffixing repeats with ``.2``, ``.3`` …"""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}.{seen[name]}")
    return out


def _decode_parquet(data: bytes, filename: str) -> Decoded:
    """Read Parquet and turn every column into strings (maps and lists as JSON text)."""
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as exc:
        raise UnreadableFile(
            f"{filename or 'The file'} starts like a Parquet file but cannot be read ({exc}); it is probably "
            "truncated or corrupt. Export it again, or export CSV instead."
        ) from None
    if table.num_rows == 0:
        raise UnreadableFile(
            f"{filename or 'The Parquet file'} has columns but no rows, so there is nothing to import. "
            "Check that the export covers the period you meant."
        )
    return decode_arrow(table)


def decode_arrow(table: pa.Table) -> Decoded:
    """An Arrow table (e.g. a folder of Parquet parts) as a decoded string table; row i is line i + 2."""
    return Decoded(table=_strings_frame(table, 2), delimiter=None)


def _column_as_strings(column: pa.ChunkedArray) -> pa.ChunkedArray | list:
    """One Arrow column as strings: timestamps in ISO form, nested values as JSON text."""
    kind = column.type
    if pa.types.is_timestamp(kind):
        if kind.tz is None:
            column = column.cast(pa.timestamp(kind.unit, tz="UTC"))
        return column.cast(pa.string())
    if (
        pa.types.is_map(kind)
        or pa.types.is_struct(kind)
        or pa.types.is_list(kind)
        or pa.types.is_large_list(kind)
    ):
        return [
            None if v is None else json.dumps(dict(v) if pa.types.is_map(kind) else v, default=str)
            for v in column.to_pylist()
        ]
    return column.cast(pa.string())


def _string_series(column: pa.ChunkedArray) -> pd.Series:
    """An Arrow string column as a pandas ``string`` Series without copying through Python objects."""
    return pd.Series(pd.arrays.ArrowStringArray(column.cast(pa.large_string())), dtype="string")


def _categorical_series(column: pa.ChunkedArray) -> pd.Series:
    """A dictionary-encoded Arrow column as a pandas Categorical of strings (nulls as missing)."""
    return pd.Series(column.unify_dictionaries().to_pandas(), dtype="category")


def _strings_frame(table: pa.Table, first_line: int) -> pd.DataFrame:
    """An Arrow table as an all-string DataFrame indexed by source line, starting at ``first_line``."""
    names = _unique_names([clean_column_name(n, i) for i, n in enumerate(table.column_names)])
    columns = {}
    for name, column in zip(names, table.columns, strict=True):
        values = _column_as_strings(column)
        columns[name] = (
            pd.Series(values, dtype="string") if isinstance(values, list) else _string_series(values)
        )
    frame = pd.DataFrame(columns)
    frame.index = pd.RangeIndex(first_line, first_line + table.num_rows, name="line")
    return frame


def _check_not_binary(sample: bytes, filename: str) -> None:
    """Refuse data that is clearly not text (NUL bytes or many control characters)."""
    if not sample:
        return
    controls = sum(sample.count(bytes([c])) for c in range(32) if c not in (9, 10, 13))
    if b"\x00" in sample or controls > len(sample) // 100:
        raise UnreadableFile(
            f"{filename or 'The file'} is binary data, not a CSV, gzip, zip or Parquet export. Upload the billing or "
            "run export as CSV (optionally .gz or .zip) or Parquet."
        )


def _to_utf8(data: bytes, filename: str) -> tuple[bytes, str, list[str]]:
    """UTF-8 bytes without BOM, the source encoding, and warnings: BOM, UTF-16 by zero bytes, UTF-8, cp1252."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        return (
            (data if data.isascii() else data.decode("utf-8", errors="strict").encode("utf-8")),
            "utf-8-sig",
            [],
        )
    for bom, codec in ((b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            return _utf16_without_bom(data[2:], codec, filename)
    sample = data[:_SNIFF_BYTES]
    if len(sample) >= 4 and sample[1::2].count(0) > len(sample) // 4 and sample[0::2].count(0) == 0:
        return _utf16_without_bom(data, "utf-16-le", filename)
    if len(sample) >= 4 and sample[0::2].count(0) > len(sample) // 4 and sample[1::2].count(0) == 0:
        return _utf16_without_bom(data, "utf-16-be", filename)
    _check_not_binary(sample, filename)
    try:
        if not data.isascii():
            data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(data) - 3 and exc.reason == "unexpected end of data":
            raise UnreadableFile(
                f"{filename or 'The file'} ends in the middle of a UTF-8 character, so it is truncated. Download "
                "the export again and upload the complete file."
            ) from None
        for codec in ("cp1252", "latin-1"):
            try:
                text = data.decode(codec)
            except UnicodeDecodeError:
                continue
            return (
                text.encode("utf-8"),
                codec,
                [f"The file is not valid UTF-8; it was read as {codec}. Check names with accents."],
            )
    return data, "utf-8", []


def _utf16_without_bom(data: bytes, codec: str, filename: str) -> tuple[bytes, str, list[str]]:
    """UTF-16 text (BOM already removed) re-encoded as UTF-8."""
    try:
        return data.decode(codec).encode("utf-8"), codec, []
    except UnicodeDecodeError:
        raise UnreadableFile(
            f"{filename or 'The file'} looks like UTF-16 text but cannot be decoded; it may be truncated. "
            "Export it again as UTF-8 CSV."
        ) from None


_FIRST_TEXT = re.compile(rb"[^\r\n]")
_LINE_END = re.compile(rb"[\r\n]")
MAX_HEADER_BYTES = 1 << 22


def _header_line(text: bytes, filename: str) -> str:
    """The first non-blank line, read whole however wide (FOCUS tags can make it 68 KB), up to 4 MiB."""
    first = _FIRST_TEXT.search(text, 0, MAX_HEADER_BYTES)
    if first is None:
        return ""
    line_end = _LINE_END.search(text, first.start(), first.start() + MAX_HEADER_BYTES + 1)
    if line_end is None and len(text) - first.start() > MAX_HEADER_BYTES:
        raise LimitExceeded(
            f"{filename or 'The file'} has a first line longer than {MAX_HEADER_BYTES >> 20} MiB, far wider than "
            "any billing export's header. Check that it is a delimited table with one header row."
        )
    end = line_end.start() if line_end else len(text)
    return text[first.start() : end].decode("utf-8", errors="replace").lstrip("\ufeff")


def _header_cells(header: str, delimiter: str, filename: str) -> list[str]:
    """The header split on ``delimiter``; refused past ``PLANNER_MAX_COLUMNS`` before any row is parsed.

    A cell longer than the csv module's field limit (128 KiB) counts as one: no delimiter splits that header.
    """
    try:
        cells = next(csv.reader([header], delimiter=delimiter))
    except csv.Error:
        return [header]
    ceiling = settings.limit(settings.MAX_COLUMNS)
    columns = len(cells)
    if columns > ceiling:
        raise LimitExceeded(
            f"{filename or 'The file'} has {columns:,} columns, more than the {ceiling:,} the importer reads "
            f"({settings.MAX_COLUMNS}). Export only the columns you need (drop unused tag columns), or have the "
            f"server's operator raise {settings.MAX_COLUMNS}."
        )
    return cells


def _sniff_delimiter(header: str, filename: str) -> str:
    """The delimiter among ``,`` ``;`` ``|`` tab that splits the header line into the most fields."""
    counts = {d: len(_header_cells(header, d, filename)) for d in DELIMITERS}
    delimiter = max(DELIMITERS, key=lambda d: counts[d])
    if counts[delimiter] < 2:
        raise UnreadableFile(
            f"{filename or 'The file'} has a single column: its first line contains no comma, semicolon, "
            "pipe or tab. A billing export must be a delimited table with a header row."
        )
    return delimiter


_COUNT_CHUNK = 1 << 22


def _line_count(data: bytes) -> int:
    """Physical lines in the text (a last line without a newline counts), counted with numpy in chunks."""
    octets = np.frombuffer(data, dtype=np.uint8)
    newlines = sum(
        int(np.count_nonzero(octets[i : i + _COUNT_CHUNK] == 10)) for i in range(0, len(octets), _COUNT_CHUNK)
    )
    return newlines + (0 if data.endswith(b"\n") else 1)


def _fast_read(text: bytes, names: list[str], delimiter: str, keep: list[str], categorical: set[str]
               ) -> pa.Table | None:
    """Read ``keep`` columns with pyarrow if every line is exactly one well-formed row; else None.

    Blank lines and cells with line breaks make the row count differ from the line count, and malformed rows
    reach the invalid-row handler; either sends the file to the careful path.
    """
    invalid: list[object] = []

    def on_invalid(row: object) -> str:
        invalid.append(row)
        return "skip"

    try:
        table = pa_csv.read_csv(
            pa.py_buffer(text),
            read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1, block_size=1 << 24),
            parse_options=pa_csv.ParseOptions(
                delimiter=delimiter, invalid_row_handler=on_invalid, ignore_empty_lines=True
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types={
                    name: pa.dictionary(pa.int32(), pa.large_string()) if name in categorical else pa.large_string()
                    for name in keep
                },
                include_columns=keep,
                strings_can_be_null=True,
                quoted_strings_can_be_null=True,
            ),
        )
    except pa.ArrowInvalid:
        return None
    if invalid or table.num_rows + 1 != _line_count(text):
        return None
    return table


def _careful_read(text: str, delimiter: str, filename: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read with Python's csv module, keeping true line numbers and rejecting rows with a wrong field count."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows: list[list[str]] = []
    lines: list[int] = []
    bad_lines: list[int] = []
    bad_reasons: list[str] = []
    previous_end = 0
    width = 0
    try:
        for record in reader:
            start, previous_end = previous_end + 1, reader.line_num
            if not record or (len(record) == 1 and not record[0].strip()):
                continue
            if not width:
                width = len(record)
                continue
            if len(record) != width:
                bad_lines.append(start)
                bad_reasons.append(
                    f"expected {width} fields, found {len(record)}"
                    + (" (file truncated?)" if len(record) < width else "")
                )
                continue
            rows.append(record)
            lines.append(start)
    except csv.Error as exc:
        raise UnreadableFile(
            f"{filename or 'The file'} cannot be split into rows near line {previous_end + 1} ({exc}); a quoted "
            "cell is never closed, which usually means the file was cut off. Download the export again and "
            "upload the complete file."
        ) from None
    frame = pd.DataFrame(rows, columns=range(width) if width else None, dtype="string")
    frame = frame.where(frame != "")
    frame.index = pd.Index(lines, dtype="int64", name="line")
    return frame, issues_frame(bad_lines, bad_reasons)


def _detect_decimal_comma(frame: pd.DataFrame) -> bool:
    """True when some column's cells mostly look like ``1,5`` / ``1.234,5`` (Excel-locale numbers)."""
    sample = frame.head(1000)
    for name in sample.columns:
        cells = sample[name].dropna()
        if len(cells) and cells.str.match(_DECIMAL_COMMA_CELL).mean() >= 0.9:
            return True
    return False


def _decode_text(data: bytes, filename: str, select: ColumnSelector | None) -> Decoded:
    """Decode a delimited text file into an all-string frame (on the fast path, only selected columns)."""
    text, encoding, warnings = _to_utf8(data, filename)
    head = text[:_SNIFF_BYTES].decode("utf-8", errors="replace")
    header_line = _header_line(text, filename)
    if not header_line.strip():
        raise UnreadableFile(
            f"{filename or 'The file'} is empty: it holds no header and no rows. "
            "Upload a billing export with a header row and at least one data row."
        )
    delimiter = _sniff_delimiter(header_line, filename)
    header = _header_cells(header_line, delimiter, filename)
    names = _unique_names([clean_column_name(n, i) for i, n in enumerate(header)])
    table = None
    tail = text[-_SNIFF_BYTES:].rstrip(b"\r\n")
    last_line = tail[tail.rfind(b"\n") + 1 :]
    plan = select(names) if select else None
    wanted = {w.lower() for w in plan.keep} if plan else None
    keep = names if wanted is None else [n for n in names if n.lower() in wanted]
    as_category = {n for n in keep if plan and n.lower() in {c.lower() for c in plan.categorical}}
    if not head.startswith(("\r", "\n")) and last_line.count(b'"') % 2 == 0:
        table = _fast_read(text, names, delimiter, keep, as_category)
    if table is not None:
        frame = pd.DataFrame({
            n: _categorical_series(c) if n in as_category else _string_series(c)
            for n, c in zip(keep, table.columns, strict=True)
        })
        frame.index = pd.RangeIndex(2, 2 + table.num_rows, name="line")
        rejected = issues_frame()
    else:
        frame, rejected = _careful_read(text.decode("utf-8"), delimiter, filename)
        frame.columns = names[: frame.shape[1]] if frame.shape[1] else names
        if frame.shape[1] == 0:
            frame = pd.DataFrame({n: pd.Series(dtype="string") for n in names})
    if len(frame) == 0 and len(rejected) == 0:
        raise UnreadableFile(
            f"{filename or 'The file'} has a header ({len(names)} columns) but no data rows, so there is nothing "
            "to import. Check that the export covers the period you meant."
        )
    decimal_comma = delimiter == ";" and _detect_decimal_comma(frame)
    if decimal_comma:
        warnings.append(
            "Numbers use decimal commas (semicolon-delimited file with values like '1,5'); "
            "they were read as 1.5."
        )
    if delimiter != ",":
        warnings.append(f"Columns are separated by {_DELIMITER_NAMES[delimiter]}s.")
    return Decoded(
        table=frame,
        rejected=rejected,
        warnings=warnings,
        delimiter=delimiter,
        decimal_comma=decimal_comma,
        encoding=encoding,
    )


def decode(data: bytes, filename: str = "", select: ColumnSelector | None = None) -> Decoded:
    """Turn the bytes of an uploaded export (CSV/TSV, Parquet, optionally gzip or zip) into a string table.

    ``select`` may give a ColumnPlan once the header is known: the other columns may be dropped and the
    plan's categorical columns come back as pandas Categoricals (on the fast path only).
    """
    if not data or not data[:_SNIFF_BYTES].strip():
        raise UnreadableFile(
            f"{filename or 'The file'} is empty: it holds no header and no rows. "
            "Upload a billing export with a header row and at least one data row."
        )
    data, filename = inflate(data, filename)
    if data[:4] == b"PAR1":
        return _decode_parquet(data, filename)
    if not data[:_SNIFF_BYTES].strip():
        raise UnreadableFile(
            f"{filename or 'The file'} is empty after decompression. "
            "Upload a billing export with a header row and at least one data row."
        )
    return _decode_text(data, filename, select)
