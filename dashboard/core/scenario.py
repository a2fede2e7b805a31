"""The scenario file: one flat JSON object, its defaults (with sources) and its validation rules."""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from dashboard import settings
from dashboard.core import shape
from dashboard.core.hardware import CUSTOM, resolve_gpu_type
from dashboard.core.json_input import JSONLimitError, load_json
from dashboard.core.programme import STAGE_TYPES, Stage, size_error
from dashboard.core.references import LLAMA3_405B_FAILURES, TST_RUN
from dashboard.safe_text import preview

SCHEMA_VERSION: Literal[2] = 2  # 2: the programme of stages; a schema-1 file reads as one with no stages
MAX_STAGES = 20
DEFAULT_SCENARIO_JSON = Path(__file__).resolve().parents[2] / "data" / "scenarios" / "default.json"


LOW_BOUNDS = "Bounds: 0.01 to 1, so the likely value is inside and a draw stays above zero."
HIGH_BOUNDS = "Bounds: 1 to 100, so the likely value is inside."
RANGE_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}
# Strict types: what each refusal means for someone who wrote `true` for a count or `"yes"` for a switch.
STRICT_TYPE_ERRORS = {
    "int_type": "write a whole number such as 512",
    "float_type": "write a number such as 0.4",
    "bool_type": "write true or false",
    "string_type": "write text in quotes",
}
MAX_GPU_TYPE_CHARS = 60
MAX_REASON_CHARS = 300
MOE_AGREEMENT = 0.05  # active_params and the active count the MoE keys and shape give agree within 5 %


def _low(factor: float, source: str) -> Any:
    return Field(factor, ge=0.01, le=1, description=f"Low end, × the likely value. {source} {LOW_BOUNDS}")


def _high(factor: float, source: str) -> Any:
    return Field(factor, ge=1, le=100, description=f"High end, × the likely value. {source} {HIGH_BOUNDS}")


class ScenarioError(ValueError):
    """A scenario that cannot be used; the message is one line naming the key and what is allowed."""


