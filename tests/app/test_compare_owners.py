"""AppTest: owners and history on the Compare page, the refusal message, adoption, and the sign-in page.

The acting identity is mocked through `dashboard.ui.identity` (the one module that reads `st.user`)."""

from __future__ import annotations

import pytest
from shown_text import shown

from dashboard.core.scenario import Scenario
from dashboard.identity import LOCAL, Identity
from dashboard.safe_text import markdown_text
from dashboard.store.scenario_store import ScenarioStore
from dashboard.ui import identity

PAGE = "app_pages/compare.py"
ISSUER = "https://sso.example.org"
A = Identity("subject-a", "a@example.org", issuer=ISSUER)
B = Identity("subject-b", "b@example.org", issuer=ISSUER)
ADMIN = Identity("subject-admin", "boss@example.org", admin=True, issuer=ISSUER)
READ_PROVIDERS = identity.providers  # the real one, before the autouse no_sign_in fixture replaces it


@pytest.fixture
def acting(monkeypatch):
    """Act as the given identity (None: signed out) with sign-in on, as if `st.user` said so."""
    def act(who: Identity | None, name: str | None = None) -> None:
        monkeypatch.setattr(identity, "providers", lambda: ["mock"])
        monkeypatch.setattr(identity, "current", lambda: who)
        monkeypatch.setattr(identity, "display_name", lambda: name)
    return act


def _compare(app):
    return app.run().switch_page(PAGE).run()


def _button(at, label):
    return next(b for b in at.button if b.label == label)


def _frame(at, column):
    return next(frame.value for frame in at.dataframe if column in frame.value.columns)


def _store_with_two(store_url) -> None:
    with ScenarioStore(store_url) as store:
        store.save("Alice plan", Scenario(mfu=0.3), actor=A)
        store.save("Old plan", Scenario(mfu=0.2))  # saved before sign-in: no owner


def _page_text(at) -> str:
    parts = [element.value for element in (*at.markdown, *at.caption, *at.error, *at.success, *at.info)]
    parts += [str(frame.value.to_dict()) for frame in at.dataframe]
    return " ".join(str(part) for part in parts)


def test_the_saved_list_shows_each_owner_by_email_only(app, store_url, acting):
    _store_with_two(store_url)
    acting(B)
    at = _compare(app)
    assert not at.exception
    saved = _frame(at, "Owner")
    assert dict(zip(saved["Scenario"], saved["Owner"], strict=True)) == {
        "Alice plan": "a@example.org", "Old plan": "(no owner)"}
    assert "subject-a" not in _page_text(at)
    caption = next(c.value for c in at.caption if "Saved by" in c.value)
    assert shown(caption) == ("Saved by a@example.org: you can open, duplicate and compare it; only its owner or an "
                              "administrator can rename, overwrite or delete it.")


def test_the_history_lists_who_did_what(app, store_url, acting):
    with ScenarioStore(store_url) as store:
        store.save("Plan", Scenario(mfu=0.3), actor=A)
        store.rename("Plan", "Plan v2", actor=A)
        store.save("Plan v2", Scenario(mfu=0.4), overwrite=True, actor=ADMIN)
    acting(B)
    at = _compare(app)
    history = _frame(at, "Who")
    assert list(history["Who"]) == ["boss@example.org", "a@example.org", "a@example.org"]  # newest first
    assert list(history["What"])[1:] == ["renamed", "saved"]
    assert history["What"].iloc[0].startswith("overwrote")
    assert list(history["Before"])[1] == "was “Plan”"
    assert any("History of" in shown(element.value) for element in at.markdown)


def test_deleting_someone_elses_scenario_is_refused_with_the_reason(app, store_url, acting):
    _store_with_two(store_url)
    acting(B)
    at = _compare(app)
    at.selectbox(key="compare.managed").set_value("Alice plan").run()
    _button(at, "Delete").click().run()
    assert not at.exception
    assert shown(at.error[0].value) == (
        "Not deleted: you may not delete 'Alice plan': it belongs to a@example.org, and only its owner or an "
        "administrator (PLANNER_ADMINS) may rename, overwrite or delete it; nothing was changed. Duplicate it to "
        "change a copy of your own.")
    with ScenarioStore(store_url) as store:
        assert store.names() == ["Alice plan", "Old plan"]
        assert [entry.action for entry in store.audit_trail()] == ["save", "save"]


def test_renaming_is_refused_but_duplicating_makes_a_copy_of_ones_own(app, store_url, acting):
    _store_with_two(store_url)
    acting(B)
    at = _compare(app)
    at.selectbox(key="compare.managed").set_value("Alice plan").run()
    at.text_input(key="compare.new_name").set_value("Bob plan").run()
    _button(at, "Rename").click().run()
    assert shown(at.error[0].value).startswith("Not renamed: you may not rename 'Alice plan': it belongs to "
                                               "a@example.org")
    _button(at, "Duplicate").click().run()
    assert shown(at.success[0].value) == "Saved a copy of “Alice plan” as “Bob plan”."
    with ScenarioStore(store_url) as store:
        owners = {entry.name: entry.owner for entry in store.entries()}
    assert owners == {"Alice plan": "a@example.org", "Bob plan": "b@example.org", "Old plan": "(no owner)"}


def test_an_administrator_adopts_a_scenario_without_owner(app, store_url, acting):
    _store_with_two(store_url)
    acting(B)
    at = _compare(app)
    assert not any(button.label == "Adopt" for button in at.button)  # not an administrator
    acting(ADMIN)
    at.selectbox(key="compare.managed").set_value("Old plan").run()
    _button(at, "Adopt").click().run()
    assert shown(at.success[0].value) == "“Old plan” is now yours."
    with ScenarioStore(store_url) as store:
        assert {entry.name: entry.owner for entry in store.entries()}["Old plan"] == "boss@example.org"


