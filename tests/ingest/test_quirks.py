"""Quirks of real exports, each in a small file of our own with figures computed by hand."""

import json

import pytest

from dashboard.ingest import import_bytes
from dashboard.ingest.schema import ReadOptions, UnreadableFile


def test_rows_one_field_short_are_read_as_empty_trailing_fields():
    # OpenCost's Azure Template.csv: every row lacks the empty last column. Cost 1.25 + 2.50 = 3.75.
    data = (b"date,meterCategory,meterName,costInBillingCurrency,billingCurrency,resourceLocation\n"
            b"2025-06-01,Storage,Hot LRS,1.25,USD\n"
            b"2025-06-02,Storage,Hot LRS,2.50,USD\n")
    usage, report = import_bytes(data, filename="template.csv")
    assert (report.rows_read, report.rows_used, report.rows_rejected) == (2, 2, 0)
    assert usage["cost"].sum() == pytest.approx(3.75)
    assert report.warnings == ["In template.csv, 2 rows have fewer fields than the header; the missing "
                               "trailing fields were read as empty."]


def test_cur_header_with_a_cost_category_the_rows_lack():
    # Koku's test_cur.csv: a costCategory column added to the header only. Cost 0.5 + 0.25 = 0.75 USD.
    header = ("lineItem/LineItemType,lineItem/UsageStartDate,lineItem/UnblendedCost,lineItem/CurrencyCode,"
              "costCategory/CostCenter\n")
    data = (header + "Usage,2018-06-01T00:00:00Z,0.5,USD\nUsage,2018-06-01T01:00:00Z,0.25,USD\n").encode()
    usage, report = import_bytes(data, filename="cur.csv")
    assert report.rows_used == 2 and usage["cost"].sum() == pytest.approx(0.75)
    assert set(usage["currency"]) == {"USD"}


def test_gcp_credits_written_as_python_literals_with_none():
    # credits as BigQuery-to-CSV tools write them: single quotes and None. Net = (10 - 1.5 - 0.5) + (4 - 0) +
    # (2 + 0) = 14; no row is rejected.
    credits = [
        "[{'name': 'FreeTrial:Credit-1', 'amount': -1.5, 'full_name': None, 'id': None, 'type': None}, "
        "{'name': 'Sustained use', 'amount': -0.5, 'id': None}]",
        "[]",
        "",
    ]
    lines = ["usage_start_time,usage_end_time,sku.description,cost,currency,credits"]
    for cost, cell in zip((10, 4, 2), credits, strict=True):
        lines.append(f'2020-11-08 08:00:00 UTC,2020-11-08 09:00:00 UTC,Storage,{cost},USD,"{cell}"')
    usage, report = import_bytes("\n".join(lines).encode() + b"\n", filename="gcp.csv")
    assert (report.rows_used, report.rows_rejected) == (3, 0)
    assert usage["cost"].sum() == pytest.approx(14.0)


def test_gcp_credits_are_never_evaluated_as_code():
    cell = "[__import__('os').system('echo hacked')]"
    data = ("usage_start_time,sku.description,cost,currency,credits\n"
            f'2020-11-08 08:00:00 UTC,Storage,1,USD,"{cell}"\n').encode()
    _, report = import_bytes(data, filename="gcp.csv")
    assert report.rows_rejected == 1
    assert report.rejected["reason"].iloc[0].startswith("credits: cannot read")


FOCUS10_HEADER = ("ChargePeriodStart,ChargePeriodEnd,ChargeCategory,ChargeDescription,ConsumedQuantity,"
                  "ConsumedUnit,BilledCost,EffectiveCost,BillingCurrency,x_UsageType\n")


def test_focus_10_gpu_instances_from_description_and_provider_columns():
    # No SkuPriceDetails (FOCUS 1.0). g5.4xlarge has 1 GPU: 1.0 + 0.5 h = 1.5 GPU-hours; p5.48xlarge named only in
    # x_UsageType has 8: 2 h × 8 = 16; the storage row names no instance. Total 17.5 GPU-hours.
    # g3.4xlarge is a GPU family missing from data/aws_instance_types.csv: 1 row of 1.14 USD, GPU count unknown.
    data = (FOCUS10_HEADER
            + "2024-09-01 00:00:00,2024-09-01 01:00:00,Usage,$1.624 per On Demand Linux g5.4xlarge Instance Hour,"
              "1.0,Hours,1.624,1.624,USD,\n"
            + "2024-09-01 01:00:00,2024-09-01 02:00:00,Usage,$1.624 per On Demand Linux g5.4xlarge Instance Hour,"
              "0.5,Hours,0.812,0.812,USD,\n"
            + "2024-09-01 00:00:00,2024-09-01 02:00:00,Usage,Compute usage,2,Hours,196.64,196.64,USD,"
              "USE1-BoxUsage:p5.48xlarge\n"
            + "2024-09-01 00:00:00,2024-09-01 01:00:00,Usage,$1.14 per On Demand Linux g3.4xlarge Instance Hour,"
              "1,Hours,1.14,1.14,USD,\n"
            + "2024-09-01 00:00:00,2024-10-01 00:00:00,Usage,$0.08 per GB-month of gp3 storage,3,GB-Months,"
              "0.24,0.24,USD,\n").encode()
    usage, report = import_bytes(data, filename="focus10.csv")
    assert usage["gpu_hours"].sum() == pytest.approx(17.5)
    assert usage["gpu_type"].tolist()[:3] == ["A10G", "A10G", "H100"]
    assert [w for w in report.warnings if "GPU count" in w] == [
        "In focus10.csv, 1 row looks like GPU compute but its GPU count cannot be found, so it adds no GPU-hours; "
        "it costs $1.14. Add its instance type to data/aws_instance_types.csv (or the Azure / GCP table), or "
        "export FOCUS 1.1+ with SkuPriceDetails."
    ]


