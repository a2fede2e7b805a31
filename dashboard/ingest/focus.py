"""Reader for FinOps FOCUS 1.0–1.3 cost and usage exports (CSV or Parquet, any provider).

Rules:
- cost = ``EffectiveCost`` (amortised), billed_cost = ``BilledCost``. The import reconciles against the
  file's ``EffectiveCost`` column: every row is used (non-GPU, tax, credit and purchase rows too, with
  gpu_hours 0), so Σ cost equals Σ EffectiveCost and Σ billed_cost equals Σ BilledCost over the rows not
  rejected. Commitment purchases carry EffectiveCost 0 by the spec, so nothing is counted twice.
- Nothing is excluded by rule.
- gpu_hours = ``ConsumedQuantity`` (converted to hours from ``ConsumedUnit``) × ``SkuPriceDetails.GpuCount``
  on Usage rows; when GpuCount is missing the ``InstanceType`` is looked up in the AWS and Azure instance
  tables. Unused-commitment rows (``CommitmentDiscountStatus = Unused``) have no consumption: gpu_hours 0,
  and their cost is reported in a warning as idle commitment.
- pricing: ``PricingCategory`` Standard → on_demand, Dynamic → spot, Committed → reserved (and the 1.0-preview
  words On-Demand / Commitment-Based); Other or empty → NA.
- team / project / run_id from the ``Tags`` JSON (``team``, ``project``, ``run_id``/``run``; ``user:`` prefixes
  accepted). Rows with an unreadable or missing ChargePeriodStart, EffectiveCost or BilledCost are rejected.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from dashboard.ingest.billing import (
    RowBook,
    eq,
    factorized,
    gpu_names,
    lookup_instances,
    map_floats,
    map_values,
    single_currency,
    tag_fields,
    text_column,
)
from dashboard.ingest.detect import find_column, require_columns
from dashboard.ingest.schema import ReaderResult, ReadOptions
from dashboard.ingest.values import parse_datetime

PRICING: dict[str, str] = {
    "standard": "on_demand",
    "on-demand": "on_demand",
    "dynamic": "spot",
    "committed": "reserved",
    "commitment-based": "reserved",
}
HOURS_PER_UNIT: dict[str, float] = {
    "hours": 1.0,
    "hour": 1.0,
    "hrs": 1.0,
    "hr": 1.0,
    "h": 1.0,
    "minutes": 1 / 60,
    "minute": 1 / 60,
    "min": 1 / 60,
    "seconds": 1 / 3600,
    "second": 1 / 3600,
    "s": 1 / 3600,
    "days": 24.0,
    "day": 24.0,
}


def _sku_details(text: Any) -> tuple[float | None, str | None, str | None]:
    """GpuCount, InstanceType and any GPU name from one SkuPriceDetails JSON cell."""
    try:
        details = json.loads(text)
    except (TypeError, ValueError):
        return None, None, None
    if not isinstance(details, dict):
        return None, None, None
    lowered = {str(k).lower(): v for k, v in details.items()}
    count = lowered.get("gpucount", lowered.get("x_gpucount"))
    try:
        count = float(count) if count is not None else None
    except (TypeError, ValueError):
        count = None
    instance = lowered.get("instancetype", lowered.get("x_instancetype"))
    gpu = next((str(v) for k, v in lowered.items() if "gpu" in k and "count" not in k and v), None)
    return count, None if instance is None else str(instance), gpu


def read(table: pd.DataFrame, options: ReadOptions) -> ReaderResult:
    """Turn a decoded FOCUS table into canonical usage rows."""
    require_columns(list(table.columns), "focus")
    columns = list(table.columns)

    def col(*names: str) -> str | None:
        return find_column(columns, *names)

    book = RowBook(table, options.decimal_comma)
    warnings: list[str] = []
    category = text_column(table, col("ChargeCategory"), lower=True)

    start_column = col("ChargePeriodStart")
    start, bad = parse_datetime(table[start_column])
    book.reject_bad(bad, start_column, "a date-time")
    book.reject_missing(start, np.ones(len(table), bool), start_column)
    end_column = col("ChargePeriodEnd")
    end = start
    if end_column is not None:
        end, bad = parse_datetime(table[end_column])
        book.reject_bad(bad, end_column, "a date-time")
        end = end.fillna(start)

    effective_column, billed_column = col("EffectiveCost"), col("BilledCost")
    cost = book.number(effective_column, "a cost")
    book.reject_missing(cost, np.ones(len(table), bool), effective_column)
    billed = book.number(billed_column, "a cost")
    book.reject_missing(billed, np.ones(len(table), bool), billed_column)

    quantity_column = col("ConsumedQuantity", "UsageQuantity")
    quantity = book.number(quantity_column, "a quantity")
    unit_column = col("ConsumedUnit", "UsageUnit")
    if unit_column is None:
        hours = quantity
        warnings.append("No ConsumedUnit column: ConsumedQuantity was taken to be in hours.")
    else:
        factor = map_floats(table[unit_column], HOURS_PER_UNIT)
        hours = quantity * factor

    sku_column = col("SkuPriceDetails")
    if sku_column is not None:
        count_raw, instance_raw, gpu_raw = factorized(table[sku_column], _sku_details, 3)
        gpu_count = pd.Series(count_raw, index=table.index, dtype="float64")
        instance = pd.Series(instance_raw, index=table.index, dtype="string")
        sku_gpu = gpu_names(pd.Series(gpu_raw, index=table.index, dtype="string"))
    else:
        gpu_count = pd.Series(np.nan, index=table.index)
        instance = pd.Series(pd.NA, index=table.index, dtype="string")
        sku_gpu = instance
    aws_count, aws_type = lookup_instances(instance, "aws_instance_types")
    azure_count, azure_type = lookup_instances(instance.str.removeprefix("Standard_"), "azure_vm_sizes")
    gpu_count = gpu_count.fillna(aws_count).fillna(azure_count)

    unused = eq(text_column(table, col("CommitmentDiscountStatus"), lower=True), "unused")
    is_usage = eq(category, "usage") | category.isna().to_numpy(dtype=bool)
    gpu_hours = (hours * gpu_count).where(is_usage & ~unused).fillna(0.0)
    gpu_type = sku_gpu.fillna(aws_type).fillna(azure_type).fillna(gpu_names(instance))
    gpu_type = gpu_type.where(gpu_hours > 0)

    currency_column = col("BillingCurrency")
    currency = text_column(table, currency_column).str.upper()
    code = single_currency(currency[book.open])
    currency = currency.fillna(code) if code else currency

    if unused.any():
        idle = float(cost[unused & book.open].sum())
        warnings.append(
            f"Unused commitment (CommitmentDiscountStatus = Unused): {idle:,.2f} {code or ''}"
            " of cost with no usage behind it."
        )

    tags = tag_fields(table[col("Tags")] if col("Tags") else None, table.index)
    return book.result(
        {
            "period_start": start,
            "period_end": end,
            "gpu_hours": gpu_hours,
            "cost": cost,
            "billed_cost": billed,
            "currency": currency,
            "pricing": map_values(text_column(table, col("PricingCategory")), PRICING),
            "gpu_type": gpu_type,
            "resource_id": text_column(table, col("ResourceId")),
            **tags,
        },
        warnings,
    )
