"""Calibration on the real exports in ../shared/real-exports (written by others; see its SOURCES.md): each runs
without error, and every input has a value or a caveat naming what the file cannot tell. A file the import refuses
(the headerless sacct logs of XDMoD and AWS's HPC cost simulator) is refused by ``calibrate`` on the command line
too: exit 2 and one line."""

from __future__ import annotations

import pytest
from real_exports import CORPUS, real_export, sources

from dashboard.cli import main
from dashboard.ingest import import_path
from dashboard.ingest.formats import FORMATS
from dashboard.ingest.schema import ReadOptions, UnreadableFile
from dashboard.retro.calibrate import KEYS, calibrate

real_export("SOURCES.md", "the calibration checks on real exports are not run", module=True)
SOURCES = sources()
PRICE_KEYS = ("price_reserved_per_gpu_hour", "price_on_demand_per_gpu_hour", "price_spot_per_gpu_hour")
RUN_KEYS = ("mfu", "node_failures_per_1000_node_days", "spot_interruptions_per_1000_node_days")


def _imported(name: str):
    return import_path(CORPUS / name, options=ReadOptions(timezone="UTC"))


@pytest.mark.parametrize(("name", "kind"), SOURCES, ids=[name for name, _ in SOURCES])
def test_calibration_of_a_real_export(name, kind, capsys):
    try:
        usage, report = _imported(name)
    except UnreadableFile:
        assert kind.startswith("refuse") or kind == "empty", f"{name} should import as {kind}"
        assert main(["calibrate", str(CORPUS / name), "--timezone", "UTC"]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
        return
    runs = FORMATS[report.format].kind == "runs"
    got = calibrate(None, usage) if runs else calibrate(usage)
    assert tuple(got) == KEYS
    for key, item in got.items():
        assert item.value is not None or item.caveat, f"{name}: {key} has neither a value nor a caveat"
    if runs:
        assert all(got[key].value is None and "bill" in got[key].caveat for key in PRICE_KEYS)
        return
    # a bill has no tokens, no job states and no checkpoint records
    assert "tokens" in got["mfu"].caveat or "run id" in got["mfu"].caveat
    assert got["node_failures_per_1000_node_days"].value is None
    assert "states" in got["node_failures_per_1000_node_days"].caveat
    assert "checkpoint" in got["checkpoint_interval_min"].caveat
    currencies = set(usage["currency"].dropna())
    for key in PRICE_KEYS:
        if got[key].value is None and currencies - {"USD"}:
            caveat = got[key].caveat
            assert any(code in caveat for code in currencies - {"USD"}) or "has a cost" in caveat, caveat


@pytest.mark.parametrize(("name", "needle"), [
    ("project-koku__koku/2023-06-01.csv", "NOK"),  # a CUR in Norwegian kroner
    ("project-koku__koku/test_cur.csv", "GPU"),  # data transfer only: no GPU rows
    ("opencost__opencost/Template.csv", "GPU"),
])
def test_what_a_bill_without_dollar_gpu_prices_says(name, needle):
    got = calibrate(_imported(name)[0])
    assert all(got[key].value is None and needle in got[key].caveat for key in PRICE_KEYS)


def test_the_focus_sample_gpu_rows():
    """The one real file with GPU lines: 8 g5.4xlarge rows, about 6.28 GPU-hours (SOURCES.md)."""
    usage, _ = _imported("FinOps-Open-Cost-and-Usage-Spec__FOCUS-Sample-Data/focus_sample.csv")
    got = calibrate(usage)
    gpu = usage.loc[usage["gpu_hours"] > 0]
    assert gpu["gpu_hours"].sum() == pytest.approx(6.28, abs=0.01)
    # all on demand; two short rows cost 0.00 in the file, and a row at 0 says nothing of the price
    assert set(gpu["pricing"]) == {"on_demand"}
    priced = gpu.loc[gpu["cost"] != 0]
    item = got["price_on_demand_per_gpu_hour"]
    assert item.value == pytest.approx(priced["cost"].sum() / priced["gpu_hours"].sum())
    assert item.exposure == pytest.approx(priced["gpu_hours"].sum()) and item.count == len(priced)
    assert "A10G" in item.basis
    assert got["reserved_share"].value == 0.0 and got["spot_share"].value == 0.0
    assert got["price_reserved_per_gpu_hour"].value is None
