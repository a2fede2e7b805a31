"""The labels of missing tags: an NA team, project or run reads as ``UNTAGGED`` and an NA pricing tier as
``UNKNOWN_PRICING``, in every query and every pandas helper (no engine is imported here)."""

UNTAGGED = "(untagged)"
UNKNOWN_PRICING = "(unknown)"
NA_LABELS: dict[str, str] = {
    "team": UNTAGGED,
    "project": UNTAGGED,
    "run_id": UNTAGGED,
    "pricing": UNKNOWN_PRICING,
}
