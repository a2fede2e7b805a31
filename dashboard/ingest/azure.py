"""Reader for Azure Cost Management cost-details exports (EA, MCA and pay-as-you-go CSV).

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
- charge_kind: Purchase rows of reservations or savings plans (``pricingModel`` or ``reservationName``) →
  commitment; Refund, Tax, rounding and support purchases → adjustment; other rows (Usage, UnusedReservation,
  Marketplace purchases) → usage.
- team / project / run_id from ``tags`` (JSON, or JSON without the outer braces).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.ingest.billing import map_values, single_currency, tag_fields
from dashboard.ingest.charges import ADJUSTMENT, COMMITMENT, SUPPORT, charge_kinds, mentions
from dashboard.ingest.detect import find_column, require_columns
from dashboard.ingest.gpus import gpu_names, lookup_instances
from dashboard.ingest.rows import RowBook, text_column
from dashboard.ingest.schema import ReaderResult, ReadOptions
from dashboard.ingest.values import factorized, parse_datetime, parse_tag_text

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


def read(table: pd.DataFrame, options: ReadOptions) -> ReaderResult:
    """Turn a decoded Azure cost-details table into canonical usage rows."""
    require_columns(list(table.columns), "azure")
    columns = list(table.columns)

    def col(*names: str) -> str | None:
        return find_column(columns, *names)

    book = RowBook(table, options.decimal_comma)
    warnings: list[str] = []
    date_column = col("date", "UsageDateTime", "UsageDate")
    raw_dates = text_column(table, date_column)
    us_dates = raw_dates.str.match(_US_DATE).fillna(False).to_numpy(dtype=bool)
    start, bad = parse_datetime(table[date_column], timezone="UTC")
    if us_dates.any():
        us_start, us_bad = parse_datetime(table[date_column][us_dates], fmt="%m/%d/%Y")
        start[us_dates], bad[us_dates] = us_start, us_bad
    book.reject_bad(bad, date_column, "a date")
    book.reject_missing(start, np.ones(len(table), bool), date_column)
    end = start + pd.Timedelta(days=1)

    cost_column = col("costInBillingCurrency", "Cost", "PreTaxCost")
    cost = book.number(cost_column, "a cost")
    book.reject_missing(cost, np.ones(len(table), bool), cost_column)

    quantity = book.number(col("quantity", "ConsumedQuantity", "UsageQuantity"), "a quantity")
    unit = text_column(table, col("unitOfMeasure", "UnitOfMeasure")).str.lower()
    hours_per_unit = unit.str.extract(r"^\s*(\d*)\s*hours?\s*$", expand=False)
    hours_per_unit = hours_per_unit.replace("", "1").astype("float64")
    hours = quantity * hours_per_unit

    meter = text_column(table, col("meterName", "MeterName"))
    size = pd.Series(pd.NA, index=table.index, dtype="string")
    info_column = col("additionalInfo", "AdditionalInfo")
    if info_column is not None:
        size = pd.Series(
            factorized(table[info_column], _service_type, 1)[0], index=table.index, dtype="string"
        )
    gpu_count, gpu_type = lookup_instances(_vm_size_key(size), "azure_vm_sizes")
    meter_count, meter_type = lookup_instances(_vm_size_key(meter), "azure_vm_sizes")
    gpu_count, gpu_type = gpu_count.fillna(meter_count), gpu_type.fillna(meter_type)
    category = text_column(table, col("meterCategory", "MeterCategory")).str.lower()
    charge = text_column(table, col("chargeType", "ChargeType")).str.lower()
    vm_usage = ((category == "virtual machines") & charge.fillna("usage").eq("usage")).fillna(False)
    gpu_hours = (hours * gpu_count).where(vm_usage.to_numpy(dtype=bool)).fillna(0.0)
    gpu_type = gpu_type.fillna(gpu_names(meter)).where(gpu_hours > 0)

    currency = text_column(table, col("billingCurrency", "BillingCurrencyCode", "Currency")).str.upper()
    code = single_currency(currency[book.open])
    currency = currency.fillna(code) if code else currency

    purchases = (charge.eq("purchase").fillna(False).to_numpy(dtype=bool)) & book.open
    if purchases.any():
        warnings.append(
            f"This is the actual-cost dataset: {purchases.sum()} purchase rows carry {cost[purchases].sum():,.2f} "
            f"{code or ''} of reservations or savings plans, and the usage they cover shows no cost, so the "
            "teams using reserved capacity look cheaper than they are. Export the amortized-cost dataset for "
            "per-team cost."
        )

    pricing_model = text_column(table, col("pricingModel", "PricingModel"))
    reservation = text_column(table, col("reservationName", "ReservationName", "benefitName", "BenefitName"))
    commitment = pricing_model.str.lower().str.replace(" ", "").isin(["reservation", "savingsplan"]).fillna(False)
    support = mentions(category, SUPPORT) | mentions(meter, SUPPORT)
    charge_kind = charge_kinds(
        table.index,
        (charge.isin(ADJUSTMENT_CHARGES), ADJUSTMENT),
        (charge.eq("purchase") & support, ADJUSTMENT),
        (charge.eq("purchase") & (commitment | reservation.notna()), COMMITMENT),
    )

    return book.result(
        {
            "period_start": start,
            "period_end": end,
            "gpu_hours": gpu_hours,
            "cost": cost,
            "billed_cost": cost,
            "currency": currency,
            "pricing": map_values(pricing_model, PRICING),
            "charge_kind": charge_kind,
            "gpu_type": gpu_type,
            "resource_id": text_column(table, col("ResourceId", "InstanceId", "InstanceName")),
            **tag_fields(table[col("tags")] if col("tags") else None, table.index),
        },
        warnings,
    )
