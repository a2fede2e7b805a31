"""The step-time and memory models' validation errors (`dashboard.validation.throughput_validation`,
`memory_validation`), printed beside the engine's figures: each against the published figure it must beat, on the
measured runs of ../shared/reference."""

from __future__ import annotations

from bench.harness import Measurement, Skipped
from dashboard.validation import memory_validation, throughput_validation

CALCULON = (3.65, 8.87)  # Calculon's mean and worst error on Korthikanti et al.'s eight runs, %


def _found() -> list[dict]:
    rows = throughput_validation.all_rows()
    if rows is None:
        raise Skipped(f"{throughput_validation.RUN_FILES} not found (../shared not mounted)")
    return throughput_validation.results(rows)


def _summary() -> dict[str, float]:
    return throughput_validation.summary(_found())


def korthikanti_mean_error() -> Measurement:
    return Measurement(100 * _summary()["korthikanti_mean"], CALCULON[0], "K-1 to K-8, mean |predicted/measured − 1|")


def korthikanti_worst_error() -> Measurement:
    return Measurement(100 * _summary()["korthikanti_worst"], CALCULON[1], "K-1 to K-8, worst")


def measured_runs_mfu_error() -> Measurement:
    stats = _summary()
    return Measurement(100 * stats["mape"], 100 * throughput_validation.MAPE_TARGET,
                       f"{stats['rows']:.0f} complete runs of both files, mean; worst {100 * stats['worst']:.1f} %")


def measured_runs_2_mfu_error() -> Measurement:
    second = {row["row_id"] for row in memory_validation.measured_rows(memory_validation.MEASURED_RUNS_2_CSV)}
    stats = throughput_validation.summary([row for row in _found() if row["row_id"] in second])
    return Measurement(100 * stats["mape"], 100 * throughput_validation.MAPE_TARGET,
                       f"{stats['rows']:.0f} runs of measured-runs-2.csv, mean; worst {100 * stats['worst']:.1f} %")


def held_out_mfu_error() -> Measurement:
    found = _found()
    held = throughput_validation.leave_one_source_out(found)
    errors = [abs(error) for error in held.values()]
    return Measurement(100 * sum(errors) / len(errors), 15.0,
                       f"{len(errors)} runs, each predicted with its source family left out of the fit; worst "
                       f"{100 * max(errors):.1f} %")


def measured_memory_error() -> Measurement:
    if not memory_validation.MEASURED_MEMORY_CSV.exists():
        raise Skipped(f"{memory_validation.MEASURED_MEMORY_CSV} not found (../shared not mounted)")
    results = memory_validation.measured_memory_results(
        memory_validation.measured_rows(memory_validation.MEASURED_MEMORY_CSV))
    mean, worst = memory_validation.measured_peak_errors(results)
    return Measurement(100 * mean, 10.0, f"{len(results)} KempnerForge allocator peaks on H200, mean |planner's "
                                         f"tensors / measured − 1|; worst {100 * worst:.1f} %")
