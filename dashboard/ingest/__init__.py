"""Import layer: turn uploaded billing exports and run logs into one canonical usage table plus a report.

``import_bytes`` / ``import_path`` decode the file, detect its format from the header (unless given), run
the format's reader and return ``(usage, report)``; ``summarize`` condenses both into the CLI's JSON.
Everything here is pure: no Streamlit, no network, no eval or pickle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pandas as pd

from dashboard.ingest import aws_cur, azure, focus, gcp, generic, slurm, wandb
from dashboard.ingest.billing import single_currency
from dashboard.ingest.bounded import checked_parts, read_regular_file
from dashboard.ingest.decode import Decoded, decode, decode_arrow
from dashboard.ingest.detect import detect_format
from dashboard.ingest.schema import (
    FORMATS,
    ColumnPlan,
    ImportReport,
    ReaderResult,
    ReadOptions,
    UnreadableFile,
    issues_frame,
)

Reader = Callable[[pd.DataFrame, ReadOptions], ReaderResult]
Progress = Callable[[float, str], None]

READERS: dict[str, Reader] = {
    "focus": focus.read,
    "aws_cur": aws_cur.read,
    "gcp": gcp.read,
    "azure": azure.read,
    "slurm": slurm.read,
    "wandb": wandb.read,
    "generic": generic.read,
}

DEFAULT_OPTIONS = ReadOptions()
# Readers that name the columns they use, so a large file's other columns need not be parsed.
READER_COLUMNS: dict[str, ColumnPlan] = {"focus": focus.COLUMNS}

UNTAGGED = "(untagged)"
REJECTED_SAMPLE_SIZE = 20


def _no_progress(fraction: float, stage: str) -> None:
    """Progress sink used when the caller passes none."""


def _import_decoded(
    decoded: Decoded, filename: str, format: str | None, options: ReadOptions, progress: Progress
) -> tuple[pd.DataFrame, ImportReport]:
    """Detect, read and account for a decoded table."""
    table = decoded.table
    progress(0.35, "detecting format")
    format_id = format or detect_format(list(table.columns), filename)
    if format_id not in READERS:
        raise UnreadableFile(f"Unknown format {format_id!r}. Known formats: {', '.join(FORMATS)}.")
    options = replace(options, decimal_comma=options.decimal_comma or decoded.decimal_comma)
    progress(0.45, f"reading {format_id} rows")
    result = READERS[format_id](table, options)
    progress(0.9, "checking totals")
    usage = result.usage
    single_currency(usage["currency"], filename)  # a backstop for readers that do not check it themselves
    rejected = (
        pd.concat([decoded.rejected, result.rejected], ignore_index=True)
        if len(decoded.rejected)
        else result.rejected
    )
    rejected = issues_frame(rejected["line"], rejected["reason"]).sort_values("line", ignore_index=True)
    report = ImportReport(
        format=format_id,
        rows_read=len(table) + len(decoded.rejected),
        rows_used=len(usage),
        excluded=result.excluded,
        rejected=rejected,
        warnings=decoded.warnings + result.warnings,
    )
    if not report.balanced:
        raise RuntimeError(f"{format_id} reader lost rows: {report}")
    progress(1.0, "done")
    return usage, report


def import_bytes(
    data: bytes,
    *,
    filename: str = "",
    format: str | None = None,
    options: ReadOptions = DEFAULT_OPTIONS,
    progress: Progress | None = None,
) -> tuple[pd.DataFrame, ImportReport]:
    """Import one uploaded file (CSV/TSV/Parquet, optionally .gz/.zip) into ``(usage, report)``.

    ``format`` overrides detection (one of ``FORMATS``); ``progress(fraction, stage)`` is called as work
    proceeds. Raises ``UnreadableFile`` with a one-paragraph message when the file cannot be imported.
    """
    progress = progress or _no_progress
    progress(0.0, "decoding file")
    detected: dict[str, str] = {}

    def select(columns: list[str]) -> ColumnPlan | None:
        try:
            detected["format"] = format or detect_format(columns, filename)
        except UnreadableFile:
            return None  # read everything; the refusal comes after decode's own checks (e.g. no data rows)
        return READER_COLUMNS.get(detected["format"])

    decoded = decode(data, filename, select)
    return _import_decoded(decoded, filename, format or detected.get("format"), options, progress)


def import_path(
    path: str | Path,
    *,
    format: str | None = None,
    options: ReadOptions = DEFAULT_OPTIONS,
    progress: Progress | None = None,
) -> tuple[pd.DataFrame, ImportReport]:
    """Import a file, or a folder of Parquet parts (read as one table, rows numbered across parts)."""
    path = Path(path)
    progress = progress or _no_progress
    if path.is_dir():
        import pyarrow.parquet as pq

        parts = checked_parts(path.rglob("*.parquet"), path)
        if not parts:
            raise UnreadableFile(
                f"The folder {path.name} holds no .parquet files. Upload a file, or a folder "
                "of Parquet parts of one export."
            )
        progress(0.0, "reading Parquet parts")
        try:
            table = pq.read_table([str(p) for p in parts]) if len(parts) > 1 else pq.read_table(parts[0])
        except (OSError, ValueError) as exc:
            raise UnreadableFile(
                f"The Parquet parts in {path.name} cannot be read together ({exc}). Check that "
                "they come from one export with one schema."
            ) from None
        return _import_decoded(decode_arrow(table), path.name, format, options, progress)
    if not path.exists():
        raise UnreadableFile(f"{path} does not exist.")
    return import_bytes(
        read_regular_file(path), filename=path.name, format=format, options=options, progress=progress
    )


def _iso(value: pd.Timestamp | None) -> str | None:
    """A UTC timestamp as ``YYYY-MM-DDTHH:MM:SSZ``; None when missing."""
    if value is None or pd.isna(value):
        return None
    return value.tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%SZ")


def summarize(usage: pd.DataFrame, report: ImportReport) -> dict:
    """The CLI's JSON summary of an import (totals, period, per-team figures and the row accounting)."""
    gpu_hours = float(usage["gpu_hours"].sum())
    spot_hours = float(
        usage.loc[usage["pricing"].eq("spot").fillna(False).to_numpy(dtype=bool), "gpu_hours"].sum()
    )
    currencies = usage["currency"].dropna().unique()
    teams = usage["team"].astype("string").fillna(UNTAGGED)
    by_team = usage[["gpu_hours", "cost"]].groupby(teams, sort=True).sum()
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
        "warnings": list(report.warnings),
    }


__all__ = [
    "READERS",
    "ImportReport",
    "ReadOptions",
    "UnreadableFile",
    "import_bytes",
    "import_path",
    "summarize",
]
