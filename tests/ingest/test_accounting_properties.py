"""Property: for random FOCUS tables with random bad cells, every row is accounted for and the cost total
equals the sum of the EffectiveCost cells of the rows that were not rejected; the rejected rows are those with an
unreadable cell or a negative cost (every row is usage, which is never negative)."""

import math

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.ingest import import_bytes

GOOD_COST = st.decimals(min_value=-1000, max_value=1000, places=2, allow_nan=False, allow_infinity=False)
COST_CELL = st.one_of(GOOD_COST.map(str), st.sampled_from(["abc", "12..3", "$$"]))
DATE_CELL = st.one_of(st.just("2025-06-03T10:00:00Z"), st.just("2025-06-03T11:00:00Z"), st.just("nope"))
ROW = st.tuples(
    DATE_CELL, COST_CELL, GOOD_COST.map(str), st.sampled_from(["Standard", "Dynamic", "Committed"])
)


@settings(max_examples=60, deadline=None)
@given(st.lists(ROW, min_size=1, max_size=25))
def test_rows_balance_and_cost_reconciles(rows):
    header = "ChargePeriodStart,EffectiveCost,BilledCost,PricingCategory,BillingCurrency,ChargeCategory\n"
    body = "".join(f"{d},{c},{b},{p},USD,Usage\n" for d, c, b, p in rows)
    usage, report = import_bytes((header + body).encode())
    assert report.rows_read == len(rows)
    assert report.rows_read == report.rows_used + report.rows_excluded + report.rows_rejected
    rejected = set(report.rejected["line"])
    expected = sum(float(c) for i, (_, c, _, _) in enumerate(rows, start=2) if i not in rejected)
    assert math.isclose(usage["cost"].sum(), expected, abs_tol=1e-6)
    bad = {
        i
        for i, (d, c, b, _) in enumerate(rows, start=2)
        if d == "nope" or pd.isna(pd.to_numeric(c, errors="coerce")) or float(c) < 0 or float(b) < 0
    }
    assert rejected == bad
