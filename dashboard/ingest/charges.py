"""What kind of charge a billing row is: consumption, a commitment fee to amortise, or an adjustment.

``charge_kind`` is "usage" for consumption (reserved or committed usage that shows $0 or a discounted cost
included), "commitment" for commitment fees and purchases a retrospective must spread onto the usage they
cover, "adjustment" for credits, refunds, tax, support and rounding; <NA> for run logs and generic files.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

USAGE = "usage"
COMMITMENT = "commitment"
ADJUSTMENT = "adjustment"
CHARGE_KINDS: tuple[str, ...] = (USAGE, COMMITMENT, ADJUSTMENT)
SUPPORT = r"\bsupport\b"


def charge_kinds(index: pd.Index, *rules: tuple[np.ndarray | pd.Series, str]) -> pd.Series:
    """Per row, the kind of the first rule whose mask is true; "usage" where none applies."""
    kinds = np.full(len(index), USAGE, dtype=object)
    settled = np.zeros(len(index), dtype=bool)
    for mask, kind in rules:
        hit = np.asarray(pd.Series(mask).fillna(False), dtype=bool) & ~settled
        kinds[hit] = kind
        settled |= hit
    return pd.Series(kinds, index=index, dtype="string")


def mentions(text: pd.Series, pattern: str) -> np.ndarray:
    """Boolean mask: the (case-insensitive) regex ``pattern`` occurs in the cell; NA counts as False."""
    return text.str.contains(pattern, case=False, regex=True).fillna(False).to_numpy(dtype=bool)
