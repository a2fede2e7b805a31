"""Header fingerprints: which known export a table is, judged only by its column names.

Detection never guesses ``generic``: a header that matches no fingerprint is refused with a message listing
the known formats and how to import any other table with ``--format generic`` and a column mapping. A header
that clearly belongs to a format (several of its marker columns) but lacks a required column is refused
with the missing column named, rather than read half-way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dashboard.ingest.schema import UnreadableFile


@dataclass(frozen=True)
class Fingerprint:
    """Column groups a format must have (any name of a group will do) and columns typical of it."""

    label: str
    required: tuple[tuple[str, ...], ...]
    markers: tuple[str, ...]


FINGERPRINTS: dict[str, Fingerprint] = {
    "focus": Fingerprint(
        "FOCUS 1.0–1.3 cost and usage (CSV or Parquet)",
        (("ChargePeriodStart",), ("EffectiveCost",), ("BilledCost",)),
        (
            "ChargePeriodStart",
            "ChargePeriodEnd",
            "EffectiveCost",
            "BilledCost",
            "ChargeCategory",
            "BillingCurrency",
            "PricingCategory",
            "ConsumedQuantity",
            "SkuPriceDetails",
            "ListCost",
        ),
    ),
    "aws_cur": Fingerprint(
        "AWS Cost and Usage Report, legacy CSV or CUR 2.0 / Athena",
        (
            ("lineItem/UsageStartDate", "line_item_usage_start_date"),
            ("lineItem/UnblendedCost", "line_item_unblended_cost"),
            ("lineItem/LineItemType", "line_item_line_item_type"),
        ),
        (
            "lineItem/UsageStartDate",
            "lineItem/UnblendedCost",
            "lineItem/LineItemType",
            "lineItem/UsageType",
            "line_item_usage_start_date",
            "line_item_unblended_cost",
            "line_item_line_item_type",
            "line_item_usage_type",
            "identity/LineItemId",
            "identity_line_item_id",
        ),
    ),
    "gcp": Fingerprint(
        "Google Cloud billing export (BigQuery flattened to CSV)",
        (("usage_start_time",), ("cost",), ("sku.description", "sku_description")),
        (
            "usage_start_time",
            "usage_end_time",
            "sku.description",
            "service.description",
            "invoice.month",
            "billing_account_id",
            "credits",
            "cost_type",
            "usage.amount_in_pricing_units",
        ),
    ),
    "azure": Fingerprint(
        "Azure Cost Management cost details (EA, MCA or pay-as-you-go)",
        (
            ("date", "UsageDateTime", "UsageDate"),
            ("costInBillingCurrency", "CostInBillingCurrency", "Cost", "PreTaxCost"),
            ("meterCategory", "MeterName", "meterSubCategory"),
        ),
        (
            "costInBillingCurrency",
            "meterCategory",
            "meterSubCategory",
            "meterName",
            "pricingModel",
            "billingCurrency",
            "SubscriptionId",
            "resourceGroupName",
            "chargeType",
            "additionalInfo",
            "UsageDateTime",
            "PreTaxCost",
        ),
    ),
    "slurm": Fingerprint(
        "Slurm sacct --parsable2 output",
        (("JobID", "JobIDRaw"), ("Elapsed", "ElapsedRaw"), ("AllocTRES", "State")),
        ("JobID", "JobIDRaw", "Elapsed", "ElapsedRaw", "AllocTRES", "AllocNodes", "Submit", "Partition"),
    ),
    "wandb": Fingerprint(
        "Weights & Biases runs table CSV",
        (("Name",), ("State",), ("Runtime",), ("Created",)),
        ("Name", "State", "Runtime", "Created", "Sweep", "Agent"),
    ),
}


def find_column(columns: Iterable[str], *names: str) -> str | None:
    """The actual name of the first of ``names`` present in ``columns``, compared case-insensitively."""
    by_lower = {}
    for column in columns:
        by_lower.setdefault(column.lower(), column)
    for name in names:
        found = by_lower.get(name.lower())
        if found is not None:
            return found
    return None


def mapped_columns(columns: Sequence[str], mapping: Mapping[str, str]) -> dict[str, str]:
    """Field → actual column for a user's ``FIELD=COLUMN`` mapping (case-insensitive).

    Raises UnreadableFile naming every mapped column the file does not have, and listing the file's columns.
    """
    resolved = {field: find_column(columns, source) for field, source in mapping.items()}
    absent = [f"{field} → '{mapping[field]}'" for field, column in resolved.items() if column is None]
    if absent:
        raise UnreadableFile(
            f"The column mapping points at columns that are not in the file: {'; '.join(absent)}. "
            f"The file's columns are: {', '.join(map(str, columns))}."
        )
    return {field: column for field, column in resolved.items() if column is not None}


def missing_columns(columns: Sequence[str], format_id: str) -> list[str]:
    """Required column groups of ``format_id`` absent from ``columns``, each shown as ``a`` or ``a / b``."""
    return [
        " / ".join(group)
        for group in FINGERPRINTS[format_id].required
        if find_column(columns, *group) is None
    ]


def require_columns(columns: Sequence[str], format_id: str, filename: str = "") -> None:
    """Raise ``UnreadableFile`` naming the missing columns if ``columns`` lack what ``format_id`` needs."""
    missing = missing_columns(columns, format_id)
    if missing:
        fingerprint = FINGERPRINTS[format_id]
        raise UnreadableFile(
            f"{filename or 'The file'} was read as {format_id} ({fingerprint.label}) but has no "
            f"{', '.join(repr(m) for m in missing)} column. A {format_id} export needs the usage date and the "
            f"cost columns: {', '.join(' / '.join(g) for g in fingerprint.required)}. Check that the export "
            "includes them, or choose another format."
        )


def known_formats_text() -> str:
    """One line per known format with its key columns, for refusal messages and help text."""
    return "; ".join(
        f"{fid} ({fp.label}: {', '.join(g[0] for g in fp.required)})" for fid, fp in FINGERPRINTS.items()
    )


def detect_format(columns: Sequence[str], filename: str = "") -> str:
    """The format id whose fingerprint the header matches; ``UnreadableFile`` if none does."""
    for format_id in FINGERPRINTS:
        if not missing_columns(columns, format_id):
            return format_id
    for format_id, fingerprint in FINGERPRINTS.items():
        if sum(find_column(columns, m) is not None for m in fingerprint.markers) >= 3:
            require_columns(columns, format_id, filename)
    shown = ", ".join(list(columns)[:8]) + (", …" if len(columns) > 8 else "")
    raise UnreadableFile(
        f"{filename or 'The file'} does not match any known billing or run-log export (its header starts: "
        f"{shown}). Known formats: {known_formats_text()}. To import any other table, choose the generic "
        "format and map its columns, e.g. `python -m dashboard ingest FILE --format generic --map "
        "period_start=Date --map cost=Amount --map gpu_hours=GPUHours` (fields: period_start, cost, and "
        "optionally gpu_hours, team, project, run_id, pricing, gpu_type, currency)."
    )
