"""Budgets apply to the view they were set for, and a forecast is drawn only when the data stop before the period."""

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.retro import spend
from dashboard.retro.budgets import WHOLE_EXPORT, budget_for_view, view_id

TEAM_BUDGETS = {"teams=research": 60_000.0, "teams=data,research": 90_000.0}


@pytest.mark.parametrize(("view", "expected"), [
    pytest.param(view_id(), 1_000_000.0, id="whole export: the quarter's budget"),
    pytest.param(view_id(teams=["llm-eval"]), None, id="a team without its own budget: none, not the company's"),
    pytest.param(view_id(teams=["research"]), 60_000.0, id="a team's own budget"),
    pytest.param(view_id(teams=["research", "data"]), 90_000.0, id="two teams in any order"),
    pytest.param(view_id(dates=(date(2025, 5, 1), date(2025, 5, 31))), None, id="narrowed dates"),
])
def test_a_budget_belongs_to_its_view(view, expected):
    assert budget_for_view(view, 1_000_000.0, TEAM_BUDGETS) == expected


def test_view_names():
    assert view_id() == WHOLE_EXPORT
    assert view_id(teams=["b", "a"], pricing=["spot"]) == "teams=a,b · pricing=spot"
    assert budget_for_view(WHOLE_EXPORT, 0.0, {}) is None  # a zero budget is no budget


DAYS = pd.date_range("2025-06-01", "2025-06-10", freq="D", tz="UTC")


def test_a_closed_period_has_no_forecast():
    # A team's spend stops on 10 June, but the export covers the whole of June: the month is closed.
    frame = spend.cumulative_with_forecast(pd.Series(5.0, index=DAYS), date(2025, 6, 30), data_end=date(2025, 6, 30))
    assert frame["day"].iloc[-1] == pd.Timestamp("2025-06-30", tz="UTC")
    assert frame["cumulative"].iloc[-1] == pytest.approx(50.0)  # 10 days x $5, then zeros to the export's end
    assert frame[["forecast", "forecast_low", "forecast_high"]].isna().all().all()


def test_an_open_period_gets_a_band_around_the_run_rate():
    # $2 and $4 on alternate days: rate $3/day, sample standard deviation s = sqrt(10/9) over ten days.
    values = pd.Series([2.0, 4.0] * 5, index=DAYS)
    frame = spend.cumulative_with_forecast(values, date(2025, 6, 14), data_end=date(2025, 6, 10), window_days=10)
    ahead = frame[frame["cumulative"].isna()]
    assert len(ahead) == 4
    s = np.sqrt(10 / 9)
    assert ahead["forecast"].tolist() == pytest.approx([30.0 + 3.0 * k for k in (1, 2, 3, 4)])
    assert ahead["forecast_high"].tolist() == pytest.approx(
        [30.0 + 3.0 * k + 1.2816 * s * np.sqrt(k) for k in (1, 2, 3, 4)])
    assert ahead["forecast_low"].tolist() == pytest.approx(
        [30.0 + 3.0 * k - 1.2816 * s * np.sqrt(k) for k in (1, 2, 3, 4)])
    joint = frame[frame["day"] == pd.Timestamp("2025-06-10", tz="UTC")].iloc[0]
    assert joint["forecast_low"] == joint["forecast_high"] == joint["cumulative"] == 30.0  # the band starts at the line


def test_the_data_end_is_the_last_day_any_row_touches():
    usage = pd.DataFrame({"period_start": pd.to_datetime(["2025-06-01", "2025-06-20"], utc=True),
                          "period_end": pd.to_datetime(["2025-07-01", "2025-06-21"], utc=True)})
    assert spend.data_end(usage) == date(2025, 6, 30)


def test_the_forecast_window_is_fourteen_days_and_the_method_page_says_so():
    # 16 days at $100, then 14 at $10 (1 to 30 June), quarter ending 2 July: with the default window the run rate is
    # the last 14 days' $10 and their spread 0, so 1 July is 1,600 + 140 + 10 = $1,750 and 2 July $1,760, no band.
    # A 15-day window would give (100 + 14 · 10) / 15 = $16 a day; a 13-day one the same $10 (so 14 vs 15 is pinned
    # here and 13 vs 14 below, by a series whose 14th-last day differs).
    days = pd.date_range("2025-06-01", "2025-06-30", freq="D", tz="UTC")
    frame = spend.cumulative_with_forecast(pd.Series([100.0] * 16 + [10.0] * 14, index=days), date(2025, 7, 2))
    ahead = frame.dropna(subset=["forecast"]).set_index("day")
    assert list(ahead["forecast"]) == pytest.approx([1_740.0, 1_750.0, 1_760.0])
    assert list(ahead["forecast_high"] - ahead["forecast_low"]) == pytest.approx([0.0, 0.0, 0.0])
    # The 14th-last day at $38 instead of $10: 14 days average (38 + 13 · 10) / 14 = $12; 13 days would say $10.
    values = [100.0] * 16 + [38.0] + [10.0] * 13
    frame = spend.cumulative_with_forecast(pd.Series(values, index=days), date(2025, 7, 1))
    assert frame["forecast"].iloc[-1] == pytest.approx(sum(values) + 12.0)
    assert spend.FORECAST_WINDOW_DAYS == 14
    method = (Path(__file__).resolve().parents[2] / "docs" / "method.md").read_text(encoding="utf-8")
    assert f"mean daily spend of the last {spend.FORECAST_WINDOW_DAYS} calendar days" in method


