"""AppTest: the Plan page's Programme group (presets, stage fields, add and remove, start date), its chart tab, the
tiles' programme captions and the link that carries the programme."""

import datetime as dt
import json

from plan_groups import show_group
from programme_switch import full_programme_switch
from shown_text import shown

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.programme import PRESETS
from dashboard.core.scenario import default_scenario, scenario_from_dict
from dashboard.figures.programme import COST_TITLE, TIMELINE_TITLE
from dashboard.ui.programme_controls import ADD, GROUP_TITLE, PRESET, START_DATE, widget_key

LADDER_LINK = json.dumps([{"kind": "scaling_ladder", "runs": 7}], separators=(",", ":"))


def _open(at):
    """Open the Programme group and the Programme chart tab."""
    show_group(at, GROUP_TITLE)
    at.session_state["plan.tabs.right"] = "Programme"
    return at.run()


def _select(at, key):
    return next(box for box in at.selectbox if box.key == key)


def _number(at, key):
    return next(box for box in at.number_input if box.key == key)


def _charts(at) -> dict[str, dict]:
    specs = (json.loads(chart.proto.spec) for chart in at.get("plotly_chart"))
    return {spec["layout"]["title"]["text"]: spec for spec in specs}


def _captions(at) -> list[str]:
    return [shown(caption.value) for caption in at.caption]


def _with(preset: str, **keys) -> dict:
    return scenario_outputs(scenario_from_dict({**default_scenario().to_json_dict(), **PRESETS[preset], **keys}))


def test_ladder_and_main_shows_the_stage_chart_and_a_final_run_share_below_100_percent(app):
    at = _open(app.run())
    assert not at.exception
    _select(at, PRESET).set_value("ladder + main")
    at.run()
    assert not at.exception and not at.error
    assert [stage.kind for stage in at.session_state["plan.scenario"].programme] == ["scaling_ladder"]
    expected = _with("ladder + main")["programme"]
    assert expected["final_run_share"] < 1
    share = catalogue.text("programme.final_run_share", expected["final_run_share"])
    assert f"final run {share} of the programme" in _captions(at)
    total = next(metric for metric in at.metric if metric.label.startswith("Total cost"))
    assert total.value == catalogue.text("programme.total_usd", expected["total_usd"])
    charts = _charts(at)
    cost = charts[COST_TITLE]
    assert "Scaling ladder" in cost["data"][0]["y"] and "Main pre-training" in cost["data"][0]["y"]
    assert TIMELINE_TITLE in charts
    # The stage's own numbers are in the sidebar, each labelled with its unit.
    assert _number(at, widget_key(0, "runs")).value == 5
    assert _number(at, widget_key(0, "repeat_allowance")).label == "Repeats (% of the stage's GPU-hours)"
    assert json.loads(at.query_params["programme"]) == [{"kind": "scaling_ladder"}]


def test_a_link_with_a_programme_reopens_it(app):
    app.query_params["programme"] = LADDER_LINK
    app.query_params["experiment_overhead"] = "0"
    app.query_params["start_date"] = "2027-01-04"
    at = _open(app.run())
    assert not at.exception and not at.error
    stages = at.session_state["plan.scenario"].programme
    assert [(stage.kind, stage.runs) for stage in stages] == [("scaling_ladder", 7)]
    assert _number(at, widget_key(0, "runs")).value == 7
    assert next(box for box in at.date_input if box.key == START_DATE).value == dt.date(2027, 1, 4)
    expected = _with("ladder + main", programme=json.loads(LADDER_LINK), start_date="2027-01-04")["programme"]
    calendar = catalogue.text("programme.calendar_days", expected["calendar_days"])
    assert f"programme {calendar}, ends {expected['end_date']}" in _captions(at)
    timeline = _charts(at)[TIMELINE_TITLE]
    assert timeline["layout"]["xaxis"]["type"] == "date"
    assert timeline["data"][0]["base"][0] == "2027-01-04 00:00:00"


