"""The Weights & Biases runs-table CSV export: one used row per run that ran on GPUs.

Rules:
- run_state: finished → COMPLETED, failed/crashed → FAILED, killed → CANCELLED, running → RUNNING,
  preempted → PREEMPTED (the vocabulary the Slurm reader uses). Pending runs are excluded as
  "wandb run never started"; an unknown state rejects the row.
- GPU count: ``options.mapping["gpu_count"]`` when given, else the first column (in the order of
  GPU_COUNT_COLUMNS, matched case-insensitively on the whole name or its last ``.``/``/`` segment) that has a
  value on the row. A Lightning-style ``devices`` count is multiplied by a ``num_nodes`` column when present,
  and a device list ``[0,1,2,3]`` counts its entries. A file with none of these columns and no mapping is
  unreadable; a row where none has a value is rejected, naming the candidate columns. Runs with 0 GPUs
  are excluded as "wandb run used no GPUs".
- Runtime (seconds; ``_runtime`` as fallback; ``HH:MM:SS`` accepted) gives gpu_hours = Runtime / 3600 × GPUs;
  an empty runtime rejects the row. period_start = Created (UTC), period_end = Created + Runtime.
- team = a ``team:``/``team=`` tag, else an ``Entity`` column, else ``User``; project = a ``project:`` tag,
  else ``Group``; run_id = ``ID``, else ``Name``; resource_id = the Slurm job id the run logged (a
  ``slurm_job_id``-like column) so runs join sacct jobs, else the run id. Any of gpu_count, gpu_type, team,
  project, run_id and tokens can be overridden through ``options.mapping`` (field → column).
- tokens: the first tokens-like column with a value (``tokens``, ``tokens_seen``, ``train/tokens``,
  ``num_tokens`` …, not rates like ``tokens_per_second``); unreadable values become NaN with a warning.
- W&B carries no prices: cost = billed_cost = 0.0, currency and pricing NA.
- model size (``ImportReport.model_params``, by source row; not a canonical column): the first of
  ``PARAMS_COLUMNS`` (whole name or leaf: ``n_params``, ``num_params``, ``model.n_params``, ``params`` …) with a
  value on the row, a count such as ``13000000000``, ``1.3e10`` or ``13B``; else from the shape, 12 · layers ·
  hidden size² (+ vocabulary × hidden size where logged: ``SHAPE_COLUMNS``). A value outside 1 to ``MAX_PARAMS``
  is left out with a warning.
- layout (``ImportReport.run_layout``, by source row; not canonical columns): TP, PP and micro-batch where the run
  logs them (``LAYOUT_COLUMNS``: ``tensor_model_parallel_size``, ``pipeline_model_parallel_size``,
  ``micro_batch_size`` … as whole names or leaves), whole numbers from 1 to ``MAX_LAYOUT``; the step-time model's
  efficiency is refitted on them (docs/calibration.md).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from dashboard.ingest.engine import find_column, mapped_columns
from dashboard.ingest.gpus import gpu_type_label
from dashboard.ingest.plausible import duration_s
from dashboard.ingest.rows import Rows, cannot_read, text_column
from dashboard.ingest.run_states import normalise_run_state
from dashboard.ingest.schema import ReadOptions, UnreadableFile
from dashboard.ingest.spec import Fingerprint, Format
from dashboard.ingest.values import parse_datetime, parse_duration_s, parse_number
from dashboard.ingest.wording import count_text

NOT_STARTED_RULE = "wandb run never started"
NO_GPU_RULE = "wandb run used no GPUs"
PRICE_WARNING = (
    "W&B exports carry no prices: costs are set to 0 and the retrospective prices these GPU-hours from "
    "the plan."
)

GPU_COUNT_COLUMNS: tuple[str, ...] = (
    "num_gpus", "n_gpus", "gpu_count", "ngpus", "num_gpu", "gpus", "total_gpus", "world_size", "devices",
)
GPU_TYPE_COLUMNS: tuple[str, ...] = ("gpu_type", "gpu_model", "gpu_name", "gpu")
SLURM_JOB_COLUMNS: tuple[str, ...] = ("slurm_job_id", "slurm_jobid", "job_id")
MAPPABLE: tuple[str, ...] = ("gpu_count", "gpu_type", "team", "project", "run_id", "tokens")

PARAMS_COLUMNS: tuple[str, ...] = (
    "n_params", "num_params", "model_params", "num_parameters", "n_parameters", "total_params", "param_count",
    "parameters", "params",
)
SHAPE_COLUMNS: dict[str, tuple[str, ...]] = {
    "layers": ("n_layers", "num_layers", "num_hidden_layers", "n_layer"),
    "hidden": ("d_model", "hidden_size", "n_embd", "hidden_dim"),
    "vocab": ("vocab_size", "padded_vocab_size", "n_vocab"),
}
MAX_PARAMS = 1e15  # ten thousand times the largest dense model trained
# The layout a run logs in its config (Megatron-LM's, DeepSpeed's and generic argument names; whole name or leaf).
LAYOUT_COLUMNS: dict[str, tuple[str, ...]] = {
    "tensor_parallel": ("tensor_model_parallel_size", "tensor_parallel_size", "tensor_parallel", "tp_size"),
    "pipeline_parallel": ("pipeline_model_parallel_size", "pipeline_parallel_size", "pipeline_parallel", "pp_size"),
    "micro_batch_size": ("micro_batch_size", "train_micro_batch_size_per_gpu", "micro_batch"),
}
MAX_LAYOUT = 100_000  # a degree or micro-batch beyond this is not a layout
_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
_SUFFIXED = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmbt])\s*$", re.IGNORECASE)

_TOKENS = re.compile(
    r"^(?:n_|num_|total_|consumed_|cumulative_)?tokens(?:_seen|_consumed|_processed|_trained|_total)?$"
)
_WANDB_STATES = {"FINISHED", "FAILED", "CRASHED", "KILLED", "RUNNING", "PENDING", "PREEMPTED"}


def _leaf(column: str) -> str:
    """The last ``.``/``/`` segment of a flattened config or summary key, lower-cased."""
    return re.split(r"[./]", str(column))[-1].strip().lower()


def _candidates(table: pd.DataFrame, names: tuple[str, ...]) -> list[str]:
    """Columns whose whole name or leaf is one of ``names``, ordered by ``names`` then by file order."""
    found: list[str] = []
    for name in names:
        found += [c for c in table.columns if c not in found and name in (str(c).lower(), _leaf(c))]
    return found


def _tag(tags: pd.Series, key: str) -> pd.Series:
    """The value of a ``key:value`` / ``key=value`` entry in W&B's comma-separated tag list (NA if none)."""
    pattern = rf"(?:^|[,\[])\s*[\"']?{key}\s*[:=]\s*([^,\"'\]]+)"
    return tags.str.extract(pattern, flags=re.IGNORECASE, expand=False).str.strip().astype("string")


