"""Purchase mix: reserved, on-demand and spot shares of GPU-hours and the blended price."""

from __future__ import annotations

import numpy as np


def on_demand_share(reserved_share, spot_share):
    """What is neither reserved nor spot runs on demand."""
    return np.clip(1.0 - reserved_share - spot_share, 0.0, 1.0)


def blended_price_per_gpu_hour(reserved_share, spot_share, price_reserved, price_on_demand, price_spot):
    """Share-weighted $/GPU-hour across the three tiers."""
    return (
        reserved_share * price_reserved
        + spot_share * price_spot
        + on_demand_share(reserved_share, spot_share) * price_on_demand
    )


def effective_failure_rate(node_failures_per_1000_node_days, spot_interruptions_per_1000_node_days, spot_share):
    """Node interruptions per 1,000 node-days: hardware failures, plus spot reclaims on the spot share of nodes."""
    return node_failures_per_1000_node_days + spot_share * spot_interruptions_per_1000_node_days
