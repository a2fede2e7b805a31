"""The real exports in ../shared/real-exports (written by others): each imports with the figures plain pandas
computes from the raw file, or is refused in one line where SOURCES.md says ``refuse``.

The expected rows, cost, currency and period are computed here from the raw bytes with pandas and the
standard library only, following each format's documented cost rule, never through the import layer.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from real_exports import CORPUS, real_export, sources

from dashboard.ingest import import_path
from dashboard.ingest.schema import ReadOptions, UnreadableFile
from dashboard.ingest.stream import NotStreamable, stream_import

NULLS = ["", "null", "NULL", "None"]

real_export("SOURCES.md", "the 37 real-export checks are not run", module=True)
SOURCES = sources()


def _frame(path: Path, **kwargs) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig", **kwargs)
    frame.columns = [c.strip() for c in frame.columns]
    return frame


def _col(frame: pd.DataFrame, *names: str) -> pd.Series | None:
    lowered = {c.lower(): c for c in frame.columns}
    found = next((lowered[n.lower()] for n in names if n.lower() in lowered), None)
    return None if found is None else frame[found].str.strip().mask(lambda s: s.isin(NULLS))


def _money(values: pd.Series) -> pd.Series:
    """Numbers as the exports write them: plain, E-notation, or "$10,000.00 " in the FOCUS SaaS example."""
    return pd.to_numeric(values.str.replace(r"[$,\s]", "", regex=True), errors="coerce")


def _times(values: pd.Series | None) -> pd.Series:
    if values is None:
        return pd.Series(pd.NaT, dtype="datetime64[ns, UTC]")
    return pd.to_datetime(values, utc=True, errors="coerce", format="mixed")


def _currency(values: pd.Series | None, default: str | None = None) -> str | None:
    codes = set() if values is None else set(values.dropna().str.upper())
    assert len(codes) <= 1
    return codes.pop() if codes else default


def expect_focus(path: Path) -> dict:
    frame = _frame(path, skip_blank_lines=True)
    start, end = _times(_col(frame, "ChargePeriodStart")), _times(_col(frame, "ChargePeriodEnd"))
    raw_end = _col(frame, "ChargePeriodEnd")
    cost, billed = _money(_col(frame, "EffectiveCost")), _money(_col(frame, "BilledCost"))
    ok = start.notna() & (end.notna() | raw_end.isna()) & cost.notna() & billed.notna()
    # a negative amount is plausible only on a row the export marks as a credit, adjustment, tax or correction
    category, charge_class = _col(frame, "ChargeCategory"), _col(frame, "ChargeClass")
    marked = category.str.lower().isin(["credit", "adjustment", "tax"]).fillna(False)
    if charge_class is not None:
        marked |= charge_class.str.lower().eq("correction").fillna(False)
    ok &= marked | ((cost >= 0) & (billed >= 0))
    return {"rows": len(frame), "used": int(ok.sum()), "cost": cost[ok].sum(),
            "currency": _currency(_col(frame, "BillingCurrency")[ok] if _col(frame, "BillingCurrency") is not None
                                  else None),
            "start": start[ok].min(), "end": end[ok].fillna(start[ok]).max()}


def expect_aws_cur(path: Path) -> dict:
    frame = _frame(path, compression="infer")
    kind = _col(frame, "lineItem/LineItemType", "line_item_line_item_type").str.lower()
    assert set(kind) <= {"usage", "savingsplancoveredusage", "discountedusage", "savingsplannegation", "tax",
                         "credit", "refund", "fee"}  # the recipe below covers these line types
    used = kind != "savingsplannegation"
    cost = _money(_col(frame, "lineItem/UnblendedCost", "line_item_unblended_cost"))
    for line_type, column in (("savingsplancoveredusage", ("savingsPlan/SavingsPlanEffectiveCost",
                                                           "savings_plan_savings_plan_effective_cost")),
                              ("discountedusage", ("reservation/EffectiveCost", "reservation_effective_cost"))):
        if (kind == line_type).any():
            cost = cost.mask(kind == line_type, _money(_col(frame, *column)))
    start = _times(_col(frame, "lineItem/UsageStartDate", "line_item_usage_start_date"))
    end = _times(_col(frame, "lineItem/UsageEndDate", "line_item_usage_end_date")).fillna(start)
    return {"rows": len(frame), "used": int(used.sum()), "cost": cost[used].sum(),
            "currency": _currency(_col(frame, "lineItem/CurrencyCode", "line_item_currency_code"), "USD"),
            "start": start[used].min(), "end": end[used].max()}


def _credit_total(cell: str | None) -> float:
    if not cell or not cell.strip():
        return 0.0
    try:
        records = json.loads(cell)
    except ValueError:
        records = ast.literal_eval(cell)
    return sum(float(r.get("amount") or 0) for r in records)


def expect_gcp(path: Path) -> dict:
    frame = _frame(path)
    credits = _col(frame, "credits")
    net = _money(_col(frame, "cost")) + (0.0 if credits is None else credits.map(_credit_total))
    start = _times(_col(frame, "usage_start_time"))
    return {"rows": len(frame), "used": len(frame), "cost": net.sum(), "currency": _currency(_col(frame, "currency")),
            "start": start.min(), "end": _times(_col(frame, "usage_end_time")).fillna(start).max()}


def expect_azure(path: Path) -> dict:
    frame = _frame(path)
    if sum(bool(re.fullmatch(r".+ \(\w+\)", c)) for c in frame.columns) * 2 > len(frame.columns):
        # a localized export (opencost's German header set): "Name (EnglishName)" names its English column
        frame.columns = [re.sub(r"^.+ \((\w+)\)$", r"\1", c) for c in frame.columns]
    cost = _money(_col(frame, "costInBillingCurrency", "Cost", "PreTaxCost"))
    raw = _col(frame, "date", "UsageDateTime", "UsageDate")
    us = raw.str.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}").fillna(False)
    day = pd.to_datetime(raw.where(~us), utc=True, errors="coerce", format="mixed").fillna(
        pd.to_datetime(raw.where(us), utc=True, errors="coerce", format="%m/%d/%Y"))
    ok = cost.notna() & day.notna()
    currency = _col(frame, "billingCurrency", "BillingCurrencyCode", "Currency")
    return {"rows": len(frame), "used": int(ok.sum()), "cost": cost[ok].sum(),
            "currency": _currency(None if currency is None else currency[ok]),
            "start": day[ok].min() if ok.any() else pd.NaT,
            "end": (day[ok] + pd.Timedelta(days=1)).max() if ok.any() else pd.NaT}


EXPECT = {"focus": expect_focus, "aws_cur": expect_aws_cur, "gcp": expect_gcp, "azure": expect_azure}


def _same_time(actual: pd.Timestamp, expected: pd.Timestamp) -> bool:
    return (pd.isna(actual) and pd.isna(expected)) or actual == expected


@pytest.mark.parametrize(("name", "kind"), SOURCES, ids=[name.split("/")[-1] for name, _ in SOURCES])
def test_real_export(name, kind):
    path = CORPUS / name
    fmt = kind.split("|")[-1]
    try:
        usage, report = import_path(path, options=ReadOptions(timezone="UTC"))
    except UnreadableFile as refusal:
        text = str(refusal)
        assert kind.startswith(("refuse", "empty")), f"{name} should import as {kind}: {text}"
        assert "\n" not in text and path.name in text
        if kind == "empty":
            assert "no data rows" in text
        return
    assert not kind.startswith("refuse") or "|" in kind, f"{name} should be refused, imported as {report.format}"
    assert report.format == fmt and report.balanced
    expected = EXPECT[fmt](path)
    assert (report.rows_read, report.rows_used) == (expected["rows"], expected["used"])
    assert usage["cost"].sum() == pytest.approx(expected["cost"], rel=1e-9, abs=1e-9)
    currencies = set(usage["currency"].dropna())
    assert currencies == ({expected["currency"]} if expected["currency"] else set())
    assert _same_time(usage["period_start"].min(), expected["start"])
    assert _same_time(usage["period_end"].max(), expected["end"])


def test_the_corpus_is_complete():
    assert len(SOURCES) == 37


def test_focus_sample_gpu_hours():
    # SOURCES.md: the FinOps Foundation sample has 8 g5.4xlarge (1 GPU) instance-hour rows, about 6.28 GPU-hours;
    # computed here from the raw ConsumedQuantity of those rows.
    path = CORPUS / "FinOps-Open-Cost-and-Usage-Spec__FOCUS-Sample-Data" / "focus_sample.csv"
    frame = _frame(path)
    g5 = frame["ChargeDescription"].str.contains("g5.4xlarge Instance Hour", regex=False)
    assert int(g5.sum()) == 8
    usage, report = import_path(path)
    assert usage["gpu_hours"].sum() == pytest.approx(pd.to_numeric(frame.loc[g5, "ConsumedQuantity"]).sum())
    assert any("2 rows look like GPU compute" in w for w in report.warnings)  # the two g3.4xlarge rows


@pytest.mark.parametrize(("name", "kind"), SOURCES, ids=[name.split("/")[-1] for name, _ in SOURCES])
def test_real_export_streamed_in_small_batches(name, kind):
    """The streamed import (workspace path) of each real export, 50 rows a batch, gives the in-memory import's
    rows and row accounting, or says why the file cannot be read row by row (then the workspace imports it whole)."""
    path = CORPUS / name
    options = ReadOptions(timezone="UTC")
    try:
        usage, report = import_path(path, options=options)
    except UnreadableFile:
        return  # refused files are test_real_export's
    parts: list[pd.DataFrame] = []
    try:
        streamed = stream_import(path, parts.append, batch_rows=50, options=options)
    except NotStreamable as reason:
        assert str(reason) and "\n" not in str(reason)
        return
    pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True) if parts else usage.iloc[:0], usage)
    for attr in ("format", "rows_read", "rows_used", "rows_excluded", "rows_rejected"):
        assert getattr(streamed, attr) == getattr(report, attr), attr
