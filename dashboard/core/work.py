"""The work a Plan page rerun asks of the engine, predicted before it runs, and the per-session budget it must fit.

The unit is the priced row: one scenario row through the engine's cost path (`engine.cost_arrays`). A programme
multiplies it: each main row priced with a programme of r priced runs (`programme.priced_runs`) prices 2·r rows
more (each run on the cluster, then on the GPUs its batch can use; about 20 µs of CPU a row on the reference
machine). The main rows each part of the page prices with the programme are counted here, and
tests/app/test_plan_work.py checks them against the page. Monte Carlo draws are left out: they move the programme with
the main run (`programme.Scaled`), one cheap row a draw, bounded by the draws control.
"""

from __future__ import annotations

from typing import Any

from dashboard.core.programme import priced_runs

PLAN_ROWS = 23  # the plan (1) and its Monte Carlo: the point estimates (4) and the tornado (18)
BASELINE_ROWS = 1  # the pinned baseline's headline numbers
# "Can it run?" for a plan that does not fit (`memory_fixes.fixes`): the plan again, then each option once, at most
# 3 ZeRO stages, flash attention, selective recompute, 10 TP and 8 PP degrees, the proposed layout (2), micro-batch
# 1, full recompute and 20 GPU doublings.
FIX_ROWS = 48
# The charts that price the plan again, by their title: the grid of each sweep, with its point estimate.
CHART_ROWS = {"Checkpoint interval": 121, "Spot share": 93, "Where the step goes": 11, "Storage growth": 8,
              "Scaling law": 1, "TST vs baseline": 1}


def runs_of(scenario: Any) -> int:
    """The runs the engine prices for the scenario's programme."""
    return sum(priced_runs(stage) for stage in scenario.programme) if scenario is not None else 0


def plan_rows(scenario: Any, baseline: Any, fits: bool | None = None) -> int:
    """Rows the page prices for the plan's programme and the baseline's before any chart; the fixes of "Can it
    run?" are counted unless the plan is known to fit."""
    main_rows = PLAN_ROWS + (0 if fits else FIX_ROWS)
    return 2 * (runs_of(scenario) * main_rows + runs_of(baseline) * BASELINE_ROWS)


def plan_refusal(scenario: Any, baseline: Any, budget_rows: int, setting: str) -> str | None:
    """Why the page will not price this plan (its programme and the baseline's cost more than the budget, its fixes
    counted: whether it fits is not known before it is priced), or None."""
    rows = plan_rows(scenario, baseline)
    if rows <= budget_rows:
        return None
    beside = f" and the baseline's {runs_of(baseline):,}" if runs_of(baseline) else ""
    return (f"the programme's {runs_of(scenario):,} priced runs{beside} would price {rows:,} engine rows in one "
            f"rerun; at most {budget_rows:,} a rerun ({setting}): fewer ladder runs or stages")


def refused_charts(scenario: Any, baseline: Any, fits: bool, charts: list[str], budget_rows: int,
                   setting: str) -> dict[str, str]:
    """The open charts this rerun will not draw, each with why: the costliest first, until the plan (which `fits`
    in its GPUs' memory, or not) and the charts left fit the budget."""
    rows = plan_rows(scenario, baseline, fits)
    costs = {chart: 2 * runs_of(scenario) * CHART_ROWS.get(chart, 0) for chart in charts}
    total = rows + sum(costs.values())
    refused: dict[str, str] = {}
    for chart in sorted(charts, key=costs.__getitem__, reverse=True):
        if total <= budget_rows or not costs[chart]:  # a chart that prices nothing again is always drawn
            break
        refused[chart] = (
            f"Not drawn: this chart prices the plan {CHART_ROWS[chart]} times, and with the programme's "
            f"{runs_of(scenario):,} priced runs that is {costs[chart]:,} engine rows beside the plan's "
            f"{rows:,}; at most {budget_rows:,} a rerun ({setting}). Fewer ladder runs or stages draw it.")
        total -= costs[chart]
    return refused
