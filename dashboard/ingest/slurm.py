"""Reader for Slurm accounting exports (``sacct --parsable2``): one used row per job allocation.

Rules (each exclusion's short name is the reason recorded for the row):
- Job steps (``123.batch``, ``123.extern``, ``123.0``, ``123_4.batch``, ``123+1.0``) are excluded as
  "slurm job step (counted in parent job)": the allocation row already holds the step's GPUs and time.
  Array tasks (``123_4``) and heterogeneous-job components (``123+0``, ``123+1``, each with its own
  AllocTRES) are allocations and are used. Requeued duplicates (``sacct -D``) are separate runs and used.
- Jobs with no start time, or in state PENDING, are excluded as "slurm job never started".
- Jobs whose AllocTRES holds no GPU (or ``gres/gpu=0``) are excluded as "slurm job allocated no GPUs".
- GPUs come from the generic ``gres/gpu=N`` entry; typed entries (``gres/gpu:h100=8``) are only counted
  when the generic one is missing (summed over types), and give ``gpu_type`` (``h100`` → ``H100``).
- Elapsed seconds: ``ElapsedRaw`` where readable, else ``Elapsed`` (``[D-]HH:MM:SS``), else End − Start.
  gpu_hours = elapsed_s / 3600 × GPUs.
- Start/End are the cluster's local wall-clock times without offset, so ``options.timezone`` is required.
  A time in the repeated hour of a DST change is recovered from the other end and the elapsed time when
  possible (End − elapsed, Start + elapsed) and rejected otherwise.
- RUNNING jobs (End ``Unknown``) are used with their elapsed time so far: period_end = Start + elapsed.
- run_state: the State word (``CANCELLED by 1234`` → CANCELLED); an unknown state rejects the row.
- team = Account; project = WCKey where set, else Partition; run_id = JobName (restarts of one training
  run share it), else JobID; resource_id = JobID (the key to join tracker runs that logged their job id).
- Slurm carries no prices: cost = billed_cost = 0.0, currency and pricing NA (the retrospective prices the
  GPU-hours from the plan); tokens NaN.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from dashboard.ingest.detect import find_column
from dashboard.ingest.gpus import gpu_type_label
from dashboard.ingest.rows import cannot_read, first_reason, settle, text_column
from dashboard.ingest.run_states import normalise_run_state
from dashboard.ingest.schema import ReaderResult, ReadOptions, UnreadableFile
from dashboard.ingest.values import parse_datetime, parse_duration_s, parse_number

STEP_RULE = "slurm job step (counted in parent job)"
NOT_STARTED_RULE = "slurm job never started"
NO_GPU_RULE = "slurm job allocated no GPUs"

PRICE_WARNING = (
    "Slurm exports carry no prices: costs are set to 0 and the retrospective prices these GPU-hours "
    "from the plan."
)

# 123, 123_4, 123_[1-9%2], 123+0, each optionally followed by a step suffix (.batch, .extern, .0).
_JOB_ID = r"\d+(?:_(?:\d+|\[[^\]]*\]))?(?:\+\d+)?(?:\.[\w-]+)?"
_REQUIRED = ("JobID", "State", "Start", "AllocTRES")
_SACCT_HINT = (
    "sacct --parsable2 --format=JobID,JobName,User,Account,Partition,WCKey,State,Start,End,Elapsed,"
    "ElapsedRaw,AllocTRES"
)


def gpus_from_tres(tres: str) -> tuple[float, str | None]:
    """GPU count and GPU type name of one AllocTRES string; (NaN, None) when a GPU entry is unreadable.

    ``billing=64,cpu=64,gres/gpu:h100=8,gres/gpu=8,mem=1000G,node=1`` → (8, "h100"): the generic
    ``gres/gpu=`` count wins and the typed entry only names the type. Without a generic entry the typed
    counts are summed. Several types are joined with ``+``. No GPU entry → (0, None).
    """
    generic: float | None = None
    typed: dict[str, float] = {}
    for item in tres.split(","):
        key, _, value = item.strip().partition("=")
        key = key.strip().lower()
        if key != "gres/gpu" and not key.startswith("gres/gpu:"):
            continue
        if not value.strip().isdigit():
            return float("nan"), None
        if key == "gres/gpu":
            generic = float(value)
        else:
            name = key.removeprefix("gres/gpu:")
            typed[name] = typed.get(name, 0.0) + float(value)
    count = generic if generic is not None else sum(typed.values())
    return count, "+".join(sorted(typed)) or None


def _require_timezone(options: ReadOptions) -> str:
    """The declared cluster time zone; UnreadableFile when it is missing or not an IANA name."""
    if options.timezone is None:
        raise UnreadableFile(
            "Slurm's sacct prints Start and End in the cluster's local time without a UTC offset, so the "
            "import needs to know that time zone. Pass the cluster's time zone (for example "
            "`--timezone Europe/Berlin` on the command line, or pick it in the app's time-zone selector) "
            "and import the file again; use UTC if sacct ran with TZ=UTC."
        )
    try:
        ZoneInfo(options.timezone)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise UnreadableFile(
            f"'{options.timezone}' is not a known time zone name; give an IANA name such as "
            "Europe/Berlin, America/New_York or UTC."
        ) from error
    return options.timezone


def _columns(table: pd.DataFrame) -> dict[str, str | None]:
    """Actual column names of the sacct fields this reader uses; UnreadableFile when essentials are absent."""
    names = ("JobID", "JobName", "Account", "Partition", "WCKey", "State", "Start", "End", "Elapsed",
             "ElapsedRaw", "AllocTRES")
    columns = {name: find_column(table.columns, name) for name in names}
    missing = [name for name in _REQUIRED if columns[name] is None]
    if all(columns[name] is None for name in ("ElapsedRaw", "Elapsed", "End")):
        missing.append("ElapsedRaw (or Elapsed, or End)")
    if missing:
        raise UnreadableFile(
            f"This Slurm export lacks the fields {', '.join(missing)}, which are needed to count GPU-hours. "
            f"The file's columns are: {', '.join(map(str, table.columns))}. Export again with "
            f"`{_SACCT_HINT}`."
        )
    return columns


def _times(raw: pd.Series, timezone: str) -> tuple[pd.Series, pd.Series, pd.Series]:
    """(UTC times, garbage mask, ambiguous mask): ambiguous = readable text that falls in a repeated hour."""
    values, bad = parse_datetime(raw, timezone=timezone)
    if not bad.any():
        return values, bad, bad
    _, bad_as_utc = parse_datetime(raw, timezone="UTC")
    return values, bad & bad_as_utc, bad & ~bad_as_utc


def read(table: pd.DataFrame, options: ReadOptions) -> ReaderResult:
    """Read a ``sacct --parsable2`` export into the canonical table (rules in the module docstring)."""
    timezone = _require_timezone(options)
    columns = _columns(table)
    raw = {name: text_column(table, column) for name, column in columns.items()}
    index = table.index

    job_id = raw["JobID"]
    job_id_ok = job_id.str.fullmatch(_JOB_ID).fillna(False).astype(bool)
    step = job_id_ok & job_id.str.contains(".", regex=False).fillna(False).astype(bool)
    state = normalise_run_state(raw["State"])
    not_started = raw["Start"].isna() | (state == "PENDING").fillna(False)

    codes, uniques = pd.factorize(raw["AllocTRES"], use_na_sentinel=True)
    parsed = [gpus_from_tres(text) for text in uniques]  # code -1 (no AllocTRES) takes the trailing entry
    gpus = pd.Series(np.array([count for count, _ in parsed] + [0.0])[codes], index=index)
    gpu_names = np.array([name for _, name in parsed] + [None], dtype=object)[codes]
    gpu_type = gpu_type_label(pd.Series(gpu_names, index=index, dtype="string"))

    elapsed_raw_s, _ = parse_number(raw["ElapsedRaw"])
    elapsed_text_s, elapsed_bad = parse_duration_s(raw["Elapsed"])
    elapsed_s = elapsed_raw_s.where(elapsed_raw_s >= 0).fillna(elapsed_text_s.where(elapsed_text_s >= 0))

    start, start_bad, start_ambiguous = _times(raw["Start"], timezone)
    end, end_bad, end_ambiguous = _times(raw["End"], timezone)
    elapsed_s = elapsed_s.fillna((end - start).dt.total_seconds())
    elapsed = pd.to_timedelta(elapsed_s, unit="s")
    start = start.fillna((end - elapsed).where(start_ambiguous))
    end = end.fillna(start + elapsed)

    excluded = first_reason(index, [(step, STEP_RULE), (not_started, NOT_STARTED_RULE)])
    rejected = first_reason(index, [
        (job_id.isna(), f"{columns['JobID']}: empty job id"),
        (~job_id_ok, cannot_read(columns["JobID"], job_id, "a Slurm job id")),
        (raw["State"].isna(), f"{columns['State']}: empty state"),
        (state.isna(), columns["State"] + ": unknown Slurm state '" + raw["State"].fillna("") + "'"),
        (start_bad, cannot_read(columns["Start"], raw["Start"], "a date-time")),
        (end_bad, cannot_read(str(columns["End"]), raw["End"], "a date-time")),
        (start.isna() & start_ambiguous, columns["Start"] + ": '" + raw["Start"].fillna("")
         + f"' is ambiguous in {timezone} (repeated hour at a DST change)"),
        (end.isna() & end_ambiguous, str(columns["End"]) + ": '" + raw["End"].fillna("")
         + f"' is ambiguous in {timezone} (repeated hour at a DST change)"),
        (elapsed_s.isna() & elapsed_bad, cannot_read(str(columns["Elapsed"]), raw["Elapsed"], "a duration")),
        (elapsed_s.isna(), "ElapsedRaw/Elapsed/End: no elapsed time"),
        (elapsed_s < 0, str(columns["End"]) + ": ends before " + columns["Start"]),
        (gpus.isna(), cannot_read(columns["AllocTRES"], raw["AllocTRES"], "GPU counts (gres/gpu=N)")),
    ])
    excluded = excluded.where(job_id_ok)
    no_gpu = excluded.isna() & rejected.isna() & (gpus == 0)
    excluded = excluded.mask(no_gpu, NO_GPU_RULE)

    warnings = [PRICE_WARNING]
    used = excluded.isna() & rejected.isna()
    running = int((used & (state == "RUNNING")).sum())
    if running:
        warnings.append(
            f"{running} job(s) were still running when sacct ran: their GPU-hours are counted up to then."
        )
    parents = job_id.where(step).str.split(".").str[0]
    orphans = int((step & ~parents.isin(job_id[~step])).sum())
    if orphans:
        warnings.append(
            f"{orphans} job steps have no allocation row in the file, so their GPU time is not counted; "
            "export whole jobs (sacct without --starttime cutting jobs, or with -X)."
        )

    run_name = raw["JobName"]
    usage = {
        "period_start": start,
        "period_end": end,
        "gpu_hours": elapsed_s / 3600 * gpus,
        "cost": 0.0,
        "billed_cost": 0.0,
        "currency": pd.NA,
        "pricing": pd.NA,
        "gpu_type": gpu_type,
        "resource_id": job_id,
        "team": raw["Account"],
        "project": raw["WCKey"].str.lstrip("*").replace("", pd.NA).fillna(raw["Partition"]),
        "run_id": run_name.fillna(job_id),
        "run_state": state,
        "tokens": np.nan,
    }
    return settle(table, usage, excluded, rejected, warnings)
