"""The AWS Cost and Usage Report: legacy CSV (``lineItem/…``) and CUR 2.0 / Athena (snake_case).

Rules (amortised cost after the AWS Well-Architected ``ec2-instance-cost-by-pricing-term`` recipe):
- cost: ``Usage`` (on-demand and Spot) and every other charge (Tax, Credit, Refund, Fee, discounts) →
  unblended cost (not net unblended); ``SavingsPlanCoveredUsage`` → ``SavingsPlanEffectiveCost``;
  ``DiscountedUsage`` → ``reservation/EffectiveCost``; ``SavingsPlanRecurringFee`` → the unused commitment
  (``TotalCommitmentToDate − UsedCommitment``; 0 when those columns are absent, with a warning), since the
  used part already sits in the covered usage's effective cost; ``SavingsPlanUpfrontFee`` and ``RIFee`` →
  the unused part where CUR gives it (``reservation/UnusedAmortizedUpfrontFeeForBillingPeriod +
  UnusedRecurringFee``), else 0, for the same reason.
- billed_cost = unblended cost, except ``SavingsPlanCoveredUsage`` → 0: its on-demand figure is cancelled on
  the bill by the matching ``SavingsPlanNegation`` row.
- Excluded: ``SavingsPlanNegation`` ("savings plan negation (offsets covered usage; amortised cost 0)").
  Its amortised cost is 0 and its unblended amount cancels the covered usage's on-demand figure, which the
  rule above already leaves out of billed_cost, so neither total moves.
- Reconciliation: Σ cost equals Σ of the recipe's amortised column per row (the "amortised cost" the
  Well-Architected query computes), and Σ billed_cost equals Σ ``UnblendedCost`` over all non-rejected rows.
- gpu_hours = ``UsageAmount`` × GPUs of the instance type (``data/aws_instance_types.csv``, falling back to
  ``product/gpu``) for BoxUsage / SpotUsage / DedicatedUsage rows of Usage, DiscountedUsage and
  SavingsPlanCoveredUsage; the instance type comes from ``product/instanceType`` or the usage type suffix.
- pricing: UsageType containing ``SpotUsage`` → spot; DiscountedUsage / SavingsPlanCoveredUsage → reserved;
  other Usage → on_demand; everything else NA.
- team / project / run_id from ``resourceTags/user:team`` (one column per tag) or the CUR 2.0 ``resource_tags``
  map (``user_team`` keys).
- charge_kind (``charges``): RIFee, SavingsPlanRecurringFee and SavingsPlanUpfrontFee → unused_commitment (their
  cost above is the unused part); upfront reservation ``Fee`` rows → commitment (the payment itself); Tax, Credit,
  Refund, discounts, rounding and other Fee rows (support) → adjustment; usage rows (Usage, DiscountedUsage,
  SavingsPlanCoveredUsage: covered usage is usage) → usage.
- Currency from ``lineItem/CurrencyCode`` (USD when absent, with a warning).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.ingest.billing import TAG_KEYS, currency_column, tag_fields
from dashboard.ingest.charges import ADJUSTMENT, COMMITMENT, UNUSED_COMMITMENT
from dashboard.ingest.engine import find_column
from dashboard.ingest.gpus import gpu_names, lookup_instances
from dashboard.ingest.rows import Rows, text_column
from dashboard.ingest.spec import Cell, Charge, Exclusion, Fingerprint, Format

NEGATION_RULE = "savings plan negation (offsets covered usage; amortised cost 0)"

# key -> (legacy CSV name, Athena / CUR 2.0 name[s])
COLUMNS: dict[str, tuple[str, ...]] = {
    "start": ("lineItem/UsageStartDate", "line_item_usage_start_date"),
    "end": ("lineItem/UsageEndDate", "line_item_usage_end_date"),
    "type": ("lineItem/LineItemType", "line_item_line_item_type"),
    "usage_type": ("lineItem/UsageType", "line_item_usage_type"),
    "resource": ("lineItem/ResourceId", "line_item_resource_id"),
    "amount": ("lineItem/UsageAmount", "line_item_usage_amount"),
    "unblended": ("lineItem/UnblendedCost", "line_item_unblended_cost"),
    "currency": ("lineItem/CurrencyCode", "line_item_currency_code"),
    "instance": ("product/instanceType", "product_instance_type"),
    "gpu": ("product/gpu", "product_gpu"),
    "ri_effective": ("reservation/EffectiveCost", "reservation_effective_cost"),
    "ri_unused_upfront": (
        "reservation/UnusedAmortizedUpfrontFeeForBillingPeriod",
        "reservation_unused_amortized_upfront_fee_for_billing_period",
    ),
    "ri_unused_recurring": ("reservation/UnusedRecurringFee", "reservation_unused_recurring_fee"),
    "sp_effective": ("savingsPlan/SavingsPlanEffectiveCost", "savings_plan_savings_plan_effective_cost"),
    "sp_commitment": ("savingsPlan/TotalCommitmentToDate", "savings_plan_total_commitment_to_date"),
    "sp_used": ("savingsPlan/UsedCommitment", "savings_plan_used_commitment"),
    "tags": ("resource_tags", "tags"),
    "product_code": ("lineItem/ProductCode", "line_item_product_code"),
    "description": ("lineItem/LineItemDescription", "line_item_line_item_description"),
    "line_item_id": ("identity/LineItemId", "identity_line_item_id"),
}
COMMITMENT_FEES = ("rifee", "savingsplanrecurringfee", "savingsplanupfrontfee")
ADJUSTMENTS = (
    "tax", "credit", "refund", "bundleddiscount", "edpdiscount", "privateratediscount", "rivolumediscount",
    "discount", "savingsplannegation", "rounding",
)
UPFRONT_FEE = r"upfront|reserv|savings\s*plan"


def _tag_columns(rows: Rows) -> dict[str, pd.Series]:
    """team / project / run_id from per-tag columns (legacy, Athena) or the CUR 2.0 map column."""
    table = rows.table
    columns = list(table.columns)
    fields = tag_fields(table[rows.col("tags")] if rows.has("tags") else None, table.index)
    for field, keys in TAG_KEYS.items():
        names = [f"resourceTags/{k}" for k in keys if ":" in k] + [
            f"resource_tags_{k.replace(':', '_')}" for k in keys if ":" in k
        ]
        names += [f"resourceTags/user:{k}" for k in keys if ":" not in k]
        column = find_column(columns, *names)
        if column is not None:
            fields[field] = text_column(table, column).fillna(fields[field])
    return fields


def derive(rows: Rows) -> dict[str, object]:
    """The CUR rules of the module docstring."""
    kind = rows.text("type", lower=True)
    start = rows.time("start", required=True)
    end = rows.time("end").fillna(start)

    unblended = rows.number("unblended", "a cost", required=True)
    covered = (kind == "savingsplancoveredusage").fillna(False).to_numpy(dtype=bool)
    discounted = (kind == "discountedusage").fillna(False).to_numpy(dtype=bool)
    sp_fee = (kind == "savingsplanrecurringfee").fillna(False).to_numpy(dtype=bool)
    upfront = kind.isin(["savingsplanupfrontfee", "rifee"]).fillna(False).to_numpy(dtype=bool)

    cost = unblended.copy()
    sp_effective = rows.number("sp_effective", "a cost")
    rows.reject_missing(sp_effective, covered, rows.name("sp_effective"))
    cost[covered] = sp_effective[covered]
    ri_effective = rows.number("ri_effective", "a cost")
    rows.reject_missing(ri_effective, discounted, rows.name("ri_effective"))
    cost[discounted] = ri_effective[discounted]
    if sp_fee.any():
        if rows.has("sp_commitment") and rows.has("sp_used"):
            unused = rows.number("sp_commitment") - rows.number("sp_used")
            cost[sp_fee] = unused.fillna(0.0)[sp_fee]
        else:
            cost[sp_fee] = 0.0
            rows.warn(
                "SavingsPlanRecurringFee rows count 0 towards amortised cost, because the file has no "
                "TotalCommitmentToDate / UsedCommitment columns to measure unused commitment."
            )
    if upfront.any():
        unused = rows.number("ri_unused_upfront", default=0.0).fillna(0.0) + rows.number(
            "ri_unused_recurring", default=0.0
        ).fillna(0.0)
        cost[upfront] = unused[upfront]
    billed = unblended.where(~covered, 0.0)

    usage_type = rows.text("usage_type")
    instance = rows.text("instance").fillna(usage_type.str.extract(r":(.+)$", expand=False))
    gpu_count, gpu_type = lookup_instances(instance, "aws_instance_types")
    if rows.has("gpu"):
        gpu_count = gpu_count.fillna(rows.number("gpu", default=np.nan).where(lambda v: v >= 0))
    amount = rows.number("amount", "a quantity")
    is_box = usage_type.str.contains(r"BoxUsage|SpotUsage|DedicatedUsage", regex=True).fillna(False)
    is_instance_usage = kind.isin(["usage", "discountedusage", "savingsplancoveredusage"]).fillna(False)
    gpu_rows = (is_box & is_instance_usage).to_numpy(dtype=bool)
    gpu_hours = (amount * gpu_count).where(gpu_rows).fillna(0.0)

    spot = usage_type.str.contains("SpotUsage", regex=False).fillna(False).to_numpy(dtype=bool)
    pricing = pd.Series(pd.NA, index=rows.index, dtype="string")
    pricing[(kind == "usage").fillna(False).to_numpy(dtype=bool)] = "on_demand"
    pricing[covered | discounted] = "reserved"
    pricing[spot & is_instance_usage.to_numpy(dtype=bool)] = "spot"

    currency, _ = currency_column(rows, "currency", default="USD")

    return {
        "period_start": start,
        "period_end": end,
        "gpu_hours": gpu_hours,
        "cost": cost,
        "billed_cost": billed,
        "currency": currency,
        "pricing": pricing,
        "gpu_type": gpu_type.fillna(gpu_names(instance)).where(gpu_hours > 0),
        "resource_id": rows.text("resource"),
        **_tag_columns(rows),
    }


FORMAT = Format(
    id="aws_cur",
    title="AWS Cost and Usage Report, legacy CSV or CUR 2.0 / Athena",
    noun="an AWS CUR export",
    kind="billing",
    order=20,
    columns=COLUMNS,
    fingerprint=Fingerprint(
        required=(("start",), ("unblended",), ("type",)),
        markers=("start", "unblended", "type", "usage_type", "line_item_id"),
    ),
    exclusions=(Exclusion(NEGATION_RULE, "type", ("SavingsPlanNegation",)),),
    charges=(
        Charge(UNUSED_COMMITMENT, (Cell("type", COMMITMENT_FEES),)),
        Charge(ADJUSTMENT, (Cell("type", ADJUSTMENTS),)),
        Charge(ADJUSTMENT, (Cell("type", ("fee",)), Cell("product_code", pattern="support"))),
        Charge(COMMITMENT, (Cell("type", ("fee",)), Cell("description", pattern=UPFRONT_FEE))),
        Charge(COMMITMENT, (Cell("type", ("fee",)), Cell("usage_type", pattern=UPFRONT_FEE))),
        Charge(ADJUSTMENT, (Cell("type", ("fee",)),)),
    ),
    derive=derive,
)
