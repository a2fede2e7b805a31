"""Write the bundled billing samples: one synthetic quarter (2025-04-01 to 2025-06-30) in five export dialects.

Run from the repository root: ``.venv/bin/python data/samples/generator/make_billing_samples.py``. The app never
runs this script; it reads the CSV files it writes into ``data/samples/``, which are committed. The script sits in
a subfolder because the Import page offers (and its test imports) every file directly in ``data/samples/``.
The output is deterministic (fixed seed).

The organisation is the one in ``slurm_sample.txt`` and ``wandb_sample.csv`` (written by ``make_run_samples.py`` from
this script's usage plan). Its quarter:
- April: tokenising the corpus on CPU (team ``data``), ablations on on-demand H100 (``research``, ``data``).
- A one-year commitment for eight 8×H100 machines starts on 28 April; the fleet burns in from 1 May, the
  13B pretraining run (``llm-pretrain``, run ``pretrain-13b``) goes from 5 May to 27 June, with lost hours after
  node failures and an on-demand hot spare on 8-10 May. The commitment sits idle before and after the run.
- Evaluations on spot A100 every third day and weekly full suites on spot H100 from May (``llm-eval``); a chat
  fine-tune on on-demand H100 in May (``research``); an untagged 4-GPU dev box left running in June.
- Monthly storage, egress, support, tax lines, and one credit.

Each file shows that same quarter as one provider would bill it, so the files are alternatives to compare,
not parts of one bill. Lines are daily (storage, egress, support, tax and purchases monthly); usage is
aggregated per day over the machines of a workload, so resource ids are omitted for fleet lines. In the GCP
file only the pretraining fleet lists a vCPU SKU (standing in for vCPU and RAM); other VMs carry their whole
price on the GPU SKU, and each project carries its team in ``project.labels``; the one-off credit is a PROMOTION
credit on the first on-demand GPU lines. The Azure file is the actual-cost dataset: reserved usage costs 0 there
and the reservation is billed through monthly Purchase rows; Azure cost details carry no tax line.
"""

from __future__ import annotations

import csv
import json
import random
from datetime import date, timedelta
from pathlib import Path

OUT = Path(__file__).resolve().parents[1]
rng = random.Random(20250401)

QUARTER = [date(2025, 4, 1) + timedelta(days=i) for i in range(91)]
MONTHS = [date(2025, 4, 1), date(2025, 5, 1), date(2025, 6, 1), date(2025, 7, 1)]
COMMIT_START = date(2025, 4, 28)
COMMITTED_HOURS = 8 * 24  # machine-hours per day covered by the commitment
# machine-hours lost (negative) or added by a hot spare (positive) on the pretraining fleet
FLEET_CHANGES = {
    date(2025, 5, 7): -11,
    date(2025, 5, 8): 30,
    date(2025, 5, 9): 24,
    date(2025, 5, 10): 24,
    date(2025, 5, 29): -9,
    date(2025, 6, 12): -14,
    date(2025, 6, 13): -5,
    date(2025, 6, 27): -80,
}

# shape -> provider -> (machine type, GPUs, {pricing: price per machine-hour in USD})
SHAPES = {
    "h100x8": {
        "aws": ("p5.48xlarge", 8, {"committed": 57.63, "on_demand": 98.32, "spot": 28.00}),
        "gcp": ("a3-highgpu-8g", 8, {"committed": 61.38, "on_demand": 88.49, "spot": 35.40}),
        "azure": ("ND96isr_H100_v5", 8, {"committed": 60.00, "on_demand": 98.32, "spot": 27.53}),
    },
    "a100x8": {
        "aws": ("p4d.24xlarge", 8, {"on_demand": 32.77, "spot": 13.10}),
        "gcp": ("a2-ultragpu-8g", 8, {"on_demand": 40.55, "spot": 16.22}),
        "azure": ("ND96amsr_A100_v4", 8, {"on_demand": 32.77, "spot": 13.11}),
    },
    "dev4": {
        "aws": ("g5.12xlarge", 4, {"on_demand": 5.672}),
        "gcp": ("g2-standard-48", 4, {"on_demand": 4.00}),
        "azure": ("NC96ads_A100_v4", 4, {"on_demand": 14.69}),
    },
    "cpu": {
        "aws": ("c7i.48xlarge", 0, {"on_demand": 8.568}),
        "gcp": ("c3-highcpu-176", 0, {"on_demand": 7.53}),
        "azure": ("D96s_v5", 0, {"on_demand": 4.608}),
    },
}
GCP_A3_CORE_PRICE = 10.09  # a3-highgpu-8g vCPU+RAM share of the machine price; the rest is the GPU SKU


