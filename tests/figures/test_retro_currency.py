"""The Retrospective's figures in the bill's currency (a bill in NOK never shows "$" or "US dollars"), the plan's
US dollars never subtracted from another currency, and small bills: GPU counts to two significant figures, GPU
axes that cannot repeat a tick label, and no waste chart without waste. Expectations are worked out by hand."""

import json
from datetime import date

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest

from dashboard.figures import retro_gap, retro_usage
from dashboard.format import gpu_count, money, money_affixes, money_symbol, usd_sig
from dashboard.retro import gap, load, spend
from dashboard.retro.filters import UNTAGGED
from dashboard.retro.units import labels
from dashboard.retro.waste import WasteCheck, waste_summary


def _shown(figure) -> str:
    """Everything a figure writes (data and layout, plotly's template left out) as one JSON text."""
    spec = json.loads(pio.to_json(figure, validate=False))
    spec["layout"].pop("template", None)
    return json.dumps(spec, ensure_ascii=False)


# --- the one formatter ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "currency", "text"), [
    (0.3, "NOK", "0.3 NOK"),
    (0.1 + 0.1 + 0.1, "NOK", "0.3 NOK"),  # 0.30000000000000004: three significant figures
    (1234.0, "USD", "$1.23k"),
    (-25_000.0, "EUR", "-25k EUR"),
    (1_210_000.0, "JPY", "1.21M JPY"),
    (1200.0, None, "1.2k"),  # a bill naming no currency: the figure alone
    (float("nan"), "NOK", "n/a"),
    (None, "USD", "n/a"),
])
def test_money_writes_the_bill_s_currency(value, currency, text):
    assert money(value, currency) == text


@pytest.mark.parametrize("value", [0.0, 7.58, 951_204.0, -25_000.0, 1.21e6])
def test_money_in_us_dollars_is_the_tiles_dollar_format(value):
    assert money(value, "USD") == usd_sig(value)


def test_affixes_and_symbols():
    assert (money_affixes("USD"), money_affixes("NOK"), money_affixes(None)) == (("$", ""), ("", " NOK"), ("", ""))
    assert (money_symbol("USD"), money_symbol("NOK"), money_symbol(None)) == ("$", "NOK", "Cost")
    assert labels("NOK")["usd_per_gpu_hour"] == "NOK per GPU-hour"
    assert labels("USD")["usd_per_million_tokens"] == "$ per million tokens"


@pytest.mark.parametrize(("value", "text"), [
    (2 / 96, "0.021"),  # a 1-GPU bill's mean: two significant figures, not "0"
    (0.0087, "0.0087"),
    (1.0, "1"),
    (4.56, "4.6"),
    (9.96, "10"),  # rounds up to ten: whole from there
    (1234.4, "1,234"),
    (0.0, "0"),
    (float("nan"), "n/a"),
])
def test_gpu_counts_below_ten_keep_two_significant_figures(value, text):
    assert gpu_count(value) == text


# --- spend, attribution and mix in NOK ----------------------------------------------------------------------------

def _days(*days: str) -> list[pd.Timestamp]:
    return [pd.Timestamp(day, tz="UTC") for day in days]


SPEND = pd.DataFrame({
    "period": _days("2025-06-01", "2025-06-02"),
    "group": pd.array(["research", "research"], dtype="string"),
    "gpu_hours": [0.0, 2.0],
    "cost": [0.1, 0.2],
})
CUMULATIVE = spend.cumulative_with_forecast(pd.Series([0.1, 0.2], index=_days("2025-06-01", "2025-06-02")),
                                            date(2025, 6, 4))


def test_the_spend_chart_of_a_nok_bill_writes_nok_everywhere():
    figure = retro_usage.spend_figure(SPEND, CUMULATIVE, 1000.0, currency="NOK")
    layout = figure.layout
    assert (layout.yaxis.title.text, layout.yaxis2.title.text) == ("NOK per day", "Cumulative cost (NOK)")
    for axis in (layout.yaxis, layout.yaxis2):
        assert (axis.tickprefix, axis.ticksuffix, axis.exponentformat) == (None, " NOK", "B")
    assert figure.data[-1].name == "Budget 1k NOK"
    # Amounts below 1,000 keep their cents in the hover: 0.1 NOK is not "0 NOK".
    assert figure.data[0].hovertemplate.endswith("<br>%{y:,.2f} NOK<extra></extra>")
    assert "$" not in _shown(figure) and "USD" not in _shown(figure)


def test_the_spend_chart_in_us_dollars_is_unchanged():
    figure = retro_usage.spend_figure(SPEND, CUMULATIVE, 1000.0)
    assert (figure.layout.yaxis.title.text, figure.layout.yaxis2.tickprefix) == ("USD per day", "$")
    assert figure.layout.yaxis2.ticksuffix is None
    assert figure.data[-1].name == "Budget $1k"


