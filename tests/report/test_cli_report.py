"""`python -m dashboard report`: writes the file and says where; bad input exits 2 with one line, no traceback."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = str(ROOT / "data" / "scenarios" / "default.json")


def write(path: Path, payload) -> str:
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return str(path)


def test_writes_the_report_and_prints_path_and_size(tmp_path, capsys):
    bundle = write(tmp_path / "bundle.json", [{"schema": 1, "name": "Half MFU", "mfu": 0.2},
                                              {"schema": 1, "name": "On B200", "gpu_type": "B200"}])
    out = tmp_path / "report.html"
    assert main(["report", DEFAULT, bundle, "-o", str(out), "--draws", "100", "--seed", "5", "--title", "Q3"]) == 0
    document = out.read_text(encoding="utf-8")
    assert document.startswith("<!DOCTYPE html>")
    assert "<title>Q3</title>" in document
    assert "Half MFU" in document and "On B200" in document
    assert "Monte Carlo 100 draws, seed 5" in document
    printed = capsys.readouterr().out
    assert str(out) in printed
    assert f"{out.stat().st_size:,} bytes" in printed
    assert "3 scenarios" in printed


@pytest.mark.parametrize(
    ("files", "output", "extra", "message"),
    [
        pytest.param(["missing.json"], "r.html", [], "missing.json: cannot read: No such file", id="unreadable"),
        pytest.param([("bad.json", "{ not json")], "r.html", [], "bad.json: not valid JSON", id="malformed"),
        pytest.param([("one.json", {"mfu": 1.5})], "r.html", [], "one.json: mfu = 1.5 is out of range",
                     id="bad-scenario"),
        pytest.param([("bundle.json", [{"schema": 1}, {"gpu_count": 0}])], "r.html", [],
                     "bundle.json: scenario 2 of 2: gpu_count = 0 is out of range", id="bad-second-in-bundle"),
        pytest.param([("empty.json", [])], "r.html", [], "empty.json: the file holds an empty array", id="empty"),
        pytest.param([("five.json", [{"schema": 1}] * 5)], "r.html", [],
                     "5 scenarios given: a report compares at most 4", id="five-scenarios"),
        pytest.param([("a.json", [{"schema": 1}] * 3), ("b.json", [{"schema": 1}] * 2)], "r.html", [],
                     "5 scenarios given: a report compares at most 4", id="five-across-files"),
        pytest.param([DEFAULT], "no/such/folder/r.html", [], "folder", id="missing-folder"),
        pytest.param([DEFAULT], ".", [], "cannot write", id="output-is-a-folder"),
        pytest.param([DEFAULT], "r.html", ["--draws", "0"], "--draws 0: use 1 to 1,000,000", id="draws"),
        pytest.param([DEFAULT], None, [], "the following arguments are required: -o/--output", id="no-output"),
    ],
)
def test_bad_input_exits_2_with_one_line(files, output, extra, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = [name if isinstance(name, str) else write(tmp_path / name[0], name[1]) for name in files]
    args = ["report", *paths, *extra] + ([] if output is None else ["-o", output])
    with pytest.raises(SystemExit) as raised:
        raise SystemExit(main(args))
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
    assert not (tmp_path / "r.html").exists()


def test_module_entry_point_reports_a_bad_bundle_without_traceback(tmp_path):
    bundle = write(tmp_path / "bundle.json", [{"schema": 1}, {"schema": 1, "mfu": "fast"}, {"schema": 1}])
    done = subprocess.run([sys.executable, "-m", "dashboard", "report", bundle, "-o", str(tmp_path / "r.html")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert "bundle.json: scenario 2 of 3: mfu = 'fast'" in done.stderr
    assert "Traceback" not in done.stderr


def test_author_and_app_url_reach_the_report(tmp_path):
    out = tmp_path / "report.html"
    assert main(["report", DEFAULT, "-o", str(out), "--draws", "20", "--author", "Ana & Bo",
                 "--app-url", "https://planner.internal"]) == 0
    document = out.read_text(encoding="utf-8")
    assert " by Ana &amp; Bo · 1 scenario" in document
    assert '<span class="link">https://planner.internal/</span>' in document  # the default scenario: no parameters
