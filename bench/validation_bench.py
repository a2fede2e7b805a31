"""The step-time model's validation errors (`dashboard.core.throughput_validation`), printed beside the engine's
figures: each against the published figure it must beat, on the measured runs of ../shared/reference."""

from __future__ import annotations

from bench.harness import Measurement, Skipped
from dashboard.core import memory_validation, throughput_validation

CALCULON = (3.65, 8.87)  # Calculon's mean and worst error on Korthikanti et al.'s eight runs, %


def _summary() -> dict[str, float]:
    path = memory_validation.MEASURED_RUNS_CSV
    if not path.exists():
        raise Skipped(f"{path} not found (../shared not mounted)")
    return throughput_validation.summary(throughput_validation.results(memory_validation.measured_rows(path)))


def korthikanti_mean_error() -> Measurement:
    return Measurement(100 * _summary()["korthikanti_mean"], CALCULON[0], "K-1 to K-8, mean |predicted/measured − 1|")


def korthikanti_worst_error() -> Measurement:
    return Measurement(100 * _summary()["korthikanti_worst"], CALCULON[1], "K-1 to K-8, worst")


def measured_runs_mfu_error() -> Measurement:
    stats = _summary()
    return Measurement(100 * stats["mape"], 100 * throughput_validation.MAPE_TARGET,
                       f"{stats['rows']:.0f} complete runs, mean; worst {100 * stats['worst']:.1f} %")
