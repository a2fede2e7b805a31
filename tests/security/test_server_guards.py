"""Issue 53, items 1 and 7, against a real `streamlit run dashboard/app.py` server driven over HTTP and its websocket
directly (`bench.abuse_bench`), with the upload bounds scaled down through their settings: an oversize upload is
refused from its headers, many large PUTs at once leave the server's memory under its bound and its health check
answering, a signed-out PUT is refused with sign-in on, and one session's rerun flood starts a bounded number of
runs while another session still gets its rerun. A watchdog kills a server past KILL_MB or DEADLINE_S, so a
regression fails a test instead of taking the machine down."""

from __future__ import annotations

import json
import tomllib
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from served_watch import watched
from streamlit.web.server.starlette.starlette_app_utils import create_signed_value

from bench.abuse_bench import open_probe, put_upload, rerun_flood, upload_flood
from bench.served import ROOT, free_port, running, streamlit_command
from bench.upload_bench import UploadSession, server_env
from dashboard import settings

MB = 1 << 20
LIMITS = {"PLANNER_UPLOAD_MAX_MB": "20", "PLANNER_UPLOAD_SESSION_MB": "40", "PLANNER_UPLOAD_TOTAL_MB": "60"}
SLACK_MB = 150  # the sessions' pages and Python's own churn, beside the 60 MiB of uploads the bounds allow
KILL_MB = 3_000
DEADLINE_S = 600
COOKIE_SECRET = "a-test-cookie-secret-that-is-long-enough-0123456789"
SECRETS = f"""[auth]
redirect_uri = "{{app}}/oauth2callback"
cookie_secret = "{COOKIE_SECRET}"

[auth.mock]
client_id = "planner"
client_secret = "planner-secret"
server_metadata_url = "http://127.0.0.1:9/.well-known/openid-configuration"
"""


@contextmanager
def _server(folder: Path, secrets: bool = False, **env: str):
    """A served app with ``env``; with ``secrets``, sign-in on (an `[auth]` section of its own). Yields its URL and
    process, under the watchdog."""
    port = free_port()
    command = streamlit_command("dashboard/app.py", port)
    if secrets:
        path = folder / "secrets.toml"
        path.write_text(SECRETS.format(app=f"http://127.0.0.1:{port}"), encoding="utf-8")
        command += ["--secrets.files", str(path)]
    with running(command, port, ROOT, server_env(folder, **env)) as (url, process), \
            watched(process, KILL_MB, DEADLINE_S) as killed:
        yield url, process
    assert not killed, killed


def _get(url: str, cookie: str = "") -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    with _server(tmp_path_factory.mktemp("limited"), **LIMITS) as served:
        yield served


def test_an_oversize_upload_is_refused_from_its_headers(limited):
    url, _ = limited
    probe = open_probe(url)
    answer = put_upload(url, probe.session_id, 25 * MB, send_body=False)  # only the headers are ever sent
    probe.socket.close()
    assert answer.status == 413
    assert "25 MB, more than the 20 MB this server accepts (PLANNER_UPLOAD_MAX_MB)" in answer.text
    assert answer.body_sent == 0


def test_the_file_uploader_offers_the_limit_the_server_enforces(limited):
    url, _ = limited
    session = UploadSession(url)  # the Import page with "Upload a file" chosen
    session.close()
    assert session.uploader.max_upload_size_mb == 20  # PLANNER_UPLOAD_MAX_MB, not config.toml's 500


def test_a_chunked_upload_past_the_limit_is_cut_off_and_a_small_one_accepted(limited):
    url, _ = limited
    probe = open_probe(url)
    cut = put_upload(url, probe.session_id, 30 * MB, chunked=True)
    small = put_upload(url, probe.session_id, 2 * MB)
    probe.socket.close()
    assert cut.status == 413
    assert "PLANNER_UPLOAD_MAX_MB" in cut.text
    assert small.status == 204


# sessions, the most 19 MiB uploads the bounds let in: 40 MiB a session holds two; 60 MiB in all holds three
FLOODS = [(1, 2), (4, 3)]


