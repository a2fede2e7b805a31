"""Who is using the app: the one module that reads `st.user` and the `[auth]` section of `.streamlit/secrets.toml`.

Sign-in is on when `[auth]` names at least one OpenID Connect provider (docs/serving.md); then every page asks for
it (`sign_in_gate`) and the store acts as the signed-in user (`actor`). Off (the default), the acting identity is
the anonymous local user and everything behaves as before. Text from the provider (names, e-mails) is shown as
text only (`dashboard.safe_text`), and the page shows the signed-in user's own name and e-mail, never anyone's
subject.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from dashboard import settings
from dashboard.identity import EMAIL_MAX_CHARS, ISSUER_MAX_CHARS, LOCAL, SUBJECT_MAX_CHARS, Identity, is_admin
from dashboard.safe_text import markdown_text, preview
from dashboard.store.errors import NotAllowedError

DEFAULT_PROVIDER = "default"
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")


def _auth_section() -> Mapping[str, Any]:
    secrets = st.secrets
    if not secrets.load_if_toml_exists():
        return {}
    section = secrets.get("auth")
    return section if isinstance(section, Mapping) else {}


def providers() -> list[str]:
    """The providers `[auth]` configures: "default" when it holds a provider's keys itself, then each named
    `[auth.NAME]` table with them. Empty: sign-in is off."""
    section = _auth_section()
    found = [DEFAULT_PROVIDER] if all(key in section for key in PROVIDER_KEYS) else []
    found += [name for name, value in section.items()
              if isinstance(value, Mapping) and all(key in value for key in PROVIDER_KEYS)]
    return found


def sign_in_configured() -> bool:
    return bool(providers())


def _admins() -> frozenset[str]:
    try:
        return settings.admins()
    except settings.SettingError:  # the gate shows the message; nobody is an administrator meanwhile
        return frozenset()


def _logged_in() -> bool:
    """Whether `st.user` holds a signed-in user (without `[auth]`, `st.user` has no `is_logged_in` at all)."""
    return bool(st.user.get("is_logged_in", False))


def current() -> Identity | None:
    """The acting identity: the signed-in user, the anonymous local user when sign-in is off, None when sign-in is
    on and nobody is signed in (or the provider gave no subject).

    A user is the ID token's issuer (``iss``) and subject (``sub``); a token without ``iss`` takes the configured
    provider's name (``[auth.NAME]``) as its issuer. An e-mail makes its holder an administrator only when the token
    says ``email_verified`` is true."""
    if not sign_in_configured():
        return LOCAL
    if not _logged_in():
        return None
    user = st.user
    subject, email = user.get("sub"), user.get("email")
    if not isinstance(subject, str) or not subject or len(subject) > SUBJECT_MAX_CHARS:
        return None
    issuer = user.get("iss")
    if not isinstance(issuer, str) or not issuer:
        issuer = user.get("provider")  # the `[auth.NAME]` Streamlit signed the user in with
    if not isinstance(issuer, str) or not issuer or len(issuer) > ISSUER_MAX_CHARS:
        return None
    email = email[:EMAIL_MAX_CHARS] if isinstance(email, str) and email else None
    admin = is_admin(issuer, subject, email, _admins(), email_verified=user.get("email_verified") is True)
    return Identity(subject, email, admin, issuer)


def display_name() -> str | None:
    """The signed-in user's name as the provider gives it (shown only to that user, as text)."""
    if not sign_in_configured() or not _logged_in():
        return None
    name = st.user.get("name")
    return name if isinstance(name, str) and name.strip() else None


def actor() -> Identity:
    """The identity store writes act as; NotAllowedError (a StoreError, shown like any other) when signed out."""
    found = current()
    if found is None:
        raise NotAllowedError("you are signed out: sign in again to save or change scenarios")
    return found


def _provider_label(name: str) -> str:
    return "Sign in" if name == DEFAULT_PROVIDER else f"Sign in with {markdown_text(name.replace('-', ' ').title())}"


def sign_in_gate() -> None:
    """With sign-in on: a sign-in page (stopping the script) for a signed-out user, else who is signed in and a
    sign-out button in the sidebar. With sign-in off: nothing."""
    names = providers()
    if not names:
        return
    try:
        settings.admins()
    except settings.SettingError as error:
        st.error(markdown_text(error), icon=":material/admin_panel_settings:")
    who = current()
    if who is None:
        st.title("Sign in to the pretraining cost planner")
        if _logged_in():  # signed in, but the provider sent no usable subject to own scenarios by
            st.error("Your sign-in did not say who you are (the provider sent no usable `sub` claim): sign out, "
                     "and ask whoever runs this server to check the provider's settings.")
            if st.button("Sign out", key="sign_in.sign_out", icon=":material/logout:"):
                st.logout()
            st.stop()
        st.write("This planner is shared by your team. Sign in so that the scenarios you save are recorded as "
                 "yours: only you and the administrators can rename, overwrite or delete them, and every change is "
                 "kept in the scenario's history.")
        for name in names:
            if st.button(_provider_label(name), key=f"sign_in.{name}", type="primary", icon=":material/login:"):
                st.login(name)
        st.stop()
    with st.sidebar:
        shown = display_name()
        parts = [preview(part) for part in (shown, who.email) if part]
        st.caption("Signed in as " + (" · ".join(markdown_text(part) for part in parts) or "a user without a name")
                   + (" (administrator)" if who.admin else ""))
        if st.button("Sign out", key="sign_in.sign_out", icon=":material/logout:"):
            st.logout()
