"""The research programme around the main run: its stages, how each is sized from the main run, and the calendar.

A stage is data: its kind and a few numbers, most of them relative to the main run (a share of its compute, of its
tokens), so a programme scales with the final run it prepares. Training stages are priced by the engine itself,
each run as a scenario derived from the main run's arrays (`runs`); inference stages (quality scoring, evaluations)
count 2·N FLOPs per token. `dashboard.core.engine` prices them; this module imports nothing from it.

The main run's own line items keep their places: the main pre-training (compute, rework, stalls, storage, data,
egress, TST's pilot and switching), "other experiments" (`experiment_overhead`, the single-run plan's multiplier, so
a schema-1 file reads as a programme of that one stage), evaluation and debugging (their shares) and people.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from dashboard.safe_text import preview

LADDER_SOURCE = ("Chinchilla's IsoFLOP profiles spanned 6·10¹⁸–3·10²¹ FLOPs below a 5.76·10²³ final run, Llama 3's "
                 "6·10¹⁸–10²² FLOPs below 3.8·10²⁵ (arXiv 2203.15556 §3.2; arXiv 2407.21783 §3.2.1)")
ASSUMED_REPEATS = "Assumed: a tenth of the stage's runs fail or are repeated."
STACKED_ROWS = 16_384  # rows of a programme's runs (runs × main rows) priced per engine call


class _Stage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("", max_length=80, description="Label; empty: the kind's label.")
    repeat_allowance: float = Field(
        0.1, ge=0, le=10,
        description=f"Failed and repeated runs, as a share of the stage's GPU-hours. {ASSUMED_REPEATS} Bounds: 0 "
        "to 10 repeats.")
    gpu_count: int | None = Field(
        None, ge=1, le=10_000_000,
        description="GPUs per run. Unset: the main run's, or as many as the run's batch can use, whole nodes.")


class DataPreparation(_Stage):
    """Filtering and quality scoring of the corpus the main run is drawn from."""

    kind: Literal["data_preparation"] = "data_preparation"
    repeat_allowance: float = Field(0.0, ge=0, le=10, description="Repeated passes, a share of the stage.")
    processed_multiple: float = Field(
        3.0, ge=1, le=1000,
        description="Tokens read by filtering, deduplication and scoring, × the main run's raw tokens (the rest is "
        "discarded). Assumed 3 (FineWeb-Edu keeps about a tenth of FineWeb, DCLM-Baseline under 2 % of its pool). "
        "Bounds: 1 to 1,000.")
    scorer_params: float = Field(
        1.1e8, ge=0, le=1e13,
        description="Parameters of the quality-scoring model (FineWeb-Edu's classifier: Snowflake-arctic-embed-m, "
        "109M). 0: no model scoring. Bounds: 0 to 1e13.")
    scored_share: float = Field(
        1.0, ge=0, le=1,
        description="Share of the tokens read that the scoring model reads (1: every token; less when heuristic "
        "filters and deduplication run first). Bounds: 0 to 1.")
    inference_mfu: float = Field(0.3, ge=0.01, le=1, description="Assumed utilisation of scoring inference.")


class ScalingLadder(_Stage):
    """k compute-optimal runs spaced evenly in log-compute below the main run, to fit the team's scaling law."""

    kind: Literal["scaling_ladder"] = "scaling_ladder"
    runs: int = Field(5, ge=1, le=100, description="Model sizes on the ladder. Bounds: 1 to 100.")
    top_compute_fraction: float = Field(
        0.01, gt=0, le=1,
        description=f"Compute of the largest rung, × the main run's model FLOPs (0.01: two decades below). "
        f"{LADDER_SOURCE}. Bounds: above 0 to 1.")
    span_decades: float = Field(
        2.0, ge=0, le=10, description="Decades of compute from the smallest rung to the largest. Bounds: 0 to 10.")
    tokens_per_param: float = Field(20.0, ge=0.1, le=100_000,
                                    description="Tokens per parameter of every rung (Chinchilla: 20).")


