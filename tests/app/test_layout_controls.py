"""AppTest: the sidebar's "Layout and memory" group, the model-shape boxes and the panel's Apply buttons.

Each new control changes the plan, goes into the link and a saved scenario, and comes back from both; the panel's
fixes apply to the plan and to the sidebar's widgets; a size set with the slider shows the shape it assumes.
"""

import json
import re

import pytest
from app_fixtures import APP, TIMEOUT_S
from plan_groups import show_group
from shown_text import shown
from streamlit.testing.v1 import AppTest

from dashboard.core import fix_choice, shape
from dashboard.core.scenario import Scenario
from dashboard.core.scenario_query import scenario_to_query
from dashboard.ui.feasibility_view import SHAPE_EXPANDER, shape_text
from dashboard.ui.layout_controls import AUTO, GROUP_TITLE, SHAPE_CONTROLS
from dashboard.ui.plan_controls import widget_values
from dashboard.validation.memory_validation import validation_note


def _widget(at, key):
    for kind in ("number_input", "selectbox", "select_slider", "slider", "toggle"):
        found = [w for w in getattr(at, kind) if w.key == key]
        if found:
            return found[0]
    raise LookupError(key)


def _tiles(at):
    return [(m.label, m.value) for m in at.metric]


def _lines(at):
    return " ".join(shown(block.value).replace("**", "") for block in at.markdown)


def _layout_line(at):
    return re.search(r"Layout: ([^\n]*)", _lines(at)).group(1)


def _open(app, scenario=None, link=None):
    """Run the app with a scenario's link (or raw link parameters), the layout group and the shape boxes open."""
    for name, text in {**({} if scenario is None else scenario_to_query(scenario)), **(link or {})}.items():
        app.query_params[name] = text
    at = app.run()
    show_group(at, GROUP_TITLE)
    at.session_state[SHAPE_EXPANDER] = True
    return at.run()


def test_tp_and_pp_change_the_panels_layout_and_the_link(app):
    at = _open(app)
    assert not at.exception
    assert "**Layout:** TP 8 · PP 16 ·" not in _lines(at)
    _widget(at, "w.tensor_parallel").set_value(8)
    _widget(at, "w.pipeline_parallel").set_value(16)
    at.run()
    assert not at.exception and not at.error
    assert "Layout: TP 8 · PP 16 · DP 4 ·" in _lines(at)  # 512 GPUs / (8 · 16)
    assert (at.query_params["tensor_parallel"], at.query_params["pipeline_parallel"]) == ("8", "16")
    _widget(at, "w.tensor_parallel").set_value(None)  # the empty box: back to the planner's choice
    at.run()
    assert not at.exception and "tensor_parallel" not in at.query_params
    assert at.session_state["plan.scenario"].tensor_parallel is None


# Each control of the group and of the shape boxes: a link that makes the value allowed, the widget's value and the
# scenario's value it stands for.
CASES = {
    "seq_len": ({}, 8192, 8192),
    "attention": ({}, "eager", "eager"),
    "activation_recompute": ({}, "selective", "selective"),
    "tensor_parallel": ({}, 4, 4),
    "pipeline_parallel": ({}, 2, 2),
    "virtual_pipeline_stages": ({"tensor_parallel": "8", "pipeline_parallel": "4"}, 2, 2),
    "context_parallel": ({}, 2, 2),
    "expert_parallel": ({"total_params": "1e10", "active_params": "1e9"}, 2, 2),
    "zero_stage": ({}, 1, 1),
    "micro_batch_size": ({}, 2, 2),
    "global_batch_tokens": ({}, 16.0, 16e6),
    "unique_tokens": ({}, 5000.0, 5e12),  # more than the 2T tokens read: no repeat warning
    "memory_reserve_gb": ({}, 5.0, 5.0),
    "n_layers": ({}, 40, 40),
    "d_model": ({}, 5120, 5120),
    "n_heads": ({}, 64, 64),
    "n_kv_heads": ({}, 4, 4),
    "ffn_hidden_size": ({}, 14336, 14336),
    "ffn_type": ({}, "plain", "plain"),
    "vocab_size": ({}, 32000, 32000),
}


