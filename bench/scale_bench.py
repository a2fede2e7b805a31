"""`make bench-scale`: the Retrospective at a large organisation's scale (not part of `make bench`: it writes GBs).

1. Generates a ROWS-row FOCUS export (default 100,000,000; the seeded distribution of the 1M-row file of
   ``bench.ingest_bench``) as Parquet parts of PART_ROWS rows, one part in memory at a time, and imports it into a
   workspace dataset with the streamed import.
2. Writes a CSV_ROWS-row FOCUS CSV (default 10,000,000, about 3.8 GB) and times a streamed import of it into the
   workspace against DuckDB's own ``read_csv`` of the same file (copied to Parquet), each in a fresh process:
   rows per second and peak resident memory (target < 2 GB).
3. On the ROWS-row dataset, each Retrospective tab's queries through the query layer (``dashboard.query``) against
   a hand-written DuckDB SQL query of the same aggregate, each in a fresh process: absolute times, their ratio
   (target <= 1.5) and peak memory (target < 3 GB).
4. The same tab queries on PySpark in local mode on a SPARK_ROWS-row dataset (default 1,000,000), beside DuckDB's.

Environment: ROWS, CSV_ROWS, SPARK_ROWS, PART_ROWS override the sizes (``ROWS=200000 CSV_ROWS=100000`` is a
quick smoke run); BENCH_SCALE_DIR the scratch folder (default /tmp/planner-bench-scale), which needs about
(ROWS × 65 + CSV_ROWS × 420) bytes free: 6.5 GB for the FOCUS parts and the dataset, 3.7 GB for the CSV and
0.5 GB for its imported copies. The folder is kept for a rerun (generated files are reused when their size matches).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from bench.ingest_bench import focus_table, plain

ROWS = 100_000_000
CSV_ROWS = 10_000_000
SPARK_ROWS = 1_000_000
PART_ROWS = 2_000_000
SCRATCH = Path("/tmp/planner-bench-scale")
STREAM_MEMORY_TARGET_GB = 2.0
QUERY_MEMORY_TARGET_GB = 3.0
RATIO_TARGET = 1.5
SPARK_MASTER = "local[2]"
RUNS = 2  # each query runs twice in its process; the faster run is reported (the first view warms the files)


def _size(name: str, default: int) -> int:
    text = os.environ.get(name, "").strip().replace("_", "")
    return int(text) if text else default


def write_parts(folder: Path, rows: int, part_rows: int = PART_ROWS, seed: int = 7) -> list[Path]:
    """``rows`` FOCUS rows as Parquet parts of ``part_rows`` (part i seeded ``seed + i``), one in memory at a time."""
    folder.mkdir(parents=True, exist_ok=True)
    parts = []
    for index, start in enumerate(range(0, rows, part_rows)):
        path = folder / f"part-{index:04d}.parquet"
        count = min(part_rows, rows - start)
        if not (path.exists() and pq.ParquetFile(path).metadata.num_rows == count):
            pq.write_table(focus_table(count, seed + index), path)
        parts.append(path)
    return parts


def write_csv(path: Path, rows: int, part_rows: int = PART_ROWS, seed: int = 7) -> None:
    """``rows`` FOCUS rows as one CSV with one header, written a part at a time."""
    if path.exists() and path.with_suffix(".rows").exists() and path.with_suffix(".rows").read_text() == str(rows):
        return
    writer = None
    with open(path, "wb") as sink:
        for index, start in enumerate(range(0, rows, part_rows)):
            table = plain(focus_table(min(part_rows, rows - start), seed + index))
            if writer is None:
                writer = pa_csv.CSVWriter(sink, table.schema)
            writer.write_table(table)
        writer.close()
    path.with_suffix(".rows").write_text(str(rows))


# Runs the task as the only child of a fresh, small process and prints the task's last line and its peak RSS
# (KiB). Linux carries a process's peak RSS across fork and exec, so a task started straight from this (large)
# process would report at least this process's peak.
_HELPER = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(done.stderr)
print(done.stdout.strip().splitlines()[-1] if done.returncode == 0 and done.stdout.strip() else "{}")
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(done.returncode)
"""


