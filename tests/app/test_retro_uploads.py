"""AppTest: a bill of the user's own replaces the bundled quarter's run export, plan and budget (unless kept), the
data line says what is uploaded and what is the sample, a run export of another period is flagged with both
periods, one plan (the store's saved scenarios among the choices) serves Plan vs actual and Unit costs, and the
pages assume UTC for Slurm's local times and say so (issue 34, items 3, 6 and 7)."""

import json
from pathlib import Path

import pytest
from retro_page import open_retro
from shown_text import shown

from dashboard.core.presets import presets
from dashboard.format import count_sig
from dashboard.query.opened import is_table
from dashboard.safe_text import markdown_text
from dashboard.store.scenario_store import ScenarioStore
from dashboard.ui import upload_store
from dashboard.ui.sources import Imported

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples"
# Five rows of a real Azure EA actual-cost export (tests/data/uploads/README.md): September 2023, $5.89.
EA = ROOT / "tests" / "data" / "uploads" / "EA_ActualCost_first5.csv"
SAMPLE_PLAN = next(name for name in presets() if name.startswith("Sample organisation"))
NONE = "(none)"




def _upload_bill(at, path=EA):
    at.file_uploader(key="retro.billing_upload").set_value((path.name, path.read_bytes(), "text/csv")).run()
    assert not at.exception, at.exception
    return at


def _data_line(at) -> str:
    """The one line above the tiles saying what the page shows (its first markdown block)."""
    return shown(next(block.value for block in at.markdown if " · change below" in block.value))


def _tiles(at) -> dict[str, str]:
    return {metric.label: metric.value for metric in at.metric}


def _traces(at) -> list[str]:
    return [trace.get("name") or "" for chart in at.get("plotly_chart")
            for trace in json.loads(chart.proto.spec)["data"]]


def _tab(at, name):
    at.session_state["retro.view"] = name
    return at.run()


def test_the_sample_is_said_to_be_the_sample(app):
    at = open_retro(app)
    assert not at.exception and not at.error
    line = _data_line(at)
    assert line.startswith("Bundled sample: **focus_sample.csv** + **slurm_sample.txt** · ")
    assert "the sample's plan" in line and "the sample's budget" in line
    assert "Slurm times in UTC (assumed)" in line


def test_an_uploaded_bill_comes_without_the_samples_run_export_plan_and_budget(app):
    at = open_retro(app)
    _upload_bill(at)
    assert not at.error, [e.value for e in at.error]
    line = _data_line(at)
    assert line.startswith(f"Uploaded: **{EA.name}** · no run export · ")
    assert "no plan" in line and "no budget" in line
    assert "slurm_sample.txt" not in line and "sample" not in line.split(" · change below")[0]
    tiles = _tiles(at)
    assert tiles["Cost"] == "$5.89"
    assert "Runs without a bill" not in tiles  # no sample Slurm jobs joined to the bill
    assert not any("matched the run export" in w.value for w in at.warning)
    assert at.selectbox(key="retro.runs").value == NONE  # the picker, to choose a run export again
    assert not [name for name in _traces(at) if name.startswith("Budget")]  # not the sample's $1M
    assert at.number_input(key="retro.budget").value == 0.0
    assert any(c.value == "No budget drawn for this view." for c in at.caption)
    _tab(at, "Plan vs actual")
    assert at.selectbox(key="retro.plan").value == NONE
    assert not at.get("plotly_chart")  # no gap against the sample's 13B plan
    assert any(i.value.startswith("No plan chosen (the sample's plan went with your bill") for i in at.info)
    _tab(at, "Unit costs")
    assert at.selectbox(key="retro.plan").value == NONE
    assert next(m for m in at.metric if m.label == "Achieved MFU").value == "n/a"