def test_no_currency_warning_when_every_cur_row_is_rejected():
    data = (b"lineItem/LineItemType,lineItem/UsageStartDate,lineItem/UnblendedCost,lineItem/CurrencyCode\n"
            b"Usage,not-a-date,1.0,USD\nUsage,also-not,2.0,USD\n")
    _, report = import_bytes(data, filename="cur.csv")
    assert report.rows_rejected == 2
    assert not any("CurrencyCode" in w for w in report.warnings)


def test_cur_without_currency_column_says_usd_once():
    data = b"lineItem/LineItemType,lineItem/UsageStartDate,lineItem/UnblendedCost\nUsage,2025-06-01T00:00:00Z,1\n"
    usage, report = import_bytes(data, filename="cur.csv")
    assert usage["currency"].tolist() == ["USD"]
    assert report.warnings == ["cur.csv has no lineItem/CurrencyCode column, so its costs are taken to be in USD."]


@pytest.mark.parametrize(("encoding", "team"), [
    pytest.param("gbk", "团队", id="gbk"),
    pytest.param("gb18030", "数据平台组", id="gb18030"),
    pytest.param("shift_jis", "開発部", id="shift-jis"),
    pytest.param("cp1252", "Müller & Söhne", id="cp1252"),
])
def test_spreadsheet_encodings_read_as_written(encoding, team):
    tags = json.dumps({"team": team}, ensure_ascii=False).replace('"', '""')
    text = (FOCUS10_HEADER.replace(",x_UsageType", ",Tags")
            + f'2025-06-01T00:00:00Z,2025-06-01T01:00:00Z,Usage,storage,1,Hours,2.5,2.5,USD,"{tags}"\n')
    usage, report = import_bytes(text.encode(encoding), filename="team.csv")
    assert usage["team"].tolist() == [team]
    assert any("is not valid UTF-8" in w for w in report.warnings)


REFUSALS = [
    # sacct -P -n keeps no header line: the first record is not taken for column names
    pytest.param(b"4103947|4103947|ub-hpc|general|anon|2015-06-26T13:57:00|2015-06-28T02:55:50|TIMEOUT|"
                 b"billing=256,cpu=32,node=1\n4103948|4103948|ub-hpc|general|anon|2015-06-26T13:57:00|"
                 b"2015-06-28T02:55:50|COMPLETED|billing=8,cpu=8,node=1\n", "jobs.log",
                 "the header line is missing: export with `sacct --parsable2` without `-n`", id="sacct-no-header"),
    pytest.param(b"InvoiceIssuer,ChargeType,ChargePeriodStart,BilledCost,AmortizedCost,BilledCurrency\n"
                 b"AWS,Usage,2023-01-01T00:00:00Z,1,1,USD\n", "focus05.csv",
                 "is a FOCUS 0.5 export (AmortizedCost, ChargeType), and FOCUS 0.5 is not read. Export FOCUS "
                 "1.0, 1.1, 1.2 or 1.3", id="focus-0.5"),
    pytest.param(b"JobID|State|Elapsed|AllocTRES\n1|COMPLETED|00:10:00|gres/gpu=1\n", "sacct.txt",
                 "was read as a Slurm sacct export (Slurm sacct --parsable2 output) but lacks the column 'Start'",
                 id="sacct-without-start"),
]


@pytest.mark.parametrize(("data", "filename", "message"), REFUSALS)
def test_refusals_name_the_file_and_the_fix(data, filename, message):
    with pytest.raises(UnreadableFile) as info:
        import_bytes(data, filename=filename, options=ReadOptions(timezone="UTC"))
    text = str(info.value)
    assert text.startswith(filename) and message in text and "\n" not in text