class Ablations(_Stage):
    """n runs, each at a share of the main run's compute (data mixtures, architectures, hyper-parameters)."""

    kind: Literal["ablations"] = "ablations"
    runs: int = Field(30, ge=1, le=10_000, description="Ablation runs. Assumed 30. Bounds: 1 to 10,000.")
    compute_fraction: float = Field(
        0.01, gt=0, le=10, description="Model FLOPs of each run, × the main run's. Assumed 1 %. Bounds: above 0 "
        "to 10.")
    tokens_per_param: float = Field(20.0, ge=0.1, le=100_000,
                                    description="Tokens per parameter, which sizes the model (Chinchilla: 20).")


class MidTraining(_Stage):
    """More tokens on the main model: annealing on high-quality data, or a long-context extension."""

    kind: Literal["mid_training", "long_context"] = "mid_training"
    token_fraction: float = Field(
        0.05, gt=0, le=100,
        description="Tokens, × the main run's (OLMo 2 anneals on 50–300B tokens after 4–5T; Llama 3 extends its "
        "context over about 800B of 15.6T; DeepSeek-V3's two extension phases read about 126B of 14.8T, 119K of "
        "its 2,788K GPU-hours). Bounds: above 0 to 100.")
    seq_len: int | None = Field(None, ge=1, le=10_000_000,
                                description="Sequence length. Unset: the main run's.")
    context_parallel: int = Field(1, ge=1, le=1024, description="CP degree for the longer sequences.")
    repeat_allowance: float = Field(0.0, ge=0, le=10, description="Failed and repeated runs, a share of the stage.")


class Evaluation(_Stage):
    """Benchmarks run on the main run's checkpoints, beside the training on other GPUs."""

    kind: Literal["evaluation"] = "evaluation"
    repeat_allowance: float = Field(0.0, ge=0, le=10, description="Evaluations repeated, a share of the stage.")
    every_nth_checkpoint: int = Field(
        4, ge=1, le=100_000, description="Evaluate one checkpoint in n. Assumed 4 (every 2 h at 30-min checkpoints).")
    benchmark_tokens: float = Field(
        3e8, ge=0, le=1e13,
        description="Tokens each evaluation reads. Assumed: a suite of about 20 tasks at a few-shot prompt "
        "(MMLU alone is 14k questions of about 2.5k tokens 5-shot).")
    inference_mfu: float = Field(0.2, ge=0.01, le=1, description="Assumed utilisation of evaluation inference.")


Stage = Annotated[DataPreparation | ScalingLadder | Ablations | MidTraining | Evaluation, Field(discriminator="kind")]
STAGE_TYPES: dict[str, type[BaseModel]] = {
    "data_preparation": DataPreparation, "scaling_ladder": ScalingLadder, "ablations": Ablations,
    "mid_training": MidTraining, "long_context": MidTraining, "evaluation": Evaluation}
KIND_LABELS = {
    "data_preparation": "Data preparation",
    "scaling_ladder": "Scaling ladder",
    "ablations": "Ablations",
    "other_experiments": "Other experiments",
    "main": "Main pre-training",
    "mid_training": "Mid-training (annealing)",
    "long_context": "Long-context extension",
    "evaluation": "Evaluations",
    "eval_debug": "Evaluation and debugging (shares of the main run)",
    "people": "People",
}
# Calendar order; stages in BESIDE run alongside the main run on other GPUs, the rest one after another.
ORDER = ("data_preparation", "scaling_ladder", "ablations", "other_experiments", "main", "mid_training",
         "long_context", "evaluation", "eval_debug", "people")
BESIDE = frozenset({"evaluation", "eval_debug", "people"})
# The main run's line items in each of its stages (`engine.LINE_ITEMS` less the stages' own line).
MAIN_LINES = {
    "other_experiments": ("experiments",),
    "main": ("main_compute", "failure_rework", "checkpoint_stalls", "storage", "network_egress", "data_processing",
             "tst_pilot", "tst_switching"),
    "eval_debug": ("evaluation", "debugging"),
    "people": ("people",),
}

