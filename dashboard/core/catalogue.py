"""What each number is: one entry per engine output, Monte Carlo figure and scenario input.

An entry holds the name the engine or scenario uses, a short label, the unit its value is formatted in
(`dashboard.format.UNITS`), how it is computed and where its figures come from. Tiles, tables, chart labels,
the CLI's readable table and the report read labels and formats from here, so one number reads the same
everywhere. Nested outputs are named with dots: `cost_breakdown.main_compute`, `tst.net_savings_usd`;
Monte Carlo percentiles by statistic: `p10.cost_total_usd`, `mean.wall_clock_days`.

Use: `text("cost_total_usd", 441_352.1)` is "$441k", `exact(...)` the full value for hover and downloads,
`label(name)` the label, `entry(name).delta(difference)` a signed difference ("+1.2 pp" for shares),
`flatten(result)` every (dotted name, value) of a nested result, `HEADLINE_OUTPUTS` the headline rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from dashboard import format as fmt
from dashboard.core import evidence, programme
from dashboard.core.references import TST_RUN
from dashboard.core.scenario import Scenario
from dashboard.core.uncertainty import CONFIDENCE_LEVELS, PERCENTILES
from dashboard.core.uncertainty import INPUTS as UNCERTAIN_INPUTS
from dashboard.core.uncertainty import OUTPUTS as MC_OUTPUTS

TEXT = "text"  # the value is shown as it is (a status, a name, a choice)


@dataclass(frozen=True)
class Entry:
    """One number (or text) the planner shows: its name, label, unit, formula and source."""

    name: str
    label: str
    unit: str
    formula: str = ""
    source: str = ""
    render: Callable[[Any], str] | None = None  # text values that are not plain (the programme's stages)

    def text(self, value: Any) -> str:
        """The display text: three significant figures in the entry's unit ($441k, 8.4×10²² FLOPs, 4.8 days)."""
        if self.render is not None:
            return self.render(value)
        if self.unit == TEXT or isinstance(value, str):
            return "unset" if value is None else str(value)
        return fmt.number(value, self.unit)

    def exact(self, value: Any) -> str:
        """The full value, for hover text and downloads."""
        if self.render is not None:
            return self.render(value)
        if self.unit == TEXT or isinstance(value, str):
            return "unset" if value is None else str(value)
        return fmt.exact(value, self.unit)

    def delta(self, difference: float) -> str:
        """A difference in the entry's unit, with its sign (+$12.3k); fractions differ in percentage points."""
        if self.unit == "fraction":
            return fmt.signed(100 * difference, "pp")
        return fmt.signed(difference, self.unit)

    def change(self, value: float, base: float) -> str:
        """`value` against `base` as every delta shows it (`dashboard.format.change`: "≈ same" when too small)."""
        return fmt.change(value, base, self.unit)


def _entries(*rows: tuple[str, str, str, str, str]) -> dict[str, Entry]:
    return {row[0]: Entry(*row) for row in rows}


MAIN_RUN = "compute GPU-hours × (1 + stall + rework)"
PROGRAMME_STAGES = ("Σ stages (ladder, ablations, mid-training, evaluations, data scoring) GPU-hours × (1 + repeat "
                    "allowance) × blended $/GPU-hour, plus the extra tokens data preparation reads")
PROGRAMME = "dashboard/core/programme.py; docs/method.md §14"
SIDE = "main-run GPU-hours × its overhead × blended $/GPU-hour"