class Scenario(BaseModel):
    """A pretraining plan. Every key carries its unit; every default says where it comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    schema_: Literal[2] = Field(
        SCHEMA_VERSION, alias="schema",
        description="Scenario file version: 2, or 1 (written before the programme; read as schema 2 with no stages).")
    name: str = Field("Default: 7B dense, 2T tokens on 512 H100", min_length=1, max_length=120,
                      description="Label. Bounds: 1-120 characters, the scenario store's name limit.")

    # Model and data
    total_params: float = Field(
        7e9, ge=1e6, le=1e14,
        description="Total parameters (Llama 2 7B size). Bounds: a million (the smallest language models) to "
        "1e14 (50× the largest published model).",
    )
    active_params: float | None = Field(
        None, ge=1e6, le=1e14,
        description="Parameters active per token (MoE); defaults to total_params. Bounds: as total_params.",
    )
    tokens: float = Field(
        2e12, ge=1e6, le=1e16,
        description="Training tokens (Llama 2: 2.0T). Bounds: a million to 1e16 (600× Llama 3's 15T).",
    )

    # Compute conventions
    attention_flops: bool = Field(False, description="Add 12·layers·d_model·seq_len FLOPs per token (PaLM App. B).")
    causal_attention_halving: bool = Field(True, description="Halve the attention term for causal masks.")
    n_layers: int | None = Field(
        None, ge=1, le=1000,
        description="Transformer layers (attention FLOPs, memory). Unset: from the size (published shapes, "
        "dashboard/core/shape.py). Bounds: 1 to 1,000 (5× the deepest published).",
    )
    d_model: int | None = Field(
        None, ge=1, le=1_000_000,
        description="Hidden size (attention FLOPs, memory). Unset: from the size. Bounds: 1 to a million (30× the "
        "widest published).",
    )
    seq_len: int = Field(
        4096, ge=1, le=10_000_000,
        description="Sequence length (for the attention term). Bounds: 1 to 10 million tokens of context.",
    )
    activation_recompute: Literal["none", "selective", "full"] = Field(
        "none",
        description="Activation recomputation (Korthikanti et al. 2022): full adds a forward pass, 8ND hardware "
        "FLOPs, and mfu is then read as HFU; selective recomputes attention only. true reads as full, false as none.",
    )

    # Hardware
    gpu_type: str = Field("H100", description="Catalogue name (data/hardware.csv) or 'custom'.")
    peak_tflops: float | None = Field(
        None, ge=1, le=100_000,
        description="Dense BF16 peak per GPU, TFLOP/s; overrides the catalogue. Bounds: 1 (a laptop GPU) to "
        "100,000 (40× a B200).",
    )
    gpu_count: int = Field(
        512, ge=1, le=10_000_000,
        description="GPUs in the main run. Bounds: 1 to 10 million (100× the largest cluster built).",
    )
    gpus_per_node: int = Field(
        8, ge=1, le=1024, description="GPUs per node (8 on HGX/DGX servers). Bounds: 1 to 1,024 (a whole rack)."
    )
    mfu: float | None = Field(
        None, ge=0.01, le=1,
        description="Model FLOPs utilisation (Llama 3 405B: 0.38-0.43). Unset: predicted from the layout by the "
        "step-time model (dashboard/core/step_time.py, docs/throughput-validation.md). Bounds: 1 % (below the "
        "worst published runs, ~6 %) to 100 % (the peak).",
    )
    precision: Literal["bf16", "fp8"] = Field(
        "bf16",
        description="Precision of the linear layers: bf16, or fp8 (the linears faster, up to the catalogue's FP8 "
        "peak; attention and the output layer in BF16, as DeepSeek-V3). MFU is counted against the dense BF16 peak "
        "either way.",
    )
    hbm_tb_per_s: float | None = Field(
        None, ge=0.01, le=1000,
        description="Memory bandwidth per GPU, TB/s (step time). Unset: the catalogue's. Bounds: 0.01 to 1,000 TB/s "
        "(100× a B200).",
    )
    nvlink_gb_per_s: float | None = Field(
        None, ge=0.1, le=100_000,
        description="GPU-to-GPU bandwidth within a node, GB/s per GPU and direction (H100 NVLink: 450). Unset: "
        "the catalogue's. Bounds: 0.1 to 100,000 GB/s.",
    )
    network_gb_per_s: float | None = Field(
        None, ge=0.1, le=100_000,
        description="Inter-node bandwidth per GPU, GB/s (400 Gb/s InfiniBand or RoCE per GPU: 50). Unset: the "
        "catalogue's. Bounds: 0.1 to 100,000 GB/s.",
    )
    # Step-time model: the framework's overlap, HSDP and the NVLink domain (issue 48)
    framework: Literal["other", "megatron", "nemo", "torchtitan", "fsdp", "deepspeed"] = Field(
        "other",
        description="Training framework, which sets how communication overlaps compute in the step time: megatron / "
        "nemo (Megatron-Core: overlapped grad reduce-scatter, param all-gather and TP communication), torchtitan / "
        "fsdp (FSDP2 / FSDP prefetch per layer), deepspeed or other (the 2021-22 Megatron-LM and DeepSpeed runs: "
        "a fitted share of the data-parallel traffic hidden, TP not overlapped).",
    )
    hsdp: bool = Field(
        False,
        description="Hybrid sharding (HSDP): with ZeRO-3 / FSDP, shard within the NVLink domain and replicate "
        "across it; the shard's gradients are all-reduced across the replicas once a step.",
    )
    nvlink_domain: int | None = Field(
        None, ge=1, le=100_000,
        description="GPUs one NVLink domain joins (8 on HGX, 72 on a GB200 NVL72 rack); TP, EP, CP and HSDP "
        "groups within it ride NVLink. Unset: the catalogue's, else gpus_per_node. Bounds: 1 to 100,000.",
    )
    # Memory recipe (issue 48): each unset part is the framework's default (dashboard/core/memory.py)
    weight_dtype: Literal["bf16", "fp16", "fp32", "fp8"] | None = Field(
        None, description="Dtype the weights are held in (fp8: FP8 weights, with or without a master copy). Unset: "
        "the framework's (bf16; fp32 sharded parameters for fsdp / torchtitan).",
    )
    gradient_dtype: Literal["fp32", "bf16", "fp16"] | None = Field(
        None, description="Dtype of the gradients kept for the optimizer. Unset: the framework's (fp32; bf16 for "
        "deepspeed).",
    )
    master_weights: bool | None = Field(
        None, description="Whether an fp32 master copy of the weights exists. Unset: the framework's (yes; no for "
        "fsdp / torchtitan, whose fp32 parameters are the master).",
    )
    optimizer_dtype: Literal["fp32", "bf16", "8bit"] | None = Field(
        None, description="Dtype of Adam's two moments (8-bit: bitsandbytes-style). Unset: fp32.",
    )
    unsharded_gradient_accumulation: bool = Field(
        False, description="Gradients accumulate unsharded across micro-batches and are reduce-scattered after the "
        "last (FSDP2 without gradient sync during accumulation, as KempnerForge): with ZeRO-2/3 and more than one "
        "micro-batch, the gradients take the unsharded size.",
    )
    # The loss's working set on the last stage (issue 48; dashboard/core/memory.py)
    cross_entropy: Literal["fused_fp32", "fp32", "bf16"] | None = Field(
        None, description="The loss's cross-entropy, which sets its working set: fused_fp32 (Megatron's vocab-parallel "
        "cross-entropy, one fp32 buffer computed in place: 4 bytes per logit), fp32 (PyTorch's cross_entropy on "
        "logits upcast to fp32: 12), bf16 (on bf16 logits: 8). Unset: the framework's (fused_fp32; fp32 for "
        "torchtitan / fsdp).",
    )
    loss_parallel: bool | None = Field(
        None, description="Whether tensor parallelism splits the vocabulary for the loss (Megatron's vocab-parallel "
        "cross-entropy, torchtitan's loss_parallel); without it every TP rank holds the whole logits. Unset: the "
        "framework's (yes; no for fsdp).",
    )
    embedding_parallel: bool = Field(
        True, description="Whether tensor parallelism splits the input embedding (Megatron's VocabParallelEmbedding, "
        "torchtitan's RowwiseParallel); without it every TP rank holds the whole matrix (KempnerForge).",
    )

    # Prices and purchase mix
    price_reserved_per_gpu_hour: float = Field(
        2.65, ge=0, le=1000,
        description="H100 1-yr contract index, Jun 2026 (SemiAnalysis, as quoted). Bounds: $0 (owned hardware) to "
        "$1,000 (100× any list price).",
    )
    price_on_demand_per_gpu_hour: float = Field(
        6.88, ge=0, le=1000,
        description="AWS p5.48xlarge on-demand after the 2025 cut, per GPU. Bounds: as the reserved price.",
    )
    price_spot_per_gpu_hour: float = Field(
        2.42, ge=0, le=1000,
        description="H100 spot index, late Jun 2026 (SemiAnalysis, as quoted). Bounds: as the reserved price.",
    )
    reserved_share: float = Field(
        0.8, ge=0, le=1, description="Share of GPU-hours on reserved capacity. Bounds: a share, 0 to 1."
    )
    spot_share: float = Field(0.0, ge=0, le=1, description="Share of GPU-hours on spot capacity. Bounds: 0 to 1.")

    # Failures and checkpoints
    node_failures_per_1000_node_days: float = Field(
        round(LLAMA3_405B_FAILURES.per_1000_node_days, 2), ge=0, le=10_000,
        description=f"{LLAMA3_405B_FAILURES.label}: {LLAMA3_405B_FAILURES.interruptions} unexpected interruptions / "
                    f"({LLAMA3_405B_FAILURES.days:g} d x {LLAMA3_405B_FAILURES.nodes:,} nodes). "
                    "Bounds: 0 to 10,000 (every node failing ten times a day, 2,600× Llama 3).",
    )
    spot_interruptions_per_1000_node_days: float = Field(
        3.3, ge=0, le=10_000,
        description="Assumed: AWS Spot Advisor band '5-10 %/month' -> 10 %/30 d. Bounds: 0 to 10,000 (every node "
        "reclaimed ten times a day).",
    )
    checkpoint_interval_min: float = Field(
        30.0, ge=1, le=100_000,
        description="Wall-clock between checkpoints. Bounds: 1 min (no run writes a full checkpoint faster) to "
        "100,000 min (70 days, longer than any run).",
    )
    checkpoint_write_gb_per_s: float = Field(
        10.0, ge=0.01, le=100_000,
        description="Aggregate write bandwidth. Bounds: 0.01 GB/s (one slow disk) to 100,000 GB/s (100 TB/s).",
    )
    checkpoint_write_s: float | None = Field(
        None, ge=0, le=1e6,
        description="Checkpoint stall per write, s; overrides size / bandwidth. Bounds: 0 to a million s (12 days).",
    )
    checkpoint_async: bool = Field(False, description="Asynchronous checkpointing: no training stall.")
    checkpoint_bytes_per_param: float = Field(
        14.0, ge=0.5, le=100,
        description="bf16 weights + fp32 master + Adam m, v (ZeRO, 2+4+4+4). Bounds: 0.5 (4-bit weights only) to "
        "100 (7× a full mixed-precision state).",
    )
    restart_min: float = Field(
        11.0, ge=0, le=100_000,
        description="Median retry time, 504-GPU B200 study. Bounds: 0 to 100,000 min, as the checkpoint interval.",
    )

    # Storage
    keep_last_checkpoints: int = Field(
        3, ge=1, le=100_000,
        description="Checkpoints kept on the hot tier. Bounds: 1 (the one to restart from) to 100,000.",
    )
    archive_every_nth: int = Field(
        0, ge=0, le=100_000,
        description="Also copy every n-th full checkpoint (weights and optimizer state) to cold; 0 = never, the "
        "default: a restart needs only the hot tier's last checkpoints (Pythia keeps its full checkpoints apart, "
        "for research on optimizer states). Bounds: 0 to 100,000.",
    )
    weight_archives: int = Field(
        10, ge=0, le=100_000,
        description="Weight-only snapshots archived to cold over the run, evenly spaced, the last the final model; "
        "0 = none. Assumed 10 (one every tenth of the run): between Llama 3 and DeepSeek-V3, which publish the "
        "final weights only, and research suites (Pythia: 154 checkpoints, OLMo: one every 1,000 steps). "
        "Bounds: 0 to 100,000.",
    )
    weight_archive_bytes_per_param: float = Field(
        2.0, ge=0.5, le=100,
        description="Bytes per parameter of a weight snapshot: bf16 weights, without the fp32 master copy and "
        "Adam moments (ZeRO's 2 of 16 bytes). Bounds: 0.5 (4-bit weights) to 100.",
    )
    storage_hot_per_gb_month: float = Field(
        0.14, ge=0, le=100,
        description="AWS FSx for Lustre Scratch 2. Bounds: $0 to $100 per GB-month (700× FSx).",
    )
    storage_cold_per_gb_month: float = Field(
        0.023, ge=0, le=100, description="AWS S3 Standard, first 50 TB. Bounds: $0 to $100 per GB-month."
    )
    dataset_bytes_per_token: float = Field(
        4.0, ge=0, le=1000,
        description="Assumed: ~4 bytes of text per token. Bounds: 0 (the corpus is stored elsewhere) to 1,000 "
        "(images, audio).",
    )
    dataset_versions: int = Field(
        2, ge=1, le=1000, description="Copies of the corpus kept (raw + tokenised). Bounds: 1 to 1,000."
    )
    logs_gb_per_day: float = Field(
        5.0, ge=0, le=1e6, description="Assumed: metrics, logs and traces per day. Bounds: 0 to 1 PB a day."
    )

    # The research programme around the main run (`dashboard.core.programme`)
    programme: tuple[Stage, ...] = Field(
        (),
        description="Stages priced with the main run: data_preparation, scaling_ladder, ablations, mid_training, "
        "long_context, evaluation (docs/formats.md lists each stage's keys). Empty: the single run, with "
        f"experiment_overhead for the rest. Bounds: at most {MAX_STAGES} stages, and "
        f"{settings.PROGRAMME_MAX_RUNS} priced runs (a ladder's rungs, one a training stage; 200 by default).",
    )
    start_date: str | None = Field(
        None, pattern=r"^\d{4}-\d{2}-\d{2}$",
        description="First day of the programme, YYYY-MM-DD, for its calendar end date. Unset: days from the start.",
    )

    # Other line items
    experiment_overhead: float = Field(
        1.0, ge=0, le=100,
        description="Other experiments: ablations and failed runs not planned as programme stages, as a multiple "
        "of the main run (seeds: 'often several x'). Bounds: 0 to 100 main runs.",
    )
    eval_overhead: float = Field(
        0.05, ge=0, le=100,
        description="Assumed: evaluation as a fraction of the main run. Bounds: 0 to 100 main runs.",
    )
    debug_overhead: float = Field(
        0.05, ge=0, le=100,
        description="Assumed: debugging as a fraction of the main run. Bounds: 0 to 100 main runs.",
    )
    data_cost_per_billion_tokens: float = Field(
        2.0, ge=0, le=1e6,
        description="Assumed: cleaning, dedup and tokenising, $ per billion raw tokens. Bounds: $0 to $1 million "
        "(hand-labelled data).",
    )
    egress_gb: float = Field(
        0.0, ge=0, le=1e9, description="Data moved out of the cloud, GB. Bounds: 0 to an exabyte."
    )
    egress_per_gb: float = Field(
        0.09, ge=0, le=100, description="AWS internet egress, first 10 TB. Bounds: $0 to $100 per GB."
    )
    people_cost_usd: float = Field(
        0.0, ge=0, le=1e12, description="Optional staff cost for the project. Bounds: $0 to $1 trillion."
    )
    budget_usd: float = Field(
        500_000.0, ge=1, le=1e13,
        description="Budget line for the whole project. Bounds: $1 to $10 trillion (a tenth of world GDP).",
    )
    budget_warning_fraction: float = Field(
        0.9, ge=0.01, le=1,
        description="Warn when cost passes this share. Bounds: 1 % to 100 % of the budget.",
    )

    # Scaling law and training method
    scaling_fit: Literal["epoch2024", "hoffmann2022"] = Field(
        "epoch2024", description="Chinchilla loss fit: Besiroglu et al. 2024 refit (default) or Hoffmann et al. 2022."
    )
    method: Literal["baseline", "tst"] = Field("baseline", description="Training method of the main run.")
    tst_speedup: float = Field(
        TST_RUN.speedup, ge=1, le=100,
        description=f"GPU-hour ratio to matched loss: {TST_RUN.baseline_gpu_hours:,.0f} / {TST_RUN.tst_gpu_hours:,.0f} "
                    f"{TST_RUN.gpu_type}-h ({TST_RUN.source}). Bounds: 1 (no gain; a slowdown is not this "
                    "method) to 100.",
    )
    tst_token_multiplier: float = Field(
        TST_RUN.token_multiplier, ge=1, le=100,
        description=f"Raw tokens read by TST over baseline: {TST_RUN.tst_tokens / 1e12:g}T / "
                    f"{TST_RUN.baseline_tokens / 1e12:g}T ({TST_RUN.source}). Bounds: 1 to 100.",
    )
    tst_pilot_fraction: float = Field(
        0.05, ge=0, le=10,
        description="Assumed: pilot validation as a fraction of the baseline run's cost. Bounds: 0 to 10 runs.",
    )
    tst_switching_cost_usd: float = Field(
        20_000.0, ge=0, le=1e12, description="Assumed: one-off engineering cost. Bounds: $0 to $1 trillion."
    )

    # Uncertainty (Monte Carlo, `dashboard.core.uncertainty`): each range's ends are multiples of the value above,
    # which is the likely value. Low ends are at most 1 and high ends at least 1, so the likely value is inside.
    range_shape: Literal["triangular", "lognormal"] = Field(
        "triangular",
        description="triangular(low, likely, high), or log-normal with low and high as its 5th and 95th percentiles.",
    )
    range_mfu_low: float = _low(0.65, "PaLM: ≈30 % whole-run MFU against 46.2 % steady state.")
    range_mfu_high: float = _high(1.1, "Llama 3 405B: 38-43 % steady-state MFU.")
    range_price_reserved_low: float = _low(0.64, "H100 1-yr index: $1.70 (Oct 2025) against $2.65 (Jun 2026).")
    range_price_reserved_high: float = _high(1.25, "Assumed: contract prices rose 56 % in the 8 months to Jun 2026.")
    range_price_on_demand_low: float = _low(0.55, "AWS P5 on-demand cut 'up to 45 %' (Jun 2025).")
    range_price_on_demand_high: float = _high(1.1, "Assumed: list prices have only fallen since 2023.")
    range_price_spot_low: float = _low(0.67, "GCP H100 spot: $4.42 (Mar 2025) to ~$6.57 (2026), a 1.49× move.")
    range_price_spot_high: float = _high(1.49, "GCP H100 spot: $4.42 (Mar 2025) to ~$6.57 (2026), a 1.49× move.")
    range_node_failures_low: float = _low(0.62, "Meta RSC-2: 2.34 failures per 1,000 node-days against 3.79.")
    range_node_failures_high: float = _high(1.72, "Meta RSC-1: 6.50 failures per 1,000 node-days against 3.79.")
    range_spot_interruptions_low: float = _low(0.5, "AWS Spot Advisor band '<5 %' a month against 10 %.")
    range_spot_interruptions_high: float = _high(2.0, "AWS Spot Advisor band '15-20 %' a month against 10 %.")
    range_tokens_low: float = _low(0.9, "Assumed: the run stops 10 % early.")
    range_tokens_high: float = _high(1.2, "Assumed: the run is extended by 20 %.")
    range_experiments_low: float = _low(0.5, "Assumed: half the planned ablations.")
    range_experiments_high: float = _high(2.0, "Seeds: experiments often cost 'several ×' the plan.")
    range_tst_speedup_low: float = _low(0.6, "Assumed: one published 10B-A1B result; not proven at scale (≥ 1×).")
    range_tst_speedup_high: float = _high(1.1, "Assumed: a small gain over the published 2.58×.")

    @field_validator("schema_", mode="before")
    @classmethod
    def _schema_is_a_number(cls, value: Any) -> Any:
        if isinstance(value, bool):  # True == 1 in Python, so the literal alone would take it
            raise ValueError(f"must be the number 1 or {SCHEMA_VERSION}, not true/false")
        return value

    # Storage after training: what the run leaves behind is billed for the project's life, not only the run.
    storage_retention_months: float = Field(
        12.0, ge=0, le=1200,
        description="Assumed: the last checkpoints, archives, datasets and logs are kept a year after training "
        "(follow-up runs, evaluation, audits), on the cold tier. Bounds: 0 (storage billed for the run only) to "
        "1,200 months (a century).",
    )

    # Can the plan run (`dashboard.core.feasibility`): parallel layout, batch, GPU memory and unique data.
    # A layout key left unset is proposed by the planner (`dashboard.core.layout`).
    tensor_parallel: int | None = Field(
        None, ge=1, le=1024,
        description="TP degree; within a node. Unset: proposed. Bounds: 1 to 1,024 (the largest node allowed).",
    )
    pipeline_parallel: int | None = Field(
        None, ge=1, le=1024,
        description="PP stages. Unset: proposed. Bounds: 1 to 1,024 (MT-NLG 530B ran 35 stages).",
    )
    expert_parallel: int = Field(
        1, ge=1, le=4096,
        description="EP degree for MoE experts; divides data parallel. Bounds: 1 to 4,096 (DeepSeek-V3 used 64).",
    )
    zero_stage: int | None = Field(
        None, ge=0, le=3,
        description="ZeRO stage 0-3 (FSDP full sharding is 3; arXiv 1910.02054). Unset: proposed. Bounds: the "
        "four stages the paper defines."
    )
    micro_batch_size: int = Field(
        1, ge=1, le=100_000,
        description="Sequences per micro-batch per GPU. Bounds: 1 to 100,000 sequences.",
    )
    global_batch_tokens: float | None = Field(
        None, ge=1e3, le=1e12,
        description="Tokens per optimizer step. Unset: DeepSeek LLM's B_opt = 0.292·C^0.3271. Bounds: a thousand "
        "tokens (under one sequence) to a trillion (25,000× Llama 3's 16M)."
    )
    n_heads: int | None = Field(
        None, ge=1, le=100_000,
        description="Attention heads. Unset: d_model / 128 when d_model is set, else from the size. Bounds: 1 to "
        "100,000 (GPT-3 has 96).",
    )
    n_kv_heads: int | None = Field(
        None, ge=1, le=100_000,
        description="Key/value heads (grouped-query attention; Llama 3 405B: 8). Unset: n_heads, or from the size "
        "with the heads. Bounds: 1 to 100,000, at most n_heads and dividing it.",
    )
    ffn_hidden_size: int | None = Field(
        None, ge=1, le=10_000_000,
        description="FFN inner width (per expert for MoE; Llama 3 405B: 53,248). Unset: from the size, 8/3·d_model "
        "gated or 4·d_model plain when d_model is set, or what the MoE split gives. Bounds: 1 to 10 million.",
    )
    ffn_type: Literal["gated", "plain"] | None = Field(
        None,
        description="FFN kind: gated (SwiGLU, 3 matrices, as Llama) or plain (GeLU/ReLU, 2 matrices, as GPT-3). "
        "Unset: from the size.",
    )
    vocab_size: int | None = Field(
        None, ge=1, le=10_000_000,
        description="Vocabulary (embedding and output matrices; the logits on the last stage). Unset: from the "
        "size. Bounds: 1 to 10 million tokens.",
    )
    attention: Literal["flash", "eager"] = Field(
        "flash",
        description="flash: fused attention, no s×s scores kept (FlashAttention); eager: scores, softmax and "
        "dropout kept (Korthikanti et al. 2022's 5·a·s/h term).",
    )
    fp8_activations: bool = Field(
        False,
        description="Keep the FFN's (and MoE experts') saved activations in FP8, one byte instead of two "
        "(DeepSeek-V3, arXiv 2412.19437 §3.3.2).",
    )
    n_experts: int | None = Field(
        None, ge=1, le=100_000,
        description="MoE routed experts (DeepSeek-V3: 256). Unset: dense, or experts = total − active. Bounds: 1 to "
        "100,000.",
    )
    experts_per_token: int | None = Field(
        None, ge=1, le=100_000,
        description="Routed experts each token uses (top-k; DeepSeek-V3: 8). Needed with n_experts. Bounds: 1 to "
        "n_experts.",
    )
    n_shared_experts: int = Field(
        0, ge=0, le=1000,
        description="MoE experts every token uses (DeepSeek-V3: 1). Bounds: 0 to 1,000.",
    )
    virtual_pipeline_stages: int = Field(
        1, ge=1, le=64,
        description="Virtual stages per GPU of the interleaved 1F1B schedule: the bubble divided by it "
        "(Narayanan et al. 2021). Bounds: 1 (plain 1F1B) to 64.",
    )
    context_parallel: int = Field(
        1, ge=1, le=1024,
        description="CP degree: a sequence's activations split over CP GPUs; data parallel = GPUs / (TP·PP·CP) "
        "(Llama 3: 16 at 131K context). Bounds: 1 to 1,024.",
    )
    memory_reserve_gb: float | None = Field(
        None, ge=0, le=100_000,
        description="Memory the framework takes beyond tensors, GB. Unset: 1 GB CUDA context + 1 GB NCCL buffers "
        "+ 5 % of the GPU's memory for allocator fragmentation. Bounds: 0 to 100 TB.",
    )
    gpu_memory_gb: float | None = Field(
        None, ge=1, le=100_000,
        description="Memory per GPU, GB; overrides the catalogue (data/hardware.csv). Bounds: 1 GB to 100 TB."
    )
    unique_tokens: float | None = Field(
        None, ge=1e6, le=1e16,
        description="Unique training tokens available. Unset: unlimited (no repeats). Bounds: a million to 10^16, "
        "as for tokens."
    )
    # Where the MFU came from (issue 50; docs/calibration.md): the team's measured MFU travels with the plan, so
    # Compare, the report and `estimate --json` grade it "measured" while `mfu` still holds it (`mfu_is_measured`).
    mfu_measured: float | None = Field(
        None, ge=0.01, le=1,
        description="The MFU the team measured from its own runs (`calibrate`, the Retrospective). While mfu holds "
        "this value the plan's MFU is graded 'measured'; another mfu is 'entered'. Unset: none measured. Bounds: "
        "as for mfu.",
    )
    mfu_measured_from: str | None = Field(
        None, min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$",
        description="What mfu_measured was measured over ('16 jobs of project pretrain-13b, 2025-04-01 to "
        "2025-06-30'), shown as text. Needs mfu_measured. Bounds: 1-200 characters, no control characters.",
    )

    @field_validator("programme", mode="before")
    @classmethod
    def _stages_as_tuple(cls, value: Any) -> Any:
        if isinstance(value, list):  # JSON gives a list; the scenario keeps a tuple (it is hashed)
            value = tuple(value)
        if isinstance(value, tuple) and len(value) > MAX_STAGES:
            raise ValueError(f"{len(value)} stages: at most {MAX_STAGES}")
        return value

    @field_validator("programme")
    @classmethod
    def _priced_within_bound(cls, value: tuple[Any, ...]) -> tuple[Any, ...]:
        error = size_error(value, settings.limit(settings.PROGRAMME_MAX_RUNS), settings.PROGRAMME_MAX_RUNS)
        if error:
            raise ValueError(error)
        return value

    @field_validator("start_date")
    @classmethod
    def _real_date(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                datetime.date.fromisoformat(value)
            except ValueError:
                raise ValueError("not a calendar date: write YYYY-MM-DD, such as 2027-01-04") from None
        return value

    @model_validator(mode="before")
    @classmethod
    def _schema_1_reads_as_2(cls, data: Any) -> Any:
        """A schema-1 file is the same plan at schema 2: the single run, no stages (`experiment_overhead` stays
        the "other experiments" stage it always was)."""
        if isinstance(data, dict) and type(data.get("schema")) is int and data["schema"] == 1:
            if "programme" in data or "start_date" in data:
                raise ValueError("programme and start_date need \"schema\": 2 (a schema-1 file has no stages)")
            return {**data, "schema": SCHEMA_VERSION}
        return data

    @field_validator("activation_recompute", mode="before")
    @classmethod
    def _recompute_from_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return "full" if value else "none"
        return value

    @model_validator(mode="after")
    def _layout_divides(self) -> Scenario:
        tp, pp, cp = self.tensor_parallel or 1, self.pipeline_parallel or 1, self.context_parallel
        if self.tensor_parallel is not None and tp > self.gpus_per_node:
            raise ValueError(
                f"tensor_parallel = {tp} exceeds gpus_per_node = {self.gpus_per_node}: tensor parallelism stays "
                "within a node"
            )
        if self.gpu_count % (tp * pp * cp):
            named = "tensor_parallel × pipeline_parallel" + (" × context_parallel" if cp > 1 else "")
            raise ValueError(f"{named} = {tp * pp * cp} does not divide gpu_count = {self.gpu_count}")
        if self.virtual_pipeline_stages > 1 and self.pipeline_parallel == 1:
            raise ValueError(f"virtual_pipeline_stages = {self.virtual_pipeline_stages} needs pipeline_parallel of 2 "
                             "or more (the virtual stages interleave a pipeline)")
        if self.context_parallel > self.seq_len:
            raise ValueError(f"context_parallel = {cp} exceeds seq_len = {self.seq_len}: each GPU holds at least "
                             "one token of a sequence")
        data_parallel = self.gpu_count // (tp * pp * cp)
        layout_given = self.tensor_parallel is not None and self.pipeline_parallel is not None
        if self.expert_parallel > data_parallel or (layout_given and data_parallel % self.expert_parallel):
            raise ValueError(
                f"expert_parallel = {self.expert_parallel} does not divide the data-parallel size {data_parallel}"
            )
        return self

    @field_validator("gpu_type")
    @classmethod
    def _known_gpu(cls, value: str) -> str:
        if len(value) > MAX_GPU_TYPE_CHARS:
            raise ValueError("no catalogue name is that long: use a name from data/hardware.csv, or 'custom'")
        return resolve_gpu_type(value)

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        if self.reserved_share + self.spot_share > 1 + 1e-9:
            raise ValueError(
                f"reserved_share + spot_share = {self.reserved_share + self.spot_share:g} exceeds 1 "
                "(the on-demand share is what is left)"
            )
        if self.active_params is not None and self.active_params > self.total_params:
            raise ValueError(f"active_params = {self.active_params:g} exceeds total_params = {self.total_params:g}")
        if self.gpu_type == CUSTOM and self.peak_tflops is None:
            raise ValueError("gpu_type 'custom' needs peak_tflops (dense BF16 TFLOP/s per GPU)")
        links = (self.hbm_tb_per_s, self.nvlink_gb_per_s, self.network_gb_per_s)
        if self.gpu_type == CUSTOM and self.mfu is None and None in links:
            raise ValueError("gpu_type 'custom' needs mfu, or hbm_tb_per_s, nvlink_gb_per_s and network_gb_per_s "
                             "for the step-time model to predict it")
        if self.n_heads is not None and self.n_kv_heads is not None and self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_kv_heads = {self.n_kv_heads} does not divide n_heads = {self.n_heads} (each K/V "
                             "head serves a whole group of query heads)")
        return self

    @model_validator(mode="after")
    def _experts_agree(self) -> Scenario:
        n, k = self.n_experts, self.experts_per_token
        if (n is None) != (k is None):
            raise ValueError("n_experts and experts_per_token go together: set both (routed experts, and how many "
                             "of them each token uses) or neither")
        if n is None or k is None:
            return self
        if k > n:
            raise ValueError(f"experts_per_token = {k} exceeds n_experts = {n}")
        if self.active_params is None or self.ffn_hidden_size is not None:
            derived = self._active_from_shape()
            if derived <= 0:
                raise ValueError(f"{n} experts of FFN width {self._shape().ffn_hidden_size:,} hold more than "
                                 f"total_params = {self.total_params:g}: set active_params or a smaller "
                                 "ffn_hidden_size")
            if self.active_params is not None and abs(derived / self.active_params - 1.0) > MOE_AGREEMENT:
                model = self._shape()
                raise ValueError(
                    f"active_params = {self.active_params:.3g} disagrees with the {derived:.3g} active parameters "
                    f"that {n} experts (top-{k}) of FFN width {model.ffn_hidden_size:,} over {model.n_layers} layers "
                    f"of {model.d_model:,} leave of total_params = {self.total_params:.3g}: correct one of them, or "
                    "leave active_params or ffn_hidden_size unset")
        return self

    def _shape(self) -> Any:
        given = {key: getattr(self, key) for key in shape.SHAPE_KEYS}
        return shape.shape_of(self.total_params, self.total_params, given)

    def _active_from_shape(self) -> float:
        assert self.n_experts is not None and self.experts_per_token is not None
        return shape.active_from_shape(self.total_params, self._shape(), self.n_experts, self.experts_per_token)

    @property
    def active(self) -> float:
        """Active parameters: `active_params`, else what the MoE keys and the shape give, else total_params."""
        if self.active_params is not None:
            return self.active_params
        if self.n_experts is not None and self.experts_per_token is not None:
            return self._active_from_shape()
        return self.total_params

    @model_validator(mode="after")
    def _measured_from_needs_a_value(self) -> Scenario:
        if self.mfu_measured_from is not None and self.mfu_measured is None:
            raise ValueError("mfu_measured_from needs mfu_measured (the MFU it describes)")
        return self

    @property
    def mfu_is_measured(self) -> bool:
        """Whether the plan's MFU is the team's measured one: `mfu` holds `mfu_measured`."""
        return self.mfu is not None and self.mfu_measured is not None and self.mfu == self.mfu_measured

    def to_json_dict(self) -> dict[str, Any]:
        """The scenario as the JSON object the file format defines, always at the current schema (a schema-1 file
        is written back as schema 2 with no stages: the same plan)."""
        data = self.model_dump(by_alias=True)
        data["programme"] = [stage.model_dump() for stage in self.programme]
        return data


# Keys whose value is text (name, gpu_type, the choices): `--set name=2024` and `?name=2024` keep the text.
TEXT_KEYS = frozenset(
    key for key, field in Scenario.model_fields.items()
    if field.annotation is str or all(isinstance(arg, str) for arg in get_args(field.annotation) or (0,))
) | {"mfu_measured_from"}


def _describe_limits(key: str, model: type[BaseModel] | None = None) -> str:
    field = (model or Scenario).model_fields.get(key)
    if field is None:
        return ""
    bounds = []
    for meta in field.metadata:
        for attr, symbol in (("gt", ">"), ("ge", "≥"), ("lt", "<"), ("le", "≤")):
            if getattr(meta, attr, None) is not None:
                bounds.append(f"{symbol} {getattr(meta, attr):g}")
    return f" (allowed: {' and '.join(bounds)})" if bounds else ""


def budget_bounds() -> tuple[float, float]:
    """The allowed budget_usd range (for `optimal --budget-usd`, which sizes a plan for a budget)."""
    metadata = Scenario.model_fields["budget_usd"].metadata
    low = next(meta.ge for meta in metadata if getattr(meta, "ge", None) is not None)
    high = next(meta.le for meta in metadata if getattr(meta, "le", None) is not None)
    return float(low), float(high)


def _quoted(value: Any) -> str:
    """A bad value for a message: its JSON-like repr, cut to a short prefix."""
    return preview(repr(value))


def _message(first: Mapping[str, Any]) -> str:
    loc = [str(part) for part in first["loc"]]
    key = "schema" if loc[:1] == ["schema_"] else ".".join(loc)
    limits = _describe_limits(key)
    if loc[:1] == ["programme"] and len(loc) >= 4 and loc[2] in STAGE_TYPES:  # programme.0.scaling_ladder.runs
        key = f"programme stage {int(loc[1]) + 1} ({loc[2]}) {'.'.join(loc[3:])}"
        limits = _describe_limits(loc[3], STAGE_TYPES[loc[2]])
    if first["type"] == "extra_forbidden":
        return f"unknown key {_quoted(key)}: see the scenario key table in docs/formats.md for the allowed keys"
    if not key:
        return first["msg"].removeprefix("Value error, ")
    value = _quoted(first.get("input"))
    if key == "schema":
        return f"schema = {value}: this planner reads scenario files with \"schema\": 1 or {SCHEMA_VERSION}"
    if first["type"] in RANGE_ERRORS:
        return f"{key} = {value} is out of range{limits}"
    reason = preview(first["msg"].removeprefix("Value error, "), MAX_REASON_CHARS)
    if first["type"] in STRICT_TYPE_ERRORS:
        reason = f"{reason} ({STRICT_TYPE_ERRORS[first['type']]})"
    return f"{key} = {value}: {reason}{limits}"


def scenario_from_dict(data: Any, *, strict: bool = True) -> Scenario:
    """Validate a decoded JSON object into a Scenario, or raise ScenarioError with a one-line message.

    Strict (the default, for files, links and `--set`): `true` is not a GPU count, `1` or `"yes"` not a
    boolean. The Plan page's own widgets pass ``strict=False`` (a slider gives 512.0 for a count).
    """
    if not isinstance(data, dict):
        raise ScenarioError("a scenario must be a JSON object of key: value pairs")
    for key, value in data.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ScenarioError(f"{preview(key)} = {value!r}: must be a finite number")
    try:
        return Scenario.model_validate(data, strict=strict)
    except ValidationError as error:
        raise ScenarioError(_message(error.errors()[0])) from None


def field_errors(data: dict[str, Any]) -> dict[str, str]:
    """Keys whose own value is invalid (unknown keys included), each with its one-line message (strict types).

    Rules that tie several keys together (shares summing to at most 1, active ≤ total) are not listed here;
    `scenario_from_dict` reports those.
    """
    try:
        Scenario.model_validate(data, strict=True)
    except ValidationError as error:
        return {str(e["loc"][0]): _message(e) for e in error.errors() if e["loc"]}
    return {}


def decode_json(text: str | bytes) -> Any:
    """JSON text from a user, within the limits of `dashboard.core.json_input`; ScenarioError otherwise."""
    try:
        return load_json(text)
    except JSONLimitError as error:
        raise ScenarioError(str(error)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ScenarioError(f"not valid JSON: {error}") from None


def scenario_from_json(text: str | bytes) -> Scenario:
    """Parse and validate scenario JSON text (bounded size and depth, strict types, no duplicate keys)."""
    return scenario_from_dict(decode_json(text))


@cache
def default_scenario() -> Scenario:
    """The bundled default scenario (data/scenarios/default.json), read once; scenarios are immutable."""
    return scenario_from_json(DEFAULT_SCENARIO_JSON.read_text(encoding="utf-8"))


def parse_assignment(text: str) -> tuple[str, Any]:
    """Turn a CLI `KEY=VALUE` into a key and a JSON value (numbers, true/false, null), else a string."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ScenarioError(f"--set expects KEY=VALUE, got {preview(repr(text))}")
    try:
        value = load_json(raw)
    except JSONLimitError as error:
        raise ScenarioError(f"--set {preview(key)}: {error}") from None
    except json.JSONDecodeError:
        return key, raw
    return key, raw if key in TEXT_KEYS and not isinstance(value, str) else value


def with_overrides(scenario: Scenario, assignments: list[str]) -> Scenario:
    """A new validated scenario with `KEY=VALUE` assignments applied; a key set twice is refused."""
    data = scenario.to_json_dict()
    seen: set[str] = set()
    for item in assignments:
        key, value = parse_assignment(item)
        if key in seen:
            raise ScenarioError(f"--set {preview(key)} is given twice: keep one of them")
        seen.add(key)
        data[key] = value
    return scenario_from_dict(data)
