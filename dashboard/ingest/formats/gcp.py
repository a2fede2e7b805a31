"""The Google Cloud billing export flattened to CSV (``usage_start_time``, ``cost``, ``credits`` …).

Rules:
- cost = billed_cost = ``cost`` + Σ ``credits.amount`` (credits are negative): the net figure that, summed
  over all cost types, ties to the invoice. The import reconciles against that sum of ``cost`` plus
  credits over all non-rejected rows; nothing is excluded (tax, adjustment and rounding rows are kept with
  gpu_hours 0). A ``credits`` cell may be a JSON or Python-literal list (single quotes, ``None``) of
  ``{name, amount, type}`` records or a plain number; an unreadable one rejects the row.
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

import ast
import json
from typing import Any

import numpy as np
import pandas as pd

from dashboard.ingest.billing import currency_column, tag_fields
from dashboard.ingest.charges import ADJUSTMENT, COMMITMENT, SUPPORT
from dashboard.ingest.gpus import gpu_names, lookup_instances
from dashboard.ingest.rows import Rows
from dashboard.ingest.spec import Cell, Charge, Fingerprint, Format
from dashboard.ingest.values import factorized, parse_number, parse_tag_text

HOUR_UNITS = ("hour", "hours", "h", "hr", "hrs")
COMMITTED_CREDITS = (
    "COMMITTED_USAGE_DISCOUNT",
    "COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE",
    "FEE_UTILIZATION_OFFSET",
)
ADJUSTMENT_COST_TYPES = ("tax", "adjustment", "rounding_error", "rounding error")
COMMITMENT_FEE = r"^commitment"  # "Commitment v1: Nvidia H100 80GB GPU in Americas for 1 Year"


def _json(text: str) -> Any:
    """The JSON value of ``text``; None when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def _python_literal(text: str) -> Any:
    """The Python literal of ``text`` (``[{'amount': -1.2, 'id': None}]``, as BigQuery-to-CSV tools write
    credits), read with ``ast.literal_eval``, which evaluates no code; None when it is not one."""
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _credits(text: Any) -> tuple[float | None, bool, bool]:
    """Sum of credit amounts in one cell, whether the cell was readable, whether a credit is a CUD."""
    if not isinstance(text, str) or not text.strip():
        return 0.0, True, False
    stripped = text.strip()
    for records in (_json(stripped), _python_literal(stripped)):
        if records is None:
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


