"""Text from a link, a file name or a scenario is shown as text on the Plan, Compare and Import pages.

AppTest hands back each element's markdown source. A payload is inert when no markdown construct in that source
is left unescaped: no `[text](url)` link or `![x](url)` image, no `<tag`, no bare `https://`, `www.` or `name@host`
that GFM would turn into a link (escaped or not), and no Streamlit `:colour[...]` directive. The browser test
(tests/browser/test_hostile_links_browser.py) checks the same payloads in Streamlit's real renderer.
"""

import json
import re

import pytest
from shown_text import shown

from dashboard.core.scenario import Scenario

PAYLOADS = {
    "link": "[Click here to re-login](https://evil.example/login)",
    "image": "![x](http://attacker/pixel.png)",
    "directive": ":red[Budget approved by finance]",
    "html": '<a href="https://evil.example">open</a>',
    "bare-url": "Log in at https://evil.example/x, www.evil.example or ops@evil.example",
}
LIVE_MARKUP = {
    "link or image": re.compile(r"(?<!\\)\[[^\]]*(?<!\\)\]\("),
    "html tag": re.compile(r"(?<!\\)<[A-Za-z/!]"),
    # GFM autolinks these even when escaped; safe_text puts a word joiner (U+2060) after ':' and '@'.
    "autolink": re.compile(r"https?\\?:\\?/|www\\?\.|\\?@(?!\u2060)"),
    "directive": re.compile(r"(?<!\\):[a-z]+(?:-background)?\["),
}
MARKDOWN_ELEMENTS = ("title", "header", "subheader", "markdown", "caption", "warning", "error", "info", "success")


def _sources(at) -> list[str]:
    return [element.value for kind in MARKDOWN_ELEMENTS for element in getattr(at, kind)]


def _live(source: str) -> list[str]:
    return [kind for kind, pattern in LIVE_MARKUP.items() if pattern.search(source)]


def _assert_shown_as_text(at, payload: str) -> None:
    assert not at.exception
    sources = _sources(at)
    showing = [source for source in sources if payload in shown(source)]
    assert showing, f"the payload is not shown at all: {sources}"
    assert {source: _live(source) for source in showing if _live(source)} == {}


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=list(PAYLOADS))
@pytest.mark.parametrize("where", ["name", "base.name", "parameter name", "rejected value"])
def test_link_text_on_the_plan_page_is_inert(app, payload, where):
    if where == "parameter name":
        app.query_params[payload] = "1"
    elif where == "rejected value":
        app.query_params["gpu_count"] = payload
    else:
        app.query_params[where] = payload
    _assert_shown_as_text(app.run(), payload)


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=list(PAYLOADS))
def test_an_uploaded_scenario_name_and_file_name_on_the_plan_page_are_inert(app, payload):
    at = app.run()
    text = json.dumps(Scenario(name=payload).to_json_dict()).encode()
    at.sidebar.file_uploader(key="plan.upload").set_value((f"{payload}.json", text, "application/json")).run()
    _assert_shown_as_text(at, f"Loaded {payload}.json: {payload}.")


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=list(PAYLOADS))
def test_a_rejected_upload_on_the_plan_page_is_inert(app, payload):
    at = app.run()
    bad = json.dumps({"gpu_type": payload}).encode()
    at.sidebar.file_uploader(key="plan.upload").set_value((f"{payload}.json", bad, "application/json")).run()
    _assert_shown_as_text(at, payload)


def _compare(app):
    return app.run().switch_page("app_pages/compare.py").run()


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=list(PAYLOADS))
def test_a_rejected_name_on_the_compare_page_is_inert(app, payload):
    at = _compare(app)
    at.sidebar.text_input(key="compare.save_name").set_value(payload)
    next(button for button in at.button if button.label == "Save").click().run()
    _assert_shown_as_text(at, payload)


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=list(PAYLOADS))
def test_a_rejected_import_on_the_compare_page_is_inert(app, payload):
    at = _compare(app)
    text = json.dumps(Scenario(name=payload).to_json_dict()).encode()
    at.sidebar.file_uploader(key="compare.upload.0").set_value((f"{payload}.json", text, "application/json")).run()
    _assert_shown_as_text(at, payload)


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=list(PAYLOADS))
def test_an_unreadable_upload_name_on_the_import_page_is_inert(app, payload):
    at = app.run().switch_page("app_pages/imports.py").run()
    at.radio(key="import_source").set_value("Upload a file").run()
    at.file_uploader(key="import_file").set_value((f"{payload}.csv", bytes(range(256)) * 8, "text/csv")).run()
    _assert_shown_as_text(at, payload)
