"""The server's guards, in the order a request meets them: sign-in (`sign_in_guard`), upload bounds
(`upload_guard`), then rerun pacing (`rerun_pace`); `dashboard/app.py` wraps Streamlit's own app in them."""

from __future__ import annotations

from starlette.middleware import Middleware

from dashboard.ui.rerun_pace import RerunPace
from dashboard.ui.sign_in_guard import SignInGuard
from dashboard.ui.upload_guard import UploadGuard, apply_upload_limit


def middleware() -> list[Middleware]:
    """The guards as Starlette middleware, outermost first; sets Streamlit's upload limit from the setting."""
    apply_upload_limit()
    return [Middleware(SignInGuard), Middleware(UploadGuard), Middleware(RerunPace)]
