"""Streamlit entry point (`make run`, or `streamlit run dashboard/app.py`): the server, and the st.navigation router.

`streamlit run` reads this file for an ASGI app and finds `app` below: Streamlit's own app (`st.App`) wrapped in
the server's guards (`dashboard.ui.guards`: sign-in, upload bounds, rerun pacing), so every way of starting the
server installs them. It imports this file once under its own name to build that app; every session's rerun then
runs this file as `__main__` (as AppTest and a bare `python dashboard/app.py` do), which draws the pages.

`streamlit run` puts this file's folder on the import path, not the repository root, so the root is added
here: the pages import the `dashboard` package however the app was started.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402  (after the path is set, so the pages' imports resolve)

if __name__ != "__main__":  # imported by `streamlit run` (uvicorn) to find the server's app
    from dashboard.ui.guards import middleware

    app = st.App(__file__, middleware=middleware())
else:  # a session's rerun
    from dashboard.ui.identity import current, sign_in_gate
    from dashboard.ui.warm import start_warm_up

    PAGES = Path(__file__).resolve().parent / "app_pages"
    # A file served by the app itself: a :material/…: page icon makes every browser fetch it from fonts.gstatic.com.
    ICON = Path(__file__).resolve().parent / "app_icon.svg"

    st.set_page_config(page_title="Pretraining cost planner", page_icon=str(ICON), layout="wide")
    navigation = st.navigation(
        [
            st.Page(PAGES / "plan.py", title="Plan", icon=":material/tune:", default=True),
            st.Page(PAGES / "compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
            st.Page(PAGES / "retro.py", title="Retrospective", icon=":material/query_stats:",
                    url_path="retrospective"),
            st.Page(PAGES / "imports.py", title="Import usage", icon=":material/upload_file:"),
            st.Page(PAGES / "method.py", title="Method & sources", icon=":material/menu_book:"),
        ],
        position="hidden" if current() is None else "sidebar",  # signed out (sign-in on): no page links
    )
    sign_in_gate()  # with [auth] in .streamlit/secrets.toml: sign in first (docs/serving.md)
    navigation.run()
    start_warm_up()  # once per server, after its first page is drawn
