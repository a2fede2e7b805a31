"""The server's guards, in the order a request meets them: sign-in (`sign_in_guard`), upload bounds
(`upload_guard`), then rerun pacing (`rerun_pace`); `dashboard/app.py` wraps Streamlit's own app in them."""

from __future__ import annotations

from starlette.middleware import Middleware

from dashboard import settings
from dashboard.ui.rerun_pace import RerunPace
from dashboard.ui.sign_in_guard import SignInGuard
from dashboard.ui.upload_guard import UploadGuard, apply_upload_limit


def middleware() -> list[Middleware]:
    """The guards as Starlette middleware, outermost first; sets Streamlit's upload limit from the setting. A guard's
    setting out of range stops the server at start-up with its message (SystemExit), not a traceback."""
    try:
        for name in (settings.UPLOAD_SESSION_MB, settings.UPLOAD_TOTAL_MB, settings.RERUN_INTERVAL_MS):
            settings.limit(name)
        apply_upload_limit()
    except settings.SettingError as error:
        raise SystemExit(f"The planner's server cannot start: {error}") from None
    return [Middleware(SignInGuard), Middleware(UploadGuard), Middleware(RerunPace)]