def test_a_bill_without_a_currency_writes_figures_alone():
    figure = retro_usage.spend_figure(SPEND, CUMULATIVE, None, currency=None)
    assert (figure.layout.yaxis.title.text, figure.layout.yaxis2.title.text) == ("Cost per day", "Cumulative cost")
    assert figure.layout.yaxis.tickprefix is None and figure.layout.yaxis.ticksuffix is None
    assert "$" not in _shown(figure)


def test_attribution_and_mix_in_nok():
    table = pd.DataFrame({"team": pd.array(["research"], dtype="string"),
                          "project": pd.array(["probe"], dtype="string"),
                          "run_id": pd.array([UNTAGGED], dtype="string"), "gpu_hours": [2.0], "cost": [30.18]})
    treemap = retro_usage.attribution_figure(table, currency="NOK")
    assert treemap.layout.title.text == "Who used it: cost (NOK) by team → project → run"
    assert "%{customdata[0]:,.2f} NOK" in treemap.data[0].hovertemplate
    shares = pd.DataFrame({"pricing": pd.array(["on_demand"], dtype="string"), "gpu_hours": [2.0], "cost": [24.68],
                           "gpu_hours_share": [1.0], "cost_share": [1.0], "usd_per_gpu_hour": [12.34]})
    mix = retro_usage.mix_figure(shares, currency="NOK")
    assert "12.3 NOK per GPU-hour" in mix.data[0].hovertemplate and list(mix.data[0].customdata)[1] == "24.7 NOK"
    for figure in (treemap, mix):
        assert "$" not in _shown(figure)


# --- waste and the gap ---------------------------------------------------------------------------------------------


def _check(name: str, kind: str, figure: float | None, unit: str, usd: float | None) -> WasteCheck:
    """A waste check with no detail or rows behind it."""
    return WasteCheck(name.lower().replace(" ", "_"), name, kind, figure, unit, usd, "", None)


CHECKLIST = [
    _check("Failed runs", "waste", 40.0, "% of GPU-hours", 80.0),
    _check("Idle capacity", "waste", 335.0, "USD", 335.0),
    _check("Duplicate runs", "waste", None, "GPU-hours", None),
    _check("Storage growth", "monthly", 368.0, "USD/month", 368.0),
]


def test_waste_in_nok():
    figure = retro_gap.waste_figure(CHECKLIST, waste_summary(CHECKLIST, 1660.0), currency="NOK")
    # 335 / 1660 = 20.2 %, 80 / 1660 = 4.82 %, (335 + 80) / 1660 = 25 %.
    assert list(figure.data[0].text) == ["335 NOK · 20.2 % of spend", "80 NOK · 4.82 % of spend"]
    assert figure.layout.title.text == "Waste found: 415 NOK, 25 % of spend"
    assert figure.layout.title.subtitle.text == ("Storage growth: 368 NOK a month, growing (not counted above) · "
                                                 "Not in NOK: Duplicate runs")
    assert (figure.layout.xaxis.title.text, figure.layout.xaxis.ticksuffix) == ("NOK", " NOK")
    assert "$" not in _shown(figure) and "dollars" not in _shown(figure)


@pytest.mark.parametrize(("checklist", "found"), [
    (CHECKLIST, True),
    ([_check("Idle capacity", "waste", 0.0, "USD", 0.0)], False),
    ([CHECKLIST[2], CHECKLIST[3]], False),  # nothing priced, and storage growth is not one-off waste
    ([], False),
])
def test_a_view_without_waste_has_no_chart_to_draw(checklist, found):
    assert retro_gap.has_waste(waste_summary(checklist, 100.0)) is found
    assert retro_gap.NO_WASTE == "No waste found in this view."


GAP_PARTS = pd.DataFrame({"part": list(gap.PARTS), "gpu_hours": [900.0, -100.0, 50.0, 0.0, 25.0, 0.0],
                          "usd": [1800.0, -200.0, 100.0, 0.0, 550.0, 1200.0], "note": [""] * 6})


def test_the_plan_s_dollars_are_never_subtracted_from_another_currency():
    with pytest.raises(ValueError, match="US dollars and the bill in NOK"):
        retro_gap.gap_figure(GAP_PARTS, 2400.0, 5850.0, unit="usd", currency="NOK")
    hours = retro_gap.gap_figure(GAP_PARTS, 1200.0, 2075.0, unit="gpu_hours", currency="NOK")
    assert hours.layout.title.text == ("Plan vs actual (GPU-hours): 1.2k GPU-h planned, 2.08k GPU-h actual, "
                                       "gap +875 GPU-h")
    assert retro_gap.gap_figure(GAP_PARTS, 2400.0, 5850.0).layout.yaxis.title.text == "US dollars"  # a USD bill


