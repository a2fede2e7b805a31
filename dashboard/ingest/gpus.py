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


# Instance names as bills write them in free text: AWS ``g5.4xlarge`` / ``p6-b200.48xlarge``, Azure
# ``Standard_ND96isr_H100_v5``, GCP ``a3-highgpu-8g``.
_AWS_INSTANCE = re.compile(r"(?<![\w.-])([a-z][a-z0-9-]*\d[a-z0-9-]*\.(?:\d+x)?(?:large|xlarge|metal))(?![\w-])", re.I)
_AZURE_SIZE = re.compile(r"(?<![\w])Standard_([A-Za-z0-9]+(?:_[A-Za-z0-9]+)*)")
_GCP_MACHINE = re.compile(r"(?<![\w-])([a-z]\d+[a-z]?-[a-z]+-\d+g?)(?![\w-])", re.I)
# Families that carry GPUs: AWS p and g instances (g4dn, g5, g6e …), Azure N-series, GCP a2/a3/a4/g2.
_GPU_FAMILY = re.compile(r"^(?:[pg]\d|n[cdv]\d|a[234]-|g2-|dl1)", re.I)


def instance_in_text(text: object) -> tuple[float | None, str | None, bool]:
    """GPU count and type of the instance a free-text cell names, and whether the cell looks like GPU compute.

    ``$1.624 per On Demand Linux g5.4xlarge Instance Hour`` → (1, "A10G", True); a GPU family missing from
    the tables (``g3.4xlarge``) → (None, None, True); text without an instance or GPU name → (None, None, False).
    """
    if not isinstance(text, str):
        return None, None, False
    for pattern, table, key in (
        (_AWS_INSTANCE, "aws_instance_types", lambda m: m.group(1)),
        (_AZURE_SIZE, "azure_vm_sizes", lambda m: m.group(1)),
        (_GCP_MACHINE, "gcp_machine_types", lambda m: m.group(1)),
    ):
        for match in pattern.finditer(text):
            count, gpu_type = instance_gpus(key(match), table)
            if count is not None:
                return count, gpu_type, count > 0
            if _GPU_FAMILY.match(key(match)):
                return None, None, True
    named = gpu_name(text) is not None or re.search(r"\bgpus?\b", text, re.I) is not None
    return None, None, named
