"""Build small canonical usage tables from row dicts for the retrospective tests (on `pythonpath`, see pyproject)."""

import pandas as pd

from dashboard.ingest.schema import CANONICAL_COLUMNS


def usage(*rows: dict) -> pd.DataFrame:
    """A canonical usage table from row dicts; unspecified fields are NA (cost 0, one day from 1 May 2025)."""
    defaults = {"period_start": "2025-05-01", "gpu_hours": 0.0, "cost": 0.0, "currency": "USD"}
    table = pd.DataFrame([defaults | row for row in rows], columns=list(CANONICAL_COLUMNS))
    table["period_start"] = pd.to_datetime(table["period_start"], utc=True)
    table["period_end"] = pd.to_datetime(table["period_end"], utc=True).fillna(
        table["period_start"] + pd.Timedelta(days=1))
    table["billed_cost"] = table["billed_cost"].astype(float).combine_first(table["cost"].astype(float))
    table["source_row"] = range(2, len(table) + 2)
    return table.astype(CANONICAL_COLUMNS)
