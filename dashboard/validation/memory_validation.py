"""The memory model (`dashboard.core.memory`) against published figures, and the script that writes
docs/memory-validation.md: `python -m dashboard.validation.memory_validation [--check]`.

The checks, each case with the planner's figure, the published one and the error:

- Korthikanti et al. 2022 (arXiv 2205.05198) Fig. 1, GiB per GPU on 8 × A100-80GB tensor parallel, sequence 2,048,
  their Table 3 configurations: parameters + optimizer state of one pipeline stage, activations without recompute
  (eager attention, no sequence parallelism) and with sequence parallelism + selective recompute.
- Published layouts that ran must fit without full recompute; plans that cannot run must not.
- `../shared/reference/measured-runs.csv` (published measured runs): every row whose configuration is complete
  (shape, layout, micro-batch, ZeRO stage, recompute and a catalogue GPU) must be accepted and fit.
- ZeRO's Figure 1 (the DeepSpeed recipe), and every run of `measured-runs-2.csv` with its framework's recipe.
- `measured-memory.csv`: KempnerForge's measured allocator peaks against the planner's tensors, with the recipe
  read from its code (`KEMPNERFORGE_RECIPE`); no constant is fitted to them.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from dashboard.core import memory
from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_dict

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "memory-validation.md"
MEASURED_RUNS_CSV = ROOT.parent / "shared" / "reference" / "measured-runs.csv"
MEASURED_RUNS_2_CSV = ROOT.parent / "shared" / "reference" / "measured-runs-2.csv"  # frameworks' READMEs, H100/H200
MEASURED_MEMORY_CSV = ROOT.parent / "shared" / "reference" / "measured-memory.csv"  # KempnerForge's measured peaks
ZERO = "ZeRO, arXiv 1910.02054, Figure 1 (7.5B parameters, 64 GPUs, fp16 gradients, K = 12)"
ZERO_PARAMS, ZERO_GPUS = 7.5e9, 64
ZERO_PUBLISHED_GB = (120.0, 31.4, 16.6, 1.9)  # decimal GB per GPU at ZeRO stages 0 (baseline), 1, 2, 3
ZERO_TOLERANCE = 0.02
# KempnerForge's recipe as its code holds it (measured-runs-2.md; kempnerforge/ at the reports' commits 01b461a,
# 3ad9d9a, 5666d0d): bf16 parameters (`model.to(param_dtype)`) and no fp32 master copy, so the sharded gradients are
# bf16 too; torch AdamW's moments in the parameters' dtype; FSDP2's fp32 reduce dtype, in which it keeps the
# unsharded gradients across micro-batches when grad_accum > 1 (its 175B report); `F.cross_entropy` on the bf16
# logits (scripts/train.py; `loss_fn='cross_entropy'` in the weak-scaling logs), which the output layer's
# ColwiseParallel gathers whole to every TP rank (`output_layouts=Replicate()`, kempnerforge/distributed/
# tensor_parallel.py): no loss parallelism; its token embedding stays replicated over TP (same file). Its TP runs
# use sequence parallelism, as the planner assumes.
KEMPNERFORGE_RECIPE = {"weight_dtype": "bf16", "gradient_dtype": "bf16", "master_weights": False,
                       "optimizer_dtype": "bf16", "unsharded_gradient_accumulation": True, "cross_entropy": "bf16",
                       "loss_parallel": False, "embedding_parallel": False}
# The measured peaks' mean and worst |error| (`measured_peak_errors`, rounded up to 0.1 %), for the memory bar's
# sentence without ../shared; a test recomputes them from measured-memory.csv.
MEASURED_PEAK_ERROR = (0.019, 0.154)
MEASURED_PEAK_ROWS = 24
# Rows whose published batch and the benchmark script disagree: (row, micro-batch, grad_accum, the script's words).
SCRIPT_BATCH = {row_id: ("2", "4", f"KempnerForge's benchmarks/mfu_scaling/mfu_bench.sh, committed with the report "
                                   f"(9f3f03a), runs experiment {number} at batch_size 2 × grad_accum_steps 4, not "
                                   "the report's 4 × 2") for row_id, number in (("KM-1", "01"), ("KM-2", "02"))}
KORTHIKANTI = "Korthikanti et al. 2022, arXiv 2205.05198, Fig. 1 (configurations of Table 3)"
STATES_TOLERANCE, ACTIVATIONS_TOLERANCE = 0.02, 0.05
SEQ_LEN, VOCAB, TP = 2048, 51200, 8


@dataclass(frozen=True)
class FigureCase:
    """One model of Korthikanti's Fig. 1: its Table 3 configuration and the three published GiB per GPU."""

    name: str
    total_params: float
    n_layers: int
    d_model: int
    n_heads: int
    pipeline_parallel: int
    virtual_stages: int  # interleaving: 3 for 175B and 530B (§6)
    micro_batch: int
    states_gib: float
    no_recompute_gib: float
    selective_gib: float


