"""The browser tests' server helper: `bench.served`, shared with the benchmarks."""

from bench.served import free_port, served, streamlit_command

__all__ = ["free_port", "served", "streamlit_command"]
