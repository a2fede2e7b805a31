"""AppTest: the Retrospective opens a workspace dataset by name, shows its size and date range, and draws the tiles
of the same data uploaded; a dataset is queried where it lies, joined with a run export and its commitments
amortised as its upload is, on every tab; a large local file is imported into the workspace from the page;
downloads are capped."""

import csv
import dataclasses
import io
import json
import re
import shutil
from pathlib import Path

import ibis
import pandas as pd
import pytest
from app_fixtures import APP, TIMEOUT_S
from streamlit.testing.v1 import AppTest

from bench.ingest_bench import write_focus_csv
from dashboard import settings
from dashboard.format import count_sig, usd_sig
from dashboard.identity import Identity
from dashboard.safe_text import WORD_JOINER, markdown_text
from dashboard.ui import identity, workspace_view
from dashboard.workspace import datasets, owners
from dashboard.workspace.imports import delete_dataset, import_to_workspace

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
NONE = "(none)"
TIME_COLUMNS = {"focus_sample.csv": ("ChargePeriodStart", "ChargePeriodEnd"),
                "gcp_sample.csv": ("usage_start_time", "usage_end_time")}


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "workspace"
    monkeypatch.setenv(settings.WORKSPACE_DIR, str(folder))
    return folder


def _open(app, url):
    at = app.run()
    at.switch_page("app_pages/retro.py")
    for name, value in url.items():
        at.query_params[name] = value
    return at.run()


def _tiles(at) -> dict[str, str]:
    return {metric.label: metric.value for metric in at.metric}