PRESETS: dict[str, dict[str, Any]] = {
    "single run as today": {"programme": [], "experiment_overhead": 1.0, "eval_overhead": 0.05},
    "ladder + main": {"programme": [{"kind": "scaling_ladder"}], "experiment_overhead": 0.0, "eval_overhead": 0.05},
    "full programme": {
        "programme": [{"kind": "data_preparation"}, {"kind": "scaling_ladder"}, {"kind": "ablations"},
                      {"kind": "mid_training"},
                      {"kind": "long_context", "token_fraction": 0.01, "seq_len": 32768, "context_parallel": 4},
                      {"kind": "evaluation"}],
        "experiment_overhead": 0.0, "eval_overhead": 0.0},
}

# Keys a derived run takes from the stage, not the main run: its model follows its size and its layout is proposed.
_FREE_SHAPE = ("n_layers", "d_model", "n_heads", "n_kv_heads", "ffn_hidden_size", "n_experts", "experts_per_token",
               "tensor_parallel", "pipeline_parallel", "zero_stage", "global_batch_tokens", "unique_tokens")
_NO_SIDE_COSTS = ("experiment_overhead", "eval_overhead", "debug_overhead", "is_tst", "egress_gb", "people_cost_usd",
                  "data_cost_per_billion_tokens", "tst_pilot_fraction", "tst_switching_cost_usd")


def label(stage: Any) -> str:
    """A stage's label: its name, else its kind's."""
    return stage.name or KIND_LABELS[stage.kind]


def describe(stages: tuple[Any, ...]) -> str:
    """The stages in a line of text: "none (the single run)", or "Scaling ladder (5 runs); Evaluations"."""
    if not stages:
        return "none (the single run)"
    return "; ".join(label(stage) + (f" ({stage.runs} runs)" if hasattr(stage, "runs") else "") for stage in stages)


def as_text(value: Any) -> str:
    """Any form of a programme as text: its stages (models or their JSON objects), or the engine's summary."""
    if isinstance(value, dict):  # `summary`: its rows
        return "; ".join(row["label"] for row in value["stages"])
    stages = [STAGE_TYPES[item["kind"]].model_validate(item) if isinstance(item, dict) else item for item in value]
    return describe(tuple(stages))


def priced_runs(stage: Any) -> int:
    """The runs the engine prices for a stage, the programme's work unit: a ladder's rungs, one run for the
    ablations (their runs are alike), mid-training and the extension, none for an inference stage."""
    if isinstance(stage, ScalingLadder):
        return stage.runs
    return 1 if isinstance(stage, Ablations | MidTraining) else 0


def size_error(stages: tuple[Any, ...], limit: int, setting: str) -> str | None:
    """Why a programme is too costly to price (more than `limit` priced runs, the operator's `setting`), naming its
    stages: "20 × 'Scaling ladder' of 100 runs = 2,000 priced runs; at most 200 …"; None when it fits."""
    total = sum(priced_runs(stage) for stage in stages)
    if total <= limit:
        return None
    groups = Counter((label(stage), priced_runs(stage)) for stage in stages if priced_runs(stage))
    ranked = sorted(groups.items(), key=lambda item: item[0][1] * item[1], reverse=True)
    parts = [f"{count} × {preview(name, 40)!r} of {_plural(runs, 'run')}"
             for (name, runs), count in ranked[:3]]
    rest, others = sum(runs * count for (_, runs), count in ranked[3:]), sum(count for _, count in ranked[3:])
    more = f" + {_plural(rest, 'run')} of {_plural(others, 'other stage')}" if rest else ""
    return (f"{' + '.join(parts)}{more} = {total:,} priced runs; at most {limit:,} a programme ({setting}): fewer "
            "ladder runs or stages")


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def ladder_fractions(stage: ScalingLadder) -> np.ndarray:
    """Each rung's model FLOPs as a share of the main run's, smallest first."""
    steps = np.arange(stage.runs)[::-1] / max(stage.runs - 1, 1)
    return stage.top_compute_fraction * 10.0 ** (-stage.span_decades * steps)


