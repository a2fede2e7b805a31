"""The one engine that reads every format: resolve its columns, check the required ones, apply its exclusion
rules, mark its charge kinds, run its cost rule, reject the rows its canonical columns make implausible
(``plausible``), and account for every row through one ``Rows`` book."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from dashboard.ingest.charges import mark_charges
from dashboard.ingest.plausible import implausible
from dashboard.ingest.rows import Rows
from dashboard.ingest.schema import ColumnPlan, ReaderResult, ReadOptions, UnreadableFile
from dashboard.ingest.spec import Format


def find_column(columns: Sequence[str], *names: str) -> str | None:
    """The actual name of the first of ``names`` present in ``columns``, compared case-insensitively."""
    by_lower: dict[str, str] = {}
    for column in columns:
        by_lower.setdefault(str(column).lower(), column)
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


def resolve(fmt: Format, header: Sequence[str]) -> dict[str, str | None]:
    """The file's column for each of the format's keys (None where the file lacks it)."""
    return {key: find_column(header, *names) for key, names in fmt.columns.items()}


def missing_groups(fmt: Format, header: Sequence[str]) -> list[str]:
    """Required column groups absent from ``header``, each shown as ``a`` or ``a / b``."""
    columns = resolve(fmt, header)
    return [
        " / ".join(fmt.aliases(*group)[:3])
        for group in fmt.required
        if all(columns[key] is None for key in group)
    ]


def missing_message(fmt: Format, missing: list[str], header: Sequence[str], filename: str) -> str:
    """Why a file read as ``fmt`` cannot be imported: the required columns it lacks, as one paragraph."""
    shown = ", ".join(map(str, list(header)[:12])) + (", …" if len(header) > 12 else "")
    needed = "; ".join(" / ".join(fmt.aliases(*g)[:3]) for g in fmt.required)
    lacks = "columns " + ", ".join(f"'{m}'" for m in missing) if len(missing) > 1 else f"column '{missing[0]}'"
    return (
        f"{filename or 'The file'} was read as {fmt.noun} ({fmt.title}) but lacks the {lacks}. "
        f"{fmt.noun[0].upper() + fmt.noun[1:]} needs: {needed}. The file's columns are: {shown}. "
        + (fmt.missing_hint or "Check that the export includes them, or choose another format.")
    )


def column_plan(fmt: Format, header: Sequence[str]) -> ColumnPlan | None:
    """The columns the decoder must read for ``fmt`` (None: all of them, as strings)."""
    if not fmt.selective:
        return None
    keep = (*fmt.aliases(*fmt.columns), *fmt.more_columns(header))
    return ColumnPlan(keep=keep, categorical=(*fmt.aliases(*fmt.categorical), *fmt.more_columns(header)))


def read_table(fmt: Format, table, options: ReadOptions | None = None, filename: str = "") -> ReaderResult:
    """Read a decoded table as ``fmt``: the used rows in canonical form plus the rows set aside."""
    header = list(table.columns)
    missing = missing_groups(fmt, header)
    if missing:
        raise UnreadableFile(missing_message(fmt, missing, header, filename))
    rows = Rows(table, resolve(fmt, header), options, filename, fmt.columns)
    for exclusion in fmt.exclusions:
        values = {v.lower() for v in exclusion.values}
        rows.exclude(rows.text(exclusion.key, lower=True).isin(values).fillna(False).to_numpy(dtype=bool),
                     exclusion.rule)
    if fmt.charges:
        rows.charge_kind = mark_charges(rows, fmt.charges)
    try:
        columns = fmt.derive(rows)
    except UnreadableFile as refusal:
        message = str(refusal)
        if filename and filename not in message:
            raise UnreadableFile(f"{filename} ({fmt.noun}): {message}") from None
        raise
    gpus = columns.pop("gpus", None)
    params = columns.pop("model_params", None)
    layout = columns.pop("run_layout", None)
    checked = {**columns, "charge_kind": rows.charge_kind} if rows.charge_kind is not None else columns
    reasons = implausible(checked, rows.index, gpus if isinstance(gpus, pd.Series) else None)
    rows.reject(reasons.notna().to_numpy(dtype=bool), reasons)
    result = rows.result(columns)
    if isinstance(params, pd.Series):  # the run's model size where the export logs it, by source row
        kept = params[rows.open].dropna()
        result.model_params = {int(row): float(value) for row, value in kept.items()}
    if isinstance(layout, pd.DataFrame):  # the layout the run logs (TP, PP, micro-batch), by source row
        logged = layout[rows.open]
        result.run_layout = {int(row): {key: int(value) for key, value in values.items() if pd.notna(value)}
                             for row, values in logged.iterrows() if values.notna().any()}
    return result