def _unescaped(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


@pytest.mark.parametrize("name", ["focus_sample.csv", "gcp_sample.csv"])
def test_a_dataset_shows_its_size_and_range_and_the_tiles_of_the_same_upload(app, workspace, name):
    import_to_workspace(SAMPLES / name, "q2")
    at = _open(app, {"retro.dataset": "q2", "retro.runs": NONE})
    assert not at.exception and not at.error, [e.value for e in at.error]
    raw = pd.read_csv(SAMPLES / name, dtype=str)
    start_column, end_column = TIME_COLUMNS[name]
    first = pd.to_datetime(raw[start_column], utc=True).min().date().isoformat()
    last = pd.to_datetime(raw[end_column], utc=True).max().date().isoformat()
    line = next(_unescaped(c.value) for c in at.caption if c.value.startswith("Workspace dataset"))
    kilobytes = sum(p.stat().st_size for p in (workspace / "q2").rglob("*.parquet") if "usage" in p.parts) / 1e3
    assert f"{len(raw):,} rows" in line  # every sample row is used
    shown = re.search(r"rows · ([\d.]+) kB \(Parquet\)", line)  # some tens of kB, not "0.00 GB"
    assert shown and float(shown.group(1)) == pytest.approx(kilobytes, rel=5e-3)
    assert f"{first} to {last}" in line
    assert f"from {name}" in line
    from_dataset = _tiles(at)

    fresh = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
    uploaded = _open(fresh, {"retro.billing": NONE, "retro.runs": NONE})
    uploaded.file_uploader(key="retro.billing_upload").set_value((name, (SAMPLES / name).read_bytes(), "text/csv"))
    uploaded.run()
    assert not uploaded.exception
    assert not any(c.value.startswith("Workspace dataset") for c in uploaded.caption)
    assert from_dataset == _tiles(uploaded)
    assert from_dataset["Rows"] == f"{len(raw):,}"


@pytest.fixture
def quarter_in_data_folder(tmp_path, monkeypatch):
    """The bundled FOCUS quarter as `quarter.csv` in the data folder (`PLANNER_DATA_DIR`), for the path box."""
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(SAMPLES / "focus_sample.csv", data / "quarter.csv")
    monkeypatch.setenv(settings.DATA_DIR, str(data))


def test_import_to_workspace_from_the_page(app, workspace, quarter_in_data_folder):
    at = _open(app, {"retro.runs": NONE})
    at.text_input(key="retro.billing_path").set_value("quarter.csv").run()
    at.text_input(key="retro.workspace.name").set_value("from-page").run()
    at.button(key="retro.workspace.import").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert datasets.names() == ["from-page"]
    assert datasets.metadata("from-page").rows == 242
    assert at.selectbox(key="retro.dataset").value == "from-page"
    assert any(c.value.startswith("Workspace dataset") for c in at.caption)
    assert _tiles(at)["Rows"] == "242"


@pytest.mark.parametrize("bad", ["../outside", "a/b", ".hidden"])
def test_a_bad_dataset_name_is_a_message(app, workspace, quarter_in_data_folder, bad):
    at = _open(app, {"retro.runs": NONE})
    at.text_input(key="retro.billing_path").set_value("quarter.csv").run()
    at.text_input(key="retro.workspace.name").set_value(bad).run()
    at.button(key="retro.workspace.import").click().run()
    assert not at.exception
    assert any("is not a dataset name" in _unescaped(e.value) for e in at.error)
    assert not workspace.exists() or not any(workspace.iterdir())


def test_a_view_above_the_download_cap_says_so(app, workspace, tmp_path, monkeypatch):
    path = tmp_path / "focus_1500.csv"
    write_focus_csv(path, rows=1_500)
    import_to_workspace(path, "big")
    monkeypatch.setenv(settings.DOWNLOAD_MAX_ROWS, "1000")
    at = _open(app, {"retro.dataset": "big", "retro.runs": NONE})
    assert not at.exception
    note = next(_unescaped(c.value) for c in at.caption if "download holds" in c.value)
    assert "This view has 1,500 rows; the download holds the first 1,000 (PLANNER_DOWNLOAD_MAX_ROWS)" in note
    assert "python -m dashboard workspace export" in note


TAB_NAMES = ["Spend", "Attribution", "Plan vs actual", "Waste", "Load profile", "Purchase mix", "Unit costs"]
HOUR = "2025-04-{:02d}T{:02d}:00:00Z"
# (team, project, run, start, end, hours consumed, GPUs, pricing, EffectiveCost): five rows checked by hand below.
ROWS = [
    ("a", "p1", "r1", HOUR.format(1, 0), HOUR.format(1, 1), 1, 8, "Standard", 100.0),
    ("a", "p1", "r1", HOUR.format(2, 0), HOUR.format(2, 1), 1, 8, "Standard", 100.0),
    ("b", "p2", "r2", HOUR.format(3, 0), HOUR.format(3, 2), 2, 8, "Dynamic", 180.0),
    ("b", "p2", None, HOUR.format(1, 0), "2025-05-01T00:00:00Z", None, None, "Standard", 46.0),  # storage
    ("c", "p3", "r3", HOUR.format(10, 10), HOUR.format(10, 11), 1, 8, "Standard", 90.0),
]
GPU_HOURS = 8 + 8 + 16 + 8
COST_USD = 100 + 100 + 180 + 46 + 90
GPU_COST_USD = 100 + 100 + 180 + 90


def _write_focus(path: Path) -> None:
    header = ["ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "PricingCategory", "ServiceName", "ResourceId",
              "SkuPriceDetails", "ConsumedQuantity", "ConsumedUnit", "BilledCost", "EffectiveCost", "BillingCurrency",
              "Tags"]
    with path.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        for number, (team, project, run, start, end, hours, gpus, pricing, cost) in enumerate(ROWS):
            tags = {"team": team, "project": project} | ({"run_id": run} if run else {})
            sku = json.dumps({"InstanceType": "p5.48xlarge", "GpuCount": gpus}) if gpus else ""
            writer.writerow([start, end, "Usage", pricing, "Amazon Elastic Compute Cloud" if gpus else "Amazon S3",
                             f"res-{number}", sku, hours or "", "Hours" if hours else "", cost, cost, "USD",
                             json.dumps(tags)])


def _visit_every_tab(at) -> None:
    for tab in TAB_NAMES:
        at.session_state["retro.view"] = tab
        at.run()
        assert not at.exception, (tab, [e.value for e in at.exception])
        assert not at.error, (tab, [e.value for e in at.error])
        assert [t.label for t in at.tabs if len(t.children)] == [tab]


def test_a_dataset_is_queried_where_it_lies_with_every_tab(app, workspace, tmp_path):
    _write_focus(tmp_path / "quarter.csv")
    import_to_workspace(tmp_path / "quarter.csv", "small")
    at = _open(app, {"retro.dataset": "small", "retro.runs": NONE})
    assert not at.exception and not at.error, [e.value for e in at.error]
    held = next(iter(v for k, v in workspace_view.upload_store._HELD.items() if k[1] == "retro.billing_data"))
    assert isinstance(held.value.usage, ibis.expr.types.Table)  # never read into pandas
    queried = _tiles(at)
    assert queried["Rows"] == "5"
    assert queried["GPU-hours"] == count_sig(GPU_HOURS)
    assert queried["Cost"] == usd_sig(COST_USD)
    assert queried["Non-GPU cost"] == usd_sig(46.0)
    assert queried["$ per GPU-hour"] == usd_sig(GPU_COST_USD / GPU_HOURS)
    _visit_every_tab(at)


def test_a_filter_on_a_dataset_is_a_query(app, workspace, tmp_path):
    _write_focus(tmp_path / "quarter.csv")
    import_to_workspace(tmp_path / "quarter.csv", "small")
    at = _open(app, {"retro.dataset": "small", "retro.runs": NONE})
    assert at.multiselect(key="retro.teams").options == ["a", "b", "c"]
    at.multiselect(key="retro.teams").set_value(["b"]).run()
    assert not at.exception and not at.error
    tiles = _tiles(at)
    assert tiles["Rows"] == "2"
    assert tiles["GPU-hours"] == count_sig(16)
    assert tiles["Cost"] == usd_sig(180.0 + 46.0)
    _visit_every_tab(at)


def _tab_texts(at) -> dict[str, list[str]]:
    """Each tab's subheaders, metrics and captions (what its figures say), tab by tab; not the lines naming the
    source (a dataset's name, an upload's file name)."""
    texts = {}
    for tab in TAB_NAMES:
        at.session_state["retro.view"] = tab
        at.run()
        assert not at.exception and not at.error, (tab, [e.value for e in at.error])
        texts[tab] = ([s.value for s in at.subheader] + [f"{m.label}={m.value}" for m in at.metric]
                      + [c.value for c in at.caption if not c.value.startswith("Workspace dataset")
                         and "rows used of" not in c.value])
    return texts


def test_a_dataset_joins_and_amortises_as_its_upload_does(app, workspace):
    """GCP's commitment fees on their own lines (spread over the reserved usage) joined with the Slurm sample: the
    dataset path and the upload path give the same tiles and the same figures on every tab."""
    import_to_workspace(SAMPLES / "gcp_sample.csv", "gcp")
    at = _open(app, {"retro.dataset": "gcp"})
    at.selectbox(key="retro.runs").set_value("slurm_sample.txt").run()  # a bill of one's own starts without runs
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert not any("not joined" in _unescaped(w.value) for w in at.warning)
    assert "commitments amortised" in [m.delta for m in at.metric if m.label == "$ per GPU-hour"][0]
    from_dataset = _tiles(at), _tab_texts(at)

    fresh = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
    uploaded = _open(fresh, {"retro.billing": NONE})
    uploaded.file_uploader(key="retro.billing_upload").set_value(
        ("gcp_sample.csv", (SAMPLES / "gcp_sample.csv").read_bytes(), "text/csv"))
    uploaded.run()
    uploaded.selectbox(key="retro.runs").set_value("slurm_sample.txt").run()
    assert not uploaded.exception and not uploaded.error, [e.value for e in uploaded.error]
    assert (_tiles(uploaded), _tab_texts(uploaded)) == from_dataset


def test_the_download_of_a_query_streams_its_first_rows(monkeypatch):
    frame = pd.DataFrame({"team": ["=cmd", "b", "c", "d", "e"], "cost": [1.5, -2.0, 3.0, 4.0, 5.0]})
    table = ibis.duckdb.connect().create_table("view", frame)
    monkeypatch.setattr(workspace_view, "CSV_CHUNK_ROWS", 2)
    text = workspace_view._query_csv_file(table.order_by("cost"), 4)().decode("utf-8")
    assert text.splitlines() == ["team,cost", "b,-2.0", "'=cmd,1.5", "c,3.0", "d,4.0"]
    empty = workspace_view._query_csv_file(table.filter(table.cost > 9), 4)().decode("utf-8")
    assert empty.splitlines() == ["team,cost"]


def _download_through_streamlit(monkeypatch, open_page) -> str:
    """Press "Download this view (CSV)" as the server does: the deferred callable the page registered, run by
    Streamlit's media file manager (`execute_deferred`, which refused the spooled file the page returned before),
    and the stored file's bytes."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    registered = []
    add_deferred = MediaFileManager.add_deferred

    def record(self, *args, **kwargs):
        file_id = add_deferred(self, *args, **kwargs)
        registered.append((self, file_id, kwargs.get("file_name")))
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    at = open_page()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (manager, file_id, file_name), = [r for r in registered if (r[2] or "").startswith("retrospective_")]
    url = manager.execute_deferred(file_id)
    return manager._storage.get_file(url.rsplit("/", 1)[1]).content.decode("utf-8")


def test_download_this_view_serves_the_rows_through_the_page(app, monkeypatch):
    """Issue 35, item 8: the view's rows held in memory (the bundled FOCUS sample, 242 rows; a team's 59 or so)."""
    url = {"retro.runs": NONE, "retro.teams": "llm-pretrain"}
    text = _download_through_streamlit(monkeypatch, lambda: _open(app, url))
    frame = pd.read_csv(io.StringIO(text))
    raw = pd.read_csv(SAMPLES / "focus_sample.csv", dtype=str)
    assert 0 < len(frame) == raw["Tags"].str.contains('"team": "llm-pretrain"').sum() < len(raw)
    assert set(frame["team"]) == {"llm-pretrain"}


def test_download_this_view_of_a_dataset_through_the_page(app, workspace, tmp_path, monkeypatch):
    _write_focus(tmp_path / "quarter.csv")
    import_to_workspace(tmp_path / "quarter.csv", "small")
    text = _download_through_streamlit(monkeypatch, lambda: _open(app, {"retro.dataset": "small",
                                                                         "retro.runs": NONE}))
    frame = pd.read_csv(io.StringIO(text))
    assert len(frame) == len(ROWS)
    assert frame["cost"].sum() == pytest.approx(COST_USD)


def _import_from_page(at, name: str):
    at.text_input(key="retro.billing_path").set_value("quarter.csv").run()
    at.text_input(key="retro.workspace.name").set_value(name).run()
    return at.button(key="retro.workspace.import").click().run()


def test_a_second_session_importing_a_taken_name_is_asked(app, workspace, quarter_in_data_folder, tmp_path):
    """Issue 35, item 4: a second user's import no longer replaces the first user's dataset silently."""
    first = _import_from_page(_open(app, {"retro.runs": NONE}), "shared")
    assert not first.exception and not first.error
    before = datasets.metadata("shared")
    data = Path(settings.data_dir(False))
    _write_focus(data / "quarter.csv")  # the second user's file: 5 rows, not the sample's 242

    second = _import_from_page(_open(AppTest.from_file(str(APP), default_timeout=TIMEOUT_S), {"retro.runs": NONE}),
                               "shared")
    assert not second.exception and not second.error, [e.value for e in second.error]
    asked = [_unescaped(w.value) for w in second.warning if "already has a dataset" in _unescaped(w.value)]
    assert len(asked) == 1 and "242 rows from quarter.csv" in asked[0] and "Replace it with quarter.csv?" in asked[0]
    assert datasets.metadata("shared") == before  # nothing replaced yet
    second.run()  # the question stays until answered
    assert any("already has a dataset" in _unescaped(w.value) for w in second.warning)

    second.button(key="retro.workspace.cancel").click().run()
    assert not any("already has a dataset" in _unescaped(w.value) for w in second.warning)
    assert datasets.metadata("shared") == before

    second.button(key="retro.workspace.import").click().run()
    second.button(key="retro.workspace.replace").click().run()
    assert not second.exception and not second.error, [e.value for e in second.error]
    assert datasets.metadata("shared").rows == 5
    assert datasets.names() == ["shared"]
    assert _tiles(second)["Rows"] == "5"


def test_a_new_name_is_imported_without_a_question(app, workspace, quarter_in_data_folder):
    import_to_workspace(SAMPLES / "gcp_sample.csv", "other")
    at = _import_from_page(_open(app, {"retro.runs": NONE}), "fresh")
    assert not any("already has a dataset" in _unescaped(w.value) for w in at.warning)
    assert datasets.names() == ["fresh", "other"]


def test_a_full_disk_during_an_import_from_the_page_is_a_message(app, workspace, quarter_in_data_folder,
                                                                  monkeypatch):
    """Issue 35, item 7: ENOSPC from the writer: a message, and the workspace as it was (no build folder)."""
    import errno

    from dashboard.workspace import writer

    import_to_workspace(SAMPLES / "gcp_sample.csv", "kept")
    before = sorted(str(p.relative_to(workspace)) for p in workspace.rglob("*"))

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer.MonthWriter, "write", full)
    at = _import_from_page(_open(app, {"retro.runs": NONE}), "new")
    assert not at.exception
    assert any("The workspace's disk is full, so nothing was imported" in _unescaped(e.value) for e in at.error)
    assert sorted(str(p.relative_to(workspace)) for p in workspace.rglob("*")) == before


def test_a_streamed_import_from_the_page_keeps_a_sample_of_its_rejected_rows(app, workspace, tmp_path, monkeypatch):
    """Issue 35, item 8: the streamed import kept every rejected row in memory; now the first ones and the count."""
    from dashboard.ingest import stream
    from dashboard.workspace import imports

    data = tmp_path / "data"
    data.mkdir()
    write_focus_csv(data / "quarter.csv", rows=3_000, unreadable_every=3)  # 1,000 rows with "not a date"
    monkeypatch.setenv(settings.DATA_DIR, str(data))
    monkeypatch.setattr(imports, "STREAM_MIN_BYTES", 0)  # streamed, as a file of 64 MB or more is
    monkeypatch.setattr(stream, "ISSUES_SAMPLE_ROWS", 50)
    monkeypatch.setenv(settings.STREAM_BATCH_ROWS, "1000")
    at = _import_from_page(_open(app, {"retro.runs": NONE}), "streamed")
    assert not at.exception and not at.error, [e.value for e in at.error]
    info = datasets.metadata("streamed")
    assert info.streamed and info.report["rows_rejected"] == 1_000
    stored = datasets.report("streamed")
    assert len(stored.rejected) == 50 and stored.rows_rejected == 1_000
    used = info.report["rows_used"]
    assert any(f"{used:,} rows used of 3,000" in _unescaped(c.value) for c in at.caption)
    shown = " ".join(_unescaped(e.value) for kind in ("caption", "markdown", "info", "warning")
                     for e in getattr(at, kind))
    assert "1,000 rows were rejected; the first 50 are listed" in shown


def test_a_name_taken_by_another_session_during_the_import_is_asked_about(app, workspace, quarter_in_data_folder,
                                                                           monkeypatch):
    from dashboard.workspace import imports

    real, other = imports._switch, []

    def another_session_first(name, building, replace):
        if not other:
            other.append(None)
            other[0] = import_to_workspace(SAMPLES / "gcp_sample.csv", name)  # finishes while ours runs
        return real(name, building, replace)

    monkeypatch.setattr(imports, "_switch", another_session_first)
    at = _import_from_page(_open(app, {"retro.runs": NONE}), "raced")
    assert not at.exception
    assert datasets.metadata("raced") == other[0]  # the other session's import is kept
    asked = [_unescaped(w.value) for w in at.warning if "already has a dataset" in _unescaped(w.value)]
    assert len(asked) == 1 and "from gcp_sample.csv" in asked[0]
    assert len(list((workspace / datasets.VERSIONS).iterdir())) == 1  # our build was deleted


def test_a_dataset_replaces_the_samples_run_export_plan_and_budget(app, workspace):
    """Issue 34, item 3: a workspace dataset is a bill of the user's own, like an upload."""
    import_to_workspace(SAMPLES / "gcp_sample.csv", "gcp")
    at = _open(app, {})
    assert at.selectbox(key="retro.runs").value == "slurm_sample.txt"  # the bundled quarter first
    at.selectbox(key="retro.dataset").set_value("gcp").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="retro.runs").value == NONE
    assert at.number_input(key="retro.budget").value == 0.0
    assert "Runs without a bill" not in _tiles(at)
    at.session_state["retro.view"] = "Plan vs actual"
    at.run()
    assert at.selectbox(key="retro.plan").value == NONE


