"""With sign-in on, a signed-out visitor reaches the sign-in page and nothing else: an ASGI middleware.

Sign-in hid the pages (``identity.sign_in_gate``) but not Streamlit's other endpoints: anyone with a websocket
session and the XSRF cookie every visitor gets could upload to ``/_stcore/upload_file``. When ``[auth]`` names a
provider, a request without a valid Streamlit auth cookie (``_streamlit_user``, signed with the cookie secret and
saying ``is_logged_in``) is refused with 401 unless the sign-in page needs it: a GET or HEAD of the page itself, its
static files and media (the page icon), the health and host-config checks, and the sign-in routes; and the
websocket, whose session shows only the sign-in page. Uploads, component and agent endpoints, metrics and every
other method are refused.
"""

from __future__ import annotations

import json

from streamlit import config
from streamlit.web.server.server_util import AUTH_COOKIE_NAME
from streamlit.web.server.starlette.starlette_websocket import _get_signed_cookie_with_chunks

from dashboard import settings
from dashboard.ui import identity
from dashboard.ui.upload_guard import ASGIApp, Receive, Scope, Send, refuse

OPEN_CORE = frozenset({"_stcore/health", "_stcore/host-config", "_stcore/stream"})  # what the sign-in page calls
CLOSED_PREFIXES = ("_stcore/", "component/", "app/static/")  # everything else under them is refused
READ_METHODS = frozenset({"GET", "HEAD"})
REFUSAL = "Sign in first: this server asks every visitor to sign in (open its address and choose a Sign in button)."


def _cookies(scope: Scope) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            for part in value.decode("latin-1").split(";"):
                key, _, text = part.strip().partition("=")
                if key:
                    found.setdefault(key, text)
    return found


def signed_in(scope: Scope) -> bool:
    """Whether the request carries a valid auth cookie of a signed-in user."""
    try:
        decoded = _get_signed_cookie_with_chunks(_cookies(scope), AUTH_COOKIE_NAME)
        payload = json.loads(decoded) if decoded else None
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(payload, dict) and payload.get("is_logged_in") is True


def open_to_signed_out(scope: Scope) -> bool:
    """Whether the sign-in page needs this request (the path taken below ``server.baseUrlPath``)."""
    base = "/" + str(config.get_option("server.baseUrlPath") or "").strip("/")
    path = scope.get("path", "")
    path = path[len(base):] if base != "/" and path.startswith(base) else path
    path = path.lstrip("/")
    if path in OPEN_CORE:
        return True
    if scope["type"] == "websocket" or scope.get("method") not in READ_METHODS:
        return False
    return not path.startswith(CLOSED_PREFIXES)


class SignInGuard:
    """The ASGI middleware: with sign-in on, signed-out requests beyond the sign-in page get 401."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or not identity.sign_in_configured() or signed_in(scope) \
                or open_to_signed_out(scope):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": "sign in first"})
            return
        await refuse(send, 401, REFUSAL, receive, settings.mebibytes(settings.UPLOAD_MAX_MB) + settings.MEBIBYTE)
