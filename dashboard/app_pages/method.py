"""Method & sources page: shows docs/method.md, the one place every formula is written down, with a contents list
(the code paths the file names for developers are left out: `dashboard.ui.method_text`)."""

import streamlit as st

from dashboard.ui.method_text import METHOD, contents, readable, sections, slug

title, intro, parts = sections(readable(METHOD.read_text(encoding="utf-8")))
st.title(title or "Method & sources")
st.markdown(intro)
with st.container(border=True, key="method-contents"):
    st.markdown(f"**Contents**\n\n{contents(parts)}")
for heading, body in parts:
    st.header(heading, anchor=slug(heading))
    st.markdown(body)
