"""AppTest: a bill in NOK on the Retrospective says NOK in every tile, axis, table column and note, never "$" or
"US dollars"; Plan vs actual flags the plan's US dollars and compares GPU-hours only; a one-GPU bill shows its mean
GPUs to two significant figures, a GPU axis ticked one GPU apart, and one line instead of an empty waste chart.

The bills are in tests/data/currency (see its README): the rows of Koku's CUR in NOK, and a hand-built FOCUS bill
in NOK for the small-bill figures. One test reads the real Koku file from ../shared and skips, saying so, without it.
"""

import json
from pathlib import Path

import pytest
from real_exports import real_export

from dashboard.retro.gap import PARTS

ROOT = Path(__file__).resolve().parents[2]
CURRENCY = ROOT / "tests" / "data" / "currency"
KOKU = CURRENCY / "koku_cur_nok.csv"
ONE_GPU = CURRENCY / "focus_one_gpu_nok.csv"
NONE = "(none)"
NO_GPU_ROWS = ("No GPU-hours in this view: its rows bill no GPU time (storage, network, CPU or other services), so "
               "there is no GPU load or pricing tier to show. Spend and Attribution show its cost.")
TABS = ["Spend", "Attribution", "Plan vs actual", "Waste", "Load profile", "Purchase mix", "Unit costs"]
TEXT_KINDS = ("markdown", "caption", "warning", "info", "error", "subheader")


def _open_bill(app, path: Path, tab: str = "Spend"):
    """The Retrospective with ``path`` uploaded as the bill, no run export, the sample's plan and budget kept, on
    ``tab``."""
    at = app.run()
    at.switch_page("app_pages/retro.py")
    at.query_params["retro.runs"] = NONE
    at.run()
    at.checkbox(key="retro.keep_plan").check()  # an upload drops the sample's plan and budget unless kept
    at.checkbox(key="retro.keep_budget").check()
    at.file_uploader(key="retro.billing_upload").set_value((path.name, path.read_bytes(), "text/csv")).run()
    if tab != "Spend":
        at.session_state["retro.view"] = tab
        at.run()
    assert not at.exception, at.exception
    return at


def _tiles(at) -> dict[str, str]:
    return {metric.label: metric.value for metric in at.metric}


def _charts(at) -> dict[str, dict]:
    """The page's charts by key, plotly's template left out (it is not the page's text)."""
    charts = {}
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        spec["layout"].pop("template", None)
        charts[chart.proto.id.rsplit("-", 1)[-1] if "retro." not in chart.proto.id
               else chart.proto.id[chart.proto.id.index("retro."):]] = spec
    return charts


def _columns(at) -> dict[str, dict]:
    """Every table column's configuration (label, format) by column name."""
    columns: dict[str, dict] = {}
    for frame in at.dataframe:
        columns |= json.loads(frame.proto.columns)
    return columns


def _texts(at) -> list[str]:
    """The page's words: every text element, and each tile's label, value and delta."""
    texts = [element.value for kind in TEXT_KINDS for element in at.get(kind)]
    texts += [part for metric in at.metric for part in (metric.label, metric.value, metric.delta or "")]
    return texts


def _dollars(at, but: tuple[str, ...] = ()) -> list[str]:
    """What the page shows in dollars: "$" in a text, a tile, a chart or a table column, or "US dollars" on a chart
    or column (the plan-currency warnings name the plan's US dollars, rightly). ``but`` leaves out texts that are
    not the page's own words (a waste check's details, written by ``dashboard.retro.waste``)."""
    found = [text for text in _texts(at) if "$" in text and text not in but]
    found += [key for key, spec in _charts(at).items() if "$" in json.dumps(spec) or "US dollars" in json.dumps(spec)]
    found += [name for name, config in _columns(at).items()
              if "$" in json.dumps(config) or config.get("type_config", {}).get("format") == "dollar"]
    return found


def _axis_titles(spec: dict) -> list[str]:
    return [axis["title"]["text"] for name, axis in spec["layout"].items()
            if name.startswith(("xaxis", "yaxis")) and "title" in axis]


# --- Koku's CUR in NOK: the rows of the real file -------------------------------------------------------------------

def test_the_koku_bill_in_nok_shows_nok_in_the_tiles_and_the_spend_chart(app):
    at = _open_bill(app, KOKU)
    assert not at.error, [e.value for e in at.error]
    tiles = _tiles(at)
    # Three rows of 0.1 NOK, none with GPU-hours: the Import page's and the CLI's "0.3 NOK".
    assert tiles["Cost"] == "0.3 NOK" and tiles["Non-GPU cost"] == "0.3 NOK"
    assert tiles["NOK per GPU-hour"] == "n/a" and "$ per GPU-hour" not in tiles
    spend = _charts(at)["retro.spend"]
    assert _axis_titles(spend) == ["Date (UTC)", "NOK per day", "Cumulative cost (NOK)"]
    assert spend["layout"]["yaxis2"]["ticksuffix"] == " NOK" and "tickprefix" not in spend["layout"]["yaxis2"]
    assert "Budget 1M NOK" in [trace.get("name") for trace in spend["data"]]
    assert at.number_input(key="retro.budget").label == "Quarter budget, whole export (NOK)"
    assert _dollars(at) == []


@pytest.mark.parametrize("tab", ["Attribution", "Waste", "Load profile", "Purchase mix", "Unit costs"])
def test_no_tab_of_the_koku_bill_writes_dollars(app, tab):
    at = _open_bill(app, KOKU, tab)
    assert not at.error, [e.value for e in at.error]
    # The waste checks' details are written by dashboard.retro.waste, in dollars whatever the bill (left to it).
    details = tuple(element.value for expander in at.expander for element in expander.markdown)
    assert _dollars(at, but=details) == []
    if tab == "Attribution":
        assert _columns(at)["cost"]["label"] == "Cost (NOK)"
        assert _charts(at)["retro.attribution"]["layout"]["title"]["text"].startswith("Who used it: cost (NOK)")
    if tab in ("Purchase mix", "Load profile"):  # the Koku bill has no GPU rows: one line, no empty chart
        assert [info.value for info in at.info] == [NO_GPU_ROWS] and not _charts(at)


