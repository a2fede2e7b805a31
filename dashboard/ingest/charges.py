"""What kind of charge a billing row is, from the format's ``charges`` rules (``spec.Charge``).

``charge_kind`` says what a row's cost is: "usage" for consumption (covered usage included: reserved or committed
usage at $0, a discounted cost or its share of the commitment), "commitment" for a commitment purchase or fee billed
on its own line at what was paid (a retrospective spreads it onto the usage it covers), "unused_commitment" for the
provider's own line of commitment nobody used (idle capacity as the bill states it), "adjustment" for credits,
refunds, tax, support and rounding; <NA> for run logs and generic files. Each test runs once per distinct cell, and
the kinds are built in Arrow, so a million rows stay cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dashboard.ingest.rows import take_strings
from dashboard.ingest.values import NULL_TOKENS

if TYPE_CHECKING:
    from dashboard.ingest.rows import Rows
    from dashboard.ingest.spec import Cell, Charge

USAGE = "usage"
COMMITMENT = "commitment"
UNUSED_COMMITMENT = "unused_commitment"
ADJUSTMENT = "adjustment"
CHARGE_KINDS: tuple[str, ...] = (USAGE, COMMITMENT, UNUSED_COMMITMENT, ADJUSTMENT)
SUPPORT = r"\bsupport\b"


def _holds(rows: Rows, cell: Cell) -> np.ndarray:
    """Per row, whether ``cell``'s test holds (False where the file lacks the column)."""
    if not rows.has(cell.key):
        return np.zeros(len(rows.index), dtype=bool)
    codes, uniques = pd.factorize(rows.raw(cell.key), use_na_sentinel=True)
    text = pd.Series(uniques, dtype="string").str.strip()
    if cell.values:
        found = text.str.lower().isin({value.lower() for value in cell.values})
    elif cell.pattern:
        found = text.str.contains(cell.pattern, case=False, regex=True)
    else:
        found = ~text.str.lower().isin(NULL_TOKENS)
    return np.append(found.fillna(False).to_numpy(dtype=bool), False)[codes]


def mark_charges(rows: Rows, rules: tuple[Charge, ...]) -> pd.Series:
    """Per row, the kind of the first rule whose cells all hold, else "usage"."""
    codes = np.full(len(rows.index), -1, dtype=np.int64)
    for rule in rules:
        hit = np.logical_and.reduce([_holds(rows, cell) for cell in rule.when]) & (codes < 0)
        codes[hit] = CHARGE_KINDS.index(rule.kind)
    codes[codes < 0] = CHARGE_KINDS.index(USAGE)
    return take_strings(codes, list(CHARGE_KINDS), rows.index)
