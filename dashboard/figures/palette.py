"""The planner's colours: one module for the app's charts and the report's, so a series has one colour everywhere.

Named series (a cost line item, a part of the run, a storage tier, baseline and TST, the budget lines) get their
colour from here by name; anything else takes the next colour of `COLORWAY`, which the figures also set as their
layout's colorway and the report's template uses. Importing streamlit makes its own template plotly's default, so
figures that leave the report set the template explicitly (`dashboard.report.theme`); the colours come from here
either way.
"""

from __future__ import annotations

# d3's category10, plotly's "D3" sequence: unnamed series in order, in the app and in the report.
COLORWAY = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
            "#17becf")

BUDGET = "#d62728"
WARNING = "#ff7f0e"
# Neutral colours: storage tiers are not good or bad, so none is red or green.
NEUTRAL_DARK = "#3b4a5a"
NEUTRAL_LIGHT = "#9aa5b1"
TIERS = {"hot_checkpoints": NEUTRAL_DARK, "archived_checkpoints": "#6b7a89", "datasets": "#b7c0ca",
         "logs": "#d9dee3"}
BASELINE = NEUTRAL_LIGHT
TST = "#1f77b4"
REFERENCE = "#222222"
POINT = "#1f77b4"
RANGE = "#9ecae1"

# Cost line items (`engine.LINE_ITEMS`) and the parts of the main run: compute is the same blue in every chart.
COMPUTE = "#1f77b4"
SERIES = {
    "main_compute": COMPUTE,
    "compute": COMPUTE,
    "failure_rework": "#d62728",
    "checkpoint_stalls": "#ff7f0e",
    "experiments": "#2ca02c",
    "evaluation": "#9467bd",
    "debugging": "#8c564b",
    "storage": NEUTRAL_DARK,
    "network_egress": "#bcbd22",
    "data_processing": "#17becf",
    "tst_pilot": "#e377c2",
    "tst_switching": "#f7b6d2",
    "people": "#c7c7c7",
}
# A waterfall's rising, falling and total bars.
WATERFALL = {"increasing": "#3D9970", "decreasing": "#FF4136", "totals": "#4499FF"}


def series(name: str, position: int = 0) -> str:
    """The colour of a named series, else the `position`-th colour of `COLORWAY`."""
    return SERIES.get(name, COLORWAY[position % len(COLORWAY)])


# The parts of a training step (`dashboard.core.step_time.PARTS`): compute is the same blue as everywhere; GPUs
# beyond the batch limit, which are billed but idle, are grey.
STEP_PARTS = {
    "compute_s": COMPUTE,
    "tp_comm_s": "#ff7f0e",
    "cp_comm_s": "#9467bd",
    "ep_comm_s": "#8c564b",
    "pp_bubble_s": "#d62728",
    "dp_comm_exposed_s": "#2ca02c",
    "idle_s": NEUTRAL_LIGHT,
}
TOKENS_PER_S = REFERENCE