# The engine's outputs (`engine.scenario_outputs`), in its order: name, label, unit, formula, source.
OUTPUTS: dict[str, Entry] = _entries(
    ("model_flops", "Model FLOPs", "FLOPs", "6 · N_active · D (+ attention term when enabled)",
     "Kaplan et al. 2020; PaLM App. B"),
    ("total_flops", "Hardware FLOPs", "FLOPs", "model FLOPs, × 8/6 with full activation recomputation",
     "BigScience; NeMo"),
    ("gpu_hours_ideal", "Ideal GPU-hours", "count", "hardware FLOPs / (peak dense BF16 · MFU · 3600)",
     "definition of MFU (PaLM §4)"),
    ("gpu_hours_compute", "Compute GPU-hours", "count", "ideal GPU-hours ÷ TST speedup (1 for the baseline)", ""),
    ("gpu_hours_stall", "Checkpoint-stall GPU-hours", "count", "compute GPU-hours × δ/τ", "Young 1974"),
    ("gpu_hours_rework", "Failure-rework GPU-hours", "count", "compute GPU-hours × (τ/2 + restart)/M", "Young 1974"),
    ("gpu_hours_main_run", "Main-run GPU-hours", "count", MAIN_RUN, ""),
    ("gpu_hours_experiments", "Side GPU-hours", "count",
     "main-run GPU-hours × (experiments + evaluation + debugging)", ""),
    ("baseline_main_gpu_hours", "Baseline main-run GPU-hours", "count",
     "ideal GPU-hours × (1 + stall + rework), the baseline method's main run", ""),
    ("tst_pilot_usd", "TST pilot cost if chosen", "$", "pilot fraction × baseline main-run GPU-hours × price", ""),
    ("gpu_hours_total", "GPU-hours", "count",
     "6·N_active·D / (peak · MFU · 3600) ÷ TST speedup, × (1 + stall + rework), "
     "× (1 + experiments + evaluation + debugging), + the programme stages'", "Kaplan et al. 2020; PaLM §4"),
    ("wall_clock_days", "Wall-clock", "days", "main-run GPU-hours / GPU count / 24", ""),
    ("node_count", "Nodes", "integer", "⌈GPUs / GPUs per node⌉", ""),
    ("job_mtbf_hours", "Job MTBF", "h", "24 · 1000 / (interruption rate · nodes)", "Llama 3 Herd, Table 5"),
    ("blended_price_per_gpu_hour", "Blended price per GPU-hour", "$",
     "reserved share · reserved price + spot share · spot price + on-demand remainder · on-demand price", ""),
    ("checkpoint_size_gb", "Checkpoint size", "GB", "total parameters × bytes per parameter",
     "ZeRO (arXiv 1910.02054)"),
    ("checkpoint_write_s", "Checkpoint write time", "s", "checkpoint size / write bandwidth, or as given", ""),
    ("stall_fraction", "Checkpoint-stall share", "fraction", "δ/τ (0 with asynchronous checkpoints)", "Young 1974"),
    ("rework_fraction", "Failure-rework share", "fraction", "(τ/2 + restart)/M", "Young 1974"),
    ("dataset_gb", "Dataset size", "GB", "raw tokens × bytes per token × versions kept", ""),
    ("storage_cost_usd", "Storage cost", "$",
     "Σ tiers GB-hours × $/GB-month / 730 during the run, plus the storage kept after training",
     "AWS FSx Lustre; S3"),
    ("storage_cost_by_tier", "Storage cost by tier during the run", "$",
     "GB-hours of each tier × its $/GB-month / 730 (the storage kept after training is its own line)", ""),
    ("raw_tokens", "Raw tokens read", "count", "training tokens × TST token multiplier (1 for the baseline)", ""),
    ("cost_breakdown", "Cost by line item", "$", "each line item in dollars", ""),
    ("cost_total_usd", "Total cost", "$",
     "sum of every line item: GPU-hours × blended $/GPU-hour, plus storage, data processing, egress, "
     "TST pilot and switching, people, the programme stages", ""),
    ("gpu_hours_programme_stages", "Programme stages' GPU-hours", "count",
     "Σ stages' GPU-hours × (1 + repeat allowance)", PROGRAMME),
    ("programme", "Programme", "$", "the stages around the main run, each priced by the engine", PROGRAMME),
    ("programme.total_usd", "Programme total", "$", "Σ stages, the main run's own included (= total cost)", PROGRAMME),
    ("programme.gpu_hours", "Programme GPU-hours", "count", "Σ stages' GPU-hours", PROGRAMME),
    ("programme.final_run_usd", "Final run", "$", "the main pre-training stage", PROGRAMME),
    ("programme.final_run_share", "Final run's share of the programme", "fraction",
     "main pre-training ÷ programme total (Epoch AI: final runs are roughly 10–30 % of a lab's R&D compute)",
     PROGRAMME),
    ("programme.calendar_days", "Programme calendar", "days",
     "Σ stages run one after another on the main run's GPUs (evaluations beside the run)", PROGRAMME),
    ("programme.start_date", "Programme start", TEXT, "as entered", ""),
    ("programme.end_date", "Programme end", TEXT, "start + ⌈calendar days⌉", PROGRAMME),
    ("programme.stages", "Stages of the programme", TEXT, "one row per stage, in calendar order", PROGRAMME),
    ("overhead_fraction", "Stall + rework overhead", "fraction", "δ/τ + (τ/2 + restart)/M of compute GPU-hours",
     "Young 1974; Daly 2006"),
    ("storage_peak_gb", "Storage peak", "GB", "largest stored volume over the run, all tiers", ""),
    ("storage_retained_gb", "Storage kept after training", "GB",
     "last K checkpoints + archived checkpoints + datasets + logs at the end of the run", ""),
    ("storage_retention_usd", "Storage after training", "$",
     "kept GB × cold-tier $/GB-month × months kept after training", "AWS S3"),
    ("checkpoint_interval_young_min", "Young interval", "min", "√(2δM)", "Young 1974, CACM 17(9)"),
    ("checkpoint_interval_daly_min", "Daly interval", "min", "√(2δM)·[1 + ⅓√(δ/2M) + ⅑(δ/2M)] − δ",
     "Daly 2006, FGCS 22(3)"),
    ("cost_per_million_tokens", "$ per million tokens", "$", "total cost / (training tokens / 10⁶)", ""),
    ("predicted_loss", "Predicted loss", "nats", "L = E + A/N^α + B/D^β, N = active parameters, D = tokens",
     "Besiroglu et al. 2024; Hoffmann et al. 2022"),
    ("gpu_hours_per_0_01_loss", "GPU-hours per 0.01 lower loss", "count",
     "GPU-hours × (D′/D − 1), D′ the tokens that lower the loss by 0.01", ""),
    ("budget_usd", "Budget", "$", "the scenario's budget line", ""),
    ("tst", "TST against baseline", "$", "both methods at matched loss", TST_RUN.source),
    ("budget_status", "Budget status", TEXT,
     "'over' above the budget, 'warning' above the warning share of it, else 'within'; with the Monte Carlo, "
     "'at risk' when the chance of overrun passes the threshold of dashboard.core.risk", ""),
    ("name", "Scenario", TEXT, "the scenario's name", ""),
)

