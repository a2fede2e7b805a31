"""Cell mappings shared by the cloud-billing readers (FOCUS, AWS CUR, GCP, Azure).

The tag keys that give team / project / run_id, case-insensitive value maps (pricing words, usage units),
and the single-currency rule.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dashboard.ingest.rows import Rows, take_strings
from dashboard.ingest.schema import UnreadableFile
from dashboard.ingest.values import parse_tags, tag_value

TAG_KEYS: dict[str, tuple[str, ...]] = {
    "team": ("team", "user:team", "user_team", "team_name", "cost_center", "costcenter"),
    "project": ("project", "user:project", "user_project", "project_name"),
    "run_id": ("run_id", "run", "user:run_id", "user_run_id", "user:run", "user_run", "runid", "run-id"),
}


def eq(values: pd.Series, *options: str) -> np.ndarray:
    """Boolean numpy mask: cell equals one of ``options`` (NA counts as False)."""
    array = (
        pa.array(values.array)
        if not isinstance(values.array, pd.arrays.ArrowStringArray)
        else values.array._pa_array
    )
    hit = pc.is_in(array, value_set=pa.array(list(options), array.type))
    return hit.to_numpy(zero_copy_only=False).astype(bool)


def tag_fields(raw: pd.Series | None, index: pd.Index) -> dict[str, pd.Series]:
    """team, project and run_id from a column of raw tag cells, parsing each distinct cell once."""
    if raw is None:
        return {field: pd.Series(pd.NA, index=index, dtype="string") for field in TAG_KEYS}
    codes, uniques = pd.factorize(raw, use_na_sentinel=True)
    parsed = parse_tags(pd.Series(uniques, dtype=object))
    out = {}
    for field, keys in TAG_KEYS.items():
        out[field] = take_strings(
            codes, list(tag_value(parsed, keys).to_numpy(dtype=object, na_value=None)), index
        )
    return out


def map_values(values: pd.Series, mapping: dict[str, str]) -> pd.Series:
    """Map cells case-insensitively through ``mapping`` (keys lower-case); NA where absent."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return take_strings(codes, [mapping.get(str(u).strip().lower()) for u in uniques], values.index)


def map_floats(values: pd.Series, mapping: dict[str, float]) -> pd.Series:
    """Map cells case-insensitively through ``mapping`` (keys lower-case) to floats; NaN where absent."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    lookup = np.array([mapping.get(str(u).strip().lower(), np.nan) for u in uniques] + [np.nan])
    return pd.Series(lookup[codes], index=values.index, dtype="float64")


def single_currency(values: pd.Series, filename: str = "") -> str | None:
    """The file's one currency code, or None if the column is empty; mixed currencies are refused."""
    codes = sorted({str(c).strip().upper() for c in values.dropna().unique()} - {""})
    if len(codes) > 1:
        raise UnreadableFile(
            f"{filename or 'The file'} mixes currencies ({', '.join(codes[:6])}). Costs in different "
            "currencies cannot be added up; export each billing currency separately (or convert them first) "
            "and import the files one by one."
        )
    return codes[0] if codes else None


def currency_column(rows: Rows, key: str, default: str | None = None) -> tuple[pd.Series, str | None]:
    """The upper-case currency of every row and the file's one code (mixed currencies are refused).

    Rows without a code take the file's code; with no code at all, ``default`` (with a warning) or NA.
    """
    currency = rows.text(key).str.upper()
    code = single_currency(currency[rows.open], rows.filename)
    if code is None and default is not None:
        code = default
        if not rows.has(key):
            rows.warn(f"{rows.filename or 'The file'} has no {rows.name(key)} column, so its costs are "
                      f"taken to be in {default}.")
        elif rows.open.any():
            rows.warn(f"{rows.col(key)} is empty on every row, so the costs are taken to be in {default}.")
    return (currency.fillna(code) if code else currency), code
