"""Commitments on real bills: only what the bill marks as a purchase, a fee or unused commitment is a commitment;
covered usage is usage. Each case runs on rows copied from the real file (tests/data/commitments) and, when
../shared is there, on the whole file. Every expected figure is worked out by hand from the file's rows."""

from pathlib import Path

import pytest
from real_exports import real_export

from dashboard.ingest import import_bytes, import_path
from dashboard.query import columns, engine, tables
from dashboard.retro.amortise import amortise_commitments, commitment_status
from dashboard.retro.waste import idle_capacity_check, waste_checklist, waste_summary

ROWS = Path(__file__).resolve().parents[1] / "data" / "commitments"


def _real(name: str) -> Path:
    return real_export(name, "the real-export case runs on its copied rows only (tests/data/commitments)")


def _retro(path: Path) -> tuple[dict, dict, dict]:
    """The amortisation info, the idle-capacity check and the waste headline of the Retrospective for ``path``."""
    usage, _ = import_path(path)
    amortised, info = amortise_commitments(tables.table_of(usage))
    checks = waste_checklist(amortised)
    idle = next(check for check in checks if check.id == "idle_capacity")
    return info, idle, waste_summary(checks, columns.number(engine.execute(amortised.cost.sum())))


def _kinds(path: Path) -> list[str]:
    return import_path(path)[0]["charge_kind"].tolist()


# EA actual cost. Copied rows: the B1s reservation Purchase ($3.25, PricingModel Reservation), the on-demand
# D2 v3 VM ($2.64, Usage / OnDemand; its resource group CapRes_Test once read as a commitment) and a P4 disk
# ($0.21268368). The whole file: the same purchase and ten on-demand Usage rows ($8.545 - $3.25 of spend).
EA_ACTUAL_ROWS = ["commitment", "usage", "usage"]


@pytest.mark.parametrize("path", [pytest.param(ROWS / "EA_ActualCost_rows.csv", id="rows"),
                                  pytest.param("microsoft__finops-toolkit/EA_ActualCost_Small.csv", id="real")])
def test_an_azure_actual_cost_purchase_is_a_commitment_and_the_on_demand_vm_is_usage(path):
    path = path if isinstance(path, Path) else _real(path)
    kinds = _kinds(path)
    assert kinds.count("commitment") == 1 and set(kinds) == {"commitment", "usage"}
    info, idle, summary = _retro(path)
    # No GPU row and no unused-commitment line: nothing is idle capacity (was $5.89, 68.9 % of spend).
    assert (info.status, info.commitment_usd) == ("no_gpu", pytest.approx(3.25))
    assert info.label == "no GPU usage in this bill"
    assert idle.figure is None and idle.detail.startswith("No GPU usage in this bill")
    assert summary.total_usd == 0.0


def test_the_copied_actual_cost_rows_are_what_the_real_file_says():
    assert _kinds(ROWS / "EA_ActualCost_rows.csv") == EA_ACTUAL_ROWS


# Koku's CUR: three SavingsPlanCoveredUsage rows of an m5.large, SavingsPlanEffectiveCost 0.1 NOK each, no fee
# line: capacity that was used (was "100 % of spend").
@pytest.mark.parametrize("path", [pytest.param(ROWS / "koku_cur_2023-06-01_rows.csv", id="rows"),
                                  pytest.param("project-koku__koku/2023-06-01.csv", id="real")])
def test_savings_plan_covered_usage_is_usage_not_waste(path):
    path = path if isinstance(path, Path) else _real(path)
    usage, _ = import_path(path)
    assert usage["charge_kind"].tolist() == ["usage"] * 3
    assert usage["pricing"].tolist() == ["reserved"] * 3 and usage["cost"].tolist() == pytest.approx([0.1] * 3)
    info, idle, summary = _retro(path)
    assert info.status == "no_gpu" and idle.figure is None
    assert summary.total_usd == 0.0 and summary.share == 0.0


# EA amortised cost: reservation usage ($0.493152, D2 v2) and savings-plan usage ($0.006, B2s) are covered usage;
# no UnusedReservation / UnusedSavingsPlan line, no purchase. The file is amortised: no advice to export it.
@pytest.mark.parametrize("path", [pytest.param(ROWS / "EA_AmortizedCost_rows.csv", id="rows"),
                                  pytest.param("microsoft__finops-toolkit/EA_AmortizedCost_Small.csv", id="real")])
