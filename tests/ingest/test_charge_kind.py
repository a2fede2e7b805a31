"""charge_kind on the bundled samples and on small rows: usage, commitment purchases to amortise, the provider's
unused-commitment lines, adjustments."""

from pathlib import Path

import pandas as pd
import pytest

from dashboard.ingest import import_bytes, import_path
from dashboard.ingest.schema import ReadOptions
from dashboard.ingest.spec import Cell, Charge

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
SP_FEE = 11064.96  # the samples' daily EC2 Instance Savings Plan fee (24 h × 461.04)


def _kinds(usage: pd.DataFrame) -> dict[str, tuple[int, float]]:
    """rows and Σ billed_cost per charge_kind ("NA" for missing), billed rounded to cents."""
    groups = usage.groupby(usage["charge_kind"].astype(object).fillna("NA"))["billed_cost"]
    return {kind: (int(n), round(float(total), 2)) for kind, n, total in
            zip(groups.size().index, groups.size(), groups.sum(), strict=True)}


CASES = [
    # FOCUS: 64 Savings Plan fee purchases (64 × 11,064.96 = 708,157.44) are commitment; the 11 Unused rows
    # (BilledCost 0) are unused_commitment; 3 support purchases (17,955 + 37,159.24 + 33,352.01), 3 tax rows
    # (1,119.30 + 2,292.55 + 2,079.12) and the -25,000 credit are adjustment: 88,466.25 + 5,490.97 - 25,000 =
    # 68,957.22. Of 242 rows the other 160 are usage.
    pytest.param("focus_sample.csv", {"commitment": (64, 64 * SP_FEE), "unused_commitment": (11, 0.0),
                                      "adjustment": (7, 68957.22)}, 160, id="focus"),
    # CUR legacy and 2.0: 64 SavingsPlanRecurringFee rows, whose amortised cost is the unused part; 3 support Fees
    # (17,955.0046 + 37,159.2423 + 33,352.0072), 3 Tax (1,119.3003 + 2,292.5545 + 2,079.1204) and the credit:
    # 68,957.2293 → 68,957.23. 289 rows less 58 excluded negations = 231 used, 160 of them usage.
    pytest.param("aws_cur_sample.csv", {"unused_commitment": (64, 64 * SP_FEE), "adjustment": (7, 68957.23)}, 160,
                 id="aws_cur"),
    pytest.param("aws_cur2_sample.csv", {"unused_commitment": (64, 64 * SP_FEE), "adjustment": (7, 68957.23)},
                 160, id="aws_cur2"),
    # GCP: 64 "Commitment v1" fee rows (64 × 9,847.68 = 630,251.52); 3 Enhanced Support rows (17,769.8861 +
    # 38,321.8331 + 34,597.6077) and 3 tax rows (1,108.1932 + 2,362.3100 + 2,153.8565): 96,313.6866.
    pytest.param("gcp_sample.csv", {"commitment": (64, 630251.52), "adjustment": (6, 96313.69)}, 221, id="gcp"),
    # Azure actual cost: 3 reservation purchases of 350,400; 3 support purchases (17,950.36 + 37,999.52 +
    # 34,198.75 = 90,148.63).
    pytest.param("azure_sample.csv", {"commitment": (3, 1051200.0), "adjustment": (3, 90148.63)}, 160,
                 id="azure"),
]


@pytest.mark.parametrize(("name", "expected", "usage_rows"), CASES)
def test_charge_kind_on_bundled_samples(name, expected, usage_rows):
    usage, _ = import_path(SAMPLES / name)
    kinds = _kinds(usage)
    assert kinds.pop("usage")[0] == usage_rows
    assert kinds == {k: (n, pytest.approx(total, abs=0.006)) for k, (n, total) in expected.items()}


@pytest.mark.parametrize(("name", "options"), [
    pytest.param("slurm_sample.txt", ReadOptions(timezone="UTC"), id="slurm"),
    pytest.param("wandb_sample.csv", ReadOptions(), id="wandb"),
])
def test_run_logs_have_no_charge_kind(name, options):
    usage, _ = import_path(SAMPLES / name, options=options)
    assert len(usage) and usage["charge_kind"].isna().all()


def test_generic_has_no_charge_kind():
    data = b"day,gpu_hours\n2025-06-01,4\n"
    options = ReadOptions(mapping={"period_start": "day", "gpu_hours": "gpu_hours"})
    usage, _ = import_bytes(data, filename="x.csv", format="generic", options=options)
    assert usage["charge_kind"].isna().all()


CUR_HEADER = ("lineItem/LineItemType,lineItem/UsageStartDate,lineItem/UsageType,lineItem/ProductCode,"
              "lineItem/LineItemDescription,lineItem/UnblendedCost,lineItem/CurrencyCode,"
              "reservation/EffectiveCost\n")
