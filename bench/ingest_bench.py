"""`python -m dashboard ingest` of a 1,000,000-row FOCUS CSV against pyarrow's own reader of the same file
(`pyarrow.csv.read_csv`), each as a whole subprocess (start-up and imports included): time, and peak memory.

The generators (`write_focus_csv`, `focus_table`) are also the test suite's and `make bench-scale`'s data.
"""

from __future__ import annotations

import atexit
import json
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from bench.harness import Measurement
from bench.timing import paired_medians_s

ROWS = 1_000_000
RUNS = 5
RESOURCES = 5000  # the generated bill's resources (instances), each with one set of tags

# Runs a command as the only child of a fresh, small process, so that RUSAGE_CHILDREN is that child's peak alone.
_PEAK_RSS = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""

INSTANCES = [
    ("p5.48xlarge", 8),
    ("p4d.24xlarge", 8),
    ("g6e.12xlarge", 4),
    ("g5.xlarge", 1),
    ("m7i.2xlarge", 0),
]


def write_focus_csv(path: Path, rows: int = ROWS, seed: int = 7, unreadable_every: int = 0) -> None:
    """A realistic FOCUS 1.2 CSV: hourly rows over a quarter, a few hundred distinct tag and SKU cells.

    With ``unreadable_every`` = k, every k-th row (rows 0, k, 2k …) has the start time ``not a date``.
    """
    pa_csv.write_csv(plain(focus_table(rows, seed, unreadable_every)), path)


def plain(table: pa.Table) -> pa.Table:
    """``table`` with its dictionary-encoded columns as plain strings (what a CSV writer takes)."""
    return pa.table({name: column.cast(pa.string()) if pa.types.is_dictionary(column.type) else column
                     for name, column in zip(table.column_names, table.columns, strict=True)})


def _coded(codes: np.ndarray, values: list[str]) -> pa.DictionaryArray:
    """``values[codes]`` as a dictionary-encoded array (built without one Python string per row)."""
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(values, pa.string()))


def _constant(value: str, rows: int) -> pa.DictionaryArray:
    return _coded(np.zeros(rows, dtype=np.int32), [value])


def focus_table(rows: int = ROWS, seed: int = 7, unreadable_every: int = 0) -> pa.Table:
    """The rows of ``write_focus_csv`` as an Arrow table (text columns dictionary-encoded)."""
    rng = np.random.default_rng(seed)
    hours = rng.integers(0, 24 * 91, rows)
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    hour_starts = np.datetime64("2025-04-01T00:00:00") + np.arange(24 * 91 + 1).astype("timedelta64[h]")
    hour_text = pc.strftime(pa.array(hour_starts, pa.timestamp("s")), format=fmt).to_pylist()
    start_text = _coded(hours, hour_text)
    end_text = _coded(hours + 1, hour_text)
    if unreadable_every:
        bad = pa.array(np.arange(rows) % unreadable_every == 0)
        start_text = pc.if_else(bad, pa.scalar("not a date"), start_text.cast(pa.string()))
    skus = [
        json.dumps({"InstanceType": name, "GpuCount": gpus, "CoreCount": 8 * (i + 1), "x_Zone": z})
        for i, (name, gpus) in enumerate(INSTANCES)
        for z in "abcdefghijklmnopqrstuvwxyz"[:20]
    ]
    tags = [
        json.dumps({"team": f"team-{t}", "project": f"proj-{p}", "run_id": f"r-{t:02d}{p:02d}"})
        for t in range(12)
        for p in range(25)
    ] + [""]
    sku_idx = rng.integers(0, len(skus), rows)
    # A resource carries one set of tags, as in a real bill (the FOCUS sample data: every resource one sub-account,
    # 99.4 % one set of tags): resources are numbered in blocks of about 17 per set, the last set untagged.
    resources = rng.integers(0, RESOURCES, rows)
    tag_idx = resources * len(tags) // RESOURCES
    pricing_idx = rng.choice(3, rows, p=[0.5, 0.2, 0.3])
    quantity = np.round(rng.uniform(0.1, 1.0, rows), 4)
    effective = np.round(rng.uniform(0.0, 100.0, rows), 6)
    billed = np.where(pricing_idx == 2, 0.0, effective)
    regions = rng.integers(0, 3, rows)
    return pa.table(
        {
            "BillingAccountId": _constant("900000000001", rows),
            "SubAccountId": _constant("900000000042", rows),
            "ChargePeriodStart": start_text,
            "ChargePeriodEnd": end_text,
            "ChargeCategory": _constant("Usage", rows),
            "PricingCategory": _coded(pricing_idx, ["Standard", "Dynamic", "Committed"]),
            # Committed rows of the CPU instance are commitment nobody used; the others used theirs.
            "CommitmentDiscountStatus": pa.array(np.where(
                pricing_idx == 2, np.where(sku_idx // 20 == len(INSTANCES) - 1, "Unused", "Used"), None)),
            "ServiceName": _constant("Amazon Elastic Compute Cloud", rows),
            "ServiceCategory": _constant("Compute", rows),
            "ResourceId": _coded(resources, [f"i-{i}" for i in range(RESOURCES)]),
            "RegionId": _coded(regions, ["us-east-1", "us-west-2", "eu-west-1"]),
            "SkuPriceDetails": _coded(sku_idx, skus),
            "ConsumedQuantity": pa.array(quantity),
            "ConsumedUnit": _constant("Hours", rows),
            "ListCost": pa.array(np.round(effective * 1.3, 6)),
            "BilledCost": pa.array(billed),
            "EffectiveCost": pa.array(effective),
            "BillingCurrency": _constant("USD", rows),
            "Tags": _coded(tag_idx, tags),
        }
    )


@cache
def _focus_csv() -> Path:
    """The 1,000,000-row file, written once per run into a folder removed at exit."""
    folder = tempfile.TemporaryDirectory()
    atexit.register(folder.cleanup)
    path = Path(folder.name) / "focus_1m.csv"
    write_focus_csv(path)
    return path


def _commands() -> tuple[list[str], list[str]]:
    """The ingest command and pyarrow's reader of the same file."""
    path = _focus_csv()
    return ([sys.executable, "-m", "dashboard", "ingest", str(path), "--json"],
            [sys.executable, "-c", f"import pyarrow.csv; pyarrow.csv.read_csv({str(path)!r})"])


def _file_size() -> str:
    return f"{_focus_csv().stat().st_size / 1e6:.0f} MB file"


def ingest_1m_rows() -> Measurement:
    ingest, reader = _commands()
    value_s, reference_s = paired_medians_s(lambda: subprocess.run(ingest, check=True, stdout=subprocess.DEVNULL),
                                            lambda: subprocess.run(reader, check=True, stdout=subprocess.DEVNULL),
                                            RUNS)
    return Measurement(value_s, reference_s, f"{_file_size()}, median of {RUNS} alternating runs")


def _peak_rss_mb(command: list[str]) -> float:
    out = subprocess.run([sys.executable, "-c", _PEAK_RSS, *command], check=True, capture_output=True, text=True)
    return int(out.stdout.strip()) * 1024 / 1e6  # ru_maxrss is in KiB on Linux


def ingest_1m_rows_peak_memory() -> Measurement:
    ingest, reader = _commands()
    return Measurement(_peak_rss_mb(ingest), _peak_rss_mb(reader), f"{_file_size()}, peak resident set of one run each")