FIGURE_1 = (
    FigureCase("22B", 22.07e9, 48, 6144, 64, 1, 1, 4, 45.56, 59.25, 9.56),
    FigureCase("175B", 174.6e9, 96, 12288, 96, 8, 3, 1, 45.56, 66.84, 12.35),
    FigureCase("530B", 529.6e9, 105, 20480, 128, 35, 3, 1, 31.64, 114.02, 23.08),
    FigureCase("1T", 1008e9, 128, 25600, 160, 64, 1, 1, 32.96, 131.25, 26.56),
)


def figure_1(case: FigureCase) -> dict[str, float]:
    """The planner's three figures for one Fig. 1 model (GB of 2³⁰ bytes, as the paper's GiB).

    Fig. 1 counts the transformer layers of one stage (18 bytes × 12·L·h² / (TP·PP), no embedding): the figure
    compared is a middle stage when PP > 1, the whole model at PP 1 (its embeddings included).
    """
    embedding = memory.embedding_params(VOCAB, case.d_model, case.total_params, 0.0)
    if case.pipeline_parallel > 1:
        params = float(case.total_params - embedding) / case.pipeline_parallel / TP
    else:
        params = float(memory.params_per_gpu(case.total_params, 0.0, embedding, case.n_layers, TP, 1, 1))
    in_flight = memory.layers_in_flight(case.n_layers, case.pipeline_parallel, case.virtual_stages, math.inf)

    def activations(recompute: str, sequence_parallel: bool) -> float:
        layer = memory.layer_activation_bytes(
            SEQ_LEN, case.micro_batch, case.d_model, case.n_heads, case.n_heads, 4 * case.d_model, 0.0, 1.0, TP, 1,
            memory.RECOMPUTE_MODES.index(recompute), memory.ATTENTION_MODES.index("eager"),
            sequence_parallel=sequence_parallel)
        return float(layer * in_flight / memory.GB)

    return {"states": float(memory.STATE_BYTES * params / memory.GB), "no_recompute": activations("none", False),
            "selective": activations("selective", True)}


def figure_1_rows() -> list[dict[str, Any]]:
    """Each Fig. 1 figure: model, quantity, predicted, published, relative error, tolerance."""
    rows = []
    for case in FIGURE_1:
        got = figure_1(case)
        for key, label, target, tolerance in (
                ("states", "parameters + optimizer", case.states_gib, STATES_TOLERANCE),
                ("no_recompute", "activations, no recompute (eager)", case.no_recompute_gib, ACTIVATIONS_TOLERANCE),
                ("selective", "activations, SP + selective", case.selective_gib, ACTIVATIONS_TOLERANCE)):
            rows.append({"model": case.name, "quantity": label, "predicted": got[key], "published": target,
                         "error": got[key] / target - 1.0, "tolerance": tolerance})
    return rows


LLAMA3 = dict(total_params=405.9e9, n_layers=126, d_model=16384, n_heads=128, n_kv_heads=8, ffn_hidden_size=53248,
              ffn_type="gated", vocab_size=128256, seq_len=8192, gpu_type="H100", tensor_parallel=8,
              pipeline_parallel=16, zero_stage=2, attention="flash", activation_recompute="none",
              global_batch_tokens=16777216)
MIXTRAL = dict(total_params=46.7e9, n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, ffn_hidden_size=14336,
               ffn_type="gated", vocab_size=32000, n_experts=8, experts_per_token=2)