# Can it run (`dashboard.core.feasibility`): memory per GPU, layout, batch and data supply.
KORTHIKANTI = "Korthikanti et al. 2022 (arXiv 2205.05198)"
ZERO = "ZeRO (arXiv 1910.02054)"
OUTPUTS.update(_entries(
    ("memory", "Memory per GPU", "GB",
     "weights + gradients + optimizer states + activations + logits + reserve (GB of 2³⁰ bytes)", ZERO),
    ("memory.weights_gb", "Weights per GPU", "GB",
     "2 bytes × the busiest stage's parameters (experts ÷ EP) ÷ TP, sharded at ZeRO-3", ZERO),
    ("memory.gradients_gb", "Gradients per GPU", "GB", "4 bytes (fp32 main gradients) × parameters held, sharded "
     "at ZeRO-2 and 3 (4 bytes unsharded with FSDP2's gradient accumulation)",
     "Megatron Core distributed optimizer guide"),
    ("memory.optimizer_gb", "Optimizer states per GPU", "GB", "12 bytes × parameters held, sharded at ZeRO-1 to 3",
     ZERO),
    ("memory.activations_gb", "Activations per GPU", "GB",
     "s·b·(8h + 4h + 4h·kv/a + FFN)/TP per layer, + 5·a·s and 2h with eager attention (34·s·b·h + 5·a·s²·b for "
     "GPT); layer inputs only with full recompute; × the layer-micro-batches the busiest stage keeps; + the "
     "recomputed layer's working set beyond the loss's", KORTHIKANTI),
    ("memory.logits_gb", "Logits per GPU (last stage)", "GB", "the loss's working set: 4 (Megatron's fused fp32), 12 "
     "(logits upcast to fp32) or 8 (bf16) bytes × s · b · vocabulary, / TP with loss parallelism", KORTHIKANTI),
    ("memory.reserve_gb", "Framework reserve per GPU", "GB",
     "memory_reserve_gb, else 1 GB CUDA context + 1 GB NCCL buffers + 5 % of GPU memory (fragmentation)", ""),
    ("memory.total_gb", "Memory needed per GPU", "GB",
     "weights + gradients + optimizer + activations + logits + reserve", ZERO),
    ("memory.gpu_memory_gb", "GPU memory", "GB", "gpu_memory_gb, else the hardware catalogue", "data/hardware.csv"),
    ("memory.fits", "Fits in GPU memory", TEXT, "memory needed ≤ GPU memory", ""),
    ("memory.headroom_gb", "Memory headroom per GPU", "GB", "GPU memory − memory needed", ""),
    ("layout", "Parallel layout", TEXT, "TP · PP · DP with a ZeRO stage", "Narayanan et al. 2021 (arXiv 2104.04473)"),
    ("layout.data_parallel", "Data parallel (DP)", "integer", "GPUs / (TP · PP · CP)", ""),
    ("layout.tensor_parallel", "Tensor parallel (TP)", "integer", "as given, or proposed within a node", ""),
    ("layout.pipeline_parallel", "Pipeline parallel (PP)", "integer", "as given, or proposed after TP", ""),
    ("layout.expert_parallel", "Expert parallel (EP)", "integer", "as given", ""),
    ("layout.context_parallel", "Context parallel (CP)", "integer", "as given", ""),
    ("layout.virtual_pipeline_stages", "Virtual pipeline stages", "integer", "as given", ""),
    ("layout.zero_stage", "ZeRO stage", "integer", "as given, or proposed after TP and PP", ZERO),
    ("layout_proposed", "Layout proposed by the planner", TEXT, "some layout keys were left unset", ""),
    ("layout_valid", "Layout divides the GPUs", TEXT,
     "TP · PP · CP divides the GPUs, TP within a node, EP divides DP, PP at most the layers", ""),
    ("global_batch_tokens", "Global batch", "count", "as given, or B_opt = 0.292 · C^0.3271 tokens",
     "DeepSeek LLM (arXiv 2401.02954)"),
    ("global_batch_sequences", "Global batch (sequences)", "count", "global batch tokens / sequence length", ""),
    ("micro_batches_per_step", "Micro-batches per step", "count", "⌈sequences / (micro-batch · DP)⌉", ""),
    ("optimizer_steps", "Optimizer steps", "count", "training tokens / global batch tokens", ""),
    ("pipeline_bubble_fraction", "Pipeline bubble", "fraction", "(PP − 1) / (v · m + PP − 1)",
     "Narayanan et al. 2021"),
    ("max_useful_gpus", "Most GPUs the batch keeps busy", "integer", "⌈sequences / micro-batch⌉ × TP × PP × CP", ""),
    ("busy_gpus", "GPUs kept busy", "integer", "min(GPUs, most GPUs the batch keeps busy)", ""),
    ("epochs", "Data epochs", "×", "tokens read / unique tokens (none when unlimited)", ""),
    ("effective_tokens", "Effective training tokens", "count", "U + U·R*·(1 − e^(−R/R*)), R = epochs − 1, R* = 15.4",
     "Muennighoff et al. 2023 (arXiv 2305.16264)"),
    ("feasible", "Runs on these GPUs", TEXT, "the layout divides the GPUs and the memory per GPU fits", ""),
    ("feasibility_status", "Can it run", TEXT, "'runs' or 'cannot run'", ""),
    ("feasibility_problems", "Why it cannot run", TEXT, "one sentence per problem, with its fix", ""),
    ("feasibility_warnings", "Feasibility warnings", TEXT, "MFU against published runs and the bubble ceiling",
     "data/published_mfu.csv"),
    ("feasibility_notes", "Feasibility notes", TEXT, "what the planner proposed or assumed", ""),
))