AZURE_HEADER = "date,meterCategory,meterName,chargeType,pricingModel,reservationName,costInBillingCurrency\n"
FOCUS_HEADER = ("ChargePeriodStart,ChargeCategory,ChargeClass,ChargeDescription,ServiceName,BilledCost,"
                "EffectiveCost,BillingCurrency,CommitmentDiscountId,CommitmentDiscountStatus\n")
ROW_CASES = [
    pytest.param(CUR_HEADER + "RIFee,2025-06-01T00:00:00Z,HeavyUsage:p4d,AmazonEC2,RI fee,5,USD,\n",
                 "unused_commitment", id="cur-rifee"),
    pytest.param(CUR_HEADER + "Fee,2025-06-01T00:00:00Z,HeavyUsage:p4d,AmazonEC2,Sign up charge for "
                 "subscription: upfront fee,900,USD,\n", "commitment", id="cur-upfront-fee"),
    pytest.param(CUR_HEADER + "Fee,2025-06-01T00:00:00Z,,AWSSupportEnterprise,Support,900,USD,\n",
                 "adjustment", id="cur-support-fee"),
    pytest.param(CUR_HEADER + "Refund,2025-06-01T00:00:00Z,,AmazonEC2,Refund,-9,USD,\n", "adjustment",
                 id="cur-refund"),
    pytest.param(CUR_HEADER + "DiscountedUsage,2025-06-01T00:00:00Z,BoxUsage:p4d.24xlarge,AmazonEC2,RI usage,"
                 "0,USD,12.5\n", "usage", id="cur-reserved-usage"),
    pytest.param(AZURE_HEADER + "06/01/2025,Virtual Machines,D4s v5,Purchase,SavingsPlan,,100\n", "commitment",
                 id="azure-savings-plan-purchase"),
    pytest.param(AZURE_HEADER + "06/01/2025,Virtual Machines,D4s v5,Refund,Reservation,ri-1,-40\n",
                 "adjustment", id="azure-refund"),
    pytest.param(AZURE_HEADER + "06/01/2025,Unassigned,,Purchase,,,7\n", "usage", id="azure-marketplace"),
    pytest.param(AZURE_HEADER + "06/01/2025,Virtual Machines,D4s v5,Usage,Reservation,ri-1,0\n", "usage",
                 id="azure-reserved-usage"),
    pytest.param(AZURE_HEADER + "06/01/2025,Virtual Machines,D4s v5,UnusedReservation,Reservation,ri-1,12\n",
                 "unused_commitment", id="azure-unused-reservation"),
    pytest.param(AZURE_HEADER + "06/01/2025,Virtual Machines,D4s v5,Usage,SavingsPlan,sp-1,3\n", "usage",
                 id="azure-savings-plan-usage"),
    pytest.param(FOCUS_HEADER + "2025-06-01T00:00:00Z,Purchase,,1 year reservation,Compute,100,0,USD,ri-1,\n",
                 "commitment", id="focus-purchase"),
    pytest.param(FOCUS_HEADER + "2025-06-01T00:00:00Z,Purchase,,Marketplace seats,Vendor,100,100,USD,,\n",
                 "usage", id="focus-purchase-without-commitment"),
    pytest.param(FOCUS_HEADER + "2025-06-01T00:00:00Z,Usage,,Unused savings plan,Compute,0,2,USD,sp-1,Unused\n",
                 "unused_commitment", id="focus-unused"),
    pytest.param(FOCUS_HEADER + "2025-06-01T00:00:00Z,Usage,,Covered p5 hour,Compute,0,61,USD,sp-1,Used\n",
                 "usage", id="focus-used-commitment"),
    pytest.param(FOCUS_HEADER + "2025-06-01T00:00:00Z,Usage,Correction,p5 usage,EC2,-3,-3,USD,,\n",
                 "adjustment", id="focus-correction"),
    pytest.param(FOCUS_HEADER + "2025-06-01T00:00:00Z,Purchase,,Business support,AWS Support,50,50,USD,,\n",
                 "adjustment", id="focus-support-purchase"),
]


@pytest.mark.parametrize(("text", "kind"), ROW_CASES)
def test_charge_kind_of_one_row(text, kind):
    usage, report = import_bytes(text.encode(), filename="bill.csv")
    assert report.rows_used == 1
    assert usage["charge_kind"].tolist() == [kind]


@pytest.mark.parametrize(("build", "message"), [
    pytest.param(lambda: Cell("type", ("fee",), pattern="fee"), "not both", id="values and a pattern"),
    pytest.param(lambda: Charge("usage", (Cell("type", ("fee",)),)), "is not one of", id="usage is the default"),
    pytest.param(lambda: Charge("purchase", (Cell("type", ("fee",)),)), "is not one of", id="unknown kind"),
    pytest.param(lambda: Charge("commitment", ()), "at least one", id="no test"),
])
def test_charge_rules_are_validated(build, message):
    with pytest.raises(ValueError, match=message):
        build()
