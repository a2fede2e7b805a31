"""The pure planning engine: scenario in, GPU-hours, dollars, storage and risk out. Never imports streamlit."""
