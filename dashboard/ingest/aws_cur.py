"""Reader for the AWS Cost and Usage Report: legacy CSV (``lineItem/…``) and CUR 2.0 / Athena (snake_case).

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
- charge_kind: RIFee, SavingsPlanRecurringFee, SavingsPlanUpfrontFee and upfront reservation ``Fee`` rows →
  commitment; Tax, Credit, Refund, discounts, rounding and other Fee rows (support) → adjustment; usage rows
  (Usage, DiscountedUsage, SavingsPlanCoveredUsage) → usage.
- Currency from ``lineItem/CurrencyCode`` (USD when absent, with a warning).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.ingest.billing import TAG_KEYS, single_currency, tag_fields
from dashboard.ingest.charges import ADJUSTMENT, COMMITMENT, charge_kinds, mentions
from dashboard.ingest.detect import find_column, require_columns
from dashboard.ingest.gpus import gpu_names, lookup_instances
from dashboard.ingest.rows import RowBook, text_column
from dashboard.ingest.schema import ReaderResult, ReadOptions
from dashboard.ingest.values import parse_datetime

NEGATION_RULE = "savings plan negation (offsets covered usage; amortised cost 0)"

# canonical key -> (legacy CSV name, Athena / CUR 2.0 name[s])
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
}
COMMITMENT_FEES = ("rifee", "savingsplanrecurringfee", "savingsplanupfrontfee")
ADJUSTMENTS = (
    "tax", "credit", "refund", "bundleddiscount", "edpdiscount", "privateratediscount", "rivolumediscount",
    "discount", "savingsplannegation", "rounding",
)
UPFRONT_FEE = r"upfront|reserv|savings\s*plan"


def _tag_columns(table: pd.DataFrame) -> dict[str, pd.Series]:
    """team / project / run_id from per-tag columns (legacy, Athena) or the CUR 2.0 map column."""
    columns = list(table.columns)
    map_column = find_column(columns, *COLUMNS["tags"])
    fields = tag_fields(table[map_column] if map_column else None, table.index)
    for field, keys in TAG_KEYS.items():
        names = [f"resourceTags/{k}" for k in keys if ":" in k] + [
            f"resource_tags_{k.replace(':', '_')}" for k in keys if ":" in k
        ]
        names += [f"resourceTags/user:{k}" for k in keys if ":" not in k]
        column = find_column(columns, *names)
        if column is not None:
            fields[field] = text_column(table, column).fillna(fields[field])
    return fields


def read(table: pd.DataFrame, options: ReadOptions) -> ReaderResult:
    """Turn a decoded CUR (legacy or 2.0) table into canonical usage rows."""
    require_columns(list(table.columns), "aws_cur")
    columns = list(table.columns)
    name = {key: find_column(columns, *aliases) for key, aliases in COLUMNS.items()}
    book = RowBook(table, options.decimal_comma)
    warnings: list[str] = []

    line_type = text_column(table, name["type"])
    kind = line_type.str.lower()
    book.exclude((kind == "savingsplannegation").fillna(False), NEGATION_RULE)

    start, bad = parse_datetime(table[name["start"]])
    book.reject_bad(bad, name["start"], "a date-time")
    book.reject_missing(start, np.ones(len(table), bool), name["start"])
    end = start
    if name["end"] is not None:
        end, bad = parse_datetime(table[name["end"]])
        book.reject_bad(bad, name["end"], "a date-time")
        end = end.fillna(start)

    unblended = book.number(name["unblended"], "a cost")
    book.reject_missing(unblended, np.ones(len(table), bool), name["unblended"])
    covered = (kind == "savingsplancoveredusage").fillna(False).to_numpy(dtype=bool)
    discounted = (kind == "discountedusage").fillna(False).to_numpy(dtype=bool)
    sp_fee = (kind == "savingsplanrecurringfee").fillna(False).to_numpy(dtype=bool)
    upfront = kind.isin(["savingsplanupfrontfee", "rifee"]).fillna(False).to_numpy(dtype=bool)

    cost = unblended.copy()
    sp_effective = book.number(name["sp_effective"], "a cost")
    book.reject_missing(sp_effective, covered, name["sp_effective"] or COLUMNS["sp_effective"][0])
    cost[covered] = sp_effective[covered]
    ri_effective = book.number(name["ri_effective"], "a cost")
    book.reject_missing(ri_effective, discounted, name["ri_effective"] or COLUMNS["ri_effective"][0])
    cost[discounted] = ri_effective[discounted]
    if sp_fee.any():
        if name["sp_commitment"] and name["sp_used"]:
            unused = book.number(name["sp_commitment"]) - book.number(name["sp_used"])
            cost[sp_fee] = unused.fillna(0.0)[sp_fee]
        else:
            cost[sp_fee] = 0.0
            warnings.append(
                "SavingsPlanRecurringFee rows count 0 towards amortised cost: the file has no "
                "TotalCommitmentToDate / UsedCommitment columns to measure unused commitment."
            )
    if upfront.any():
        unused = book.number(name["ri_unused_upfront"], default=0.0).fillna(0.0) + book.number(
            name["ri_unused_recurring"], default=0.0
        ).fillna(0.0)
        cost[upfront] = unused[upfront]
    billed = unblended.where(~covered, 0.0)

    usage_type = text_column(table, name["usage_type"])
    instance = text_column(table, name["instance"]).fillna(usage_type.str.extract(r":(.+)$", expand=False))
    gpu_count, gpu_type = lookup_instances(instance, "aws_instance_types")
    if name["gpu"] is not None:
        gpu_count = gpu_count.fillna(book.number(name["gpu"], default=np.nan).where(lambda v: v >= 0))
    amount = book.number(name["amount"], "a quantity")
    is_box = usage_type.str.contains(r"BoxUsage|SpotUsage|DedicatedUsage", regex=True).fillna(False)
    is_instance_usage = kind.isin(["usage", "discountedusage", "savingsplancoveredusage"]).fillna(False)
    gpu_rows = (is_box & is_instance_usage).to_numpy(dtype=bool)
    gpu_hours = (amount * gpu_count).where(gpu_rows).fillna(0.0)

    spot = usage_type.str.contains("SpotUsage", regex=False).fillna(False).to_numpy(dtype=bool)
    pricing = pd.Series(pd.NA, index=table.index, dtype="string")
    pricing[(kind == "usage").fillna(False).to_numpy(dtype=bool)] = "on_demand"
    pricing[covered | discounted] = "reserved"
    pricing[spot & is_instance_usage.to_numpy(dtype=bool)] = "spot"

    currency = text_column(table, name["currency"]).str.upper()
    code = single_currency(currency[book.open])
    if code is None:
        code = "USD"
        warnings.append("No lineItem/CurrencyCode column: costs are taken to be in USD.")
    currency = currency.fillna(code)

    fee = (kind == "fee").fillna(False).to_numpy(dtype=bool)
    fee_text = text_column(table, name["description"]).fillna("") + " " + usage_type.fillna("")
    charge_kind = charge_kinds(
        table.index,
        (kind.isin(COMMITMENT_FEES), COMMITMENT),
        (kind.isin(ADJUSTMENTS), ADJUSTMENT),
        (fee & mentions(text_column(table, name["product_code"]), "support"), ADJUSTMENT),
        (fee & mentions(fee_text, UPFRONT_FEE), COMMITMENT),
        (fee, ADJUSTMENT),
    )

    return book.result(
        {
            "period_start": start,
            "period_end": end,
            "gpu_hours": gpu_hours,
            "cost": cost,
            "billed_cost": billed,
            "currency": currency,
            "pricing": pricing,
            "charge_kind": charge_kind,
            "gpu_type": gpu_type.fillna(gpu_names(instance)).where(gpu_hours > 0),
            "resource_id": text_column(table, name["resource"]),
            **_tag_columns(table),
        },
        warnings,
    )