# Throughput (`dashboard.core.step_time`, `dashboard.core.throughput`): the step time and the predicted MFU.
STEP_TIME = "dashboard/core/step_time.py; docs/throughput-validation.md"
EVIDENCE_SOURCE = "dashboard/core/evidence.py"
OUTPUTS.update(_entries(
    ("mfu_used", "MFU used", "fraction", "the scenario's mfu (entered or measured), else the layout's predicted MFU "
     "inside a validated region, else the median of comparable published runs, else the prediction (as HFU with "
     "full recompute)", STEP_TIME),
    ("step_time_s", "Step time", "s", "the layout's predicted step × its predicted MFU / the MFU used", STEP_TIME),
    ("tokens_per_s_per_gpu", "Tokens per second per GPU", "tokens/s",
     "the layout's predicted tokens per second per GPU × the MFU used / its predicted MFU", STEP_TIME),
    ("evidence", "Evidence", TEXT, "per headline output: its grade (measured, validated, published, extrapolated, "
     "entered, assumed) and the grade of each input it rests on (MFU, prices, scaling fit)",
     EVIDENCE_SOURCE),
    ("throughput", "Throughput", "s", "step time of the layout and its parts", STEP_TIME),
    ("throughput.step_time_s", "Layout's predicted step time", "s", "compute + TP, CP and EP traffic + bubble "
     "and sends + exposed DP traffic, per optimizer step", STEP_TIME),
    ("throughput.compute_s", "Compute", "s", "GEMMs at a width-dependent share of the peak, attention scores and "
     "memory-bound work at HBM bandwidth, forward, backward and recompute", STEP_TIME),
    ("throughput.tp_comm_s", "Tensor-parallel traffic", "s", "4 + 4 ring collectives of T·h bf16 values per layer",
     "Korthikanti et al. 2022"),
    ("throughput.cp_comm_s", "Context-parallel traffic (exposed)", "s", "K and V passed round the ring, beyond "
     "the attention compute", STEP_TIME),
    ("throughput.ep_comm_s", "Expert-parallel all-to-all", "s", "2 + 2 all-to-alls of T·k·h bf16 values per MoE "
     "layer", STEP_TIME),
    ("throughput.pp_bubble_s", "Pipeline bubble and sends", "s", "(PP − 1)/v micro-batch times + stage-to-stage "
     "sends", "Narayanan et al. 2021"),
    ("throughput.dp_comm_exposed_s", "Data-parallel traffic (exposed)", "s", "gradient all-reduce (ZeRO-3: weight "
     "gathers too) beyond the compute that hides it", ZERO),
    ("throughput.tokens_per_s_per_gpu", "Layout's predicted tokens per second per GPU", "tokens/s",
     "global batch tokens / (predicted step time × busy GPUs)", STEP_TIME),
    ("throughput.mfu_predicted", "Predicted MFU", "fraction", "model FLOPs of a step / (step time × busy GPUs × "
     "dense BF16 peak)", STEP_TIME),
    ("throughput.mfu_as_input", "Predicted MFU as the mfu key reads it", "fraction",
     "the predicted MFU, as HFU (× 8/6) with full recompute", STEP_TIME),
    ("throughput.mfu_error", "Predicted MFU's error band", "fraction",
     "the plan's region's mean error with each source family left out of the fit (leave one source out), the "
     "widest region's outside them", STEP_TIME),
    ("throughput.validated", "Inside the validated region", TEXT, "GPU generation, precision, size and GPU count "
     "within the measured runs'", STEP_TIME),
    ("throughput.region_notes", "Outside the validated region", TEXT, "one phrase per way the plan leaves it", ""),
    ("throughput.mfu_source", "MFU evidence", TEXT, "'measured' (the scenario's mfu holds mfu_measured, the "
     "team's own) or 'entered' (another mfu), else "
     "'validated' (the prediction inside a region whose held-out error is at most 15 %), else 'published' "
     "(comparable published runs), else 'extrapolated' (the prediction outside every validated region)",
     STEP_TIME),
    ("throughput.mfu_band", "MFU used's range", "fraction", "the predicted MFU as the mfu key reads it ± the "
     "region's band, or the comparable published runs' span (none for an entered MFU)", STEP_TIME),
    ("throughput.mfu_published", "Published MFU priced", "fraction", "median of the comparable published runs' "
     "figures (same GPU generation, precision, dense or MoE, size within 10×), as the mfu key reads it; none where "
     "the mfu is given, the plan lies in a validated region or no run is comparable", "data/published_mfu.csv"),
    ("throughput.mfu_published_runs", "Published runs priced", TEXT, "the comparable published runs' names",
     "data/published_mfu.csv"),
    ("throughput.runner_up_tensor_parallel", "Runner-up layout: TP", "integer",
     "the next fastest fitting candidate of the layout search (none when the layout is given)", STEP_TIME),
    ("throughput.runner_up_pipeline_parallel", "Runner-up layout: PP", "integer", "as the runner-up's TP", STEP_TIME),
    ("throughput.runner_up_step_time_s", "Runner-up step time", "s", "the runner-up's predicted step", STEP_TIME),
))

