"""Limits a server operator may change through environment variables, each with a documented default.

Values are read when they are needed (not at import), so a test or a server started with other values sees
them. A value that is not a whole number in range is refused with a message naming the variable.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

UPLOAD_LIMIT_MB = 500  # PLANNER_UPLOAD_MAX_MB's default, and server.maxUploadSize in .streamlit/config.toml
MEBIBYTE = 1 << 20  # Streamlit's and nginx's upload megabyte
REPOSITORY_DATA = Path(__file__).resolve().parents[1] / "data"

MAX_IMPORT_MB = "PLANNER_MAX_IMPORT_MB"
MAX_ARCHIVE_DEPTH = "PLANNER_MAX_ARCHIVE_DEPTH"
MAX_COLUMNS = "PLANNER_MAX_COLUMNS"
DATA_DIR = "PLANNER_DATA_DIR"
IMPORT_STORE_MB = "PLANNER_IMPORT_STORE_MB"
IMPORT_MEMORY_MB = "PLANNER_IMPORT_MEMORY_MB"
IMPORT_WAIT_S = "PLANNER_IMPORT_WAIT_S"
WORKSPACE_DIR = "PLANNER_WORKSPACE_DIR"
STREAM_BATCH_ROWS = "PLANNER_STREAM_BATCH_ROWS"
DOWNLOAD_MAX_ROWS = "PLANNER_DOWNLOAD_MAX_ROWS"
ENGINE_URL = "PLANNER_ENGINE_URL"
DEFAULT_ENGINE_URL = "duckdb"
DUCKDB_MEMORY_LIMIT = "PLANNER_DUCKDB_MEMORY_LIMIT"
WARM_UP = "PLANNER_WARM_UP"
ADMINS = "PLANNER_ADMINS"
# Uploads bounded before they are accepted, and reruns paced per session (dashboard/ui/upload_guard.py, rerun_pace.py)
UPLOAD_MAX_MB = "PLANNER_UPLOAD_MAX_MB"
UPLOAD_SESSION_MB = "PLANNER_UPLOAD_SESSION_MB"
UPLOAD_TOTAL_MB = "PLANNER_UPLOAD_TOTAL_MB"
RERUN_INTERVAL_MS = "PLANNER_RERUN_INTERVAL_MS"
ADMIN_MAX_CHARS = 320  # the longest e-mail address; OIDC subjects are at most 255
_ADMIN = re.compile(r"[^\s,\x00-\x1f\x7f]+")  # one e-mail or subject: no spaces, commas or control characters
DEFAULT_DUCKDB_MEMORY_LIMIT = "2GB"
_MEMORY = re.compile(r"[1-9]\d{0,6}(\.\d{1,3})?\s?(KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.IGNORECASE)
# What PLANNER_ENGINE_URL may hold: DuckDB in memory or in a file, a Spark master, or any other Ibis backend URL.
ENGINE_URL_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("duckdb", re.compile(r"duckdb")),
    ("duckdb:///path/to/file.duckdb", re.compile(r"duckdb://[^\s]*")),
    ("spark://host:port", re.compile(r"spark://[A-Za-z0-9.\-]+:\d{1,5}")),
    ("local[N] or local[*]", re.compile(r"local\[(\*|[1-9]\d{0,3})\]")),
    ("an Ibis backend URL such as bigquery://project/dataset", re.compile(r"(?!spark://)[a-z][a-z0-9+]*://\S+")),
)

# name: (default, smallest allowed, largest allowed, what it bounds)
LIMITS: dict[str, tuple[int, int, int, str]] = {
    MAX_IMPORT_MB: (4 * UPLOAD_LIMIT_MB, 1, 1 << 20,
                    "megabytes one import may read from a file or inflate from .gz/.zip (4× the upload limit)"),
    MAX_ARCHIVE_DEPTH: (2, 1, 8, "archive layers unwrapped (a .csv.gz inside a .zip is 2)"),
    MAX_COLUMNS: (10_000, 10, 1_000_000, "columns in a file's header"),
    IMPORT_STORE_MB: (2_000, 1, 1 << 20, "megabytes of imported tables the server holds for all browser sessions"),
    IMPORT_MEMORY_MB: (6_000, 50, 1 << 20,
                       "megabytes of working memory all in-memory imports of one process may take together"),
    IMPORT_WAIT_S: (30, 0, 3_600, "seconds an import waits for memory other imports hold before it is refused"),
    STREAM_BATCH_ROWS: (200_000, 1_000, 10_000_000, "rows a streamed import into the workspace reads at a time"),
    DOWNLOAD_MAX_ROWS: (1_000_000, 1_000, 100_000_000, "rows one CSV download of a filtered view holds"),
    # Uploads and reruns (the upload megabytes are Streamlit's and nginx's: 1 MB = 1,048,576 bytes)
    UPLOAD_MAX_MB: (UPLOAD_LIMIT_MB, 1, 1 << 20,
                    "megabytes of one upload; Streamlit's server.maxUploadSize is set from it"),
    UPLOAD_SESSION_MB: (2 * UPLOAD_LIMIT_MB, 1, 1 << 20,
                        "megabytes of uploads one browser session has in flight and held together"),
    UPLOAD_TOTAL_MB: (4 * UPLOAD_LIMIT_MB, 1, 1 << 20,
                      "megabytes of uploads all browser sessions have in flight and held together"),
    RERUN_INTERVAL_MS: (100, 0, 60_000,
                        "milliseconds at least between the starts of two runs of one session; a rerun message that "
                        "comes while a run is in progress is held, later ones merged into it, until that run ends"),
}

# Work per request: what a scenario's programme and a Plan rerun may ask of the engine (core.programme, core.work)
PROGRAMME_MAX_RUNS = "PLANNER_PROGRAMME_MAX_RUNS"
RERUN_MAX_ROWS = "PLANNER_RERUN_MAX_ROWS"
LIMITS[PROGRAMME_MAX_RUNS] = (200, 1, 2_000, "training runs the engine prices for one scenario's programme")
LIMITS[RERUN_MAX_ROWS] = (50_000, 1_000, 10_000_000, "engine rows one Plan page rerun may price for programmes")
# Parquet page headers read to measure one import before it is decoded (dashboard/ingest/parquet_size.py).
MAX_PARQUET_PAGES = "PLANNER_MAX_PARQUET_PAGES"
LIMITS[MAX_PARQUET_PAGES] = (500_000, 1_000, 100_000_000, "Parquet page headers read to measure one import")
# Distinct job layouts the step-time model prices to refit this cluster's efficiency (dashboard/retro/refit_runs.py).
REFIT_MAX_LAYOUTS = "PLANNER_REFIT_MAX_LAYOUTS"
LIMITS[REFIT_MAX_LAYOUTS] = (64, 1, 1_000, "distinct job layouts priced to refit the cluster's efficiency")
# The size of a workspace dataset's rollups (workspace/rollups.py): kept smallest first within the larger bound.
ROLLUP_MAX_PERCENT = "PLANNER_ROLLUP_MAX_PERCENT"
ROLLUP_FREE_ROWS = "PLANNER_ROLLUP_FREE_ROWS"
LIMITS[ROLLUP_MAX_PERCENT] = (5, 0, 100, "percent of a workspace dataset's rows its rollups may hold together")
LIMITS[ROLLUP_FREE_ROWS] = (100_000, 0, 100_000_000, "rows a workspace dataset's rollups may hold whatever its size")
# The memory of the DuckDB connection sorting a workspace import's rows and building its rollups (workspace/imports.py).
IMPORT_ENGINE_MB = "PLANNER_IMPORT_ENGINE_MB"
LIMITS[IMPORT_ENGINE_MB] = (512, 64, 1 << 20, "megabytes a workspace import's sort and rollups hold before they spill")

# How long the Retrospective keeps showing an upload that left its uploader: a file replaced in the uploader first
# goes through a run without any (ui/retro_sources.py); one removed with its × stays removed.
UPLOAD_SETTLE_MS = "PLANNER_UPLOAD_SETTLE_MS"
LIMITS[UPLOAD_SETTLE_MS] = (1_500, 100, 60_000, "milliseconds the Retrospective keeps an upload that left its "
                            "uploader before it counts as removed and the sample comes back")


class SettingError(ValueError):
    """An environment variable holds a value the planner cannot use; the message names it."""


def limit(name: str) -> int:
    """The setting ``name`` (one of ``LIMITS``) from the environment, else its default."""
    default, low, high, meaning = LIMITS[name]
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise SettingError(f"{name} must be a whole number from {low:,} to {high:,} ({meaning}); it is set to "
                           f"{text[:40]!r}. Fix or unset it (default {default:,}).")
    return value


def megabytes(name: str) -> int:
    """A megabyte setting in bytes."""
    return limit(name) * 1_000_000


def mebibytes(name: str) -> int:
    """An upload megabyte setting in bytes, counted as Streamlit and nginx count them (1 MB = 1,048,576 bytes)."""
    return limit(name) * MEBIBYTE


def data_dir(serving_beyond_localhost: bool) -> Path | None:
    """The folder local-path imports are confined to, or None when that feature is off.

    ``$PLANNER_DATA_DIR`` when set (``off`` turns the feature off); otherwise the repository's ``data/``
    folder, but only while the server listens on localhost: a server reachable from other machines reads no
    local path unless its operator names the folder on purpose.
    """
    text = os.environ.get(DATA_DIR, "").strip()
    if text.lower() in ("off", "none", "0"):
        return None
    if text:
        return Path(text).expanduser().resolve()
    return None if serving_beyond_localhost else REPOSITORY_DATA


def workspace_dir() -> Path:
    """The folder of imported datasets (Parquet, one folder per dataset): ``$PLANNER_WORKSPACE_DIR`` when set,
    else ``workspace/`` in the repository's data folder."""
    text = os.environ.get(WORKSPACE_DIR, "").strip()
    if not text:
        return REPOSITORY_DATA / "workspace"
    if "\x00" in text:
        raise SettingError(f"{WORKSPACE_DIR} must be a folder path; it holds a NUL character. Fix or unset it.")
    return Path(text).expanduser().resolve()