def _first_present(table: pd.DataFrame, names: tuple[str, ...]) -> pd.Series:
    """Per row, the first non-empty value among the candidate columns."""
    values = pd.Series(pd.NA, index=table.index, dtype="string")
    for column in _candidates(table, names):
        values = values.fillna(text_column(table, column))
    return values


def _gpu_counts(table: pd.DataFrame, column: str, decimal_comma: bool) -> tuple[pd.Series, pd.Series]:
    """(GPU count, bad mask) of one candidate column; device lists count entries, devices × num_nodes."""
    raw = text_column(table, column)
    counts, bad = parse_number(raw, decimal_comma=decimal_comma)
    is_list = raw.str.fullmatch(r"\[[\d,\s]*\]").fillna(False).astype(bool)
    counts = counts.mask(is_list, raw.str.count(r"\d+").astype("float64"))
    bad = bad & ~is_list
    if _leaf(column) == "devices":
        sibling = re.sub(r"devices$", "num_nodes", str(column), flags=re.I)
        nodes_column = find_column(table.columns, sibling, "num_nodes")
        if nodes_column is not None:
            nodes, _ = parse_number(text_column(table, nodes_column))
            counts = counts * nodes.fillna(1.0)
    return counts, bad | (counts < 0)


def _mapping(table: pd.DataFrame, options: ReadOptions) -> dict[str, str]:
    """Mapped field → actual column; UnreadableFile for unknown fields or absent columns."""
    mapping = {field: source for field, source in (options.mapping or {}).items() if source}
    unknown = sorted(set(mapping) - set(MAPPABLE))
    if unknown:
        raise UnreadableFile(
            f"A W&B runs export can only map these fields: {', '.join(MAPPABLE)}; "
            f"the mapping also names {', '.join(unknown)}."
        )
    return mapped_columns(list(table.columns), mapping)