def test_an_amortised_azure_export_is_not_told_to_export_amortised_cost(path):
    path = path if isinstance(path, Path) else _real(path)
    usage, _ = import_path(path)
    assert set(usage["charge_kind"]) == {"usage"}
    info, idle, summary = _retro(path)
    assert info.status != "excluded"  # "excluded" is the status whose warning asks for the amortised export
    assert commitment_status(tables.table_of(usage)).status == info.status
    assert "amortised view" not in idle.detail and summary.total_usd == 0.0


# FOCUS spec example: one Used row (EffectiveCost 0.75) and one Unused row (0.25): $0.25 of $1.00 is idle.
@pytest.mark.parametrize("path", [
    pytest.param(ROWS / "focus_commitment_usage_scenario_3.csv", id="rows"),
    pytest.param("FinOps-Open-Cost-and-Usage-Spec__FOCUS_Spec/commitment_discount_usage_scenario_3.csv", id="real")])
def test_focus_unused_commitment_is_the_idle_part_only(path):
    path = path if isinstance(path, Path) else _real(path)
    assert _kinds(path) == ["usage", "unused_commitment"]
    _, idle, summary = _retro(path)
    assert idle.figure == pytest.approx(0.25)
    assert (summary.total_usd, summary.share) == (pytest.approx(0.25), pytest.approx(0.25))


CUR = ("lineItem/LineItemType,lineItem/UsageStartDate,lineItem/UsageEndDate,lineItem/UsageType,lineItem/ResourceId,"
       "lineItem/UsageAmount,lineItem/UnblendedCost,product/instanceType\n")


def test_a_resource_id_naming_a_reservation_on_an_on_demand_row_is_usage():
    # 2 h of an on-demand p4d.24xlarge (8 GPUs: 16 GPU-hours, $65.54) whose id names a reservation, and an EBS line.
    text = CUR + ("Usage,2025-06-01T00:00:00Z,2025-06-01T02:00:00Z,USE1-BoxUsage:p4d.24xlarge,"
                  "capacity-reservation-7,2,65.54,p4d.24xlarge\n"
                  "Usage,2025-06-01T00:00:00Z,2025-06-02T00:00:00Z,USE1-EBS:VolumeUsage.gp3,vol-reservation,1,4.10,\n")
    usage, _ = import_bytes(text.encode(), filename="cur.csv")
    assert usage["charge_kind"].tolist() == ["usage", "usage"]
    assert usage["gpu_hours"].tolist() == pytest.approx([16.0, 0.0])
    amortised, info = amortise_commitments(tables.table_of(usage))
    assert info.status == "none"
    check = idle_capacity_check(amortised)
    assert check.figure is None and check.detail.startswith("No reserved or committed capacity")


AZURE = ("date,meterCategory,meterName,chargeType,pricingModel,reservationName,quantity,unitOfMeasure,"
         "costInBillingCurrency,billingCurrency\n")


def test_an_actual_cost_purchase_with_gpu_usage_to_spare_is_left_out_of_the_price_and_not_called_waste():
    # An actual-cost bill: a $500 reservation purchase, and 24 h of an on-demand ND96isr H100 v5 (8 GPUs) at $2,000.
    # No reserved GPU usage to spread it over: excluded from the $/GPU-hour (the file is not amortised, so the page
    # may advise the amortised export); how much of it went unused the bill does not say.
    text = AZURE + ("06/01/2025,Virtual Machines,B1s,Purchase,Reservation,ri-1,1,1 Hour,500,USD\n"
                    "06/01/2025,Virtual Machines,ND96isr H100 v5,Usage,On Demand,,24,1 Hour,2000,USD\n")
    usage, _ = import_bytes(text.encode(), filename="azure.csv")
    assert usage["charge_kind"].tolist() == ["commitment", "usage"] and usage["gpu_hours"].sum() == 192.0
    _, info = amortise_commitments(tables.table_of(usage))
    assert (info.status, info.commitment_usd) == ("excluded", 500.0)
    check = idle_capacity_check(usage)
    assert check.figure is None and "amortised view" in check.detail