def test_a_replacement_within_the_same_second_is_a_new_dataset_key():
    """Imports record their time to the second; a dataset replaced within it must not read as the one before (the
    page would keep showing the old rows)."""
    first = datasets.Metadata(name="shared", source="quarter.csv", source_bytes=1,
                              imported_at="2026-12-04T03:58:00+00:00", rows=242, bytes=1, start=None, end=None,
                              months=[], streamed=False, build="a1")
    second = dataclasses.replace(first, rows=5, build="b2")
    assert workspace_view.dataset_key(first) != workspace_view.dataset_key(second)


# -- owners (issue 53) --------------------------------------------------------------------------------------------

IDP = "https://sso.example.org"
ALICE = Identity("alice-sub", "a_l*i[c]e@example.org", issuer=IDP)  # markdown characters: shown as text
BOB = Identity("bob-sub", "bob@example.org", issuer=IDP)
SAME_SUBJECT = Identity("alice-sub", "mallory@example.com", issuer="https://other-idp.example.com")


@pytest.fixture
def acting(monkeypatch):
    """Act as the given identity with sign-in on, as if `st.user` said so."""
    def act(who: Identity) -> None:
        monkeypatch.setattr(identity, "providers", lambda: ["mock"])
        monkeypatch.setattr(identity, "current", lambda: who)
        monkeypatch.setattr(identity, "display_name", lambda: None)
    return act


