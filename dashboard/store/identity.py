"""Who acts on the store: an Identity passed explicitly to every store write, and who may change which scenario.

The store never finds out by itself who is acting (no globals, no streamlit): the app builds an Identity from the
signed-in user (`dashboard.ui.identity`), a test builds two. Rules, documented in docs/serving.md:

* a scenario saved by a signed-in user is owned by that user (OIDC subject and e-mail); only its owner and the
  administrators (``PLANNER_ADMINS``) may rename, overwrite or delete it; everyone may open, duplicate and compare it;
* a scenario with no owner (saved before sign-in existed, or while sign-in was off) may be changed by the anonymous
  local user (sign-in off: everything behaves as before) and by administrators, who may also adopt it; a signed-in
  user who is not an administrator may not change it;
* the anonymous local user never changes a scenario that a signed-in user owns.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SUBJECT_MAX_CHARS = 255
EMAIL_MAX_CHARS = 320


@dataclass(frozen=True)
class Identity:
    """The acting user. ``subject`` is the OIDC ``sub`` claim; None is the anonymous local user (no sign-in)."""

    subject: str | None = None
    email: str | None = None
    admin: bool = False

    def __post_init__(self) -> None:
        if self.subject is not None and (not isinstance(self.subject, str) or not self.subject
                                         or len(self.subject) > SUBJECT_MAX_CHARS):
            raise ValueError(f"an identity's subject is 1–{SUBJECT_MAX_CHARS} characters of text")
        if self.email is not None and (not isinstance(self.email, str) or len(self.email) > EMAIL_MAX_CHARS):
            raise ValueError(f"an identity's e-mail is at most {EMAIL_MAX_CHARS} characters of text")

    @property
    def anonymous(self) -> bool:
        return self.subject is None

    def owns(self, owner_subject: str | None) -> bool:
        return owner_subject is not None and owner_subject == self.subject

    def may_change(self, owner_subject: str | None) -> bool:
        """Whether this identity may rename, overwrite or delete a scenario owned by ``owner_subject``."""
        if self.admin or self.owns(owner_subject):
            return True
        return owner_subject is None and self.anonymous

    def described(self) -> str:
        """How messages and the audit name this identity: its e-mail, else a neutral phrase (never the subject)."""
        if self.anonymous:
            return "the local user"
        return self.email or "a signed-in user without an e-mail"


LOCAL = Identity()  # the anonymous local user: what the app acts as when sign-in is not configured


def is_admin(subject: str | None, email: str | None, admins: Iterable[str], *, email_verified: bool = True) -> bool:
    """Whether ``subject`` or ``email`` is listed in ``admins`` (subjects exactly, e-mails ignoring case).

    An e-mail the provider marked as not verified never makes its holder an administrator.
    """
    listed = set(admins)
    if subject is not None and subject in listed:
        return True
    if email and email_verified:
        folded = email.casefold()
        return any("@" in item and item.casefold() == folded for item in listed)
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