def test_a_run_export_chosen_again_stays_and_removing_the_bill_brings_the_sample_back(app):
    at = _upload_bill(open_retro(app))
    at.selectbox(key="retro.runs").set_value("wandb_sample.csv").run()
    assert at.selectbox(key="retro.runs").value == "wandb_sample.csv"  # not replaced again for the same bill
    assert "+ bundled sample: **wandb_sample.csv**" in _data_line(at)
    at.selectbox(key="retro.runs").set_value(NONE).run()
    at.file_uploader(key="retro.billing_upload").set_value(None).run()  # the upload removed with its ×
    at.run()  # the settle fragment's rerun finds the uploader still empty: the sample quarter
    assert not at.exception
    line = _data_line(at)
    assert line.startswith("Bundled sample: **focus_sample.csv** + **slurm_sample.txt** · ")
    assert "the sample's plan" in line and "the sample's budget" in line


@pytest.mark.parametrize("when", ["before", "after"])
def test_the_keep_ticks_keep_the_samples_parts(app, when):
    at = open_retro(app)
    ticks = [at.checkbox(key=key) for key in ("retro.keep_runs", "retro.keep_plan", "retro.keep_budget")]
    if when == "before":
        for tick in ticks:
            tick.check()
        _upload_bill(at)
    else:
        _upload_bill(at)
        for key in ("retro.keep_runs", "retro.keep_plan", "retro.keep_budget"):
            at.checkbox(key=key).check().run()
    assert not at.exception
    line = _data_line(at)
    assert line.startswith(f"Uploaded: **{EA.name}** + bundled sample: **slurm_sample.txt** · ")
    assert "the sample's plan" in line and "the sample's budget" in line
    assert at.selectbox(key="retro.runs").value == "slurm_sample.txt"
    assert "Budget $1M" in _traces(at)
    _tab(at, "Plan vs actual")
    assert at.selectbox(key="retro.plan").value == SAMPLE_PLAN
    if when == "after":  # and unticking drops them again
        at.checkbox(key="retro.keep_runs").uncheck().run()
        assert at.selectbox(key="retro.runs").value == NONE


def test_a_run_export_of_another_period_is_flagged_with_both_periods(app):
    at = open_retro(app)
    at.checkbox(key="retro.keep_runs").check()
    _upload_bill(at)
    flags = [w.value for w in at.warning if "no overlap" in w.value]
    assert flags == ["The run export covers 2025-04-02 to 2025-06-30, the bill 2023-09-04 to 2023-09-21: no overlap, "
                     "nothing can match. Choose the run export of the bill's period, or none."]
    at.selectbox(key="retro.runs").set_value(NONE).run()
    assert not [w for w in at.warning if "no overlap" in w.value]


def test_the_bundled_quarter_is_not_flagged(app):
    at = open_retro(app)
    assert not [w for w in at.warning if "no overlap" in w.value]


def test_opening_a_bill_from_the_import_page_replaces_the_sample_too(app):
    at = app.run()
    at.switch_page("app_pages/imports.py").run()
    at.radio(key="import_source").set_value("Upload a file").run()
    at.file_uploader(key="import_file").set_value((EA.name, EA.read_bytes(), "text/csv")).run()
    next(b for b in at.button if b.label == "Open in Retrospective").click().run()
    assert not at.exception and not at.error
    line = _data_line(at)
    assert line.startswith(f"Uploaded via Import usage: **{EA.name}** · no run export · ")
    assert "no plan" in line and "no budget" in line
    assert "Runs without a bill" not in _tiles(at)


# --- one plan, with the store's saved scenarios -----------------------------------------------------------------------

SAVED = "Option B (saved on Compare)"


def _save(store_url):
    deepseek = next(scenario for name, scenario in presets().items() if name.startswith("DeepSeek"))
    saved = deepseek.model_copy(update={"name": SAVED})
    with ScenarioStore(store_url) as store:
        store.save(saved.name, saved)
    return saved