LINE_ITEM_FORMULAS = {
    "main_compute": ("Main compute", "compute GPU-hours × blended $/GPU-hour"),
    "failure_rework": ("Failure rework", "rework GPU-hours × blended $/GPU-hour"),
    "checkpoint_stalls": ("Checkpoint stalls", "stall GPU-hours × blended $/GPU-hour"),
    "experiments": ("Experiments", SIDE),
    "evaluation": ("Evaluation", SIDE),
    "debugging": ("Debugging", SIDE),
    "storage": ("Storage", "Σ tiers GB-hours × $/GB-month / 730, plus the storage kept after training"),
    "network_egress": ("Egress", "egress GB × $/GB"),
    "data_processing": ("Data processing", "raw tokens × $ per billion tokens / 10⁹"),
    "tst_pilot": ("TST pilot", "pilot fraction × baseline main-run cost (TST only)"),
    "tst_switching": ("TST switching", "one-off engineering cost (TST only)"),
    "people": ("People", "staff cost as given"),
    "programme_stages": ("Programme stages", PROGRAMME_STAGES),
}
TIER_LABELS = {
    "hot_checkpoints": "Hot checkpoints (last K)",
    "archived_checkpoints": "Archived checkpoints",
    "datasets": "Datasets",
    "logs": "Logs",
}
TST_FIELDS = {
    "baseline_gpu_hours": ("Baseline main-run GPU-hours at matched loss", "count",
                           "ideal GPU-hours × (1 + stall + rework)"),
    "tst_gpu_hours": ("TST main-run GPU-hours at matched loss", "count", "baseline main-run GPU-hours / TST speedup"),
    "baseline_plan_gpu_hours": ("Baseline plan GPU-hours", "count",
                                "baseline main-run GPU-hours × (1 + experiments + evaluation + debugging)"),
    "tst_plan_gpu_hours": ("TST plan GPU-hours at matched loss", "count",
                           "TST main-run GPU-hours × (1 + experiments + evaluation + debugging)"),
    "baseline_cost_usd": ("Plan total with the baseline method", "$", "every line item of the plan with the baseline"),
    "tst_cost_usd": ("Plan total with TST", "$", "every line item of the plan with TST, pilot and switching included"),
    "baseline_tokens": ("Baseline raw tokens", "count", "training tokens"),
    "tst_tokens": ("TST raw tokens", "count", "training tokens × TST token multiplier"),
    "baseline_main_run_usd": ("Baseline main run", "$", "baseline main-run GPU-hours × blended $/GPU-hour"),
    "tst_main_run_usd": ("TST main run", "$", "baseline main run / TST speedup"),
    "baseline_side_usd": ("Baseline experiments, evaluation, debugging", "$", "baseline main run × their overheads"),
    "tst_side_usd": ("TST experiments, evaluation, debugging", "$", "TST main run × their overheads"),
    "baseline_data_cost_usd": ("Baseline data processing", "$", "tokens × $ per billion tokens / 10⁹"),
    "tst_data_cost_usd": ("TST data processing", "$", "TST raw tokens × $ per billion tokens / 10⁹"),
    "baseline_storage_usd": ("Baseline storage", "$", "storage over the baseline run and after it"),
    "tst_storage_usd": ("TST storage", "$", "storage over the TST run (shorter, more raw data) and after it"),
    "pilot_cost_usd": ("TST pilot cost", "$", "pilot fraction × baseline main-run cost"),
    "switching_cost_usd": ("TST switching cost", "$", "one-off engineering cost"),
    "saving_main_run_usd": ("TST saving on the main run", "$", "baseline main run − TST main run"),
    "saving_side_usd": ("TST saving on experiments, evaluation, debugging", "$", "baseline − TST side work"),
    "saving_data_usd": ("TST saving on data processing", "$",
                        "baseline − TST data processing (negative: TST reads more)"),
    "saving_storage_usd": ("TST saving on storage", "$", "baseline − TST storage"),
    "net_savings_usd": ("TST saving", "$",
                        "total(baseline) − total(TST) of the same plan, pilot and switching included"),
    "speedup": ("TST speedup", "×", "baseline GPU-hours / TST GPU-hours at matched loss"),
    "scarcity_factor": ("TST training length with scarce data", "×",
                        "raw tokens TST must read to match the baseline's loss ÷ its planned raw tokens"),
    "net_savings_with_scarcity_usd": ("TST saving with scarce data", "$",
                                      "saving − (scarcity factor − 1) × TST's main run, side work, data and storage"),
    "break_even_speedup": ("TST break-even speedup", "×",
                           "the speedup at which total(TST) = total(baseline); ∞ when no speedup pays for the "
                           "extra data, pilot and switching"),
}
OUTPUTS.update({
    f"cost_breakdown.{key}": Entry(f"cost_breakdown.{key}", label, "$", formula)
    for key, (label, formula) in LINE_ITEM_FORMULAS.items()
})
OUTPUTS.update({
    f"storage_cost_by_tier.{key}": Entry(f"storage_cost_by_tier.{key}", f"Storage during the run: {label}", "$",
                                         "GB-hours of the tier × its $/GB-month / 730")
    for key, label in TIER_LABELS.items()
})
OUTPUTS.update({
    f"tst.{key}": Entry(f"tst.{key}", label, unit, formula, TST_RUN.source)
    for key, (label, unit, formula) in TST_FIELDS.items()
})
# Each headline output's evidence (`dashboard.core.evidence`): its grade and the grade of each input it rests on.
EVIDENCE_INPUTS = {"mfu": "MFU", "price": "GPU-hour prices", "scaling_fit": "scaling-law fit"}
for _key, _inputs in evidence.RESTS_ON.items():
    _name = OUTPUTS[_key].label
    OUTPUTS[f"evidence.{_key}"] = Entry(f"evidence.{_key}", f"Evidence: {_name}", TEXT, "its grade and its inputs'",
                                        EVIDENCE_SOURCE)
    OUTPUTS[f"evidence.{_key}.grade"] = Entry(f"evidence.{_key}.grade", f"Evidence grade: {_name}", TEXT,
                                              f"the grade of its {EVIDENCE_INPUTS[_inputs[0]]}", EVIDENCE_SOURCE)
    OUTPUTS[f"evidence.{_key}.inputs"] = Entry(f"evidence.{_key}.inputs", f"Evidence of the inputs: {_name}", TEXT,
                                               "each input's grade", EVIDENCE_SOURCE)
    OUTPUTS.update({f"evidence.{_key}.inputs.{_input}": Entry(
        f"evidence.{_key}.inputs.{_input}", f"Evidence of the {EVIDENCE_INPUTS[_input]}: {_name}", TEXT,
        "measured, validated, published, extrapolated, entered or assumed", EVIDENCE_SOURCE) for _input in _inputs})

