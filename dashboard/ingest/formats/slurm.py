"""Slurm accounting exports (``sacct --parsable2``): one used row per job allocation.

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

import re
from collections.abc import Sequence
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from dashboard.ingest.gpus import gpu_type_label
from dashboard.ingest.plausible import duration_s
from dashboard.ingest.rows import Rows, cannot_read
from dashboard.ingest.run_states import RUN_STATES, normalise_run_state
from dashboard.ingest.schema import ReadOptions, UnreadableFile
from dashboard.ingest.spec import Fingerprint, Format, Refusal
from dashboard.ingest.values import parse_datetime, parse_duration_s, parse_number
from dashboard.ingest.wording import count_text
from dashboard.safe_text import preview

STEP_RULE = "slurm job step (counted in parent job)"
NOT_STARTED_RULE = "slurm job never started"
NO_GPU_RULE = "slurm job allocated no GPUs"

PRICE_WARNING = (
    "Slurm exports carry no prices: costs are set to 0 and the retrospective prices these GPU-hours "
    "from the plan."
)

# 123, 123_4, 123_[1-9%2], 123+0, each optionally followed by a step suffix (.batch, .extern, .0).
_JOB_ID = r"\d+(?:_(?:\d+|\[[^\]]*\]))?(?:\+\d+)?(?:\.[\w-]+)?"
_SACCT_HINT = (
    "sacct --parsable2 --format=JobID,JobName,User,Account,Partition,WCKey,State,Start,End,Elapsed,"
    "ElapsedRaw,AllocTRES"
)
_ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")


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
    except (ZoneInfoNotFoundError, ValueError, OSError) as error:  # OSError: a name too long for a file name
        raise UnreadableFile(
            f"{preview(options.timezone)!r} is not a known time zone name; give an IANA name such as "
            "Europe/Berlin, America/New_York or UTC."
        ) from error
    return options.timezone


def _times(raw: pd.Series, timezone: str) -> tuple[pd.Series, pd.Series, pd.Series]:
    """(UTC times, garbage mask, ambiguous mask): ambiguous = readable text that falls in a repeated hour."""
    values, bad = parse_datetime(raw, timezone=timezone)
    if not bad.any():
        return values, bad, bad
    _, bad_as_utc = parse_datetime(raw, timezone="UTC")
    return values, bad & bad_as_utc, bad & ~bad_as_utc


def derive(rows: Rows) -> dict[str, object]:
    """Read a ``sacct --parsable2`` export into the canonical table (rules in the module docstring)."""
    timezone = _require_timezone(rows.options)
    raw = {key: rows.text(key) for key in rows.columns}
    name = rows.name
    index = rows.index

    job_id = raw["job"]
    job_id_ok = job_id.str.fullmatch(_JOB_ID).fillna(False).astype(bool)
    step = job_id_ok & job_id.str.contains(".", regex=False).fillna(False).astype(bool)
    state = normalise_run_state(raw["state"])
    not_started = raw["start"].isna() | (state == "PENDING").fillna(False)

    codes, uniques = pd.factorize(raw["tres"], use_na_sentinel=True)
    parsed = [gpus_from_tres(text) for text in uniques]  # code -1 (no AllocTRES) takes the trailing entry
    gpus = pd.Series(np.array([count for count, _ in parsed] + [0.0])[codes], index=index)
    gpu_names = np.array([gpu for _, gpu in parsed] + [None], dtype=object)[codes]
    gpu_type = gpu_type_label(pd.Series(gpu_names, index=index, dtype="string"))

    elapsed_raw_s, _ = parse_number(raw["elapsed_raw"])
    elapsed_text_s, elapsed_bad = parse_duration_s(raw["elapsed"])
    elapsed_s = elapsed_raw_s.where(elapsed_raw_s >= 0).fillna(elapsed_text_s.where(elapsed_text_s >= 0))

    start, start_bad, start_ambiguous = _times(raw["start"], timezone)
    end, end_bad, end_ambiguous = _times(raw["end"], timezone)
    elapsed_s = duration_s(rows, elapsed_s.fillna((end - start).dt.total_seconds()), "ElapsedRaw/Elapsed/End")
    elapsed = pd.to_timedelta(elapsed_s, unit="s")
    start = start.fillna((end - elapsed).where(start_ambiguous))
    end = end.fillna(start + elapsed)

    rows.reject(job_id.isna(), f"{name('job')}: empty job id")
    rows.reject(~job_id_ok, cannot_read(name("job"), job_id, "a Slurm job id"))
    rows.exclude(step, STEP_RULE)
    rows.exclude(not_started, NOT_STARTED_RULE)
    ambiguous = f"' is ambiguous in {timezone} (repeated hour at a DST change)"
    for mask, reason in (
        (raw["state"].isna(), f"{name('state')}: empty state"),
        (state.isna(), name("state") + ": unknown Slurm state '" + raw["state"].fillna("") + "'"),
        (start_bad, cannot_read(name("start"), raw["start"], "a date-time")),
        (end_bad, cannot_read(name("end"), raw["end"], "a date-time")),
        (start.isna() & start_ambiguous, name("start") + ": '" + raw["start"].fillna("") + ambiguous),
        (end.isna() & end_ambiguous, name("end") + ": '" + raw["end"].fillna("") + ambiguous),
        (elapsed_s.isna() & elapsed_bad, cannot_read(name("elapsed"), raw["elapsed"], "a duration")),
        (elapsed_s.isna(), "ElapsedRaw/Elapsed/End: no elapsed time"),
        (elapsed_s < 0, name("end") + ": ends before " + name("start")),
        (gpus.isna(), cannot_read(name("tres"), raw["tres"], "GPU counts (gres/gpu=N)")),
    ):
        rows.reject(mask, reason)
    rows.exclude(gpus == 0, NO_GPU_RULE)

    rows.warn(PRICE_WARNING)
    running = int((rows.open & (state == "RUNNING").fillna(False).to_numpy(dtype=bool)).sum())
    if running:
        rows.warn(f"{count_text(running, 'job')} {'was' if running == 1 else 'were'} still running when sacct "
                  f"ran, so {'its' if running == 1 else 'their'} GPU-hours are counted up to then.")
    parents = job_id.where(step).str.split(".").str[0]
    orphans = int((step & ~parents.isin(job_id[~step])).sum())
    if orphans:
        rows.warn(
            f"{count_text(orphans, 'job step')} {'has' if orphans == 1 else 'have'} no allocation row in the file, "
            "so their GPU time is not counted; export whole jobs (sacct without --starttime cutting jobs, "
            "or with -X)."
        )

    return {
        "period_start": start,
        "period_end": end,
        "gpu_hours": elapsed_s / 3600 * gpus,
        "cost": 0.0,
        "billed_cost": 0.0,
        "gpu_type": gpu_type,
        "resource_id": job_id,
        "team": raw["account"],
        "project": raw["wckey"].str.lstrip("*").replace("", pd.NA).fillna(raw["partition"]),
        "run_id": raw["job_name"].fillna(job_id),
        "run_state": state,
        "gpus": gpus,
    }


def _looks_like_a_data_row(header: Sequence[str]) -> bool:
    """True for a "header" that is a sacct record (``sacct -P -n`` prints none): a date-time next to a job
    id or state, and no sacct field name."""
    cells = [part.strip() for c in header for part in str(c).split("|")]  # commas in AllocTRES may have won
    fields = {"jobid", "jobidraw", "state", "start", "end", "elapsed", "alloctres", "jobname", "account"}
    if any(c.lower() in fields for c in cells):
        return False
    states = {s for s in RUN_STATES}
    return any(_ISO_TIME.match(c) for c in cells) and any(
        re.fullmatch(_JOB_ID, c) or c.split(" ")[0].rstrip("+") in states for c in cells
    )


FORMAT = Format(
    id="slurm",
    title="Slurm sacct --parsable2 output",
    noun="a Slurm sacct export",
    kind="runs",
    order=50,
    priced=False,
    columns={
        "job": ("JobID",),
        "job_raw": ("JobIDRaw",),
        "job_name": ("JobName",),
        "account": ("Account",),
        "partition": ("Partition",),
        "wckey": ("WCKey",),
        "state": ("State",),
        "submit": ("Submit",),
        "start": ("Start",),
        "end": ("End",),
        "elapsed": ("Elapsed",),
        "elapsed_raw": ("ElapsedRaw",),
        "tres": ("AllocTRES",),
        "nodes": ("AllocNodes",),
    },
    fingerprint=Fingerprint(
        required=(("job",), ("state",), ("start",), ("tres",), ("elapsed_raw", "elapsed", "end")),
        markers=("job", "job_raw", "elapsed", "elapsed_raw", "tres", "nodes", "submit", "partition", "state"),
    ),
    refusals=(
        Refusal(
            _looks_like_a_data_row,
            "{file} looks like Slurm sacct output, but the header line is missing: export with "
            f"`sacct --parsable2` without `-n` (for example `{_SACCT_HINT}`).",
        ),
    ),
    missing_hint=f"Export again with `{_SACCT_HINT}`.",
    row_local=False,  # job steps are folded into their jobs
    derive=derive,
)
