"""The Plan page in Chromium against the reference page served like the planner (`bench.tuned_reference_app`):
a new session until its first tile shows, and a slider keypress until the first tile changes.

Both apps are served by `streamlit run` (`bench.served`) and driven by Playwright with Debian's Chromium. Times
are taken inside the page (`performance.now()`), so Playwright's round trips are not in them: a keydown listener
notes the keypress, a MutationObserver the first change of the first `stMetricValue`. The pages' samples alternate
so that a noisy neighbour slows both alike; figures are medians. Both figures come from one run of the servers.
Skipped without Chromium.
"""

from __future__ import annotations

import statistics
import time
from contextlib import ExitStack
from functools import cache
from pathlib import Path

from bench.harness import Measurement, Skipped
from bench.served import ROOT, serve

APPS = {"plan": ROOT / "dashboard" / "app.py", "reference": ROOT / "bench" / "tuned_reference_app.py"}
CHROMIUM = Path("/usr/bin/chromium")
PRESSES = 15
SESSIONS = 5
TIMEOUT_MS = 60_000
SETTLE_S = 8.0  # the planner's start-up thread (`dashboard.ui.warm`) ends within this on this machine
IDLE_APP = '[data-testid="stApp"][data-test-script-state="notRunning"]'
METRIC = '[data-testid="stMetricValue"]'
SLIDER = '[data-testid="stSlider"]'
# The slider each keypress moves (15 steps from the default), and the address it is moved at: the planner with an
# entered MFU (with the MFU predicted, the default, its slider is disabled).
PRESSED = {"plan": "MFU (%)", "reference": "Frequency"}
PRESSED_QUERY = {"plan": "?mfu=0.4", "reference": ""}

# Notes the time of the first stMetricValue (window.__firstTile) and of every change of its text after a keydown.
WATCH = """
(() => {
  window.__firstTile = null; window.__keyAt = null; window.__tileAt = null;
  let shown = null;
  document.addEventListener('keydown', () => { window.__keyAt = performance.now(); window.__tileAt = null; }, true);
  new MutationObserver(() => {
    const tile = document.querySelector('[data-testid="stMetricValue"]');
    if (!tile) return;
    if (window.__firstTile === null) window.__firstTile = performance.now();
    const text = tile.innerText;
    if (shown !== null && text !== shown && window.__keyAt !== null && window.__tileAt === null) {
      window.__tileAt = performance.now();
    }
    shown = text;
  }).observe(document, {subtree: true, childList: true, characterData: true});
})();
"""


def _first_tile_ms(browser, url: str) -> float:
    """A new browser session: milliseconds from navigation start to the first tile on screen."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        context.add_init_script(WATCH)
        page = context.new_page()
        page.goto(url)
        page.wait_for_function("window.__firstTile !== null", timeout=TIMEOUT_MS)
        return float(page.evaluate("window.__firstTile"))
    finally:
        context.close()


def _ready_page(browser, url: str, slider_label: str):
    """A new session with the slider labelled `slider_label` focused. The slider is named, not taken as the first
    one: the Plan page's first slider in the browser was not always the same (once the GPU count, whose log scale
    ends eight presses above its default, so the ninth press changed nothing and `make bench` timed out)."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    context.add_init_script(WATCH)
    page = context.new_page()
    focus_slider(page, url, slider_label)
    return context, page


def focus_slider(page, url: str, slider_label: str) -> None:
    """Open `url` in `page` (its context with `WATCH`) and focus the slider labelled `slider_label` once the page is
    drawn and idle (`bench.keypress_profile` opens its pages so)."""
    page.goto(url)
    page.wait_for_selector(METRIC, timeout=TIMEOUT_MS)
    page.wait_for_selector(IDLE_APP, state="attached", timeout=TIMEOUT_MS)
    slider = page.locator(SLIDER).filter(has_text=slider_label).first
    slider.wait_for(timeout=TIMEOUT_MS)  # the planner's sidebar comes with the run after its first paint
    page.wait_for_selector(IDLE_APP, state="attached", timeout=TIMEOUT_MS)
    slider.get_by_role("slider").first.focus()


def _keypress_ms(page) -> float:
    """One ArrowRight on the focused slider: milliseconds until the first tile's text changes."""
    page.keyboard.press("ArrowRight")
    page.wait_for_function("window.__tileAt !== null", timeout=TIMEOUT_MS)
    elapsed = float(page.evaluate("window.__tileAt - window.__keyAt"))
    page.wait_for_selector(IDLE_APP, state="attached", timeout=TIMEOUT_MS)
    page.wait_for_timeout(200)
    return elapsed


@cache
def _figures() -> dict[str, dict[str, float]]:
    """Medians in ms per app: "first" (a new session on a running server) and "press" (a keypress)."""
    if not CHROMIUM.exists():
        raise Skipped(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with ExitStack() as stack:
        urls = {name: stack.enter_context(serve(app)).url for name, app in APPS.items()}
        playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=["--no-sandbox", "--disable-gpu",
                                                   "--disable-background-networking"])
        stack.callback(browser.close)
        for url in urls.values():
            _first_tile_ms(browser, url)  # sets off each server's start-up work
        time.sleep(SETTLE_S)
        first: dict[str, list[float]] = {name: [] for name in urls}
        for _ in range(SESSIONS):
            for name, url in urls.items():
                first[name].append(_first_tile_ms(browser, url))
        pages = {name: _ready_page(browser, url + PRESSED_QUERY[name], PRESSED[name]) for name, url in urls.items()}
        presses: dict[str, list[float]] = {name: [] for name in urls}
        for _ in range(PRESSES):
            for name, (_, page) in pages.items():
                presses[name].append(_keypress_ms(page))
        for context, _ in pages.values():
            context.close()
    return {name: {"first": statistics.median(first[name]), "press": statistics.median(presses[name])}
            for name in APPS}


def first_tile() -> Measurement:
    figures = _figures()
    return Measurement(figures["plan"]["first"], figures["reference"]["first"],
                       f"median of {SESSIONS} new sessions each, on running servers")


def keypress() -> Measurement:
    figures = _figures()
    return Measurement(figures["plan"]["press"], figures["reference"]["press"],
                       f"median of {PRESSES} ArrowRight presses each")
