"""AppTest (issue 35, item 8): a Retrospective link's values the page cannot use are said, not dropped silently;
a link whose values all apply says nothing."""

import re

import pytest
from retro_page import open_retro

NONE = "(none)"




def _warnings(at) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]


def test_ignored_link_values_are_named(app):
    at = open_retro(app, {"retro.runs": NONE, "retro.teams": ["no-such-team", "data"], "retro.freq": "fortnight",
                     "retro.billing": "../../etc/passwd", "retro.view": "Spend"})
    assert not at.exception
    assert at.multiselect(key="retro.teams").value == ["data"]  # the valid value is used
    said = [w for w in _warnings(at) if "values that do not apply" in w]
    assert len(said) == 1, _warnings(at)
    assert "teams='no-such-team'" in said[0]
    assert "freq='fortnight'" in said[0]
    assert "billing='../../etc/passwd'" in said[0]
    assert "'data'" not in said[0] and "Spend" not in said[0]  # used values (a default one included) are not named


def test_a_long_ignored_value_is_cut_short(app):
    at = open_retro(app, {"retro.runs": NONE, "retro.teams": "x" * 10_000})
    said = next(w for w in _warnings(at) if "values that do not apply" in w)
    assert "(10,000 characters)" in said and len(said) < 400


@pytest.mark.parametrize("url", [
    {"retro.runs": NONE, "retro.teams": "data", "retro.dates": ["2025-05-01", "2025-05-31"]},
    {"retro.view": "Waste"},
    {},
])
def test_a_link_that_applies_says_nothing(app, url):
    at = open_retro(app, url)
    assert not at.exception
    assert not [w for w in _warnings(at) if "values that do not apply" in w]


def test_the_note_is_for_the_link_not_for_later_choices(app):
    at = open_retro(app, {"retro.runs": NONE, "retro.teams": "data"})
    at.multiselect(key="retro.teams").set_value(["research"]).run()
    assert not [w for w in _warnings(at) if "values that do not apply" in w]