# Monte Carlo figures (`MonteCarlo.summary()`), the percentile rows named `p10.cost_total_usd` and so on.
MONTE_CARLO: dict[str, Entry] = _entries(
    ("prob_over_budget", "Chance of exceeding the budget", "fraction",
     "share of Monte Carlo draws whose total cost is above the budget", ""),
    *((f"budget_for_{round(100 * level)}_percent_usd", f"Budget covering {round(100 * level)} % of draws", "$",
       f"the {round(100 * level)} % quantile of the total-cost draws", "") for level in CONFIDENCE_LEVELS),
    ("monte_carlo.draws", "Monte Carlo draws", "integer", "number of draws", ""),
    ("monte_carlo.seed", "Monte Carlo seed", "integer", "random seed", ""),
    ("monte_carlo.shape", "Range shape", TEXT, "triangular or log-normal", ""),
    ("feasible", "Runs on these GPUs", TEXT, "the plan's memory and layout check (the same for every draw)", ""),
)
for _statistic in (*(f"p{q}" for q in PERCENTILES), "mean"):
    for _output in MC_OUTPUTS:
        _base = OUTPUTS[_output]
        MONTE_CARLO[f"{_statistic}.{_output}"] = replace(
            _base, name=f"{_statistic}.{_output}", label=f"{_base.label} {_statistic.replace('p', 'P')}",
            formula=f"{_statistic} of the Monte Carlo draws of {_base.label.lower()}",
        )
TORNADO_ENDS = {"input_low": "input at its low end", "input_high": "input at its high end",
                "low": "total cost, input low", "high": "total cost, input high"}

