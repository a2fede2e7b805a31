"""Browser, issue 53: two OpenID Connect providers (two `oidc-provider-mock` servers on loopback ports, so two
issuers) give two users the same subject. Alice signs in with the first and saves a plan; Mallory signs in with
the second under Alice's subject and an administrator's e-mail that the provider does not mark verified: she is
not an administrator, sees the plan as Alice's, and her delete is refused. The store records Alice's issuer."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from signed_in_app import new_page, served_with_sign_in, sign_in

from dashboard.core.scenario import default_scenario
from dashboard.safe_text import WORD_JOINER
from dashboard.store.scenario_store import ScenarioStore

oidc_provider_mock = pytest.importorskip(
    "oidc_provider_mock", reason="install requirements-dev.txt (oidc-provider-mock) for the sign-in browser test")

pytestmark = pytest.mark.browser

EXCEPTION = '[data-testid="stException"]'
SUBJECT = "alice-sub"  # the same subject at both providers
ALICE = oidc_provider_mock.User(sub=SUBJECT, claims={"email": "alice@example.org", "email_verified": True,
                                                     "name": "Alice"})
MALLORY = oidc_provider_mock.User(sub=SUBJECT, claims={"email": "admin@example.org", "name": "Mallory"})  # unverified


@pytest.fixture(scope="module")
def providers():
    """Two providers on free loopback ports: their issuers are their own addresses."""
    with (oidc_provider_mock.run_server_in_thread(user_claims=[ALICE]) as first,
          oidc_provider_mock.run_server_in_thread(user_claims=[MALLORY]) as second):
        yield f"http://localhost:{first.server_port}", f"http://localhost:{second.server_port}"


@pytest.fixture(scope="module")
def two_provider_app(providers, tmp_path_factory):
    """The app with both providers configured, its own store, and the unverified e-mail listed as administrator."""
    folder = tmp_path_factory.mktemp("two-providers")
    store_url = f"sqlite:///{folder / 'scenarios.db'}"
    with served_with_sign_in(folder, {"first": providers[0], "second": providers[1]}, PLANNER_STORE_URL=store_url,
                             PLANNER_ADMINS="admin@example.org") as url:
        yield url, store_url


def _text(page: Page) -> str:
    return page.locator("body").inner_text().replace(WORD_JOINER, "")


def test_the_same_subject_at_a_second_provider_is_another_user(browser, providers, two_provider_app, wait_for_app):
    app_url, store_url = two_provider_app
    alice = new_page(browser)
    shown = sign_in(alice, app_url, "Sign in with First", ALICE.sub, wait_for_app)
    assert shown == "Signed in as Alice · alice@example.org"
    name = default_scenario().name
    alice.get_by_role("button", name="Save for comparison").click()
    wait_for_app(alice)
    expect(alice.locator("body")).to_contain_text("for comparison")
    assert f"Saved “{name}” for comparison" in _text(alice)

    mallory = new_page(browser)
    # An e-mail the provider did not mark verified makes nobody an administrator, even listed in PLANNER_ADMINS.
    assert sign_in(mallory, app_url, "Sign in with Second", MALLORY.sub, wait_for_app) == (
        "Signed in as Mallory · admin@example.org")
    mallory.goto(f"{app_url}/compare")
    wait_for_app(mallory)
    mallory.get_by_text("Saved scenarios (1)").click()
    wait_for_app(mallory)
    expect(mallory.locator("body")).to_contain_text("you can open, duplicate and compare it")
    assert "Saved by alice@example.org: you can open, duplicate and compare it" in _text(mallory)
    expect(mallory.get_by_role("button", name="Adopt")).to_have_count(0)  # an administrator's button
    mallory.get_by_role("button", name="Delete").click()
    wait_for_app(mallory)
    expect(mallory.locator("body")).to_contain_text("only its owner or an administrator")
    assert (f"Not deleted: you may not delete '{name}': it belongs to alice@example.org, and only its owner or an "
            "administrator (PLANNER_ADMINS) may rename, overwrite or delete it") in _text(mallory)
    expect(mallory.locator(EXCEPTION)).to_have_count(0)

    with ScenarioStore(store_url) as store:
        (entry,) = store.entries()
        assert (entry.name, entry.owner_issuer, entry.owner_subject, entry.owner_email) == (
            name, providers[0], SUBJECT, "alice@example.org")
        assert [(line.action, line.actor_issuer, line.actor_email) for line in store.audit_trail()] == [
            ("save", providers[0], "alice@example.org")]
    for page in (alice, mallory):
        page.context.close()
