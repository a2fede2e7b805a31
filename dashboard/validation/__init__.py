"""The models against published and measured figures, and the scripts that write docs/memory-validation.md and
docs/throughput-validation.md. Above the engine; never imports streamlit."""
