"""AppTest: the Compare page saves, imports, renames, duplicates, deletes and compares stored scenarios."""

import json
import re
from pathlib import Path

import pytest
from shown_text import shown
from streamlit.testing.v1 import AppTest

from dashboard.cli import main
from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.presets import presets
from dashboard.core.risk import budget_status
from dashboard.core.scaling import FITS
from dashboard.core.scenario import Scenario, default_scenario
from dashboard.core.uncertainty import monte_carlo
from dashboard.report.cells import count, money
from dashboard.report.html import build_report
from dashboard.store.scenario_store import ScenarioStore
from dashboard.ui import plan_state
from dashboard.ui.compare_state import BASELINE_OPTION, PLAN_OPTION

PAGE = "app_pages/compare.py"
COMPARE_SCRIPT = Path(__file__).resolve().parents[2] / "dashboard" / "app_pages" / "compare.py"


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


def _outputs(at):
    """The headline outputs table (the first one after the saved list, whose first column is "Scenario")."""
    return next(frame.value for frame in at.dataframe if "item" in frame.value.columns)


def _inputs(at):
    return [frame.value for frame in at.dataframe if "item" in frame.value.columns][1]


def _row(table, item):
    return table[table["item"] == item].iloc[0]


def _select(at, *names):
    return at.multiselect(key="compare.selected").set_value(list(names)).run()


def test_an_empty_store_says_how_to_start(app):
    at = _compare(app)
    assert not at.exception
    assert "No saved scenarios yet" in at.info[0].value


def test_the_store_is_named_by_its_kind_never_its_path(app, store_url):
    # Every user of a server sees this page: the store's file path on the server is not theirs to read.
    at = _compare(app)
    captions = [caption.value for caption in at.caption]
    assert "Saved in a SQLite file on this server." in captions
    folder = Path(store_url.removeprefix("sqlite:///")).parent
    texts = [shown(element.value) for kind in ("caption", "markdown", "info", "warning", "error", "success")
             for element in getattr(at, kind)]
    assert texts and not any(str(folder) in text for text in texts)


def test_an_empty_store_with_no_baseline_says_so(app):
    # Nothing saved and nothing pinned: the page must not promise a comparison with a pinned baseline.
    at = app.run()
    at.session_state[plan_state.BASELINE] = None
    at = at.switch_page(PAGE).run()
    assert not at.exception
    assert "pinned baseline" not in at.info[0].value
    assert "No baseline is pinned on the Plan page either" in at.info[0].value
    assert at.multiselect(key="compare.selected").value == [PLAN_OPTION]
    assert at.info[1].value == "Pick at least 2 scenarios to compare."


def test_saving_the_plan_scenario_keeps_it_across_restarts(app, store_url):
    at = _compare(app)
    at.sidebar.text_input[0].set_value("Option A (512 H100)")
    _button(at, "Save").click().run()
    assert not at.exception
    assert shown(at.success[0].value) == "Saved the Plan's scenario as “Option A (512 H100)”."
    assert _names(store_url) == ["Option A (512 H100)"]
    with ScenarioStore(store_url) as store:
        saved = store.load("Option A (512 H100)")
    assert saved.model_copy(update={"name": default_scenario().name}) == default_scenario()


def test_saving_under_a_taken_name_is_refused_unless_overwriting(app, store_url):
    _save(store_url, Scenario(name="Option A", mfu=0.3))
    at = _compare(app)
    at.sidebar.text_input[0].set_value("Option A")
    _button(at, "Save").click().run()
    assert "Not saved: a scenario named 'Option A' already exists" in shown(at.error[0].value)
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
    assert message in shown(at.error[0].value) and "Scenario names are 1–120 characters" in shown(at.error[0].value)
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
    assert shown(at.success[0].value) == "Imported 3 scenarios: Option B, Option C, Option D."
    assert _names(store_url) == ["Option B", "Option C", "Option D"]


def test_an_import_with_one_bad_scenario_imports_nothing(app, store_url):
    bad = [Scenario(name="Fine").to_json_dict(), {"name": "Broken", "mfu": 7}]
    at = _compare(app)
    at.sidebar.file_uploader[0].set_value(("two.json", json.dumps(bad).encode(), "application/json")).run()
    assert shown(at.error[0].value).startswith("Nothing imported: two.json: scenario 2 of 2: mfu = 7 is out of range")
    assert _names(store_url) == []