# (name, scenario keys, source, whether it ran)
LAYOUTS: tuple[tuple[str, dict[str, Any], str, bool], ...] = (
    ("Llama 3 405B, TP 8 · PP 16, 8,192 H100", LLAMA3 | {"gpu_count": 8192},
     "arXiv 2407.21783 Table 3-4, §3.3.2 (8K, no activation checkpointing)", True),
    ("Llama 3 405B, TP 8 · PP 16 (2 virtual), 16,384 H100", LLAMA3 | {"gpu_count": 16384, "virtual_pipeline_stages": 2},
     "arXiv 2407.21783 Table 4 (interleaved schedule, §3.3.2)", True),
    ("DeepSeek-V3, PP 16 · EP 64, 2,048 H800", {}, "arXiv 2412.19437 §3.1-3.3, §4.2 (the bundled preset)", True),
    ("BLOOM 176B, TP 4 · PP 12 · ZeRO-1, 384 A100-80GB",
     dict(total_params=176.2e9, n_layers=70, d_model=14336, n_heads=112, ffn_type="plain", vocab_size=250880,
          seq_len=2048, gpu_type="A100", gpu_count=384, tensor_parallel=4, pipeline_parallel=12, zero_stage=1,
          micro_batch_size=2, attention="eager", activation_recompute="selective", global_batch_tokens=4194304),
     "bigscience tr11-176B-ml README (read with selective recompute, not its full)", True),
    ("Mixtral 8x7B, EP 8, 8 H200",
     MIXTRAL | dict(gpu_type="H200", gpu_count=8, tensor_parallel=1, pipeline_parallel=1, expert_parallel=8,
                    seq_len=4096), "arXiv 2401.04088 (shape); sequence 4,096 assumed", True),
    ("70B on 8 H100, no sharding", dict(total_params=70e9, gpu_type="H100", gpu_count=8, tensor_parallel=1,
                                         pipeline_parallel=1, zero_stage=0), "cannot run", False),
    ("175B on 8 A100-80GB, ZeRO-3, full recompute",
     dict(total_params=175e9, gpu_type="A100", gpu_count=8, zero_stage=3, activation_recompute="full"),
     "cannot run", False),
)


def zero_figure_1_rows() -> list[dict[str, Any]]:
    """ZeRO's Figure 1: model states per GPU at each stage for the DeepSpeed recipe with fp16 weights and gradients
    (2 + 2 + 12 bytes per parameter), in the paper's decimal GB, against the published figures."""
    recipe = memory.recipe_bytes("deepspeed", weight_dtype="fp16", gradient_dtype="fp16")
    rows = []
    for stage, published in enumerate(ZERO_PUBLISHED_GB):
        states = memory.model_states_gb(ZERO_PARAMS, ZERO_PARAMS / ZERO_GPUS, stage, *recipe)
        predicted = float(sum(states)) * memory.GB / 1e9
        rows.append({"stage": stage, "predicted": predicted, "published": published,
                     "error": predicted / published - 1.0, "tolerance": ZERO_TOLERANCE})
    return rows


def layout_scenario(keys: dict[str, Any]) -> Scenario:
    if not keys:
        from dashboard.core.presets import presets

        return next(s for name, s in presets().items() if name.startswith("DeepSeek-V3"))
    return Scenario(**keys)


def layout_rows() -> list[dict[str, Any]]:
    """Each published layout (and each plan that cannot run): GB per GPU, GPU memory, verdict, expected verdict."""
    from dashboard.core.engine import scenario_outputs

    rows = []
    for name, keys, source, ran in LAYOUTS:
        result = scenario_outputs(layout_scenario(keys))
        mem = result["memory"]
        rows.append({"case": name, "source": source, "total_gb": mem["total_gb"], "gpu_gb": mem["gpu_memory_gb"],
                     "fits": result["feasible"], "expected": ran})
    return rows


# Measured runs: the CSV's words for the keys the planner reads.
GPU_NAMES = {"A100-80GB": "A100", "A100-40GB": "A100 40GB", "H100-SXM-80GB": "H100", "H800": "H800", "H200": "H200"}


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _zero_stage(text: str) -> int | None:
    lowered = text.lower()
    if lowered.startswith("none"):
        return 0
    found = re.match(r"zero-(\d)", lowered)
    if found:
        return int(found.group(1))
    if lowered.startswith("fsdp: optimizer states and grads sharded"):
        return 2
    return None


def _framework(sharding: str) -> str:
    """The framework a row's sharding text names (measured-runs-2.csv's `zero_fsdp`): Megatron's distributed
    optimizer, FSDP2 (torchtitan-style), FSDP / HSDP, DeepSpeed; `other` for the 2021-22 papers' runs."""
    lowered = sharding.lower()
    if lowered.startswith("megatron distributed optimizer"):
        return "megatron"
    if "fsdp2" in lowered:
        return "torchtitan"
    if lowered.startswith(("fsdp (", "hsdp")):
        return "fsdp"
    return "deepspeed" if "deepspeed" in lowered else "other"


