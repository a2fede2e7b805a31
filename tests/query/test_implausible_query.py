"""One plausibility rule: ``calibrate.implausible_test`` (a query, on every engine) finds the rows the import's
``ingest.plausible.implausible`` rejects, on a table of cases worked out by hand."""

import ibis
import numpy as np
import pandas as pd
from usage_rows import usage

from dashboard.ingest.plausible import implausible
from dashboard.retro.calibrate import implausible_test

HOUR = {"period_start": "2025-06-01T00:00:00Z", "period_end": "2025-06-01T01:00:00Z", "currency": "USD",
        "charge_kind": "usage"}
# (row, implausible?) — lines from 2
CASES = [
    ({**HOUR, "gpu_hours": 8.0, "cost": 80.0}, False),  # $10 per GPU-hour
    ({**HOUR, "gpu_hours": 1e300, "cost": 1.0}, True),  # 10³⁰⁰ GPU-hours in an hour
    ({**HOUR, "gpu_hours": 8.0, "cost": 1e300}, True),
    ({**HOUR, "gpu_hours": 8.0, "cost": -1e12}, True),  # negative on a usage row
    ({**HOUR, "gpu_hours": 0.0, "cost": -50.0, "charge_kind": "adjustment"}, False),  # a credit
    ({**HOUR, "gpu_hours": 0.0, "cost": -2e12, "charge_kind": "adjustment"}, True),  # a credit beyond $10¹²
    ({**HOUR, "gpu_hours": -8.0, "cost": 24.0}, True),
    ({**HOUR, "gpu_hours": 8.0, "cost": 16_000.0}, True),  # $2,000 per GPU-hour
    ({**HOUR, "gpu_hours": 8.0, "cost": 800_000.0, "currency": "JPY"}, False),  # ¥100,000 ($625) per GPU-hour
    ({**HOUR, "gpu_hours": 8.0, "cost": 2_560_000.0, "currency": "JPY"}, True),  # ¥320,000 ($2,000)
    ({**HOUR, "gpu_hours": 8.0, "cost": float("inf")}, True),
    ({**HOUR, "gpu_hours": 500_000_000.0, "cost": 0.0, "period_end": None}, False),  # a month of 672k GPUs
    ({**HOUR, "gpu_hours": 800_000_000.0, "cost": 0.0, "period_end": None}, True),  # a month of 1.08M GPUs
]
EXPECTED = [line for line, (_, bad) in enumerate(CASES, start=2) if bad]


def table() -> pd.DataFrame:
    frame = usage(*(row for row, _ in CASES))
    frame["period_end"] = pd.to_datetime([row.get("period_end", HOUR["period_end"]) for row, _ in CASES], utc=True)
    return frame


def test_the_import_rejects_the_cases():
    frame = table()
    columns = {name: frame[name] for name in ("cost", "billed_cost", "gpu_hours", "period_start", "period_end",
                                              "currency", "charge_kind")}
    reasons = implausible(columns, frame.index)
    assert frame["source_row"][reasons.notna().to_numpy(dtype=bool)].tolist() == EXPECTED


def test_the_query_finds_the_same_rows(backend):
    frame = table()
    bound = backend.create_table("implausible_cases", ibis.memtable(frame), overwrite=True)
    found = backend.execute(bound.filter(implausible_test(bound)).select("source_row"))["source_row"]
    assert sorted(np.asarray(found, dtype=int).tolist()) == EXPECTED