def engine_url(text: str | None = None) -> str:
    """The query engine's connection string: ``text``, else ``$PLANNER_ENGINE_URL``, else "duckdb" (in memory).

    Refused with a message naming the variable and the accepted forms (``ENGINE_URL_FORMS``) when it matches none.
    """
    value = (os.environ.get(ENGINE_URL, "") if text is None else text).strip()
    if not value:
        return DEFAULT_ENGINE_URL
    if any(pattern.fullmatch(value) for _, pattern in ENGINE_URL_FORMS):
        return value
    forms = "; ".join(form for form, _ in ENGINE_URL_FORMS)
    shown = value.split("://")[0] + "://…" if "@" in value else value[:60]  # never echo a password
    raise SettingError(f"{ENGINE_URL} must be one of: {forms}; it is set to {shown!r}. Fix or unset it "
                       f"(default {DEFAULT_ENGINE_URL}).")


def duckdb_memory_limit() -> str:
    """The memory DuckDB's query engine may hold before it spills to disk: ``$PLANNER_DUCKDB_MEMORY_LIMIT`` (an
    amount with its unit, e.g. "2GB", "1536MiB"), else ``DEFAULT_DUCKDB_MEMORY_LIMIT``."""
    text = os.environ.get(DUCKDB_MEMORY_LIMIT, "").strip()
    if not text:
        return DEFAULT_DUCKDB_MEMORY_LIMIT
    if not _MEMORY.fullmatch(text):
        raise SettingError(f"{DUCKDB_MEMORY_LIMIT} must be an amount of memory with its unit (KB, MB, GB, TB or "
                           f"KiB, MiB, GiB, TiB), such as 2GB; it is set to {text[:40]!r}. Fix or unset it "
                           f"(default {DEFAULT_DUCKDB_MEMORY_LIMIT}).")
    return text


