"""The step-time model's efficiency refitted to a team's own runs (issue 48, "the model's efficiency refitted to the
team's runs, so a measured layout predicts the next layout").

Each measured run is a scenario as it ran (shape, GPU, GPU count, layout, micro-batch: what the export logs, the
plan's where it logs none) with the MFU measured on it (model FLOPs, 6·N·tokens / (GPU-hours · peak · 3600), the
convention of `throughput`'s `mfu_predicted`). The refit is one multiplier on the model's predicted MFU for this
cluster: the efficiency e that minimises Σ ln²(e · predicted / measured), the geometric mean of measured /
predicted. Its error is the mean and the worst |e · predicted / measured − 1| over the rows it rests on. The
model's published constants (`step_time.DEFAULT_FIT`) are not changed: a new layout's MFU is e × the model's
prediction for that layout, so the measured layout anchors the figure and the model carries the change.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario


@dataclass(frozen=True)
class MeasuredRun:
    """One run the team measured: the scenario as it ran and its measured MFU (model FLOPs)."""

    label: str  # the run (or job) it was measured on
    scenario: Scenario  # shape, GPU, GPU count and layout as the run ran
    mfu: float  # measured MFU, model FLOPs
    layout_logged: bool = False  # True when the export logged the layout; False: the plan's layout was assumed


@dataclass(frozen=True)
class RefitRow:
    """A row the refit rests on: the model's prediction for the run's layout, what was measured and the fit."""

    label: str
    layout: str  # "64 GPUs · TP 2 · PP 1 · DP 32 · micro-batch 1"
    layout_logged: bool
    predicted_mfu: float  # the model's, published constants
    measured_mfu: float
    fitted_mfu: float  # efficiency × predicted
    error: float  # fitted / measured − 1


@dataclass(frozen=True)
class Refit:
    """The cluster's efficiency: one multiplier on the model's predicted MFU, the rows it rests on, its error."""

    efficiency: float
    rows: tuple[RefitRow, ...]
    mean_error: float  # mean |fitted / measured − 1| over the rows (0 on one row: nothing to check it against)
    worst_error: float


@dataclass(frozen=True)
class Prediction:
    """The model's predicted MFU (model FLOPs) for a scenario's layout, and the layout priced."""

    mfu: float
    layout: str  # "64 GPUs · TP 2 · PP 1 · DP 32 · micro-batch 1"


@dataclass(frozen=True)
class LayoutPrediction:
    """A layout's MFU with the cluster's efficiency (``mfu``: efficiency × the model's ``predicted_mfu``, at most 1),
    the layout priced and ``band``, the refit's mean error."""

    mfu: float
    predicted_mfu: float
    efficiency: float
    layout: str
    band: float


def predicted(scenario: Scenario) -> Prediction:
    """The model's predicted MFU (model FLOPs) for a scenario's layout, with `mfu` unset, and the layout priced."""
    result = scenario_outputs(scenario.model_copy(update={"mfu": None}))
    lay = result["layout"]
    layout = (f"{scenario.gpu_count:,} GPUs · TP {lay['tensor_parallel']} · PP {lay['pipeline_parallel']} · "
              f"DP {lay['data_parallel']} · micro-batch {scenario.micro_batch_size}")
    return Prediction(float(result["throughput"]["mfu_predicted"]), layout)


Predictor = Callable[[Scenario], Prediction]


def refit(runs: Sequence[MeasuredRun], predict: Predictor = predicted) -> Refit:
    """The efficiency that carries the model's predictions to the runs measured (module docstring); ValueError
    without a run, or with a measured or predicted MFU that is not a positive number."""
    if not runs:
        raise ValueError("refit needs at least one measured run")
    priced = []
    for run in runs:
        model = predict(run.scenario)
        if not (math.isfinite(run.mfu) and run.mfu > 0 and math.isfinite(model.mfu) and model.mfu > 0):
            raise ValueError(f"{run.label}: the measured ({run.mfu:.3g}) and predicted ({model.mfu:.3g}) MFU must "
                             "be positive numbers")
        priced.append((run, model))
    efficiency = math.exp(sum(math.log(run.mfu / model.mfu) for run, model in priced) / len(priced))
    rows = tuple(RefitRow(run.label, model.layout, run.layout_logged, model.mfu, run.mfu,
                          efficiency * model.mfu, efficiency * model.mfu / run.mfu - 1.0)
                 for run, model in priced)
    errors = [abs(row.error) for row in rows]
    return Refit(efficiency, rows, sum(errors) / len(errors), max(errors))


def predict_layout(fitted: Refit, scenario: Scenario, predict: Predictor = predicted) -> LayoutPrediction:
    """A new layout's MFU with the cluster's efficiency (``LayoutPrediction``)."""
    model = predict(scenario)
    return LayoutPrediction(min(1.0, fitted.efficiency * model.mfu), model.mfu, fitted.efficiency, model.layout,
                            fitted.mean_error)


def as_json(fitted: Refit) -> dict[str, Any]:
    """The refit as `calibrate --json` prints it: the constant, its error and the rows it rests on."""
    return {"efficiency": fitted.efficiency, "mean_error": fitted.mean_error, "worst_error": fitted.worst_error,
            "rows": [row.__dict__ for row in fitted.rows]}
