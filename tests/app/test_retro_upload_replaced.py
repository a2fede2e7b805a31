"""AppTest: an uploaded bill replaced in the uploader by a refused file keeps the uploaded bill's tiles, and one
removed with its × goes back to the sample and says so (issue 49). The browser replaces a file in two runs, one
without any file then the new file's; it removes one in the first alone, which the settle fragment follows with a
rerun (`dashboard.ui.retro_sources._left`)."""

from pathlib import Path

import pytest
from retro_page import open_retro
from shown_text import shown

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
AZURE = (SAMPLES / "azure_sample.csv").read_bytes()
PDF = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n"
HEADER_ONLY = (SAMPLES / "focus_sample.csv").read_bytes().split(b"\n")[0] + b"\n"
NONE = "(none)"
UPLOADER = "retro.billing_upload"


def _tiles(at) -> dict[str, str]:
    return {metric.label: metric.value for metric in at.metric}


def _data_line(at) -> str:
    return shown(next(block.value for block in at.markdown if " · change below" in block.value))


def _captions(at) -> list[str]:
    return [shown(caption.value) for caption in at.caption]


def _good_upload(app):
    at = open_retro(app)  # the bundled quarter: FOCUS bill, Slurm run export, plan and budget
    sample = _tiles(at)
    at.file_uploader(key=UPLOADER).set_value(("my_bill.csv", AZURE, "text/csv")).run()
    assert not at.exception and not at.error, [error.value for error in at.error]
    assert _tiles(at)["Rows"] == "166"  # every row of the Azure sample (167 lines with its header)
    assert at.selectbox(key="retro.runs").value == NONE  # the sample's run export went with the user's bill
    return at, sample


REFUSED = {"pdf-renamed-csv": PDF, "empty-csv": b"", "header-only-csv": HEADER_ONLY}


@pytest.mark.parametrize("refused", REFUSED)
def test_a_refused_file_replacing_an_uploaded_bill_keeps_the_uploaded_bill(app, refused):
    at, _ = _good_upload(app)
    good = _tiles(at)

    at.file_uploader(key=UPLOADER).set_value(None).run()  # the browser's run between the two files
    assert not at.exception and not at.error
    assert _tiles(at) == good
    assert _data_line(at).startswith("Uploaded: **my_bill.csv** · no run export · ")  # no sample read
    assert at.selectbox(key="retro.runs").value == NONE  # nothing of the sample brought back
    assert any(caption.startswith("**my_bill.csv** left the uploader: the view keeps **my_bill.csv** a moment")
               for caption in _captions(at)), _captions(at)

    at.file_uploader(key=UPLOADER).set_value(("export.csv", REFUSED[refused], "text/csv")).run()
    assert not at.exception
    assert ["export.csv" in shown(error.value) for error in at.error] == [True], refused
    assert _tiles(at) == good
    assert any("the view still shows **my_bill.csv** (uploaded)" in shown(info.value) for info in at.info)
    assert at.selectbox(key="retro.runs").value == NONE


def test_an_uploaded_bill_removed_with_its_x_goes_back_to_the_sample_and_says_so(app):
    at, sample = _good_upload(app)
    at.file_uploader(key=UPLOADER).set_value(None).run()  # the × : a run without the file ...
    assert _data_line(at).startswith("Uploaded: **my_bill.csv**")
    at.run()  # ... and the settle fragment's rerun, the uploader still empty
    assert not at.exception and not at.error
    line = _data_line(at)
    assert line.startswith("Bundled sample: **focus_sample.csv** + **slurm_sample.txt** · "), line
    assert "the sample's plan" in line and "the sample's budget" in line  # the sample's parts came back
    assert "Your upload **my_bill.csv** was removed, so the view is back on **focus_sample.csv**." in _captions(at)
    assert _tiles(at) == sample

    at.file_uploader(key=UPLOADER).set_value(("my_bill.csv", AZURE, "text/csv")).run()  # uploaded again
    assert _tiles(at)["Rows"] == "166"
    assert not any("was removed" in caption for caption in _captions(at))
