"""The import summary's readable table (`ingest` without `--json`): labels and the app's number format."""

import pytest

from dashboard.retro.summary import ImportSummary, describe


def _summary(currency: str | None, format: str) -> ImportSummary:
    """A summary of no rows in ``format`` whose costs are in ``currency`` (all ``describe`` reads of it)."""
    return ImportSummary(format=format, rows_read=0, rows_used=0, rows_excluded=0, rows_rejected=0,
                         rejected_sample=(), excluded_by_rule={}, warnings=(), gpu_hours_total=0.0, cost_total=0.0,
                         currency=currency, period_start=None, period_end=None, spot_share_of_gpu_hours=None,
                         by_team={})


USD = _summary("USD", "focus")
EUR = _summary("EUR", "focus")
UNPRICED = _summary(None, "slurm")  # a run log: no prices at all
NO_CURRENCY = _summary(None, "azure")  # a bill without a currency column (OpenCost's Template.csv)


@pytest.mark.parametrize(("summary", "name", "value", "row"), [
    (USD, "cost_total", 950_733.6, ("Cost", "$951k")),  # three significant figures, not 950,733.6
    (USD, "gpu_hours_total", 105_137.2, ("GPU-hours", "105k")),
    (USD, "spot_share_of_gpu_hours", 0.0343, ("Spot share of GPU-hours", "3.43 %")),
    (USD, "spot_share_of_gpu_hours", None, ("Spot share of GPU-hours", "n/a")),  # no GPU-hours at all
    (USD, "rows_read", 1_048_576, ("Rows read", "1,048,576")),  # counts of rows are exact
    (USD, "by_team.research.gpu_hours", 10_538.2, ("GPU-hours", "10.5k")),
    (USD, "by_team.research.cost", 129_515.0, ("Cost", "$130k")),
    (USD, "by_team.research", {"gpu_hours": 1.0, "cost": 2.0}, ("", "")),  # a team's header row
    (USD, "by_team.gpu_hours", {"gpu_hours": 1.0, "cost": 2.0}, ("", "")),  # a team called gpu_hours
    (USD, "excluded_by_rule", {"slurm job never started": 2}, ("Rows excluded, by rule", "")),
    (USD, "excluded_by_rule.slurm job never started", 2, ("", "2")),
    (EUR, "cost_total", 12_345.0, ("Cost", "12.3k EUR")),  # not a dollar sign on euros
    # Slurm and W&B exports carry no prices: their cost is not "$0".
    (UNPRICED, "cost_total", 0.0, ("Cost", "unpriced")),
    (UNPRICED, "by_team.data.cost", 0.0, ("Cost", "unpriced")),
    (UNPRICED, "currency", None, ("Currency", "none (no prices)")),
    (_summary(None, "wandb"), "cost_total", 0.0, ("Cost", "unpriced")),
    # A bill's costs are costs even when it does not say in what: the figure, not "unpriced".
    (NO_CURRENCY, "cost_total", 16.44, ("Cost", "16.4 (no currency column)")),
    (NO_CURRENCY, "currency", None, ("Currency", "not given")),
    (USD, "period_start", "2025-04-01T00:00:00Z", ("Period start (UTC)", "2025-04-01T00:00:00Z")),
])
def test_summary_rows(summary, name, value, row):
    assert describe(summary)(name, value) == row
