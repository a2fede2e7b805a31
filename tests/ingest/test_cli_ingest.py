"""`python -m dashboard ingest`: JSON summary keys, exit status 2 with one line on bad input."""

import json
import subprocess
import sys

import pytest

KEYS = [
    "format",
    "rows_read",
    "rows_used",
    "rows_excluded",
    "rows_rejected",
    "rejected_sample",
    "excluded_by_rule",
    "gpu_hours_total",
    "cost_total",
    "currency",
    "period_start",
    "period_end",
    "spot_share_of_gpu_hours",
    "by_team",
    "warnings",
]


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "dashboard", "ingest", *args], capture_output=True, text=True
    )


def test_json_summary(data_dir):
    done = run(str(data_dir / "focus_small.csv"), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert list(summary) == KEYS
    assert summary["cost_total"] == pytest.approx(233.87)
    assert summary["period_start"] == "2025-06-01T00:00:00Z"
    assert summary["by_team"]["eval"] == {"gpu_hours": 8.0, "cost": 11.05}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.csv"], "no such file"),
        (["{data}/aws_cur2.csv", "--format", "nope"], "invalid choice"),
    ],
)
def test_errors_exit_2_one_line(data_dir, args, message):
    done = run(*[a.format(data=data_dir) for a in args])
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2


def test_unreadable_file_exit_2(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("Date,Amount\n2025-06-01,3\n")
    done = run(str(path))
    assert done.returncode == 2 and "--format generic" in done.stderr and "Traceback" not in done.stderr


def test_readable_table_labels_and_formats_every_figure(data_dir):
    done = run(str(data_dir / "focus_small.csv"))
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    # 233.87 USD in the app's format, with its label (the JSON keeps 233.87).
    assert rows["cost_total"].split()[1:] == ["$234", "Cost"]
    assert rows["rows_read"].endswith("Rows read")
