"""Storage over the run: checkpoints under a keep-last-K / archive-every-M policy, datasets and logs.

Checkpoint i (i = 1, 2, ...) is written at wall-clock time i·τ. The hot tier holds the newest K; while
checkpoint i is written the oldest is still there, so the hot tier briefly holds K+1 (the sawtooth).
Every M-th checkpoint is also copied to the cold tier and kept. Datasets are stored for the whole run on
the cold (object) tier, and logs grow linearly. Costs are GB-months at 730 hours per month.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

HOURS_PER_MONTH = 730.0
TIERS = ("hot_checkpoints", "archived_checkpoints", "datasets", "logs")


def checkpoints_written(run_hours, interval_hours):
    """Checkpoints completed during the run: ⌊T/τ⌋."""
    return np.floor(run_hours / interval_hours + 1e-9)


def _sum_min(n, k):
    """Σ_{i=0}^{n-1} min(i, K) = Σ_{i=0}^{m} i + (n−1−m)·K with m = min(n−1, K)."""
    m = np.minimum(n - 1, k)
    return m * (m + 1) / 2.0 + (n - 1 - m) * k


def _sum_floor_div(n, m):
    """Σ_{i=0}^{n-1} ⌊i/M⌋; zero when M = 0 (no archiving)."""
    safe_m = np.where(m > 0, m, 1)
    q = np.floor(n / safe_m)
    r = n - q * safe_m
    return (safe_m * q * (q - 1) / 2.0 + r * q) * (m > 0)


def _archived_after(i, m):
    safe_m = np.where(m > 0, m, 1)
    return np.floor(i / safe_m) * (m > 0)


def dataset_gb(raw_tokens, bytes_per_token, versions):
    """Corpus bytes kept: raw tokens × bytes per token × copies."""
    return raw_tokens * bytes_per_token * versions / 1e9


def storage_totals(run_hours, interval_hours, checkpoint_gb, keep_last, archive_every, data_gb, logs_gb_per_day):
    """GB-hours per tier over the run and the peak GB stored, in closed form (vectorised)."""
    n = checkpoints_written(run_hours, interval_hours)
    tail = run_hours - n * interval_hours
    hot = checkpoint_gb * (interval_hours * _sum_min(n, keep_last) + tail * np.minimum(n, keep_last))
    archived_at_end = _archived_after(n, archive_every)
    archived = checkpoint_gb * (interval_hours * _sum_floor_div(n, archive_every) + tail * archived_at_end)
    logs_gb = logs_gb_per_day * run_hours / 24.0
    gb_hours = {
        "hot_checkpoints": hot,
        "archived_checkpoints": archived,
        "datasets": data_gb * run_hours,
        "logs": logs_gb * run_hours / 2.0,
    }
    peak_gb = (
        checkpoint_gb * np.minimum(n, keep_last + 1)
        + checkpoint_gb * archived_at_end
        + data_gb
        + logs_gb
    )
    return gb_hours, peak_gb


def storage_cost(gb_hours, hot_per_gb_month, cold_per_gb_month):
    """$ per tier: hot checkpoints at the hot price; archives, datasets and logs at the cold price."""
    prices = {
        "hot_checkpoints": hot_per_gb_month,
        "archived_checkpoints": cold_per_gb_month,
        "datasets": cold_per_gb_month,
        "logs": cold_per_gb_month,
    }
    return {tier: gb_hours[tier] / HOURS_PER_MONTH * prices[tier] for tier in TIERS}


def storage_timeline(run_hours, interval_hours, checkpoint_gb, keep_last, archive_every, data_gb, logs_gb_per_day,
                     max_points=2000):
    """Stored GB per tier over one run, as a long frame (hours, tier, gb) for plotting.

    Points sit just before and just after each checkpoint write, so the hot tier's K+1 peaks show; with more
    writes than `max_points` allows, writes are sampled evenly (the first and last are kept).
    """
    n = int(checkpoints_written(run_hours, interval_hours))
    writes = np.arange(1, n + 1, dtype=float)
    if n > max_points // 2:
        writes = np.unique(np.round(np.linspace(1, n, max_points // 2)))
    hours = np.concatenate([[0.0], np.repeat(writes * interval_hours, 2), [run_hours]])
    count_before = np.concatenate([[0.0], np.column_stack([writes - 1, writes]).ravel(), [float(n)]])
    peak_marker = np.concatenate([[0.0], np.tile([1.0, 0.0], len(writes)), [0.0]])
    hot = checkpoint_gb * np.minimum(count_before + peak_marker, keep_last + peak_marker)
    archived = checkpoint_gb * _archived_after(count_before + peak_marker, archive_every)
    logs = logs_gb_per_day * hours / 24.0
    frame = pd.DataFrame({
        "hours": np.tile(hours, len(TIERS)),
        "tier": np.repeat(TIERS, len(hours)),
        "gb": np.concatenate([hot, archived, np.full_like(hours, data_gb), logs]),
    })
    return frame
