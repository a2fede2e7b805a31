"""The benchmark engine: runs catalogue entries, prints one table, writes `bench/results.json` and
`docs/benchmarks.md`, and fails (exit 1) when a gated target is missed or a benchmark breaks.

Every figure is a ratio, measured / reference, the reference measured in the same run (the machines are shared),
and meets its target when the ratio is at most `target`.
"""

from __future__ import annotations

import json
import platform
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results.json"
DOCS = ROOT / "docs" / "benchmarks.md"


@dataclass(frozen=True)
class Measurement:
    """The measured figure and the reference's, in the benchmark's unit, and how they were taken."""

    value: float
    reference: float
    detail: str = ""


class Skipped(Exception):
    """Raised by a benchmark that cannot run here (e.g. no Chromium); the message says why."""


@dataclass(frozen=True)
class Benchmark:
    """One catalogue entry: `measure` returns the figure and its reference, both in `unit`."""

    name: str
    unit: str
    measures: str  # what the figure is, for the docs
    reference: str  # what it is compared with, measured in the same run
    target: float  # the highest ratio measured / reference that meets it
    gate: bool  # a miss fails the run
    measure: Callable[[], Measurement]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def result_of(benchmark: Benchmark) -> dict:
    """Run one benchmark; its results.json entry (`met` None when skipped or broken)."""
    entry = {"unit": benchmark.unit, "target": benchmark.target, "gate": benchmark.gate, "value": None,
             "reference": None, "ratio": None, "met": None, "detail": "", "timestamp": _now()}
    try:
        measured = benchmark.measure()
    except Skipped as why:
        return entry | {"skipped": str(why)}
    except Exception as error:  # a broken benchmark is reported, and the others still run
        traceback.print_exc()
        return entry | {"error": f"{type(error).__name__}: {error}"}
    ratio = measured.value / measured.reference
    return entry | {"value": measured.value, "reference": measured.reference, "ratio": ratio,
                    "met": ratio <= benchmark.target, "detail": measured.detail, "timestamp": _now()}


def outcome(entry: dict) -> str:
    if "skipped" in entry:
        return f"skipped: {entry['skipped']}"
    if "error" in entry:
        return "ERROR"
    return "pass" if entry["met"] else ("MISS" if entry["gate"] else "miss")


def failed(entry: dict) -> bool:
    return "error" in entry or (entry["gate"] and entry["met"] is False)


def _figure(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:,.3g} {unit}" if abs(value) < 100 else f"{value:,.0f} {unit}"


def table(results: dict[str, dict]) -> list[str]:
    """One row per benchmark: name, measured, reference, ratio, target, gate, outcome (a Markdown table)."""
    rows = [("benchmark", "measured", "reference", "ratio", "target", "gate", "result")]
    for name, entry in results.items():
        ratio = "-" if entry["ratio"] is None else f"{entry['ratio']:.2f}"
        rows.append((name, _figure(entry["value"], entry["unit"]), _figure(entry["reference"], entry["unit"]),
                     ratio, f"<= {entry['target']:g}", "yes" if entry["gate"] else "no", outcome(entry)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + " |"
             for row in rows]
    return [lines[0], "|" + "|".join("-" * (width + 2) for width in widths) + "|", *lines[1:]]


def write_results(path: Path, results: dict[str, dict], catalogue: Sequence[Benchmark]) -> dict:
    """Merge this run's entries into the file's (entries no longer catalogued dropped); the whole file's data."""
    known = json.loads(path.read_text())["benchmarks"] if path.exists() else {}
    merged = {b.name: results.get(b.name, known.get(b.name)) for b in catalogue}
    data = {"python": platform.python_version(), "platform": platform.platform(), "updated": _now(),
            "benchmarks": {name: entry for name, entry in merged.items() if entry is not None}}
    path.write_text(json.dumps(data, indent=2) + "\n")
    return data


def _last_run(entry: dict) -> str:
    if entry["ratio"] is None:
        return f"error: {entry['error']}" if "error" in entry else outcome(entry)
    return (f"{_figure(entry['value'], entry['unit'])} against {_figure(entry['reference'], entry['unit'])}, "
            f"{entry['ratio']:.2f}×, {outcome(entry)}; {entry['detail']}")


def docs(data: dict, catalogue: Sequence[Benchmark]) -> str:
    """docs/benchmarks.md: the last results' table and a paragraph per benchmark from its catalogue entry."""
    lines = ["# Benchmarks", "",
             "Written by `python -m bench` (`make bench`) from `bench/results.json`; do not edit by hand. Each",
             "figure is a ratio, measured / reference, the reference measured in the same run, since the machines",
             "are shared. A target is met when the ratio is at most the target; a missed *gated* target (or a",
             "benchmark that breaks) makes `make bench` fail. `python -m bench NAME...` runs some benchmarks,",
             "`python -m bench --list` lists them.", "",
             f"Last results: {data['updated']}, Python {data['python']}, {data['platform']}.", "",
             *table(data["benchmarks"]), ""]
    for benchmark in catalogue:
        entry = data["benchmarks"].get(benchmark.name)
        gated = "gated" if benchmark.gate else "not gated"
        lines += [f"## `{benchmark.name}`", "", f"{benchmark.measures} Compared with {benchmark.reference}. "
                  f"Target: at most {benchmark.target:g}× the reference ({gated}).", ""]
        if entry:
            lines += [f"Last run ({entry['timestamp']}): {_last_run(entry)}.", ""]
    lines += ["## `make bench-scale`", "",
              "Not part of `make bench`: `bench/scale_bench.py` generates a 100,000,000-row FOCUS dataset and a",
              "10,000,000-row CSV (about 11 GB) and prints the streamed import against DuckDB's `read_csv` and each",
              "Retrospective tab's queries against hand-written DuckDB SQL (`bench/scale_queries.py`). Its figures are",
              "printed, not written here.", ""]
    return "\n".join(lines)


def run(catalogue: Sequence[Benchmark], names: Iterable[str] = (), results_path: Path = RESULTS,
        docs_path: Path = DOCS) -> int:
    """Run the named benchmarks (all when none), print the table, write both files; 1 on a gated miss or error."""
    by_name = {b.name: b for b in catalogue}
    chosen = [by_name[name] for name in names] if names else list(catalogue)
    results = {}
    for benchmark in chosen:
        print(f"# {benchmark.name}", flush=True)
        results[benchmark.name] = result_of(benchmark)
    print("\n".join(table(results)))
    data = write_results(results_path, results, catalogue)
    docs_path.write_text(docs(data, catalogue))
    print(f"wrote {results_path} and {docs_path}")
    return int(any(failed(entry) for entry in results.values()))


def main(argv: Sequence[str], catalogue: Sequence[Benchmark]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--write-docs", action="store_true",
                        help=f"only rewrite {DOCS.relative_to(ROOT)} from {RESULTS.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    if args.list:
        for b in catalogue:
            print(f"{b.name:30} {'gated' if b.gate else 'not gated':9}  <= {b.target:<4g}  {b.unit:3} {b.measures}")
        return 0
    if args.write_docs:
        if not RESULTS.exists():
            parser.error(f"no {RESULTS.relative_to(ROOT)} yet: run the benchmarks first")
        DOCS.write_text(docs(json.loads(RESULTS.read_text()), catalogue))
        return 0
    unknown = sorted(set(args.names) - {b.name for b in catalogue})
    if unknown:
        parser.error(f"no benchmark named {', '.join(unknown)} (see --list)")
    return run(catalogue, args.names)
