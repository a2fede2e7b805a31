"""One import in figures: totals, period, per-team GPU-hours and cost, and the row accounting (the CLI's JSON), and
each figure's label and display text for the CLI's readable table (`describe`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import pandas as pd

from dashboard.format import number
from dashboard.ingest.formats import FORMATS
from dashboard.ingest.schema import ImportReport
from dashboard.ingest.wording import amount_text
from dashboard.retro.labels import group_labels

REJECTED_SAMPLE_SIZE = 20
COST = "cost"  # a unit of its own: dollars as "$441k", another currency as "441k EUR", a run log's as unpriced
# The readable table's label and unit of each summary key (nested keys by their last part).
SUMMARY_FIELDS: dict[str, tuple[str, str]] = {
    "format": ("Format", ""),
    "rows_read": ("Rows read", "integer"),
    "rows_used": ("Rows used", "integer"),
    "rows_excluded": ("Rows excluded by a rule", "integer"),
    "rows_rejected": ("Rows rejected", "integer"),
    "excluded_by_rule": ("Rows excluded, by rule", "integer"),
    "gpu_hours_total": ("GPU-hours", "count"),
    "cost_total": ("Cost", COST),
    "currency": ("Currency", ""),
    "period_start": ("Period start (UTC)", ""),
    "period_end": ("Period end (UTC)", ""),
    "spot_share_of_gpu_hours": ("Spot share of GPU-hours", "fraction"),
    "by_team": ("By team", ""),
    "gpu_hours": ("GPU-hours", "count"),
    "cost": ("Cost", COST),
}


def _iso(value: pd.Timestamp | None) -> str | None:
    """A UTC timestamp as ``YYYY-MM-DDTHH:MM:SSZ``; None when missing."""
    if value is None or pd.isna(value):
        return None
    return value.tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class RejectedLine:
    """One rejected row of an import: its line in the file and why it was rejected."""

    line: int
    reason: str


@dataclass(frozen=True)
class Accounting:
    """An import's row accounting: format, rows read, used, excluded by a rule and rejected, a sample of the
    rejected rows, the excluded rows by rule and the notes (what a dataset queried where it lies shows)."""

    format: str
    rows_read: int
    rows_used: int
    rows_excluded: int
    rows_rejected: int
    rejected_sample: tuple[RejectedLine, ...]
    excluded_by_rule: Mapping[str, int]  # rows excluded, by the rule's name
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class TeamTotals:
    """One team's GPU-hours and cost in an import (cost in the import's currency)."""

    gpu_hours: float
    cost: float


@dataclass(frozen=True)
class ImportSummary(Accounting):
    """One import in figures: its row accounting, GPU-hours and cost in all (cost in ``currency``, None when the
    rows name none or several), the period (UTC, ISO 8601), the spot share of GPU-hours and the totals by team."""

    gpu_hours_total: float
    cost_total: float
    currency: str | None
    period_start: str | None
    period_end: str | None
    spot_share_of_gpu_hours: float | None  # None without GPU-hours
    by_team: Mapping[str, TeamTotals]

    def as_json(self) -> dict[str, Any]:
        """The CLI's JSON object: the accounting, the totals, the teams, then the warnings."""
        return {
            "format": self.format,
            "rows_read": self.rows_read,
            "rows_used": self.rows_used,
            "rows_excluded": self.rows_excluded,
            "rows_rejected": self.rows_rejected,
            "rejected_sample": [{"line": item.line, "reason": item.reason} for item in self.rejected_sample],
            "excluded_by_rule": dict(self.excluded_by_rule),
            "gpu_hours_total": self.gpu_hours_total,
            "cost_total": self.cost_total,
            "currency": self.currency,
            "period_start": self.period_start,
            "period_end": self.period_end,
            "spot_share_of_gpu_hours": self.spot_share_of_gpu_hours,
            "by_team": {team: {"gpu_hours": totals.gpu_hours, "cost": totals.cost}
                        for team, totals in self.by_team.items()},
            "warnings": list(self.warnings),
        }


def accounting(report: ImportReport) -> Accounting:
    """An import's row accounting (``Accounting``), the first ``REJECTED_SAMPLE_SIZE`` rejected rows as its sample."""
    return Accounting(
        format=report.format,
        rows_read=report.rows_read,
        rows_used=report.rows_used,
        rows_excluded=report.rows_excluded,
        rows_rejected=report.rows_rejected,
        rejected_sample=tuple(
            RejectedLine(int(line), str(reason))
            for line, reason in report.rejected.head(REJECTED_SAMPLE_SIZE).itertuples(index=False)
        ),
        excluded_by_rule={str(k): int(v) for k, v in report.excluded["reason"].value_counts().items()},
        warnings=tuple(report.warnings),
    )


def summarize(usage: pd.DataFrame, report: ImportReport) -> ImportSummary:
    """The summary of an import (totals, period, per-team figures and the row accounting), rounded to 1e-6."""
    gpu_hours = float(usage["gpu_hours"].sum())
    spot_hours = float(
        usage.loc[usage["pricing"].eq("spot").fillna(False).to_numpy(dtype=bool), "gpu_hours"].sum()
    )
    currencies = usage["currency"].dropna().unique()
    by_team = usage[["gpu_hours", "cost"]].groupby(group_labels(usage, "team"), sort=True).sum()
    counts = accounting(report)
    return ImportSummary(
        **{item.name: getattr(counts, item.name) for item in fields(Accounting)},
        gpu_hours_total=round(gpu_hours, 6),
        cost_total=round(float(usage["cost"].sum()), 6),
        currency=str(currencies[0]) if len(currencies) == 1 else None,
        period_start=_iso(usage["period_start"].min()) if len(usage) else None,
        period_end=_iso(usage["period_end"].max()) if len(usage) else None,
        spot_share_of_gpu_hours=round(spot_hours / gpu_hours, 6) if gpu_hours > 0 else None,
        by_team={
            str(team): TeamTotals(round(float(row.gpu_hours), 6), round(float(row.cost), 6))
            for team, row in by_team.iterrows()
        },
    )


def describe(summary: ImportSummary) -> Callable[[str, Any], tuple[str, str]]:
    """``(name, value) -> (label, text)`` for the readable table of ``summary``: counts and dollars in the app's
    three-significant-figure format, costs in the summary's currency ("unpriced" for an export that carries no
    prices, as Slurm and W&B exports do not; the bare figure when a bill names no currency)."""
    currency = summary.currency
    export = FORMATS.get(summary.format)
    priced = export is None or export.priced

    def text(unit: str, value: Any) -> str:
        if unit == COST and not priced:
            return "unpriced"
        if value is None:
            return "n/a"
        if unit == COST:
            return amount_text(value, currency) + ("" if currency else " (no currency column)")
        if unit == "" or isinstance(value, str):
            return str(value)
        return number(value, unit)

    def of(name: str, value: Any) -> tuple[str, str]:
        parts = name.split(".")
        if isinstance(value, dict):
            return (SUMMARY_FIELDS.get(parts[0], ("", ""))[0] if len(parts) == 1 else ""), ""
        if parts[0] == "excluded_by_rule" and len(parts) > 1:
            return "", text("integer", value)
        label, unit = SUMMARY_FIELDS.get(parts[-1], ("", ""))
        if name == "currency" and value is None:
            return label, "none (no prices)" if not priced else "not given"
        return label, text(unit, value)

    return of