def derive(rows: Rows) -> dict[str, object]:
    """Read a W&B runs-table CSV into the canonical table (rules in the module docstring)."""
    table, options, index = rows.table, rows.options, rows.index
    mapped = _mapping(table, options)
    file_columns = ", ".join(map(str, table.columns))
    if not rows.has("id") and not rows.has("name") and "run_id" not in mapped:
        raise UnreadableFile(
            f"{rows.filename or 'This W&B runs export'} lacks the columns ID or Name. Show them in the W&B runs "
            f"table before exporting the CSV. The file's columns are: {file_columns}."
        )
    gpu_columns = [mapped["gpu_count"]] if "gpu_count" in mapped else _candidates(table, GPU_COUNT_COLUMNS)
    if not gpu_columns:
        raise UnreadableFile(
            f"{rows.filename or 'This W&B runs export'} has no GPU-count column, so GPU-hours cannot be computed. "
            f"Log and show a config column named one of {', '.join(GPU_COUNT_COLUMNS)}, or map a column to "
            f"gpu_count. The file's columns are: {file_columns}."
        )
    raw = {key: rows.text(key) for key in rows.columns}
    name = rows.name

    state_raw = raw["state"]
    known_state = state_raw.str.upper().isin(_WANDB_STATES).fillna(False).astype(bool)
    state = normalise_run_state(state_raw).where(known_state)

    gpus = pd.Series(np.nan, index=index, dtype="float64")
    gpu_bad_reason = pd.Series(pd.NA, index=index, dtype="string")
    for column in gpu_columns:
        counts, bad = _gpu_counts(table, column, options.decimal_comma)
        gpu_bad_reason = gpu_bad_reason.mask(gpu_bad_reason.isna() & bad,
                                             cannot_read(column, text_column(table, column), "a GPU count"))
        gpus = gpus.fillna(counts.where(~bad))

    runtime_text = raw["runtime"].fillna(raw["runtime_raw"])
    runtime_s, runtime_bad = parse_duration_s(runtime_text)
    runtime_column = rows.col("runtime") or rows.name("runtime_raw")
    runtime_s = duration_s(rows, runtime_s, runtime_column)
    created, created_bad = parse_datetime(raw["created"])

    rows.exclude((state == "PENDING").fillna(False), NOT_STARTED_RULE)
    for mask, reason in (
        (state_raw.isna(), f"{name('state')}: empty state"),
        (~known_state, name("state") + ": unknown W&B run state '" + state_raw.fillna("") + "'"),
        (raw["created"].isna(), f"{name('created')}: empty creation time"),
        (created_bad, cannot_read(name("created"), raw["created"], "a date-time")),
        (runtime_text.isna(), f"{runtime_column}: empty run time"),
        (runtime_bad | (runtime_s < 0), cannot_read(runtime_column, runtime_text, "a run time in seconds")),
        (gpus.isna() & gpu_bad_reason.notna(), gpu_bad_reason),
        (gpus.isna(), f"no GPU count: none of {', '.join(map(str, gpu_columns))} has a value; "
                      "map a column to gpu_count"),
    ):
        rows.reject(mask, reason)
    rows.exclude(gpus == 0, NO_GPU_RULE)

    def field(key: str, fallback: pd.Series) -> pd.Series:
        return text_column(table, mapped[key]) if key in mapped else fallback

    tags = raw["tags"]
    run_id = field("run_id", raw["id"].fillna(raw["name"]))
    tokens_text = field("tokens", _first_tokens(table))
    tokens, tokens_bad = parse_number(tokens_text, decimal_comma=options.decimal_comma)

    rows.warn(PRICE_WARNING)
    used = rows.open
    unreadable_tokens = int((used & tokens_bad.to_numpy(dtype=bool)).sum())
    if unreadable_tokens:
        rows.warn(f"{count_text(unreadable_tokens, 'run')} {'has' if unreadable_tokens == 1 else 'have'} an "
                  "unreadable token count, kept as unknown.")
    running = int((used & (state == "RUNNING").fillna(False).to_numpy(dtype=bool)).sum())
    if running:
        rows.warn(f"{count_text(running, 'run')} {'was' if running == 1 else 'were'} still running at export, "
                  "so their GPU-hours are counted up to then.")

    return {
        "period_start": created,
        "period_end": created + pd.to_timedelta(runtime_s, unit="s"),
        "gpu_hours": runtime_s / 3600 * gpus,
        "cost": 0.0,
        "billed_cost": 0.0,
        "gpu_type": gpu_type_label(field("gpu_type", _first_present(table, GPU_TYPE_COLUMNS))),
        "resource_id": _first_present(table, SLURM_JOB_COLUMNS).fillna(run_id),
        "team": field("team", _tag(tags, "team").fillna(raw["entity"]).fillna(raw["user"])),
        "project": field("project", _tag(tags, "project").fillna(raw["group"])),
        "run_id": run_id,
        "run_state": state,
        "tokens": tokens,
        "gpus": gpus,
        "model_params": _model_params(rows),
        "run_layout": _layout(table),
    }