# The three questions' answers (`questions.optimal_for_budget` / `optimal_for_target_loss`) besides the outputs and
# inputs they repeat (sizes, tokens, FLOPs, loss, layout, budget).
ANSWERS: dict[str, Entry] = _entries(
    ("tokens_per_param", "Tokens per active parameter", "", "training tokens / active parameters",
     "Hoffmann et al. 2022 (about 20 at the compute optimum)"),
    ("gpu_hours", "GPU-hours", "count", "every GPU-hour of the answer's plan, side work included", ""),
    ("cost_usd", "Total cost", "$", "the answer's plan priced with every line item, its programme's stages included",
     ""),
    ("final_run_usd", "Final run", "$", "the answer's main pre-training stage", PROGRAMME),
    ("final_run_share", "Final run's share of the programme", "fraction", "final run ÷ total cost", PROGRAMME),
    ("programme_calendar_days", "Programme calendar", "days", "the answer's stages one after another", PROGRAMME),
    ("memory_limited", "Limited by GPU memory", TEXT,
     "true when the compute-optimal model does not fit the GPUs, so the answer is the largest model that does", ""),
    ("memory_per_gpu_gb", "Memory needed per GPU", "GB", "the answer's memory per GPU at its layout", ""),
    ("shape.n_layers", "Layers", "integer", "of the proposed model: the published shape nearest its size",
     "dashboard/core/shape.py"),
    ("shape.d_model", "Hidden size", "integer", "of the proposed model", ""),
    ("shape.n_heads", "Attention heads", "integer", "of the proposed model", ""),
    ("shape.n_kv_heads", "Key/value heads", "integer", "of the proposed model", ""),
    ("shape.ffn_hidden_size", "FFN width", "integer", "of the proposed model", ""),
    ("shape.ffn_type", "FFN kind", TEXT, "gated (SwiGLU) or plain", ""),
    ("shape.vocab_size", "Vocabulary", "integer", "of the proposed model", ""),
    ("shape.description", "Shape", TEXT, "layers × width, heads (K/V heads)", ""),
    ("shape.source", "Shape source", TEXT, "the published model the assumed keys come from, or 'given'", ""),
    ("target_loss", "Target loss", "nats", "the loss asked for", ""),
)

# Scenario inputs: label and display unit; the formula column holds nothing, the source is the field's description.
INPUT_STYLE: dict[str, tuple[str, str]] = {
    "schema_": ("Scenario file version", "integer"),
    "name": ("Scenario name", TEXT),
    "total_params": ("Total parameters", "count"),
    "active_params": ("Active parameters (MoE)", "count"),
    "tokens": ("Training tokens", "count"),
    "attention_flops": ("Attention FLOPs term", ""),
    "causal_attention_halving": ("Halve attention for causal masks", ""),
    "n_layers": ("Layers", "integer"),
    "d_model": ("Hidden size", "integer"),
    "seq_len": ("Sequence length", "integer"),
    "activation_recompute": ("Activation recomputation (none / selective / full)", TEXT),
    "gpu_type": ("GPU type", TEXT),
    "peak_tflops": ("Peak dense BF16 per GPU", "TFLOP/s"),
    "gpu_count": ("GPUs", "integer"),
    "gpus_per_node": ("GPUs per node", "integer"),
    "mfu": ("MFU", "fraction"),
    "price_reserved_per_gpu_hour": ("Reserved $/GPU-hour", "$"),
    "price_on_demand_per_gpu_hour": ("On-demand $/GPU-hour", "$"),
    "price_spot_per_gpu_hour": ("Spot $/GPU-hour", "$"),
    "reserved_share": ("Reserved share", "fraction"),
    "spot_share": ("Spot share", "fraction"),
    "node_failures_per_1000_node_days": ("Node failures per 1,000 node-days", ""),
    "spot_interruptions_per_1000_node_days": ("Spot interruptions per 1,000 node-days", ""),
    "checkpoint_interval_min": ("Checkpoint interval", "min"),
    "checkpoint_write_gb_per_s": ("Checkpoint write bandwidth", "GB/s"),
    "checkpoint_write_s": ("Checkpoint stall per write", "s"),
    "checkpoint_async": ("Asynchronous checkpoints", ""),
    "checkpoint_bytes_per_param": ("Checkpoint bytes per parameter", ""),
    "restart_min": ("Restart time", "min"),
    "keep_last_checkpoints": ("Checkpoints kept on the hot tier", "integer"),
    "archive_every_nth": ("Full checkpoints archived: every n-th", "integer"),
    "weight_archives": ("Weight archives over the run", "integer"),
    "weight_archive_bytes_per_param": ("Weight archive bytes per parameter", ""),
    "storage_hot_per_gb_month": ("Hot storage $/GB-month", "$"),
    "storage_cold_per_gb_month": ("Cold storage $/GB-month", "$"),
    "dataset_bytes_per_token": ("Dataset bytes per token", ""),
    "dataset_versions": ("Dataset copies kept", "integer"),
    "logs_gb_per_day": ("Logs per day", "GB"),
    "storage_retention_months": ("Storage kept after training", "months"),
    "experiment_overhead": ("Other experiments (× main run)", "×"),
    "programme": ("Programme stages", TEXT),
    "start_date": ("Programme start date", TEXT),
    "eval_overhead": ("Evaluation (× main run)", "×"),
    "debug_overhead": ("Debugging (× main run)", "×"),
    "data_cost_per_billion_tokens": ("Data processing $ per billion tokens", "$"),
    "egress_gb": ("Egress", "GB"),
    "egress_per_gb": ("Egress $/GB", "$"),
    "people_cost_usd": ("People", "$"),
    "budget_usd": ("Budget", "$"),
    "budget_warning_fraction": ("Budget warning share", "fraction"),
    "scaling_fit": ("Scaling-law fit", TEXT),
    "method": ("Training method", TEXT),
    "tst_speedup": ("TST speedup", "×"),
    "tst_token_multiplier": ("TST raw-token multiplier", "×"),
    "tst_pilot_fraction": ("TST pilot (share of the baseline run's cost)", "fraction"),
    "tst_switching_cost_usd": ("TST switching cost", "$"),
    "range_shape": ("Range shape", TEXT),
    "tensor_parallel": ("Tensor parallel (TP)", "integer"),
    "pipeline_parallel": ("Pipeline parallel (PP)", "integer"),
    "expert_parallel": ("Expert parallel (EP)", "integer"),
    "zero_stage": ("ZeRO stage", "integer"),
    "micro_batch_size": ("Micro-batch (sequences per GPU)", "integer"),
    "global_batch_tokens": ("Global batch (tokens per step)", "count"),
    "n_heads": ("Attention heads", "integer"),
    "n_kv_heads": ("Key/value heads (GQA)", "integer"),
    "ffn_hidden_size": ("FFN width", "integer"),
    "ffn_type": ("FFN kind (gated / plain)", TEXT),
    "vocab_size": ("Vocabulary", "integer"),
    "attention": ("Attention kernel (flash / eager)", TEXT),
    "fp8_activations": ("FP8 FFN activations", ""),
    "n_experts": ("MoE routed experts", "integer"),
    "experts_per_token": ("Experts per token (top-k)", "integer"),
    "n_shared_experts": ("MoE shared experts", "integer"),
    "virtual_pipeline_stages": ("Virtual pipeline stages", "integer"),
    "context_parallel": ("Context parallel (CP)", "integer"),
    "memory_reserve_gb": ("Framework memory reserve", "GB"),
    "gpu_memory_gb": ("GPU memory", "GB"),
    "unique_tokens": ("Unique training tokens", "count"),
    "mfu_measured": ("MFU measured from the team's runs", "fraction"),
    "mfu_measured_from": ("MFU measured over", TEXT),
    "precision": ("Linear-layer precision (bf16 / fp8)", TEXT),
    "hbm_tb_per_s": ("GPU memory bandwidth", "TB/s"),
    "nvlink_gb_per_s": ("NVLink bandwidth per GPU", "GB/s"),
    "network_gb_per_s": ("Network bandwidth per GPU", "GB/s"),
    "framework": ("Training framework (overlap)", TEXT),
    "hsdp": ("Hybrid sharding (HSDP)", ""),
    "nvlink_domain": ("NVLink domain", "integer"),
    "weight_dtype": ("Weight dtype", TEXT),
    "gradient_dtype": ("Gradient dtype", TEXT),
    "master_weights": ("FP32 master weights", ""),
    "optimizer_dtype": ("Optimizer state dtype", TEXT),
    "unsharded_gradient_accumulation": ("Unsharded gradient accumulation", ""),
    "cross_entropy": ("Cross-entropy kind (fused_fp32 / fp32 / bf16)", TEXT),
    "loss_parallel": ("Loss parallel over TP", ""),
    "embedding_parallel": ("Input embedding split over TP", ""),
}
for _item in UNCERTAIN_INPUTS:
    for _end in ("low", "high"):
        INPUT_STYLE[f"range_{_item.range_name}_{_end}"] = (f"{_item.label} range, {_end} end (× likely)", "×")

