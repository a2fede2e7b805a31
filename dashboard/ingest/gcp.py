"""Reader for the Google Cloud billing export flattened to CSV (``usage_start_time``, ``cost``, ``credits`` …).

Rules:
- cost = billed_cost = ``cost`` + Σ ``credits.amount`` (credits are negative): the net figure that, summed
  over all cost types, ties to the invoice. The import reconciles against that sum of ``cost`` plus
  credits over all non-rejected rows; nothing is excluded (tax, adjustment and rounding rows are kept with
  gpu_hours 0). A ``credits`` cell may be a JSON / Python-repr list of ``{name, amount, type}`` records or a
  plain number; an unreadable one rejects the row.
- gpu_hours: for SKUs whose ``sku.description`` names a GPU ("Nvidia Tesla A100 GPU running in Americas"),
  ``usage.amount_in_pricing_units`` when the pricing unit is hours (each unit is one GPU-hour); for
  instance-level SKUs (description mentions an instance, not cores/RAM) of a GPU machine type
  (``a3-highgpu-8g`` from ``system_labels`` machine_spec; ``data/gcp_machine_types.csv``, else the ``-Ng``
  suffix), hours × GPUs. Core and RAM SKUs of GPU machines get 0 so GPUs are not counted twice, and so do
  commitment fee SKUs ("Commitment v1: Nvidia H100 80GB GPU … for 1 Year"): they price the committed
  capacity, while the GPU usage it covers arrives on ordinary GPU SKU rows with a committed-use credit.
- pricing: "Spot"/"Preemptible" SKUs → spot; "Commitment" SKUs or committed-use credits → reserved; other
  Compute Engine GPU or instance rows → on_demand; the rest NA.
- charge_kind: ``cost_type`` tax / adjustment / rounding error → adjustment; commitment fee SKUs → commitment;
  support SKUs or services → adjustment; the rest (credits ride on their usage rows) → usage.
- team / project / run_id from ``labels`` (then ``project.labels``); project falls back to ``project.id``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from dashboard.ingest.billing import single_currency, tag_fields
from dashboard.ingest.charges import ADJUSTMENT, COMMITMENT, SUPPORT, charge_kinds, mentions
from dashboard.ingest.detect import find_column, require_columns
from dashboard.ingest.gpus import gpu_names, lookup_instances
from dashboard.ingest.rows import RowBook, text_column
from dashboard.ingest.schema import ReaderResult, ReadOptions
from dashboard.ingest.values import factorized, parse_datetime, parse_number, parse_tag_text

HOUR_UNITS = ("hour", "hours", "h", "hr", "hrs")
COMMITTED_CREDITS = (
    "COMMITTED_USAGE_DISCOUNT",
    "COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE",
    "FEE_UTILIZATION_OFFSET",
)
ADJUSTMENT_COST_TYPES = ("tax", "adjustment", "rounding_error", "rounding error")


def _credits(text: Any) -> tuple[float | None, bool, bool]:
    """Sum of credit amounts in one cell, whether the cell was readable, whether a credit is a CUD."""
    if not isinstance(text, str) or not text.strip():
        return 0.0, True, False
    stripped = text.strip()
    for candidate in (stripped, stripped.replace("'", '"')):
        try:
            records = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(records, (int, float)):
            return float(records), True, False
        if isinstance(records, dict):
            records = [records]
        if isinstance(records, list) and all(isinstance(r, dict) for r in records):
            try:
                total = sum(float(r.get("amount") or 0) for r in records)
            except (TypeError, ValueError):
                return None, False, False
            committed = any(str(r.get("type", "")).upper() in COMMITTED_CREDITS for r in records)
            return total, True, committed
    values, bad = parse_number(pd.Series([stripped], dtype="str"))
    return (None, False, False) if bad.iloc[0] else (float(values.iloc[0]), True, False)


def _machine_spec(text: Any) -> str | None:
    """The ``compute.googleapis.com/machine_spec`` value of a system_labels cell."""
    labels = parse_tag_text(text)
    return next((v for k, v in labels.items() if k.endswith("machine_spec")), None)


def read(table: pd.DataFrame, options: ReadOptions) -> ReaderResult:
    """Turn a decoded GCP billing export into canonical usage rows."""
    require_columns(list(table.columns), "gcp")
    columns = list(table.columns)

    def col(*names: str) -> str | None:
        return find_column(columns, *names)

    book = RowBook(table, options.decimal_comma)
    warnings: list[str] = []
    start_column = col("usage_start_time")
    start, bad = parse_datetime(table[start_column])
    book.reject_bad(bad, start_column, "a date-time")
    book.reject_missing(start, np.ones(len(table), bool), start_column)
    end = start
    if col("usage_end_time"):
        end, bad = parse_datetime(table[col("usage_end_time")])
        book.reject_bad(bad, col("usage_end_time"), "a date-time")
        end = end.fillna(start)

    cost_column = col("cost")
    gross = book.number(cost_column, "a cost")
    book.reject_missing(gross, np.ones(len(table), bool), cost_column)
    credits_column = col("credits", "credits.amount")
    committed_credit = np.zeros(len(table), dtype=bool)
    if credits_column is not None:
        total, readable, committed = factorized(table[credits_column], _credits, 3)
        readable = pd.Series(readable, index=table.index).fillna(True).astype(bool)
        book.reject_bad(~readable, credits_column, "a list of credits")
        credit = pd.Series(total, index=table.index, dtype="float64").fillna(0.0)
        committed_credit = pd.Series(committed, index=table.index).fillna(False).to_numpy(dtype=bool)
    else:
        credit = pd.Series(0.0, index=table.index)
    net = gross + credit

    sku = text_column(table, col("sku.description", "sku_description"))
    sku_gpu = gpu_names(sku)
    machine = pd.Series(pd.NA, index=table.index, dtype="string")
    if col("system_labels"):
        machine = pd.Series(
            factorized(table[col("system_labels")], lambda t: (_machine_spec(t),), 1)[0],
            index=table.index,
            dtype="string",
        )
    machine_count, machine_type = lookup_instances(machine, "gcp_machine_types")
    suffix = machine.str.extract(r"-(\d+)g$", expand=False).astype("float64")
    machine_count = machine_count.fillna(suffix)

    amount = book.number(col("usage.amount_in_pricing_units", "usage.amount"), "a quantity")
    unit = text_column(table, col("usage.pricing_unit", "usage.unit")).str.lower()
    in_hours = unit.isin(HOUR_UNITS).fillna(False).to_numpy(dtype=bool)
    lowered = sku.str.lower().fillna("")
    gpu_sku = sku_gpu.notna().to_numpy(dtype=bool) | lowered.str.contains(r"\bgpu\b").to_numpy(dtype=bool)
    instance_sku = lowered.str.contains(r"instance|\bvm\b") & ~lowered.str.contains(r"core|ram|memory")
    instance_rows = instance_sku.to_numpy(dtype=bool) & ~gpu_sku & machine_count.notna().to_numpy(dtype=bool)
    commitment_fee = lowered.str.startswith("commitment").to_numpy(dtype=bool)
    gpu_sku &= ~commitment_fee
    gpu_hours = pd.Series(0.0, index=table.index)
    gpu_hours[gpu_sku & in_hours] = amount[gpu_sku & in_hours]
    gpu_hours[instance_rows & in_hours] = (amount * machine_count)[instance_rows & in_hours]
    gpu_hours = gpu_hours.fillna(0.0)

    spot = lowered.str.contains(r"spot|preemptible").to_numpy(dtype=bool)
    commitment = lowered.str.contains(r"commitment").to_numpy(dtype=bool) | committed_credit
    pricing = pd.Series(pd.NA, index=table.index, dtype="string")
    pricing[(gpu_sku | instance_rows)] = "on_demand"
    pricing[commitment] = "reserved"
    pricing[spot] = "spot"

    currency = text_column(table, col("currency")).str.upper()
    code = single_currency(currency[book.open])
    currency = currency.fillna(code) if code else currency

    labels = tag_fields(table[col("labels")] if col("labels") else None, table.index)
    if col("project.labels"):
        project_labels = tag_fields(table[col("project.labels")], table.index)
        labels = {k: v.fillna(project_labels[k]) for k, v in labels.items()}
    labels["project"] = labels["project"].fillna(text_column(table, col("project.id", "project_id")))
    gpu_type = sku_gpu.fillna(machine_type).where(gpu_hours > 0)
    service = text_column(table, col("service.description", "service_description"))
    charge_kind = charge_kinds(
        table.index,
        (text_column(table, col("cost_type"), lower=True).isin(ADJUSTMENT_COST_TYPES), ADJUSTMENT),
        (commitment_fee, COMMITMENT),
        (mentions(service, SUPPORT) | mentions(sku, SUPPORT), ADJUSTMENT),
    )

    return book.result(
        {
            "period_start": start,
            "period_end": end,
            "gpu_hours": gpu_hours,
            "cost": net,
            "billed_cost": net,
            "currency": currency,
            "pricing": pricing,
            "charge_kind": charge_kind,
            "gpu_type": gpu_type,
            "resource_id": text_column(table, col("resource.global_name", "resource.name")),
            **labels,
        },
        warnings,
    )