def extrapolation_error_factor(fractions: np.ndarray) -> float:
    """How far the ladder's fitted line is from the main run, as its error there over one rung's scatter: the
    least-squares prediction error √(1/k + (x₀ − x̄)² / Σ(xᵢ − x̄)²) at x₀ = 0, x = log10 of the compute share.
    Infinite with fewer than two distinct sizes (no line)."""
    x = np.log10(fractions)
    spread = float(np.sum((x - x.mean()) ** 2))
    if len(x) < 2 or spread == 0:
        return math.inf
    return math.sqrt(1.0 / len(x) + float(x.mean()) ** 2 / spread)


def _run(main: dict[str, np.ndarray], count: int, **overrides: Any) -> dict[str, np.ndarray]:
    """`count` runs derived from the main run's arrays, run after run (each the main run's n rows): no side costs,
    and the overrides (a number, or an array of count·n rows) broadcast to them."""
    n = max(np.size(value) for value in main.values())
    rows = count * n
    arrays = {key: np.broadcast_to(np.asarray(value, dtype=float), (count, n)).reshape(rows)
              for key, value in main.items()}  # one main row: a view, whatever the count
    arrays |= {key: np.zeros(rows) for key in _NO_SIDE_COSTS}
    return arrays | {key: np.broadcast_to(np.asarray(value, dtype=float), (rows,))
                     for key, value in overrides.items()}


def _sized(model_flops: np.ndarray, tokens_per_param: float) -> dict[str, Any]:
    """A dense compute-optimal run of `model_flops` at `tokens_per_param`: 6·N·D = C, D = r·N."""
    params = np.sqrt(model_flops / (6.0 * tokens_per_param))
    free = {key: math.nan for key in _FREE_SHAPE}
    return free | {"total_params": params, "active_params": params, "tokens": params * tokens_per_param,
                   "n_shared_experts": 0.0, "expert_parallel": 1.0, "virtual_pipeline_stages": 1.0,
                   "context_parallel": 1.0}


def runs(stage: Any, main: dict[str, np.ndarray], model_flops: np.ndarray) -> tuple[int, dict[str, np.ndarray]]:
    """The training runs of a stage as one block of engine arrays, derived from the main run's (`main` holds the
    MFU the main run is priced at): how many distinct runs (k), and their arrays, k × the main run's n rows, run
    after run (a ladder's smallest rung first). (0, {}) for the inference stages."""
    if isinstance(stage, ScalingLadder | Ablations):
        shares = ladder_fractions(stage) if isinstance(stage, ScalingLadder) else np.array([stage.compute_fraction])
        n = max(np.size(value) for value in main.values())
        flops = np.outer(shares, np.broadcast_to(np.asarray(model_flops, dtype=float), (n,))).reshape(-1)
        return len(shares), _run(main, len(shares), **_sized(flops, stage.tokens_per_param))
    if isinstance(stage, MidTraining):
        changes: dict[str, Any] = {"tokens": main["tokens"] * stage.token_fraction}
        if stage.seq_len is not None:
            changes |= {"seq_len": stage.seq_len, "context_parallel": stage.context_parallel,
                        "tensor_parallel": math.nan, "pipeline_parallel": math.nan, "zero_stage": math.nan,
                        "global_batch_tokens": math.nan}
        return 1, _run(main, 1, **changes, unique_tokens=math.nan)
    return 0, {}


def run_count(stage: Any) -> int:
    """How many times each derived run is repeated (ablations: n alike runs; a ladder's rungs are distinct runs)."""
    return stage.runs if isinstance(stage, Ablations) else 1


