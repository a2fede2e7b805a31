"""The full-programme switch on the default plan, worked from the engine's line items: the sentence the Plan page
should write beside the total, and the total it should show (the issue's $443k → $323k were at an earlier model's
predicted MFU, so the amounts follow whatever MFU prices the default now)."""

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.programme import PRESETS
from dashboard.core.scenario import Scenario, default_scenario
from dashboard.format import number


def full_programme_switch() -> tuple[str, str]:
    """(sentence, total tile text): the stages against the 1 × experiment and 0.05 × evaluation overheads they
    replace, which are 1.05 × the main run (its compute, rework and stalls)."""
    default = default_scenario()
    full = Scenario.model_validate({**default.to_json_dict(), **PRESETS["full programme"]})
    before, after = scenario_outputs(default), scenario_outputs(full)
    lines = before["cost_breakdown"]
    replaced = 1.05 * (lines["main_compute"] + lines["failure_rework"] + lines["checkpoint_stalls"])
    stages = after["cost_breakdown"]["programme_stages"]
    sentence = (f"The programme's stages ({number(stages, '$')}) replace the 1× experiment and 0.05× evaluation "
                f"overheads ({number(replaced, '$')}): total {number(stages - replaced, '$')}.")
    return sentence, catalogue.text("cost_total_usd", after["cost_total_usd"])
