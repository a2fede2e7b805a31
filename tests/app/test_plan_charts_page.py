"""AppTest: the Plan page's chart tabs in the link, the what-ifs beside the charts, and the share buttons."""

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from plan_groups import show_group
from shown_text import shown
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.figures import plan
from dashboard.store.scenario_store import ScenarioStore
from dashboard.ui.compare_state import SELECTED


def _titles(at) -> list[str]:
    """The chart tabs' titles as read (lines joined; the "Can it run?" panel's memory bar is not a tab)."""
    titles = [json.loads(chart.proto.spec)["layout"]["title"]["text"].replace("<br>", " ")
              for chart in at.get("plotly_chart")]
    return [title for title in titles if not title.startswith("Memory per GPU")]


def _metric(at, prefix):
    return next(m for m in at.metric if m.label.startswith(prefix))


def _button(at, label):
    return next(button for button in at.button if button.label == label)


@pytest.mark.parametrize(("charts", "left", "right"), [
    ("storage,tst", "Storage: ", "Switching to TST"),
    ("cost-range,checkpoint", "Total cost: P10", "Checkpoint interval"),
    ("scaling,tornado", "Predicted loss", "Which assumption"),
    ("budget,spot", "Cost by line item", "100 % spot saves"),  # spot $2.42 is under the $2.65 reserved price
])
def test_a_link_opens_the_charts_it_names_and_keeps_them(app, unexpected_warnings, charts, left, right):
    app.query_params["charts"] = charts
    at = app.run()
    assert not at.exception and not unexpected_warnings(at)
    first, second = _titles(at)
    assert first.startswith(left) and second.startswith(right)
    assert at.query_params["charts"] == charts


def test_switching_a_tab_puts_it_in_the_link_and_the_first_tabs_leave_it_out(app):
    at = app.run()
    assert "charts" not in at.query_params
    at.session_state["plan.tabs.right"] = "Spot share"
    at.run()
    assert at.query_params["charts"] == "budget,spot"
    at.session_state["plan.tabs.right"] = "TST vs baseline"
    at.run()
    assert "charts" not in at.query_params


@pytest.mark.parametrize("value", ["storage", "tst,storage", "storage,tst,spot", "[x](https://evil.example)", ""])
def test_a_bad_charts_value_is_dropped_with_a_warning_that_does_not_quote_it(app, value):
    app.query_params["charts"] = value
    at = app.run()
    assert not at.exception
    text = " ".join(shown(w.value) for w in at.warning)
    assert "ignored parameter 'charts'" in text and "charts=storage,tst" in text
    assert "evil" not in text
    assert _titles(at)[0].startswith("Cost by line item")  # the first tabs


def test_save_for_comparison_saves_the_plan_and_picks_it_on_compare(app, store_url):
    app.query_params["name"] = "Bigger run"
    app.query_params["gpu_count"] = "1024"
    at = app.run()
    _button(at, "Save for comparison").click()
    at.run()
    assert not at.exception
    assert any("Saved “Bigger run” for comparison" in s.value for s in at.success)
    saved = ScenarioStore(store_url).load("Bigger run")
    assert (saved.gpu_count, saved.name) == (1024, "Bigger run")
    assert at.session_state[SELECTED] == ["Bigger run"]
    _button(at, "Save for comparison").click()  # the same name again: nothing overwritten until asked
    at.run()
    assert not at.exception and not at.error
    assert any("“Bigger run” is already saved" in w.value for w in at.warning)
    assert {"Overwrite “Bigger run”", "Save as “Bigger run (2)”"} <= {b.label for b in at.button}
    assert ScenarioStore(store_url).names() == ["Bigger run"]


def test_a_taken_name_can_be_overwritten_in_place(app, store_url):
    ScenarioStore(store_url).save("Bigger run", Scenario(name="Bigger run", gpu_count=2048))
    app.query_params["name"] = "Bigger run"
    app.query_params["gpu_count"] = "1024"
    at = app.run()
    _button(at, "Save for comparison").click()
    at.run()
    _button(at, "Overwrite “Bigger run”").click()
    at.run()
    assert not at.exception and not at.error
    assert any("Saved “Bigger run” for comparison" in s.value for s in at.success)
    assert ScenarioStore(store_url).load("Bigger run").gpu_count == 1024  # was 2,048
    assert not any(b.label.startswith("Overwrite") for b in at.button)  # the question is answered


