"""A plan with no failures, checkpoint stalls, storage or extras: its cost is compute GPU-hours × blended price, at
an entered 40 % MFU (the hand-worked figures divide by it; the predicted MFU has tests of its own)."""

COMPUTE_ONLY = dict(
    mfu=0.4,
    node_failures_per_1000_node_days=0.0, spot_interruptions_per_1000_node_days=0.0, checkpoint_async=True,
    experiment_overhead=0.0, eval_overhead=0.0, debug_overhead=0.0, data_cost_per_billion_tokens=0.0,
    dataset_bytes_per_token=1e-9, logs_gb_per_day=0.0, keep_last_checkpoints=1, archive_every_nth=0,
    weight_archives=0,
    storage_hot_per_gb_month=0.0, storage_cold_per_gb_month=0.0,
)
