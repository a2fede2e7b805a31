"""`python -m dashboard workspace import|list|export`: datasets from a terminal, exit 2 with one line on bad input."""

import json
from pathlib import Path

import pandas as pd
import pytest

from dashboard import settings
from dashboard.cli import main

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
FOCUS = SAMPLES / "focus_sample.csv"


@pytest.fixture(autouse=True)
def workspace(tmp_path, monkeypatch):
    monkeypatch.setenv(settings.WORKSPACE_DIR, str(tmp_path / "workspace"))
    return tmp_path / "workspace"


def _hand_rows(team: str, first_day: str) -> int:
    """Rows of the FOCUS sample tagged ``team`` whose ChargePeriodStart is on or after ``first_day`` (UTC)."""
    raw = pd.read_csv(FOCUS, dtype=str, keep_default_na=False)
    teams = raw["Tags"].map(lambda cell: json.loads(cell).get("team") if cell else None)
    starts = pd.to_datetime(raw["ChargePeriodStart"], utc=True)
    return int(((teams == team) & (starts >= pd.Timestamp(first_day, tz="UTC"))).sum())


def test_import_list_and_export(capsys, tmp_path):
    assert main(["workspace", "import", str(FOCUS), "q2"]) == 0
    imported = json.loads(capsys.readouterr().out)
    assert (imported["rows"], imported["rows_read"], imported["format"]) == (242, 242, "focus")
    assert main(["workspace", "list"]) == 0
    listed = capsys.readouterr().out
    assert listed.startswith("q2: 242 rows") and listed.endswith("from focus_sample.csv, owner (no owner)\n")
    out = tmp_path / "view.csv"
    assert main(["workspace", "export", "q2", str(out), "--team", "llm-pretrain", "--start", "2025-05-01"]) == 0
    written = pd.read_csv(out)
    assert len(written) == _hand_rows("llm-pretrain", "2025-05-01") > 0
    assert set(written["team"]) == {"llm-pretrain"}
    assert main(["workspace", "export", "q2", str(out)]) == 0
    assert len(pd.read_csv(out)) == 242


@pytest.mark.parametrize(("argv", "message"), [
    (["workspace", "import", str(FOCUS), "../up"], "is not a dataset name"),
    (["workspace", "import", str(SAMPLES / "missing.csv"), "m"], "missing.csv does not exist"),
    (["workspace", "export", "nope", "out.csv"], "There is no dataset nope"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1


def test_a_taken_name_needs_replace(capsys):
    assert main(["workspace", "import", str(FOCUS), "q"]) == 0
    assert main(["workspace", "import", str(FOCUS), "q"]) == 2
    assert "already has a dataset q" in capsys.readouterr().err
    assert main(["workspace", "import", str(SAMPLES / "gcp_sample.csv"), "q", "--replace"]) == 0


def test_the_command_line_deletes_its_own_datasets_but_not_a_signed_in_users(capsys, workspace):
    from dashboard.identity import Identity
    from dashboard.workspace import datasets, owners
    from dashboard.workspace.imports import import_to_workspace

    alice = Identity("alice-sub", "alice@example.org", issuer="https://sso.example.org")
    import_to_workspace(FOCUS, "hers", actor=alice)
    assert main(["workspace", "import", str(FOCUS), "mine"]) == 0
    assert main(["workspace", "list"]) == 0
    assert "owner alice@example.org" in capsys.readouterr().out
    for argv in (["workspace", "delete", "hers"], ["workspace", "import", str(FOCUS), "hers", "--replace"]):
        assert main(argv) == 2
        error = capsys.readouterr().err
        assert "it belongs to alice@example.org" in error and error.count("\n") == 1
    assert main(["workspace", "delete", "mine"]) == 0
    assert datasets.names() == ["hers"]
    assert [(line.action, line.dataset, line.actor) for line in owners.audit()] == [
        ("import", "hers", "alice@example.org"), ("import", "mine", "(local user)"),
        ("refused delete", "hers", "(local user)"), ("refused replace", "hers", "(local user)"),
        ("delete", "mine", "(local user)")]
    assert main(["workspace", "delete", "mine"]) == 2
    assert "There is no dataset mine" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["workspace", "import", str(FOCUS), "tz"], ["ingest", str(FOCUS)]])
@pytest.mark.parametrize("zone", ["A" * 100_000, "Nowhere/" + "x" * 200, "a\x00b"])
def test_a_long_or_bad_timezone_is_quoted_in_a_short_preview(capsys, workspace, command, zone):
    """Issue 35, item 8: a 100 KB --timezone was echoed whole in the one-line message."""
    assert main([*command, "--timezone", zone]) == 2
    error = capsys.readouterr().err
    assert "is not a known time zone name" in error and error.count("\n") == 1
    assert len(error) < 400
    assert not workspace.exists() or not any(workspace.iterdir())


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux), a device that is always full")
def test_export_to_a_full_device_is_one_line(capsys):
    """Issue 35, item 7: `workspace export` to a full device gave a traceback."""
    assert main(["workspace", "import", str(FOCUS), "q2"]) == 0
    capsys.readouterr()
    assert main(["workspace", "export", "q2", "/dev/full"]) == 2
    error = capsys.readouterr().err
    assert "No space left on the device of /dev/full: the CSV is incomplete" in error and error.count("\n") == 1


def test_append_adds_the_rows_of_another_file(capsys):
    assert main(["workspace", "import", str(FOCUS), "q", "--append"]) == 2
    assert "no dataset q in the workspace" in capsys.readouterr().err  # nothing to append to
    assert main(["workspace", "import", str(FOCUS), "q"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert set(first["rollups"]) == {"daily_team", "daily_run", "daily_gpu", "hourly", "runs", "storage", "jobs"}
    assert main(["workspace", "import", str(SAMPLES / "gcp_sample.csv"), "q", "--append"]) == 0
    appended = json.loads(capsys.readouterr().out)
    assert main(["workspace", "import", str(SAMPLES / "gcp_sample.csv"), "gcp"]) == 0
    gcp_rows = json.loads(capsys.readouterr().out)["rows"]
    assert appended["rows"] == 242 + gcp_rows
    with pytest.raises(SystemExit):
        main(["workspace", "import", str(FOCUS), "q", "--append", "--replace"])  # one or the other
