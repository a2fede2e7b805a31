"""The step-time model's efficiency refitted to the team's runs (dashboard.core.refit): one multiplier, the
geometric mean of measured / predicted, the rows it rests on and its error; a new layout's MFU is that multiplier
times the model's prediction, the model's published constants unchanged."""

from pathlib import Path

import pytest

from dashboard.core import refit, step_time
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import scenario_from_json

PLAN = Path(__file__).resolve().parents[2] / "data" / "scenarios" / "presets" / "sample_org_13b.json"
BASE = scenario_from_json(PLAN.read_text(encoding="utf-8"))  # 13B on 64 H100


def _toy(scenario):
    """A stand-in model: 0.5 on 64 GPUs, 0.4 on 128, so the refit's arithmetic is checked by hand."""
    return refit.Prediction({64: 0.5, 128: 0.4}[scenario.gpu_count], f"{scenario.gpu_count} GPUs")


def _run(label, mfu, gpus=64, **layout):
    return refit.MeasuredRun(label, BASE.model_copy(update={"gpu_count": gpus, **layout}), mfu)


# name: (runs as (measured MFU, GPUs), efficiency, mean error, worst error), by hand from `_toy`
CASES = {
    "one run: its own ratio, nothing to check it against": ([(0.35, 64)], 0.7, 0.0, 0.0),
    "ratios 0.5 and 2: geometric mean 1, errors 0.5/0.25 - 1 = 1 and 0.5/1 - 1 = -0.5": (
        [(0.25, 64), (1.0, 64)], 1.0, 0.75, 1.0),
    "ratios 0.8 on 64 and 0.8 on 128 GPUs: 0.8 exactly": ([(0.4, 64), (0.32, 128)], 0.8, 0.0, 0.0),
    "ratios 0.9 and 0.4: e = 0.6, errors 0.6/0.9 - 1 and 0.6/0.4 - 1": (
        [(0.45, 64), (0.16, 128)], 0.6, (1 / 3 + 0.5) / 2, 0.5),
}


@pytest.mark.parametrize(("runs", "efficiency", "mean", "worst"), list(CASES.values()), ids=list(CASES))
def test_the_refit_by_hand(runs, efficiency, mean, worst):
    fitted = refit.refit([_run(f"job{i}", mfu, gpus) for i, (mfu, gpus) in enumerate(runs)], _toy)
    assert fitted.efficiency == pytest.approx(efficiency, rel=1e-12)
    assert fitted.mean_error == pytest.approx(mean, abs=1e-12)
    assert fitted.worst_error == pytest.approx(worst, abs=1e-12)
    assert [row.measured_mfu for row in fitted.rows] == [mfu for mfu, _ in runs]
    assert all(row.fitted_mfu == pytest.approx(efficiency * row.predicted_mfu) for row in fitted.rows)


LAYOUTS = [{"tensor_parallel": 2, "pipeline_parallel": 1}, {"tensor_parallel": 1, "pipeline_parallel": 4},
           {"tensor_parallel": 4, "pipeline_parallel": 2}]
EFFICIENCY = 0.8  # the cluster runs at 80 % of what the model predicts for every layout


def test_runs_generated_at_a_known_efficiency_are_refitted_to_it_and_predict_a_new_layout():
    """Three layouts measured at 0.8 × the model's prediction (each priced by the engine with mfu unset) refit to
    0.8 with no error; TP 8 on 256 GPUs, never measured, is then predicted at 0.8 × the model's MFU for it."""
    runs = []
    for number, layout in enumerate(LAYOUTS):
        scenario = BASE.model_copy(update={"mfu": None, **layout})
        model_mfu = scenario_outputs(scenario)["throughput"]["mfu_predicted"]
        runs.append(refit.MeasuredRun(f"job{number}", scenario, EFFICIENCY * model_mfu, layout_logged=True))
    fitted = refit.refit(runs)
    assert fitted.efficiency == pytest.approx(EFFICIENCY, rel=1e-9)
    assert fitted.mean_error == pytest.approx(0.0, abs=1e-9) and len(fitted.rows) == 3
    assert [row.layout.split(" · ")[1:3] for row in fitted.rows] == [["TP 2", "PP 1"], ["TP 1", "PP 4"],
                                                                      ["TP 4", "PP 2"]]
    new = BASE.model_copy(update={"gpu_count": 256, "tensor_parallel": 8, "pipeline_parallel": 1})
    model_new = scenario_outputs(new.model_copy(update={"mfu": None}))["throughput"]["mfu_predicted"]
    got = refit.predict_layout(fitted, new)
    assert got.mfu == pytest.approx(EFFICIENCY * model_new, rel=1e-9)
    assert got.predicted_mfu == pytest.approx(model_new, rel=1e-12)
    assert got.layout.startswith("256 GPUs · TP 8 · PP 1 · DP 32")


def test_the_published_constants_are_not_changed():
    before = step_time.DEFAULT_FIT
    refit.refit([_run("job0", 0.2)])
    assert step_time.DEFAULT_FIT is before  # refitting carries a multiplier; the model keeps its constants


@pytest.mark.parametrize("runs", [[], [_run("job0", 0.0)], [_run("job0", float("nan"))]])
def test_nothing_to_fit_is_refused(runs):
    with pytest.raises(ValueError):
        refit.refit(runs, _toy)


def test_the_prediction_never_passes_the_peak():
    fitted = refit.refit([_run("job0", 1.0)], lambda s: refit.Prediction(0.4, ""))  # e = 2.5
    assert refit.predict_layout(fitted, BASE, lambda s: refit.Prediction(0.5, "")).mfu == 1.0