def _run_child(task: str, *args: str) -> dict:
    """A measured task in a fresh process: the figures it prints, with its peak resident memory in bytes."""
    command = [sys.executable, "-c", _HELPER, sys.executable, "-m", "bench.scale_bench", "child", task, *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{task} {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    figures, peak_kib = done.stdout.strip().splitlines()[-2:]
    return {**json.loads(figures), "peak_rss": int(peak_kib) * 1024}


def _child_import(csv_path: str, workspace: str, name: str) -> dict:
    os.environ["PLANNER_WORKSPACE_DIR"] = workspace
    from dashboard.workspace.imports import import_to_workspace

    started = time.perf_counter()
    info = import_to_workspace(csv_path, name, replace=True, stream_min_bytes=0)
    return {"seconds": time.perf_counter() - started, "rows": info.rows, "rows_read": info.report["rows_read"],
            "bytes": info.bytes}


def _child_duckdb_csv(csv_path: str, out: str) -> dict:
    import duckdb

    started = time.perf_counter()
    duckdb.sql(f"COPY (SELECT * FROM read_csv('{csv_path}')) TO '{out}' (FORMAT parquet)")
    seconds = time.perf_counter() - started
    rows = duckdb.sql(f"SELECT count(*) FROM read_parquet('{out}')").fetchone()[0]
    return {"seconds": seconds, "rows": rows}


def _child_tab(engine: str, workspace: str, name: str, tab: str, how: str) -> dict:
    os.environ["PLANNER_WORKSPACE_DIR"] = workspace
    from bench import scale_queries

    timings = []
    result = None
    for _ in range(RUNS):
        started = time.perf_counter()
        result = scale_queries.run(engine, name, tab, how)
        timings.append(time.perf_counter() - started)
    return {"seconds": min(timings), "first_seconds": timings[0], "result": scale_queries.fingerprint(result)}


def _child_tabs(engine: str, workspace: str, name: str) -> dict:
    from bench import scale_queries

    seconds, results = {}, {}
    for tab in scale_queries.TABS:
        timings = []
        for _ in range(RUNS):
            started = time.perf_counter()
            result = scale_queries.run(engine, name, tab, "layer")
            timings.append(time.perf_counter() - started)
        seconds[tab], results[tab] = min(timings), scale_queries.fingerprint(result)
    return {"seconds": seconds, "result": results}


def _cpu_s() -> float:
    """CPU seconds of this process so far, all its threads (the engine's too)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def _timed_import(parts: str, name: str) -> tuple[dict, object]:
    """A streamed import of the Parquet parts: its wall and CPU seconds (on a shared machine the CPU seconds are the
    work, the wall seconds also the wait) and its metadata."""
    from dashboard.workspace import imports

    started, started_cpu = time.perf_counter(), _cpu_s()
    info = imports.import_to_workspace(parts, name, replace=True, stream_min_bytes=0)
    return {"seconds": time.perf_counter() - started, "cpu_seconds": _cpu_s() - started_cpu}, info


def _child_import_rollups(parts: str, workspace: str, name: str) -> dict:
    """The import as it runs, with the seconds spent after the last row is written (``imports._finish``: the
    rollups' sums summed, written and proven)."""
    os.environ["PLANNER_WORKSPACE_DIR"] = workspace
    from dashboard.workspace import imports

    finish = imports._finish
    spent, spent_cpu = [], []

    def timed(*args, **kwargs):
        started, started_cpu = time.perf_counter(), _cpu_s()
        try:
            return finish(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)
            spent_cpu.append(_cpu_s() - started_cpu)

    imports._finish = timed
    seconds, info = _timed_import(parts, name)
    return {**seconds, "finish_seconds": sum(spent), "finish_cpu_seconds": sum(spent_cpu),
            "rows": info.rows, "rollup_rows": sum(entry["rows"] for entry in info.rollups),
            "rollups": {entry["name"]: entry["rows"] for entry in info.rollups}}


def _child_import_bare(parts: str, workspace: str, name: str) -> dict:
    """The same import without sorting, rollups or proofs: its rows written unsorted (in the same row groups), no
    sums taken, nothing built after the last row."""
    os.environ["PLANNER_WORKSPACE_DIR"] = workspace
    from dashboard.workspace import imports
    from dashboard.workspace.writer import MonthWriter

    imports._writer = lambda folder, prefix, partials: MonthWriter(folder, prefix)
    imports._finish = lambda *args, **kwargs: []
    seconds, info = _timed_import(parts, name)
    return {**seconds, "rows": info.rows}


def _child_questions(workspace: str, name: str) -> dict:
    from bench.scale_questions import measure

    return measure(workspace, name)


def _child_views(workspace: str, name: str) -> dict:
    from bench.scale_views import measure

    return measure(workspace, name)


CHILDREN = {"import": _child_import, "duckdb-csv": _child_duckdb_csv, "tab": _child_tab, "tabs": _child_tabs,
            "import-rollups": _child_import_rollups, "import-bare": _child_import_bare, "questions": _child_questions,
            "views": _child_views}


def child(task: str, *args: str) -> None:
    """The body of a measured child process."""
    if task in ("tab", "tabs"):
        from bench import scale_queries

        scale_queries.prepare(args[0], args[1], args[2])
    print(json.dumps(CHILDREN[task](*args)))


def _gb(value: float) -> str:
    return f"{value / 1e9:.2f}"


def import_dataset(parts: Path, workspace: Path, name: str, rows: int) -> None:
    """The Parquet parts as a workspace dataset (streamed), unless it is there with ``rows`` rows."""
    os.environ["PLANNER_WORKSPACE_DIR"] = str(workspace)
    from dashboard.workspace import datasets
    from dashboard.workspace.imports import import_to_workspace

    try:
        if datasets.metadata(name).rows == rows:
            return
    except datasets.DatasetError:
        pass
    import_to_workspace(parts, name, replace=True, stream_min_bytes=0)


def stream_figures(scratch: Path, workspace: Path, csv_rows: int, part_rows: int) -> None:
    """Streamed import of a CSV against DuckDB's read_csv of it: rows/s and peak memory."""
    csv_path = scratch / f"focus_{csv_rows}.csv"
    write_csv(csv_path, csv_rows, part_rows)
    print(f"scale_csv_rows: {csv_rows:,}")
    print(f"scale_csv_gb: {_gb(csv_path.stat().st_size)}")
    streamed = _run_child("import", str(csv_path), str(workspace), "csv-import")
    out = scratch / "duckdb_read_csv.parquet"
    duck = _run_child("duckdb-csv", str(csv_path), str(out))
    out.unlink(missing_ok=True)
    assert streamed["rows_read"] == duck["rows"] == csv_rows, (streamed, duck)
    print(f"scale_stream_import_seconds: {streamed['seconds']:.1f}")
    print(f"scale_stream_import_rows_per_s: {csv_rows / streamed['seconds']:,.0f}")
    print(f"scale_duckdb_read_csv_seconds: {duck['seconds']:.1f}")
    print(f"scale_duckdb_read_csv_rows_per_s: {csv_rows / duck['seconds']:,.0f}")
    print(f"scale_stream_import_vs_duckdb_ratio: {streamed['seconds'] / duck['seconds']:.2f} (time; no target)")
    print(f"scale_stream_import_peak_rss_gb: {_gb(streamed['peak_rss'])} (target < {STREAM_MEMORY_TARGET_GB})")
    print(f"scale_duckdb_read_csv_peak_rss_gb: {_gb(duck['peak_rss'])}")


def query_figures(workspace: Path, name: str, rows: int) -> None:
    """Each tab's queries through the layer against the hand-written SQL on DuckDB, each in its own process."""
    from bench import scale_queries

    print(f"scale_rows: {rows:,}")
    for tab in scale_queries.TABS:
        layer = _run_child("tab", "duckdb", str(workspace), name, tab, "layer")
        sql = _run_child("tab", "duckdb", str(workspace), name, tab, "sql")
        tab = scale_queries.slug(tab)
        print(f"scale_{tab}_layer_seconds: {layer['seconds']:.2f} (first view {layer['first_seconds']:.2f})")
        print(f"scale_{tab}_sql_seconds: {sql['seconds']:.2f} (first view {sql['first_seconds']:.2f})")
        print(f"scale_{tab}_ratio: {layer['seconds'] / sql['seconds']:.2f} (target <= {RATIO_TARGET})")
        print(f"scale_{tab}_peak_rss_gb: {_gb(layer['peak_rss'])} (target < {QUERY_MEMORY_TARGET_GB}; hand SQL "
              f"{_gb(sql['peak_rss'])})")


def engine_figures(workspace: Path, name: str, rows: int, spark: str) -> None:
    """The same tab queries on DuckDB and on PySpark in local mode, each engine in one process."""
    print(f"spark_rows: {rows:,}")
    if not spark:
        print("spark_skipped: no java on PATH (Spark needs a JVM: apt-get install openjdk-17-jre-headless)")
        return
    duck = _run_child("tabs", "duckdb", str(workspace), name)
    other = _run_child("tabs", spark, str(workspace), name)
    from bench.scale_queries import slug

    for tab, seconds in duck["seconds"].items():
        same = "same shapes" if duck["result"][tab] == other["result"][tab] else "SHAPES DIFFER"
        print(f"spark_{slug(tab)}_seconds: duckdb {seconds:.2f}, spark {other['seconds'][tab]:.2f} ({same})")


def main() -> None:
    """Generate what is missing under the scratch folder, then print every figure."""
    rows, csv_rows = _size("ROWS", ROWS), _size("CSV_ROWS", CSV_ROWS)
    spark_rows, part_rows = _size("SPARK_ROWS", SPARK_ROWS), _size("PART_ROWS", PART_ROWS)
    scratch = Path(os.environ.get("BENCH_SCALE_DIR", "").strip() or SCRATCH)
    workspace = scratch / "workspace"
    scratch.mkdir(parents=True, exist_ok=True)
    print(f"scale_scratch: {scratch} ({_gb(shutil.disk_usage(scratch).free)} GB free; needs about "
          f"{_gb(rows * 65 + csv_rows * 420)} GB)")
    started = time.perf_counter()
    write_parts(scratch / f"focus_parts_{rows}", rows, part_rows)
    import_dataset(scratch / f"focus_parts_{rows}", workspace, f"focus-{rows}", rows)
    print(f"scale_generate_and_import_seconds: {time.perf_counter() - started:.0f}")
    stream_figures(scratch, workspace, csv_rows, part_rows)
    query_figures(workspace, f"focus-{rows}", rows)
    small = min(spark_rows, rows)
    write_parts(scratch / f"focus_parts_{small}", small, part_rows)
    import_dataset(scratch / f"focus_parts_{small}", workspace, f"focus-{small}", small)
    engine_figures(workspace, f"focus-{small}", small, SPARK_MASTER if shutil.which("java") else "")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "child":
        child(*sys.argv[2:])
    else:
        main()
