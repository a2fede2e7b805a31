"""AppTest: states a user cannot fall into on the Retrospective (issue 49). For each way in (the samples, a Slurm
log alone, a W&B export alone, each refused upload, the real Azure EA and Koku bills, which have no GPU rows) every
tab opens with no exception, no error but the refusal's and no "nan" in the page's text; with no bill Plan vs
actual compares GPU-hours and says why; a refused upload after a good one keeps the good one's tiles; Waste never
says "No waste found" beside waste it found in GPU-hours; a bill without GPU rows says so in one line."""

import re
from pathlib import Path

import pytest
from real_exports import real_export
from retro_page import leaves, open_retro

from dashboard.figures.retro_gap import NO_WASTE
from dashboard.safe_text import markdown_text

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
NONE = "(none)"
TABS = ["Spend", "Attribution", "Plan vs actual", "Waste", "Load profile", "Purchase mix", "Unit costs"]
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
HEADER_ONLY = (SAMPLES / "focus_sample.csv").read_bytes().split(b"\n")[0] + b"\n"
REFUSED = {"pdf-renamed-csv": PDF, "empty-csv": b"", "header-only-csv": HEADER_ONLY}
NAN = re.compile(r"\bnan\b", re.IGNORECASE)
NO_GPU_ROWS = "No GPU-hours in this view"




def _texts(at) -> list[str]:
    """Every text the page shows (values, labels, help and captions of its elements; not the tables' cells)."""
    found = []
    for node in (*leaves(at.main), *leaves(at.sidebar)):
        for name in ("value", "label", "body", "delta", "help"):
            text = getattr(node, name, None) if name != "value" or node.type != "dataframe" else None
            if isinstance(text, str):
                found.append(text)
    return found


def _tiles(at) -> dict[str, str]:
    return {metric.label: metric.value for metric in at.metric}


def _upload(at, side: str, name: str, data: bytes):
    at.file_uploader(key=f"retro.{side}_upload").set_value((name, data, "text/csv")).run()
    return at


def _state(app, state: str):
    """The page in ``state``, on its first tab, and the error the state itself gives (None: none)."""
    if state == "samples":
        return open_retro(app), None
    if state == "slurm-alone":
        return open_retro(app, {"retro.billing": NONE}), None
    if state == "wandb-alone":
        return open_retro(app, {"retro.billing": NONE, "retro.runs": "wandb_sample.csv"}), None
    if state in REFUSED:
        return _upload(open_retro(app), "billing", "export.csv", REFUSED[state]), "export.csv"
    path = real_export(*REAL[state])
    return _upload(open_retro(app, {"retro.runs": NONE}), "billing", path.name, path.read_bytes()), None


REAL = {"azure-ea": ("microsoft__finops-toolkit/EA_ActualCost_Small.csv", "the Retrospective of a real Azure EA bill "
                     "is not tested"),
        "koku-cur": ("project-koku__koku/2023-06-01.csv", "the Retrospective of a real Koku CUR is not tested")}
STATES = ["samples", "slurm-alone", "wandb-alone", *REFUSED, *REAL]


@pytest.mark.parametrize("state", STATES)
def test_every_tab_opens_with_no_exception_no_stray_error_and_no_nan(app, state):
    at, refused = _state(app, state)
    for tab in TABS:
        at.session_state["retro.view"] = tab
        at.run()
        assert not at.exception, (tab, at.exception)
        errors = [error.value for error in at.error]
        assert all(refused and markdown_text(refused) in error for error in errors), (tab, errors)
        assert len(errors) == (1 if refused else 0), (tab, errors)
        texts = [text for text in _texts(at) if NAN.search(text)]
        assert texts == [], (tab, texts)


@pytest.mark.parametrize(("url", "runs"), [
    pytest.param({"retro.billing": NONE}, "slurm_sample.txt", id="slurm-alone"),
    pytest.param({"retro.billing": NONE, "retro.runs": "wandb_sample.csv"}, "wandb_sample.csv", id="wandb-alone"),
])
def test_with_no_bill_plan_vs_actual_compares_gpu_hours_and_says_why(app, url, runs):
    at = open_retro(app, url | {"retro.view": "Plan vs actual"})
    assert not at.exception and not at.error
    assert any(warning.value.startswith("No billing export is loaded") for warning in at.warning)
    assert "Unit: GPU-hours (no bill)" in [caption.value for caption in at.caption]
    assert not at.get("segmented_control") or all(c.key != "retro.gap_unit" for c in at.get("segmented_control"))
    assert [box.key for box in at.get("plotly_chart") if "retro.gap" in box.proto.id]


def test_a_refused_upload_after_a_good_one_keeps_the_good_one_s_tiles(app):
    at = open_retro(app, {"retro.runs": NONE})
    _upload(at, "billing", "my_bill.csv", (SAMPLES / "azure_sample.csv").read_bytes())
    good = _tiles(at)
    assert not at.error and good["Rows"] != "0"
    _upload(at, "billing", "broken.csv", PDF)
    assert not at.exception
    assert [markdown_text("broken.csv") in error.value for error in at.error] == [True]
    assert _tiles(at) == good
    assert any("the view still shows **my\\_bill\\.csv**" in info.value for info in at.info)


def test_waste_found_in_gpu_hours_is_never_called_no_waste(app):
    # The Slurm sample alone has no costs, but interrupted and duplicate runs (GPU-hours).
    at = open_retro(app, {"retro.billing": NONE, "retro.view": "Waste"})
    assert not at.exception
    shown = [*(info.value for info in at.info), *(warning.value for warning in at.warning)]
    assert NO_WASTE not in shown
    found = [text for text in shown if text.startswith("Nothing to chart in money, but waste was found")]
    assert len(found) == 1 and "Interrupted runs: " in found[0] and "GPU-hours" in found[0]
    assert at.subheader[0].value == "Waste found in GPU-hours only: this view has no costs to price it"


@pytest.mark.parametrize("state", list(REAL))
@pytest.mark.parametrize("tab", ["Load profile", "Purchase mix"])
def test_a_bill_without_gpu_rows_says_so_in_one_line(app, state, tab):
    at, _ = _state(app, state)
    at.session_state["retro.view"] = tab
    at.run()
    assert _tiles(at)["GPU-hours"] == "0"
    lines = [info.value for info in at.info if info.value.startswith(NO_GPU_ROWS)]
    assert len(lines) == 1
    assert not [chart for chart in at.get("plotly_chart")]  # no empty or NaN chart
