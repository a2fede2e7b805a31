"""Malformed and hostile files for the security tests, written at test time (the large ones would not fit a repo).

`python tests/support/hostile_corpus.py FOLDER` writes them by hand; the tests call `write_corpus`. Sizes are
chosen so each file passes the default bounds of `dashboard.settings` by a clear margin: a gzip bomb of 4 GiB of
zeros in 4 MB, the same gzipped again (a nested bomb), a .gz inside a .gz inside a .gz, an 8 GB sparse file,
a FIFO, a valid FOCUS export with 2,600 tag columns (a 68 KB header), a 100,000-column CSV, and a comma-separated
FOCUS file with dot decimals (for `--decimal-comma`).
"""

from __future__ import annotations

import gzip
import os
import sys
import zlib
from pathlib import Path

GIB = 1 << 30
MIB = 1 << 20
FOCUS_SMALL = Path(__file__).resolve().parents[1] / "data" / "ingest" / "focus_small.csv"


def gzip_member_of_zeros(size: int) -> bytes:
    """One gzip member holding ``size`` zero bytes, compressed a MiB at a time (never ``size`` in memory)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(MIB)
    parts = [packer.compress(zeros) for _ in range(size // MIB)]
    return b"".join(parts) + packer.flush()


def gzip_bomb(inflated: int = 4 * GIB) -> bytes:
    """A multi-member gzip stream of ``inflated`` zero bytes (gzip allows concatenated members)."""
    member = gzip_member_of_zeros(256 * MIB)
    return member * (inflated // (256 * MIB))


def wide_focus(tag_columns: int = 2_600) -> bytes:
    """focus_small.csv with ``tag_columns`` extra, empty ``x_Tag…`` columns: a valid export with a wide header."""
    header, *rows = FOCUS_SMALL.read_bytes().splitlines()
    extra = b"".join(b",x_Tag%05d_%s" % (i, b"k" * 14) for i in range(tag_columns))
    blanks = b"," * tag_columns
    return b"\n".join([header + extra, *(row + blanks for row in rows if row)]) + b"\n"


def many_columns(columns: int = 100_000) -> bytes:
    """A CSV with ``columns`` columns and one row."""
    return (",".join(f"c{i}" for i in range(columns)) + "\n" + ",".join("1" * columns) + "\n").encode()


def write_corpus(folder: Path) -> dict[str, Path]:
    """Write every hostile file into ``folder``; their paths by name."""
    folder.mkdir(parents=True, exist_ok=True)
    bomb = gzip_bomb()
    files = {
        "bomb.csv.gz": bomb,
        "nested_bomb.csv.gz.gz": gzip.compress(bomb, compresslevel=9),
        "triple.csv.gz.gz.gz": gzip.compress(gzip.compress(gzip.compress(FOCUS_SMALL.read_bytes()))),
        "wide_focus.csv": wide_focus(),
        "many_columns.csv": many_columns(),
        "dot_decimal_focus.csv": FOCUS_SMALL.read_bytes(),
    }
    paths = {}
    for name, data in files.items():
        paths[name] = folder / name
        paths[name].write_bytes(data)
    paths["sparse.csv"] = folder / "sparse.csv"
    with open(paths["sparse.csv"], "wb") as sparse:
        sparse.write(b"a,b\n1,2\n")
        sparse.truncate(8 * 10**9)
    paths["fifo.csv"] = folder / "fifo.csv"
    os.mkfifo(paths["fifo.csv"])
    return paths


if __name__ == "__main__":
    for name, path in write_corpus(Path(sys.argv[1])).items():
        print(f"{name}: {path}")
