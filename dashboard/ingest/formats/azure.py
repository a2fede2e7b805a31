"""Azure Cost Management cost-details exports (EA, MCA and pay-as-you-go CSV).

Rules:
- cost = billed_cost = ``costInBillingCurrency`` (EA/PAYG: ``Cost``, older: ``PreTaxCost``), purchases and
  refunds included; the import reconciles against that column's sum over non-rejected rows. Nothing is
  excluded (whether reservation usage is amortised depends on whether the actual or amortised dataset was
  exported; the file is taken as it is, with a warning when purchase rows show it is the actual-cost one).
- Dates: ``date`` in ``MM/DD/YYYY`` (EA/MCA) or ISO; a day-granular row covers [date, date + 1 day).
- gpu_hours = ``quantity`` in hours (``unitOfMeasure`` "1 Hour", "10 Hours", "100 Hours" scale it) × GPUs
  of the VM size, for ``Virtual Machines`` usage. The size comes from ``additionalInfo.ServiceType``
  (``Standard_ND96isr_H100_v5``) or the meter name (``ND96isr H100 v5``, a trailing "Spot"/"Low Priority"
  removed) and is looked up in ``data/azure_vm_sizes.csv``.
- pricing: ``pricingModel`` Spot → spot, On Demand → on_demand, Reservation / SavingsPlan → reserved.
- charge_kind (``charges``): Purchase rows of reservations or savings plans (``pricingModel`` or
  ``reservationName``) → commitment (the actual-cost dataset; the amortized one spreads them); UnusedReservation
  and UnusedSavingsPlan (the amortized dataset's unused part) → unused_commitment; Refund, Tax, rounding and support
  purchases → adjustment; other rows (Usage, reservation and savings-plan usage included, Marketplace purchases) →
  usage.
- team / project / run_id from ``tags`` (JSON, or JSON without the outer braces).
"""

from __future__ import annotations

import pandas as pd

from dashboard.ingest.billing import currency_column, map_values, tag_fields
from dashboard.ingest.charges import ADJUSTMENT, COMMITMENT, SUPPORT, UNUSED_COMMITMENT
from dashboard.ingest.gpus import gpu_names, lookup_instances
from dashboard.ingest.rows import Rows
from dashboard.ingest.spec import Cell, Charge, Fingerprint, Format
from dashboard.ingest.values import factorized, parse_datetime, parse_tag_text
from dashboard.ingest.wording import amount_text, count_text

PRICING: dict[str, str] = {
    "spot": "spot",
    "on demand": "on_demand",
    "ondemand": "on_demand",
    "on-demand": "on_demand",
    "reservation": "reserved",
    "savingsplan": "reserved",
    "savings plan": "reserved",
}
ADJUSTMENT_CHARGES = ("refund", "tax", "roundingadjustment", "rounding adjustment", "credit", "adjustment")
UNUSED_CHARGES = ("unusedreservation", "unusedsavingsplan", "unused reservation", "unused savings plan")
COMMITMENT_MODELS = ("reservation", "savingsplan", "savings plan")
PURCHASE = Cell("charge_type", ("purchase",))
_US_DATE = r"^\s*\d{1,2}/\d{1,2}/\d{4}\s*$"


def _vm_size_key(text: pd.Series) -> pd.Series:
    """VM size or meter name as a table key: ``Standard_ND96isr_H100_v5``, ``ND96isr H100 v5`` → ``nd96isr_h100_v5``."""
    key = text.str.strip().str.replace(r"(?i)^standard_", "", regex=True)
    key = key.str.replace(r"(?i)\s+(spot|low priority)$", "", regex=True)
    return key.str.replace(r"[\s_]+", "_", regex=True).str.lower()


def _service_type(text: object) -> tuple[str | None]:
    """The ``ServiceType`` (VM size) in one additionalInfo JSON cell."""
    info = parse_tag_text(text)
    return (next((v for k, v in info.items() if k.lower() == "servicetype"), None),)


