"""AppTest: the Compare page saves, imports, renames, duplicates, deletes and compares stored scenarios."""

import json

import pytest

from dashboard.cli import main
from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario, default_scenario
from dashboard.format import count, usd
from dashboard.report.html import build_report
from dashboard.store.scenario_store import ScenarioStore

PAGE = "app_pages/compare.py"


def _compare(app):
    at = app.run()
    return at.switch_page(PAGE).run()


def _button(at, label):
    return next(b for b in at.button if b.label == label)


def _names(store_url):
    with ScenarioStore(store_url) as store:
        return store.names()


def _save(store_url, *scenarios):
    with ScenarioStore(store_url) as store:
        for scenario in scenarios:
            store.save(scenario.name, scenario)


def _table(at):
    return at.dataframe[-1].value


def _row(table, item):
    return table[table["item"] == item].iloc[0]


def test_an_empty_store_says_how_to_start(app):
    at = _compare(app)
    assert not at.exception
    assert "No saved scenarios yet" in at.info[0].value


def test_saving_the_plan_scenario_keeps_it_across_restarts(app, store_url):
    at = _compare(app)
    at.sidebar.text_input[0].set_value("Option A (512 H100)")
    _button(at, "Save").click().run()
    assert not at.exception
    assert at.success[0].value == "Saved the Plan's scenario as “Option A (512 H100)”."
    assert _names(store_url) == ["Option A (512 H100)"]
    with ScenarioStore(store_url) as store:
        saved = store.load("Option A (512 H100)")
    assert saved.model_copy(update={"name": default_scenario().name}) == default_scenario()


def test_saving_under_a_taken_name_is_refused_unless_overwriting(app, store_url):
    _save(store_url, Scenario(name="Option A", mfu=0.3))
    at = _compare(app)
    at.sidebar.text_input[0].set_value("Option A")
    _button(at, "Save").click().run()
    assert "Not saved: a scenario named 'Option A' already exists" in at.error[0].value
    at.sidebar.checkbox[0].check()
    _button(at, "Save").click().run()
    assert not at.error
    with ScenarioStore(store_url) as store:
        assert store.load("Option A").mfu == default_scenario().mfu


@pytest.mark.parametrize("name, message", [
    ("../etc/passwd", "which contains '/'"),
    ("plan; DROP TABLE scenarios", "which contains ';'"),
])
def test_bad_names_are_refused_with_the_rule(app, store_url, name, message):
    at = _compare(app)
    at.sidebar.text_input[0].set_value(name)
    _button(at, "Save").click().run()
    assert message in at.error[0].value and "Scenario names are 1–120 characters" in at.error[0].value
    assert _names(store_url) == []


def test_importing_several_files_at_once(app, store_url):
    one = Scenario(name="Option B", gpu_count=1024)
    two = [Scenario(name="Option C", mfu=0.3).to_json_dict(), Scenario(name="Option D", spot_share=0.2).to_json_dict()]
    at = _compare(app)
    at.sidebar.file_uploader[0].set_value([
        ("b.json", json.dumps(one.to_json_dict()).encode(), "application/json"),
        ("cd.json", json.dumps(two).encode(), "application/json"),
    ]).run()
    assert not at.exception
    assert at.success[0].value == "Imported 3 scenarios: Option B, Option C, Option D."
    assert _names(store_url) == ["Option B", "Option C", "Option D"]


def test_an_import_with_one_bad_scenario_imports_nothing(app, store_url):
    bad = [Scenario(name="Fine").to_json_dict(), {"name": "Broken", "mfu": 7}]
    at = _compare(app)
    at.sidebar.file_uploader[0].set_value(("two.json", json.dumps(bad).encode(), "application/json")).run()
    assert at.error[0].value.startswith("Nothing imported: two.json: scenario 2 of 2: mfu = 7 is out of range")
    assert _names(store_url) == []


def test_rename_duplicate_and_delete(app, store_url):
    _save(store_url, Scenario(name="Option A"), Scenario(name="Option B", mfu=0.3))
    at = _compare(app)
    at.selectbox(key="compare.managed").set_value("Option B")
    at.text_input(key="compare.new_name").set_value("Option B2")
    _button(at, "Rename").click().run()
    assert _names(store_url) == ["Option A", "Option B2"]
    assert at.multiselect(key="compare.selected").value == ["Option A", "Option B2"]
    at.text_input(key="compare.new_name").set_value("Option B3")
    _button(at, "Duplicate").click().run()
    assert _names(store_url) == ["Option A", "Option B2", "Option B3"]
    at.selectbox(key="compare.managed").set_value("Option A")
    _button(at, "Delete").click().run()
    assert not at.exception
    assert at.success[0].value == "Deleted “Option A”."
    assert _names(store_url) == ["Option B2", "Option B3"]
    assert "Option A" not in at.multiselect(key="compare.selected").value


