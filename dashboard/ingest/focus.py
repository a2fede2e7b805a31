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
  accepted).
- charge_kind: Tax, Credit, Adjustment and ``ChargeClass = Correction`` → adjustment; Purchase → commitment,
  except support purchases (ServiceName or ChargeDescription names support) → adjustment; Usage → usage.
- Rows with an unreadable or missing ChargePeriodStart, EffectiveCost or BilledCost are rejected.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from dashboard.ingest.billing import eq, map_floats, map_values, single_currency, tag_fields
from dashboard.ingest.charges import ADJUSTMENT, COMMITMENT, SUPPORT, charge_kinds, mentions
from dashboard.ingest.detect import find_column, require_columns
from dashboard.ingest.gpus import gpu_name, instance_gpus
from dashboard.ingest.rows import RowBook, take_strings, text_column
from dashboard.ingest.schema import ColumnPlan, ReaderResult, ReadOptions
from dashboard.ingest.values import parse_datetime

PRICING: dict[str, str] = {
    "standard": "on_demand",
    "on-demand": "on_demand",
    "dynamic": "spot",
    "committed": "reserved",
    "commitment-based": "reserved",
}
# Every column this reader looks at (decode may skip the rest of a large file). All but the amounts repeat
# few distinct values per file (hours, SKUs, tags, resources) and may arrive as Categoricals.
COLUMNS = ColumnPlan(
    keep=(
        "ChargeCategory", "ChargePeriodStart", "ChargePeriodEnd", "EffectiveCost", "BilledCost", "ConsumedQuantity",
        "UsageQuantity", "ConsumedUnit", "UsageUnit", "SkuPriceDetails", "CommitmentDiscountStatus",
        "BillingCurrency", "Tags", "PricingCategory", "ResourceId", "ChargeClass", "ChargeDescription", "ServiceName",
    ),
    categorical=(
        "ChargeCategory", "ChargePeriodStart", "ChargePeriodEnd", "ConsumedUnit", "UsageUnit", "SkuPriceDetails",
        "CommitmentDiscountStatus", "BillingCurrency", "Tags", "PricingCategory", "ResourceId", "ChargeClass",
        "ChargeDescription", "ServiceName",
    ),
)
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


def _sku_gpus(text: Any) -> tuple[float, str | None]:
    """GPUs per unit of consumption and the GPU name of one SkuPriceDetails cell.

    GpuCount wins; otherwise the InstanceType is looked up in the AWS, then the Azure instance table.
    """
    count, instance, gpu = _sku_details(text)
    table_count, table_type = None, None
    if instance is not None:
        for table, key in (("aws_instance_types", instance), ("azure_vm_sizes", instance.removeprefix("Standard_"))):
            table_count, table_type = instance_gpus(key, table)
            if table_count is not None:
                break
    if count is None:
        count = table_count
    name = gpu_name(gpu) or table_type or gpu_name(instance)
    return (np.nan if count is None else count), name


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
        codes, uniques = pd.factorize(table[sku_column], use_na_sentinel=True)
        per_sku = [_sku_gpus(u) for u in uniques]
        gpu_count = pd.Series(np.array([c for c, _ in per_sku] + [np.nan])[codes], index=table.index)
        sku_type = take_strings(codes, [t for _, t in per_sku], table.index)
    else:
        gpu_count = pd.Series(np.nan, index=table.index)
        sku_type = pd.Series(pd.NA, index=table.index, dtype="string")

    unused = eq(text_column(table, col("CommitmentDiscountStatus"), lower=True), "unused")
    is_usage = eq(category, "usage") | category.isna().to_numpy(dtype=bool)
    gpu_hours = (hours * gpu_count).where(is_usage & ~unused).fillna(0.0)
    gpu_type = sku_type.where(gpu_hours > 0)

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
    support = mentions(text_column(table, col("ServiceName")), SUPPORT) | mentions(
        text_column(table, col("ChargeDescription")), SUPPORT
    )
    correction = eq(text_column(table, col("ChargeClass"), lower=True), "correction")
    charge_kind = charge_kinds(
        table.index,
        (eq(category, "tax", "credit", "adjustment") | correction, ADJUSTMENT),
        (eq(category, "purchase") & support, ADJUSTMENT),
        (eq(category, "purchase"), COMMITMENT),
    )
    pricing_column = col("PricingCategory")
    return book.result(
        {
            "period_start": start,
            "period_end": end,
            "gpu_hours": gpu_hours,
            "cost": cost,
            "billed_cost": billed,
            "currency": currency,
            "pricing": map_values(table[pricing_column], PRICING) if pricing_column else text_column(table, None),
            "charge_kind": charge_kind,
            "gpu_type": gpu_type,
            "resource_id": text_column(table, col("ResourceId")),
            **tags,
        },
        warnings,
    )