def test_a_taken_name_can_be_saved_as_the_next_number(app, store_url):
    store = ScenarioStore(store_url)
    store.save("Bigger run", Scenario(name="Bigger run", gpu_count=2048))
    store.save("Bigger run (2)", Scenario(name="Bigger run (2)", gpu_count=4096))
    app.query_params["name"] = "Bigger run"
    app.query_params["gpu_count"] = "1024"
    at = app.run()
    _button(at, "Save for comparison").click()
    at.run()
    _button(at, "Save as “Bigger run (3)”").click()  # "(2)" is taken too
    at.run()
    assert not at.exception and not at.error
    assert store.load("Bigger run (3)").gpu_count == 1024
    assert (store.load("Bigger run").gpu_count, store.load("Bigger run (2)").gpu_count) == (2048, 4096)
    assert at.text_input(key="w.name").value == "Bigger run (3)"  # the plan is now called what it was saved as
    assert at.session_state[SELECTED] == ["Bigger run (3)"]
    show_group(at, "Training method")  # show the group that holds the method
    at.run()
    at.selectbox(key="w.method").set_value("tst").run()  # the saved plan is the source of later edits
    assert at.text_input(key="w.name").value == "Bigger run (3) (edited: method TST)"
    at.selectbox(key="w.method").set_value("baseline").run()
    assert at.text_input(key="w.name").value == "Bigger run (3)"


@pytest.mark.parametrize(("name", "taken", "expected"), [
    ("Plan", [], "Plan (2)"),
    ("Plan", ["plan (2)"], "Plan (3)"),  # names are compared without case
    ("Plan (2)", ["Plan", "Plan (2)"], "Plan (3)"),  # a numbered name moves on, not "Plan (2) (2)"
    ("x" * 120, [], "x" * 116 + " (2)"),  # within the 120-character limit
])
def test_next_free_name(name, taken, expected):
    from dashboard.ui.plan_charts_view import next_free_name

    assert next_free_name(name, taken) == expected


def test_copy_link_shows_the_address_with_the_settings_and_the_open_charts(app):
    app.query_params["mfu"] = "0.35"
    app.query_params["charts"] = "storage,tst"
    at = app.run()
    assert not at.exception
    assert not at.code  # the popover is filled only while open
    at.session_state["plan.copy_link"] = True  # as a click on "Show link" leaves it
    at.run()
    (address,) = [code.value for code in at.code]
    query = parse_qs(urlsplit(address).query)
    assert query["mfu"] == ["0.35"] and query["charts"] == ["storage,tst"]
    assert address.endswith("&charts=storage%2Ctst")  # the open charts come last, after the scenario


def test_the_download_is_named_after_the_scenario(app, monkeypatch):
    names = []
    original = MemoryMediaFileStorage.load_and_get_id

    def recording(self, path_or_data, mimetype, kind, filename=None):
        names.append(filename)
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", recording)
    app.query_params["name"] = "Llama 3.1 405B: re-run / v2"
    at = app.run()
    assert not at.exception
    assert "Llama-3.1-405B-re-run-v2.json" in names


def test_the_tst_what_if_is_editable_under_the_baseline_method_and_reaches_the_link(app):
    at = app.run()
    before_total = _metric(at, "Total cost").value
    speedup = next(n for n in at.number_input if n.key == "plan.what_if.tst_speedup")
    assert not speedup.disabled
    speedup.set_value(1.5)
    at.run()
    assert not at.exception and not at.error
    assert at.query_params["tst_speedup"] == "1.5"
    # A baseline plan's cost does not depend on TST's speedup; the chart's answer does.
    assert _metric(at, "Total cost").value == before_total
    result = scenario_outputs(Scenario(tst_speedup=1.5))
    tst_total = scenario_outputs(Scenario(tst_speedup=1.5, method="tst"))["cost_total_usd"]
    # The chart's saving is the difference of the two plans' totals (the Total cost tile's delta).
    assert result["tst"]["net_savings_usd"] == pytest.approx(result["cost_total_usd"] - tst_total, rel=1e-9)
    assert plan.tst_title(result["tst"]["net_savings_usd"], result["cost_total_usd"]) in _titles(at)


@pytest.mark.parametrize(("key", "value", "overrides"), [
    ("storage_retention_months", 36.0, {"storage_retention_months": 36.0}),
    ("keep_last_checkpoints", 10, {"keep_last_checkpoints": 10}),
    ("archive_every_nth", 10, {"archive_every_nth": 10}),
    ("weight_archives", 20, {"weight_archives": 20}),
])
def test_a_retention_what_if_changes_the_plan_its_total_and_the_link(app, key, value, overrides):
    app.query_params["charts"] = "storage,tst"
    at = app.run()
    next(n for n in at.number_input if n.key == f"plan.what_if.{key}").set_value(value)
    at.run()
    assert not at.exception and not at.error
    total = scenario_outputs(Scenario(**overrides))["cost_total_usd"]
    assert _metric(at, "Total cost").value == catalogue.text("cost_total_usd", total)
    assert key in at.query_params
    assert at.dataframe  # the table of nearby changes and their dollar effect
