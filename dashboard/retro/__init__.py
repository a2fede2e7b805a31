"""Retrospective analytics over the canonical usage table; pure, never imports streamlit."""
