"""One import in figures: totals, period, per-team GPU-hours and cost, and the row accounting (the CLI's JSON)."""

from __future__ import annotations

import pandas as pd

from dashboard.ingest.schema import ImportReport
from dashboard.retro.labels import group_labels

REJECTED_SAMPLE_SIZE = 20


def _iso(value: pd.Timestamp | None) -> str | None:
    """A UTC timestamp as ``YYYY-MM-DDTHH:MM:SSZ``; None when missing."""
    if value is None or pd.isna(value):
        return None
    return value.tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%SZ")


def accounting(report: ImportReport) -> dict:
    """An import's row accounting: format, rows read, used, excluded and rejected, a sample of the rejected rows,
    the excluded rows by rule and the notes (what a dataset queried where it lies shows without reading it)."""
    return {
        "format": report.format,
        "rows_read": report.rows_read,
        "rows_used": report.rows_used,
        "rows_excluded": report.rows_excluded,
        "rows_rejected": report.rows_rejected,
        "rejected_sample": [
            {"line": int(line), "reason": str(reason)}
            for line, reason in report.rejected.head(REJECTED_SAMPLE_SIZE).itertuples(index=False)
        ],
        "excluded_by_rule": {str(k): int(v) for k, v in report.excluded["reason"].value_counts().items()},
        "warnings": list(report.warnings),
    }


def summarize(usage: pd.DataFrame, report: ImportReport) -> dict:
    """The CLI's JSON summary of an import (totals, period, per-team figures and the row accounting)."""
    gpu_hours = float(usage["gpu_hours"].sum())
    spot_hours = float(
        usage.loc[usage["pricing"].eq("spot").fillna(False).to_numpy(dtype=bool), "gpu_hours"].sum()
    )
    currencies = usage["currency"].dropna().unique()
    by_team = usage[["gpu_hours", "cost"]].groupby(group_labels(usage, "team"), sort=True).sum()
    counts = accounting(report)
    warnings = counts.pop("warnings")
    return counts | {
        "gpu_hours_total": round(gpu_hours, 6),
        "cost_total": round(float(usage["cost"].sum()), 6),
        "currency": str(currencies[0]) if len(currencies) == 1 else None,
        "period_start": _iso(usage["period_start"].min()) if len(usage) else None,
        "period_end": _iso(usage["period_end"].max()) if len(usage) else None,
        "spot_share_of_gpu_hours": round(spot_hours / gpu_hours, 6) if gpu_hours > 0 else None,
        "by_team": {
            str(team): {"gpu_hours": round(float(row.gpu_hours), 6), "cost": round(float(row.cost), 6)}
            for team, row in by_team.iterrows()
        },
        "warnings": warnings,
    }