# --- a one-GPU bill in NOK: the plan in US dollars, and small figures ----------------------------------------------

def test_plan_vs_actual_warns_of_the_plan_s_dollars_and_compares_gpu_hours_only(app):
    at = _open_bill(app, ONE_GPU, "Plan vs actual")
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("The plan is priced in US dollars and this bill in NOK") for w in warnings), warnings
    with pytest.raises(KeyError):
        at.button_group(key="retro.gap_unit")  # no "$" unit to choose: a USD − NOK gap is not a number
    parts = at.dataframe[0].value
    assert parts["part"].tolist() == list(PARTS) and "usd" not in parts.columns
    assert not [note for note in parts["note"] if "$" in note]
    assert parts.loc[parts["part"] == "price", "note"].iloc[0].startswith("not compared: the bill is in NOK")
    chart = _charts(at)["retro.gap"]
    assert chart["layout"]["yaxis"]["title"]["text"] == "GPU-hours"
    assert chart["layout"]["title"]["text"].startswith("Plan vs actual (GPU-hours):")
    assert not [text for text in _texts(at) if "$" in text]  # the plan's own amounts are written "… USD"
    assert any(text.startswith("Plan: ") and " USD/GPU-hour = " in text for text in _texts(at))


def test_unit_costs_of_a_nok_bill_are_in_nok_and_say_the_plan_is_not(app):
    at = _open_bill(app, ONE_GPU, "Unit costs")
    tiles = _tiles(at)
    assert tiles["NOK per GPU-hour"] == "12.3 NOK"  # 2 × 12.34 NOK over 2 GPU-hours
    assert "NOK per million tokens" in tiles
    assert any("the plan's prices are in US dollars" in w.value for w in at.warning)
    assert _dollars(at) == []


def test_the_tiles_of_the_one_gpu_bill(app):
    at = _open_bill(app, ONE_GPU)
    tiles = _tiles(at)
    # 2 × 12.34 + 5.50 = 30.18 NOK; 24.68 NOK over 2 GPU-hours; 5.50 NOK of storage.
    assert (tiles["Cost"], tiles["NOK per GPU-hour"], tiles["Non-GPU cost"], tiles["GPU-hours"]) == (
        "30.2 NOK", "12.3 NOK", "5.5 NOK", "2")
    assert _dollars(at) == []


def test_a_one_gpu_bill_shows_its_mean_gpus_and_a_gpu_axis_without_repeated_ticks(app):
    at = _open_bill(app, ONE_GPU, "Load profile")
    tiles = _tiles(at)
    # One GPU for 2 of the 96 hours the rows touch (1 to 5 June): mean 2 / 96 = 0.0208, peak 1, p95 0.
    assert (tiles["Peak GPUs"], tiles["Mean GPUs"], tiles["95th percentile"]) == ("1", "0.021", "0")
    assert tiles["Peak / mean"] == "48.00×"
    axis = _charts(at)["retro.load"]["layout"]["yaxis"]
    assert (axis["tickmode"], axis["tick0"], axis["dtick"], axis["tickformat"]) == ("linear", 0, 1, ",d")


def test_a_bill_without_waste_says_so_in_one_line(app):
    at = _open_bill(app, ONE_GPU, "Waste")
    assert [info.value for info in at.info] == ["No waste found in this view."]
    assert "retro.waste" not in _charts(at)
    assert at.subheader[0].value.startswith("Waste found: 0 NOK")


# --- the real file, where ../shared is --------------------------------------------------------------------------------

def test_the_real_koku_cur_in_nok(app):
    real_koku = real_export("project-koku__koku/2023-06-01.csv", "the real Koku CUR in NOK is not tested; its rows "
                            "are tested from tests/data/currency/koku_cur_nok.csv")
    at = _open_bill(app, real_koku)
    assert not at.error, [e.value for e in at.error]
    assert _tiles(at)["Cost"] == "0.3 NOK"
    assert "NOK per day" in _axis_titles(_charts(at)["retro.spend"])
    assert _dollars(at) == []


def test_a_bill_mixing_currencies_says_so_and_names_them_on_every_amount():
    # The import refuses a file that mixes currencies; should a bill still hold several, the page says so and
    # writes its amounts with both codes rather than as one currency.
    from dashboard.retro.amortise import Amortisation
    from dashboard.retro.filters import FilterOptions
    from dashboard.retro.join import JoinStats
    from dashboard.retro.view import Filters, RetroView
    from dashboard.ui import retro_view

    def of(*codes):
        return RetroView(data_key=codes, usage=None, shown=None, billing=None, runs=None,
                         bounds=FilterOptions(), filters=Filters(), join_on="run_id",
                         stats=JoinStats(on="run_id", billing_missing=True, runs_missing=True),
                         amortisation=Amortisation(), currencies=codes)

    assert retro_view.mixed_currency_error(("NOK",)) is None and of().currency is None
    error = retro_view.mixed_currency_error(("EUR", "USD"))
    assert error.startswith("This bill mixes currencies (EUR, USD): amounts in different currencies cannot be added")
    assert of("EUR", "USD").money(1200.0) == "1.2k EUR+USD"
    assert of("EUR", "USD").foreign and not of("USD").foreign and not of("USD").in_gpu_hours
    assert not of().foreign and of().in_gpu_hours  # no bill: the plan's dollars have nothing to be compared with
