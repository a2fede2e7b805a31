"""Method & sources page: shows docs/method.md, the one place every formula is written down."""

from pathlib import Path

import streamlit as st

METHOD = Path(__file__).resolve().parents[2] / "docs" / "method.md"

st.markdown(METHOD.read_text(encoding="utf-8"))
