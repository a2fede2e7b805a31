"""Side-by-side comparison of 2–4 scenarios: the inputs that differ, the headline outputs and their differences.

The table holds raw values (the engine's numbers, the scenario's inputs); pages and the report format and
highlight them. `to_csv_bytes` exports it with the formula-injection escaping of `dashboard.ingest.export`.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

import pandas as pd

from dashboard.core.scenario import Scenario
from dashboard.ingest.export import to_safe_csv

MIN_SCENARIOS = 2
MAX_SCENARIOS = 4
FIXED_COLUMNS = ("section", "item", "key")
DELTA_PREFIX = "Δ "
INPUT_SECTION = "Input"
OUTPUT_SECTION = "Output"

# Every scenario key except the file version and the scenario's own name, in the schema's order.
INPUT_KEYS = tuple(name for name in Scenario.model_fields if name not in {"schema_", "name"})

HEADLINES = (
    ("cost_total_usd", "Total cost ($)"),
    ("gpu_hours_total", "GPU-hours"),
    ("wall_clock_days", "Wall-clock days"),
    ("cost_per_million_tokens", "$ per million tokens"),
    ("predicted_loss", "Predicted loss (nats per token)"),
    ("storage_peak_gb", "Storage peak (GB)"),
    ("overhead_fraction", "Overhead: stall + rework (share of compute)"),
    ("budget_status", "Budget status"),
    ("feasibility_status", "Can it run (memory per GPU, layout)"),
)

# Monte Carlo rows (`MonteCarlo.summary()` percentiles), each placed after its point estimate's row.
RANGE_ROWS = {
    "cost_total_usd": (("p10", "Total cost P10 ($)"), ("p90", "Total cost P90 ($)")),
    "gpu_hours_total": (("p10", "GPU-hours P10"), ("p90", "GPU-hours P90")),
    "wall_clock_days": (("p10", "Wall-clock days P10"), ("p90", "Wall-clock days P90")),
}

INPUT_LABELS = {
    "total_params": "Total parameters",
    "active_params": "Active parameters (MoE)",
    "tokens": "Training tokens",
    "attention_flops": "Attention FLOPs term",
    "activation_recompute": "Activation recomputation (none / selective / full)",
    "gpu_type": "GPU type",
    "peak_tflops": "Peak dense BF16 (TFLOP/s per GPU)",
    "gpu_count": "GPUs in the main run",
    "gpus_per_node": "GPUs per node",
    "mfu": "MFU (fraction)",
    "price_reserved_per_gpu_hour": "Reserved price ($/GPU-hour)",
    "price_on_demand_per_gpu_hour": "On-demand price ($/GPU-hour)",
    "price_spot_per_gpu_hour": "Spot price ($/GPU-hour)",
    "reserved_share": "Reserved share (fraction of GPU-hours)",
    "spot_share": "Spot share (fraction of GPU-hours)",
    "node_failures_per_1000_node_days": "Node failures (per 1,000 node-days)",
    "spot_interruptions_per_1000_node_days": "Spot interruptions (per 1,000 node-days)",
    "checkpoint_interval_min": "Checkpoint interval (min)",
    "checkpoint_write_gb_per_s": "Checkpoint write bandwidth (GB/s)",
    "checkpoint_write_s": "Checkpoint stall per write (s)",
    "checkpoint_async": "Asynchronous checkpoints",
    "restart_min": "Restart time (min)",
    "experiment_overhead": "Experiments (× main run)",
    "eval_overhead": "Evaluation (× main run)",
    "debug_overhead": "Debugging (× main run)",
    "people_cost_usd": "People ($)",
    "budget_usd": "Budget ($)",
    "scaling_fit": "Scaling-law fit",
    "method": "Training method",
    "tst_speedup": "TST speedup (×)",
    "tst_token_multiplier": "TST raw-token multiplier (×)",
    "tst_pilot_fraction": "TST pilot (fraction of the baseline run's cost)",
    "tst_switching_cost_usd": "TST switching cost ($)",
    "tensor_parallel": "Tensor parallel (TP)",
    "pipeline_parallel": "Pipeline parallel (PP)",
    "expert_parallel": "Expert parallel (EP)",
    "zero_stage": "ZeRO stage",
    "micro_batch_size": "Micro-batch (sequences per GPU)",
    "global_batch_tokens": "Global batch (tokens per step)",
    "n_heads": "Attention heads",
    "gpu_memory_gb": "GPU memory (GB)",
    "unique_tokens": "Unique training tokens",
}


def input_label(key: str) -> str:
    """A readable label with its unit for the common inputs; the key itself for the rest (it carries its unit)."""
    return INPUT_LABELS.get(key, key)


def _clashes(candidate: str, taken: set[str]) -> bool:
    """A column name already used, or one that is (or whose Δ column would be) another's Δ column name."""
    return (candidate in taken or f"{DELTA_PREFIX}{candidate}" in taken
            or (candidate.startswith(DELTA_PREFIX) and candidate.removeprefix(DELTA_PREFIX) in taken))