def test_without_sign_in_the_local_user_changes_ownerless_scenarios_as_before(app, store_url):
    _store_with_two(store_url)
    assert identity.current() is LOCAL  # no [auth] in the test's secrets
    at = _compare(app)
    at.selectbox(key="compare.managed").set_value("Old plan").run()
    _button(at, "Delete").click().run()
    assert shown(at.success[0].value) == "Deleted “Old plan”."
    at.selectbox(key="compare.managed").set_value("Alice plan").run()
    _button(at, "Delete").click().run()
    assert "it belongs to a@example.org" in shown(at.error[0].value)


def test_signed_out_users_see_the_sign_in_page_only(app, acting):
    acting(None)
    at = app.run()
    assert not at.exception
    assert [title.value for title in at.title] == ["Sign in to the pretraining cost planner"]
    assert [button.label for button in at.button] == ["Sign in with Mock"]
    assert not at.sidebar.button


def test_signed_out_actions_are_refused(monkeypatch):
    monkeypatch.setattr(identity, "current", lambda: None)
    with pytest.raises(Exception, match="you are signed out: sign in again"):
        identity.actor()


def test_the_signed_in_user_is_shown_as_text_with_a_sign_out(app, acting):
    acting(A, name="Alice **bold** <b>x</b> [link](https://x.test)")
    at = app.switch_page("app_pages/method.py").run()  # every page has it; this one draws fastest
    assert not at.exception
    caption = at.sidebar.caption[0].value
    assert caption == "Signed in as " + markdown_text("Alice **bold** <b>x</b> [link](https://x.test)") + " · " + \
        markdown_text("a@example.org")
    assert [button.label for button in at.sidebar.button if button.label == "Sign out"] == ["Sign out"]
    acting(ADMIN)
    assert at.run().sidebar.caption[0].value.endswith("(administrator)")


class _Secrets(dict):
    def load_if_toml_exists(self) -> bool:
        return bool(self)


@pytest.mark.parametrize("auth, expected", [
    (None, []),
    ({"redirect_uri": "x", "cookie_secret": "y"}, []),
    ({"client_id": "a", "client_secret": "b", "server_metadata_url": "c"}, ["default"]),
    ({"google": {"client_id": "a", "client_secret": "b", "server_metadata_url": "c"},
      "microsoft": {"client_id": "a", "client_secret": "b", "server_metadata_url": "c"},
      "half": {"client_id": "a"}}, ["google", "microsoft"]),
])
def test_providers_are_read_from_the_auth_section(monkeypatch, auth, expected):
    monkeypatch.setattr(identity, "providers", READ_PROVIDERS)  # not no_sign_in's stand-in: read the secrets
    monkeypatch.setattr(identity.st, "secrets", _Secrets({} if auth is None else {"auth": auth}))
    assert identity.providers() == expected
    assert identity.sign_in_configured() == bool(expected)
    if not expected:
        assert identity.current() is LOCAL


ISS_A, ISS_B = "https://idp-a.example.org", "https://idp-b.example.com"


@pytest.mark.parametrize("claims, admins, expected", [
    # A user is the token's issuer and subject; the same subject from two providers is two users.
    ({"iss": ISS_A, "sub": "alice-sub", "email": "a@example.org"}, "", Identity("alice-sub", "a@example.org",
                                                                                 issuer=ISS_A)),
    ({"iss": ISS_B, "sub": "alice-sub", "email": "m@example.com"}, "", Identity("alice-sub", "m@example.com",
                                                                                 issuer=ISS_B)),
    # No `iss` in the token: the configured provider's name stands for it.
    ({"sub": "alice-sub", "provider": "mock"}, "", Identity("alice-sub", None, issuer="mock")),
    # An administrator's e-mail counts only when the provider says it is verified.
    ({"iss": ISS_A, "sub": "x", "email": "admin@example.org"}, "admin@example.org",
     Identity("x", "admin@example.org", issuer=ISS_A)),
    ({"iss": ISS_A, "sub": "x", "email": "admin@example.org", "email_verified": False}, "admin@example.org",
     Identity("x", "admin@example.org", issuer=ISS_A)),
    ({"iss": ISS_A, "sub": "x", "email": "admin@example.org", "email_verified": "true"}, "admin@example.org",
     Identity("x", "admin@example.org", issuer=ISS_A)),
    ({"iss": ISS_A, "sub": "x", "email": "admin@example.org", "email_verified": True}, "admin@example.org",
     Identity("x", "admin@example.org", admin=True, issuer=ISS_A)),
    # ... or by issuer and subject, whatever the e-mail.
    ({"iss": ISS_A, "sub": "boss"}, f"{ISS_A}#boss", Identity("boss", None, admin=True, issuer=ISS_A)),
    ({"iss": ISS_B, "sub": "boss"}, f"{ISS_A}#boss", Identity("boss", None, issuer=ISS_B)),
    # No usable subject or issuer: nobody (the sign-in page says so).
    ({"iss": ISS_A, "sub": "s" * 256}, "", None),
    ({"iss": ISS_A}, "", None),
    ({"sub": "alice-sub"}, "", None),
])
def test_the_signed_in_identity_is_read_from_the_token(monkeypatch, claims, admins, expected):
    monkeypatch.setattr(identity, "providers", lambda: ["mock"])
    monkeypatch.setattr(identity.st, "user", {"is_logged_in": True, **claims})
    monkeypatch.setenv("PLANNER_ADMINS", admins)
    assert identity.current() == expected