def test_open_in_plan_loads_the_controls(app, store_url):
    _save(store_url, Scenario(name="Option B", mfu=0.3, gpu_count=1024))
    at = _compare(app)
    at.selectbox(key="compare.managed").set_value("Option B")
    _button(at, "Open in Plan").click().run()
    assert not at.exception
    expected = scenario_outputs(Scenario(name="Option B", mfu=0.3, gpu_count=1024))
    total = next(m for m in at.metric if m.label == "Total cost")
    assert total.value == catalogue.text("cost_total_usd", expected["cost_total_usd"])  # the Plan page's tile
    assert at.query_params["mfu"] == "0.3"


def test_the_comparison_shows_the_same_numbers_as_the_cli_and_the_report(app, store_url, tmp_path, capsys):
    llama = next(s for n, s in presets().items() if n.startswith("Llama"))
    _save(store_url, default_scenario(), llama)
    at = _compare(app)
    at.multiselect(key="compare.selected").set_value([default_scenario().name, llama.name]).run()
    assert not at.exception
    table = _table(at)
    report = build_report([default_scenario(), llama], generated_at=__import__("datetime").datetime(2026, 11, 30))
    for scenario in (default_scenario(), llama):
        path = tmp_path / "scenario.json"
        path.write_text(json.dumps(scenario.to_json_dict()))
        assert main(["estimate", str(path), "--json"]) == 0
        cli = json.loads(capsys.readouterr().out)
        assert _row(table, "Total cost ($)")[scenario.name] == usd(cli["cost_total_usd"])
        assert _row(table, "GPU-hours")[scenario.name] == count(cli["gpu_hours_total"])
        assert usd(cli["cost_total_usd"]) in report and count(cli["gpu_hours_total"]) in report
    # Inputs that differ are listed, inputs that are the same are not.
    assert "Total parameters" in set(table["item"]) and "GPUs per node" not in set(table["item"])


def test_presentation_layout_has_one_column_of_large_numbers_per_option(app, store_url):
    _save(store_url, Scenario(name="Option A"), Scenario(name="Option B", mfu=0.3))
    at = _compare(app)
    at.toggle(key="compare.presentation").set_value(True).run()
    assert not at.exception
    totals = [m.value for m in at.metric if m.label == "Total cost"]
    assert totals == [usd(scenario_outputs(Scenario(name=n, **kw))["cost_total_usd"])
                      for n, kw in (("Option A", {}), ("Option B", {"mfu": 0.3}))]
    assert not at.button  # no editing controls on the projector
    ranges = [c.value for c in at.caption if "chance of exceeding" in c.value]
    assert len(ranges) == 2 and all(text.startswith("P10–P90 $") for text in ranges)


def test_picking_one_scenario_asks_for_another(app, store_url):
    _save(store_url, Scenario(name="Option A"), Scenario(name="Option B", mfu=0.3))
    at = _compare(app)
    at.multiselect(key="compare.selected").set_value(["Option A"]).run()
    assert at.info[0].value == "Pick at least 2 saved scenarios to compare."


def test_a_corrupted_store_file_is_reported_and_kept(app, store_url):
    path = store_url.removeprefix("sqlite:///")
    garbage = b"this is not a database\x00" * 100
    with open(path, "wb") as file:
        file.write(garbage)
    at = _compare(app)
    assert not at.exception
    notice = at.warning[0].value
    assert notice.startswith(f"The scenario store {path} was not a readable database: it was kept as {path}.corrupt-")
    backup = notice.split("it was kept as ")[1].split(" and a new")[0]
    with open(backup, "rb") as file:
        assert file.read() == garbage
    assert "No saved scenarios yet" in at.info[0].value


def test_an_unreachable_store_says_how_to_fix_it(app, monkeypatch):
    monkeypatch.setenv("PLANNER_STORE_URL", "postgresql://planner:secret@127.0.0.1:9/planner")
    at = _compare(app)
    assert not at.exception
    message = at.error[0].value
    assert message.startswith("The scenario store cannot be used: cannot reach the scenario store at "
                              "postgresql://planner:***@127.0.0.1:9/planner: ")
    assert "secret" not in message and "PLANNER_STORE_URL" in message
