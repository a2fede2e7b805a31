"""A format registered in ``ingest/formats`` is offered, labelled and slotted by the pages and the CLI unaided."""

from dataclasses import replace
from pathlib import Path

import pytest

from dashboard.cli import build_parser
from dashboard.ingest.formats import FORMATS

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"


@pytest.fixture
def throwaway():
    """A run-log format copied from W&B under a new id and title, registered first so that it wins W&B's header."""
    fmt = replace(FORMATS["wandb"], id="throwaway", title="Throwaway run table", noun="a throwaway run table")
    registered = dict(FORMATS)
    FORMATS.clear()
    FORMATS.update({fmt.id: fmt, **registered})
    yield fmt
    FORMATS.clear()
    FORMATS.update(registered)


def test_the_import_page_offers_a_registered_format_and_reads_with_it(app, throwaway):
    at = app.run()
    at.switch_page("app_pages/imports.py").run()
    at.selectbox(key="sample").set_value("wandb_sample.csv").run()
    assert not at.exception  # detected as the new format, and named
    assert throwaway.title in at.selectbox(key="import_format").options
    at.selectbox(key="import_format").set_value(throwaway.id).run()
    assert not at.exception and not at.error
    assert any(throwaway.title in s.value for s in at.success)
    next(b for b in at.button if b.label == "Open in Retrospective").click().run()
    assert not at.exception and not at.error
    assert set(at.session_state["retro.handoff"]) == {"runs"}  # handed over as the run export, by its kind


def test_the_retrospective_slots_a_registered_format_by_its_kind(app, throwaway):
    at = app.run()
    at.switch_page("app_pages/retro.py").run()
    data = (SAMPLES / "wandb_sample.csv").read_bytes()
    at.file_uploader(key="retro.billing_upload").set_value(("runs.csv", data, "text/csv")).run()
    assert not at.exception and not at.error
    assert throwaway.title in at.selectbox(key="retro.runs").help
    (warning,) = [w.value for w in at.warning]
    assert f"{throwaway.noun}, not a billing export" in warning


@pytest.mark.parametrize("command", [["ingest", "f.csv"], ["workspace", "import", "f.csv", "name"]])
def test_the_cli_offers_a_registered_format(throwaway, command, capsys):
    assert build_parser().parse_args([*command, "--format", throwaway.id]).format == throwaway.id
    with pytest.raises(SystemExit):
        build_parser().parse_args([*command, "--help"])
    assert throwaway.title in " ".join(capsys.readouterr().out.split())