def warm_up() -> bool:
    """Whether a server warms the query layer once after its first page is drawn (``$PLANNER_WARM_UP``; "0",
    "off" or "false" turn it off, as the tests do: its queries would run beside theirs)."""
    text = os.environ.get(WARM_UP, "").strip().lower()
    if text in ("", "1", "on", "true"):
        return True
    if text in ("0", "off", "false"):
        return False
    raise SettingError(f"{WARM_UP} must be on or off (1/0, true/false); it is set to {text[:40]!r}. Fix or unset it "
                       "(default on).")


# Issuer + subject (issue 53): PLANNER_ADMINS names ISSUER#SUBJECT pairs, and a store's owners recorded before issuers
# may be given the one issuer the operator names.
ADMIN_PAIR_MAX_CHARS = 1256  # ISSUER#SUBJECT: an issuer of at most 1,000 characters and a subject of at most 255
LEGACY_OWNER_ISSUER = "PLANNER_LEGACY_OWNER_ISSUER"
LEGACY_ISSUER_MAX_CHARS = 1000


def admins() -> frozenset[str]:
    """Who may change anyone's saved scenario or workspace dataset when sign-in is on: ``$PLANNER_ADMINS``,
    comma-separated e-mails (matched ignoring case, only when the provider says the e-mail is verified) or
    ``ISSUER#SUBJECT`` pairs (matched exactly); empty by default. A bare subject is refused: two providers may
    give two users the same subject."""
    text = os.environ.get(ADMINS, "")
    items = [item.strip() for item in text.split(",")]
    found = frozenset(item for item in items if item)
    bad = next((item for item in found if len(item) > (ADMIN_PAIR_MAX_CHARS if "#" in item else ADMIN_MAX_CHARS)
                 or not _ADMIN.fullmatch(item)), None)
    if bad is not None:
        raise SettingError(f"{ADMINS} must be comma-separated e-mail addresses (1–{ADMIN_MAX_CHARS} characters) or "
                           f"ISSUER#SUBJECT pairs (1–{ADMIN_PAIR_MAX_CHARS}), without spaces; it holds {bad[:40]!r}. "
                           "Fix or unset it (default: no administrators).")
    bare = next((item for item in found if not _admin_form(item)), None)
    if bare is not None:
        raise SettingError(f"{ADMINS} names {bare[:40]!r}, which is neither an e-mail address nor ISSUER#SUBJECT: a "
                           "subject alone may belong to users of two providers. Write it as the provider's issuer, "
                           "'#' and the subject (e.g. https://sso.example.org/realms/planner#1234), or use the "
                           "e-mail address.")
    return found


def _admin_form(item: str) -> bool:
    """ISSUER#SUBJECT with both parts, or an e-mail address (an '@' and no '#')."""
    if "#" in item:
        issuer, _, subject = item.partition("#")
        return bool(issuer) and bool(subject)
    return "@" in item.strip("@")


def legacy_owner_issuer() -> str | None:
    """The issuer of the owners a store recorded before it recorded issuers (``$PLANNER_LEGACY_OWNER_ISSUER``): the
    one provider that server used. Unset (the default), such rows stay owned by nobody who can prove it and only
    administrators change them."""
    text = os.environ.get(LEGACY_OWNER_ISSUER, "").strip()
    if not text:
        return None
    if len(text) > LEGACY_ISSUER_MAX_CHARS or not _ADMIN.fullmatch(text) or "#" in text:
        raise SettingError(f"{LEGACY_OWNER_ISSUER} must be one OIDC issuer (1–{LEGACY_ISSUER_MAX_CHARS} characters "
                           f"without spaces, commas or '#'); it holds {text[:40]!r}. Fix or unset it.")
    return text