def with_gpus(run: dict[str, np.ndarray], stage: Any, max_useful_gpus: np.ndarray | None) -> dict[str, np.ndarray]:
    """The runs (a block of `runs`) on the stage's GPU count, or the main run's cut to whole nodes each run's batch
    can use."""
    if stage.gpu_count is not None:
        return run | {"gpu_count": np.broadcast_to(float(stage.gpu_count), run["gpu_count"].shape)}
    if max_useful_gpus is None:
        return run
    per_node = run["gpus_per_node"]
    nodes = np.floor(max_useful_gpus / per_node)
    useful = np.where(nodes >= 1, nodes * per_node, np.maximum(max_useful_gpus, 1.0))
    return run | {"gpu_count": np.minimum(run["gpu_count"], useful)}


def inference_gpu_hours(params: Any, tokens: Any, peak_tflops: Any, mfu: float) -> Any:
    """GPU-hours to run a model of `params` over `tokens` once: 2·N FLOPs per token at `mfu` of the peak."""
    return 2.0 * params * tokens / (peak_tflops * 1e12 * mfu * 3600.0)


def inference(stage: Any, main: dict[str, np.ndarray], out: dict[str, Any]) -> tuple[Any, Any]:
    """GPU-hours and other dollars of an inference stage (data preparation, evaluations)."""
    peak = main["peak_tflops"]
    if isinstance(stage, DataPreparation):
        read = out["raw_tokens"] * stage.processed_multiple
        hours = inference_gpu_hours(stage.scorer_params, read * stage.scored_share, peak, stage.inference_mfu)
        # The plan's data-processing line prices the tokens trained on; this stage the ones read and discarded.
        return hours, (read - out["raw_tokens"]) * main["data_cost_per_billion_tokens"] / 1e9
    evaluations = (out["gpu_hours_main_run"] / main["gpu_count"]) / (
        main["checkpoint_interval_min"] / 60.0 * stage.every_nth_checkpoint)
    hours = evaluations * inference_gpu_hours(main["active_params"], stage.benchmark_tokens, peak,
                                              stage.inference_mfu)
    return hours, np.zeros_like(hours)


@dataclass(frozen=True)
class Scaled:
    """A programme priced once, at a point estimate, whose stages then move in proportion to the main run's
    GPU-hours (Monte Carlo draws: every stage is sized from the main run and runs at its MFU and failure rates, so
    its GPU-hours follow the main run's; the draw's price applies to them)."""

    gpu_hours: float
    other_usd: float
    main_gpu_hours: float


def scaled(point: dict[str, Any]) -> Scaled:
    """`Scaled` from the engine's `cost_arrays` of one scenario with its programme."""
    hours, other = totals(point["programme_priced"], point["gpu_hours_main_run"])
    return Scaled(first(hours), first(other), first(point["gpu_hours_main_run"]))


