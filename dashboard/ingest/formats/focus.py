"""FinOps FOCUS 1.0–1.3 cost and usage exports (CSV or Parquet, any provider); FOCUS 0.5 is refused.

Rules:
- cost = ``EffectiveCost`` (amortised), billed_cost = ``BilledCost``. The import reconciles against the
  file's ``EffectiveCost`` column: every row is used (non-GPU, tax, credit and purchase rows too, with
  gpu_hours 0), so Σ cost equals Σ EffectiveCost and Σ billed_cost equals Σ BilledCost over the rows not
  rejected. Commitment purchases carry EffectiveCost 0 by the spec, so nothing is counted twice.
- Nothing is excluded by rule.
- gpu_hours = ``ConsumedQuantity`` (converted to hours from ``ConsumedUnit``) × ``SkuPriceDetails.GpuCount``
  on Usage rows; when GpuCount is missing the ``InstanceType`` is looked up in the AWS and Azure instance
  tables. FOCUS 1.0 has no SkuPriceDetails: the instance is then found in the provider's ``x_`` instance and
  usage-type columns, ``SkuMeter``, ``ChargeDescription`` ("$1.624 per On Demand Linux g5.4xlarge Instance
  Hour") or ``SkuId``. Rows that look like GPU compute (a GPU instance family or GPU name) whose GPU count
  cannot be found add no GPU-hours and are counted, with their cost, in a warning. Unused-commitment rows
  (``CommitmentDiscountStatus = Unused``) have no consumption: gpu_hours 0, and their cost is reported in a
  warning as idle commitment.
- pricing: ``PricingCategory`` Standard → on_demand, Dynamic → spot, Committed → reserved (and the 1.0-preview
  words On-Demand / Commitment-Based); Other or empty → NA.
- team / project / run_id from the ``Tags`` JSON (``team``, ``project``, ``run_id``/``run``; ``user:`` prefixes
  accepted).
- charge_kind (``charges``): ``ChargeClass = Correction`` and support purchases (ServiceName or ChargeDescription
  names support) → adjustment; ``CommitmentDiscountStatus = Unused`` → unused_commitment; a Purchase with a
  ``CommitmentDiscountId`` → commitment (its EffectiveCost is 0: the spec spreads it onto the usage); Tax, Credit
  and Adjustment → adjustment; the rest (Used commitment, other purchases) → usage.
- Rows with an unreadable or missing ChargePeriodStart, EffectiveCost or BilledCost are rejected.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from dashboard.ingest.billing import currency_column, eq, map_floats, map_values, tag_fields
from dashboard.ingest.charges import ADJUSTMENT, COMMITMENT, SUPPORT, UNUSED_COMMITMENT
from dashboard.ingest.gpus import gpu_name, instance_gpus, instance_in_text
from dashboard.ingest.rows import Rows, take_strings
from dashboard.ingest.spec import Cell, Charge, Fingerprint, Format, Refusal
from dashboard.ingest.values import factorized
from dashboard.ingest.wording import amount_text, count_text

PRICING: dict[str, str] = {
    "standard": "on_demand",
    "on-demand": "on_demand",
    "dynamic": "spot",
    "committed": "reserved",
    "commitment-based": "reserved",
}
PURCHASE = Cell("category", ("purchase",))
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
# Provider columns that may name the instance (AWS ``x_UsageType`` "USE1-BoxUsage:g5.4xlarge", Azure
# ``x_SkuMeterName`` …), matched on the lower-cased name after ``x_``.
PROVIDER_INSTANCE_WORDS: tuple[str, ...] = ("instance", "usagetype", "sku", "meter", "machine", "vmsize", "size")


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


def provider_columns(header: Sequence[str]) -> list[str]:
    """The ``x_`` columns of a header that may name the instance type."""
    return [
        c for c in header
        if str(c).lower().startswith("x_") and any(w in str(c).lower()[2:] for w in PROVIDER_INSTANCE_WORDS)
    ]


def _instance_text_gpus(rows: Rows) -> tuple[pd.Series, pd.Series, np.ndarray] | None:
    """GPU count, GPU type and "looks like GPU compute" per row from the columns that may name the instance:
    provider ``x_`` columns, SkuMeter, ChargeDescription, SkuId (the first one that names a known instance).
    None when the file has none of those columns."""
    columns = provider_columns(list(rows.table.columns)) + [
        c for c in (rows.col("sku_meter"), rows.col("description"), rows.col("sku_id")) if c is not None
    ]
    if not columns:
        return None
    index = rows.index
    count = pd.Series(np.nan, index=index, dtype="float64")
    gpu_type = pd.Series(pd.NA, index=index, dtype="string")
    gpu_like = np.zeros(len(index), dtype=bool)
    for column in columns:
        found, name, like = factorized(rows.table[column], instance_in_text, 3)
        found = pd.Series(found, index=index, dtype="float64")
        gpu_type = gpu_type.mask(count.isna() & found.notna(), pd.Series(name, index=index, dtype="string"))
        count = count.fillna(found)
        gpu_like |= pd.Series(like, index=index).fillna(False).to_numpy(dtype=bool)
    return count, gpu_type, gpu_like


def derive(rows: Rows) -> dict[str, object]:
    """The FOCUS rules of the module docstring."""
    table, index = rows.table, rows.index
    category = rows.text("category", lower=True)

    start = rows.time("start", required=True)
    end = rows.time("end").fillna(start)
    cost = rows.number("effective", "a cost", required=True)
    billed = rows.number("billed", "a cost", required=True)

    quantity = rows.number("quantity", "a quantity")
    if rows.has("unit"):
        hours = quantity * map_floats(table[rows.col("unit")], HOURS_PER_UNIT)
    else:
        hours = quantity
        rows.warn(f"{rows.filename or 'The file'} has no ConsumedUnit column, so ConsumedQuantity was taken "
                  "to be in hours.")

    if rows.has("sku_details"):
        codes, uniques = pd.factorize(table[rows.col("sku_details")], use_na_sentinel=True)
        per_sku = [_sku_gpus(u) for u in uniques]
        gpu_count = pd.Series(np.array([c for c, _ in per_sku] + [np.nan])[codes], index=index)
        sku_type = take_strings(codes, [t for _, t in per_sku], index)
    else:
        gpu_count = pd.Series(np.nan, index=index)
        sku_type = pd.Series(pd.NA, index=index, dtype="string")
    gpu_like = np.zeros(len(index), dtype=bool)
    from_text = _instance_text_gpus(rows)
    if from_text is not None:
        text_count, text_type, gpu_like = from_text
        sku_type = sku_type.mask(gpu_count.isna() & text_count.notna(), text_type)
        gpu_count = gpu_count.fillna(text_count)

    unused = eq(rows.text("commitment_status", lower=True), "unused")
    is_usage = eq(category, "usage") | category.isna().to_numpy(dtype=bool)
    gpu_rows = is_usage & ~unused
    gpu_hours = (hours * gpu_count).where(gpu_rows).fillna(0.0)
    gpu_type = sku_type.where(gpu_hours > 0)

    currency, code = currency_column(rows, "currency")
    unknown = gpu_rows & gpu_like & gpu_count.isna().to_numpy(dtype=bool) & (hours > 0).to_numpy(dtype=bool)
    unknown &= rows.open
    if unknown.any():
        n = int(unknown.sum())
        one = n == 1
        rows.warn(
            f"In {rows.filename or 'the file'}, {count_text(n, 'row')} {'looks' if one else 'look'} like GPU "
            f"compute but {'its' if one else 'their'} GPU count cannot be found, so {'it adds' if one else 'they add'}"
            f" no GPU-hours; {'it costs' if one else 'they cost'} {amount_text(float(cost[unknown].sum()), code)}. "
            f"Add {'its instance type' if one else 'their instance types'} to data/aws_instance_types.csv (or the "
            "Azure / GCP table), or export FOCUS 1.1+ with SkuPriceDetails."
        )
    if unused.any():
        idle = float(cost[unused & rows.open].sum())
        rows.warn(
            f"In {rows.filename or 'the file'}, unused commitment (CommitmentDiscountStatus = Unused) is "
            f"{amount_text(idle, code)} of cost with no usage behind it."
        )

    return {
        "period_start": start,
        "period_end": end,
        "gpu_hours": gpu_hours,
        "cost": cost,
        "billed_cost": billed,
        "currency": currency,
        "pricing": map_values(table[rows.col("pricing")], PRICING) if rows.has("pricing") else pd.NA,
        "gpu_type": gpu_type,
        "resource_id": rows.text("resource"),
        **tag_fields(table[rows.col("tags")] if rows.has("tags") else None, index),
    }


def _is_focus_05(header: Sequence[str]) -> bool:
    """FOCUS 0.5 names: AmortizedCost (EffectiveCost from 1.0), or ChargeType with InvoiceIssuer (1.0:
    ChargeCategory, InvoiceIssuerName)."""
    lowered = {str(c).lower() for c in header}
    if "effectivecost" in lowered:
        return False
    return "amortizedcost" in lowered or {"chargetype", "invoiceissuer"} <= lowered


FORMAT = Format(
    id="focus",
    title="FOCUS 1.0–1.3 cost and usage (CSV or Parquet)",
    noun="a FOCUS export",
    kind="billing",
    order=10,
    columns={
        "start": ("ChargePeriodStart",),
        "end": ("ChargePeriodEnd",),
        "effective": ("EffectiveCost",),
        "billed": ("BilledCost",),
        "category": ("ChargeCategory",),
        "charge_class": ("ChargeClass",),
        "description": ("ChargeDescription",),
        "service": ("ServiceName",),
        "quantity": ("ConsumedQuantity", "UsageQuantity"),
        "unit": ("ConsumedUnit", "UsageUnit"),
        "sku_details": ("SkuPriceDetails",),
        "sku_meter": ("SkuMeter",),
        "sku_id": ("SkuId",),
        "commitment_status": ("CommitmentDiscountStatus",),
        "commitment_id": ("CommitmentDiscountId",),
        "currency": ("BillingCurrency",),
        "tags": ("Tags",),
        "pricing": ("PricingCategory",),
        "resource": ("ResourceId",),
    },
    fingerprint=Fingerprint(
        required=(("start",), ("effective",), ("billed",)),
        markers=("start", "end", "effective", "billed", "category", "currency", "pricing", "quantity",
                 "sku_details", "description"),
    ),
    refusals=(
        Refusal(
            _is_focus_05,
            "{file} is a FOCUS 0.5 export (AmortizedCost, ChargeType), and FOCUS 0.5 is not read. Export FOCUS "
            "1.0, 1.1, 1.2 or 1.3 (EffectiveCost, ChargeCategory) and import that file.",
        ),
    ),
    charges=(
        Charge(ADJUSTMENT, (Cell("charge_class", ("correction",)),)),
        Charge(ADJUSTMENT, (PURCHASE, Cell("service", pattern=SUPPORT))),
        Charge(ADJUSTMENT, (PURCHASE, Cell("description", pattern=SUPPORT))),
        Charge(UNUSED_COMMITMENT, (Cell("commitment_status", ("unused",)),)),
        Charge(COMMITMENT, (PURCHASE, Cell("commitment_id"))),
        Charge(ADJUSTMENT, (Cell("category", ("tax", "credit", "adjustment")),)),
    ),
    categorical=("category", "start", "end", "unit", "sku_details", "commitment_status", "commitment_id",
                 "currency", "tags", "pricing", "resource", "charge_class", "description", "service", "sku_meter",
                 "sku_id"),
    selective=True,
    more_columns=provider_columns,
    derive=derive,
)