def unique_names(names: list[str]) -> list[str]:
    """Scenario names made unique as column names: a repeat gets " (2)", " (3)", …; the fixed columns are taken."""
    taken = set(FIXED_COLUMNS)
    unique = []
    for name in names:
        candidate, number = name, 1
        while _clashes(candidate, taken):
            number += 1
            candidate = f"{name} ({number})"
        taken.add(candidate)
        unique.append(candidate)
    return unique


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same kind (true/false is not the number 1; two NaN are the same)."""
    if _is_number(a) and _is_number(b):
        return bool(a == b or (math.isnan(a) and math.isnan(b)))
    return type(a) is type(b) and a == b


def _delta(value: Any, first: Any) -> float:
    """value − first for two numbers; NaN for text, true/false, a missing value or NaN."""
    if _is_number(value) and _is_number(first):
        return float(value) - float(first)
    return math.nan


def input_rows(scenarios: list[Scenario], *, differing_only: bool) -> list[tuple[str, str, list[Any]]]:
    """(key, label, one value per scenario) for every input, or only those whose value is not the same in all."""
    dumps = [scenario.model_dump() for scenario in scenarios]
    rows = []
    for key in INPUT_KEYS:
        values = [dump[key] for dump in dumps]
        if differing_only and all(_same(value, values[0]) for value in values[1:]):
            continue
        rows.append((key, input_label(key), values))
    return rows


def inputs_table(scenarios: list[Scenario]) -> pd.DataFrame:
    """Every input of one or more scenarios: columns item, key, then one per scenario (names made unique)."""
    if not scenarios:
        raise ValueError("inputs_table needs at least one scenario")
    columns = unique_names([scenario.name for scenario in scenarios])
    records = [
        {"item": label, "key": key, **dict(zip(columns, values, strict=True))}
        for key, label, values in input_rows(scenarios, differing_only=False)
    ]
    return pd.DataFrame.from_records(records, columns=["item", "key", *columns])


def comparison_table(
    scenarios: list[Scenario], results: list[dict[str, Any]], ranges: list[dict[str, Any]] | None = None
) -> pd.DataFrame:
    """Differing inputs, then headline outputs (and P10/P90 rows with `ranges`), one column per scenario.

    `results` are `engine.estimate` of each scenario and `ranges` their `MonteCarlo.summary()`, in the same
    order. Columns: section, item, key, one per scenario named by its name (made unique), then `Δ <name>` for
    each scenario after the first: its value minus the first scenario's, NaN where either value is not a number.
    """
    count = len(scenarios)
    if not MIN_SCENARIOS <= count <= MAX_SCENARIOS:
        raise ValueError(f"compare {MIN_SCENARIOS} to {MAX_SCENARIOS} scenarios, not {count}")
    if len(results) != count:
        raise ValueError(f"{count} scenarios but {len(results)} results: pass one engine result per scenario")
    if ranges is not None and len(ranges) != count:
        raise ValueError(f"{count} scenarios but {len(ranges)} ranges: pass one Monte Carlo summary per scenario")

    rows = [(INPUT_SECTION, label, key, values) for key, label, values in input_rows(scenarios, differing_only=True)]
    for key, label in HEADLINES:
        rows.append((OUTPUT_SECTION, label, key, [result[key] for result in results]))
        if ranges is not None:
            rows.extend(
                (OUTPUT_SECTION, range_label, f"{key}_{percentile}", [summary[percentile][key] for summary in ranges])
                for percentile, range_label in RANGE_ROWS.get(key, ())
            )

    columns = unique_names([scenario.name for scenario in scenarios])
    deltas = [f"{DELTA_PREFIX}{name}" for name in columns[1:]]
    records = []
    for section, label, key, values in rows:
        record = {"section": section, "item": label, "key": key}
        record.update(zip(columns, values, strict=True))
        record.update({delta: _delta(value, values[0]) for delta, value in zip(deltas, values[1:], strict=True)})
        records.append(record)
    table = pd.DataFrame.from_records(records, columns=[*FIXED_COLUMNS, *columns, *deltas])
    table[columns] = table[columns].astype(object)
    table[deltas] = table[deltas].astype(float)
    return table


def scenario_columns(table: pd.DataFrame) -> list[str]:
    """The per-scenario value columns of a comparison table (after the fixed ones, before the Δ columns)."""
    count = (len(table.columns) - len(FIXED_COLUMNS) + 1) // 2
    return list(table.columns[len(FIXED_COLUMNS):len(FIXED_COLUMNS) + count])


def highlight_mask(table: pd.DataFrame) -> pd.DataFrame:
    """True for every scenario cell whose value differs from the first scenario's in its row; False elsewhere."""
    columns = scenario_columns(table)
    mask = pd.DataFrame(False, index=table.index, columns=table.columns)
    first = table[columns[0]]
    for column in columns[1:]:
        mask[column] = [not _same(value, base) for value, base in zip(table[column], first, strict=True)]
    return mask


def to_csv_bytes(table: pd.DataFrame) -> bytes:
    """The comparison table as formula-injection-safe CSV bytes."""
    return to_safe_csv(table)
