"""Failures and checkpoints: job MTBF, checkpoint size and write time, Young/Daly intervals, overheads."""

from __future__ import annotations

import numpy as np

HOURS_PER_DAY = 24.0


def node_count(gpu_count, gpus_per_node):
    """Nodes the job spans (a partly filled node still fails as a whole)."""
    return np.ceil(np.asarray(gpu_count) / gpus_per_node)


def job_mtbf_hours(failures_per_1000_node_days, nodes):
    """Mean time between job interruptions for independent node failures: 24·1000 / (rate · nodes)."""
    rate_per_hour = np.asarray(failures_per_1000_node_days) * (nodes / (1000.0 * HOURS_PER_DAY))
    with np.errstate(divide="ignore", over="ignore"):
        return 1.0 / rate_per_hour  # a zero rate gives inf: no interruptions


def checkpoint_size_gb(total_params, bytes_per_param):
    """Full training checkpoint in GB (1e9 bytes): total parameters × bytes per parameter."""
    return np.asarray(total_params) * bytes_per_param / 1e9


def checkpoint_write_s(size_gb, write_gb_per_s, override_s=np.nan):
    """Seconds to write one checkpoint: size / bandwidth, unless given directly."""
    override = np.asarray(override_s)
    return np.where(np.isnan(override), size_gb / write_gb_per_s, override)


def young_interval(write_time, mtbf):
    """Young (1974): τ = √(2δM), in the unit of its inputs."""
    return np.sqrt(2.0 * write_time * mtbf)


def daly_interval(write_time, mtbf):
    """Daly (2006): τ = √(2δM)·[1 + ⅓√(δ/2M) + ⅑(δ/2M)] − δ for δ < 2M, else M."""
    ratio = write_time / (2.0 * mtbf)
    higher_order = np.sqrt(2.0 * write_time * mtbf) * (1.0 + np.sqrt(ratio) / 3.0 + ratio / 9.0) - write_time
    return np.where(write_time < 2.0 * mtbf, higher_order, mtbf)


def stall_fraction(write_time, interval, asynchronous):
    """Training time lost to checkpoint writes: δ/τ, zero when checkpoints are written asynchronously."""
    return np.where(asynchronous, 0.0, write_time / interval)


def rework_fraction(interval, restart, mtbf):
    """Expected lost work per unit of training: (τ/2 + restart) / M (first-order, Young 1974)."""
    return (interval / 2.0 + restart) / mtbf