def derive(rows: Rows) -> dict[str, object]:
    """The Azure rules of the module docstring."""
    table, index = rows.table, rows.index
    date_column = rows.name("date")
    us_dates = rows.text("date").str.match(_US_DATE).fillna(False).to_numpy(dtype=bool)
    start, bad = parse_datetime(table[date_column], timezone="UTC")
    if us_dates.any():
        us_start, us_bad = parse_datetime(table[date_column][us_dates], fmt="%m/%d/%Y")
        start[us_dates], bad[us_dates] = us_start, us_bad
    rows.reject_bad(bad, date_column, "a date")
    rows.reject_missing(start, None, date_column)
    end = start + pd.Timedelta(days=1)

    cost = rows.number("cost", "a cost", required=True)
    quantity = rows.number("quantity", "a quantity")
    unit = rows.text("unit").str.lower()
    hours_per_unit = unit.str.extract(r"^\s*(\d*)\s*hours?\s*$", expand=False)
    hours_per_unit = hours_per_unit.replace("", "1").astype("float64")
    hours = quantity * hours_per_unit

    meter = rows.text("meter_name")
    size = pd.Series(pd.NA, index=index, dtype="string")
    if rows.has("additional_info"):
        size = pd.Series(factorized(table[rows.col("additional_info")], _service_type, 1)[0], index=index,
                         dtype="string")
    gpu_count, gpu_type = lookup_instances(_vm_size_key(size), "azure_vm_sizes")
    meter_count, meter_type = lookup_instances(_vm_size_key(meter), "azure_vm_sizes")
    gpu_count, gpu_type = gpu_count.fillna(meter_count), gpu_type.fillna(meter_type)
    category = rows.text("meter_category", lower=True)
    charge = rows.text("charge_type", lower=True)
    vm_usage = ((category == "virtual machines") & charge.fillna("usage").eq("usage")).fillna(False)
    gpu_hours = (hours * gpu_count).where(vm_usage.to_numpy(dtype=bool)).fillna(0.0)
    gpu_type = gpu_type.fillna(gpu_names(meter)).where(gpu_hours > 0)

    currency, code = currency_column(rows, "currency")
    kinds = rows.charge_kind
    assert kinds is not None, "the engine marks charges before a format's rule runs"
    purchases = kinds.eq(COMMITMENT).to_numpy(dtype=bool) & rows.open
    if purchases.any():
        purchase_rows = count_text(int(purchases.sum()), "purchase row")
        rows.warn(
            f"{rows.filename or 'The file'} is the actual-cost dataset: reservations and savings plans are "
            f"charged when bought ({purchase_rows}, {amount_text(float(cost[purchases].sum()), code)}), and the "
            "usage they cover shows no cost, so the teams using reserved capacity look cheaper than they are. "
            "Export the amortized-cost dataset for per-team cost."
        )
    return {
        "period_start": start,
        "period_end": end,
        "gpu_hours": gpu_hours,
        "cost": cost,
        "billed_cost": cost,
        "currency": currency,
        "pricing": map_values(rows.text("pricing_model"), PRICING),
        "gpu_type": gpu_type,
        "resource_id": rows.text("resource"),
        **tag_fields(table[rows.col("tags")] if rows.has("tags") else None, index),
    }


FORMAT = Format(
    id="azure",
    title="Azure Cost Management cost details (EA, MCA or pay-as-you-go)",
    noun="an Azure cost export",
    kind="billing",
    order=40,
    columns={
        "date": ("date", "UsageDateTime", "UsageDate"),
        "cost": ("costInBillingCurrency", "Cost", "PreTaxCost"),
        "quantity": ("quantity", "ConsumedQuantity", "UsageQuantity"),
        "unit": ("unitOfMeasure",),
        "meter_name": ("meterName",),
        "meter_category": ("meterCategory",),
        "meter_subcategory": ("meterSubCategory",),
        "additional_info": ("additionalInfo",),
        "charge_type": ("chargeType",),
        "currency": ("billingCurrency", "BillingCurrencyCode", "Currency"),
        "pricing_model": ("pricingModel",),
        "reservation": ("reservationName", "benefitName"),
        "resource": ("ResourceId", "InstanceId", "InstanceName"),
        "tags": ("tags",),
        "subscription": ("SubscriptionId",),
        "resource_group": ("resourceGroupName",),
    },
    charges=(
        Charge(ADJUSTMENT, (Cell("charge_type", ADJUSTMENT_CHARGES),)),
        Charge(UNUSED_COMMITMENT, (Cell("charge_type", UNUSED_CHARGES),)),
        Charge(ADJUSTMENT, (PURCHASE, Cell("meter_category", pattern=SUPPORT))),
        Charge(ADJUSTMENT, (PURCHASE, Cell("meter_name", pattern=SUPPORT))),
        Charge(COMMITMENT, (PURCHASE, Cell("pricing_model", COMMITMENT_MODELS))),
        Charge(COMMITMENT, (PURCHASE, Cell("reservation"))),
    ),
    fingerprint=Fingerprint(
        required=(("date",), ("cost",), ("meter_category", "meter_name", "meter_subcategory")),
        markers=("cost", "meter_category", "meter_subcategory", "meter_name", "pricing_model", "currency",
                 "subscription", "resource_group", "charge_type", "additional_info", "date"),
    ),
    derive=derive,
)
