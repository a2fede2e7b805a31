"""Any CSV of GPU usage the user maps by hand (the ``generic`` format).

The user maps canonical fields to source columns (``ReadOptions.mapping``). Required: ``period_start``
and either ``gpu_hours`` or ``gpu_count`` with a duration (``duration_h`` or ``period_end``).

Rules:
- ``gpu_hours``, when mapped, is authoritative; otherwise gpu_hours = gpu_count × duration, the duration
  being ``duration_h`` or else ``period_end - period_start``.
- ``period_end`` is the mapped column, else ``period_start + duration_h``, else
  ``period_start + gpu_hours / gpu_count``, else ``period_start`` (a point in time).
- Naive timestamps are read in ``options.timezone``, or as UTC (with a warning) when no zone was given.
- ``cost`` missing from the mapping gives 0.0 with a warning; ``billed_cost`` defaults to ``cost``.
- ``pricing`` values are normalised to ``reserved``/``on_demand``/``spot``; other values become NA with a
  warning. ``run_state`` is normalised to the Slurm vocabulary where it is a known Slurm or W&B state and
  otherwise upper-cased as given.
- Empty or unreadable required cells (times, GPU figures, a mapped cost) and negative GPU figures reject the
  row; an unreadable mapped ``tokens`` cell rejects the row, an empty one gives NaN.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from dashboard.ingest.engine import mapped_columns
from dashboard.ingest.plausible import duration_s
from dashboard.ingest.rows import Rows, cannot_read, text_column
from dashboard.ingest.run_states import normalise_run_state
from dashboard.ingest.schema import UnreadableFile
from dashboard.ingest.spec import Format
from dashboard.ingest.values import parse_datetime, parse_number

MAPPABLE_FIELDS: dict[str, str] = {
    "period_start": "When the usage started (date or date-time). Required.",
    "period_end": "When the usage ended; with gpu_count it gives the duration.",
    "duration_h": "How long the GPUs were used, in hours; with gpu_count it gives GPU-hours.",
    "gpu_hours": "GPU-hours used on the row (GPUs × hours); wins over gpu_count × duration.",
    "gpu_count": "Number of GPUs used at once; needs duration_h or period_end unless gpu_hours is mapped.",
    "cost": "Effective (amortised) cost of the row; 0 when not mapped.",
    "billed_cost": "Invoiced cost of the row; defaults to cost.",
    "currency": "Currency code of the costs (e.g. USD).",
    "pricing": "Pricing model: reserved, on_demand or spot (on-demand, preemptible … accepted).",
    "gpu_type": "Accelerator model, e.g. H100.",
    "resource_id": "Instance, node or job id the usage ran on.",
    "team": "Team or cost centre the usage belongs to.",
    "project": "Project or experiment group.",
    "run_id": "Training run id, used to join with run logs.",
    "run_state": "Final state of the run (COMPLETED, FAILED, CANCELLED, ...).",
    "tokens": "Tokens processed by the run.",
}

_PRICING_ALIASES: dict[str, str] = {
    "reserved": "reserved", "committed": "reserved", "commitment": "reserved", "ri": "reserved",
    "savings plan": "reserved", "savingsplan": "reserved", "cud": "reserved",
    "on_demand": "on_demand", "on-demand": "on_demand", "on demand": "on_demand", "ondemand": "on_demand",
    "od": "on_demand", "standard": "on_demand",
    "spot": "spot", "preemptible": "spot", "interruptible": "spot", "dynamic": "spot", "low priority": "spot",
}


_NAIVE_TIME = re.compile(r"^\s*\d{4}-\d\d-\d\d([ T]\d\d:\d\d(:\d\d(\.\d+)?)?)?\s*$")


def naive_time_count(raw: pd.Series) -> int:
    """How many cells hold a date or date-time with no offset or zone."""
    return int(raw.astype("string").str.match(_NAIVE_TIME).fillna(False).sum())


def _resolve_mapping(table: pd.DataFrame, mapping: Mapping[str, str] | None) -> dict[str, str]:
    """Canonical field → actual column of ``table``; UnreadableFile when the mapping is unusable."""
    columns = ", ".join(str(c) for c in table.columns)
    mapping = {field: source for field, source in (mapping or {}).items() if source}
    unknown = sorted(set(mapping) - set(MAPPABLE_FIELDS))
    if unknown:
        raise UnreadableFile(
            f"The column mapping names fields this importer does not know: {', '.join(unknown)}. "
            f"Map source columns to these fields instead: {', '.join(MAPPABLE_FIELDS)}."
        )
    required = ["period_start"]
    if "gpu_hours" not in mapping:
        required.append("gpu_count")
        if "duration_h" not in mapping and "period_end" not in mapping:
            required.append("duration_h or period_end")
    missing = [field for field in required if field.split(" or ")[0] not in mapping]
    if missing:
        raise UnreadableFile(
            "A generic CSV needs a column mapping: period_start plus either gpu_hours, or gpu_count with "
            f"duration_h or period_end. Not mapped: {', '.join(missing)}. The file's columns are: {columns}."
        )
    return mapped_columns(list(table.columns), mapping)


def derive(rows: Rows) -> dict[str, object]:
    """Read a hand-mapped usage CSV into the canonical table (rules in the module docstring)."""
    table, options = rows.table, rows.options
    columns = _resolve_mapping(table, options.mapping)
    raw = {field: text_column(table, column) for field, column in columns.items()}
    warnings = rows.warnings

    def number(field: str) -> tuple[pd.Series, pd.Series]:
        return parse_number(raw[field], decimal_comma=options.decimal_comma)

    start, start_bad = parse_datetime(raw["period_start"], timezone=options.timezone)
    checks: list[tuple[pd.Series, str | pd.Series]] = [
        (raw["period_start"].isna(), f"{columns['period_start']}: empty start time"),
        (start_bad, cannot_read(columns["period_start"], raw["period_start"], "a date-time")),
    ]
    if options.timezone is None:
        naive = sum(naive_time_count(raw[f]) for f in ("period_start", "period_end") if f in raw)
        if naive:
            warnings.append(
                f"{naive} timestamps carry no time zone and were read as UTC; give the file's time zone "
                "if they are local times."
            )

    end = pd.Series(pd.NaT, index=table.index, dtype="datetime64[ns, UTC]")
    if "period_end" in raw:
        end, end_bad = parse_datetime(raw["period_end"], timezone=options.timezone)
        checks += [(end_bad, cannot_read(columns["period_end"], raw["period_end"], "a date-time")),
                   (end < start, f"{columns['period_end']}: ends before {columns['period_start']}")]

    duration_h = pd.Series(float("nan"), index=table.index)
    if "duration_h" in raw:
        duration_h, duration_bad = number("duration_h")
        checks += [(duration_bad, cannot_read(columns["duration_h"], raw["duration_h"], "a number of hours")),
                   (duration_h < 0, f"{columns['duration_h']}: negative duration")]
    elif "period_end" in raw:
        duration_h = (end - start).dt.total_seconds() / 3600

    gpu_count = pd.Series(float("nan"), index=table.index)
    if "gpu_count" in raw:
        gpu_count, count_bad = number("gpu_count")
        checks += [(count_bad, cannot_read(columns["gpu_count"], raw["gpu_count"], "a GPU count")),
                   (gpu_count < 0, f"{columns['gpu_count']}: negative GPU count")]

    if "gpu_hours" in raw:
        gpu_hours, hours_bad = number("gpu_hours")
        checks += [(raw["gpu_hours"].isna(), f"{columns['gpu_hours']}: empty GPU-hours"),
                   (hours_bad, cannot_read(columns["gpu_hours"], raw["gpu_hours"], "GPU-hours")),
                   (gpu_hours < 0, f"{columns['gpu_hours']}: negative GPU-hours")]
    else:
        gpu_hours = gpu_count * duration_h
        checks.append((raw["gpu_count"].isna(), f"{columns['gpu_count']}: empty GPU count"))
        duration_field = "duration_h" if "duration_h" in raw else "period_end"
        checks.append((raw[duration_field].isna(), f"{columns[duration_field]}: empty duration"))

    if "period_end" not in raw:
        derived_h = duration_h.fillna(gpu_hours / gpu_count.where(gpu_count > 0)).fillna(0.0)
        seconds = duration_s(rows, derived_h * 3600, columns.get("duration_h") or columns["gpu_hours"])
        end = start + pd.to_timedelta(seconds, unit="s").fillna(pd.Timedelta(0))

    if "cost" in raw:
        cost, cost_bad = number("cost")
        checks += [(raw["cost"].isna(), f"{columns['cost']}: empty cost"),
                   (cost_bad, cannot_read(columns["cost"], raw["cost"], "a cost"))]
        if "currency" not in raw:
            warnings.append("No currency column is mapped: costs are kept without a currency.")
    else:
        cost = pd.Series(0.0, index=table.index)
        warnings.append("No cost column is mapped: costs are set to 0 and will be priced from the plan.")
    billed_cost = cost
    if "billed_cost" in raw:
        billed_cost, billed_bad = number("billed_cost")
        checks.append((billed_bad, cannot_read(columns["billed_cost"], raw["billed_cost"], "a cost")))
        billed_cost = billed_cost.fillna(cost)

    tokens = pd.Series(float("nan"), index=table.index)
    if "tokens" in raw:
        tokens, tokens_bad = number("tokens")
        checks.append((tokens_bad, cannot_read(columns["tokens"], raw["tokens"], "a token count")))

    pricing = pd.Series(pd.NA, index=table.index, dtype="string")
    if "pricing" in raw:
        pricing = raw["pricing"].str.lower().map(_PRICING_ALIASES).astype("string")
        unknown = sorted(set(raw["pricing"][pricing.isna() & raw["pricing"].notna()].unique()))
        if unknown:
            warnings.append(
                f"Unrecognised pricing values kept as unknown: {', '.join(unknown[:10])}. "
                "Expected reserved, on_demand or spot."
            )

    run_state = pd.Series(pd.NA, index=table.index, dtype="string")
    if "run_state" in raw:
        known = normalise_run_state(raw["run_state"])
        run_state = known.fillna(raw["run_state"].str.upper())

    for mask, reason in checks:
        rows.reject(mask, reason)
    return {
        "period_start": start,
        "period_end": end,
        "gpu_hours": gpu_hours,
        "cost": cost,
        "billed_cost": billed_cost,
        "currency": raw.get("currency", pd.NA),
        "pricing": pricing,
        "gpu_type": raw.get("gpu_type", pd.NA),
        "resource_id": raw.get("resource_id", pd.NA),
        "team": raw.get("team", pd.NA),
        "project": raw.get("project", pd.NA),
        "run_id": raw.get("run_id", pd.NA),
        "run_state": run_state,
        "tokens": tokens,
        "gpus": gpu_count,
    }


FORMAT = Format(
    id="generic",
    title="any usage CSV, with a column mapping",
    noun="a generic usage table",
    kind="either",
    order=90,
    columns={},
    derive=derive,
)