def test_the_plan_picker_lists_the_stores_scenarios_and_unit_costs_read_the_same_plan(app, store_url):
    saved = _save(store_url)
    at = _tab(open_retro(app), "Plan vs actual")
    picker = at.selectbox(key="retro.plan")
    assert picker.options[:2] == [NONE, "Scenario on the Plan page"]
    assert f"Saved: {SAVED}" in picker.options and picker.options[-1] == "Upload a scenario JSON"
    picker.set_value(f"Saved: {SAVED}").run()
    assert not at.exception and not at.error
    assert any(shown(c.value).startswith(f"Plan: **{SAVED}** — ") for c in at.caption)
    assert f"plan: **{SAVED}**" in shown(_data_line(at))
    _tab(at, "Unit costs")
    assert at.selectbox(key="retro.plan").value == f"Saved: {SAVED}"
    mfu = next(m for m in at.metric if m.label == "Achieved MFU")
    assert f"6 · {count_sig(saved.active)} active parameters (the model of the plan {markdown_text(SAVED)})" in mfu.help
    at.selectbox(key="retro.plan").set_value(SAMPLE_PLAN).run()  # chosen on Unit costs: Plan vs actual follows
    _tab(at, "Plan vs actual")
    assert at.selectbox(key="retro.plan").value == SAMPLE_PLAN


def test_an_uploaded_scenario_file_serves_both_tabs(app):
    plan = next(scenario for name, scenario in presets().items() if name.startswith("Llama"))
    at = _tab(open_retro(app), "Plan vs actual")
    at.selectbox(key="retro.plan").set_value("Upload a scenario JSON").run()
    at.file_uploader(key="retro.plan_upload").set_value(("llama.json", json.dumps(plan.to_json_dict()).encode(),
                                                         "application/json")).run()
    assert not at.exception and not at.error
    assert any(shown(c.value).startswith(f"Plan: **{plan.name}** — ") for c in at.caption)
    _tab(at, "Unit costs")
    mfu = next(m for m in at.metric if m.label == "Achieved MFU")
    assert f"{count_sig(plan.active)} active parameters" in mfu.help
    assert at.selectbox(key="retro.plan").value == "Upload a scenario JSON" and not at.error


# --- the same defaults on every page ----------------------------------------------------------------------------------

def test_the_slurm_sample_imports_on_the_import_page_in_utc_as_shown(app):
    at = app.run()
    at.switch_page("app_pages/imports.py").run()
    at.selectbox(key="sample").set_value("slurm_sample.txt").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    zone = at.selectbox(key="import_zone")
    assert zone.value == "UTC" and zone.label == "Time zone of Slurm times"
    assert zone.format_func(zone.value) == "UTC (assumed)"
    assert any(shown(c.value).startswith("Slurm times read as UTC (assumed") for c in at.caption)
    assert next(m for m in at.metric if m.label == "Used").value != "0"
    zone.set_value("Europe/Berlin").run()  # the change control
    assert not at.error
    assert any(shown(c.value).startswith("Slurm times read as Europe/Berlin") for c in at.caption)


def test_both_pages_offer_the_same_time_zone_control(app):
    at = open_retro(app)
    retro = at.selectbox(key="retro.zone")
    retro = (retro.label, retro.options, retro.value)
    at.switch_page("app_pages/imports.py").run()
    imports = at.selectbox(key="import_zone")
    assert retro == (imports.label, imports.options, imports.value) == (
        "Time zone of Slurm times", retro[1], "UTC")


def test_the_import_page_gives_the_gcp_commitment_note(app):
    at = app.run()
    at.switch_page("app_pages/imports.py").run()
    at.selectbox(key="sample").set_value("gcp_sample.csv").run()
    assert not at.exception and not at.error
    (note,) = [shown(c.value) for c in at.caption if "committed-use discounts" in shown(c.value)]
    assert note.startswith("GCP bills show committed-use discounts as separate lines: commitment fees on their own "
                           "SKU lines ($630k of it)")
    assert "commitments amortised" in note
    at.selectbox(key="sample").set_value("focus_sample.csv").run()
    assert not [c for c in at.caption if "committed-use discounts" in shown(c.value)]


def test_an_uploaded_bill_is_held_once_as_the_engines_table(app):
    """The page's own import keeps its rows in the query engine in place of its frame (docs/engines.md, "A filter
    change on a million rows"): the store holds a table under the upload, and the page's figures still read it."""
    at = _upload_bill(open_retro(app))
    held = [entry.value for entry in upload_store._HELD.values()
            if isinstance(entry.value, Imported) and entry.value.filename == EA.name]
    assert len(held) == 1 and is_table(held[0].usage)
    assert _tiles(at)["Cost"] == "$5.89"  # the five rows' cost (tests/data/uploads/README.md)
