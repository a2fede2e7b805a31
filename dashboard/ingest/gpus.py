"""Accelerator names and the instance-type tables: which GPU, and how many, a billing line ran on."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pandas as pd

from dashboard.ingest.rows import strings
from dashboard.ingest.values import factorized, map_unique

DATA_DIR = Path(__file__).resolve().parents[2] / "data"


GPU_NAMES: tuple[str, ...] = (
    "GB200",
    "B200",
    "B100",
    "H200",
    "H100",
    "H800",
    "A100",
    "A800",
    "A10G",
    "A10",
    "L40S",
    "L40",
    "L4",
    "V100",
    "T4",
    "P100",
    "P4",
    "K80",
    "MI300X",
    "MI250X",
    "RTX6000",
)


_GPU_NAME = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(GPU_NAMES) + r")(?![A-Za-z0-9])", re.IGNORECASE)


def gpu_name(text: object) -> str | None:
    """The plain accelerator name mentioned in ``text`` (``Nvidia Tesla A100 GPU`` → ``A100``), or None."""
    if not isinstance(text, str):
        return None
    match = _GPU_NAME.search(text.replace("_", " "))
    return match.group(1).upper() if match else None


def gpu_names(s: pd.Series) -> pd.Series:
    """``gpu_name`` of every cell, computed once per distinct value (string dtype, NA where none)."""
    return map_unique(s, gpu_name, dtype="string")


@cache
def instance_table(name: str) -> pd.DataFrame:
    """A ``data/<name>.csv`` table of instance types (first column, lower-cased key) → gpu_count, gpu_type."""
    table = pd.read_csv(DATA_DIR / f"{name}.csv", dtype={"gpu_count": "float64"})
    key = table.columns[0]
    return table.assign(**{key: table[key].str.lower()}).set_index(key)[["gpu_count", "gpu_type"]]


def instance_gpus(key: str, table_name: str) -> tuple[float | None, str | None]:
    """GPU count and GPU type of one instance type in ``data/<table_name>.csv`` (case-insensitive), or Nones."""
    table = instance_table(table_name)
    row = key.strip().lower()
    if row not in table.index:
        return None, None
    return float(table.at[row, "gpu_count"]), str(table.at[row, "gpu_type"])


def lookup_instances(keys: pd.Series, table_name: str) -> tuple[pd.Series, pd.Series]:
    """GPU count (NaN where unknown) and GPU type (NA) of each instance-type key (case-insensitive)."""
    counts, types = factorized(keys, lambda key: instance_gpus(key, table_name), 2)
    return (pd.Series(counts, index=keys.index, dtype="float64"), strings(types, keys.index))


def gpu_type_label(names: pd.Series) -> pd.Series:
    """Accelerator names as upper-case labels: ``h100`` → ``H100``, ``nvidia_a100_80gb`` → ``A100_80GB``."""
    stripped = names.astype("string").str.strip()
    return stripped.str.replace(r"^(?i:nvidia|tesla|amd)[\s_-]+", "", regex=True).str.upper()
