"""A workspace dataset written by hand for the rollup tests: canonical rows written, rolled up and proven as an
import does, its metadata written beside them, and its rows as the engine reads them."""

from pathlib import Path

import ibis.expr.types as ir
import pandas as pd

from dashboard.ingest.schema import CANONICAL_COLUMNS
from dashboard.query import engine
from dashboard.workspace import datasets, rollups
from dashboard.workspace.datasets import Metadata
from dashboard.workspace.writer import MonthWriter

BUILT = "2026-12-06T12:03:00+00:00"  # the import's time: the page says "built 12:03"


def written(folder: Path, frame: pd.DataFrame) -> tuple[Metadata, ir.Table]:
    """``frame`` (every canonical column) as the dataset "bill" in ``folder``: its metadata and its rows."""
    writer = MonthWriter(folder / datasets.USAGE)
    writer.write(frame[list(CANONICAL_COLUMNS)].astype(CANONICAL_COLUMNS))
    writer.close()
    backend = engine.default()
    entries = rollups.build(backend, folder, writer.months, BUILT)
    rollups.prove(backend, folder, entries, writer.months)
    info = Metadata(name="bill", source="by hand", source_bytes=0, imported_at=BUILT, rows=len(frame), bytes=0,
                    start=None, end=None, months=writer.months, streamed=False, rollups=entries)
    (folder / datasets.METADATA).write_text(info.to_json(), encoding="utf-8")  # the rows open by it
    usage = backend.read_parquet(str(folder / datasets.USAGE / "**" / "*.parquet"), hive_partitioning=True)
    return info, usage.drop("month")
