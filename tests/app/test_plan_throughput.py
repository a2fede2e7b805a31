"""AppTest: the Plan page's predicted MFU (issue 33): the "Predict MFU from the layout" toggle, the line beside the
MFU with the layout's prediction and the validated region's caveat, and the "Where the step goes" chart tab.

Expected numbers come from `engine.scenario_outputs` and the catalogue's formats, never from copied literals."""

import json

from shown_text import shown

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import default_scenario, with_overrides
from dashboard.core.step_time import PARTS
from dashboard.figures.throughput import TITLE, part_label
from dashboard.safe_text import markdown_text
from dashboard.ui.plan_controls import MFU_PREDICTED

STEP_TAB = "Where the step goes"


def _widget(at, key):
    for kind in ("slider", "toggle"):
        found = [w for w in getattr(at, kind) if w.key == key]
        if found:
            return found[0]
    raise LookupError(key)


def _metric(at, prefix):
    return next(m for m in at.metric if m.label.startswith(prefix))


def _captions(at) -> list[str]:
    return [shown(c.value) for c in at.caption]


def _banded(result, value) -> str:
    """"40.3 % (38.3–42.3 %)": the value and the range its validated error (a share of it) spans."""
    error = result["throughput"]["mfu_error"]
    low, high = (catalogue.text("mfu_used", value * factor) for factor in (1 - error, 1 + error))
    return f"{catalogue.text('mfu_used', value)} ({low.removesuffix(' %')}–{high})"


def _predicted_text(result) -> str:
    rates = result["throughput"]
    return (f"MFU {_banded(result, result['mfu_used'])} predicted from the layout "
            f"(step {catalogue.text('throughput.step_time_s', rates['step_time_s'])}, "
            f"{catalogue.text('throughput.tokens_per_s_per_gpu', rates['tokens_per_s_per_gpu'])} per GPU)")


def _entered_text(result) -> str:
    return (f"MFU {catalogue.text('mfu_used', result['mfu_used'])} entered; the layout predicts "
            f"{_banded(result, result['throughput']['mfu_as_input'])}")


def _shows(at, text: str) -> bool:
    """The line is under the tiles (with the caveat after it) and under the sidebar's MFU slider."""
    return sum(caption.startswith(text) for caption in _captions(at)) == 2


def test_the_toggle_switches_between_the_predicted_and_an_entered_mfu(app):
    at = app.run()
    assert not at.exception
    default = scenario_outputs(default_scenario())
    rates = default["throughput"]
    assert rates["mfu_source"] == "validated" and default["mfu_used"] == rates["mfu_as_input"]
    # Predicted: the toggle on, the slider disabled and showing the prediction on its 0.5 % steps, no mfu in the link.
    toggle, slider = _widget(at, MFU_PREDICTED), _widget(at, "w.mfu")
    assert toggle.value is True and slider.disabled
    start = round(rates["mfu_as_input"] * 100 / 0.5) * 0.5
    assert slider.value == start
    assert at.session_state["plan.scenario"].mfu is None and "mfu" not in at.query_params
    assert _shows(at, _predicted_text(default))
    assert _metric(at, "Total cost").value == catalogue.text("cost_total_usd", default["cost_total_usd"])

    # Off: the slider sets the MFU, starting from the prediction; the link carries it.
    toggle.set_value(False).run()
    assert not at.exception and not at.error
    assert not _widget(at, "w.mfu").disabled and _widget(at, "w.mfu").value == start
    plan = at.session_state["plan.scenario"]
    assert plan.mfu == start / 100 and at.query_params["mfu"] == f"{start / 100:g}"
    entered = scenario_outputs(plan)
    assert entered["throughput"]["mfu_as_input"] == rates["mfu_as_input"]  # the layout did not change
    assert _shows(at, _entered_text(entered))
    assert _metric(at, "Total cost").value == catalogue.text("cost_total_usd", entered["cost_total_usd"])

    _widget(at, "w.mfu").set_value(45.0).run()
    moved = scenario_outputs(with_overrides(default_scenario(), ["mfu=0.45"]))
    assert at.query_params["mfu"] == "0.45"
    assert _shows(at, _entered_text(moved))
    assert _metric(at, "Total cost").value == catalogue.text("cost_total_usd", moved["cost_total_usd"])

    # On again: the prediction prices the plan, and the link drops mfu.
    _widget(at, MFU_PREDICTED).set_value(True).run()
    assert not at.exception and not at.error
    assert at.session_state["plan.scenario"].mfu is None and "mfu" not in at.query_params
    assert _shows(at, _predicted_text(default))
    assert _metric(at, "Total cost").value == catalogue.text("cost_total_usd", default["cost_total_usd"])
    assert at.text_input(key="w.name").value == default_scenario().name  # the default's inputs again


def test_a_link_with_an_mfu_enters_it(app):
    app.query_params["mfu"] = "0.45"
    at = app.run()
    assert not at.exception
    assert _widget(at, MFU_PREDICTED).value is False and _widget(at, "w.mfu").value == 45.0
    result = scenario_outputs(with_overrides(default_scenario(), ["mfu=0.45"]))
    assert _shows(at, _entered_text(result))
    assert at.text_input(key="w.name").value.endswith("MFU 45 %")


