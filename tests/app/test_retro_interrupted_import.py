"""AppTest: a bill replaced in the uploader by a file that is refused keeps the replaced bill's tiles, as the browser
does it (issue 49). The browser replaces a file in two runs: one without any upload (the bundled sample is chosen
again and its import starts) that the new file's rerun stops mid-import, then the new file's; the stopped import
must not lose the bill that was read last."""

from pathlib import Path

from retro_page import open_retro
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from dashboard import ingest
from dashboard.safe_text import markdown_text

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
PDF = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n"


def _tiles(at) -> dict[str, str]:
    return {metric.label: metric.value for metric in at.metric}


def test_a_refused_replacement_after_a_stopped_import_keeps_the_good_bill(app, monkeypatch):
    at = open_retro(app, {"retro.runs": "(none)"})
    uploader = at.file_uploader(key="retro.billing_upload")
    uploader.set_value(("my_bill.csv", (SAMPLES / "azure_sample.csv").read_bytes(), "text/csv")).run()
    assert not at.exception and not at.error, [error.value for error in at.error]
    good = _tiles(at)
    assert good["Rows"] == "166"  # every row of the Azure sample (167 lines with its header)

    real_import = ingest.import_bytes

    def stopped(*args, **kwargs):
        raise StopException()  # what a rerun does to the run it interrupts

    monkeypatch.setattr(ingest, "import_bytes", stopped)
    at.file_uploader(key="retro.billing_upload").set_value(None).run()  # the run without the file
    monkeypatch.setattr(ingest, "import_bytes", real_import)

    at.file_uploader(key="retro.billing_upload").set_value(("broken.csv", PDF, "text/csv")).run()
    assert not at.exception
    assert [markdown_text("broken.csv") in error.value for error in at.error] == [True]
    assert _tiles(at) == good
    assert any("the view still shows **my\\_bill\\.csv**" in info.value for info in at.info)
