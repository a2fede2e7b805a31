"""Plotly figure builders for the dashboard pages; pure (data in, figure out), never import streamlit."""
