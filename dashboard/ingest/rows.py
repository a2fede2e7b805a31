"""Row accounting, the one mechanism every format reads through: rows used, excluded by a rule or rejected.

Also the string-column helpers the readers build their canonical columns with (one factorize per column,
strings assembled in Arrow rather than one Python object per row).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from dashboard.ingest.schema import CANONICAL_COLUMNS, ReaderResult, ReadOptions, issues_frame
from dashboard.ingest.values import NULL_TOKENS, parse_datetime, parse_number


def strings(values: np.ndarray, index: pd.Index) -> pd.Series:
    """An object array of str/None as a pyarrow-backed string Series."""
    return pd.Series(
        pd.arrays.ArrowStringArray(pa.array(values, pa.large_string())), index=index, dtype="string"
    )


def take_strings(codes: np.ndarray, uniques: Sequence[str | None], index: pd.Index) -> pd.Series:
    """Strings ``uniques[code]`` (NA for code -1) built in Arrow, without a Python object per row."""
    dictionary = pa.array([*uniques, None], pa.large_string())
    taken = dictionary.take(pa.array(np.where(codes < 0, len(uniques), codes)))
    return pd.Series(pd.arrays.ArrowStringArray(taken), index=index, dtype="string")


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


class Rows:
    """One source table being read: its columns by key, and the accounting of which rows are used, excluded
    by a named rule or rejected with a reason (the first mark wins). Every format reads through one of these.

    ``columns`` maps the format's column keys to the file's actual column names (None where absent), ``names``
    the keys to the names the format knows them by.
    Excluding before rejecting means a row dropped by a rule is not also checked for unreadable cells that
    the rule makes irrelevant.
    """

    def __init__(
        self,
        table: pd.DataFrame,
        columns: Mapping[str, str | None] | None = None,
        options: ReadOptions | None = None,
        filename: str = "",
        names: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.table = table
        self.columns = dict(columns or {})
        self.names = dict(names or {})
        self.options = options or ReadOptions()
        self.filename = filename
        self.decimal_comma = self.options.decimal_comma
        self.warnings: list[str] = []
        self.charge_kind: pd.Series | None = None  # set by the engine from the format's charge rules
        self._status = np.zeros(len(table), dtype=np.int8)  # 0 used, 1 excluded, 2 rejected
        self._reasons: list[tuple[int, pd.Series]] = []

    @property
    def index(self) -> pd.Index:
        return self.table.index

    @property
    def open(self) -> np.ndarray:
        """True for rows not yet excluded or rejected."""
        return self._status == 0

    def col(self, key: str) -> str | None:
        """The file's column for the format's ``key`` (None when the file lacks it)."""
        return self.columns.get(key)

    def name(self, key: str) -> str:
        """The file's column for ``key``, or the format's first name for it when the file lacks it."""
        return self.col(key) or self.names.get(key, (key,))[0]

    def has(self, key: str) -> bool:
        return self.col(key) is not None

    def text(self, key: str, *, lower: bool = False) -> pd.Series:
        """The column of ``key`` as trimmed strings (null tokens as NA); all NA when the file lacks it."""
        return text_column(self.table, self.col(key), lower=lower)

    def raw(self, key: str) -> pd.Series:
        """The column of ``key`` as the file has it (strings or Categorical); all missing when absent."""
        column = self.col(key)
        if column is not None:
            return self.table[column]
        empty = pd.Categorical.from_codes(np.full(len(self.table), -1, dtype=np.int8), categories=[])
        return pd.Series(empty, index=self.table.index)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def _mark(self, mask: pd.Series | np.ndarray, reason: str | pd.Series, status: int) -> None:
        hit = np.asarray(pd.Series(mask).fillna(False) if isinstance(mask, pd.Series) else mask, dtype=bool)
        hit = hit & self.open
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

    def reject_missing(self, values: pd.Series, mask: pd.Series | np.ndarray | None, column: str) -> None:
        """Reject rows in ``mask`` (every row when None) whose required ``values`` are missing."""
        missing = np.asarray(values.isna(), dtype=bool)
        self.reject(missing if mask is None else missing & np.asarray(mask, dtype=bool), f"{column} is empty")

    def number(self, key: str | None, what: str = "a number", *, default: float = np.nan,
               required: bool = False) -> pd.Series:
        """Parse the column of ``key`` as numbers, rejecting unreadable cells (and empty ones when
        ``required``); ``default`` where the file lacks the column."""
        column = self.col(key) if key else None
        if column is None:
            return pd.Series(default, index=self.table.index, dtype="float64")
        values, bad = parse_number(self.table[column], decimal_comma=self.decimal_comma)
        self.reject_bad(bad, column, what)
        if required:
            self.reject_missing(values, None, column)
        return values

    def time(self, key: str, *, required: bool = False, timezone: str | None = None,
             fmt: str | None = None) -> pd.Series:
        """Parse the column of ``key`` as UTC date-times, rejecting unreadable cells (and empty ones when
        ``required``); NaT where the file lacks the column."""
        column = self.col(key)
        if column is None:
            return pd.Series(pd.NaT, index=self.table.index, dtype="datetime64[ns, UTC]")
        values, bad = parse_datetime(self.table[column], timezone=timezone, fmt=fmt)
        self.reject_bad(bad, column, "a date-time")
        if required:
            self.reject_missing(values, None, column)
        return values

    def _issues(self, status: int) -> pd.DataFrame:
        parts = [reasons for kind, reasons in self._reasons if kind == status]
        if not parts:
            return issues_frame()
        joined = pd.concat(parts).sort_index()
        return issues_frame(joined.index, joined.to_numpy())

    def result(self, columns: Mapping[str, object]) -> ReaderResult:
        """The ReaderResult: used rows with ``columns`` (Series aligned to the table, or scalars) and the
        charge kinds."""
        used = self.open
        if self.charge_kind is not None:
            columns = {**columns, "charge_kind": self.charge_kind}
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
            usage=pd.DataFrame(data), excluded=self._issues(1), rejected=self._issues(2), warnings=self.warnings
        )


def cannot_read(column: str, raw: pd.Series, what: str) -> pd.Series:
    """Per-row reasons ``<column>: cannot read '<value>' as <what>``, built once per distinct value."""
    codes, uniques = pd.factorize(raw, use_na_sentinel=True)
    texts = [f"{column}: cannot read '{value}' as {what}" for value in uniques]
    return pd.Series(np.array([*texts, None], dtype=object)[codes], index=raw.index, dtype="string")
