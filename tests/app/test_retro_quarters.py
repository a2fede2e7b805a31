"""AppTest: a bill spanning two calendar quarters has a running total, a budget and a forecast per quarter (issue 34,
item 5): the picker names both quarters, the closed one draws no forecast, each keeps its own budget."""

import base64
import csv
import json
from pathlib import Path

import numpy as np
import pytest

from dashboard.ui import retro_view

NONE = "(none)"
DAY_USD = 100.0  # each day's one GPU row: 8 GPUs for an hour, $100
# Ten days in 2025 Q2 (21–30 June) and ten in 2025 Q3 (1–10 July): $1,000 in each quarter.
DAYS = [f"2025-06-{day:02d}" for day in range(21, 31)] + [f"2025-07-{day:02d}" for day in range(1, 11)]


def _write_bill(path: Path) -> None:
    header = ["ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "PricingCategory", "ServiceName", "ResourceId",
              "SkuPriceDetails", "ConsumedQuantity", "ConsumedUnit", "BilledCost", "EffectiveCost", "BillingCurrency",
              "Tags"]
    sku = json.dumps({"InstanceType": "p5.48xlarge", "GpuCount": 8})
    with path.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        for number, day in enumerate(DAYS):
            writer.writerow([f"{day}T00:00:00Z", f"{day}T01:00:00Z", "Usage", "Standard",
                             "Amazon Elastic Compute Cloud", f"res-{number}", sku, 1, "Hours", DAY_USD, DAY_USD, "USD",
                             json.dumps({"team": "a"})])


@pytest.fixture
def spend_tab(app, tmp_path):
    bill = tmp_path / "two_quarters.csv"
    _write_bill(bill)
    at = app.run()
    at.switch_page("app_pages/retro.py")
    at.query_params["retro.runs"] = NONE
    at.run()
    at.file_uploader(key="retro.billing_upload").set_value((bill.name, bill.read_bytes(), "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def _running_total(at) -> dict[str, list]:
    """The spend chart's lower panel: the running total's points and the forecast and budget traces' values."""
    spec = next(json.loads(chart.proto.spec) for chart in at.get("plotly_chart") if "retro.spend" in chart.proto.id)
    return {trace.get("name", ""): _values(trace["y"]) for trace in spec["data"] if trace.get("yaxis") == "y2"}


def _values(y: list | dict) -> list[float]:
    """A trace's values, plain or as plotly's typed array (base64 bytes of a dtype)."""
    if isinstance(y, dict):
        return np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"]).tolist()
    return [float(value) for value in y]


def test_each_quarter_has_its_running_total_budget_and_forecast(spend_tab):
    at = spend_tab
    picker = at.selectbox(key=retro_view.QUARTER)
    assert picker.options == ["2025 Q2", "2025 Q3"] and picker.value == "2025 Q3"  # the latest first
    q3 = _running_total(at)
    assert q3["Cumulative"][0] == pytest.approx(DAY_USD) and q3["Cumulative"][-1] == pytest.approx(10 * DAY_USD)
    assert "Forecast (80 % band)" in q3  # the data end on 10 July, the quarter on 30 September
    assert [n.label for n in at.number_input][0] == "2025 Q3 budget, whole export ($)"
    assert not any(name.startswith("Budget") for name in q3)  # a bill of one's own starts without a budget

    picker.set_value("2025 Q2").run()
    q2 = _running_total(at)
    assert q2["Cumulative"][0] == pytest.approx(DAY_USD) and q2["Cumulative"][-1] == pytest.approx(10 * DAY_USD)
    assert not any(name.startswith("Forecast") for name in q2)  # a closed quarter
    assert any("No forecast" in caption.value for caption in at.caption)
    budget = at.number_input(key=f"{retro_view.EXPORT_BUDGET}.2025 Q2")
    assert budget.label == "2025 Q2 budget, whole export ($)"
    budget.set_value(5_000.0).run()
    assert _running_total(at)["Budget $5k"] == [5_000.0, 5_000.0]

    at.selectbox(key=retro_view.QUARTER).set_value("2025 Q3").run()
    assert not any(name.startswith("Budget") for name in _running_total(at))  # Q3 keeps its own (none)
    at.selectbox(key=retro_view.QUARTER).set_value("2025 Q2").run()
    assert at.number_input(key=f"{retro_view.EXPORT_BUDGET}.2025 Q2").value == 5_000.0  # kept while Q3 was shown
    assert _running_total(at)["Budget $5k"] == [5_000.0, 5_000.0]


def test_one_quarter_has_no_picker(app):
    at = app.run()
    at.switch_page("app_pages/retro.py")
    at.run()  # the bundled quarter: April to June 2025
    assert not [box for box in at.selectbox if box.key == retro_view.QUARTER]
    assert [n.label for n in at.number_input][0] == "Quarter budget, whole export ($)"
