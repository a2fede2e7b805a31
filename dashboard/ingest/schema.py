"""The canonical usage table every import produces, and the report that accounts for every row."""

from __future__ import annotations

import pkgutil
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

# The format ids: one module per format in ingest/formats/, listed without importing them (cheap for the CLI).
FORMATS: tuple[str, ...] = tuple(
    sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).with_name("formats"))]))
)
PRICING_VALUES: tuple[str, ...] = ("reserved", "on_demand", "spot")

# Column name -> pandas dtype of the canonical usage table (one row per used source row).
CANONICAL_COLUMNS: dict[str, str] = {
    "period_start": "datetime64[ns, UTC]",
    "period_end": "datetime64[ns, UTC]",
    "gpu_hours": "float64",
    "cost": "float64",  # amortised / effective cost in `currency`
    "billed_cost": "float64",
    "currency": "string",
    "pricing": "string",  # one of PRICING_VALUES, or <NA> when unknown
    "charge_kind": "string",  # usage / commitment / adjustment (ingest.charges); <NA> for run logs, generic
    "gpu_type": "string",
    "resource_id": "string",
    "team": "string",
    "project": "string",
    "run_id": "string",
    "run_state": "string",
    "tokens": "float64",  # NaN where unknown
    "source_row": "int64",  # 1-based line number in the source file (header is line 1)
}


ISSUE_COLUMNS: dict[str, str] = {"line": "int64", "reason": "string"}


def issues_frame(lines=(), reasons=()) -> pd.DataFrame:
    """A frame of excluded or rejected rows: 1-based source `line` and the `reason` (rule or error)."""
    return pd.DataFrame({"line": pd.Series(list(lines), dtype="int64"),
                         "reason": pd.Series(list(reasons), dtype="string")})


@dataclass
class ImportReport:
    """Accounting of one import: rows_read == rows_used + rows_excluded + rows_rejected."""

    format: str
    rows_read: int
    rows_used: int
    excluded: pd.DataFrame = field(default_factory=issues_frame)  # rows dropped by a rule (not errors)
    rejected: pd.DataFrame = field(default_factory=issues_frame)  # rows that could not be read
    warnings: list[str] = field(default_factory=list)
    model_params: dict[int, float] = field(default_factory=dict)  # source row -> the run's model size, where logged
    run_layout: dict[int, dict[str, int]] = field(default_factory=dict)  # source row -> TP, PP, micro-batch logged

    @property
    def rows_excluded(self) -> int:
        return len(self.excluded)

    @property
    def rows_rejected(self) -> int:
        return len(self.rejected)

    @property
    def balanced(self) -> bool:
        return self.rows_read == self.rows_used + self.rows_excluded + self.rows_rejected


class UnreadableFile(ValueError):
    """A file that cannot be imported at all; the message is one paragraph for the user."""


def empty_usage() -> pd.DataFrame:
    """An empty canonical table with the right dtypes."""
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in CANONICAL_COLUMNS.items()})


@dataclass(frozen=True)
class ColumnPlan:
    """The columns a reader looks at, and those that repeat few distinct values (JSON tags, SKU details).

    On the fast CSV path, decode reads only `keep` and returns the `categorical` ones as pandas Categoricals
    of strings, which saves memory and makes factorising them free; other paths return strings.
    """

    keep: tuple[str, ...]
    categorical: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReadOptions:
    """What the user told us about a file that its contents cannot say."""

    timezone: str | None = None  # IANA name for sources with naive local times (Slurm); None = not given
    decimal_comma: bool = False  # "1.234,5" style numbers
    mapping: dict[str, str] | None = None  # generic format: canonical field -> source column


@dataclass
class ReaderResult:
    """What one format reader returns: used rows in canonical form plus the rows it set aside."""

    usage: pd.DataFrame  # columns exactly CANONICAL_COLUMNS, in that order and with those dtypes
    excluded: pd.DataFrame  # issues_frame(): rows dropped by a documented rule
    rejected: pd.DataFrame  # issues_frame(): rows that could not be read
    warnings: list[str] = field(default_factory=list)
    model_params: dict[int, float] = field(default_factory=dict)  # source row -> the run's model size, where logged
    run_layout: dict[int, dict[str, int]] = field(default_factory=dict)  # source row -> TP, PP, micro-batch logged