SUMMARY = gap.GapSummary(
    tokens_known=False, token_coverage=None, states_known=True, actual_failed_gpu_hours=2.0,
    plan_rework_gpu_hours=30.0, actual_experiment_gpu_hours=0.0, plan_experiment_gpu_hours=100.0,
    unused_commitment_usd=12.0, plan_price_per_gpu_hour=2.5, actual_price_per_gpu_hour=12.34,
    cost_known=True, gpu_hours_valued_at_plan_price=0.0, actual_tokens=None, plan_tokens=1e9,
    actual_interruptions=0, actual_interruption_gpu_hours=0.0, interruptions_from_export=0,
    checkpoint_interval_min=30.0, restart_min=10.0, checkpoint_source="the plan scenario",
    plan_main_run_gpu_hours=900.0, plan_gpu_hours=1000.0, plan_usd=2500.0, plan_non_gpu_usd_excluded=None,
    actual_gpu_hours=1000.0, actual_usd=12_352.0, actual_main_ok_gpu_hours=998.0, actual_main_run_gpu_hours=1000.0,
    actual_unattributed_gpu_hours=0.0, commitment_usd=12.0, gap_gpu_hours=0.0, gap_usd=9852.0, main_run_ids=("main",),
)


def test_part_notes_write_the_bill_s_amounts_in_its_currency_and_do_not_compare_prices():
    notes = dict(zip(gap.PARTS, gap.part_notes(SUMMARY, "NOK"), strict=True))
    assert notes["idle / unattributed"] == ("GPU-hours with no run (untagged or idle capacity); plus 12 NOK of unused "
                                           "commitment with no GPU-hours")
    assert notes["price"] == ("not compared: the bill is in NOK and the plan in US dollars (12.3 NOK/GPU-h paid, "
                              "2.5 USD/GPU-h planned)")
    assert notes["failures and restarts"] == ("0 GPU-h lost to interruptions (no run resumed after a failed segment) "
                                              "vs 30 GPU-h planned rework; 2 GPU-h in failed runs that never "
                                              "resumed, work lost")
    in_dollars = dict(zip(gap.PARTS, gap.part_notes(SUMMARY), strict=True))
    assert in_dollars["price"] == "$12.3/GPU-h paid vs $2.5/GPU-h planned, over the actual GPU-hours"


# --- concurrent GPUs of a small bill ---------------------------------------------------------------------------------

HOURS = pd.date_range("2025-06-01", periods=96, freq="h", tz="UTC")


def _one_gpu_series() -> pd.Series:
    """One GPU for two hours of 96 (the hand-built NOK bill): peak 1, mean 2 / 96 = 0.0208, peak / mean 48."""
    values = np.zeros(96)
    values[34:36] = 1.0
    return pd.Series(values, index=HOURS, name="gpus")


def test_a_one_gpu_bill_is_drawn_in_tenths_of_a_gpu_and_ticked_one_gpu_apart():
    series = _one_gpu_series()
    summary = load.load_summary(series)
    assert summary.mean_gpus == pytest.approx(2 / 96) and summary.peak_to_mean == pytest.approx(48.0)
    figure = retro_usage.load_figure(series, summary)
    assert [trace.name for trace in figure.data] == ["GPUs in use", "Peak 1 GPUs", "Mean 0.021 GPUs"]
    # Whole GPUs up to 5: a tick at every GPU, so the labels read 0, 1 (never "0 0 0 1 1 1").
    axis = figure.layout.yaxis
    assert (axis.tickmode, axis.tick0, axis.dtick, axis.tickformat) == ("linear", 0, 1, ",d")
    assert "%{y:.2~r} GPUs" in figure.data[0].hovertemplate


@pytest.mark.parametrize(("values", "ticks"), [
    ([0.0, 1.0, 3.0, 5.0], {"tickmode": "linear", "tick0": 0, "dtick": 1, "tickformat": ",d"}),
    ([0.0, 0.5, 1.5], {}),  # fractions of a GPU: plotly's own decimals (0.5, 1, 1.5), never ",d"
    ([0.0, 2.0, 7.0], {}),  # whole but between 5 and 10: plotly's own steps, at least 1 apart
    ([2.0, 2.0, 2.0, 10.0], {"tickformat": ",d"}),  # from 10 on plotly's steps are whole GPUs
    ([], {"tickmode": "linear", "tick0": 0, "dtick": 1, "tickformat": ",d"}),
])
def test_gpu_axes_never_repeat_a_tick_label(values, ticks):
    assert retro_usage.gpu_axis(values) == ticks


def test_reserved_capacity_of_one_gpu_is_not_rounded_away():
    series = _one_gpu_series()
    figure = retro_usage.load_figure(series, load.load_summary(series), series.clip(upper=1.0), 1.0)
    assert figure.data[2].name == "Reserved capacity 1 GPUs (idle shaded)"
