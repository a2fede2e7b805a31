"""Streamlit glue shared by the page scripts: cached wrappers and formatting. The only layer besides the pages that may import streamlit."""
