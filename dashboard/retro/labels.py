"""Pandas helpers of the row-level modules (join, amortisation, the import summary) and of the figures: a column
as its labels or integer codes, NA labelled ("(untagged)", or "(unknown)" for pricing). Loads no query
engine, so the command line's import summary starts fast."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.query.labels import NA_LABELS, UNKNOWN_PRICING, UNTAGGED

__all__ = ["NA_LABELS", "UNKNOWN_PRICING", "UNTAGGED", "group_codes", "group_labels"]


def group_labels(usage: pd.DataFrame, column: str) -> pd.Series:
    """``usage[column]`` as strings with NA replaced by its label ("(untagged)", or "(unknown)" for pricing)."""
    return usage[column].astype("string").fillna(NA_LABELS[column])


def group_codes(usage: pd.DataFrame, column: str) -> tuple[np.ndarray, list[str]]:
    """Integer codes (0..k-1) of ``column``'s labelled values and the k labels, one factorize for any size."""
    codes, uniques = pd.factorize(usage[column], use_na_sentinel=True)
    labels = [str(value) for value in uniques]
    if (codes < 0).any():
        label = NA_LABELS[column]
        if label not in labels:
            labels.append(label)
        codes = np.where(codes < 0, labels.index(label), codes)
    return codes, labels