def _recompute(text: str) -> str | None:
    word = text.split(" ")[0].strip().lower()
    return word if word in memory.RECOMPUTE_MODES else None


def run_scenario(row: dict[str, str]) -> Scenario | None:
    """The measured run as a scenario, or None when its configuration is not complete (a shape, layout,
    micro-batch, ZeRO stage or recompute key not stated, or a GPU outside the catalogue). A row that does not
    validate raises ScenarioError: a complete published configuration must be accepted."""
    numbers = {key: _number(row[key]) for key in ("total_params_b", "active_params_b", "n_layers", "d_model",
                                                  "n_heads", "n_kv_heads", "ffn_hidden_size", "vocab_size",
                                                  "seq_len", "num_gpus", "tp", "pp", "micro_batch",
                                                  "global_batch_tokens")}
    zero, recompute = _zero_stage(row["zero_fsdp"]), _recompute(row["recompute"])
    if row.get("zero_stage", "").isdigit():  # measured-runs-2.csv states the planner's stage
        zero = int(row["zero_stage"])
    if any(value is None for value in numbers.values()) or zero is None or recompute is None or (
            row["gpu_type"] not in GPU_NAMES or row["arch"] != "dense"):
        return None
    virtual = _number(row["vpp"])
    keys: dict[str, Any] = {
        "name": f"{row['row_id']}: {row['model']}", "total_params": float(numbers["total_params_b"] or 0.0) * 1e9,
        "n_layers": numbers["n_layers"], "d_model": numbers["d_model"], "n_heads": numbers["n_heads"],
        "n_kv_heads": numbers["n_kv_heads"], "ffn_hidden_size": numbers["ffn_hidden_size"],
        "ffn_type": "gated" if row["ffn_type"].lower().startswith("gated") or "swiglu" in row["ffn_type"].lower()
        else "plain", "vocab_size": numbers["vocab_size"],
        "seq_len": numbers["seq_len"], "gpu_type": GPU_NAMES[row["gpu_type"]], "gpu_count": numbers["num_gpus"],
        "tensor_parallel": numbers["tp"], "pipeline_parallel": numbers["pp"], "zero_stage": zero,
        "micro_batch_size": numbers["micro_batch"], "global_batch_tokens": numbers["global_batch_tokens"],
        "activation_recompute": recompute,
        "attention": "eager" if re.match(r"no\b(?!t)", row["flash_attention"].lower()) else "flash",
        "virtual_pipeline_stages": int(virtual) if virtual else 1,
        "precision": "fp8" if row.get("precision", "").lower().startswith("fp8") else "bf16",
        "framework": _framework(row["zero_fsdp"]), "hsdp": row["zero_fsdp"].startswith("HSDP"),
    }
    if _number(row.get("gpus_per_node", "")):
        keys["gpus_per_node"] = _number(row["gpus_per_node"])
    if row.get("source_family", "").startswith("KempnerForge"):
        keys |= KEMPNERFORGE_RECIPE
    return scenario_from_dict({key: int(value) if isinstance(value, float) and value.is_integer() and key not in {
        "total_params", "global_batch_tokens"} else value for key, value in keys.items()})