def tags(team: str | None, project: str | None = None, run: str | None = None) -> dict[str, str]:
    return {k: v for k, v in (("team", team), ("project", project), ("run_id", run)) if v}


def usage_plan() -> list[dict]:
    """Daily usage lines: day, shape, pricing, machine-hours, tags."""
    lines = []

    def add(day, shape, pricing, hours, tag):
        lines.append({"day": day, "shape": shape, "pricing": pricing, "hours": round(hours, 2), "tags": tag})

    for day in QUARTER:
        if date(2025, 5, 1) <= day <= date(2025, 6, 27):
            run = "pretrain-13b-burnin" if day < date(2025, 5, 5) else "pretrain-13b"
            hours = COMMITTED_HOURS + FLEET_CHANGES.get(day, 0)
            fleet = tags("llm-pretrain", "pretrain-13b", run)
            add(day, "h100x8", "committed", min(hours, COMMITTED_HOURS), fleet)
            if hours > COMMITTED_HOURS:
                add(day, "h100x8", "on_demand", hours - COMMITTED_HOURS, fleet)
        if date(2025, 4, 7) <= day <= date(2025, 4, 25) and day.weekday() < 5:
            run = ["ablate-lr-schedule", "ablate-batch-size", "ablate-seq-len"][(day.day - 7) // 7]
            add(
                day,
                "h100x8",
                "on_demand",
                rng.choice([2, 3, 4]) * rng.uniform(10, 22),
                tags("research", "ablations", run),
            )
        if date(2025, 4, 1) <= day <= date(2025, 4, 4):
            add(day, "cpu", "on_demand", 96, tags("data", "dataprep", "tokenize-corpus"))
        if date(2025, 4, 14) <= day <= date(2025, 4, 17):
            add(day, "h100x8", "on_demand", rng.uniform(14, 30), tags("data", "data-mix", "data-mix-pilot"))
        if date(2025, 5, 17) <= day <= date(2025, 5, 28):
            add(day, "h100x8", "on_demand", 35 if day.day == 17 else 48, tags("research", "chat", "finetune-13b-chat"))
        if date(2025, 6, 2) <= day <= date(2025, 6, 13):
            add(day, "dev4", "on_demand", 24, {})
        if (day - QUARTER[0]).days % 3 == 1:
            add(
                day, "a100x8", "spot", rng.choice([1, 2]) * rng.uniform(2, 6), tags("llm-eval", "evals", "eval-harness")
            )
        if day.month > 4 and day.weekday() == 0:
            add(day, "h100x8", "spot", 4 * rng.uniform(6, 10), tags("llm-eval", "evals", "eval-full-suite"))
    add(date(2025, 5, 4), "cpu", "on_demand", 24, tags("data", "dataprep", "tokenize-corpus"))
    add(date(2025, 5, 8), "h100x8", "on_demand", 22.6, tags("research", "ablations", "ablate-lr-warmup"))
    add(date(2025, 5, 10), "h100x8", "on_demand", 36.6, tags("data", "data-mix", "ablate-data-mix"))
    add(date(2025, 5, 10), "h100x8", "on_demand", 3.7, tags("data", "tokenizer", "ablate-tokenizer"))
    return sorted(lines, key=lambda line: line["day"])


def commitment_plan(plan: list[dict]) -> list[tuple[date, float]]:
    """(day, committed machine-hours used) for every day the commitment runs."""
    used = {line["day"]: line["hours"] for line in plan if line["pricing"] == "committed"}
    return [(day, used.get(day, 0.0)) for day in QUARTER if day >= COMMIT_START]


def price(line: dict, provider: str) -> float:
    return SHAPES[line["shape"]][provider][2][line["pricing"]]


def monthly_lines(plan: list[dict], provider: str) -> list[dict]:
    """Storage, egress, support, tax and a credit, per month (amounts in USD)."""
    lines = []
    for start, end in zip(MONTHS, MONTHS[1:], strict=False):
        month = start.month - 4
        compute = sum(
            line["hours"] * price(line, provider) for line in plan if start <= line["day"] < end
        ) + COMMITTED_HOURS * SHAPES["h100x8"][provider][2]["committed"] * sum(
            1 for day in QUARTER if start <= day < end and day >= COMMIT_START
        )
        storage = [
            ("checkpoints", [2_000, 9_000, 16_000][month] * 0.023, tags("llm-pretrain", "pretrain-13b")),
            ("corpus", 60_000 * 0.023, tags("data", "dataprep")),
        ]
        for name, cost, tag in storage:
            lines.append({"start": start, "end": end, "kind": "storage", "name": name, "cost": cost, "tags": tag})
        egress = [14_000, 21_000, 26_000][month]
        lines.append({"start": start, "end": end, "kind": "egress", "gb": egress, "cost": egress * 0.05, "tags": {}})
        support = 0.03 * compute + 14_400
        lines.append({"start": start, "end": end, "kind": "support", "cost": support, "tags": {}})
        lines.append({"start": start, "end": end, "kind": "tax", "cost": 0.06 * (support + egress * 0.05), "tags": {}})
    lines.append({"start": MONTHS[0], "end": MONTHS[1], "kind": "credit", "cost": -25_000.0, "tags": {}})
    return lines


def money(value: float) -> str:
    return f"{value:.2f}" if value else "0"


def write(name: str, header: list[str], rows: list[dict], bom: bool = False, crlf: bool = False) -> None:
    with open(OUT / name, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as handle:
        writer = csv.DictWriter(handle, header, lineterminator="\r\n" if crlf else "\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{name}: {len(rows)} rows")


def iso(day: date) -> str:
    return f"{day.isoformat()}T00:00:00Z"


# --- FOCUS 1.2 (as exported by AWS Data Exports) -----------------------------------------------------------

SP_ARN = "arn:aws:savingsplans::900000000001:savingsplan/7f3c1a2e-13b0-4a1e-9b6d-5d2e8c41a013"
FOCUS_HEADER = [
    "BillingAccountId",
    "BillingAccountName",
    "SubAccountId",
    "BillingPeriodStart",
    "BillingPeriodEnd",
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "ChargeCategory",
    "ChargeClass",
    "ChargeFrequency",
    "ChargeDescription",
    "PricingCategory",
    "ProviderName",
    "PublisherName",
    "InvoiceIssuerName",
    "ServiceName",
    "ServiceCategory",
    "ServiceSubcategory",
    "RegionId",
    "ResourceId",
    "SkuPriceDetails",
    "ConsumedQuantity",
    "ConsumedUnit",
    "PricingQuantity",
    "PricingUnit",
    "ListUnitPrice",
    "ListCost",
    "ContractedCost",
    "BilledCost",
    "EffectiveCost",
    "BillingCurrency",
    "CommitmentDiscountId",
    "CommitmentDiscountType",
    "CommitmentDiscountCategory",
    "CommitmentDiscountStatus",
    "Tags",
]
FOCUS_PRICING = {"committed": "Committed", "on_demand": "Standard", "spot": "Dynamic"}


def focus_row(
    start: date,
    end: date,
    category: str,
    description: str,
    service: tuple[str, str, str],
    billed: float,
    effective: float,
    list_cost: float,
    tag: dict,
    **extra,
) -> dict:
    period = max(m for m in MONTHS if m <= start)
    row = {
        "BillingAccountId": "900000000001",
        "BillingAccountName": "Northwind AI",
        "SubAccountId": "900000000042",
        "BillingPeriodStart": iso(period),
        "BillingPeriodEnd": iso(MONTHS[MONTHS.index(period) + 1]),
        "ChargePeriodStart": iso(start),
        "ChargePeriodEnd": iso(end),
        "ChargeCategory": category,
        "ChargeFrequency": "Usage-Based" if category == "Usage" else "Recurring",
        "ChargeDescription": description,
        "ProviderName": "AWS",
        "PublisherName": "AWS",
        "InvoiceIssuerName": "AWS",
        "ServiceName": service[0],
        "ServiceCategory": service[1],
        "ServiceSubcategory": service[2],
        "RegionId": "us-east-1",
        "ListCost": money(list_cost),
        "ContractedCost": money(list_cost),
        "BilledCost": money(billed),
        "EffectiveCost": money(effective),
        "BillingCurrency": "USD",
        "Tags": json.dumps(tag) if tag else "",
    }
    return row | extra


def write_focus(plan: list[dict]) -> None:
    ec2 = ("Amazon Elastic Compute Cloud", "Compute", "Virtual Machines")
    rows = []
    for line in plan:
        machine, gpus, prices = SHAPES[line["shape"]]["aws"]
        hours, day = line["hours"], line["day"]
        committed = line["pricing"] == "committed"
        cost = hours * prices[line["pricing"]]
        on_demand = prices["on_demand"]
        details = {"InstanceType": machine, "GpuCount": gpus} if gpus else {"InstanceType": machine}
        rows.append(
            focus_row(
                day,
                day + timedelta(days=1),
                "Usage",
                f"{machine} {line['pricing'].replace('_', '-')} usage",
                ec2,
                0 if committed else cost,
                cost,
                hours * on_demand,
                line["tags"],
                PricingCategory=FOCUS_PRICING[line["pricing"]],
                SkuPriceDetails=json.dumps(details),
                RegionId="us-west-2" if line["pricing"] == "on_demand" and line["shape"] == "h100x8" else "us-east-1",
                ConsumedQuantity=hours,
                ConsumedUnit="Hours",
                PricingQuantity=hours,
                PricingUnit="Hours",
                ListUnitPrice=on_demand,
                **(
                    {
                        "CommitmentDiscountId": SP_ARN,
                        "CommitmentDiscountType": "Savings Plan",
                        "CommitmentDiscountCategory": "Spend",
                        "CommitmentDiscountStatus": "Used",
                    }
                    if committed
                    else {}
                ),
            )
        )
    rate = SHAPES["h100x8"]["aws"][2]["committed"]
    sp = {
        "CommitmentDiscountId": SP_ARN,
        "CommitmentDiscountType": "Savings Plan",
        "CommitmentDiscountCategory": "Spend",
        "ResourceId": SP_ARN,
    }
    sp_service = ("Savings Plans for AWS Compute usage", "Compute", "Virtual Machines")
    for day, used in commitment_plan(plan):
        fee = COMMITTED_HOURS * rate
        rows.append(
            focus_row(
                day,
                day + timedelta(days=1),
                "Purchase",
                "EC2 Instance Savings Plan recurring fee",
                sp_service,
                fee,
                0,
                fee,
                {},
                PricingCategory="Standard",
                **sp,
            )
        )
        if used < COMMITTED_HOURS:
            idle = (COMMITTED_HOURS - used) * rate
            rows.append(
                focus_row(
                    day,
                    day + timedelta(days=1),
                    "Usage",
                    "Unused Savings Plan commitment",
                    ec2,
                    0,
                    idle,
                    0,
                    {},
                    PricingCategory="Committed",
                    CommitmentDiscountStatus="Unused",
                    **sp,
                )
            )
    for line in monthly_lines(plan, "aws"):
        cost, kind = line["cost"], line["kind"]
        service, category, extra = {
            "storage": (
                ("Amazon Simple Storage Service", "Storage", "Object Storage"),
                "Usage",
                {"PricingCategory": "Standard", "ResourceId": f"northwind-{line.get('name')}"},
            ),
            "egress": (
                ("AWS Data Transfer", "Networking", "Network Connectivity"),
                "Usage",
                {"PricingCategory": "Standard", "ConsumedQuantity": line.get("gb"), "ConsumedUnit": "GB"},
            ),
            "support": (
                ("AWS Support (Business)", "Management and Governance", "Support"),
                "Purchase",
                {"PricingCategory": "Standard"},
            ),
            "tax": (("AWS Support (Business)", "Management and Governance", "Support"), "Tax", {}),
            "credit": (("Amazon Elastic Compute Cloud", "Compute", "Virtual Machines"), "Credit", {}),
        }[kind]
        rows.append(
            focus_row(
                line["start"],
                line["end"],
                category,
                f"{kind} ({line['start']:%B})",
                service,
                cost,
                cost,
                max(cost, 0),
                line["tags"],
                **extra,
            )
        )
    write("focus_sample.csv", FOCUS_HEADER, sorted(rows, key=lambda r: r["ChargePeriodStart"]))


# --- AWS CUR, legacy CSV and CUR 2.0 -------------------------------------------------------------------------

CUR_FIELDS = {  # legacy CSV name -> CUR 2.0 name
    "identity/LineItemId": "identity_line_item_id",
    "bill/BillingPeriodStartDate": "bill_billing_period_start_date",
    "lineItem/UsageAccountId": "line_item_usage_account_id",
    "lineItem/LineItemType": "line_item_line_item_type",
    "lineItem/UsageStartDate": "line_item_usage_start_date",
    "lineItem/UsageEndDate": "line_item_usage_end_date",
    "lineItem/ProductCode": "line_item_product_code",
    "lineItem/UsageType": "line_item_usage_type",
    "lineItem/Operation": "line_item_operation",
    "lineItem/ResourceId": "line_item_resource_id",
    "lineItem/UsageAmount": "line_item_usage_amount",
    "lineItem/CurrencyCode": "line_item_currency_code",
    "lineItem/UnblendedCost": "line_item_unblended_cost",
    "lineItem/LineItemDescription": "line_item_line_item_description",
    "product/instanceType": "product_instance_type",
    "pricing/term": "pricing_term",
    "pricing/publicOnDemandCost": "pricing_public_on_demand_cost",
    "savingsPlan/SavingsPlanARN": "savings_plan_savings_plan_arn",
    "savingsPlan/SavingsPlanEffectiveCost": "savings_plan_savings_plan_effective_cost",
    "savingsPlan/TotalCommitmentToDate": "savings_plan_total_commitment_to_date",
    "savingsPlan/UsedCommitment": "savings_plan_used_commitment",
}
CUR_TAGS = {key: f"resourceTags/user:{key}" for key in ("team", "project", "run_id")}


def cur_rows(plan: list[dict]) -> list[dict]:
    """Line items keyed by legacy CSV names, tags under ``tags``."""
    rows = []

    def add(start, end, kind, cost, tag=None, **extra):
        rows.append(
            {
                "lineItem/LineItemType": kind,
                "lineItem/UsageStartDate": start,
                "lineItem/UsageEndDate": end,
                "lineItem/UnblendedCost": round(cost, 4),
                "lineItem/CurrencyCode": "USD",
                "lineItem/UsageAccountId": "900000000042",
                "tags": tag or {},
            }
            | extra
        )

    rate = SHAPES["h100x8"]["aws"][2]["committed"]
    for line in plan:
        machine, _, prices = SHAPES[line["shape"]]["aws"]
        day, hours = line["day"], line["hours"]
        region = "USW2" if line["pricing"] == "on_demand" and line["shape"] == "h100x8" else "USE1"
        kind = "SpotUsage" if line["pricing"] == "spot" else "BoxUsage"
        common = {
            "lineItem/ProductCode": "AmazonEC2",
            "lineItem/UsageType": f"{region}-{kind}:{machine}",
            "lineItem/Operation": "RunInstances:SV001" if kind == "SpotUsage" else "RunInstances",
            "lineItem/UsageAmount": hours,
            "product/instanceType": "" if kind == "SpotUsage" else machine,
            "pricing/term": "" if kind == "SpotUsage" else "OnDemand",
        }
        if line["pricing"] == "committed":
            on_demand = hours * prices["on_demand"]
            sp = {"savingsPlan/SavingsPlanARN": SP_ARN, "pricing/publicOnDemandCost": round(on_demand, 4)}
            add(
                day,
                day + timedelta(days=1),
                "SavingsPlanCoveredUsage",
                on_demand,
                line["tags"],
                **common,
                **sp,
                **{
                    "savingsPlan/SavingsPlanEffectiveCost": round(hours * rate, 4),
                    "lineItem/LineItemDescription": f"Savings Plan covered usage, {machine}",
                },
            )
            add(
                day,
                day + timedelta(days=1),
                "SavingsPlanNegation",
                -on_demand,
                line["tags"],
                **common,
                **sp,
                **{"lineItem/LineItemDescription": "SavingsPlanNegation used by AccountId : 900000000042"},
            )
        else:
            cost = hours * prices[line["pricing"]]
            add(
                day,
                day + timedelta(days=1),
                "Usage",
                cost,
                line["tags"],
                **common,
                **{"lineItem/LineItemDescription": f"{machine} {line['pricing'].replace('_', '-')} instance hours"},
            )
    fee = COMMITTED_HOURS * rate
    for day, used in commitment_plan(plan):
        add(
            day,
            day + timedelta(days=1),
            "SavingsPlanRecurringFee",
            fee,
            **{
                "lineItem/ProductCode": "ComputeSavingsPlans",
                "lineItem/UsageType": "EC2SP:p5.1yrNoUpfront",
                "lineItem/ResourceId": SP_ARN,
                "lineItem/UsageAmount": 24,
                "savingsPlan/SavingsPlanARN": SP_ARN,
                "savingsPlan/TotalCommitmentToDate": round(fee, 4),
                "savingsPlan/UsedCommitment": round(used * rate, 4),
                "lineItem/LineItemDescription": "1 year No Upfront EC2 Instance Savings Plan (p5, us-east-1)",
            },
        )
    products = {
        "storage": ("AmazonS3", "USE1-TimedStorage-ByteHrs", "Usage"),
        "egress": ("AWSDataTransfer", "USE1-DataTransfer-Out-Bytes", "Usage"),
        "support": ("AWSSupportBusiness", "", "Fee"),
        "tax": ("AWSSupportBusiness", "", "Tax"),
        "credit": ("AmazonEC2", "", "Credit"),
    }
    for line in monthly_lines(plan, "aws"):
        code, usage_type, kind = products[line["kind"]]
        add(
            line["start"],
            line["end"],
            kind,
            line["cost"],
            line["tags"],
            **{
                "lineItem/ProductCode": code,
                "lineItem/UsageType": usage_type,
                "lineItem/ResourceId": f"northwind-{line['name']}" if "name" in line else "",
                "lineItem/UsageAmount": line.get("gb", ""),
                "lineItem/LineItemDescription": f"{line['kind'].capitalize()} ({line['start']:%B %Y})",
            },
        )
    rows.sort(key=lambda r: r["lineItem/UsageStartDate"])
    for row in rows:
        row["identity/LineItemId"] = f"{rng.getrandbits(160):040x}"
        row["bill/BillingPeriodStartDate"] = max(m for m in MONTHS if m <= row["lineItem/UsageStartDate"])
    return rows


def write_cur(plan: list[dict]) -> None:
    rows = cur_rows(plan)
    legacy = [
        {k: iso(v) if isinstance(v, date) else v for k, v in row.items() if k != "tags"}
        | {CUR_TAGS[k]: v for k, v in row["tags"].items()}
        for row in rows
    ]
    write("aws_cur_sample.csv", list(CUR_FIELDS) + list(CUR_TAGS.values()), legacy)
    cur2 = []
    for row in rows:
        out = {
            CUR_FIELDS[k]: (f"{v} 00:00:00.000" if isinstance(v, date) else v)
            for k, v in row.items()
            if k in CUR_FIELDS
        }
        out["resource_tags"] = json.dumps({f"user_{k}": v for k, v in row["tags"].items()})
        cur2.append(out)
    write("aws_cur2_sample.csv", list(CUR_FIELDS.values()) + ["resource_tags"], cur2)


# --- Google Cloud billing export (BigQuery, flattened to CSV) ------------------------------------------------

GCP_HEADER = [
    "billing_account_id",
    "invoice.month",
    "cost_type",
    "service.description",
    "sku.description",
    "usage_start_time",
    "usage_end_time",
    "project.id",
    "project.labels",
    "labels",
    "system_labels",
    "location.region",
    "usage.amount_in_pricing_units",
    "usage.pricing_unit",
    "cost",
    "cost_at_list",
    "currency",
    "credits",
]
TEAMS = ("llm-pretrain", "llm-eval", "research", "data")
GCP_GPU_SKU = {"h100x8": "Nvidia H100 80GB GPU", "a100x8": "Nvidia A100 80GB GPU", "dev4": "Nvidia L4 GPU"}


def gcp_row(
    start: date,
    end: date,
    sku: str,
    amount,
    unit: str,
    cost: float,
    tag: dict,
    project: str,
    machine: str = "",
    credits: list | None = None,
    service: str = "Compute Engine",
    cost_type: str = "regular",
) -> dict:
    return {
        "billing_account_id": "01AB23-45CD67-89EF01",
        "invoice.month": f"{start:%Y%m}",
        "cost_type": cost_type,
        "service.description": service,
        "sku.description": sku,
        "usage_start_time": f"{start} 00:00:00 UTC",
        "usage_end_time": f"{end} 00:00:00 UTC",
        "project.id": project,
        "project.labels": json.dumps([{"key": "team", "value": project[3:]}] if project[3:] in TEAMS else []),
        "labels": json.dumps([{"key": k, "value": v} for k, v in tag.items()]),
        "system_labels": json.dumps([{"key": "compute.googleapis.com/machine_spec", "value": machine}] * bool(machine)),
        "location.region": "us-central1",
        "usage.amount_in_pricing_units": amount,
        "usage.pricing_unit": unit,
        "cost": round(cost, 4),
        "cost_at_list": round(cost, 4),
        "currency": "USD",
        "credits": json.dumps(credits or []),
    }


def write_gcp(plan: list[dict]) -> None:
    rows = []
    gpu_od = (SHAPES["h100x8"]["gcp"][2]["on_demand"] - GCP_A3_CORE_PRICE) / 8
    gpu_cud = (SHAPES["h100x8"]["gcp"][2]["committed"] - GCP_A3_CORE_PRICE) / 8
    for line in plan:
        machine, gpus, prices = SHAPES[line["shape"]]["gcp"]
        day, hours, tag = line["day"], line["hours"], line["tags"]
        end, project = day + timedelta(days=1), "nw-" + tag.get("team", "sandbox")
        if line["shape"] == "cpu":
            rows.append(
                gcp_row(
                    day,
                    end,
                    "C3 Instance Core running in Americas",
                    hours * 176,
                    "hour",
                    hours * prices["on_demand"],
                    tag,
                    project,
                    machine,
                )
            )
            continue
        spot = "Spot Preemptible " if line["pricing"] == "spot" else ""
        sku = f"{spot}{GCP_GPU_SKU[line['shape']]} running in Americas"
        if tag.get("team") == "llm-pretrain":
            gross = hours * gpus * gpu_od
            credits = (
                [
                    {
                        "name": "Committed use discount: GPU",
                        "amount": round(-gross, 4),
                        "type": "COMMITTED_USAGE_DISCOUNT",
                    }
                ]
                if line["pricing"] == "committed"
                else []
            )
            rows.append(gcp_row(day, end, sku, hours * gpus, "hour", gross, tag, project, machine, credits))
            rows.append(
                gcp_row(
                    day,
                    end,
                    "A3 Instance Core running in Americas",
                    hours * 208,
                    "hour",
                    hours * GCP_A3_CORE_PRICE,
                    tag,
                    project,
                    machine,
                )
            )
        else:
            rows.append(
                gcp_row(day, end, sku, hours * gpus, "hour", hours * prices[line["pricing"]], tag, project, machine)
            )
    for day, _ in commitment_plan(plan):
        rows.append(
            gcp_row(
                day,
                day + timedelta(days=1),
                "Commitment v1: Nvidia H100 80GB GPU in Americas for 1 Year",
                COMMITTED_HOURS * 8,
                "hour",
                COMMITTED_HOURS * 8 * gpu_cud,
                {},
                "nw-llm-pretrain",
            )
        )
    promotion = 25_000.0  # a one-off credit, drawn down by the first on-demand GPU usage
    for row in sorted(rows, key=lambda r: r["usage_start_time"]):
        sku = row["sku.description"]
        if promotion and row["credits"] == "[]" and "GPU" in sku and "Spot" not in sku:
            amount = min(promotion, row["cost"])
            row["credits"] = json.dumps([{"name": "Startup program credit", "amount": -amount, "type": "PROMOTION"}])
            promotion -= amount
    for line in monthly_lines(plan, "gcp"):
        start, end, cost, kind = line["start"], line["end"], line["cost"], line["kind"]
        if kind == "storage":
            rows.append(
                gcp_row(
                    start,
                    end,
                    "Standard Storage US Multi-region",
                    round(cost / 0.023),
                    "gibibyte month",
                    cost,
                    line["tags"],
                    "nw-" + line["tags"]["team"],
                    service="Cloud Storage",
                )
            )
        elif kind == "egress":
            rows.append(
                gcp_row(
                    start,
                    end,
                    "Network Internet Data Transfer Out from Americas to Americas",
                    line["gb"],
                    "gibibyte",
                    cost,
                    {},
                    "nw-sandbox",
                    service="Networking",
                )
            )
        elif kind == "support":
            rows.append(gcp_row(start, end, "Enhanced Support", 1, "month", cost, {}, "", service="Support"))
        elif kind == "tax":
            rows.append(gcp_row(start, end, "Sales tax (6%)", 0, "", cost, {}, "", cost_type="tax"))
    write("gcp_sample.csv", GCP_HEADER, sorted(rows, key=lambda r: r["usage_start_time"]))


# --- Azure Cost Management, actual-cost export (MCA) ---------------------------------------------------------

AZURE_HEADER = [
    "date",
    "billingAccountName",
    "SubscriptionId",
    "subscriptionName",
    "resourceGroupName",
    "ResourceId",
    "meterCategory",
    "meterSubCategory",
    "meterName",
    "quantity",
    "unitOfMeasure",
    "effectivePrice",
    "chargeType",
    "pricingModel",
    "frequency",
    "costInBillingCurrency",
    "billingCurrency",
    "PayGPrice",
    "reservationName",
    "tags",
    "additionalInfo",
]
SUBSCRIPTION = "5b1e7c3a-13b0-4d2e-9c41-a013d2e8c4f1"


def write_azure(plan: list[dict]) -> None:
    rows = []

    def add(day, category, sub, meter, qty, unit, charge, model, cost, tag="", group="", info="", **extra):
        rows.append(
            {
                "date": f"{day:%m/%d/%Y}",
                "billingAccountName": "Northwind AI",
                "SubscriptionId": SUBSCRIPTION,
                "subscriptionName": "nw-ml-prod",
                "resourceGroupName": group,
                "meterCategory": category,
                "meterSubCategory": sub,
                "meterName": meter,
                "quantity": qty,
                "unitOfMeasure": unit,
                "chargeType": charge,
                "pricingModel": model,
                "costInBillingCurrency": money(cost),
                "billingCurrency": "USD",
                "tags": tag,
                "additionalInfo": info,
                "frequency": {"Usage": "UsageBased"}.get(charge, "Recurring"),
            }
            | extra
        )

    models = {"committed": "Reservation", "on_demand": "On Demand", "spot": "Spot"}
    for line in plan:
        size, _, prices = SHAPES[line["shape"]]["azure"]
        meter = size.replace("_", " ") + (" Spot" if line["pricing"] == "spot" else "")
        series = {
            "h100x8": "NDisr H100 v5 Series",
            "a100x8": "NDamsr A100 v4 Series",
            "dev4": "NCads A100 v4 Series",
            "cpu": "Dsv5 Series",
        }[line["shape"]]
        tag = json.dumps(line["tags"]) if line["tags"] else ""
        if line["pricing"] == "spot" and tag:
            tag = tag[1:-1]  # Azure sometimes exports tags without the outer braces
        group = "rg-" + line["tags"].get("team", "sandbox")
        cost = 0 if line["pricing"] == "committed" else line["hours"] * prices[line["pricing"]]
        add(
            line["day"],
            "Virtual Machines",
            series,
            meter,
            line["hours"],
            "1 Hour",
            "Usage",
            models[line["pricing"]],
            cost,
            tag,
            group,
            json.dumps({"ServiceType": f"Standard_{size}"}),
            ResourceId=f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{group}/providers/Microsoft.Compute/"
            f"virtualMachineScaleSets/{line['tags'].get('run_id', 'devbox')}",
            effectivePrice=0 if line["pricing"] == "committed" else prices[line["pricing"]],
            PayGPrice=prices["on_demand"],
            reservationName="nd-h100-v5-pretrain" if cost == 0 else "",
        )
    monthly_payment = COMMITTED_HOURS / 24 * 8760 / 12 * SHAPES["h100x8"]["azure"][2]["committed"]
    for month in (4, 5, 6):
        add(
            date(2025, month, 28),
            "",
            "",
            "",
            1,
            "1 Hour",
            "Purchase",
            "Reservation",
            monthly_payment,
            reservationName="nd-h100-v5-pretrain",
            frequency="Recurring",
            additionalInfo=json.dumps({"ReservationTerm": "P1Y", "BillingPlan": "Monthly", "Quantity": 8}),
        )
    for line in monthly_lines(plan, "azure"):
        kind, cost, tag = line["kind"], line["cost"], json.dumps(line["tags"]) if line["tags"] else ""
        if kind == "storage":
            add(
                line["start"],
                "Storage",
                "General Block Blob v2",
                "Hot LRS Data Stored",
                round(cost / 0.023),
                "1 GB/Month",
                "Usage",
                "On Demand",
                cost,
                tag,
                "rg-" + line["tags"]["team"],
            )
        elif kind == "egress":
            add(
                line["start"],
                "Bandwidth",
                "Rtn Preference: MGN",
                "Standard Data Transfer Out",
                line["gb"],
                "1 GB",
                "Usage",
                "On Demand",
                cost,
            )
        elif kind == "support":
            add(line["start"], "Azure Support", "", "ProDirect Support", 1, "1/Month", "Purchase", "", cost)
    write("azure_sample.csv", AZURE_HEADER, sorted(rows, key=lambda r: (r["date"][6:], r["date"])), bom=True, crlf=True)


if __name__ == "__main__":
    PLAN = usage_plan()
    write_focus(PLAN)
    write_cur(PLAN)
    write_gcp(PLAN)
    write_azure(PLAN)
