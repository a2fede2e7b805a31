"""The review-meeting report: one self-contained HTML file comparing 1–4 scenarios (pure; never imports streamlit).

`html.build_report` draws every number from the engine and the Monte Carlo, every chart from the figure builders,
and the method notes from docs/method.md; the file needs no network to open.
"""
