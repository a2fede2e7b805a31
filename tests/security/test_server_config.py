"""A plain `streamlit run dashboard/app.py` listens on this machine only (item 7 of issue 12)."""

import tomllib
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"


def test_the_server_listens_on_localhost_unless_told_otherwise():
    server = tomllib.loads(CONFIG.read_text(encoding="utf-8"))["server"]
    assert server["address"] == "127.0.0.1"
