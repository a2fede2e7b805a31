"""Browser: `streamlit run dashboard/app.py` from the repository root (as Streamlit's docs start apps) opens every page.

The server is the `streamlit` executable itself (not `python -m streamlit`), so the repository root is not on the
import path unless the entry script puts it there.
"""

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect
from served_app import free_port, served

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
STREAMLIT = ROOT / ".venv" / "bin" / "streamlit"
EXCEPTION = '[data-testid="stException"]'
NAV_LINK = '[data-testid="stSidebarNav"] a'
PAGE_TITLES = ("Plan", "Compare", "Retrospective", "Import usage", "Method & sources")


@pytest.fixture(scope="module")
def plain_start_url(tmp_path_factory):
    """`.venv/bin/streamlit run dashboard/app.py` in the repository root, on a free port of 127.0.0.1."""
    if not STREAMLIT.exists():
        pytest.fail(f"{STREAMLIT} is missing: install requirements.txt into .venv")
    store = tmp_path_factory.mktemp("store") / "scenarios.db"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PLANNER_STORE_URL"] = f"sqlite:///{store}"
    port = free_port()
    command = [str(STREAMLIT), "run", "dashboard/app.py", "--server.headless", "true",
               "--server.address", "127.0.0.1", "--server.port", str(port)]
    with served(command, port, ROOT, env) as url:
        yield url


def test_the_streamlit_executable_opens_every_page(page, plain_start_url, wait_for_app):
    page.goto(plain_start_url)
    wait_for_app(page)
    links = page.locator(NAV_LINK)
    expect(links).to_have_count(len(PAGE_TITLES))
    targets = {links.nth(index).inner_text().strip().splitlines()[-1]: links.nth(index).get_attribute("href")
               for index in range(links.count())}
    assert tuple(targets) == PAGE_TITLES
    for title, href in targets.items():
        page.goto(href if href.startswith("http") else plain_start_url + "/" + href.lstrip("/"))
        wait_for_app(page)
        expect(page.locator(EXCEPTION), f"{title} shows an exception box").to_have_count(0)
        expect(page.get_by_text("This app has encountered an error"), f"{title} failed").to_have_count(0)
        expect(page.get_by_text("ModuleNotFoundError"), f"{title} failed to import").to_have_count(0)
        expect(page.locator("h1").first, f"{title} has no title").to_be_visible()
