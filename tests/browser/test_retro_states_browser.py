"""Browser: states a user cannot fall into on the Retrospective (issue 49), in Chromium. For each way in (the samples,
a Slurm log alone, a W&B export alone, no data at all, each refused upload, the real Azure EA and Koku bills) every
tab opens with no exception, no error but the refusal's and no "nan" in the page's text; a refused upload after a
good one (a chosen sample, or an upload replaced in its uploader) keeps the good one's tiles, and an upload removed
with its × goes back to the sample and says so. One server; each state is a page load, an upload and a click on
each tab."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from real_exports import real_export

from dashboard.safe_text import WORD_JOINER

pytestmark = pytest.mark.browser

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
TABS = ["Spend", "Attribution", "Plan vs actual", "Waste", "Load profile", "Purchase mix", "Unit costs"]
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
HEADER_ONLY = (SAMPLES / "focus_sample.csv").read_bytes().split(b"\n")[0] + b"\n"
REFUSED = {"pdf-renamed-csv": PDF, "empty-csv": b"", "header-only-csv": HEADER_ONLY}
REFUSED_NAME = "export.csv"
REAL = {"azure-ea": ("microsoft__finops-toolkit/EA_ActualCost_Small.csv", "the Retrospective of a real Azure EA bill "
                     "is not tested in the browser"),
        "koku-cur": ("project-koku__koku/2023-06-01.csv", "the Retrospective of a real Koku CUR is not tested in the "
                     "browser")}
NONE = "%28none%29"  # "(none)" in a link
URLS = {"samples": "", "slurm-alone": f"?retro.billing={NONE}",
        "wandb-alone": f"?retro.billing={NONE}&retro.runs=wandb_sample.csv",
        "no-data": f"?retro.billing={NONE}&retro.runs={NONE}"}
STATES = [*URLS, *REFUSED, *REAL]
NAN = re.compile(r"\bnan\b", re.IGNORECASE)
EXCEPTION = '[data-testid="stException"]'
ERROR = '[data-testid="stAlertContentError"]'
INFO = '[data-testid="stAlertContentInfo"]'
METRIC = '[data-testid="stMetric"]'
UPLOADER = '[data-testid="stMain"] [data-testid="stFileUploader"]'
TEXT = '[data-testid="stMain"], [data-testid="stSidebar"]'
DATA_BOX = "Change data: samples, uploads, time zone, notes"


def _text(page: Page) -> str:
    """The text of the page's main area and sidebar as the browser lays it out (tiles, captions, alerts, labels)."""
    return "\n".join(page.locator(TEXT).all_inner_texts()).replace(WORD_JOINER, "")


def _upload_bill(page: Page, wait_for_app, name: str, data: bytes) -> None:
    """Upload ``data`` as the billing export (the first uploader, under "Change data") and wait for its run."""
    box = page.get_by_text(DATA_BOX)
    if page.locator(UPLOADER).first.is_hidden():
        box.click()
    uploader = page.locator(UPLOADER).first
    uploader.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": data}])
    expect(uploader.get_by_test_id("stFileChipName")).to_have_attribute("title", name)
    wait_for_app(page)


def _open(page: Page, app_url: str, wait_for_app, state: str) -> str | None:
    """The page in ``state`` on its first tab; the refused file's name (None: nothing refused). A refused upload
    comes over the samples, a real bill alone."""
    path = real_export(*REAL[state]) if state in REAL else None
    page.goto(f"{app_url}/retrospective{URLS.get(state, '' if state in REFUSED else f'?retro.runs={NONE}')}")
    wait_for_app(page)
    if state in REFUSED:
        _upload_bill(page, wait_for_app, REFUSED_NAME, REFUSED[state])
        expect(page.locator(ERROR).filter(has_text=REFUSED_NAME)).to_have_count(1)
        return REFUSED_NAME
    if path is not None:
        _upload_bill(page, wait_for_app, path.name, path.read_bytes())
        expect(page.get_by_text(f"Uploaded: {path.name}", exact=False).first).to_be_visible()
    return None


def _check(page: Page, where: str, refused: str | None) -> None:
    """No exception, no error but the refusal's and no "nan" in the page's text."""
    expect(page.locator(EXCEPTION), f"{where} shows an exception").to_have_count(0)
    errors = [text.replace(WORD_JOINER, "") for text in page.locator(ERROR).all_inner_texts()]
    assert len(errors) == (1 if refused else 0), (where, errors)
    assert all(refused and refused in error for error in errors), (where, errors)
    text = _text(page)
    assert NAN.findall(text) == [], (where, [line for line in text.splitlines() if NAN.search(line)])