def test_a_dataset_shows_its_owner_by_email_as_text(app, workspace, acting):
    import_to_workspace(SAMPLES / "focus_sample.csv", "q2", actor=ALICE)
    acting(BOB)
    at = _open(app, {"retro.dataset": "q2", "retro.runs": NONE})
    assert not at.exception and not at.error, [e.value for e in at.error]
    line = next(c.value for c in at.caption if c.value.startswith("Workspace dataset"))
    assert line.endswith(f"owner: {markdown_text(ALICE.email)}")
    assert "alice-sub" not in line


@pytest.mark.parametrize("intruder", [BOB, SAME_SUBJECT])
def test_another_user_importing_over_a_dataset_is_refused_and_audited(app, workspace, quarter_in_data_folder,
                                                                       acting, intruder):
    """Issue 53: another user (or Alice's subject at another provider) no longer replaces Alice's dataset after a
    warning: the page refuses at once, names the owner, offers no Replace, and the refusal is an audit line."""
    import_to_workspace(SAMPLES / "gcp_sample.csv", "shared", actor=ALICE)
    before = datasets.metadata("shared")
    acting(intruder)
    at = _import_from_page(_open(app, {"retro.runs": NONE}), "shared")
    assert not at.exception
    refused = [_unescaped(e.value).replace(WORD_JOINER, "") for e in at.error]
    assert len(refused) == 1 and refused[0].startswith(
        f"You may not replace the dataset shared: it belongs to {ALICE.email}, and only its owner or an administrator")
    assert not [b for b in at.button if b.key == "retro.workspace.replace"]
    assert datasets.metadata("shared") == before
    assert [(line.action, line.actor_issuer, line.actor_subject) for line in owners.audit("shared")] == [
        ("import", IDP, "alice-sub"), ("refused replace", intruder.issuer, intruder.subject)]


