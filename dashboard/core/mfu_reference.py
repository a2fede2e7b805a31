"""MFU sanity: the user's MFU against published runs (data/published_mfu.csv) and the pipeline bubble's ceiling.

Comparable runs are those on the same GPU generation within a factor of ten in total parameters; failing
that, every run on the same generation; failing that, every published run. Outside the comparable runs'
range the page warns. A plan outside every validated region of the step-time model is priced at the median of
the strictly comparable runs (`published_mfu`: same generation, precision, dense or MoE, size within 10×).
A 1F1B pipeline idles (PP − 1) / (m + PP − 1) of each step, so MFU cannot exceed 1 − bubble. The published
figures measure different things (steady-state MFU, whole-run averages, HFU); the table says which.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

PUBLISHED_MFU_CSV = Path(__file__).resolve().parents[2] / "data" / "published_mfu.csv"
SIZE_FACTOR = 10.0


def _percent(fraction: float) -> str:
    return f"{100 * fraction:.0f} %"


@dataclass(frozen=True)
class PublishedRun:
    run: str
    total_params_b: float
    generation: str
    accelerator: str
    precision: str
    moe: bool
    mfu_low: float
    mfu_high: float
    measure: str
    source: str
    status: str

    @property
    def mfu_text(self) -> str:
        low, high = round(100 * self.mfu_low), round(100 * self.mfu_high)
        return f"{self.run} {low} %" if low == high else f"{self.run} {low}–{high} %"


@cache
def published_runs() -> tuple[PublishedRun, ...]:
    """Every published run of the table, in file order."""
    with PUBLISHED_MFU_CSV.open(newline="", encoding="utf-8") as handle:
        return tuple(
            PublishedRun(
                run=row["run"], total_params_b=float(row["total_params_b"]), generation=row["generation"],
                accelerator=row["accelerator"], precision=row["precision"],
                moe=row["moe"] == "yes", mfu_low=float(row["mfu_low"]), mfu_high=float(row["mfu_high"]),
                measure=row["measure"], source=row["source"], status=row["status"],
            )
            for row in csv.DictReader(handle)
        )


def comparable_runs(generation: str, total_params: float) -> tuple[tuple[PublishedRun, ...], str]:
    """The runs to compare with and a phrase saying which they are."""
    runs = published_runs()
    same = tuple(run for run in runs if run.generation == generation)
    similar = tuple(
        run for run in same if 1 / SIZE_FACTOR <= run.total_params_b * 1e9 / total_params <= SIZE_FACTOR
    )
    if similar:
        return similar, f"of similar size on {generation.title()} GPUs"
    if same:
        return same, f"on {generation.title()} GPUs"
    return runs, f"on any GPU (none on {generation.title()})"


@dataclass(frozen=True)
class PublishedMfu:
    """The MFU of the published runs comparable with a plan: the median of their midpoints, the band their
    figures span and the runs' names."""

    median: float
    low: float
    high: float
    runs: tuple[str, ...]


@lru_cache(maxsize=256)
def published_mfu(generation: str, precision: str, moe: bool, total_params: float) -> PublishedMfu | None:
    """The median MFU of the published runs on the same GPU generation, at the same precision, dense or MoE as the
    plan and within `SIZE_FACTOR` of its total parameters; None when no run is that close."""
    runs = [run for run in published_runs()
            if run.generation == generation and run.precision == precision and run.moe == moe
            and total_params > 0 and 1 / SIZE_FACTOR <= run.total_params_b * 1e9 / total_params <= SIZE_FACTOR]
    if not runs:
        return None
    median = statistics.median((run.mfu_low + run.mfu_high) / 2 for run in runs)
    return PublishedMfu(median, min(run.mfu_low for run in runs), max(run.mfu_high for run in runs),
                        tuple(run.run for run in runs))


def _listed(runs: tuple[PublishedRun, ...]) -> str:
    """Every run when there are few, else the lowest and the highest."""
    if len(runs) <= 3:
        return ", ".join(run.mfu_text for run in runs)
    low = min(runs, key=lambda run: run.mfu_low)
    high = max(runs, key=lambda run: run.mfu_high)
    return f"from {low.mfu_text} to {high.mfu_text}"


def mfu_warnings(mfu: float, generation: str, total_params: float, bubble_fraction: float) -> list[str]:
    """One sentence per problem with the MFU: outside the comparable runs' range, or above the bubble ceiling."""
    return list(_mfu_warnings(mfu, generation, total_params, bubble_fraction))


@lru_cache(maxsize=1024)  # the same plan is checked again for every change of its price or tokens
def _mfu_warnings(mfu: float, generation: str, total_params: float, bubble_fraction: float) -> tuple[str, ...]:
    runs, basis = comparable_runs(generation, total_params)
    low, high = min(run.mfu_low for run in runs), max(run.mfu_high for run in runs)
    listed = _listed(runs)
    warnings = []
    if mfu > high:
        warnings.append(f"MFU {_percent(mfu)} is above every published run {basis} ({listed}): "
                        f"plan with {_percent(high)} or less unless you have measured it")
    elif mfu < low:
        warnings.append(f"MFU {_percent(mfu)} is below every published run {basis} ({listed}): "
                        "check the layout and kernels, or the plan overprices the run")
    ceiling = 1.0 - bubble_fraction
    if mfu > ceiling:
        warnings.append(f"MFU {_percent(mfu)} is above the {_percent(ceiling)} the pipeline bubble leaves "
                        f"({_percent(bubble_fraction)} of each step idle): use fewer pipeline stages or more "
                        "micro-batches per step")
    return tuple(warnings)
