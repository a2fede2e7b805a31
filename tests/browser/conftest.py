"""Browser fixtures: the app served by `streamlit run` on a free port, and Debian's Chromium driven by Playwright."""

import os
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright
from served_app import free_port, served, streamlit_command

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app.py"
PYTHON = ROOT / ".venv" / "bin" / "python"
CHROMIUM = Path("/usr/bin/chromium")
RUN_TIMEOUT_MS = 60_000
SETTLE_MS = 300
IDLE_APP = '[data-testid="stApp"][data-test-script-state="notRunning"]'
LOADING_ELEMENT = '[data-testid="stSkeleton"]'  # shown while an element's code (plotly's is large) is still loading
# A new session's first Plan run draws the tiles and this line; the whole page follows (dashboard.ui.first_paint).
FIRST_PAINT = "text=Loading the controls"

# Assertions retry for up to 30 s: with the rest of the suite running, a rerun on 2 cores can take seconds.
expect.set_options(timeout=30_000)


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    """Start `python -m streamlit run dashboard/app.py` on a free port, yield its base URL, stop it after the session.

    The app gets its own empty scenario store in a temporary folder.
    """
    store = tmp_path_factory.mktemp("store") / "scenarios.db"
    env = {**os.environ, "PLANNER_STORE_URL": f"sqlite:///{store}"}
    port = free_port()
    no_secrets = store.parent / "secrets.toml"  # sign-in off, whatever .streamlit/secrets.toml this machine has
    no_secrets.write_text("", encoding="utf-8")
    command = [*streamlit_command(APP, port, PYTHON), "--secrets.files", str(no_secrets)]
    with served(command, port, ROOT, env) as url:
        yield url


def pytest_collection_modifyitems(items):
    """Skip every `browser` test, naming what to install, when Chromium is missing (before any server starts)."""
    if CHROMIUM.exists():
        return
    skip = pytest.mark.skip(reason=f"BROWSER TESTS SKIPPED: {CHROMIUM} is missing. Install Debian's chromium "
                                   "(`apt-get install chromium`; `make test` does it when run as root).")
    for item in items:
        if item.get_closest_marker("browser"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium with the sandbox, GPU and background networking off."""
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser):
    """A fresh browser context and page for each test."""
    context = browser.new_context(viewport={"width": 1600, "height": 1200})
    context.set_default_timeout(RUN_TIMEOUT_MS)
    yield context.new_page()
    context.close()


def _wait_for_app(page: Page) -> None:
    """Wait until Streamlit's script run has finished (its own e2e convention) and every element has loaded."""
    page.wait_for_timeout(SETTLE_MS)  # gives a rerun triggered just before the time to start
    page.wait_for_selector(IDLE_APP, state="attached", timeout=RUN_TIMEOUT_MS)
    page.wait_for_selector(FIRST_PAINT, state="detached", timeout=RUN_TIMEOUT_MS)
    page.wait_for_selector(IDLE_APP, state="attached", timeout=RUN_TIMEOUT_MS)
    page.wait_for_selector(LOADING_ELEMENT, state="detached", timeout=RUN_TIMEOUT_MS)
    page.wait_for_timeout(SETTLE_MS)


@pytest.fixture
def wait_for_app():
    """The `wait_for_app(page)` helper (a fixture, as tests cannot import conftest under importlib mode)."""
    return _wait_for_app


@pytest.fixture(params=[1440, 800], ids=["1440px", "800px"])
def sized_page(request, browser):
    """A page at 1,440 and at 800 px wide (the issue's widths); yields (width, page)."""
    context = browser.new_context(viewport={"width": request.param, "height": 1000})
    context.set_default_timeout(60_000)
    yield request.param, context.new_page()
    context.close()
