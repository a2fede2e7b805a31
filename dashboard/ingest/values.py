"""Vectorised parsers for the cell values of billing exports: numbers, timestamps, tags and durations.

Every parser takes a pandas Series of strings (as produced by ``decode``) and works on whole columns or on
the column's *unique* values, never row by row, so that a million-row export parses in well under a second.
Parsers that can fail return ``(values, bad)`` where ``bad`` is a boolean Series marking cells that held
something but could not be parsed; empty cells and null tokens (``null``, ``None``, ``-`` …) are missing,
not bad. Readers turn ``bad`` into rejected rows with a reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

NULL_TOKENS: frozenset[str] = frozenset(
    {"", "null", "none", "nan", "n/a", "na", "-", "(null)", "unknown", "not applicable", "<na>"}
)

_CURRENCY_CHARS = re.compile(r"[\s$€£¥\u00a0\u202f]|(?i:usd|eur|gbp|jpy|chf)")
_PLAIN_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
_OFFSET_SUFFIX = r"(?:\d:\d\d(?::\d\d(?:\.\d+)?)?\s*(?:[zZ]|[+-]\d{2}(?::?\d{2})?)|\s(?:UTC|GMT))$"
_DURATION = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$")


def _as_str(s: pd.Series) -> pd.Series:
    """The series as pandas strings with missing cells as NA (works for object, str and numeric input).

    Categoricals of strings (decode's low-cardinality columns) are returned as they are: the parsers that
    accept them work on distinct values.
    """
    if pd.api.types.is_string_dtype(s.dtype) and not isinstance(s.dtype, np.dtype):
        return s
    if isinstance(s.dtype, pd.CategoricalDtype):
        return s
    return s.astype("str").where(s.notna())


def null_mask(s: pd.Series) -> pd.Series:
    """True where a cell is missing: NA, empty or whitespace, or a null token such as ``null``/``None``/``-``."""
    s = _as_str(s)
    stripped = s.str.strip().str.lower()
    return stripped.isna() | stripped.isin(NULL_TOKENS)


def factorize_present(s: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """Codes and distinct values of ``s`` with missing cells (NA, blank, null tokens) coded -1.

    Null tokens are recognised on the distinct values only, so a million-row column costs one factorize.
    """
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    uniques = pd.Series(uniques, dtype="str")
    absent = uniques.str.strip().str.lower().isin(NULL_TOKENS).to_numpy(dtype=bool)
    if absent.any():
        kept = np.flatnonzero(~absent)
        remap = np.full(len(uniques) + 1, -1, dtype=np.int64)
        remap[kept] = np.arange(len(kept))
        codes = remap[codes]
        uniques = uniques[~absent].reset_index(drop=True)
    return codes, uniques


def map_unique(s: pd.Series, func: Callable[[Any], Any], *, dtype: Any = object) -> pd.Series:
    """Apply ``func`` once per distinct non-missing value of ``s`` and broadcast the results (NA stays NA)."""
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    results = np.empty(len(uniques) + 1, dtype=object)
    results[:-1] = [func(u) for u in uniques]
    results[-1] = None
    out = pd.Series(results[codes], index=s.index)
    return out if dtype is object else out.astype(dtype)


def factorized(raw: pd.Series, func: Callable[[Any], tuple[Any, ...]], width: int) -> list[np.ndarray]:
    """Apply ``func`` (returning a ``width``-tuple) once per distinct cell; one object array per element."""
    codes, uniques = pd.factorize(raw, use_na_sentinel=True)
    results = [func(u) for u in uniques] + [(None,) * width]
    return [np.array([r[i] for r in results], dtype=object)[codes] for i in range(width)]


def _clean_number_text(s: pd.Series, decimal_comma: bool) -> pd.Series:
    """Strip currency symbols, grouping separators and accounting parentheses; leave plain numeric text."""
    s = s.str.strip()
    negative = s.str.startswith("(") & s.str.endswith(")")
    s = s.str.replace(r"^\((.*)\)$", r"\1", regex=True)
    s = s.str.replace(_CURRENCY_CHARS, "", regex=True)
    if decimal_comma:
        s = s.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
    else:
        s = s.str.replace(r"(?<=\d),(?=\d{3}(\D|$))", "", regex=True)
    s = s.where(~negative, "-" + s)
    return s.str.replace(r"^--", "", regex=True)


def _to_float(text: pd.Series) -> np.ndarray:
    """``pd.to_numeric`` as a float64 array (NaN where not a number), whatever string dtype comes in."""
    return pd.to_numeric(text.astype(object), errors="coerce").to_numpy(dtype="float64", na_value=np.nan)


def parse_number(s: pd.Series, *, decimal_comma: bool = False) -> tuple[pd.Series, pd.Series]:
    """Parse decimal numbers to float64; return ``(values, bad)``.

    Accepts plain and E-notation numbers, surrounding whitespace, currency symbols, ``1,234.5`` grouping,
    ``(12.5)`` accounting negatives and, with ``decimal_comma``, ``1.234,5``. Missing cells give NaN and are
    not bad; anything else that is not a finite number gives NaN and is bad.
    """
    s = _as_str(s).astype("string")
    if not decimal_comma:
        try:
            values = pc.cast(pa.array(s, from_pandas=True), pa.float64()).to_numpy(zero_copy_only=False)
            if np.isfinite(values[~np.isnan(values)]).all():
                values = pd.Series(values, index=s.index, dtype="float64")
                return values, pd.Series(False, index=s.index)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
    missing = null_mask(s)
    text = s.where(~missing)
    values = pd.Series(np.nan, index=s.index, dtype="float64")
    if not decimal_comma:
        values[:] = _to_float(text)
    retry = (text.notna() & values.isna()).to_numpy(dtype=bool)
    if retry.any():
        cleaned = _clean_number_text(text[retry], decimal_comma)
        plain = cleaned.str.fullmatch(_PLAIN_NUMBER).fillna(False).astype(bool)
        values[retry] = _to_float(cleaned.where(plain))
    values = values.astype("float64")
    values = values.where(np.isfinite(values))
    bad = values.isna() & ~missing
    return values, bad.astype(bool)


def _parse_unique_datetimes(
    uniques: pd.Series, timezone: str | None, fmt: str | None, dayfirst: bool
) -> pd.Series:
    """Parse distinct timestamp strings to UTC; NaT where unparseable or ambiguous in ``timezone``."""
    stripped = uniques.str.strip()
    has_offset = stripped.str.contains(_OFFSET_SUFFIX, regex=True).fillna(False).astype(bool)
    out = pd.Series(pd.NaT, index=uniques.index, dtype="datetime64[ns, UTC]")
    kwargs: dict[str, Any] = {"errors": "coerce", "dayfirst": dayfirst}
    if fmt is not None:
        kwargs["format"] = fmt
    else:
        kwargs["format"] = "ISO8601" if not dayfirst else None
    if has_offset.any():
        text = stripped[has_offset].str.replace(r"\s*(UTC|GMT)$", "+00:00", regex=True)
        parsed = _to_datetime(text, kwargs, utc=True)
        out.loc[has_offset] = parsed
    naive = ~has_offset
    if naive.any():
        parsed = _to_datetime(stripped[naive], kwargs, utc=False)
        if parsed.dt.tz is not None:
            parsed = parsed.dt.tz_convert("UTC")
        elif timezone is None:
            parsed = parsed.dt.tz_localize("UTC")
        else:
            parsed = parsed.dt.tz_localize(timezone, ambiguous="NaT", nonexistent="shift_forward")
            parsed = parsed.dt.tz_convert("UTC")
        out.loc[naive] = parsed
    return out


def _to_datetime(text: pd.Series, kwargs: dict[str, Any], *, utc: bool) -> pd.Series:
    """``pd.to_datetime`` with a fallback to per-format mixed parsing when the strict format fails outright."""
    parsed = pd.to_datetime(text, utc=utc, **kwargs)
    if kwargs.get("format") == "ISO8601" and parsed.isna().any():
        retry = parsed.isna()
        mixed = pd.to_datetime(text[retry], utc=utc, errors="coerce", format="mixed")
        parsed = parsed.astype(mixed.dtype) if parsed.dtype != mixed.dtype else parsed
        parsed.loc[retry] = mixed
    first, last = pd.Timestamp.min.ceil("s"), pd.Timestamp.max.floor("s")  # nanosecond times' range, 1677-2262
    if utc:
        first, last = first.tz_localize("UTC"), last.tz_localize("UTC")
    parsed = parsed.where((parsed >= first) & (parsed <= last))  # beyond it: unreadable, not a crash
    return parsed.astype("datetime64[ns, UTC]") if utc else parsed.astype("datetime64[ns]")


def parse_datetime(
    s: pd.Series, *, timezone: str | None = None, fmt: str | None = None, dayfirst: bool = False
) -> tuple[pd.Series, pd.Series]:
    """Parse timestamps to ``datetime64[ns, UTC]``; return ``(values, bad)``.

    Strings carrying an offset (``Z``, ``+02:00``, `` UTC``) are converted to UTC. Naive strings are read as
    local time in ``timezone`` (an IANA name) or as UTC when ``timezone`` is None; callers that must insist
    on a declared zone check that themselves. DST: a naive time that occurs twice (clocks going back) is
    ambiguous and comes back NaT and bad, so the row is rejected rather than silently shifted by an hour; a
    naive time inside the spring-forward gap cannot be read off a correct clock and is shifted forward to
    the first valid instant. ``fmt`` is a strptime format (e.g. ``"%m/%d/%Y"`` for Azure); without it ISO
    8601 is expected, with a mixed-format fallback. Parsing happens once per distinct value.
    """
    codes, uniques = factorize_present(_as_str(s))
    parsed_uniques = _parse_unique_datetimes(uniques, timezone, fmt, dayfirst)
    lookup = np.append(parsed_uniques.dt.tz_convert(None).to_numpy(dtype="datetime64[ns]"), np.datetime64("NaT"))
    out = pd.Series(lookup[codes], index=s.index).dt.tz_localize("UTC")
    bad = out.isna().to_numpy() & (codes >= 0)
    return out, pd.Series(bad, index=s.index)


def _tag_pairs(text: str) -> dict[str, str]:
    """``k=v, k=v`` / ``k:v; k:v`` text (CUR 2.0 map rendering and hand-written tags) as a dict."""
    body = text.strip().removeprefix("{").removesuffix("}").strip()
    out: dict[str, str] = {}
    for part in re.split(r"[,;]\s*(?=[^,;=:]+[=:])", body):
        match = re.match(r"\s*([^=:]+?)\s*[=:]\s*(.*)$", part)
        if match is None:
            return {}
        out[match.group(1).strip("'\"")] = match.group(2).strip().strip("'\"")
    return out


def _scalar(value: Any) -> str:
    """A tag value as text (JSON booleans as ``true``/``false``, as FOCUS writes key-only tags)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _normalise_tags(obj: Any) -> dict[str, str] | None:
    """A decoded JSON value as a tag dict: objects directly, GCP ``[{key, value}]`` lists as pairs."""
    if isinstance(obj, dict):
        return {str(k): _scalar(v) for k, v in obj.items()}
    if isinstance(obj, list) and all(isinstance(item, dict) and "key" in item for item in obj):
        return {str(item["key"]): _scalar(item.get("value")) for item in obj}
    return None


def parse_tag_text(text: Any) -> dict[str, str]:
    """One tag cell as a dict of strings; empty dict when the cell is empty or unreadable.

    Tries, in order: JSON object (FOCUS, Azure), JSON without the outer braces (Azure), GCP label lists
    (JSON or Python-repr with single quotes), then ``k=v, k=v`` map text (CUR 2.0 ``{team=llm}``).
    """
    if not isinstance(text, str) or not text.strip():
        return {}
    stripped = text.strip()
    candidates = [stripped]
    if not stripped.startswith(("{", "[")):
        candidates.append("{" + stripped + "}")
    if "'" in stripped and '"' not in stripped:
        candidates += [c.replace("'", '"') for c in candidates]
    for candidate in candidates:
        try:
            parsed = _normalise_tags(json.loads(candidate))
        except ValueError:
            continue
        if parsed is not None:
            return parsed
    return _tag_pairs(stripped)


def parse_tags(s: pd.Series) -> pd.Series:
    """Parse a column of tag cells to one dict per row (shared objects for equal cells; never NA)."""
    s = _as_str(s)
    parsed = map_unique(s, parse_tag_text)
    empty: dict[str, str] = {}
    return parsed.where(parsed.notna(), pd.Series([empty] * len(s), index=s.index, dtype=object))


def _lookup(tags: dict[str, str], keys_lower: Sequence[str]) -> str | None:
    """The value of the first of ``keys_lower`` present in ``tags`` (keys compared case-insensitively)."""
    lowered = {k.lower(): v for k, v in tags.items()}
    for key in keys_lower:
        value = lowered.get(key)
        if value is not None and value.strip() and value.strip().lower() not in NULL_TOKENS:
            return value.strip()
    return None


def tag_value(tags: pd.Series, keys: Sequence[str]) -> pd.Series:
    """The value of the first present key of ``keys`` (case-insensitive) per row, as strings; NA if none.

    ``tags`` is either the output of ``parse_tags`` (dicts) or a column of raw tag cells (strings); both are
    looked up once per distinct value.
    """
    keys_lower = [k.lower() for k in keys]
    if tags.dtype == object and len(tags) and isinstance(tags.iloc[0], dict):
        ids = np.fromiter((id(t) for t in tags), dtype=np.int64, count=len(tags))
        codes, unique_ids = pd.factorize(ids)
        first = pd.Series(np.arange(len(tags))).groupby(codes).first().to_numpy()
        values = np.array([_lookup(tags.iloc[i], keys_lower) for i in first] + [None], dtype=object)
        return pd.Series(values[codes], index=tags.index, dtype="string")
    return map_unique(_as_str(tags), lambda text: _lookup(parse_tag_text(text), keys_lower), dtype="string")


def _duration_seconds(text: str) -> float:
    """One ``[D-][HH:]MM:SS[.fff]`` duration (or plain seconds) in seconds; NaN when unreadable."""
    text = text.strip()
    if _PLAIN_NUMBER.match(text):
        return float(text)
    match = _DURATION.match(text)
    if match is None:
        return float("nan")
    days, hours, minutes, seconds = match.groups()
    return int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)


def parse_duration_s(s: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Parse Slurm-style durations to seconds (float64); return ``(values, bad)``.

    Accepts ``[D-]HH:MM:SS``, ``HH:MM:SS.fff``, ``MM:SS``, ``MM:SS.fff`` and plain seconds. Missing cells
    give NaN and are not bad.
    """
    s = _as_str(s)
    missing = null_mask(s)
    values = map_unique(s.where(~missing), _duration_seconds).astype("float64")
    bad = values.isna() & ~missing
    return values, bad.astype(bool)
