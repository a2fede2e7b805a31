"""AppTest: the Plan page's "Can it run?" panel, for a plan that runs and one that does not."""

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.core.scenario_query import scenario_to_query
from dashboard.safe_text import markdown_text


def _open(app, scenario):
    for name, text in scenario_to_query(scenario).items():
        app.query_params[name] = text
    return app.run()


def test_panel_shows_a_plan_that_runs(app):
    at = app.run()
    assert not at.exception
    assert "Can it run?" in [header.value for header in at.subheader]
    assert any(box.value.startswith("Runs on 512 GPUs") for box in at.success)
    expected = scenario_outputs(Scenario())
    lines = " ".join(block.value for block in at.markdown)
    assert f"**Max useful GPUs:** {expected['max_useful_gpus']:,.0f} (GPUs beyond this would idle)" in lines
    # 2T tokens in a batch of 2,247 sequences of 4,096 tokens (9.20M tokens): 2e12 / 9.2037e6 = 217k steps
    assert "**Optimizer steps:** 217k, each of 2,247 sequences" in lines
    # The bubble of the layout the planner proposes, in the tiles' format (0 % at PP 1, not "0.0 %").
    bubble = catalogue.text("pipeline_bubble_fraction", expected["pipeline_bubble_fraction"])
    assert f"**Pipeline bubble:** {bubble} of each step" in lines
    assert any(chart.proto.spec and "Memory per GPU" in chart.proto.spec for chart in at.get("plotly_chart"))


def test_panel_says_why_a_plan_cannot_run_and_the_fix(app):
    scenario = Scenario(total_params=70e9, gpu_count=64, tensor_parallel=1, pipeline_parallel=1, zero_stage=0,
                        activation_recompute="full")
    at = _open(app, scenario)
    assert not at.exception
    errors = [box.value for box in at.error]
    assert any("budget is infeasible" in text for text in errors)
    # The budget tile says so too (as Compare, the report and the CLI do), not "over" or "within".
    assert [m.value for m in at.metric if m.label.startswith("Budget:")] == ["infeasible"]
    # 18 B · 70e9 = 1,173.4 GB (of 2³⁰ bytes) of states, 2 · 4,096 · 8,192 B · 80 layers = 5 GB of activations (the
    # Llama 2 70B shape the size takes), 4 · 4,096 · 32,000 B = 0.49 GB of logits and a 6 GB reserve: 1,185 GB.
    expected = markdown_text("does not fit: 1,185 GB of 80 GB per GPU at TP 1 · PP 1 · ZeRO-0 — use ZeRO-3 (")
    assert any(text.startswith(expected) and "ZeRO\\-3" in text for text in errors)


def test_a_custom_gpu_runs_only_once_its_memory_is_given(app):
    # From a file or link without its memory, the custom GPU cannot be said to hold the plan.
    at = _open(app, Scenario(gpu_type="custom", peak_tflops=500.0, mfu=0.4))  # no bandwidths: its MFU is entered
    assert not at.exception
    assert at.number_input(key="w.gpu_memory_gb").value is None  # shown empty, not a guessed 80 GB
    assert any(markdown_text("the custom GPU's memory is not given") in box.value for box in at.error)
    assert not any(box.value.startswith("Runs on") for box in at.success)
    # Its memory box is on the page, enabled for the custom GPU: 1 GB cannot hold a 7B plan, 80 GB can.
    at.number_input(key="w.gpu_memory_gb").set_value(1).run()
    assert any(box.value.startswith(markdown_text("does not fit:")) and "of 1 GB per GPU" in box.value
               for box in at.error)
    at.number_input(key="w.gpu_memory_gb").set_value(80).run()
    assert any(box.value.startswith("Runs on 512 GPUs") for box in at.success)
