"""Streamlit entry point: page config and the st.navigation router (`make run`)."""

from pathlib import Path

import streamlit as st

PAGES = Path(__file__).resolve().parent / "app_pages"

st.set_page_config(page_title="Pretraining cost planner", page_icon=":material/calculate:", layout="wide")
navigation = st.navigation(
    [
        st.Page(PAGES / "plan.py", title="Plan", icon=":material/tune:", default=True),
        st.Page(PAGES / "compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
        st.Page(PAGES / "retro.py", title="Retrospective", icon=":material/query_stats:", url_path="retrospective"),
        st.Page(PAGES / "imports.py", title="Import usage", icon=":material/upload_file:"),
        st.Page(PAGES / "method.py", title="Method & sources", icon=":material/menu_book:"),
    ]
)
navigation.run()