@pytest.mark.parametrize("sessions, most", FLOODS, ids=["one_session", "four_sessions"])
def test_many_large_puts_at_once_stay_under_the_bounds_and_the_server_answers(tmp_path, sessions, most):
    with _server(tmp_path, **LIMITS) as (url, process):
        flood = upload_flood(url, process.pid, sessions=sessions, puts=20, size=19 * MB)
        status, text = _get(f"{url}/_stcore/health")
    assert set(flood.statuses) <= {204, 429}, flood.statuses
    assert 1 <= flood.statuses[204] <= most, flood.statuses
    assert flood.statuses[429] == 20 - flood.statuses[204]
    assert flood.peak_mb < flood.idle_mb + 60 * MB / 1e6 + SLACK_MB, flood
    assert flood.health_failures == 0  # the health check, polled throughout, always answered "ok"
    assert (status, text.strip()) == (200, "ok")


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    with _server(tmp_path_factory.mktemp("signed"), secrets=True, **LIMITS) as served:
        yield served


def _signed_in_cookie(url: str, secret: str = COOKIE_SECRET) -> str:
    payload = json.dumps({"origin": url, "is_logged_in": True, "sub": "alice-sub", "email": "alice@example.org"})
    return "_streamlit_user=" + create_signed_value(secret, "_streamlit_user", payload).decode()


def test_with_sign_in_on_a_signed_out_upload_is_refused_and_a_signed_in_one_accepted(signed):
    url, _ = signed
    probe = open_probe(url)  # a signed-out session: the sign-in page, and a session id
    drawn = [e.heading.body for e in probe.elements if e.WhichOneof("type") == "heading"]
    signed_out = put_upload(url, probe.session_id, 5 * MB, send_body=False)
    forged = put_upload(url, probe.session_id, 1 * MB,
                        cookies=dict([_signed_in_cookie(url, "another-secret-0123456789").split("=", 1)]))
    signed_in = put_upload(url, probe.session_id, 1 * MB, cookies=dict([_signed_in_cookie(url).split("=", 1)]))
    probe.socket.close()
    assert "Sign in to the pretraining cost planner" in drawn
    assert (signed_out.status, signed_out.body_sent) == (401, 0)
    assert "Sign in first" in signed_out.text
    assert forged.status == 401
    assert signed_in.status == 204


# path, status signed out, status signed in
ENDPOINTS = [("/_stcore/health", 200, 200), ("/", 200, 200), ("/compare", 200, 200), ("/_stcore/metrics", 401, 200)]


@pytest.mark.parametrize("path, signed_out, signed_in", ENDPOINTS)
def test_with_sign_in_on_signed_out_requests_reach_the_sign_in_page_only(signed, path, signed_out, signed_in):
    url, _ = signed
    assert _get(url + path)[0] == signed_out
    assert _get(url + path, _signed_in_cookie(url))[0] == signed_in


def test_a_rerun_flood_starts_a_bounded_number_of_runs_and_another_session_still_reruns(tmp_path):
    interval_s = 1.0
    with _server(tmp_path, PLANNER_RERUN_INTERVAL_MS=str(int(interval_s * 1000))) as (url, _):
        flood = rerun_flood(url, messages=2_858, other_reruns=3)
    # One run at once, then at most one per interval for as long as the flood was being read (seconds measured on
    # this side, which includes the server's span), plus the last, merged one.
    assert 2 <= flood.started <= 2 + flood.seconds / interval_s, flood
    assert flood.started <= 60, flood  # of 2,858 messages
    assert flood.last_value == flood.sent_value  # the last message's widget value won
    assert len(flood.other_during_s) == 3  # the other session's reruns each finished during the flood


def test_one_source_sets_the_upload_limit_for_streamlit_and_nginx():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    nginx = (ROOT / "docs" / "nginx" / "planner.conf").read_text(encoding="utf-8")
    default = settings.LIMITS[settings.UPLOAD_MAX_MB][0]
    assert default == 500
    assert config["server"]["maxUploadSize"] == default  # bare runs and AppTest; a server sets it from the setting
    assert f"client_max_body_size {default}m;" in nginx


def test_the_server_sets_streamlits_upload_limit_from_the_setting(monkeypatch):
    from streamlit import config

    from dashboard.ui.upload_guard import apply_upload_limit

    before = config.get_option("server.maxUploadSize")
    monkeypatch.setenv("PLANNER_UPLOAD_MAX_MB", "20")
    try:
        assert apply_upload_limit() == 20
        assert config.get_option("server.maxUploadSize") == 20
    finally:
        config.set_option("server.maxUploadSize", before)