def test_outside_the_validated_region_the_line_says_where(app):
    app.query_params["gpu_type"] = "b200"  # no Blackwell run was measured
    at = app.run()
    rates = scenario_outputs(with_overrides(default_scenario(), ["gpu_type=b200"]))["throughput"]
    assert not rates["validated"] and rates["region_notes"]
    caveat = ("Outside the validated region: " + "; ".join(rates["region_notes"])
              + " — see docs/throughput-validation.md")
    # Under the tiles, after the MFU line, in orange; the notes are escaped as plain text.
    (line,) = [c.value for c in at.caption if "Outside the validated region" in c.value]
    assert line.endswith(f":orange[:material/science: {markdown_text(caveat)}]")


def test_inside_the_validated_region_there_is_no_caveat(app):
    link = {"gpu_type": "a100", "total_params": "1.75e+11", "gpu_count": "1024"}
    for name, text in link.items():
        app.query_params[name] = text
    at = app.run()
    assert not at.exception
    scenario = with_overrides(default_scenario(), [f"{key}={value}" for key, value in link.items()])
    result = scenario_outputs(scenario)
    assert result["throughput"]["validated"]
    assert _shows(at, _predicted_text(result))
    assert not any("validated region" in caption for caption in _captions(at))


def test_a_custom_gpu_needs_an_entered_mfu(app):
    app.query_params.update({"gpu_type": "custom", "peak_tflops": "500", "gpu_memory_gb": "80", "mfu": "0.4"})
    at = app.run()
    assert _widget(at, MFU_PREDICTED).value is False
    _widget(at, MFU_PREDICTED).set_value(True).run()
    assert not at.exception
    # The step-time model has no bandwidths for a custom GPU: the prediction is not applied, and the page says why.
    assert at.session_state["plan.scenario"].mfu == 0.4 and at.query_params["mfu"] == "0.4"
    assert any(shown(e.value).startswith("Not applied (marked in the sidebar): MFU (%).") for e in at.error)
    assert any(c.startswith(":red[:material/error: Not applied: GPU type 'custom' needs MFU, or GPU memory "
                            "bandwidth") for c in _captions(at))
    result = scenario_outputs(at.session_state["plan.scenario"])
    assert _shows(at, f"MFU {catalogue.text('mfu_used', result['mfu_used'])} entered; the layout gives no prediction")


def _step_chart(at) -> dict:
    return next(spec for spec in (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
                if spec["layout"]["title"]["text"] == TITLE)


def test_the_where_the_step_goes_tab_draws_the_plan_s_step(app):
    at = app.run()
    at.session_state["plan.tabs.left"] = STEP_TAB
    at.run()
    assert not at.exception
    result = scenario_outputs(default_scenario())
    rates = result["throughput"]
    spec = _step_chart(at)
    bars = [trace for trace in spec["data"] if trace["type"] == "bar" and trace.get("yaxis") == "y"]
    assert {bar["name"]: bar["x"][0] for bar in bars if bar["x"][0]} == {
        part_label(part): rates[part] for part in PARTS if rates[part]}
    assert sum(bar["x"][0] for bar in bars) == rates["step_time_s"]
    assert any(a["text"] == f"this plan: {default_scenario().gpu_count:,} GPUs" for a in spec["layout"]["annotations"])
    caption = next(c for c in _captions(at) if c.startswith("Predicted by the step-time model"))
    assert f"its MFU within ± {catalogue.text('throughput.mfu_error', rates['mfu_error'])} of the prediction" in caption
    assert rates["validated"] and "inside the step-time model's validated region" in caption  # H100 is measured
    assert at.query_params["charts"] == "step,tst"  # the tab rides in the link


def test_a_link_opens_the_step_tab(app):
    app.query_params["charts"] = "step,tornado"
    at = app.run()
    assert not at.exception and not [w for w in at.warning if "charts" in w.value]
    assert _step_chart(at)["layout"]["title"]["subtitle"]["text"] == _predicted_text(
        scenario_outputs(default_scenario()))


def test_outside_every_validated_region_the_total_is_priced_at_the_published_runs(app):
    # 405B on 16,384 H100 (6,144 GPUs measured at most): priced at Llama 3 405B's published 38–43 %, said under
    # the tiles with the layout's prediction as a note and each number's evidence grade, quietly (a caption).
    link = {"total_params": "4.05e+11", "gpu_count": "16384"}
    app.query_params.update(link)
    at = app.run()
    assert not at.exception
    result = scenario_outputs(with_overrides(default_scenario(), [f"{key}={value}" for key, value in link.items()]))
    assert result["throughput"]["mfu_source"] == "published"
    assert result["mfu_used"] == (0.38 + 0.43) / 2
    assert _metric(at, "Total cost").value == catalogue.text("cost_total_usd", result["cost_total_usd"])
    (line,) = [c for c in _captions(at) if "from published runs" in c and "Evidence" in c]
    assert line.startswith(f"MFU {catalogue.text('mfu_used', 0.405)} (38–43 %) from published runs (Llama 3 405B), "
                           "as the plan lies outside every validated region; the layout's prediction, ")
    assert "Evidence — GPU-hours, wall-clock: published MFU · cost: published MFU, assumed prices" in line
    assert not [w for w in at.warning if "published runs" in w.value]  # a caption, not a warning
