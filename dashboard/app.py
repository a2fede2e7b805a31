"""Streamlit entry point: page config and the st.navigation router (`make run`, or `streamlit run dashboard/app.py`).

`streamlit run` puts this file's folder on the import path, not the repository root, so the root is added
here: the pages import the `dashboard` package however the app was started.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402  (after the path is set, so the pages' imports resolve)

from dashboard.ui.identity import current, sign_in_gate  # noqa: E402
from dashboard.ui.warm import start_warm_up  # noqa: E402

PAGES = Path(__file__).resolve().parent / "app_pages"
# A file served by the app itself: a :material/…: page icon makes every browser fetch it from fonts.gstatic.com.
ICON = Path(__file__).resolve().parent / "app_icon.svg"

st.set_page_config(page_title="Pretraining cost planner", page_icon=str(ICON), layout="wide")
navigation = st.navigation(
    [
        st.Page(PAGES / "plan.py", title="Plan", icon=":material/tune:", default=True),
        st.Page(PAGES / "compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
        st.Page(PAGES / "retro.py", title="Retrospective", icon=":material/query_stats:", url_path="retrospective"),
        st.Page(PAGES / "imports.py", title="Import usage", icon=":material/upload_file:"),
        st.Page(PAGES / "method.py", title="Method & sources", icon=":material/menu_book:"),
    ],
    position="hidden" if current() is None else "sidebar",  # signed out (sign-in on): no page links, only sign-in
)
sign_in_gate()  # with [auth] in .streamlit/secrets.toml: sign in first (docs/serving.md)
navigation.run()
start_warm_up()  # once per server, after its first page is drawn