def test_rename_duplicate_and_delete(app, store_url):
    _save(store_url, Scenario(name="Option A"), Scenario(name="Option B", mfu=0.3))
    at = _select(_compare(app), "Option A", "Option B")
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
    assert shown(at.success[0].value) == "Deleted “Option A”."
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
    at = _select(_compare(app), default_scenario().name, llama.name)
    assert not at.exception
    table = _outputs(at)
    # Short headers; the losses differ (7B on 2T tokens: 1.8172 + 482.01/7e9^0.3478 + 2085.43/2e12^0.3658 = 2.065,
    # 405B on 15.6T: 1.893), so each header carries its loss.
    short = {default_scenario().name: "Default: 7B dense, 2T… · loss 2.065",
             llama.name: "Llama 3.1 405B: 15.6T… · loss 1.893"}
    report = build_report([default_scenario(), llama], generated_at=__import__("datetime").datetime(2026, 11, 30))
    for scenario in (default_scenario(), llama):
        path = tmp_path / "scenario.json"
        path.write_text(json.dumps(scenario.to_json_dict()))
        assert main(["estimate", str(path), "--json"]) == 0
        cli = json.loads(capsys.readouterr().out)
        assert _row(table, "Total cost")[short[scenario.name]] == money(cli["cost_total_usd"])
        assert _row(table, "GPU-hours")[short[scenario.name]] == count(cli["gpu_hours_total"])
        assert money(cli["cost_total_usd"]) in report and count(cli["gpu_hours_total"]) in report
    # Outputs first; inputs that differ are listed in their own section, inputs that are the same are not.
    assert list(table["item"])[0] == "Total cost"
    inputs = set(_inputs(at)["item"])
    assert "Total parameters" in inputs and "GPUs per node" not in inputs


def test_presentation_layout_has_one_column_of_large_numbers_per_option(app, store_url):
    _save(store_url, Scenario(name="Option A"), Scenario(name="Option B", mfu=0.3))
    at = _select(_compare(app), "Option A", "Option B")
    at.toggle(key="compare.presentation").set_value(True).run()
    assert not at.exception
    totals = [m.value for m in at.metric if m.label == "Total cost"]
    cost_a, cost_b = (scenario_outputs(Scenario(name=n, **kw))["cost_total_usd"]
                      for n, kw in (("Option A", {}), ("Option B", {"mfu": 0.3})))
    assert totals == [money(cost_a), money(cost_b)]
    deltas = [m.delta for m in at.metric if m.label == "Total cost"]
    assert deltas == ["", f"+{money(cost_b - cost_a)} vs first"]  # MFU 0.3 instead of 0.4 costs more
    assert not at.button  # no editing controls on the projector
    assert not at.sidebar.text_input  # nor the sidebar's store controls
    # Literal text (two "$" would start maths), the chance as the Plan tile writes it (49.6 %, not 50%).
    ranges = [shown(c.value) for c in at.caption if shown(c.value).startswith("P10–P90 ")]
    assert len(ranges) == 2 and all(text.startswith("P10–P90 $") for text in ranges)
    assert all("\\$" in c.value for c in at.caption if shown(c.value).startswith("P10–P90 "))
    chances = [shown(c.value) for c in at.caption if "chance of exceeding" in c.value]
    assert len(chances) == 2 and all(re.match(r"\d+(\.\d)? % chance of exceeding the \$", text) for text in chances)
    at.toggle(key="compare.presentation").set_value(False).run()
    assert at.sidebar.text_input and at.button  # back to editing


def test_the_budget_status_is_the_plan_page_s_at_risk_rule(app, store_url):
    # The default plan at an entered MFU of 40 % is within its budget at the point estimate but a large share of its
    # Monte Carlo draws overrun it: the Plan page's tile says "at risk", and so must the comparison and the projector.
    options = (Scenario(name="Option A", mfu=0.4), Scenario(name="Option B", mfu=0.6))
    _save(store_url, *options)
    at = _select(_compare(app), "Option A", "Option B")
    assert not at.exception
    # The Plan page's tile: risk.budget_status over its 10,000 draws (seed 0), as tests/app/test_plan_page.py checks.
    statuses = [budget_status(scenario_outputs(s)["budget_status"], monte_carlo(s, 10_000, 0).prob_over_budget)
                for s in options]
    assert statuses[0] == "at risk"
    row = _row(_outputs(at), "Budget status")
    assert [row[c] for c in _outputs(at).columns if c.startswith("Option")] == statuses
    at.toggle(key="compare.presentation").set_value(True).run()
    assert [m.value for m in at.metric if m.label == "Budget status"] == statuses


def test_picking_one_scenario_asks_for_another(app, store_url):
    _save(store_url, Scenario(name="Option A"), Scenario(name="Option B", mfu=0.3))
    at = _compare(app)
    at.multiselect(key="compare.selected").set_value(["Option A"]).run()
    assert at.info[0].value == "Pick at least 2 scenarios to compare."


