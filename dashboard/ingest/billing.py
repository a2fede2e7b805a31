"""Building blocks shared by the cloud-billing readers (FOCUS, AWS CUR, GCP, Azure).

Row accounting (``RowBook``: which rows are used, excluded by a rule, or rejected with a reason), the tag
keys that give team/project/run_id, GPU-name normalisation and the instance-type tables in ``data/``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dashboard.ingest.schema import CANONICAL_COLUMNS, ReaderResult, UnreadableFile, issues_frame
from dashboard.ingest.values import NULL_TOKENS, map_unique, parse_number, parse_tags, tag_value

DATA_DIR = Path(__file__).resolve().parents[2] / "data"

TAG_KEYS: dict[str, tuple[str, ...]] = {
    "team": ("team", "user:team", "user_team", "team_name", "cost_center", "costcenter"),
    "project": ("project", "user:project", "user_project", "project_name"),
    "run_id": ("run_id", "run", "user:run_id", "user_run_id", "user:run", "user_run", "runid", "run-id"),
}

GPU_NAMES: tuple[str, ...] = (
    "GB200",
    "B200",
    "B100",
    "H200",
    "H100",
    "H800",
    "A100",
    "A800",
    "A10G",
    "A10",
    "L40S",
    "L40",
    "L4",
    "V100",
    "T4",
    "P100",
    "P4",
    "K80",
    "MI300X",
    "MI250X",
    "RTX6000",
)
_GPU_NAME = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(GPU_NAMES) + r")(?![A-Za-z0-9])", re.IGNORECASE)


def gpu_name(text: object) -> str | None:
    """The plain accelerator name mentioned in ``text`` (``Nvidia Tesla A100 GPU`` → ``A100``), or None."""
    if not isinstance(text, str):
        return None
    match = _GPU_NAME.search(text.replace("_", " "))
    return match.group(1).upper() if match else None


def gpu_names(s: pd.Series) -> pd.Series:
    """``gpu_name`` of every cell, computed once per distinct value (string dtype, NA where none)."""
    return map_unique(s, gpu_name, dtype="string")


@cache
def instance_table(name: str) -> pd.DataFrame:
    """A ``data/<name>.csv`` table of instance types (first column, lower-cased key) → gpu_count, gpu_type."""
    table = pd.read_csv(DATA_DIR / f"{name}.csv", dtype={"gpu_count": "float64"})
    key = table.columns[0]
    return table.assign(**{key: table[key].str.lower()}).set_index(key)[["gpu_count", "gpu_type"]]


def instance_gpus(key: str, table_name: str) -> tuple[float | None, str | None]:
    """GPU count and GPU type of one instance type in ``data/<table_name>.csv`` (case-insensitive), or Nones."""
    table = instance_table(table_name)
    row = key.strip().lower()
    if row not in table.index:
        return None, None
    return float(table.at[row, "gpu_count"]), str(table.at[row, "gpu_type"])


def lookup_instances(keys: pd.Series, table_name: str) -> tuple[pd.Series, pd.Series]:
    """GPU count (NaN where unknown) and GPU type (NA) of each instance-type key (case-insensitive)."""
    counts, types = factorized(keys, lambda key: instance_gpus(key, table_name), 2)
    return (pd.Series(counts, index=keys.index, dtype="float64"), strings(types, keys.index))


def strings(values: np.ndarray, index: pd.Index) -> pd.Series:
    """An object array of str/None as a pyarrow-backed string Series."""
    return pd.Series(
        pd.arrays.ArrowStringArray(pa.array(values, pa.large_string())), index=index, dtype="string"
    )


def take_strings(codes: np.ndarray, uniques: list[str | None], index: pd.Index) -> pd.Series:
    """Strings ``uniques[code]`` (NA for code -1) built in Arrow, without a Python object per row."""
    dictionary = pa.array([*uniques, None], pa.large_string())
    taken = dictionary.take(pa.array(np.where(codes < 0, len(uniques), codes)))
    return pd.Series(pd.arrays.ArrowStringArray(taken), index=index, dtype="string")


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


def factorized(raw: pd.Series, func: Callable[[Any], tuple[Any, ...]], width: int) -> list[np.ndarray]:
    """Apply ``func`` (returning a ``width``-tuple) once per distinct cell; one object array per element."""
    codes, uniques = pd.factorize(raw, use_na_sentinel=True)
    results = [func(u) for u in uniques] + [(None,) * width]
    return [np.array([r[i] for r in results], dtype=object)[codes] for i in range(width)]


def text_column(table: pd.DataFrame, column: str | None, *, lower: bool = False) -> pd.Series:
    """A column as trimmed (optionally lower-cased) strings, null tokens as NA; all NA when ``column`` is None.

    Works once per distinct cell, so low-cardinality columns of a million rows cost one factorize.
    """
    if column is None:
        return pd.Series(pd.NA, index=table.index, dtype="string")
    codes, uniques = pd.factorize(table[column], use_na_sentinel=True)
    cleaned = []
    for value in uniques:
        text = str(value).strip()
        cleaned.append(None if text.lower() in NULL_TOKENS else (text.lower() if lower else text))
    return take_strings(codes, cleaned, table.index)


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
    codes = values.dropna().astype("string").str.strip().str.upper().unique()
    codes = [c for c in codes if c]
    if len(codes) > 1:
        raise UnreadableFile(
            f"{filename or 'The file'} mixes currencies ({', '.join(sorted(codes)[:6])}). Costs in different "
            "currencies cannot be added up; export each billing currency separately (or convert them first) "
            "and import the files one by one."
        )
    return codes[0] if codes else None


class RowBook:
    """Which source rows a reader uses, excludes by a named rule, or rejects with a reason (first one wins).

    Excluding before rejecting means a row dropped by a rule is not also checked for unreadable cells that
    the rule makes irrelevant.
    """

    def __init__(self, table: pd.DataFrame, decimal_comma: bool = False) -> None:
        self.table = table
        self.decimal_comma = decimal_comma
        self._status = np.zeros(len(table), dtype=np.int8)  # 0 used, 1 excluded, 2 rejected
        self._reasons: list[tuple[int, pd.Series]] = []

    @property
    def open(self) -> np.ndarray:
        """True for rows not yet excluded or rejected."""
        return self._status == 0

    def _mark(self, mask: pd.Series | np.ndarray, reason: str | pd.Series, status: int) -> None:
        hit = np.asarray(mask, dtype=bool) & self.open
        if not hit.any():
            return
        self._status[hit] = status
        index = self.table.index[hit]
        text = reason[hit] if isinstance(reason, pd.Series) else pd.Series(reason, index=index)
        self._reasons.append((status, pd.Series(text.to_numpy(), index=index, dtype="string")))

    def exclude(self, mask: pd.Series | np.ndarray, rule: str) -> None:
        """Set the rows in ``mask`` aside under the documented ``rule``."""
        self._mark(mask, rule, 1)

    def reject(self, mask: pd.Series | np.ndarray, reason: str | pd.Series) -> None:
        """Refuse the rows in ``mask`` as unreadable, with ``reason`` (text or per-row Series)."""
        self._mark(mask, reason, 2)

    def reject_bad(self, bad: pd.Series, column: str, what: str) -> None:
        """Reject rows whose ``column`` cell could not be read as ``what``, quoting the cell."""
        mask = np.asarray(bad, dtype=bool) & self.open
        if mask.any():
            raw = self.table[column].astype("string").fillna("")
            self.reject(mask, f"{column}: cannot read '" + raw.str.slice(0, 60) + f"' as {what}")

    def reject_missing(self, values: pd.Series, mask: pd.Series | np.ndarray, column: str) -> None:
        """Reject rows in ``mask`` whose required ``values`` are missing."""
        self.reject(
            np.asarray(values.isna(), dtype=bool) & np.asarray(mask, dtype=bool), f"{column} is empty"
        )

    def number(self, column: str | None, what: str = "a number", *, default: float = np.nan) -> pd.Series:
        """Parse ``column`` as numbers, rejecting unreadable cells; ``default`` where the column is absent."""
        if column is None:
            return pd.Series(default, index=self.table.index, dtype="float64")
        values, bad = parse_number(self.table[column], decimal_comma=self.decimal_comma)
        self.reject_bad(bad, column, what)
        return values

    def _issues(self, status: int) -> pd.DataFrame:
        parts = [reasons for kind, reasons in self._reasons if kind == status]
        if not parts:
            return issues_frame()
        joined = pd.concat(parts).sort_index()
        return issues_frame(joined.index, joined.to_numpy())

    def result(self, columns: dict[str, object], warnings: list[str]) -> ReaderResult:
        """The ReaderResult: used rows with ``columns`` (Series aligned to the table, or scalars)."""
        used = self.open
        data = {}
        for name, dtype in CANONICAL_COLUMNS.items():
            if name == "source_row":
                data[name] = pd.Series(self.table.index.to_numpy()[used], dtype="int64")
                continue
            value = columns.get(name, np.nan if dtype == "float64" else pd.NA)
            if isinstance(value, pd.Series):
                kept = value.reset_index(drop=True) if used.all() else value[used].reset_index(drop=True)
                data[name] = kept if str(kept.dtype) == dtype else kept.astype(dtype)
            else:
                data[name] = pd.Series(value, index=pd.RangeIndex(int(used.sum())), dtype=dtype)
        return ReaderResult(
            usage=pd.DataFrame(data), excluded=self._issues(1), rejected=self._issues(2), warnings=warnings
        )