def test_a_bad_stage_value_shows_the_validator_s_message_and_keeps_the_rest(app):
    app.query_params["programme"] = LADDER_LINK
    at = _open(app.run())
    before = at.session_state["plan.scenario"]
    _number(at, widget_key(0, "top_compute_fraction")).set_value(0.0)  # the bound is "above 0"
    at.run()
    assert not at.exception
    assert at.session_state["plan.scenario"] == before
    message = " ".join(_captions(at))
    assert "Not applied: programme stage 1 (scaling_ladder) top_compute_fraction = 0.0 is out of range" in message
    assert "Stage 1 (Scaling ladder): Largest rung" in shown(at.error[0].value)
    _number(at, widget_key(0, "runs")).set_value(3)  # another field of the same stage still applies
    at.run()
    assert not at.exception
    assert at.session_state["plan.scenario"].programme[0].runs == 3


def test_adding_and_removing_stages_reloads_their_boxes(app):
    at = _open(app.run())
    for kind in ("ablations", "evaluation"):
        _select(at, ADD).set_value(kind)
        at.run()
    assert not at.exception
    assert [stage.kind for stage in at.session_state["plan.scenario"].programme] == ["ablations", "evaluation"]
    assert _number(at, widget_key(1, "every_nth_checkpoint")).value == 4
    assert not any(box.key == widget_key(1, "gpu_count") for box in at.number_input)  # no GPUs for inference
    _number(at, widget_key(0, "runs")).set_value(12)
    at.run()
    next(button for button in at.button if button.key == "plan.programme.remove.0").click()
    at.run()
    assert not at.exception
    assert [stage.kind for stage in at.session_state["plan.scenario"].programme] == ["evaluation"]
    assert not any(box.key == widget_key(0, "runs") for box in at.number_input)  # the removed stage's box is gone
    assert _number(at, widget_key(0, "every_nth_checkpoint")).value == 4
    next(button for button in at.button if button.key == "plan.undo_button").click()
    at.run()
    assert [(stage.kind, getattr(stage, "runs", None)) for stage in at.session_state["plan.scenario"].programme] == [
        ("ablations", 12), ("evaluation", None)]


def test_a_plan_without_stages_still_charts_its_main_run(app):
    at = _open(app.run())
    assert not at.exception
    labels = _charts(at)[COST_TITLE]["data"][0]["y"]
    assert labels == [row["label"] for row in scenario_outputs(default_scenario())["programme"]["stages"]]
    assert "Main pre-training" in labels


def test_a_start_date_gives_the_programme_s_end_date(app):
    at = _open(app.run())
    next(box for box in at.date_input if box.key == START_DATE).set_value(dt.date(2027, 3, 1))
    at.run()
    assert not at.exception
    assert at.session_state["plan.scenario"].start_date == "2027-03-01"
    assert at.query_params["start_date"] == "2027-03-01"
    expected = scenario_outputs(at.session_state["plan.scenario"])["programme"]
    assert any(caption.endswith(f", ends {expected['end_date']}") for caption in _captions(at))


def test_a_stage_name_from_a_link_is_shown_as_text(app):
    name = "**bold** <b>x</b> [link](https://example.test)"
    app.query_params["programme"] = json.dumps([{"kind": "ablations", "name": name}])
    at = _open(app.run())
    assert not at.exception
    assert any(shown(block.value) == f"**1. {name}**" for block in at.markdown)  # escaped: no markup of its own
    assert name in _charts(at)[COST_TITLE]["data"][0]["y"][0].replace("&lt;", "<").replace("&gt;", ">")


def _switch_lines(at) -> list[str]:
    return [line for caption in _captions(at) for line in caption.split("\n") if "in place of" in line
            or "replace" in line]


def test_the_full_programme_switch_says_what_it_replaces_beside_the_total(app):
    at = _open(app.run())
    assert _switch_lines(at) == []
    _select(at, PRESET).set_value("full programme")
    at.run()
    assert not at.exception
    # The overheads replaced are 1.05 × the main run (1 × experiments and 0.05 × evaluation).
    sentence, total = full_programme_switch()
    lines = _switch_lines(at)
    assert len(lines) == 1 and sentence in lines[0]
    assert next(m for m in at.metric if m.label.startswith("Total cost")).value == total
    _select(at, PRESET).set_value("single run as today")  # the default's structure again: no sentence
    at.run()
    assert _switch_lines(at) == []