def test_a_corrupted_store_file_is_reported_and_kept(app, store_url):
    path = store_url.removeprefix("sqlite:///")
    garbage = b"this is not a database\x00" * 100
    with open(path, "wb") as file:
        file.write(garbage)
    at = _compare(app)
    assert not at.exception
    notice = shown(at.warning[0].value)
    assert notice.startswith(f"The scenario store {path} was not a readable database: it was kept as {path}.corrupt-")
    backup = notice.split("it was kept as ")[1].split(" and a new")[0]
    with open(backup, "rb") as file:
        assert file.read() == garbage
    assert "No saved scenarios yet" in at.info[0].value


def test_an_unreachable_store_says_how_to_fix_it(app, monkeypatch):
    monkeypatch.setenv("PLANNER_STORE_URL", "postgresql://planner:secret@127.0.0.1:9/planner")
    at = _compare(app)
    assert not at.exception
    message = shown(at.error[0].value)
    assert message.startswith("The scenario store cannot be used: cannot reach the scenario store at "
                              "postgresql://planner:***@127.0.0.1:9/planner: ")
    assert "secret" not in message and "PLANNER_STORE_URL" in message


def test_the_default_selection_is_the_plan_pages_baseline_and_scenario(app, store_url):
    _save(store_url, Scenario(name="Alpha"), Scenario(name="Beta", mfu=0.3))
    # The Plan page opens on a link: its scenario at MFU 0.3, a pinned baseline at MFU 0.4 on 256 GPUs.
    app.query_params["mfu"] = "0.3"
    app.query_params["base.mfu"] = "0.4"
    app.query_params["base.gpu_count"] = "256"
    at = _compare(app)
    assert not at.exception
    assert at.multiselect(key="compare.selected").value == [BASELINE_OPTION, PLAN_OPTION]
    headers = list(_outputs(at).columns)
    assert headers[1].startswith("Baseline: ") and headers[2].startswith("Plan: ")
    inputs = _inputs(at)
    assert list(_row(inputs, "MFU")[1:3]) == ["40 %", "30 %"]  # the Plan page's unit, not "0.4"
    assert list(_row(inputs, "GPUs")[1:3]) == ["256", "512"]


def test_with_no_baseline_pinned_the_plan_is_compared_with_the_first_saved_scenario(app, store_url):
    _save(store_url, Scenario(name="Alpha"), Scenario(name="Beta", mfu=0.3))
    at = app.run()
    at.session_state[plan_state.BASELINE] = None
    at = at.switch_page(PAGE).run()
    assert not at.exception
    assert at.multiselect(key="compare.selected").value == [PLAN_OPTION, "Alpha"]
    assert BASELINE_OPTION not in at.multiselect(key="compare.selected").options


def test_differing_losses_show_the_banner_and_match_loss_equalises_them(app, store_url):
    small = Scenario(name="Small", total_params=7e9, tokens=2e11)
    large = Scenario(name="Large", total_params=7e9, tokens=2e12)
    _save(store_url, large, small)
    at = _select(_compare(app), "Large", "Small")
    fit = FITS[large.scaling_fit]
    loss_large = fit.E + fit.A / 7e9 ** fit.alpha + fit.B / 2e12 ** fit.beta  # hand-written L(N, D)
    loss_small = fit.E + fit.A / 7e9 ** fit.alpha + fit.B / 2e11 ** fit.beta
    banner = next(w.value for w in at.warning if "worse model" in w.value).replace("\\", "")
    assert f"{loss_small:.3f} vs {loss_large:.3f}" in banner
    assert "Small" not in banner  # the cheaper option is the worse one: said as "the cheaper options"
    for lever in ("tokens", "size"):
        at.button_group(key="compare.match").set_value(lever).run()
        assert not at.exception
        assert not [w for w in at.warning if "worse model" in w.value]
        losses = list(_row(_outputs(at), "Predicted loss")[1:3])
        assert losses == [f"{loss_large:.3f}", f"{loss_large:.3f}"]
        moved = next(c.value for c in at.caption if c.value.startswith("Small"))
        assert ("tokens" if lever == "tokens" else "parameters") in moved and "total cost" in moved