def measured_rows(path: Path = MEASURED_RUNS_CSV) -> list[dict[str, str]]:
    """The measured runs' rows, as text, from the shared CSV."""
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def measured_run_results(rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Each complete row: id, model, layout, GB per GPU, GPU memory and verdict (`accepted` False on refusal)."""
    from dashboard.core.engine import scenario_outputs

    results = []
    for row in rows:
        try:
            scenario = run_scenario(row)
        except ScenarioError as error:
            results.append({"row_id": row["row_id"], "model": row["model"], "accepted": False, "error": str(error)})
            continue
        if scenario is None:
            continue
        result = scenario_outputs(scenario)
        lay = result["layout"]
        results.append({"row_id": row["row_id"], "model": row["model"], "accepted": True,
                        "layout": f"TP {lay['tensor_parallel']} · PP {lay['pipeline_parallel']} · "
                                  f"DP {lay['data_parallel']} · ZeRO-{lay['zero_stage']}",
                        "recompute": scenario.activation_recompute, "total_gb": result["memory"]["total_gb"],
                        "gpu_gb": result["memory"]["gpu_memory_gb"], "fits": result["feasible"]})
    return results


def memory_row(row: dict[str, str]) -> dict[str, str]:
    """A row of measured-memory.csv in measured-runs-2.csv's columns (dense, no interleaving). KempnerForge's pure-TP
    runs ("none (pure TP)", ZeRO-0 in the file) are FSDP2 over a data-parallel group of one: with TP it always puts
    a dp_shard dimension in the mesh "so FSDP2 can wrap" (kempnerforge/distributed/setup.py @ 01b461a), which keeps
    the fp32 unsharded gradients across micro-batches; read as ZeRO-3 (DP 1 shards nothing)."""
    fsdp_of_one = row["source_family"].startswith("KempnerForge") and row["tp"] != "1" and row["zero_stage"] == "0"
    return row | {"arch": "dense", "active_params_b": row["total_params_b"], "vpp": "", "interconnect": ""} | (
        {"zero_stage": "3"} if fsdp_of_one else {})


def measured_memory_results(rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Each measured peak: id, model, layout, the planner's tensors per GPU (total less the reserve, as the
    allocator's peak counts them), the measured GiB, the error, and whether the planner says it fits."""
    from dashboard.core.engine import scenario_outputs

    results = []
    for row in rows:
        scenario = run_scenario(memory_row(row))
        if scenario is None:
            results.append({"row_id": row["row_id"], "model": row["model"], "accepted": False, "error": "incomplete"})
            continue
        result = scenario_outputs(scenario)
        mem, lay = result["memory"], result["layout"]
        tensors = mem["total_gb"] - mem["reserve_gb"]
        measured = float(row["measured_peak_gib"])
        results.append({"row_id": row["row_id"], "model": row["model"], "accepted": True,
                        "layout": f"{scenario.gpu_count} GPU{'s' if scenario.gpu_count > 1 else ''} · TP "
                                  f"{lay['tensor_parallel']} · DP {lay['data_parallel']} · ZeRO-{lay['zero_stage']} · "
                                  f"grad accum {row['grad_accum']}",
                        "tensors_gb": tensors, "measured_gb": measured, "error": tensors / measured - 1.0,
                        "fits": result["feasible"]})
    return results


def measured_peak_errors(results: list[dict[str, Any]]) -> tuple[float, float]:
    """The mean and worst |error| of the planner's tensors against the measured peaks (`measured_memory_results`)."""
    errors = [abs(row["error"]) for row in results if row["accepted"]]
    return sum(errors) / len(errors), max(errors)


@cache
def validation_note() -> str:
    """One line for the memory bar: how far the model is from Korthikanti's Fig. 1 and from the measured peaks
    (`MEASURED_PEAK_ERROR`, recomputed by a test) and how many published layouts that ran fit (computed)."""
    figure = figure_1_rows()
    states = max(abs(row["error"]) for row in figure if row["quantity"].startswith("parameters"))
    activations = max(abs(row["error"]) for row in figure if row["quantity"].startswith("activations"))
    layouts = [row for row in layout_rows() if row["expected"]]
    fitting = sum(row["fits"] for row in layouts)
    mean, worst = MEASURED_PEAK_ERROR
    return (f"Memory model checked against Korthikanti et al. 2022 (model states within {states:.1%}, activations "
            f"within {activations:.1%}), {MEASURED_PEAK_ROWS} measured peaks (KempnerForge, H200: within {mean:.1%} "
            f"on average, {worst:.1%} at worst) and {fitting} of {len(layouts)} published layouts that ran fit; "
            "see docs/memory-validation.md").replace("%", " %")


def _gb(value: float | None) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:,.1f}"