def price(programme: tuple[Any, ...] | Scaled, main: dict[str, np.ndarray], out: dict[str, Any],
          cost_arrays: Callable[[dict[str, np.ndarray]], dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each stage's GPU-hours (with its repeat allowance), other dollars and calendar hours, for every main row.

    Training runs are priced by `cost_arrays` (the engine's) at the main run's MFU (entered, predicted or drawn:
    one utilisation for the programme), twice: once on the main run's GPUs, then on as many as each run's batch
    can use; their GPU-hours are compute, checkpoint stalls and failure rework. A stage's runs are one block of
    rows (`runs`), and every stage's block is priced in the same engine call a pass (`_stacked_cost`), however many
    runs there are. Runs of a stage share the main run's GPUs: its calendar time is its GPU-hours over the main
    run's GPUs, and at least its longest run. A `Scaled` programme gives one item: its point's stages × the main
    run's change."""
    if isinstance(programme, Scaled):
        ratio = out["gpu_hours_main_run"] / programme.main_gpu_hours if programme.main_gpu_hours else 0.0
        return {"scaled": {"gpu_hours": programme.gpu_hours * ratio, "other_usd": programme.other_usd * ratio}}
    blocks = [runs(stage, main | {"mfu": out["mfu_used"]}, out["model_flops"]) for stage in programme]
    trained = [(stage, block) for stage, (k, block) in zip(programme, blocks, strict=True) if k]
    useful = _stacked_cost([with_gpus(block, stage, None) for stage, block in trained], cost_arrays,
                           lambda result: result["plan"]["max_useful_gpus"])
    sized = [with_gpus(block, stage, gpus) for (stage, block), gpus in zip(trained, useful, strict=True)]
    block_hours = iter(zip(sized, _stacked_cost(sized, cost_arrays, lambda result: result["gpu_hours_main_run"]),
                           strict=True))
    priced: dict[str, dict[str, Any]] = {}
    for index, (stage, (k, block)) in enumerate(zip(programme, blocks, strict=True)):
        if k:
            run, hours_of_rows = next(block_hours)
            n = hours_of_rows.size // k
            run_hours = hours_of_rows.reshape(k, n)
            count = run_count(stage)
            hours = run_hours.sum(axis=0) * count
            longest = (run_hours / run["gpu_count"].reshape(k, n)).max(axis=0)
            calendar = np.maximum(hours / main["gpu_count"], longest)
            other = np.zeros_like(hours)
            detail = {"sizes": [float(size) for size in block["total_params"][::n]], "count": count}
        else:
            hours, other = inference(stage, main, out)
            calendar = hours / main["gpu_count"]
            detail = {"sizes": [], "count": 0}
        grow = 1.0 + stage.repeat_allowance
        priced[f"{index}"] = {"stage": stage, "gpu_hours": hours * grow, "other_usd": other,
                              "calendar_hours": calendar * grow, **detail}
    return priced


def _stacked_cost(blocks: list[dict[str, np.ndarray]], cost_arrays: Callable[[dict[str, np.ndarray]], dict[str, Any]],
                  output: Callable[[dict[str, Any]], Any]) -> list[np.ndarray]:
    """`output` of `cost_arrays` for each block of runs, every block's rows stacked and priced together,
    `STACKED_ROWS` rows an engine call: the calls do not grow with the runs, and their arrays stay a few MB."""
    if not blocks:
        return []
    sizes = [block["gpu_count"].size for block in blocks]
    stacked = {key: np.concatenate([block[key] for block in blocks]) for key in blocks[0]}
    rows = sum(sizes)
    values = np.concatenate([
        np.broadcast_to(output(cost_arrays({key: value[start:start + STACKED_ROWS] for key, value in stacked.items()})),
                        (min(STACKED_ROWS, rows - start),))
        for start in range(0, rows, STACKED_ROWS)])
    return np.split(values, np.cumsum(sizes)[:-1])


def totals(priced: dict[str, dict[str, Any]], like: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All stages' GPU-hours and other dollars."""
    hours = sum((item["gpu_hours"] for item in priced.values()), np.zeros_like(like))
    other = sum((item["other_usd"] for item in priced.values()), np.zeros_like(like))
    return hours, other


def _ladder_note(stage: ScalingLadder, detail: dict[str, Any]) -> str:
    sizes = detail["sizes"]
    factor = extrapolation_error_factor(ladder_fractions(stage))
    beyond = -math.log10(stage.top_compute_fraction)
    reach = ("no line to extrapolate with one size" if math.isinf(factor) else
             f"the fit is extrapolated {beyond:.1f} decades, where its error is {factor:.1f}× one rung's scatter")
    return (f"{stage.runs} sizes from {_params(sizes[0])} to {_params(sizes[-1])} at {stage.tokens_per_param:g} "
            f"tokens per parameter; {reach}")


def _params(value: float) -> str:
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def summary(priced: dict[str, dict[str, Any]], out: dict[str, Any], main: dict[str, np.ndarray],
            start_date: str | None) -> dict[str, Any]:
    """The programme of one scenario as plain numbers: a row per stage in calendar order (the main run's own
    stages from its line items), the total, the final run's share and the calendar.

    `out` is the engine's scalar result (its `cost_breakdown` and price); `priced` the stages of `price`, first row.
    """
    price_per_hour = out["blended_price_per_gpu_hour"]
    gpus = first(main["gpu_count"])
    main_hours = out["gpu_hours_main_run"]
    rows: list[dict[str, Any]] = []
    shares = {"other_experiments": first(main["experiment_overhead"]),
              "eval_debug": first(main["eval_overhead"]) + first(main["debug_overhead"])}
    for kind, lines in MAIN_LINES.items():
        cost = sum(out["cost_breakdown"][line] for line in lines)
        if kind != "main" and cost == 0:
            continue
        hours = main_hours if kind == "main" else main_hours * shares.get(kind, 0.0)
        calendar_h = main_hours / gpus if kind == "main" else hours / gpus
        rows.append({"kind": kind, "label": KIND_LABELS[kind], "gpu_hours": hours, "cost_usd": cost,
                     "calendar_days": 0.0 if kind == "people" else calendar_h / 24.0,
                     "note": _main_note(kind, shares)})
    for item in priced.values():
        stage = item["stage"]
        hours, other = first(item["gpu_hours"]), first(item["other_usd"])
        note = _ladder_note(stage, item) if isinstance(stage, ScalingLadder) else _stage_note(stage, item)
        row = {"kind": stage.kind, "label": label(stage), "gpu_hours": hours,
               "cost_usd": hours * price_per_hour + other, "calendar_days": first(item["calendar_hours"]) / 24.0,
               "note": note}
        if isinstance(stage, ScalingLadder):
            row["extrapolation_error_factor"] = extrapolation_error_factor(ladder_fractions(stage))
            row["extrapolation_decades"] = -math.log10(stage.top_compute_fraction)
        rows.append(row)
    rows.sort(key=lambda row: ORDER.index(row["kind"]))
    day = 0.0
    for row in rows:
        if row["kind"] in BESIDE:
            beside = next((r for r in rows if r["kind"] == "main"), None)
            row["start_day"] = beside["start_day"] if beside else 0.0
        else:
            row["start_day"] = day
            day += row["calendar_days"]
        row["end_day"] = row["start_day"] + row["calendar_days"]
    calendar_days = max(row["end_day"] for row in rows)
    total = sum(row["cost_usd"] for row in rows)
    final = next(row for row in rows if row["kind"] == "main")
    end_date = None
    if start_date is not None:
        end_date = (dt.date.fromisoformat(start_date) + dt.timedelta(days=math.ceil(calendar_days))).isoformat()
    return {"stages": rows, "total_usd": total, "gpu_hours": sum(row["gpu_hours"] for row in rows),
            "final_run_usd": final["cost_usd"], "final_run_share": final["cost_usd"] / total if total > 0 else 1.0,
            "calendar_days": calendar_days, "start_date": start_date, "end_date": end_date}


def first(value: Any) -> float:
    """The first row's value of an array (or a number) as a float."""
    return float(np.asarray(value).reshape(-1)[0])


def _main_note(kind: str, shares: dict[str, float]) -> str:
    if kind == "other_experiments":
        return f"{shares[kind]:g} × the main run's GPU-hours (experiment_overhead), not planned as stages"
    if kind == "eval_debug":
        return f"{shares[kind]:g} × the main run's GPU-hours (eval_overhead + debug_overhead)"
    if kind == "main":
        return "compute, checkpoint stalls, failure rework, storage, data processing, egress, TST's pilot and switching"
    return "as entered"


def _stage_note(stage: Any, item: dict[str, Any]) -> str:
    if isinstance(stage, Ablations):
        size = item["sizes"][0]
        return f"{stage.runs} runs of {_params(size)} at {stage.compute_fraction:.3g} × the main run's compute"
    if isinstance(stage, MidTraining):
        context = f" at {stage.seq_len:,}-token sequences" if stage.seq_len else ""
        return f"{stage.token_fraction:.3g} × the main run's tokens{context}"
    if isinstance(stage, DataPreparation):
        return (f"{stage.processed_multiple:g} × the training tokens read; {stage.scored_share:.0%} of them scored "
                f"by a {_params(stage.scorer_params)} model")
    return f"{stage.benchmark_tokens:.3g} tokens every {stage.every_nth_checkpoint} checkpoints, beside the run"