# --- the forecast window, pinned (issue 49): a run rate of the last 14 days, never from fewer than 7 days of data ---

@pytest.mark.parametrize(("days", "data_end", "covered"), [
    pytest.param(1, None, 1, id="one-day"),
    pytest.param(6, None, 6, id="six-days"),
    pytest.param(7, None, 7, id="a-week"),
    pytest.param(2, date(2025, 6, 10), 10, id="a-filtered-view-to-the-export-s-end"),  # 1 June .. 10 June
    pytest.param(0, None, 0, id="no-data"),
])
def test_the_days_of_data_count_from_the_first_day_to_the_export_s_end(days, data_end, covered):
    series = pd.Series(1.0, index=pd.date_range("2025-06-01", periods=days, freq="D", tz="UTC"))
    assert spend.data_days(series, data_end) == covered


@pytest.mark.parametrize(("days", "forecast_to"), [
    pytest.param(6, date(2025, 6, 6), id="six-days-draw-to-their-last-day"),
    pytest.param(7, date(2025, 6, 30), id="seven-days-forecast-to-the-quarter-s-end"),
])
def test_no_forecast_from_fewer_than_seven_days(days, forecast_to):
    series = pd.Series(100.0, index=pd.date_range("2025-06-01", periods=days, freq="D", tz="UTC"))
    data_end = series.index[-1].date()
    end = spend.forecast_end(date(2025, 6, 30), data_end, spend.data_days(series))
    assert end == forecast_to
    frame = spend.cumulative_with_forecast(series, end, data_end=data_end)
    assert bool(frame["forecast"].notna().any()) is (days >= 7)
    assert frame["day"].iloc[-1] == pd.Timestamp(forecast_to, tz="UTC")


def test_the_run_rate_is_the_mean_of_the_last_fourteen_days_by_default():
    # 6 days at 0, then 14 days at 10: the last 14 days' mean is 10; a 15-day window would give 140 / 15.
    series = pd.Series([0.0] * 6 + [10.0] * 14, index=pd.date_range("2025-06-01", periods=20, freq="D", tz="UTC"))
    frame = spend.cumulative_with_forecast(series, date(2025, 6, 30))
    forecast = frame["forecast"].dropna()
    assert forecast.iloc[1] - forecast.iloc[0] == pytest.approx(10.0)
    assert (spend.FORECAST_WINDOW_DAYS, spend.MIN_FORECAST_DAYS) == (14, 7)


Q2, Q3 = (date(2025, 4, 1), date(2025, 6, 30)), (date(2025, 7, 1), date(2025, 9, 30))


@pytest.mark.parametrize(("chosen", "expected"), [
    pytest.param(None, Q3, id="none-chosen-the-latest"),
    pytest.param("2025 Q2", Q2, id="an-earlier-quarter-by-its-label"),
    pytest.param("2024 Q1", Q3, id="a-label-the-export-does-not-span-the-latest"),
])
def test_the_chosen_quarter_of_the_running_total(chosen, expected):
    assert spend.chosen_quarter([Q2, Q3], chosen) == expected


def test_no_quarter_without_dates():
    assert spend.chosen_quarter([], "2025 Q2") is None


@pytest.mark.parametrize(("quarter", "data_end", "dates", "expected"), [
    pytest.param(Q3, date(2025, 7, 10), None, (Q3, date(2025, 7, 10)), id="open-quarter-data-end-kept"),
    pytest.param(Q2, date(2025, 7, 10), None, (Q2, date(2025, 6, 30)), id="earlier-quarter-closed-at-its-end"),
    pytest.param(Q3, date(2025, 7, 10), (date(2025, 7, 2), date(2025, 7, 5)),
                 (((date(2025, 7, 2), date(2025, 7, 5))), date(2025, 7, 5)), id="dates-narrow-the-period"),
    pytest.param(None, date(2025, 7, 10), None, (None, date(2025, 7, 10)), id="no-quarter"),
])
def test_the_running_period_and_its_last_day_of_data(quarter, data_end, dates, expected):
    assert spend.running_period(quarter, data_end, dates) == expected
