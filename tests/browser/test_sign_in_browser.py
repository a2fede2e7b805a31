"""Browser: sign-in against a real OpenID Connect provider served on a loopback port (`oidc-provider-mock`).

The app is served with a secrets.toml of its own whose `[auth]` points at the provider. Alice signs in and saves the
Plan page's scenario; Bob, in another browser context, sees it on Compare with Alice's e-mail as its owner, fails
to delete it with the refusal message, and signs out. Names from the provider are shown as text.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect
from signed_in_app import new_page, served_with_sign_in, sign_in

from dashboard.core.scenario import default_scenario
from dashboard.safe_text import WORD_JOINER

oidc_provider_mock = pytest.importorskip(
    "oidc_provider_mock", reason="install requirements-dev.txt (oidc-provider-mock) for the sign-in browser test")

pytestmark = pytest.mark.browser

EXCEPTION = '[data-testid="stException"]'
ALICE = oidc_provider_mock.User(sub="alice-subject-1", claims={
    "email": "alice@example.org", "email_verified": True, "name": "Alice **<b>Bold</b>** [link](https://x.test)"})
BOB = oidc_provider_mock.User(sub="bob-subject-2", claims={"email": "bob@example.org", "name": "Bob"})


@pytest.fixture(scope="module")
def provider_url():
    """An OpenID Connect provider on a free loopback port, knowing Alice and Bob."""
    with oidc_provider_mock.run_server_in_thread(user_claims=[ALICE, BOB]) as server:
        yield f"http://localhost:{server.server_port}"


@pytest.fixture(scope="module")
def signed_app_url(provider_url, tmp_path_factory):
    """The app with sign-in on: its own secrets.toml (via --secrets.files) and its own empty store."""
    folder = tmp_path_factory.mktemp("signed-app")
    with served_with_sign_in(folder, {"mock": provider_url}, PLANNER_STORE_URL=f"sqlite:///{folder / 'scenarios.db'}",
                             PLANNER_ADMINS="nobody@example.org") as url:
        yield url


def _expect_shown(page: Page, text: str) -> None:
    """`text` appears on the page as the reader sees it (safe_text's invisible word joiners removed)."""
    body = page.locator("body")
    expect(body).to_contain_text(max(re.split(r"[:@]", text), key=len).strip())  # waits on a part with no joiner
    assert text in body.inner_text().replace(WORD_JOINER, "")


def _sign_in(page: Page, app_url: str, user, wait_for_app) -> None:
    page.goto(app_url)
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Sign in to the pretraining cost planner")).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)
    # Shown literally (safe_text adds invisible word joiners after ':' and '@', so nothing becomes a link).
    shown = sign_in(page, app_url, "Sign in with Mock", user.sub, wait_for_app)
    assert shown == f"Signed in as {user.claims['name']} · {user.claims['email']}"


def test_alice_saves_bob_sees_her_scenario_cannot_delete_it_and_signs_out(browser, signed_app_url, wait_for_app):
    alice = new_page(browser)
    _sign_in(alice, signed_app_url, ALICE, wait_for_app)
    # Alice's name is text: none of its markdown, HTML or link was rendered.
    assert alice.locator('[data-testid="stSidebar"] b, [data-testid="stSidebar"] a[href="https://x.test"]').count() == 0
    name = default_scenario().name
    alice.get_by_role("button", name="Save for comparison").click()
    wait_for_app(alice)
    _expect_shown(alice, f"Saved “{name}” for comparison: the Compare page shows it.")

    bob = new_page(browser)
    _sign_in(bob, signed_app_url, BOB, wait_for_app)
    bob.goto(f"{signed_app_url}/compare")
    wait_for_app(bob)
    bob.get_by_text("Saved scenarios (1)").click()
    wait_for_app(bob)
    _expect_shown(bob, "Saved by alice@example.org: you can open, duplicate and compare it")
    bob.get_by_role("button", name="Delete").click()
    wait_for_app(bob)
    _expect_shown(bob, f"Not deleted: you may not delete '{name}': it belongs to alice@example.org, and only its "
                       "owner or an administrator (PLANNER_ADMINS) may rename, overwrite or delete it")
    expect(bob.get_by_text("Saved scenarios (1)")).to_be_visible()
    expect(bob.locator(EXCEPTION)).to_have_count(0)
    # Nothing of Alice beyond her e-mail reaches Bob's page: not her name, not her subject.
    body = bob.locator("body").inner_text()
    assert "Alice" not in body and ALICE.sub not in body

    bob.get_by_role("button", name="Sign out").click()
    end_session = bob.get_by_role("button", name="End session")  # the provider's own page, when it offers one
    end_session.or_(bob.get_by_role("heading", name="Sign in to the pretraining cost planner")).first.wait_for()
    if end_session.count():
        end_session.click()
    bob.wait_for_url(f"{signed_app_url}/**")
    wait_for_app(bob)
    expect(bob.get_by_role("heading", name="Sign in to the pretraining cost planner")).to_be_visible()
    expect(bob.locator('[data-testid="stSidebarNav"]')).to_have_count(0)  # no page links before signing in
    for page in (alice, bob):
        page.context.close()
