"""Header fingerprints: which known export a table is, judged only by its column names.

Detection never guesses ``generic``: a header that matches no fingerprint is refused with a message listing
the known formats and how to import any other table with ``--format generic`` and a column mapping. A header
that a format refuses (a look-alike it does not read, such as FOCUS 0.5 or sacct output without its header
line) gets that format's message. A header that clearly belongs to a format (several of its marker columns)
but lacks a required column is refused with the missing column named, rather than read half-way.
"""

from __future__ import annotations

from collections.abc import Sequence

from dashboard.ingest.engine import missing_groups, missing_message, resolve
from dashboard.ingest.formats import FORMATS
from dashboard.ingest.schema import UnreadableFile

NEAR_MISS_MARKERS = 3


def known_formats_text() -> str:
    """One line per detectable format with its key columns, for refusal messages and help text."""
    return "; ".join(
        f"{fid} ({fmt.title}: {', '.join(fmt.columns[group[0]][0] for group in fmt.required)})"
        for fid, fmt in FORMATS.items()
        if fmt.fingerprint is not None
    )


def _marker_count(format_id: str, header: Sequence[str]) -> int:
    fmt = FORMATS[format_id]
    columns = resolve(fmt, header)
    return sum(columns[key] is not None for key in fmt.markers)


def detect_format(columns: Sequence[str], filename: str = "") -> str:
    """The format id whose fingerprint the header matches (the one with most markers when several do);
    ``UnreadableFile`` if none does."""
    detectable = [fid for fid, fmt in FORMATS.items() if fmt.fingerprint is not None]
    matches = [fid for fid in detectable if not missing_groups(FORMATS[fid], columns)]
    if matches:
        return max(matches, key=lambda fid: (_marker_count(fid, columns), -detectable.index(fid)))
    for fid in detectable:
        for refusal in FORMATS[fid].refusals:
            if refusal.matches(columns):
                raise UnreadableFile(refusal.message.format(file=filename or "The file"))
    for fid in detectable:
        if _marker_count(fid, columns) >= NEAR_MISS_MARKERS:
            raise UnreadableFile(missing_message(FORMATS[fid], missing_groups(FORMATS[fid], columns), columns,
                                                 filename))
    shown = ", ".join(map(str, list(columns)[:8])) + (", …" if len(columns) > 8 else "")
    raise UnreadableFile(
        f"{filename or 'The file'} does not match any known billing or run-log export (its header starts: "
        f"{shown}). Known formats: {known_formats_text()}. To import any other table, choose the generic "
        "format and map its columns, e.g. `python -m dashboard ingest FILE --format generic --map "
        "period_start=Date --map cost=Amount --map gpu_hours=GPUHours` (fields: period_start, cost, and "
        "optionally gpu_hours, team, project, run_id, pricing, gpu_type, currency)."
    )


__all__ = ["detect_format", "known_formats_text"]
