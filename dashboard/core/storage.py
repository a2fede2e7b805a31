"""Storage over the run: checkpoints under a keep-last-K policy, weight archives, datasets and logs.

Checkpoint i (i = 1, 2, ...) is written at wall-clock time i·τ. The hot tier holds the newest K; while
checkpoint i is written the oldest is still there, so the hot tier briefly holds K+1 (the sawtooth).
Two kinds of archive go to the cold tier and are kept: a fixed count n of weight-only snapshots (no optimizer
state), the k-th at k·T/n so the last is the final model; and, when asked for, a copy of every M-th full
checkpoint (weights and optimizer state). Datasets are stored for the whole run on the cold (object) tier, and
logs grow linearly. Costs are GB-months at 730 hours per month. After training, what is left (the last K
checkpoints, the archives, the datasets and the logs) stays on the cold tier for the scenario's retention months.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

HOURS_PER_MONTH = 730.0
COUNT_TOLERANCE = 1e-9  # ⌊T/τ⌋ counts a write that ends exactly at T despite rounding in T/τ
TIERS = ("hot_checkpoints", "archived_checkpoints", "datasets", "logs")


def checkpoints_written(run_hours, interval_hours):
    """Checkpoints completed during the run: ⌊T/τ⌋."""
    return np.floor(run_hours / interval_hours + COUNT_TOLERANCE)


def _count_hours(final_count, run_hours, step_hours):
    """∫₀ᵀ min(⌊t/step⌋, cap) dt = c·T − step·c(c+1)/2, where c is the count reached at T (≤ cap).

    The count on a tier rises by one every `step` hours until it reaches its cap (K on the hot tier; none
    for archives, whose step is M·τ), so its integral only needs its final value.
    """
    return final_count * (run_hours - (final_count + 1) * (step_hours / 2.0))


def _archived_after(i, m):
    safe_m = np.where(m > 0, m, 1)
    return np.floor(i / safe_m) * (m > 0)


def dataset_gb(raw_tokens, bytes_per_token, versions):
    """Corpus bytes kept: raw tokens × bytes per token × copies."""
    return raw_tokens * (bytes_per_token * versions / 1e9)


def weight_archive_hours(run_hours, archive_count):
    """∫₀ᵀ (weight archives held) dt for n snapshots at k·T/n (k = 1..n): Σ (T − k·T/n) = T·(n − 1)/2."""
    return run_hours * np.maximum(archive_count - 1.0, 0.0) / 2.0


def volumes(run_hours, interval_hours, checkpoint_gb, keep_last, archive_every, data_gb, logs_gb_per_day,
            weights_gb=0.0, archive_count=0):
    """The run's storage in closed form (vectorised), from one count of the checkpoints written.

    `weights_gb` is one weight-only snapshot and `archive_count` how many are archived over the run (the last at
    its end). Returns `gb_hours` per tier over the run, `peak_gb` (the most stored at once: K+1 hot checkpoints
    while the last is written, the archives, data and logs) and `retained_gb` (what is left when training ends:
    the last K checkpoints, the archives, the datasets and the logs).
    """
    written = checkpoints_written(run_hours, interval_hours)
    hot = np.minimum(written, keep_last)
    archived = _archived_after(written, archive_every)
    archive_step_hours = interval_hours * np.where(archive_every > 0, archive_every, 1)
    logs_gb = logs_gb_per_day * run_hours / 24.0
    retained = checkpoint_gb * (hot + archived) + weights_gb * archive_count + data_gb + logs_gb
    return {
        "gb_hours": {
            "hot_checkpoints": checkpoint_gb * _count_hours(hot, run_hours, interval_hours),
            "archived_checkpoints": checkpoint_gb * _count_hours(archived, run_hours, archive_step_hours)
            + weights_gb * weight_archive_hours(run_hours, archive_count),
            "datasets": data_gb * run_hours,
            "logs": logs_gb / 2.0 * run_hours,  # grows linearly: ½ · (rate · T / 24) · T
        },
        "peak_gb": retained + checkpoint_gb * (written > keep_last),  # the K+1st while the last is written
        "retained_gb": retained,
    }


def retention_cost(gb, months, cold_per_gb_month):
    """$ for keeping what the run leaves behind on the cold tier for `months` after training."""
    return gb * months * cold_per_gb_month


def storage_cost(gb_hours, hot_per_gb_month, cold_per_gb_month):
    """$ per tier: hot checkpoints at the hot price; archives, datasets and logs at the cold price."""
    prices = {
        "hot_checkpoints": hot_per_gb_month,
        "archived_checkpoints": cold_per_gb_month,
        "datasets": cold_per_gb_month,
        "logs": cold_per_gb_month,
    }
    return {tier: gb_hours[tier] * (prices[tier] / HOURS_PER_MONTH) for tier in TIERS}


def _sampled(count: int, limit: int) -> np.ndarray:
    """1..count, or `limit` of them evenly spaced (first and last kept): never a range of every one (a 1-minute
    interval over years of wall-clock would be billions of writes)."""
    if count <= limit:
        return np.arange(1, count + 1, dtype=float)
    return np.unique(np.round(np.linspace(1, count, limit)))


def storage_timeline(run_hours, interval_hours, checkpoint_gb, keep_last, archive_every, data_gb, logs_gb_per_day,
                     max_points=2000, weights_gb=0.0, archive_count=0):
    """Stored GB per tier over one run, as a long frame (hours, tier, gb) for plotting.

    Points sit just before and just after each checkpoint write, so the hot tier's K+1 peaks show, and just
    before and after each weight archive; with more writes than `max_points` allows, writes (and archives) are
    sampled evenly (the first and last are kept).
    """
    n = int(checkpoints_written(run_hours, interval_hours))
    sampled = max(max_points // 2, 1)
    writes = _sampled(n, sampled)
    snapshots = _sampled(int(archive_count), sampled) if archive_count > 0 and run_hours > 0 else np.empty(0)
    snapshot_hours = snapshots * (run_hours / archive_count) if len(snapshots) else snapshots
    write_hours = writes * interval_hours
    # Writes: (count before, peak) then (count after); archives: (held before) then (held after), at their times.
    hours = np.concatenate([[0.0], np.repeat(write_hours, 2), np.repeat(snapshot_hours, 2), [run_hours]])
    written_at_snapshots = checkpoints_written(snapshot_hours, interval_hours)
    count_before = np.concatenate([[0.0], np.column_stack([writes - 1, writes]).ravel(),
                                   np.repeat(written_at_snapshots, 2), [float(n)]])
    peak_marker = np.concatenate([[0.0], np.tile([1.0, 0.0], len(writes)), np.zeros(2 * len(snapshots)), [0.0]])
    # Weight archives held: those taken strictly before a write; k − 1 then k at the k-th archive.
    per_snapshot = run_hours / archive_count if archive_count > 0 else np.inf
    held_at_writes = np.clip(np.ceil(write_hours / per_snapshot - COUNT_TOLERANCE) - 1.0, 0.0, archive_count)
    held = np.concatenate([[0.0], np.repeat(held_at_writes, 2), np.column_stack([snapshots - 1, snapshots]).ravel(),
                           [float(archive_count) if run_hours > 0 else 0.0]])
    order = np.argsort(hours, kind="stable")
    hours, count_before, peak_marker, held = hours[order], count_before[order], peak_marker[order], held[order]
    hot = checkpoint_gb * np.minimum(count_before + peak_marker, keep_last + peak_marker)
    archived = checkpoint_gb * _archived_after(count_before + peak_marker, archive_every) + weights_gb * held
    logs = logs_gb_per_day * hours / 24.0
    frame = pd.DataFrame({
        "hours": np.tile(hours, len(TIERS)),
        "tier": np.repeat(TIERS, len(hours)),
        "gb": np.concatenate([hot, archived, np.full_like(hours, data_gb), logs]),
    })
    return frame
