"""Who acts: an Identity (OIDC issuer + subject, e-mail, administrator or not), passed explicitly to every write of
the scenario store and the workspace, and who may change what someone owns.

Nothing here finds out by itself who is acting (no globals, no streamlit): the app builds an Identity from the
signed-in user (`dashboard.ui.identity`), the command line acts as the anonymous local user, a test builds two.
A user is the pair (issuer, subject): the same subject from two providers is two users. Rules, documented in
docs/serving.md:

* what a signed-in user saves (a scenario, a workspace dataset) is owned by that user (issuer, subject and e-mail);
  only its owner and the administrators (``PLANNER_ADMINS``) may rename, overwrite, replace or delete it;
* what has no owner (saved while sign-in was off, or before owners existed) may be changed by the anonymous local
  user and by administrators; a signed-in user who is not an administrator may not change it. A row owned before
  issuers were recorded (a subject without an issuer) is owned by nobody who can prove it: only administrators
  change it (and may adopt a scenario);
* the anonymous local user never changes what a signed-in user owns.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

ISSUER_MAX_CHARS = 1000
SUBJECT_MAX_CHARS = 255
EMAIL_MAX_CHARS = 320
ISSUER_SUBJECT_SEPARATOR = "#"  # PLANNER_ADMINS' ISSUER#SUBJECT: an OIDC issuer has no fragment, so no "#"


@dataclass(frozen=True)
class Identity:
    """The acting user: ``issuer`` (the ID token's ``iss``) and ``subject`` (its ``sub``) together name a user;
    both None is the anonymous local user (no sign-in)."""

    subject: str | None = None
    email: str | None = None
    admin: bool = False
    issuer: str | None = None

    def __post_init__(self) -> None:
        if self.subject is not None and (not isinstance(self.subject, str) or not self.subject
                                         or len(self.subject) > SUBJECT_MAX_CHARS):
            raise ValueError(f"an identity's subject is 1–{SUBJECT_MAX_CHARS} characters of text")
        if (self.subject is None) != (self.issuer is None):
            raise ValueError("an identity names both its issuer and its subject, or neither (the local user)")
        if self.issuer is not None and (not isinstance(self.issuer, str) or not self.issuer
                                        or len(self.issuer) > ISSUER_MAX_CHARS):
            raise ValueError(f"an identity's issuer is 1–{ISSUER_MAX_CHARS} characters of text")
        if self.email is not None and (not isinstance(self.email, str) or len(self.email) > EMAIL_MAX_CHARS):
            raise ValueError(f"an identity's e-mail is at most {EMAIL_MAX_CHARS} characters of text")

    @property
    def anonymous(self) -> bool:
        return self.subject is None

    def owns(self, owner_issuer: str | None, owner_subject: str | None) -> bool:
        """Whether this identity is the owner (issuer and subject both equal; an owner without an issuer, recorded
        before issuers were, is nobody's)."""
        return (owner_issuer is not None and owner_subject is not None
                and (owner_issuer, owner_subject) == (self.issuer, self.subject))

    def may_change(self, owner_issuer: str | None, owner_subject: str | None) -> bool:
        """Whether this identity may rename, overwrite, replace or delete what ``owner_issuer``/``owner_subject``
        owns (None, None: no owner)."""
        if self.admin or self.owns(owner_issuer, owner_subject):
            return True
        return owner_subject is None and self.anonymous

    def described(self) -> str:
        """How messages and the audit name this identity: its e-mail, else a neutral phrase (never the subject)."""
        if self.anonymous:
            return "the local user"
        return self.email or "a signed-in user without an e-mail"


LOCAL = Identity()  # the anonymous local user: what the app acts as when sign-in is not configured, and the CLI


def is_admin(issuer: str | None, subject: str | None, email: str | None, admins: Iterable[str], *,
             email_verified: bool) -> bool:
    """Whether the user is listed in ``admins``: as ``ISSUER#SUBJECT`` (both exactly), or by e-mail (ignoring case)
    only when the provider said the e-mail is verified. A bare subject names nobody (settings refuses it)."""
    for item in admins:
        if ISSUER_SUBJECT_SEPARATOR in item:
            listed_issuer, listed_subject = item.split(ISSUER_SUBJECT_SEPARATOR, 1)
            if issuer is not None and subject is not None and (listed_issuer, listed_subject) == (issuer, subject):
                return True
        elif email and email_verified and "@" in item and item.casefold() == email.casefold():
            return True
    return False


def shown_owner(owner_subject: str | None, owner_email: str | None) -> str:
    """The owner as pages show it: the e-mail only, never the subject."""
    if owner_subject is None:
        return "(no owner)"
    return owner_email or "(a user without an e-mail)"


def shown_actor(subject: str | None, email: str | None) -> str:
    """Who acted (wrote a scenario, kept a comparison), as pages show it: the e-mail only, never the subject."""
    if subject is None:
        return "(local user)"
    return email or "(a user without an e-mail)"