INPUTS: dict[str, Entry] = {
    key: Entry(key, *INPUT_STYLE[key], "", field.description or "") for key, field in Scenario.model_fields.items()
}
INPUTS["schema"] = replace(INPUTS["schema_"], name="schema")
INPUTS["programme"] = replace(INPUTS["programme"], render=programme.as_text)
OUTPUTS["programme"] = replace(OUTPUTS["programme"], unit=TEXT, render=programme.as_text)

# The Plan page's tiles and the comparison's headline rows, in order.
HEADLINE_OUTPUTS = (
    "cost_total_usd", "gpu_hours_total", "wall_clock_days", "cost_per_million_tokens", "predicted_loss",
    "storage_peak_gb", "overhead_fraction", "budget_status",
)


def _derived(name: str) -> Entry | None:
    """Entries spelled out from a pattern: a tornado bar's four numbers."""
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == "tornado" and parts[2] in TORNADO_ENDS:
        source = INPUTS.get(parts[1])
        if source is None:
            return None
        unit = source.unit if parts[2].startswith("input_") else "$"
        return Entry(name, f"{source.label}: {TORNADO_ENDS[parts[2]]}", unit,
                     "one-at-a-time swing of total cost over the input's range", "")
    return None


def entry(name: str) -> Entry:
    """The entry of an output, Monte Carlo figure or input by its (dotted) name; KeyError when there is none."""
    for table in (OUTPUTS, MONTE_CARLO, ANSWERS, INPUTS):
        if name in table:
            return table[name]
    found = _derived(name)
    if found is None:
        raise KeyError(f"no catalogue entry for {name!r}")
    return found


def label(name: str) -> str:
    return entry(name).label


def text(name: str, value: Any) -> str:
    """The display text of a named number: `text("cost_total_usd", 441_234.5)` is "$441k"."""
    return entry(name).text(value)


def exact(name: str, value: Any) -> str:
    return entry(name).exact(value)


def flatten(values: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted name, value) for every leaf of a nested result: `cost_breakdown.main_compute`, …"""
    for key, value in values.items():
        if isinstance(value, Mapping):
            yield from flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value
