"""The declarative description of one export format, which the engine (``ingest.engine``) reads.

A format is data: how its header is recognised (fingerprint), which file columns it reads under which keys
(column mapping, with the names each export version uses), the rows it sets aside by rule (exclusions), the
look-alike files it refuses with a message (refusals), what kind of charge each row is (charges: a purchase, the
provider's unused-commitment line, an adjustment, else usage), and one function that applies its cost rule and
builds the canonical columns from the table (``derive``). Each format is one module in ``ingest/formats/``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from dashboard.ingest.charges import CHARGE_KINDS, USAGE

if TYPE_CHECKING:
    from dashboard.ingest.rows import Rows


@dataclass(frozen=True)
class Fingerprint:
    """How a header is recognised: every group of column keys must have one column present (``required``);
    ``markers`` are keys typical of the format, three of which make a near miss worth naming."""

    required: tuple[tuple[str, ...], ...]
    markers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Exclusion:
    """Rows whose ``key`` cell is one of ``values`` (case-insensitive) are set aside under ``rule``."""

    rule: str
    key: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Cell:
    """A test on the ``key`` cell (trimmed, case-insensitive): one of ``values``, a match of the regex ``pattern``,
    or, with neither, present (not empty or a null token). A file without the column fails it."""

    key: str
    values: tuple[str, ...] = ()
    pattern: str = ""

    def __post_init__(self) -> None:
        if self.values and self.pattern:
            raise ValueError(f"Cell {self.key!r}: give values or a pattern, not both.")


@dataclass(frozen=True)
class Charge:
    """Rows where every cell test of ``when`` holds are charges of ``kind`` (``charges.CHARGE_KINDS``). The first
    rule a row passes decides; a row no rule marks is usage."""

    kind: str
    when: tuple[Cell, ...]

    def __post_init__(self) -> None:
        if self.kind not in CHARGE_KINDS or self.kind == USAGE:
            raise ValueError(f"Charge kind {self.kind!r} is not one of {', '.join(CHARGE_KINDS[1:])}.")
        if not self.when:
            raise ValueError(f"A {self.kind} rule needs at least one cell test.")


@dataclass(frozen=True)
class Refusal:
    """A look-alike file this format does not read, recognised from its header, and the one-paragraph reason.

    ``message`` may use ``{file}`` for the file's name.
    """

    matches: Callable[[Sequence[str]], bool]
    message: str


@dataclass(frozen=True)
class Format:
    """One export format: recognition, column mapping, exclusion rules, refusals and the cost rule."""

    id: str
    title: str  # what the export is, for lists of formats: "FOCUS 1.0–1.3 cost and usage (CSV or Parquet)"
    noun: str  # the export in a sentence: "a FOCUS export"
    kind: Literal["billing", "runs", "either"]  # the Retrospective slot it fits: a bill, a run log, or either
    columns: Mapping[str, tuple[str, ...]]  # key -> the column's names in the versions of the export
    # the cost rule: canonical columns from the table, and "gpus" (the GPUs each row ran on) where the export says,
    # which bounds the row's GPU-hours by its period (ingest.plausible)
    derive: Callable[[Rows], dict[str, object]]
    fingerprint: Fingerprint | None = None  # None: never detected, only chosen (generic)
    order: int = 50  # place in lists of formats, and the tie-break when two fingerprints fit a header
    exclusions: tuple[Exclusion, ...] = ()
    charges: tuple[Charge, ...] = ()  # a bill's charge kinds (none: a run log or generic file, charge_kind NA)
    refusals: tuple[Refusal, ...] = ()
    missing_hint: str = ""  # appended when required columns are missing: how to export them
    categorical: tuple[str, ...] = ()  # keys whose columns repeat few distinct values
    selective: bool = False  # the decoder may skip the columns this format does not name
    row_local: bool = True  # each row's canonical columns depend on that row alone, so batches may be read apart
    priced: bool = True  # the export carries prices (a run log does not: its costs are 0 until the plan prices them)
    more_columns: Callable[[Sequence[str]], list[str]] = field(default=lambda header: [])  # header-dependent

    def __post_init__(self) -> None:
        unknown = sorted({cell.key for rule in self.charges for cell in rule.when} - set(self.columns))
        if unknown:
            raise ValueError(f"Format {self.id!r}: charge rules name columns it does not map: {', '.join(unknown)}.")

    @property
    def required(self) -> tuple[tuple[str, ...], ...]:
        """The column groups a file must have one column of each (none for a format that is only chosen)."""
        return self.fingerprint.required if self.fingerprint is not None else ()

    @property
    def markers(self) -> tuple[str, ...]:
        """The keys typical of the format (none for a format that is only chosen)."""
        return self.fingerprint.markers if self.fingerprint is not None else ()

    def aliases(self, *keys: str) -> tuple[str, ...]:
        """Every file column name the given keys may have."""
        return tuple(name for key in keys for name in self.columns[key])
