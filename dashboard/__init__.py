"""Pretraining cost planner: a pure engine, an import layer, a CLI and a Streamlit dashboard."""