def test_every_layout_and_shape_control_has_a_case():
    from dashboard.ui.layout_controls import all_controls

    assert set(CASES) == {control.key for control in all_controls()}


@pytest.mark.parametrize(("key", "case"), CASES.items(), ids=list(CASES))
def test_each_control_sets_its_key_and_round_trips_through_the_link_and_a_saved_scenario(app, unexpected_warnings,
                                                                                         key, case):
    link, shown_value, value = case
    at = _open(app, link=link)
    assert not at.exception and not unexpected_warnings(at)
    _widget(at, f"w.{key}").set_value(shown_value)
    at.run()
    assert not at.exception and not at.error
    plan: Scenario = at.session_state["plan.scenario"]
    assert getattr(plan, key) == value
    assert key in at.query_params
    # The link opens the same plan, with the control showing the value.
    again = _open(AppTest.from_file(str(APP), default_timeout=TIMEOUT_S), link=dict(at.query_params.items()))
    assert not again.exception and not unexpected_warnings(again)
    assert getattr(again.session_state["plan.scenario"], key) == value
    assert _widget(again, f"w.{key}").value == shown_value
    # A saved scenario (its JSON, as the store and the download keep it) opens the same plan.
    saved = Scenario.model_validate_json(json.dumps(plan.to_json_dict()))
    opened = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
    opened.session_state["plan.handed"] = saved  # as "Open in Plan" leaves it
    opened = _open(opened)
    assert not opened.exception
    assert getattr(opened.session_state["plan.scenario"], key) == value
    assert _widget(opened, f"w.{key}").value == shown_value


def test_zero_stage_auto_leaves_it_to_the_planner(app):
    at = _open(app, link={"zero_stage": "1"})
    assert _widget(at, "w.zero_stage").value == 1
    _widget(at, "w.zero_stage").set_value(AUTO)
    at.run()
    assert not at.exception and "zero_stage" not in at.query_params
    assert at.session_state["plan.scenario"].zero_stage is None


def test_a_value_that_does_not_fit_is_not_applied_and_says_why(app):
    at = _open(app)
    _widget(at, "w.tensor_parallel").set_value(16)  # beyond a node of 8 GPUs
    _widget(at, "w.seq_len").set_value(8192)
    at.run()
    assert not at.exception
    assert any("Not applied (marked in the sidebar): Tensor parallel (TP)" in shown(box.value) for box in at.error)
    assert any("Not applied:" in shown(c.value) and "exceeds" in c.value for c in at.caption)
    assert at.query_params["seq_len"] == "8192" and "tensor_parallel" not in at.query_params


def test_a_shape_value_that_does_not_fit_is_marked_in_the_shape_boxes(app):
    at = _open(app, link={"n_heads": "32"})
    _widget(at, "w.n_kv_heads").set_value(5)  # K/V heads must divide the 32 heads
    at.run()
    assert not at.exception
    assert any("Key-value heads (GQA)" in shown(box.value) for box in at.error)
    assert any("Not applied:" in shown(c.value) for c in at.main.caption)
    assert "n_kv_heads" not in at.query_params


def test_a_size_set_with_the_slider_shows_its_assumed_shape(app):
    at = _open(app)
    at.number_input(key="w.total_params.n").set_value(405.0)
    at.run()
    assert not at.exception
    plan = at.session_state["plan.scenario"]
    model = shape.model_shape(plan)
    text = shape_text(model)
    assert text == f"Assumed shape: {shape.describe(model)} — from the size"
    assert "Assumed shape: 126 layers × 16,384, 128 heads (8 KV) — from the size" in _lines(at)
    # The shape boxes stay empty (they follow the size) and show the assumed values in grey.
    layers = _widget(at, "w.n_layers")
    assert layers.value is None and layers.proto.placeholder.startswith("126")
    # A layer count typed in is the plan's own: the line reads it.
    layers.set_value(100)
    at.run()
    assert not at.exception and at.query_params["n_layers"] == "100"
    assert "100 layers × 16,384" in _lines(at)