@pytest.mark.parametrize("state", STATES)
def test_every_tab_opens_with_no_exception_no_stray_error_and_no_nan(page, app_url, wait_for_app, state):
    refused = _open(page, app_url, wait_for_app, state)
    _check(page, state, refused)
    if state == "no-data":  # nothing to draw: the page says what to do, and has no tabs
        expect(page.get_by_text("Choose or upload a billing export or a run export to begin")).to_be_visible()
        expect(page.get_by_role("tab")).to_have_count(0)
        return
    for tab in TABS:
        page.get_by_role("tab", name=tab, exact=True).click()
        wait_for_app(page)
        expect(page.get_by_role("tab", name=tab, exact=True)).to_have_attribute("aria-selected", "true")
        _check(page, f"{tab} of {state}", refused)


def _tiles(page: Page) -> list[str]:
    return [text.replace(WORD_JOINER, "") for text in page.locator(METRIC).all_inner_texts()]


def test_a_refused_upload_after_a_good_one_keeps_the_good_one_s_tiles(page, app_url, wait_for_app):
    # The good bill is a chosen sample: a file replaced in the uploader goes through a run without it, whose overlap
    # with the new file's run is timing (tests/app/test_retro_interrupted_import.py covers that path).
    page.goto(f"{app_url}/retrospective?retro.billing=azure_sample.csv&retro.runs={NONE}")
    wait_for_app(page)
    good = _tiles(page)
    assert "Rows\n\n166" in good, good  # every row of the Azure sample (167 lines with its header)

    _upload_bill(page, wait_for_app, "broken.csv", PDF)
    expect(page.locator(ERROR).filter(has_text="broken.csv")).to_have_count(1)
    kept = page.locator(INFO).filter(has_text="the view still shows")
    expect(kept).to_have_count(1)
    assert "the view still shows azure_sample.csv (bundled sample)" in kept.inner_text().replace(WORD_JOINER, "")
    assert _tiles(page) == good
    expect(page.locator(EXCEPTION)).to_have_count(0)


def _upload_good_bill(page: Page, app_url: str, wait_for_app) -> list[str]:
    """The bundled quarter with the Azure sample uploaded as the user's bill; its tiles."""
    page.goto(f"{app_url}/retrospective")
    wait_for_app(page)
    _upload_bill(page, wait_for_app, "my_bill.csv", (SAMPLES / "azure_sample.csv").read_bytes())
    expect(page.get_by_text("Uploaded: my_bill.csv · no run export", exact=False).first).to_be_visible()
    wait_for_app(page)
    good = _tiles(page)
    assert "Rows\n\n166" in good, good  # every row of the Azure sample (167 lines with its header)
    return good


@pytest.mark.parametrize("refused", REFUSED)
def test_a_refused_file_replacing_an_uploaded_bill_keeps_the_uploaded_bill(page, app_url, wait_for_app, refused):
    # The uploader goes through a run without any file between the two (paced, it completes): it keeps the upload.
    good = _upload_good_bill(page, app_url, wait_for_app)
    _upload_bill(page, wait_for_app, REFUSED_NAME, REFUSED[refused])
    expect(page.locator(ERROR).filter(has_text=REFUSED_NAME)).to_have_count(1)
    kept = page.locator(INFO).filter(has_text="the view still shows")
    expect(kept).to_have_count(1)
    assert "the view still shows my_bill.csv (uploaded)" in kept.inner_text().replace(WORD_JOINER, "")
    assert _tiles(page) == good
    assert "Bundled sample" not in _text(page)
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_an_uploaded_bill_removed_with_its_x_goes_back_to_the_sample_and_says_so(page, app_url, wait_for_app):
    page.goto(f"{app_url}/retrospective")
    wait_for_app(page)
    sample = _tiles(page)
    _upload_good_bill(page, app_url, wait_for_app)
    page.locator(UPLOADER).first.get_by_test_id("stFileChipDeleteBtn").locator("button").click()
    expect(page.get_by_text("Your upload my_bill.csv was removed, so the view is back on focus_sample.csv.",
                            exact=False)).to_be_visible()
    wait_for_app(page)
    expect(page.get_by_text("Bundled sample: focus_sample.csv + slurm_sample.txt", exact=False)).to_be_visible()
    assert _tiles(page) == sample
    expect(page.locator(ERROR)).to_have_count(0)
    expect(page.locator(EXCEPTION)).to_have_count(0)
