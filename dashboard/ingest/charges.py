"""What kind of charge a billing row is: consumption, a commitment fee to amortise, or an adjustment.

``charge_kind`` is "usage" for consumption (reserved or committed usage that shows $0 or a discounted cost
included), "commitment" for commitment fees and purchases a retrospective must spread onto the usage they
cover, "adjustment" for credits, refunds, tax, support and rounding; <NA> for run logs and generic files.
Masks are computed once per distinct cell, and the kinds are built in Arrow, so a million rows stay cheap.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.ingest.rows import take_strings

USAGE = "usage"
COMMITMENT = "commitment"
ADJUSTMENT = "adjustment"
CHARGE_KINDS: tuple[str, ...] = (USAGE, COMMITMENT, ADJUSTMENT)
SUPPORT = r"\bsupport\b"


def value_kinds(values: pd.Series, kinds: dict[str, str]) -> np.ndarray:
    """Per row, the index in CHARGE_KINDS of ``kinds[cell]`` (cells matched trimmed and lower-case), -1 where
    the cell is not a key; worked out once per distinct cell."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    lookup = [CHARGE_KINDS.index(kinds[key]) if (key := str(u).strip().lower()) in kinds else -1 for u in uniques]
    return np.array([*lookup, -1], dtype=np.int64)[codes]


def charge_kinds(index: pd.Index, *rules: tuple[np.ndarray | pd.Series, str],
                 base: np.ndarray | None = None) -> pd.Series:
    """Per row, the kind of the first rule whose mask is true, else the ``base`` kind (``value_kinds``), else
    "usage"."""
    codes = np.full(len(index), -1, dtype=np.int64)
    for mask, kind in rules:
        hit = np.asarray(pd.Series(mask).fillna(False), dtype=bool) & (codes < 0)
        codes[hit] = CHARGE_KINDS.index(kind)
    if base is not None:
        codes = np.where(codes < 0, base, codes)
    codes[codes < 0] = CHARGE_KINDS.index(USAGE)
    return take_strings(codes, list(CHARGE_KINDS), index)


def mentions(values: pd.Series, pattern: str) -> np.ndarray:
    """Boolean mask: the (case-insensitive) regex ``pattern`` occurs in the cell; NA counts as False.

    ``values`` may be a raw column (strings or Categorical, ``Rows.raw``) or cleaned text.
    """
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    found = pd.Series(uniques, dtype="string").str.contains(pattern, case=False, regex=True)
    return np.append(found.fillna(False).to_numpy(dtype=bool), False)[codes]
