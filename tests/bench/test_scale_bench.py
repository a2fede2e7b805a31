"""`make bench-scale` at a tiny size: every step runs and prints its figures (no timing is asserted)."""

import os
import re
import subprocess
import sys
from pathlib import Path

from bench import scale_queries

ROOT = Path(__file__).resolve().parents[2]


def test_the_scale_bench_runs_at_a_tiny_size(tmp_path):
    env = {**os.environ, "ROWS": "20000", "CSV_ROWS": "5000", "SPARK_ROWS": "4000", "PART_ROWS": "8000",
           "BENCH_SCALE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bench.scale_bench"], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    assert figures["scale_rows"] == "20,000"
    assert figures["scale_csv_rows"] == "5,000"
    assert re.fullmatch(r"[\d.]+ \(target < 2\.0\)", figures["scale_stream_import_peak_rss_gb"])
    for tab in map(scale_queries.slug, scale_queries.TABS):
        for figure in ("layer_seconds", "sql_seconds", "ratio", "peak_rss_gb"):
            assert f"scale_{tab}_{figure}" in figures, (tab, figure)
        assert f"spark_{tab}_seconds" in figures or "spark_skipped" in figures
        if f"spark_{tab}_seconds" in figures:
            assert figures[f"spark_{tab}_seconds"].endswith("(same shapes)"), (tab, figures[f"spark_{tab}_seconds"])
    # Each dataset name links to its version under the hidden `.versions` folder.
    datasets = sorted(p.name for p in (tmp_path / "workspace").iterdir() if not p.name.startswith("."))
    assert datasets == ["csv-import", "focus-20000", "focus-4000"]
    assert len(list((tmp_path / "focus_parts_20000").glob("*.parquet"))) == 3  # 8,000 + 8,000 + 4,000 rows
