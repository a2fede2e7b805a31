"""AppTest: the Import page reads every bundled sample (Slurm's local times in UTC, assumed) and explains an
unreadable upload."""

from pathlib import Path

import pytest
from shown_text import shown

from dashboard import ingest
from dashboard.ingest.schema import ReadOptions, UnreadableFile
from dashboard.retro.summary import accounting, summarize
from dashboard.ui.sources import Imported, file_summary

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
SAMPLE_NAMES = sorted(p.name for p in SAMPLES.iterdir() if p.is_file())


def _metric(at, label):
    return next(m for m in at.metric if m.label == label)


def _open_import_page(app):
    at = app.run()
    return at.switch_page("app_pages/imports.py").run()


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_every_bundled_sample_imports(app, name):
    at = _open_import_page(app)
    at.selectbox(key="sample").set_value(name).run()  # Slurm's local times in UTC, assumed
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    usage, report = ingest.import_bytes((SAMPLES / name).read_bytes(), filename=name,
                                        options=ReadOptions(timezone="UTC"))
    assert _metric(at, "Rows read").value == f"{report.rows_read:,}"
    assert _metric(at, "Used").value == f"{report.rows_used:,}"
    assert _metric(at, "Rejected").value == f"{report.rows_rejected:,}"


def test_unreadable_upload_shows_the_import_message(app):
    at = _open_import_page(app)
    at.radio(key="import_source").set_value("Upload a file").run()
    junk = bytes(range(256)) * 8
    at.file_uploader(key="import_file").set_value(("export.csv", junk, "text/csv")).run()
    assert not at.exception
    with pytest.raises(UnreadableFile) as expected:
        ingest.import_bytes(junk, filename="export.csv")
    assert [shown(e.value) for e in at.error] == [str(expected.value)]


def test_slurm_times_are_read_as_utc_unless_changed(app):
    at = _open_import_page(app)
    at.selectbox(key="sample").set_value("slurm_sample.txt").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="import_zone").value == "UTC"
    assert any(shown(c.value).startswith("Slurm times read as UTC (assumed") for c in at.caption)


def test_uploaded_file_is_imported_and_summed(app):
    at = _open_import_page(app)
    at.radio(key="import_source").set_value("Upload a file").run()
    data = (Path(__file__).resolve().parents[1] / "data" / "ingest" / "focus_small.csv").read_bytes()
    at.file_uploader(key="import_file").set_value(("focus_small.csv", data, "text/csv")).run()
    assert not at.exception and not at.error
    # focus_small.csv: 8 rows, 34 GPU-hours (see tests/ingest/test_formats.py for the arithmetic).
    assert _metric(at, "Rows read").value == "8"
    assert _metric(at, "GPU-hours").value == "34"
    assert _metric(at, "Cost").value == "$234"  # 233.87 USD, as the CLI's table and the Retrospective write it


def test_a_run_log_s_cost_tile_says_unpriced_not_zero(app):
    at = _open_import_page(app)
    at.selectbox(key="sample").set_value("slurm_sample.txt").run()
    assert not at.exception and not at.error
    assert _metric(at, "Cost").value == "unpriced"


HEADERLESS_SACCT = (b"4103947|4103947|ub-hpc|general|anon|2015-06-26T13:57:00|2015-06-28T02:55:50|TIMEOUT|"
                    b"billing=256,cpu=32,node=1\n4103948|4103948|ub-hpc|general|anon|2015-06-26T13:57:00|"
                    b"2015-06-28T02:55:50|COMPLETED|billing=8,cpu=8,node=1\n")  # `sacct -P -n`, as XDMoD keeps it


def test_a_log_file_is_taken_and_a_headerless_sacct_log_is_explained(app):
    # sacct output is often saved as .log (XDMoD's accounting logs): the uploaders take it, so the import can
    # say what is wrong with it instead of the browser refusing the file type.
    at = _open_import_page(app)
    at.radio(key="import_source").set_value("Upload a file").run()
    assert ".log" in at.get("file_uploader")[0].proto.type
    at.file_uploader(key="import_file").set_value(("accounting.log", HEADERLESS_SACCT, "text/plain")).run()
    assert not at.exception
    with pytest.raises(UnreadableFile) as expected:
        ingest.import_bytes(HEADERLESS_SACCT, filename="accounting.log")
    assert "header line is missing" in str(expected.value)
    assert [shown(e.value) for e in at.error] == [str(expected.value)]
    at.switch_page("app_pages/retro.py").run()
    assert all(".log" in uploader.proto.type for uploader in at.get("file_uploader"))


def test_the_page_summary_of_a_file_has_totals_and_a_datasets_accounting_none():
    # focus_small.csv: 34 GPU-hours and $233.87 (tests/ingest/test_formats.py works them out by hand)
    usage, report = ingest.import_path(Path(__file__).resolve().parents[1] / "data" / "ingest" / "focus_small.csv")
    read = Imported("key", "focus_small.csv", usage, summarize(usage, report), report.rejected)
    assert (file_summary(read).gpu_hours_total, file_summary(read).cost_total) == (34.0, 233.87)
    queried = Imported("key", "bills", usage, accounting(report), report.rejected)  # a workspace dataset's
    with pytest.raises(TypeError, match="bills was not read into memory"):
        file_summary(queried)