def test_the_owner_replaces_her_dataset_after_the_question(app, workspace, quarter_in_data_folder, acting):
    import_to_workspace(SAMPLES / "gcp_sample.csv", "shared", actor=ALICE)
    acting(ALICE)
    at = _import_from_page(_open(app, {"retro.runs": NONE}), "shared")
    asked = [_unescaped(w.value).replace(WORD_JOINER, "") for w in at.warning
             if "already has a dataset" in _unescaped(w.value)]
    assert len(asked) == 1 and f"owner {ALICE.email}." in asked[0]
    at.button(key="retro.workspace.replace").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    info = datasets.metadata("shared")
    assert (info.rows, info.owner_email, info.imported_by_email) == (242, ALICE.email, ALICE.email)
    assert [line.action for line in owners.audit("shared")] == ["import", "replace"]


def test_the_owner_deletes_her_dataset_and_others_are_not_offered_to(app, workspace, acting):
    import_to_workspace(SAMPLES / "gcp_sample.csv", "hers", actor=ALICE)
    acting(BOB)
    at = _open(app, {"retro.dataset": "hers", "retro.runs": NONE})
    assert not at.exception and not [b for b in at.button if b.key == "retro.workspace.delete"]
    acting(ALICE)
    at.run()
    at.button(key="retro.workspace.delete").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert datasets.names() == []
    assert at.selectbox(key="retro.dataset").value == NONE
    assert [(line.action, line.actor_subject) for line in owners.audit("hers")] == [
        ("import", "alice-sub"), ("delete", "alice-sub")]


def test_a_delete_refused_meanwhile_is_a_message(app, workspace, acting, monkeypatch):
    """The button is offered to the owner; if the dataset changed hands before the click, the refusal is shown."""
    import_to_workspace(SAMPLES / "gcp_sample.csv", "hers", actor=ALICE)
    acting(ALICE)
    at = _open(app, {"retro.dataset": "hers", "retro.runs": NONE})
    delete_dataset("hers", actor=ALICE)
    import_to_workspace(SAMPLES / "gcp_sample.csv", "hers", actor=BOB)
    at.button(key="retro.workspace.delete").click().run()
    assert not at.exception
    assert any("hers was not deleted: You may not delete the dataset hers: it belongs to bob" in
               _unescaped(e.value).replace(WORD_JOINER, "") for e in at.error)
    assert datasets.metadata("hers").owner_email == "bob@example.org"
    assert [line.action for line in owners.audit("hers")][-1] == "refused delete"
