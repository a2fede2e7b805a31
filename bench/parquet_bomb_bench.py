"""Issue 53's Parquet bombs (`bench.parquet_bombs`) through the CLI as whole processes: how long each takes to be
refused and the process's peak resident memory, against the issue's targets (under 10 s, within the import budget,
`PLANNER_IMPORT_MEMORY_MB` at its default). The list and dictionary bombs go through `ingest`, the 380,000-column
file (over 64 MB) through `workspace import`, which streams it.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import parquet_bombs
from bench.harness import Measurement
from bench.served import ROOT
from dashboard import settings

TARGET_S = 10.0  # the "refused in under 10 s"

# A small parent that runs the command and reports its time, exit code, output and peak (RUSAGE_CHILDREN: the
# command's own, as this parent is small).
_RUN = """
import json, resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=600)
print(json.dumps({"seconds": time.perf_counter() - started, "exit": done.returncode,
                  "output": done.stdout + done.stderr,
                  "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / 1e6}))
"""

BOMBS = {  # name: (file name, generator, CLI command before the file, after it, what the refusal says)
    "list": ("list.parquet", parquet_bombs.list_bomb, ["ingest"], [], "list values"),
    "dictionary": ("dictionary.parquet", parquet_bombs.dictionary_bomb, ["ingest"], [], "decodes to about"),
    "wide": ("wide.parquet", parquet_bombs.wide_file, ["workspace", "import"], ["bomb"], "380,000 columns"),
}


@functools.cache
def refusal(name: str) -> dict:
    """One run of bomb ``name`` through the CLI: seconds, peak MB, the file's bytes; RuntimeError unless refused."""
    file_name, generate, before, after, phrase = BOMBS[name]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / file_name
        path.write_bytes(generate())
        env = {**os.environ, "PLANNER_WORKSPACE_DIR": str(Path(folder) / "workspace")}
        env.pop(settings.IMPORT_MEMORY_MB, None)
        command = [sys.executable, "-m", "dashboard", *before, str(path), *after]
        done = subprocess.run([sys.executable, "-c", _RUN, *command], cwd=ROOT, env=env, capture_output=True,
                              text=True, check=True)
        outcome = json.loads(done.stdout) | {"bytes": path.stat().st_size}
    if outcome["exit"] != 2 or phrase not in " ".join(outcome["output"].split()):
        raise RuntimeError(f"the {name} bomb was not refused as expected: {outcome['output'][-500:]}")
    return outcome


def _detail(name: str) -> str:
    outcome = refusal(name)
    command = " ".join(BOMBS[name][2])
    return f"`{command}` of the {outcome['bytes']:,}-byte {name} bomb, as a whole process, refused; one run"


def _seconds(name: str) -> Measurement:
    return Measurement(refusal(name)["seconds"], TARGET_S, _detail(name))


def _peak(name: str) -> Measurement:
    budget_mb = settings.LIMITS[settings.IMPORT_MEMORY_MB][0]
    return Measurement(refusal(name)["peak_mb"], budget_mb, _detail(name))


def list_bomb_refusal() -> Measurement:
    return _seconds("list")


def list_bomb_peak_memory() -> Measurement:
    return _peak("list")


def dictionary_bomb_refusal() -> Measurement:
    return _seconds("dictionary")


def dictionary_bomb_peak_memory() -> Measurement:
    return _peak("dictionary")


def wide_file_refusal() -> Measurement:
    return _seconds("wide")


def wide_file_peak_memory() -> Measurement:
    return _peak("wide")
