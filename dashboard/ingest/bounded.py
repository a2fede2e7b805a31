"""Bounded reading: only regular files, sizes checked before reading, archives inflated in a stream under a ceiling.

One file must not take a shared server down. A device (``/dev/zero``), a FIFO or a socket is refused before it
is opened for reading; a file larger than ``PLANNER_MAX_IMPORT_MB`` (``dashboard.settings``, 4× the upload
limit by default) is refused from its size, so an 8 GB sparse file is never read; gzip and zip layers are
inflated piece by piece and refused as soon as the inflated bytes pass the same ceiling or the layers pass
``PLANNER_MAX_ARCHIVE_DEPTH``. The bytes inflated are charged as they come to the import's share of the process's
memory budget (``dashboard.ingest.budget``), so bombs inflated by several sessions at once cannot add up past it.
Refusals are ``LimitExceeded``: their messages name the bound and how to get past it, and never quote the file's
content.
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path

from dashboard import settings
from dashboard.ingest.schema import UnreadableFile

_IN_CHUNK = 1 << 16  # compressed bytes fed to zlib at a time (bounds the copies of its unconsumed input)
_OUT_CHUNK = 1 << 20  # inflated bytes produced at a time
_CHARGE_STEP = 1 << 24  # inflated bytes charged to the import's memory reservation ahead of the output
_GZIP = b"\x1f\x8b"
_ZIP = b"PK\x03\x04"


class LimitExceeded(UnreadableFile):
    """A file refused by a kind, size or depth bound; the message names the bound and quotes no content."""


def _mb(size: int) -> str:
    return f"{size / 1e6:,.0f} MB"


def _too_big(name: str, size: int, what: str) -> LimitExceeded:
    ceiling = settings.megabytes(settings.MAX_IMPORT_MB)
    return LimitExceeded(
        f"{name} {what} more than {_mb(ceiling)}, the most one import reads ({settings.MAX_IMPORT_MB}). Export a "
        "shorter period or split the export into parts and import them one by one, or have the server's "
        f"operator raise {settings.MAX_IMPORT_MB}." + (f" (size: {_mb(size)})" if size else "")
    )


def _check_regular(name: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise LimitExceeded(
            f"{name} is not a regular file (it is a device, a pipe, a socket or a folder), so it is not read. "
            "Give the path of an exported CSV, Parquet, .gz or .zip file."
        )


def checked_size(path: Path) -> int:
    """The size of ``path`` after checking that it is a regular file within the import ceiling."""
    info = os.stat(path)
    _check_regular(path.name, info.st_mode)
    if info.st_size > settings.megabytes(settings.MAX_IMPORT_MB):
        raise _too_big(path.name, info.st_size, "holds")
    return info.st_size


def read_regular_file(path: Path) -> bytes:
    """The bytes of ``path``: a regular file (checked before and after opening) within the import ceiling."""
    checked_size(path)
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with open(descriptor, "rb", closefd=True) as stream:
        info = os.fstat(descriptor)  # the path may have been swapped for a device or a FIFO since the check
        _check_regular(path.name, info.st_mode)
        if info.st_size > settings.megabytes(settings.MAX_IMPORT_MB):
            raise _too_big(path.name, info.st_size, "holds")
        data = stream.read(info.st_size + 1)
    if len(data) > info.st_size:
        raise LimitExceeded(f"{path.name} grew while it was being read; import it again once it is complete.")
    return data


def checked_parts(parts: Iterable[Path], folder: Path, *, bounded: bool = True) -> list[Path]:
    """Parquet parts of ``folder``: regular files inside it (links out of it refused), within the import ceiling
    unless ``bounded`` is False (a streamed import, whose memory does not grow with the parts)."""
    kept = sorted(p for p in parts if p.is_file())
    inside = Path(os.path.realpath(folder))
    total = 0
    for part in kept:
        if not Path(os.path.realpath(part)).is_relative_to(inside):
            raise LimitExceeded(f"{part.name} in {folder.name} links to a file outside that folder, so it is not "
                                "read. Copy the part into the folder instead of linking to it.")
        if not bounded:
            _check_regular(part.name, os.stat(part).st_mode)
            continue
        total += checked_size(part)
        if total > settings.megabytes(settings.MAX_IMPORT_MB):
            raise _too_big(f"The Parquet parts in {folder.name}", total, "hold")
    return kept


class _Meter:
    """Checks an inflating layer's output: refused past ``ceiling`` bytes, and charged to the import's memory
    reservation (``budget``: twice the output, plus the layer's input) a step ahead of the output."""

    def __init__(self, name: str, ceiling: int, source: int) -> None:
        self.name, self.ceiling, self.source, self.charged = name, ceiling, source, -1

    def check(self, size: int) -> None:
        if size > self.ceiling:
            raise _too_big(self.name, 0, "inflates to")
        if size > self.charged:
            from dashboard.ingest import budget  # budget imports this module

            self.charged = min(size + max(size // 8, _CHARGE_STEP), self.ceiling)
            budget.need(budget.INFLATE_FACTOR * self.charged + self.source, self.name, "while inflating it")


def _gunzip(data: bytes, name: str, ceiling: int) -> bytes:
    """Every gzip member of ``data`` inflated, refused as soon as the output passes ``ceiling`` bytes."""
    meter = _Meter(name, ceiling, len(data))
    meter.check(0)
    out = io.BytesIO()
    view = memoryview(data)
    position = 0
    while position < len(data):
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        start = position
        while not inflater.eof and start < len(data):
            end = min(start + _IN_CHUNK, len(data))
            pending: memoryview | bytes = view[start:end]
            while pending and not inflater.eof:
                out.write(inflater.decompress(pending, _OUT_CHUNK))
                meter.check(out.tell())
                pending = inflater.unconsumed_tail
            start = end
        while not inflater.eof and (piece := inflater.decompress(b"", _OUT_CHUNK)):
            out.write(piece)  # output zlib still held when the input ran out
            meter.check(out.tell())
        if not inflater.eof:
            raise zlib.error("the stream ends before its end-of-stream marker")
        position = start - len(inflater.unused_data)
        if data.count(b"\x00", position) == len(data) - position:
            break  # zero padding after the last member, as gzip allows
        if view[position : position + 2] != _GZIP:
            raise zlib.error("bytes after the end of the compressed data")
    return out.getvalue()


def _unzip(data: bytes, name: str, ceiling: int) -> tuple[bytes, str]:
    """The one data file of a zip archive, inflated in pieces and refused past ``ceiling`` bytes."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = [m for m in archive.infolist() if not m.is_dir() and not m.filename.startswith("__MACOSX/")]
        if len(members) != 1:
            names = ", ".join(m.filename for m in members[:5]) or "none"
            raise UnreadableFile(
                f"{name or 'The zip archive'} holds {len(members)} files ({names}); the importer reads "
                "a zip with exactly one CSV or Parquet file. Several parts may belong to different report "
                "versions and summing them could double count, so unzip them and upload each part separately."
            )
        member = members[0]
        if member.file_size > ceiling:
            raise _too_big(name, member.file_size, "inflates to")
        meter = _Meter(name, ceiling, len(data))
        meter.check(member.file_size)  # what the archive says (checked again as it inflates: it may lie)
        out = io.BytesIO()
        with archive.open(member) as stream:
            while piece := stream.read(_OUT_CHUNK):
                out.write(piece)
                meter.check(out.tell())
    return out.getvalue(), member.filename


def inflate(data: bytes, filename: str) -> tuple[bytes, str]:
    """Unwrap gzip and single-member zip layers of ``data`` within the size and depth bounds; payload and name."""
    ceiling = settings.megabytes(settings.MAX_IMPORT_MB)
    depth = settings.limit(settings.MAX_ARCHIVE_DEPTH)
    name = filename or "The file"
    layers = 0
    while data[:2] == _GZIP or data[:4] == _ZIP:
        layers += 1
        if layers > depth:
            raise LimitExceeded(
                f"{name} is wrapped in more than {depth} archive layers (such as a .gz inside a .gz), more than an "
                f"export needs ({settings.MAX_ARCHIVE_DEPTH}). Unpack it to the CSV or Parquet file and import that."
            )
        gzip = data[:2] == _GZIP
        try:
            if gzip:
                data, filename = _gunzip(data, name, ceiling), filename.removesuffix(".gz")
            else:
                data, filename = _unzip(data, name, ceiling)
        except MemoryError:
            raise LimitExceeded(
                f"{name} inflates to more than this machine's free memory. Export a shorter period or split the "
                f"export into parts, or lower {settings.MAX_IMPORT_MB} so that such files are refused sooner."
            ) from None
        except (zlib.error, EOFError, zipfile.BadZipFile, RuntimeError, NotImplementedError) as exc:
            kind, suffix = ("a gzip archive that", ".gz") if gzip else ("a zip archive that", ".zip")
            raise UnreadableFile(
                f"{name} is {kind} cannot be decompressed ({exc}); it is probably truncated or corrupt. Download "
                f"the export again and upload the complete {suffix} file."
            ) from None
    return data, filename
