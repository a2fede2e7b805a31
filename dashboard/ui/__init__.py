"""Streamlit glue shared by the page scripts: cached wrappers and number formatting."""
