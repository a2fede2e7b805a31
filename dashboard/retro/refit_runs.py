"""The jobs behind a measured MFU as runs the step-time model's efficiency is refitted on (`dashboard.core.refit`),
and each job's model size with where it came from.

Each job the MFU was measured on (`calibrate`'s `source_rows` of `mfu`) becomes one run: its GPU count
(GPU-hours / the hours from its start to its end), its GPU type (the catalogue's, else the plan's), its model size
(the one the export logs, else the given one: `calibrate.model_sizes`), its MFU by `calibrate.job_mfu`, the
plan's shape, and the layout the job logs (TP, PP, micro-batch: the W&B reader's `ImportReport.run_layout`), else
the plan's (unset TP / PP proposed for the job's GPUs). The bundled W&B sample logs GPUs (`trainer.devices` ×
`trainer.num_nodes`) and the model size but no layout, Slurm only GPUs: their rows say the layout is the plan's. A
job of another size than the plan's (more than 5 % apart) is priced at the shape nearest its size
(`dashboard.core.shape`); a logged layout that does not fit the job's GPUs leaves the job out of the refit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from dashboard import settings
from dashboard.core import refit
from dashboard.core.hardware import catalogue, resolve_gpu_type
from dashboard.core.scenario import Scenario, ScenarioError
from dashboard.core.shape import SHAPE_KEYS
from dashboard.ingest.gpus import gpu_name
from dashboard.query import tables
from dashboard.retro.calibrate import Measured, job_mfu, measured_mfu, rows_behind
from dashboard.retro.units import catalogue_peak_tflops

SAME_SIZE = 0.05  # a job within 5 % of the plan's size is the plan's model


@dataclass(frozen=True)
class Job:
    """One job behind the measured MFU: its size and where it came from, its GPUs and its MFU."""

    run_id: str
    source_line: int
    gpus: int
    gpu_type: str
    model_params: float
    size_from: str  # "logged" (the run export) or "given" (--params, the plan's)
    mfu: float
    layout: Mapping[str, int] | None = None  # TP, PP, micro-batch as the run export logs them (None: none logged)


def _catalogue_type(value: object, fallback: str) -> str:
    for name in (value, gpu_name(value)):
        if isinstance(name, str):
            try:
                key = resolve_gpu_type(name)
            except ValueError:
                continue
            if key in catalogue():
                return key
    return fallback


def jobs(runs: Any, mfu: Measured, base: Scenario, run_params: Mapping[int, float] | None = None,
         model_params: float | None = None, run_layout: Mapping[int, Mapping[str, int]] | None = None
         ) -> list[Job]:
    """The jobs the measured MFU rests on (module docstring), in source order, each with the layout it logs
    (``run_layout``: the reader's ``ImportReport.run_layout``); none when the MFU was not measured."""
    if mfu.value is None or not mfu.source_rows:
        return []
    rows = rows_behind(tables.table_of(runs), mfu)
    hours = (pd.to_datetime(rows["period_end"]) - pd.to_datetime(rows["period_start"])).dt.total_seconds() / 3600
    found = []
    for row, span_h in zip(rows.itertuples(index=False), hours, strict=True):
        line = int(row.source_row)
        logged = (run_params or {}).get(line)
        size = logged if logged is not None else model_params
        gpu_type = _catalogue_type(row.gpu_type, base.gpu_type)
        peak = catalogue_peak_tflops(row.gpu_type)
        peak = peak if math.isfinite(peak) else catalogue_peak_tflops(base.gpu_type)
        if size is None or not span_h > 0 or not math.isfinite(peak):
            continue
        value = float(job_mfu(np.array([row.gpu_hours], dtype=float), np.array([row.tokens], dtype=float),
                              np.array([size], dtype=float), np.array([peak]))[0])
        found.append(Job(str(row.run_id), line, max(1, round(float(row.gpu_hours) / span_h)), gpu_type,
                         float(size), "logged" if logged is not None else "given", value,
                         (run_layout or {}).get(line) or None))
    return found


def _scenario(job: Job, base: Scenario) -> Scenario | None:
    """The plan as the job ran it: its GPUs and GPU type, its size (the nearest shape when not the plan's), the
    layout it logs (None when that does not fit its GPUs), else the plan's where it divides the job's GPUs, else
    proposed."""
    update: dict[str, Any] = {"gpu_count": job.gpus, "gpu_type": job.gpu_type, "mfu": None, "peak_tflops": None,
                              "mfu_measured": None, "mfu_measured_from": None, "programme": ()}
    if abs(job.model_params / base.active - 1.0) > SAME_SIZE:
        update |= {"total_params": job.model_params, "active_params": None, "n_experts": None,
                   "experts_per_token": None} | {key: None for key in SHAPE_KEYS}
    data = base.model_dump(by_alias=True) | update
    if job.layout:
        try:
            return Scenario.model_validate(data | dict(job.layout))
        except ValueError:
            return None
    for trial in (data, data | {"tensor_parallel": None, "pipeline_parallel": None}):
        try:
            return Scenario.model_validate(trial)
        except ValueError:  # pydantic's ValidationError, or a rule across keys
            continue
    return None


def priced_runs(found: list[Job], base: Scenario) -> tuple[list[refit.MeasuredRun], int]:
    """The jobs as runs to refit on, in source order, with at most ``PLANNER_REFIT_MAX_LAYOUTS`` distinct
    scenarios (the first met), and how many jobs of further ones were left out."""
    bound = settings.limit(settings.REFIT_MAX_LAYOUTS)
    seen: set[str] = set()
    runs, left_out = [], 0
    for job in found:
        scenario = _scenario(job, base)
        if scenario is None:
            continue
        key = scenario.model_dump_json()
        if key not in seen and len(seen) >= bound:
            left_out += 1
            continue
        seen.add(key)
        runs.append(refit.MeasuredRun(f"{job.run_id} (line {job.source_line})", scenario, job.mfu, bool(job.layout)))
    return runs, left_out


def refit_of(found: list[Job], base: Scenario) -> refit.Refit | None:
    """The cluster's efficiency refitted on the jobs (`refit.refit`, over `priced_runs`), each distinct scenario
    priced once; None without a job the model can price."""
    cache: dict[str, refit.Prediction] = {}

    def predict(scenario: Scenario) -> refit.Prediction:
        key = scenario.model_dump_json()
        if key not in cache:
            cache[key] = refit.predicted(scenario)
        return cache[key]

    runs, _ = priced_runs(found, base)
    if not runs:
        return None
    try:
        return refit.refit(runs, predict)
    except (ValueError, ScenarioError):
        return None


def anchored(found: list[Job], plan: Scenario) -> bool:
    """Whether the plan runs as a measured job ran (the anchor): the same model size (within 5 %), GPU type and
    GPU count; the plan's layout is the one the jobs are priced at."""
    return any(job.gpus == plan.gpu_count and job.gpu_type == _catalogue_type(plan.gpu_type, "")
               and abs(job.model_params / plan.active - 1.0) <= SAME_SIZE for job in found)


def beyond_anchor(scenario: Scenario, found: list[Job], fitted: refit.Refit | None) -> Scenario:
    """A calibrated plan that does not run as any measured job ran (``anchored``) with its MFU from the refit
    instead: the efficiency × the model's prediction for the plan's layout, to three figures, recorded as the
    team's measured MFU with what it rests on. A plan at the anchor, or without a refit, is returned as it is."""
    if fitted is None or not found or anchored(found, scenario):
        return scenario
    predicted = refit.predict_layout(fitted, scenario)
    value = float(f"{predicted.mfu:.3g}")
    basis = (f"refit: {fitted.efficiency:.3g} × the throughput model's {100 * predicted.predicted_mfu:.3g} % for "
             f"{predicted.layout}, over {len(fitted.rows)} jobs measured on "
             f"{', '.join(sorted({f'{job.gpus:,}' for job in found}))} GPUs")
    try:
        return scenario.model_validate(scenario.model_dump(by_alias=True) | measured_mfu(value, basis))
    except ValueError:  # an MFU outside the scenario's bounds: the measured one stays
        return scenario


def layout_source(fitted: refit.Refit) -> str:
    """Where the rows' layouts came from: "logged" (all), "the plan's" (none logged) or "logged for 3 of 5 jobs,
    the plan's for the rest"."""
    logged = sum(row.layout_logged for row in fitted.rows)
    if logged == len(fitted.rows):
        return "logged"
    if not logged:
        return "the plan's"
    return f"logged for {logged} of {len(fitted.rows)} jobs, the plan's for the rest"


def as_json(found: list[Job], fitted: refit.Refit | None, base: Scenario | None) -> dict[str, Any]:
    """`calibrate --json`'s `model_sizes` (each job's size and where it came from) and `refit` (the efficiency,
    its error, the rows it rests on, where the layout came from and, with a plan, the plan's layout predicted
    with it)."""
    sizes = [{"run_id": job.run_id, "source_line": job.source_line, "model_params": job.model_params,
              "size_from": job.size_from, "gpus": job.gpus, "mfu": job.mfu,
              "layout": dict(job.layout) if job.layout else None} for job in found]
    out: dict[str, Any] = {"model_sizes": sizes, "refit": None}
    if fitted is not None:
        out["refit"] = refit.as_json(fitted) | {"layout_source": layout_source(fitted),
                                                "left_out": len(found) - len(fitted.rows)}
        if base is not None:
            out["refit"]["plan"] = asdict(refit.predict_layout(fitted, base))
    return out
