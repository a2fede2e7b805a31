"""AppTest: a link with a repeated, loosely typed or unphysical parameter opens the Plan page on the default value
of that key, with a warning naming it (never a silent pick of one value, never a 1.1-billion-checkpoint plan)."""

import json

import pytest
from shown_text import shown

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import default_scenario


@pytest.mark.parametrize(("params", "warning"), [
    ({"gpu_count": ["8", "4096"]}, "Link: ignored 'gpu_count': given 2 times in the address; keep one"),
    ({"gpu_count": "true"}, "Link: ignored gpu_count = True: Input should be a valid integer"),
    ({"checkpoint_async": "yes"}, "Link: ignored checkpoint_async = 'yes': Input should be a valid boolean"),
    ({"checkpoint_interval_min": "0.001"},
     "Link: ignored checkpoint_interval_min = 0.001 is out of range (allowed: ≥ 1 and ≤ 100000)"),
    ({"mfu": "1e-300"}, "Link: ignored mfu = 1e-300 is out of range (allowed: ≥ 0.01 and ≤ 1)"),
])
def test_a_bad_link_parameter_falls_back_with_a_warning(app, params, warning):
    for name, value in params.items():
        app.query_params[name] = value
    at = app.run()
    assert not at.exception
    warnings = [shown(element.value) for element in at.warning]
    assert any(text.startswith(warning) for text in warnings), warnings
    total = next(metric for metric in at.metric if metric.label == "Total cost").value
    assert total == catalogue.text("cost_total_usd", scenario_outputs(default_scenario())["cost_total_usd"])


def test_a_link_of_twenty_ladders_of_a_hundred_runs_is_refused_with_its_size_named(app):
    # The probe of issue 53: a 1,233-character link whose programme asks the engine for 2,000 priced runs.
    app.query_params["programme"] = json.dumps([{"runs": 100, "kind": "scaling_ladder"}] * 20, separators=(",", ":"))
    app.query_params["mfu"] = "0.35"
    at = app.run()
    assert not at.exception
    warnings = [shown(element.value) for element in at.warning]
    assert any(text.startswith("Link: ignored programme = ") and "20 × 'Scaling ladder' of 100 runs = 2,000 priced "
               "runs; at most 200 a programme (PLANNER_PROGRAMME_MAX_RUNS)" in text for text in warnings), warnings
    plan = at.session_state["plan.scenario"]
    assert plan.programme == () and plan.mfu == 0.35  # the rest of the link applies
