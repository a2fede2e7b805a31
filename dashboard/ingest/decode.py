"""Bytes to a table of strings: unwrap gzip/zip, read Parquet or sniff a CSV's encoding and delimiter.

The result is a pandas DataFrame whose cells are all strings (NA for empty cells), whose column names are
cleaned of BOMs, whitespace and quotes, and whose index is the 1-based source line of each row (the header
is line 1; Parquet row i is "line" i + 2). Rows short of the header get empty trailing fields; rows that
cannot be aligned with it are returned as rejected rows, never dropped silently. Files that cannot be read at all raise
``UnreadableFile``.

Zip archives must hold exactly one data file: several members (e.g. CUR parts) could come from different
report assemblies and summing them blindly double counts, so the user is asked to upload them one by one.
Clean UTF-8 CSVs take a fast path through ``pyarrow.csv`` (reading only the columns the format's reader
needs, when the caller says which); files with blank lines, multi-line cells or malformed rows go through
Python's ``csv`` module so that every row keeps its true line number.

Every step is bounded before it runs: inflated bytes (``bounded``), header columns, and the memory the table
will take, estimated from a Parquet file's page headers (``parquet_size``: values, inflated bytes, dictionaries)
or a text file's lines, columns and bytes, and reserved in the process's import memory budget (``budget``), so a
file that would not fit is refused before its rows are read. Parquet is read row group by row group.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from dashboard import settings
from dashboard.ingest import budget, parquet_size
from dashboard.ingest.bounded import LimitExceeded, inflate
from dashboard.ingest.schema import ColumnPlan, UnreadableFile, issues_frame
from dashboard.ingest.values import parse_number
from dashboard.ingest.wording import count_text
from dashboard.safe_text import preview

DELIMITERS: tuple[str, ...] = (",", ";", "|", "\t")
DELIMITER_NAMES = {",": "comma", ";": "semicolon", "|": "pipe", "\t": "tab"}
_DECIMAL_COMMA_CELL = re.compile(r"^\s*-?(\d{1,3}(\.\d{3})+|\d+),\d+\s*$")
_DOT_DECIMAL_CELL = re.compile(r"^\s*-?\d+\.(\d{1,2}|\d{4,})\s*$")  # a point no thousands separator leaves
_COMMA_DECIMAL_CELL = re.compile(r"^\s*-?[\d.]*\d,\d+\s*$")  # a number written with a decimal comma
_WITHOUT_DECIMAL_COMMAS = "Read it without decimal commas (untick \"Decimal commas\", or drop --decimal-comma)."
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
    """A header cell without BOM, surrounding whitespace or quotes (``column_N`` when empty)."""
    return str(name).replace("\ufeff", "").strip().strip("'\"").strip() or f"column_{position + 1}"


def column_names(header: Sequence[object]) -> list[str]:
    """A header's cleaned, unique column names, a localized export's ``Name (EnglishName)`` cells read as the
    English name: always when the name is not ASCII (``Maßeinheit (UnitOfMeasure)``), and every such cell when
    most of the header is written that way with distinct English names (Azure's exports from a German portal:
    ``UsageDateTime (UsageDateTime)``, ``Abonnement-GUID (SubscriptionGuid)``). An English header's odd
    ``Cost (USD)`` keeps its name."""
    names = [clean_column_name(cell, position) for position, cell in enumerate(header)]
    english = [match.group(1) if (match := _PARENTHESISED_NAME.match(name)) else None for name in names]
    given = [name for name in english if name is not None]
    localized = 2 * len(given) > len(names) and len(set(given)) == len(given)
    return _unique_names([
        translated if translated is not None and (localized or not name.isascii()) else name
        for name, translated in zip(names, english, strict=True)
    ])


def _unique_names(names: list[str]) -> list[str]:
    """Column names made unique by suffixing repeats with ``.2``, ``.3`` …"""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}.{seen[name]}")
    return out


def _decode_parquet(data: bytes, filename: str, select: ColumnSelector | None = None) -> Decoded:
    """Read Parquet row group by row group and turn every column into strings (maps and lists as JSON text).

    The file is measured first (``parquet_size``: its footer's columns, then the page headers of the columns to
    be read) and refused past the bounds before any column is decoded; each row group read is then held to the
    import's reservation by Arrow's allocated bytes. With ``select``, only the columns of the reader's plan are
    measured and read, its categorical ones as Categoricals.
    """
    name = filename or "The Parquet file"
    read_at = parquet_size.bytes_reader(data)
    parquet = parquet_size.open_checked(data, read_at, len(data), name)
    stored = parquet.schema_arrow.names
    names = column_names(stored)
    plan = select(names) if select and len(set(stored)) == len(stored) else None
    wanted = {w.lower() for w in plan.keep} if plan else None
    kept = [(s, n) for s, n in zip(stored, names, strict=True) if wanted is None or n.lower() in wanted]
    size = parquet_size.measured([(parquet, read_at)], name, None if wanted is None else [s for s, _ in kept])
    if size.rows == 0:
        raise UnreadableFile(
            f"{filename or 'The Parquet file'} has columns but no rows, so there is nothing to import. "
            "Check that the export covers the period you meant."
        )
    categorical = frozenset(n for _, n in kept if plan and n.lower() in {c.lower() for c in plan.categorical})
    chunks: dict[str, list[pa.ChunkedArray]] = {n: [] for _, n in kept}
    allocated = parquet_size.AllocationWatch(name)
    try:
        for group in range(parquet.metadata.num_row_groups):  # one row group's typed columns in memory at a time
            table = parquet.read_row_group(group, columns=None if wanted is None else [s for s, _ in kept])
            allocated.check()
            for column_name, column in _string_columns(table, [n for _, n in kept], categorical).items():
                chunks[column_name].append(column)
            del table
            allocated.check()
    except (pa.ArrowException, OSError) as exc:
        raise UnreadableFile(
            f"{filename or 'The file'} starts like a Parquet file but cannot be read ({exc}); it is probably "
            "truncated or corrupt. Export it again, or export CSV instead."
        ) from None
    columns = {column_name: pa.chunked_array([c for part in parts for c in part.chunks], parts[0].type)
               for column_name, parts in chunks.items()}
    return Decoded(table=_columns_frame(columns, 2, size.rows), delimiter=None)


def decode_arrow(table: pa.Table, first_line: int = 2, categorical: frozenset[str] = frozenset()) -> Decoded:
    """An Arrow table (e.g. a folder of Parquet parts) as a decoded string table; row i is line i + first_line.

    Text columns named in ``categorical`` come back as pandas Categoricals (as on the fast CSV path)."""
    return Decoded(table=_strings_frame(table, first_line, categorical), delimiter=None)


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


def _string_columns(table: pa.Table, names: list[str], categorical: frozenset[str]) -> dict[str, pa.ChunkedArray]:
    """An Arrow table's columns as large strings (``categorical`` text ones dictionary-encoded), named ``names``."""
    columns = {}
    for name, column in zip(names, table.columns, strict=True):
        kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
        if name in categorical and (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            coded = column if pa.types.is_dictionary(column.type) else column.dictionary_encode()
            columns[name] = coded.cast(pa.dictionary(pa.int32(), pa.large_string()))
            continue
        parquet_size.hold_spelt_out(column, name)
        values = _column_as_strings(column)
        columns[name] = (pa.chunked_array([pa.array(values, pa.large_string())], pa.large_string())
                         if isinstance(values, list) else values.cast(pa.large_string()))
    return columns


def _columns_frame(columns: dict[str, pa.ChunkedArray], first_line: int, rows: int) -> pd.DataFrame:
    """String (and dictionary-encoded) Arrow columns as a DataFrame indexed by source line from ``first_line``."""
    frame = pd.DataFrame({
        name: _categorical_series(column) if pa.types.is_dictionary(column.type) else _string_series(column)
        for name, column in columns.items()
    })
    frame.index = pd.RangeIndex(first_line, first_line + rows, name="line")
    return frame


def _strings_frame(table: pa.Table, first_line: int, categorical: frozenset[str] = frozenset()) -> pd.DataFrame:
    """An Arrow table as an all-string DataFrame indexed by source line, starting at ``first_line``."""
    names = column_names(table.column_names)
    return _columns_frame(_string_columns(table, names, categorical), first_line, table.num_rows)


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


def to_utf8(data: bytes, filename: str) -> tuple[bytes, str, list[str]]:
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
        for codec in (*legacy_encoding(data), "cp1252", "latin-1"):
            try:
                text = data.decode(codec)
            except UnicodeDecodeError:
                continue
            return text.encode("utf-8"), codec, [legacy_encoding_warning(codec, filename)]
    return data, "utf-8", []


# Encodings a spreadsheet saved without UTF-8 may use: Western European (Excel's cp1252), Simplified Chinese
# (GBK within GB18030) and Japanese (Shift-JIS). Korean and Traditional Chinese codecs are left out: on short
# cells they win over GB18030 for Simplified Chinese text, which is the commoner case here.
LEGACY_ENCODINGS: dict[str, str] = {
    "cp1252": "Windows-1252 (Western European)",
    "gb18030": "GB18030 (Chinese, GBK)",
    "shift_jis": "Shift-JIS (Japanese)",
}


def _common_hanzi_share(data: bytes) -> float:
    """Share of double-byte characters whose GBK lead byte lies in GB2312's common hanzi rows (0xB0–0xF7).

    Chinese text is mostly such characters; Shift-JIS kanji and kana read as GBK land in its rare extension rows.
    """
    common = total = 0
    position = 0
    while position < len(data) - 1:
        byte = data[position]
        if byte < 0x81:
            position += 1
            continue
        total += 1
        common += 0xB0 <= byte <= 0xF7
        position += 2
    return common / total if total else 0.0


def legacy_encoding(data: bytes) -> list[str]:
    """The most likely of LEGACY_ENCODINGS for bytes that are not UTF-8 (charset-normalizer), or none.

    Short kanji-only cells decode without error, and without "chaos", as both GB18030 and Shift-JIS; the tie
    is settled by where the characters sit in GB2312 (common hanzi rows: Chinese; elsewhere: Japanese).
    """
    import charset_normalizer

    matches = charset_normalizer.from_bytes(data, cp_isolation=list(LEGACY_ENCODINGS))
    best = matches.best()
    if best is None or best.encoding not in LEGACY_ENCODINGS:
        return []
    tied = {m.encoding for m in matches if m.chaos <= best.chaos}
    if {"gb18030", "shift_jis"} <= tied:
        return ["gb18030" if _common_hanzi_share(data) >= 0.5 else "shift_jis"]
    return [best.encoding]


def legacy_encoding_warning(codec: str, filename: str) -> str:
    """The warning for a file read in a legacy encoding."""
    name = LEGACY_ENCODINGS.get(codec, codec)
    return (f"{filename or 'The file'} is not valid UTF-8, so it was read as {name}. Check that names with "
            "accents or non-Latin letters look right; export UTF-8 to be sure.")


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


def header_line_of(text: bytes, filename: str) -> str:
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


def _fast_read(text: bytes, names: list[str], delimiter: str, keep: list[str], categorical: set[str],
               lines: int) -> pa.Table | None:
    """Read ``keep`` columns with pyarrow if every one of the text's ``lines`` is exactly one well-formed row; else
    None.

    Blank lines and cells with line breaks make the row count differ from the line count, and a malformed row
    stops the read at the invalid-row handler (nothing of it is kept); either sends the file to the careful path.
    """
    invalid = [0]

    def on_invalid(row: object) -> str:
        invalid[0] += 1
        return "error"

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
    if invalid[0] or table.num_rows + 1 != lines:
        return None
    return table


def align_fields(record: list[str], width: int) -> tuple[list[str] | None, str]:
    """A row fitted to the header's ``width``: missing trailing fields are empty fields (as pandas, Koku and
    OpenCost read them) and extra trailing fields that are empty are dropped; anything else cannot be aligned
    and comes back as None with the reason."""
    if len(record) == width:
        return record, ""
    if len(record) < width:
        return record + [""] * (width - len(record)), ""
    if not any(cell.strip() for cell in record[width:]):
        return record[:width], ""
    return None, f"expected {width} fields, found {len(record)}"


def short_rows_warning(count: int, filename: str) -> list[str]:
    """The warning for rows whose missing trailing fields were read as empty."""
    if not count:
        return []
    rows = f"{count_text(count, 'row')} {'has' if count == 1 else 'have'}"
    return [f"In {filename or 'the file'}, {rows} fewer fields than the header; the missing trailing fields "
            "were read as empty."]


def _careful_read(text: str, delimiter: str, filename: str) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Read with Python's csv module, keeping true line numbers; short rows' missing trailing cells are empty
    (filled as the frame is built, never as padded rows; their count is returned), rows that cannot be aligned
    with the header are rejected."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows: list[list[str]] = []
    lines: list[int] = []
    bad_lines: list[int] = []
    bad_reasons: list[str] = []
    previous_end = 0
    width = 0
    short = 0
    last_short = False
    try:
        for record in reader:
            start, previous_end = previous_end + 1, reader.line_num
            if not record or (len(record) == 1 and not record[0].strip()):
                continue
            if not width:
                width = len(record)
                continue
            last_short = len(record) < width
            if last_short:
                short += 1
                rows.append(record)  # not padded: the frame below fills the missing cells
                lines.append(start)
                continue
            aligned, reason = align_fields(record, width)
            if aligned is None:
                bad_lines.append(start)
                bad_reasons.append(reason)
                continue
            rows.append(aligned)
            lines.append(start)
    except csv.Error as exc:
        raise UnreadableFile(
            f"{filename or 'The file'} cannot be split into rows near line {previous_end + 1} ({exc}); a quoted "
            "cell is never closed, which usually means the file was cut off. Download the export again and "
            "upload the complete file."
        ) from None
    if last_short and not text.endswith(("\n", "\r")):
        short -= 1  # a short last line without its line break is a cut-off file, not a missing empty field
        bad_lines.append(lines.pop())
        bad_reasons.append(f"expected {width} fields, found fewer and the file ends here (file truncated?)")
        rows.pop()
    cells = np.full((len(rows), width), None, dtype=object)  # short rows' missing cells stay None (empty)
    for position, record in enumerate(rows):
        cells[position, : len(record)] = record
    del rows
    frame = pd.DataFrame(cells, columns=range(width), dtype="string")
    frame = frame.where(frame != "")
    frame.index = pd.Index(lines, dtype="int64", name="line")
    return frame, issues_frame(bad_lines, bad_reasons), short


def header_names(header_line: str, filename: str) -> tuple[str, list[str]]:
    """The delimiter of a header line and its cleaned, unique column names."""
    delimiter = _sniff_delimiter(header_line, filename)
    header = _header_cells(header_line, delimiter, filename)
    return delimiter, column_names(header)


def selected_frame(table: pa.Table, as_category: set[str], first_line: int) -> pd.DataFrame:
    """Columns read on the fast path as a frame indexed by source line (``as_category`` ones as Categoricals)."""
    frame = pd.DataFrame({
        n: _categorical_series(c) if n in as_category else _string_series(c)
        for n, c in zip(table.column_names, table.columns, strict=True)
    })
    frame.index = pd.RangeIndex(first_line, first_line + table.num_rows, name="line")
    return frame


def detect_decimal_comma(frame: pd.DataFrame) -> bool:
    """True when some column's cells mostly look like ``1,5`` / ``1.234,5`` (Excel-locale numbers)."""
    sample = frame.head(1000)
    for name in sample.columns:
        cells = sample[name].dropna()
        if len(cells) and cells.str.match(_DECIMAL_COMMA_CELL).mean() >= 0.9:
            return True
    return False


def refuse_decimal_comma(frame: pd.DataFrame, delimiter: str | None, filename: str) -> None:
    """``UnreadableFile`` when decimal commas, chosen by the user, contradict the file: it is Parquet (numbers
    stored as numbers); it is comma-delimited yet no cell holds a decimal comma (such a file writes its decimals
    with points); or some column's cells mostly have a point followed by other than three digits, which no
    thousands separator leaves (``950733.64`` would be read as 95,073,364). Looks at the first 1,000 rows."""
    if delimiter is None:
        raise UnreadableFile(f"{filename or 'The file'} is Parquet, whose numbers are stored as numbers, not "
                             f"written with decimal commas. {_WITHOUT_DECIMAL_COMMAS}")
    sample = frame.head(1000)
    for column in sample.columns:
        cells = sample[column].dropna().astype("string")
        dotted = cells.str.match(_DOT_DECIMAL_CELL).to_numpy(dtype=bool)
        if len(cells) and dotted.mean() >= 0.5:
            example = str(cells[dotted].iloc[0]).strip()
            inflated = parse_number(pd.Series([example]), decimal_comma=True)[0].iloc[0]
            raise UnreadableFile(
                f"Decimal commas were chosen for {filename or 'the file'}, but its column {preview(column)!r} holds "
                f"numbers with decimal points (e.g. {preview(example)!r}, which they would read as {inflated:,.0f}). "
                + _WITHOUT_DECIMAL_COMMAS
            )
    if delimiter == "," and not any(
        bool(sample[column].dropna().astype("string").str.match(_COMMA_DECIMAL_CELL).any()) for column in sample.columns
    ):
        raise UnreadableFile(
            f"Decimal commas were chosen for {filename or 'the file'}, but it is comma-delimited and none of its "
            "cells holds a number with a decimal comma, so every '.' would be read as a thousands separator. "
            + _WITHOUT_DECIMAL_COMMAS
        )


def _decode_text(data: bytes, filename: str, select: ColumnSelector | None) -> Decoded:
    """Decode a delimited text file into an all-string frame (on the fast path, only selected columns)."""
    text, encoding, warnings = to_utf8(data, filename)
    head = text[:_SNIFF_BYTES].decode("utf-8", errors="replace")
    header_line = header_line_of(text, filename)
    if not header_line.strip():
        raise UnreadableFile(
            f"{filename or 'The file'} is empty: it holds no header and no rows. "
            "Upload a billing export with a header row and at least one data row."
        )
    delimiter, names = header_names(header_line, filename)
    table = None
    tail = text[-_SNIFF_BYTES:].rstrip(b"\r\n")
    last_line = tail[tail.rfind(b"\n") + 1 :]
    plan = select(names) if select else None
    wanted = {w.lower() for w in plan.keep} if plan else None
    keep = names if wanted is None else [n for n in names if n.lower() in wanted]
    as_category = {n for n in keep if plan and n.lower() in {c.lower() for c in plan.categorical}}
    lines = _line_count(text)
    name = filename or "The file"
    if not head.startswith(("\r", "\n")) and last_line.count(b'"') % 2 == 0:
        budget.need(budget.text_need(len(text), lines * len(keep), careful=False), name,
                    f"{lines:,} lines × {len(keep):,} columns")
        table = _fast_read(text, names, delimiter, keep, as_category, lines)
    if table is not None:
        frame = selected_frame(table, as_category, 2)
        rejected = issues_frame()
    else:
        # Every line may become a row as wide as the header (short rows' missing cells included): refused here,
        # from the line count, before the csv module reads a row.
        budget.need(budget.text_need(len(text), lines * len(names), careful=True), name,
                    f"{lines:,} lines × {len(names):,} columns, read row by row")
        frame, rejected, short = _careful_read(text.decode("utf-8"), delimiter, filename)
        warnings += short_rows_warning(short, filename)
        frame.columns = names[: frame.shape[1]] if frame.shape[1] else names
        if frame.shape[1] == 0:
            frame = pd.DataFrame({n: pd.Series(dtype="string") for n in names})
    if len(frame) == 0 and len(rejected) == 0:
        raise UnreadableFile(
            f"{filename or 'The file'} has a header ({len(names)} columns) but no data rows, so there is nothing "
            "to import. Check that the export covers the period you meant."
        )
    decimal_comma = delimiter == ";" and detect_decimal_comma(frame)
    if decimal_comma:
        warnings.append(
            "Numbers use decimal commas (semicolon-delimited file with values like '1,5'); "
            "they were read as 1.5."
        )
    if delimiter != ",":
        warnings.append(f"Columns are separated by {DELIMITER_NAMES[delimiter]}s.")
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
    plan's categorical columns come back as pandas Categoricals (on the fast CSV path and for Parquet).

    Decoding holds a share of the process's import memory budget (``budget``; the caller's, when it holds one),
    grown from what it learns before each costly step and refused past it.
    """
    if not data or not data[:_SNIFF_BYTES].strip():
        raise UnreadableFile(
            f"{filename or 'The file'} is empty: it holds no header and no rows. "
            "Upload a billing export with a header row and at least one data row."
        )
    with budget.reserved(filename):
        data, filename = inflate(data, filename)
        if data[:4] == b"PAR1":
            return _decode_parquet(data, filename, select)
        if not data[:_SNIFF_BYTES].strip():
            raise UnreadableFile(
                f"{filename or 'The file'} is empty after decompression. "
                "Upload a billing export with a header row and at least one data row."
            )
        budget.need(budget.FAST_TEXT_FACTOR * len(data), filename or "The file", "decoding its text")
        return _decode_text(data, filename, select)
