"""The sign-in browser tests' app: served with a secrets.toml of its own whose `[auth]` names one or more OpenID
Connect providers (`oidc-provider-mock` servers on loopback ports), and a user's way through a provider's form."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, Page, expect
from served_app import free_port, served, streamlit_command

from dashboard.safe_text import WORD_JOINER

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app.py"
PYTHON = ROOT / ".venv" / "bin" / "python"
COOKIE_SECRET = "a-test-cookie-secret-that-is-long-enough-0123456789"
PROVIDER = """
[auth.{name}]
client_id = "planner"
client_secret = "planner-secret"
server_metadata_url = "{url}/.well-known/openid-configuration"
client_kwargs = {{ scope = "openid email profile" }}
"""


def secrets_toml(app_url: str, providers: dict[str, str]) -> str:
    """An `[auth]` section for the app at ``app_url`` with one `[auth.<name>]` per provider name → provider URL."""
    head = f'[auth]\nredirect_uri = "{app_url}/oauth2callback"\ncookie_secret = "{COOKIE_SECRET}"\n'
    return head + "".join(PROVIDER.format(name=name, url=url) for name, url in providers.items())


@contextmanager
def served_with_sign_in(folder: Path, providers: dict[str, str], **env: str) -> Iterator[str]:
    """The app with sign-in on, its secrets in ``folder`` and ``env`` added; yields its URL."""
    port = free_port()
    secrets = folder / "secrets.toml"
    secrets.write_text(secrets_toml(f"http://127.0.0.1:{port}", providers), encoding="utf-8")
    server_env = {**os.environ, "PLANNER_WARM_UP": "0", "AUTHLIB_INSECURE_TRANSPORT": "1", **env}  # mocks speak http
    command = [*streamlit_command(APP, port, PYTHON), "--secrets.files", str(secrets)]
    with served(command, port, ROOT, server_env) as url:
        yield url


def new_page(browser: Browser) -> Page:
    context = browser.new_context(viewport={"width": 1600, "height": 1200})
    context.set_default_timeout(60_000)
    return context.new_page()


def sign_in(page: Page, app_url: str, button: str, subject: str, wait_for_app) -> str:
    """Sign in through the provider behind ``button`` as ``subject``; the sidebar's "Signed in as" line as read."""
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_role("button", name=button).click()
    page.get_by_placeholder("sub").fill(subject)  # the provider's own authorization form
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{app_url}/**")
    wait_for_app(page)
    caption = page.locator('[data-testid="stSidebar"] p', has_text="Signed in as")
    expect(caption).to_be_visible()
    return caption.inner_text().replace(WORD_JOINER, "")
