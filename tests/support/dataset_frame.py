"""A workspace dataset read whole into one canonical frame, for checks (the app reads datasets as Ibis tables)."""

from pathlib import Path

import pandas as pd

from dashboard.workspace import datasets


def dataset_frame(name: str, at: Path | None = None) -> pd.DataFrame:
    """Every row of dataset ``name`` (its current version, or ``at``), through `datasets.batches`."""
    return pd.concat(list(datasets.batches(name, 100_000, at)), ignore_index=True)