def derive(rows: Rows) -> dict[str, object]:
    """The GCP rules of the module docstring."""
    table, index = rows.table, rows.index
    start = rows.time("start", required=True)
    end = rows.time("end").fillna(start)

    gross = rows.number("cost", "a cost", required=True)
    committed_credit = np.zeros(len(table), dtype=bool)
    if rows.has("credits"):
        total, readable, committed = factorized(table[rows.col("credits")], _credits, 3)
        readable = pd.Series(readable, index=index).fillna(True).astype(bool)
        rows.reject_bad(~readable, rows.name("credits"), "a list of credits")
        credit = pd.Series(total, index=index, dtype="float64").fillna(0.0)
        committed_credit = pd.Series(committed, index=index).fillna(False).to_numpy(dtype=bool)
    else:
        credit = pd.Series(0.0, index=index)
    net = gross + credit

    sku = rows.text("sku")
    sku_gpu = gpu_names(sku)
    machine = pd.Series(pd.NA, index=index, dtype="string")
    if rows.has("system_labels"):
        machine = pd.Series(
            factorized(table[rows.col("system_labels")], lambda t: (_machine_spec(t),), 1)[0],
            index=index,
            dtype="string",
        )
    machine_count, machine_type = lookup_instances(machine, "gcp_machine_types")
    suffix = machine.str.extract(r"-(\d+)g$", expand=False).astype("float64")
    machine_count = machine_count.fillna(suffix)

    amount = rows.number("amount", "a quantity")
    unit = rows.text("unit").str.lower()
    in_hours = unit.isin(HOUR_UNITS).fillna(False).to_numpy(dtype=bool)
    lowered = sku.str.lower().fillna("")
    gpu_sku = sku_gpu.notna().to_numpy(dtype=bool) | lowered.str.contains(r"\bgpu\b").to_numpy(dtype=bool)
    instance_sku = lowered.str.contains(r"instance|\bvm\b") & ~lowered.str.contains(r"core|ram|memory")
    instance_rows = instance_sku.to_numpy(dtype=bool) & ~gpu_sku & machine_count.notna().to_numpy(dtype=bool)
    commitment_fee = lowered.str.contains(COMMITMENT_FEE).to_numpy(dtype=bool)
    gpu_sku &= ~commitment_fee
    gpu_hours = pd.Series(0.0, index=index)
    gpu_hours[gpu_sku & in_hours] = amount[gpu_sku & in_hours]
    gpu_hours[instance_rows & in_hours] = (amount * machine_count)[instance_rows & in_hours]
    gpu_hours = gpu_hours.fillna(0.0)

    spot = lowered.str.contains(r"spot|preemptible").to_numpy(dtype=bool)
    commitment = lowered.str.contains(r"commitment").to_numpy(dtype=bool) | committed_credit
    pricing = pd.Series(pd.NA, index=index, dtype="string")
    pricing[(gpu_sku | instance_rows)] = "on_demand"
    pricing[commitment] = "reserved"
    pricing[spot] = "spot"

    currency, _ = currency_column(rows, "currency")

    labels = tag_fields(table[rows.col("labels")] if rows.has("labels") else None, index)
    if rows.has("project_labels"):
        project_labels = tag_fields(table[rows.col("project_labels")], index)
        labels = {k: v.fillna(project_labels[k]) for k, v in labels.items()}
    labels["project"] = labels["project"].fillna(rows.text("project_id"))
    gpu_type = sku_gpu.fillna(machine_type).where(gpu_hours > 0)
    return {
        "period_start": start,
        "period_end": end,
        "gpu_hours": gpu_hours,
        "cost": net,
        "billed_cost": net,
        "currency": currency,
        "pricing": pricing,
        "gpu_type": gpu_type,
        "resource_id": rows.text("resource"),
        **labels,
    }


FORMAT = Format(
    id="gcp",
    title="Google Cloud billing export (BigQuery flattened to CSV)",
    noun="a Google Cloud billing export",
    kind="billing",
    order=30,
    columns={
        "start": ("usage_start_time",),
        "end": ("usage_end_time",),
        "cost": ("cost",),
        "credits": ("credits", "credits.amount"),
        "sku": ("sku.description", "sku_description"),
        "service": ("service.description", "service_description"),
        "system_labels": ("system_labels",),
        "amount": ("usage.amount_in_pricing_units", "usage.amount"),
        "unit": ("usage.pricing_unit", "usage.unit"),
        "currency": ("currency",),
        "labels": ("labels",),
        "project_labels": ("project.labels",),
        "project_id": ("project.id", "project_id"),
        "cost_type": ("cost_type",),
        "resource": ("resource.global_name", "resource.name"),
        "invoice_month": ("invoice.month",),
        "billing_account": ("billing_account_id",),
    },
    fingerprint=Fingerprint(
        required=(("start",), ("cost",), ("sku",)),
        markers=("start", "end", "sku", "service", "invoice_month", "billing_account", "credits", "cost_type",
                 "amount"),
    ),
    charges=(
        Charge(ADJUSTMENT, (Cell("cost_type", ADJUSTMENT_COST_TYPES),)),
        Charge(COMMITMENT, (Cell("sku", pattern=COMMITMENT_FEE),)),
        Charge(ADJUSTMENT, (Cell("service", pattern=SUPPORT),)),
        Charge(ADJUSTMENT, (Cell("sku", pattern=SUPPORT),)),
    ),
    derive=derive,
)
