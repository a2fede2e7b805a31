"""The waste checks in the order the Waste tab and the report list them, each with its share of spend
(`dashboard.ui.retro_view.ranked_checks`), on hand-made checks."""

import pytest

from dashboard.retro.results import WasteResult
from dashboard.retro.waste import WasteCheck, WasteSummary
from dashboard.ui.retro_view import ranked_checks


def check(name: str, kind: str, usd: float | None) -> WasteCheck:
    return WasteCheck(name, name, kind, usd, "USD", usd, "", None)


CHECKS = (check("kpi", "kpi", 900.0), check("small", "waste", 50.0), check("unpriced", "waste", None),
          check("large", "waste", 250.0), check("growth", "monthly", 40.0))


@pytest.mark.parametrize(("total_cost", "expected"), [
    # waste first, largest first; a share only for waste with an amount: 250 / 1,000 = 25 %, 50 / 1,000 = 5 %
    (1000.0, [("large", " · 25 % of spend"), ("small", " · 5 % of spend"), ("unpriced", ""), ("kpi", ""),
              ("growth", "")]),
    (0.0, [("large", ""), ("small", ""), ("unpriced", ""), ("kpi", ""), ("growth", "")]),  # no spend: no share
])
def test_waste_comes_first_largest_first_with_its_share_of_spend(total_cost, expected):
    result = WasteResult(CHECKS, WasteSummary(300.0, None, ()), total_cost)
    assert [(check.id, share) for check, share in ranked_checks(result)] == expected
