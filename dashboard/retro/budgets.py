"""Which budget a spend view is compared with: a budget applies to the view it was set for.

The export budget (the quarter's budget for everything in the export) belongs to the unfiltered view. A view
narrowed by team, project, pricing or dates is compared only with a budget entered for that very view; a
company budget drawn over one team's spend would read as a team far under budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date

WHOLE_EXPORT = "whole export"


def view_id(teams: Iterable[str] | None = None, projects: Iterable[str] | None = None,
            pricing: Iterable[str] | None = None, dates: tuple[date, date] | None = None) -> str:
    """A stable name of a view: "whole export", or its filters with the chosen values sorted
    ("teams=a,b · projects=p"); ``dates`` is given only when the date range is narrowed."""
    parts = [f"{name}={','.join(sorted(values))}" for name, values in
             (("teams", teams), ("projects", projects), ("pricing", pricing)) if values]
    if dates:
        parts.append(f"dates={dates[0]:%Y-%m-%d}..{dates[1]:%Y-%m-%d}")
    return " · ".join(parts) or WHOLE_EXPORT


def budget_for_view(view: str, export_budget_usd: float | None, view_budgets_usd: Mapping[str, float]) -> float | None:
    """The budget to draw for ``view``: the export budget for the whole export, else the budget entered for
    that view (None when there is none, or it is not positive)."""
    budget = export_budget_usd if view == WHOLE_EXPORT else view_budgets_usd.get(view)
    return budget if budget is not None and budget > 0 else None
