"""Accelerator catalogue: dense BF16 (and FP8) peak, memory, HBM bandwidth and links per accelerator (and the NVLink
domain where it is not the node), read from data/hardware.csv."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CATALOGUE_CSV = Path(__file__).resolve().parents[2] / "data" / "hardware.csv"
CUSTOM = "custom"


@dataclass(frozen=True)
class Accelerator:
    key: str
    label: str
    peak_bf16_dense_tflops: float
    memory_gb: float
    source: str
    memory_source: str
    generation: str
    peak_fp8_dense_tflops: float  # NaN: no FP8 tensor cores (FP8 runs at the BF16 peak)
    hbm_tb_per_s: float
    nvlink_gb_per_s: float  # per GPU and direction, within a node
    network_gb_per_s: float  # per GPU, between nodes
    network_source: str
    nvlink_domain: float = float("nan")  # GPUs one NVLink domain joins where it is not the node (GB200 NVL72: 72)


def _normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@cache
def catalogue() -> dict[str, Accelerator]:
    """Every accelerator in the catalogue, keyed by its plain name (`h100`, `tpuv5e`, ...)."""
    with CATALOGUE_CSV.open(newline="", encoding="utf-8") as handle:
        return {
            row["key"]: Accelerator(
                key=row["key"],
                label=row["label"],
                peak_bf16_dense_tflops=float(row["peak_bf16_dense_tflops"]),
                memory_gb=float(row["memory_gb"]),
                source=row["source"],
                memory_source=row["memory_source"],
                generation=row["generation"],
                peak_fp8_dense_tflops=float(row["peak_fp8_dense_tflops"] or "nan"),
                hbm_tb_per_s=float(row["hbm_tb_per_s"]),
                nvlink_gb_per_s=float(row["nvlink_gb_per_s"]),
                network_gb_per_s=float(row["network_gb_per_s"]),
                network_source=row["network_source"],
                nvlink_domain=float(row["nvlink_domain"] or "nan"),
            )
            for row in csv.DictReader(handle)
        }


@cache
def _aliases() -> dict[str, str]:
    with CATALOGUE_CSV.open(newline="", encoding="utf-8") as handle:
        table = {}
        for row in csv.DictReader(handle):
            for name in [row["key"], row["label"], *row["aliases"].split(";")]:
                table[_normalise(name)] = row["key"]
        return table


def resolve_gpu_type(name: str) -> str:
    """The catalogue key for a plain name or label, case- and punctuation-insensitive; `custom` stays custom."""
    normalised = _normalise(name)
    if normalised == CUSTOM:
        return CUSTOM
    if normalised in _aliases():
        return _aliases()[normalised]
    known = ", ".join(acc.label for acc in catalogue().values())
    raise ValueError(f"unknown gpu_type {name!r}: use one of {known}, or 'custom' with peak_tflops")


def generation_of(gpu_type: str) -> str:
    """The catalogue GPU's generation (`ampere`, `hopper`, ...), or `custom`."""
    return CUSTOM if gpu_type == CUSTOM else catalogue()[gpu_type].generation