def test_the_size_slider_itself_moves_the_assumed_shape(app):
    at = _open(app)
    at.select_slider(key="w.total_params").set_value(4e11)  # the slider's 400B step: nearest published is 405B
    at.run()
    assert not at.exception
    assert "Assumed shape: 126 layers × 16,384, 128 heads (8 KV) — from the size" in _lines(at)
    assert _widget(at, "w.n_layers").proto.placeholder.startswith("126")


def test_a_given_shape_reads_as_given(app):
    at = _open(app, link={"n_layers": "126", "d_model": "16384", "n_heads": "128", "n_kv_heads": "8",
                          "ffn_hidden_size": "53248", "ffn_type": "gated", "vocab_size": "128256",
                          "total_params": "4.05e11"})
    assert not at.exception
    assert "Shape: 126 layers × 16,384, 128 heads (8 KV) — as given" in _lines(at)
    assert all(_widget(at, control.widget).value is not None for control in SHAPE_CONTROLS)


def test_a_given_depth_and_width_read_as_given_with_the_rest_from_the_size(app):
    # The sample 13B plan names its layers and width only: the heads (5,120 / 128 = 40), FFN and vocabulary are
    # filled in, but the shape is the user's, not a published model's.
    at = _open(app, link={"n_layers": "40", "d_model": "5120", "total_params": "1.3e10"})
    assert not at.exception
    assert "Shape: 40 layers × 5,120, 40 heads — as given, the rest from the size" in _lines(at)
    assert not any(line.startswith("Assumed shape") for line in _lines(at))


def test_the_memory_bar_has_the_validation_note(app):
    at = app.run()
    assert any(shown(c.value) == validation_note() for c in at.caption)


# 70B on 64 H100 with nothing sharded (TP 1 · PP 1 · ZeRO-0): 1,120 GB of model states per GPU.
STUCK = Scenario(total_params=70e9, gpu_count=64, tensor_parallel=1, pipeline_parallel=1, zero_stage=0)


def test_the_panel_lists_the_fixes_cheapest_first_each_with_its_price(app):
    at = _open(app, STUCK)
    assert not at.exception
    offered, considered = fix_choice.offered(STUCK)
    assert offered and considered
    lines = _lines(at)
    assert "Fixes, cheapest first:" in lines
    positions = [lines.index(f"{item.fix.label}: ") for item in offered]
    assert positions == sorted(positions)
    assert all(item.cost_text in lines and item.changes_text in lines for item in offered)
    assert len([b for b in at.button if b.label == "Apply"]) == len(offered)
    # The rest are folded, each with why: none has an Apply button.
    expander = next(e for e in at.expander if e.label == f"Also considered ({len(considered)}), not offered")
    folded = " ".join(shown(block.value) for block in expander.markdown)
    assert all(item.fix.label in folded and item.reason in folded for item in considered)


def test_apply_changes_the_layout_the_tiles_and_the_sidebar(app):
    at = _open(app, STUCK)
    before, layout_before = _tiles(at), at.session_state["plan.scenario"]
    layout_text_before = _layout_line(at)
    fix = fix_choice.offered(STUCK)[0][0].fix
    at.button(key="plan.fix.0").click().run()
    assert not at.exception
    plan = at.session_state["plan.scenario"]
    assert plan == layout_before.model_copy(update={**fix.changes, "name": plan.name})
    assert _tiles(at) != before
    assert any(box.value.startswith("Runs on 64 GPUs") for box in at.success)
    layout_line = _layout_line(at)
    assert layout_line != layout_text_before
    for widget, value in widget_values(plan).items():  # every sidebar control shows the applied plan
        assert at.session_state[widget] == value, widget
    link = scenario_to_query(plan)
    assert all(at.query_params.get(key) == link.get(key) for key in fix.changes)
    assert any(f"Applied: {fix.label}." in shown(w.value) for w in at.warning)
    # The edit stays when the page reruns, and the notice's undo brings the stuck plan back.
    at.run()
    assert at.session_state["plan.scenario"] == plan
    next(b for b in at.button if b.label == "Undo").click().run()
    assert not at.exception
    assert _tiles(at) == before