def _count(text: pd.Series) -> pd.Series:
    """Numbers such as ``13000000000``, ``1.3e10`` or ``13B`` (k, M, B, T), NaN where none."""
    values, _ = parse_number(text)
    parts = text.str.extract(_SUFFIXED)
    suffixed = pd.to_numeric(parts[0], errors="coerce") * parts[1].str.lower().map(_SUFFIXES)
    return values.fillna(suffixed.astype("float64"))


def _model_params(rows: Rows) -> pd.Series:
    """Per row, the model size the run logged (module docstring), NaN where none; out-of-range values left out with a
    warning."""
    table = rows.table
    params = pd.Series(np.nan, index=table.index, dtype="float64")
    for column in _candidates(table, PARAMS_COLUMNS):
        params = params.fillna(_count(text_column(table, column)))
    shape = {part: _first_present(table, names) for part, names in SHAPE_COLUMNS.items()}
    layers, hidden, vocab = (_count(shape[part]) for part in ("layers", "hidden", "vocab"))
    params = params.fillna(12.0 * layers * hidden**2 + (vocab * hidden).fillna(0.0))
    bad = (params < 1) | (params > MAX_PARAMS)
    if (bad & rows.open).any():
        rows.warn(f"{count_text(int((bad & rows.open).sum()), 'run')} logged a model size outside 1 to "
                  f"{MAX_PARAMS:g} parameters, left out of MFU.")
    return params.mask(bad)


def _layout(table: pd.DataFrame) -> pd.DataFrame:
    """Per row, the layout the run logged (``LAYOUT_COLUMNS``: the first column with a whole number from 1 to
    ``MAX_LAYOUT``), NaN where none."""
    layout = pd.DataFrame(index=table.index)
    for key, names in LAYOUT_COLUMNS.items():
        values, _ = parse_number(_first_present(table, names))
        whole = (values >= 1) & (values <= MAX_LAYOUT) & (values == values.round())
        layout[key] = values.where(whole.fillna(False).astype(bool))
    return layout


def _first_tokens(table: pd.DataFrame) -> pd.Series:
    """Per row, the first value among tokens-like columns, in file order."""
    values = pd.Series(pd.NA, index=table.index, dtype="string")
    for column in table.columns:
        if _TOKENS.match(_leaf(column)):
            values = values.fillna(text_column(table, column))
    return values


FORMAT = Format(
    id="wandb",
    title="Weights & Biases runs table CSV",
    noun="a W&B runs export",
    kind="runs",
    order=60,
    priced=False,
    columns={
        "state": ("State",),
        "created": ("Created",),
        "runtime": ("Runtime",),
        "runtime_raw": ("_runtime",),
        "id": ("ID",),
        "name": ("Name",),
        "user": ("User",),
        "entity": ("Entity",),
        "tags": ("Tags",),
        "group": ("Group",),
        "sweep": ("Sweep",),
        "agent": ("Agent",),
    },
    fingerprint=Fingerprint(
        required=(("state",), ("created",), ("runtime", "runtime_raw")),
        markers=("name", "state", "runtime", "created", "sweep", "agent"),
    ),
    missing_hint="Show those columns in the W&B runs table before exporting the CSV.",
    row_local=False,  # a run export is small: read whole
    derive=derive,
)