def document(rows: list[dict[str, str]] | None) -> str:
    """docs/memory-validation.md: every case with the planner's figure, the published one and the error."""
    lines = [
        "# Memory model: validation",
        "",
        "Written by `python -m dashboard.validation.memory_validation` from `dashboard/core/memory.py`; do not edit by "
        "hand. GB are 2³⁰ bytes (GiB), as GPU memory is sold and as Korthikanti et al. report it. The method is in "
        "`docs/method.md` (Memory per GPU).",
        "",
        f"## {KORTHIKANTI}",
        "",
        "8 × A100-80GB tensor parallel, sequence 2,048, vocabulary 51,200, each model's Table 3 pipeline and "
        "micro-batch (interleaving 3 for 175B and 530B). Parameters + optimizer: 18 bytes per parameter of one "
        "stage's layers (a middle stage; at PP 1 the whole model). Activations without recompute: eager attention, "
        "no sequence parallelism; with SP + selective recompute: Korthikanti's 34·s·b·h/TP per layer.",
        "",
        "| Model | Quantity | Planner (GiB) | Published (GiB) | Error | Target |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in figure_1_rows():
        lines.append(f"| {row['model']} | {row['quantity']} | {row['predicted']:.2f} | {row['published']:.2f} | "
                     f"{row['error']:+.1%} | ±{row['tolerance']:.0%} |".replace("%", " %"))
    lines += [
        "",
        "## Published layouts",
        "",
        "Layouts that ran must fit without full recompute; plans that cannot run must not. Memory per GPU is "
        "weights + gradients + optimizer + activations + logits + the framework reserve.",
        "",
        "| Case | Source | GB per GPU | GPU GB | Planner | Expected |",
        "|---|---|---:|---:|---|---|",
    ]
    for row in layout_rows():
        lines.append(f"| {row['case']} | {row['source']} | {_gb(row['total_gb'])} | {_gb(row['gpu_gb'])} | "
                     f"{'fits' if row['fits'] else 'does not fit'} | {'fits' if row['expected'] else 'does not fit'} |")
    lines += ["", "## Measured runs (`shared/reference/measured-runs.csv`)", ""]
    if rows is None:
        lines.append("The shared reference file was not found when this page was written.")
    else:
        results = measured_run_results(rows)
        lines += [
            f"{len(rows)} rows; {len(results)} have a complete configuration (shape, layout, micro-batch, ZeRO stage, "
            "recompute and a catalogue GPU) and are checked: each must be accepted and fit. The others lack a "
            "micro-batch, a TP degree, a ZeRO stage or a recompute setting, run on TPUs or unnamed Ampere GPUs, or "
            "are MoE with multi-head latent attention.",
            "",
            "| Row | Model | Layout | Recompute | GB per GPU | GPU GB | Planner |",
            "|---|---|---|---|---:|---:|---|",
        ]
        for result in results:
            if not result["accepted"]:
                lines.append(f"| {result['row_id']} | {result['model']} | refused: {result['error']} | | | | |")
                continue
            lines.append(f"| {result['row_id']} | {result['model']} | {result['layout']} | {result['recompute']} | "
                         f"{_gb(result['total_gb'])} | {_gb(result['gpu_gb'])} | "
                         f"{'fits' if result['fits'] else 'does not fit'} |")
    lines += _recipe_sections()
    lines += ["", f"Summary shown under the memory bar: {validation_note()}.", ""]
    return "\n".join(lines)


def _recipe_sections() -> list[str]:
    """ZeRO's Figure 1 (the DeepSpeed recipe), measured-runs-2.csv's runs and measured-memory.csv's peaks."""
    lines = ["", f"## {ZERO}", "",
             "The DeepSpeed recipe with fp16 weights and gradients, fp32 master and Adam moments (2 + 2 + 12 bytes "
             "per parameter; `memory.recipe_bytes`), in decimal GB as the paper prints them.", "",
             "| ZeRO stage | Planner (GB) | Published (GB) | Error | Target |", "|---|---:|---:|---:|---:|"]
    for row in zero_figure_1_rows():
        lines.append(f"| {row['stage']} | {row['predicted']:.2f} | {row['published']:.1f} | {row['error']:+.1%} | "
                     f"±{row['tolerance']:.0%} |".replace("%", " %"))
    lines += ["", "## Measured runs (`shared/reference/measured-runs-2.csv`)", ""]
    if not MEASURED_RUNS_2_CSV.exists():
        lines.append("The shared reference file was not found when this page was written.")
    else:
        lines += ["Each run with its framework's recipe (KempnerForge's told as in the measured peaks below: bf16 "
                  "parameters, gradients and moments, no fp32 master, fp32 unsharded accumulation, bf16 cross-entropy "
                  "without loss parallelism, the input embedding whole over TP); each must be accepted and fit.", "",
                  "| Row | Model | Layout | Recompute | GB per GPU | GPU GB | Planner |",
                  "|---|---|---|---|---:|---:|---|"]
        for result in measured_run_results(measured_rows(MEASURED_RUNS_2_CSV)):
            lines.append(f"| {result['row_id']} | {result['model']} | {result['layout']} | {result['recompute']} | "
                         f"{_gb(result['total_gb'])} | {_gb(result['gpu_gb'])} | "
                         f"{'fits' if result['fits'] else 'does not fit'} |" if result["accepted"] else
                         f"| {result['row_id']} | {result['model']} | refused: {result['error']} | | | | |")
    lines += ["", "## Measured peaks (`shared/reference/measured-memory.csv`)", ""]
    if not MEASURED_MEMORY_CSV.exists():
        return lines + ["The shared reference file was not found when this page was written."]
    rows = measured_rows(MEASURED_MEMORY_CSV)
    results = measured_memory_results(rows)
    mean, worst = measured_peak_errors(results)
    low = sum(row["error"] < 0 for row in results if row["accepted"])
    lines += [f"KempnerForge's allocator peaks on H200 (`torch.cuda.max_memory_allocated`), against the planner's "
              f"tensors (total less the reserve), with KempnerForge's recipe read from its code (bf16 parameters, "
              f"gradients and Adam moments, no fp32 master; FSDP2 keeping fp32 unsharded gradients across "
              f"micro-batches; `F.cross_entropy` on bf16 logits gathered whole to every TP rank; the token embedding "
              f"replicated over TP; its pure-TP runs are FSDP2 over a group of one). Every run is accepted and said "
              f"to fit ({sum(row.get('fits', False) for row in results)} of {len(results)}); the planner is off by "
              f"{mean:.1%} on average ({low} of {len(results)} low), {worst:.1%} at worst.".replace("%", " %"), "",
              "Each term is read from the frameworks' code and nothing is fitted to these rows, so there is no "
              "held-out split to make: the error above is already out of sample. At the peak, the start of the "
              "last micro-batch's backward, a GPU holds: the sharded bf16 weights and moments; the fp32 unsharded "
              "gradients of the earlier micro-batches (4 bytes per parameter of the TP shard); every layer's saved "
              "input (2·s·b·h/TP, sequence parallel); and the loss's working set, 8 bytes per logit of the whole "
              "s·b·V on each TP rank (the bf16 logits the loop keeps, the log-softmax output, its gradient and the "
              "logits' gradient). The recomputed layer's working set comes after the loss's backward and is "
              "smaller here. Not counted: torch.compile's buffers and the allocator's rounding, which the low "
              "errors leave little room for.", "",
              "| Row | Model | Layout | Planner tensors (GiB) | Measured (GiB) | Error | Planner |",
              "|---|---|---|---:|---:|---:|---|"]
    for row in results:
        if not row["accepted"]:
            lines.append(f"| {row['row_id']} | {row['model']} | refused | | | | |")
            continue
        lines.append(f"| {row['row_id']} | {row['model']} | {row['layout']} | {row['tensors_gb']:.1f} | "
                     f"{row['measured_gb']:.1f} | {row['error']:+.1%} | {'fits' if row['fits'] else 'does not fit'} |"
                     .replace("%", " %"))
    by_id = {row["row_id"]: row for row in rows}
    for row_id, (micro_batch, grad_accum, why) in SCRIPT_BATCH.items():
        if row_id in by_id:
            again = measured_memory_results([by_id[row_id] | {"micro_batch": micro_batch, "grad_accum": grad_accum}])
            lines += ["", f"{row_id}: {why}; at that batch the planner's tensors are {again[0]['tensors_gb']:.1f} GiB, "
                      f"{again[0]['error']:+.1%}. The file's (the report's) batch is kept above.".replace("%", " %")]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write docs/memory-validation.md from the memory model.")
    parser.add_argument("--check", action="store_true", help="exit 1 if the page on disk differs")
    args = parser.parse_args(argv)
    rows = measured_rows() if MEASURED_RUNS_CSV.exists() else None
    return write_page(DOC, document(rows), args.check)


def write_page(doc: Path, text: str, check: bool) -> int:
    """Write a validation page, or with `check` say whether the one on disk is `text` (exit status 1 if not)."""
    name = doc.relative_to(ROOT)
    if check:
        same = doc.exists() and doc.read_text(encoding="utf-8") == text
        print(f"{name} is " + ("up to date" if same else "stale: run the script"))
        return 0 if same else 1
    doc.write_text(text, encoding="utf-8")
    print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
