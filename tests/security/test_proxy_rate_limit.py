"""The operators' guide's nginx example (docs/nginx/planner.conf, docs/serving.md) in front of a served app on
loopback: the page loads through it (a websocket session draws the Plan page's tiles), and a burst of requests
beyond its limits is answered 429. Skipped, saying so, without Debian's nginx (apt-get install -y nginx)."""

import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bench.served import free_port, serve
from bench.websocket_client import Session, connection

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "nginx" / "planner.conf"
APP = ROOT / "dashboard" / "app.py"
NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


def _missing_nginx():
    message = ("SKIPPED LOUDLY: nginx is not installed, so the operators' guide's proxy example is not tested. "
               "Install it with: apt-get install -y nginx")
    warnings.warn(message, stacklevel=2)
    pytest.skip(message)


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _config(tmp: Path, listen: int, upstream: int) -> Path:
    """The example with its ports replaced, inside a minimal main configuration that runs from ``tmp``."""
    example = EXAMPLE.read_text(encoding="utf-8")
    assert example.count("listen 8080;") == 1 and example.count("server 127.0.0.1:8501;") == 1
    site = example.replace("listen 8080;", f"listen 127.0.0.1:{listen};").replace(
        "server 127.0.0.1:8501;", f"server 127.0.0.1:{upstream};")
    (tmp / "planner.conf").write_text(site, encoding="utf-8")
    user = "user root;\n" if os.geteuid() == 0 else ""
    main = tmp / "nginx.conf"
    main.write_text(f"""{user}daemon off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    include {tmp}/planner.conf;
}}
""", encoding="utf-8")
    return main


def _wait_listening(url: str, process: subprocess.Popen, tmp: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"nginx exited: {(tmp / 'error.log').read_text(errors='replace')}")
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("nginx did not answer in 20 s")


def test_the_example_checks_as_valid_nginx(tmp_path):
    if NGINX is None:
        _missing_nginx()
    main = _config(tmp_path, free_port(), free_port())
    checked = subprocess.run([NGINX, "-t", "-c", str(main), "-p", str(tmp_path)], capture_output=True, text=True,
                             check=False)
    assert checked.returncode == 0, checked.stderr


def test_the_page_loads_through_the_proxy_and_a_burst_is_refused(tmp_path):
    if NGINX is None:
        _missing_nginx()
    listen = free_port()
    with serve(APP) as server:
        upstream = int(server.url.rsplit(":", 1)[1])
        main = _config(tmp_path, listen, upstream)
        proxy = f"http://127.0.0.1:{listen}"
        nginx = subprocess.Popen([NGINX, "-c", str(main), "-p", str(tmp_path)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
        try:
            _wait_listening(proxy, nginx, tmp_path)
            # The page: its HTML, and a websocket session through the proxy that draws the Plan page's tiles.
            with urllib.request.urlopen(f"{proxy}/", timeout=10) as response:
                assert response.status == 200 and b"<div id=\"root\">" in response.read()
            socket_ = connection(proxy)
            try:
                first = Session(socket_).rerun()
            finally:
                socket_.close()
            assert any(element.WhichOneof("type") == "metric" for element in first.elements)

            # Websocket handshakes beyond 1 a second (bursts of 10): 429. A plain GET counts as an attempt.
            time.sleep(1.5)
            with ThreadPoolExecutor(8) as pool:
                sessions = list(pool.map(_status, [f"{proxy}/_stcore/stream"] * 30))
            refused = sum(code in (429, 503) for code in sessions)
            assert refused >= 30 - 10 - 3, sessions  # the burst and a second or two of refill get through
            assert set(sessions) <= {200, 400, 429, 503}, sessions  # the ones let through reach Streamlit

            # Page requests beyond 20 a second (bursts of 40): 429.
            with ThreadPoolExecutor(8) as pool:
                pages = list(pool.map(_status, [f"{proxy}/_stcore/health"] * 150))
            assert sum(code == 429 for code in pages) >= 150 - 40 - 40, pages
            assert set(pages) <= {200, 429}

            time.sleep(2.5)  # the limits refill: a new session is let in again
            assert _status(f"{proxy}/_stcore/health") == 200
            log = (tmp_path / "error.log").read_text(errors="replace")
            assert re.search(r"limiting requests.*zone \"planner_sessions\"", log)
        finally:
            nginx.terminate()
            nginx.wait(timeout=10)


def test_large_uploads_through_the_proxy_are_bounded_by_the_app(tmp_path):
    """Issue 53: 20 PUTs of 19 MiB at once from four sessions through the example, the app's upload bounds scaled
    down (20 MiB a file, 40 a session, 60 in all): at most three are accepted, the others refused with the app's
    429, the server's memory stays under its bound and its health check answers through the proxy."""
    if NGINX is None:
        _missing_nginx()
    from bench.abuse_bench import upload_flood
    from bench.upload_bench import server_env

    listen = free_port()
    limits = {"PLANNER_UPLOAD_MAX_MB": "20", "PLANNER_UPLOAD_SESSION_MB": "40", "PLANNER_UPLOAD_TOTAL_MB": "60"}
    with serve(APP, env=server_env(tmp_path, **limits)) as server:
        main = _config(tmp_path, listen, int(server.url.rsplit(":", 1)[1]))
        proxy = f"http://127.0.0.1:{listen}"
        nginx = subprocess.Popen([NGINX, "-c", str(main), "-p", str(tmp_path)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
        try:
            _wait_listening(proxy, nginx, tmp_path)
            flood = upload_flood(proxy, server.process.pid, sessions=4, puts=20, size=19 << 20)
            assert _status(f"{proxy}/_stcore/health") == 200
        finally:
            nginx.terminate()
            nginx.wait(timeout=10)
    assert set(flood.statuses) <= {204, 429}, flood.statuses
    assert 1 <= flood.statuses[204] <= 3, flood.statuses
    assert flood.peak_mb < flood.idle_mb + 60 * (1 << 20) / 1e6 + 150, flood
    assert flood.health_failures == 0, flood  # polled through the proxy throughout
