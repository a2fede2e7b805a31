"""AppTest fixtures (tests/support/app_fixtures.py): the entry point by absolute path and clean caches per test;
`unexpected_warnings`, the Plan page's warnings but the plan's own feasibility warnings."""

import pytest
from app_fixtures import APP, app, clear_caches, no_sign_in, store_url  # noqa: F401 - fixtures pytest finds by name

from dashboard.core.engine import scenario_outputs
from dashboard.safe_text import markdown_text


@pytest.fixture
def unexpected_warnings():
    """A function of a run Plan page: its warning boxes other than the plan's own feasibility warnings (the
    "Can it run?" panel's, which the engine gives for the plan: a predicted MFU below the published runs, say), so
    a test can say that a link or a control warned of nothing else."""
    def unexpected(at) -> list[str]:
        plan = at.session_state["plan.scenario"]
        expected = {markdown_text(sentence) for sentence in scenario_outputs(plan)["feasibility_warnings"]}
        return [box.value for box in at.warning if box.value not in expected]
    return unexpected