def test_the_selection_order_and_layout_survive_a_reload_from_the_link(store_url):
    """The link as the browser writes it for bound widgets (repeated keys keep the order; the browser test checks
    the address bar itself)."""
    _save(store_url, Scenario(name="Alpha"), Scenario(name="Beta", mfu=0.3), Scenario(name="Gamma", mfu=0.2))
    reloaded = AppTest.from_file(str(COMPARE_SCRIPT), default_timeout=60)
    reloaded.query_params["compare.selected"] = ["Gamma", "Alpha"]
    reloaded.query_params["compare.presentation"] = "true"
    reloaded.run()
    assert not reloaded.exception
    assert reloaded.multiselect(key="compare.selected").value == ["Gamma", "Alpha"]
    assert reloaded.toggle(key="compare.presentation").value is True
    assert [m.value for m in reloaded.metric if m.label == "Total cost"] == [
        money(scenario_outputs(Scenario(name="Gamma", mfu=0.2))["cost_total_usd"]),
        money(scenario_outputs(Scenario(name="Alpha"))["cost_total_usd"])]


def test_an_option_that_no_amount_of_tokens_can_match_is_kept_with_the_reason(app, store_url):
    _save(store_url, Scenario(name="Large", total_params=7e9, tokens=2e12), Scenario(name="Tiny", total_params=1e9))
    at = _select(_compare(app), "Large", "Tiny")
    at.button_group(key="compare.match").set_value("tokens").run()
    assert not at.exception
    fit = FITS["epoch2024"]
    floor = fit.E + fit.A / 1e9 ** fit.alpha  # the loss of a 1B model on infinite data
    error = shown(at.error[0].value)
    assert error.startswith("Not matched: Tiny: at 1B parameters no number of tokens brings the loss below "
                            f"{floor:.3f}")
    assert [w for w in at.warning if "worse model" in w.value]  # still not comparable, and still said so


def test_a_short_label_heads_its_column_in_the_presentation_with_the_full_name_on_hover(app, store_url):
    _save(store_url, Scenario(name="Option A with a very long descriptive name"), Scenario(name="Option B", mfu=0.3))
    at = _select(_compare(app), "Option A with a very long descriptive name", "Option B")
    at.text_input(key="compare.labels.Option A with a very long descriptive name").set_value("<A>").run()
    at.toggle(key="compare.presentation").set_value(True).run()
    assert not at.exception
    heads = [e.proto.body for e in at.get("html") if e.proto.body.startswith("<div class=\"cmp-head\"")]
    assert len(heads) == 2
    assert 'title="Option A with a very long descriptive name"' in heads[0] and ">&lt;A&gt;<" in heads[0]
    assert ">Option B<" in heads[1]  # no short label: the name itself, cut to fit by the stylesheet
    assert "cheapest" in heads[0] and "cheapest" not in heads[1]  # MFU 0.4 costs less than 0.3


def test_identical_options_say_so(app, store_url):
    # Pins the default scenario as the baseline of the default plan (a key at its default value).
    app.query_params["base.gpu_count"] = str(default_scenario().gpu_count)
    at = _compare(app)  # an empty store: the Plan page's scenario against its baseline, both the default
    assert not at.exception
    assert "No saved scenarios yet" in at.info[0].value
    assert at.info[1].value.startswith("These options have the same inputs.")


def test_compare_deltas_under_half_a_percent_read_same_in_grey_with_no_arrow(app, store_url):
    # MFU 40 % against 40.1 %: GPU-hours, cost and wall-clock 1 − 40/40.1 = 0.25 % lower, under half a percent;
    # the same predicted loss.
    _save(store_url, Scenario(name="Option A", mfu=0.4), Scenario(name="Option B", mfu=0.401))
    at = _select(_compare(app), "Option A", "Option B")
    assert not at.exception
    table = _outputs(at)
    for item in ("Total cost", "GPU-hours", "Wall-clock", "Predicted loss"):
        assert _row(table, item).iloc[-1] == "≈ same", item  # the Δ column
    at.toggle(key="compare.presentation").set_value(True).run()
    assert not at.exception
    for label in ("Total cost", "GPU-hours", "Predicted loss"):
        first, second = [m for m in at.metric if m.label == label]
        assert first.delta == "" and second.delta == "≈ same", label
        assert (second.proto.color, second.proto.direction) == (2, 2), label  # GRAY, no arrow


def test_a_link_naming_scenarios_the_store_lacks_says_which_and_how_to_add_them(store_url):
    _save(store_url, Scenario(name="Alpha"))
    opened = AppTest.from_file(str(COMPARE_SCRIPT), default_timeout=60)
    opened.query_params["compare.selected"] = ["Gamma", "Alpha", "Delta"]
    opened.run()
    assert not opened.exception
    note = next(w.value for w in opened.warning if "not in this store" in w.value)
    assert "“Gamma”, “Delta”" in shown(note) and "Export as JSON" in note and "Import scenario JSON files" in note
