"""AppTest: the Retrospective page's tiles equal totals computed here from the imports, the filters and the URL
change them, an unreadable upload is explained while the other export still renders, and every tab draws."""

import csv
import io
import json
import re
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from retro_page import leaves, open_retro
from shown_text import shown

from dashboard import ingest
from dashboard.core.engine import scenario_outputs
from dashboard.core.presets import presets
from dashboard.format import count_sig, usd_sig
from dashboard.ingest.run_states import FAILED_STATES
from dashboard.ingest.schema import CANONICAL_COLUMNS, ReadOptions, UnreadableFile
from dashboard.query import tables
from dashboard.retro import gap
from dashboard.retro.amortise import amortise_commitments
from dashboard.retro.join import join_usage
from dashboard.safe_text import markdown_text

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
BILLING_SAMPLES = [
    "focus_sample.csv", "aws_cur_sample.csv", "aws_cur2_sample.csv", "gcp_sample.csv", "azure_sample.csv",
]
RUN_SAMPLES = ["slurm_sample.txt", "wandb_sample.csv"]
NONE = "(none)"
UTC = ReadOptions(timezone="UTC")
TABS = ["Spend", "Attribution", "Plan vs actual", "Waste", "Load profile", "Purchase mix", "Unit costs"]
SAMPLE_PLAN = next(name for name in presets() if name.startswith("Sample organisation"))




def _amortised(name):
    """A sample as the page holds it: imported, bound to the default engine, and a bill's commitments amortised (a
    query)."""
    return amortise_commitments(tables.table_of(ingest.import_path(SAMPLES / name, options=UTC)[0]))[0]


def _import(name):
    """The rows of ``_amortised(name)``: canonical dtypes, UTC times, in no particular order."""
    frame = _amortised(name).to_pandas()
    for column in tables.TIME_COLUMNS:
        stamps = pd.to_datetime(frame[column])
        frame[column] = stamps.dt.tz_localize("UTC") if stamps.dt.tz is None else stamps.dt.tz_convert("UTC")
    return frame.astype(CANONICAL_COLUMNS)


def _tiles(at):
    """The tiles by label; the line under the $/GPU-hour tile's value says how commitments were treated."""
    tiles = {}
    for metric in at.metric:
        if metric.label.endswith(" per GPU-hour") and metric.label != "Blended $ per GPU-hour":
            tiles["$/GPU-hour treatment"] = metric.delta or None
        tiles[metric.label] = metric.value
    return tiles


# Every bundled bill has commitments: FOCUS and CUR amortise them, GCP and Azure are amortised by the page.
COMMITMENT_LABEL = "commitments amortised"


def _expected_tiles(usage):
    """The tiles from a canonical table: all rows, GPU rows (gpu_hours ≠ 0) and the rest; money is n/a when
    no row carries a currency (Slurm and W&B exports have no prices, and their price tile names none)."""
    gpu = usage["gpu_hours"].fillna(0).ne(0)
    priced = usage["currency"].notna().any()
    money = usd_sig if priced else (lambda value: "n/a")
    cost = usage["cost"]
    return {
        "Cost": money(cost.sum()),
        "GPU-hours": count_sig(usage["gpu_hours"].sum()),
        f"{'$' if priced else 'Cost'} per GPU-hour": money(cost[gpu].sum() / usage.loc[gpu, "gpu_hours"].sum()),
        "$/GPU-hour treatment": COMMITMENT_LABEL if priced else None,
        "Non-GPU cost": money(cost[~gpu].sum()),
        "Rows": f"{len(usage):,}",
    }


def _filtered(usage, teams=None, dates=None):
    """Rows of the chosen teams (NA team = "(untagged)") whose period_start falls on a UTC day in `dates`."""
    keep = pd.Series(True, index=usage.index)
    if teams:
        keep &= usage["team"].fillna("(untagged)").isin(teams)
    if dates:
        start = pd.Timestamp(dates[0], tz="UTC")
        keep &= (usage["period_start"] >= start) & (usage["period_start"] < pd.Timestamp(dates[1], tz="UTC")
                                                     + pd.Timedelta(days=1))
    return usage.loc[keep]


def test_the_cases_cover_every_bundled_sample():
    assert sorted(BILLING_SAMPLES + RUN_SAMPLES) == sorted(p.name for p in SAMPLES.iterdir() if p.is_file())


# --- (1) one export uploaded, the other side "(none)" ---------------------------------------------------------------

@pytest.mark.parametrize(
    ("side", "name"),
    [pytest.param("billing", name, id=name) for name in BILLING_SAMPLES]
    + [pytest.param("runs", name, id=name) for name in RUN_SAMPLES],
)
def test_an_uploaded_export_shows_its_own_totals(app, side, name):
    at = open_retro(app, {"retro.billing": NONE, "retro.runs": NONE})
    assert not at.metric and len(at.info) == 1  # nothing chosen yet
    at.file_uploader(key=f"retro.{side}_upload").set_value((name, (SAMPLES / name).read_bytes(), "text/csv")).run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert _tiles(at) == _expected_tiles(_import(name))


# --- both exports uploaded: the join keeps the bill while the runs stay within it -----------------------------------

FOCUS_DAY = (
    b"BillingAccountId,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,PricingCategory,ServiceName,ResourceId,"
    b"SkuPriceDetails,ConsumedQuantity,ConsumedUnit,ListCost,BilledCost,EffectiveCost,BillingCurrency,"
    b"CommitmentDiscountStatus,Tags\n"
    b'1,2025-06-03T00:00:00Z,2025-06-04T00:00:00Z,Usage,Standard,Amazon Elastic Compute Cloud,i-1,'
    b'"{""InstanceType"":""p5.48xlarge"",""GpuCount"":8}",24,Hours,480.00,480.00,480.00,USD,,'
    b'"{""team"":""llm-pretrain"",""run_id"":""r-1""}"\n'
    b"1,2025-06-03T00:00:00Z,2025-06-04T00:00:00Z,Usage,Standard,Amazon Simple Storage Service,bucket,,720,GB-Hours,"
    b'20.00,20.00,20.00,USD,,"{""team"":""llm-pretrain""}"\n'
)
SACCT_HEADER = ("JobID|JobName|User|Account|Partition|QOS|WCKey|State|Submit|Start|End|Elapsed|ElapsedRaw|AllocNodes|"
                "AllocTRES|NodeList|ExitCode\n")


def _job(job_id, name, start, end, gpus, hours):
    return (f"{job_id}|{name}|alice|llm-pretrain|gpu|normal||COMPLETED|{start}|{start}|{end}|{hours:02d}:00:00|"
            f"{hours * 3600}|1|cpu=8,gres/gpu={gpus},node=1|h001|0:0\n")


# r-x (8 GPUs for 1 h) has no billing row: its 8 GPU-hours are a run without a bill, never added to the bill.
UNBILLED_JOB = _job(102, "r-x", "2025-06-03T12:00:00", "2025-06-03T13:00:00", 8, 1)


@pytest.mark.parametrize(
    ("sacct", "cost", "gpu_hours"),
    [
        # The bill: r-1 192 GPU-h (8 GPUs x 24 h) for $480 ($2.50/GPU-h) + $20 storage. r-1 runs 8 GPUs x 8 h =
        # 64 GPU-h: priced $160, the uncovered 128 GPU-h keep $320, so the cost stays $500 and the hours 192.
        pytest.param(_job(101, "r-1", "2025-06-03T02:00:00", "2025-06-03T10:00:00", 8, 8), "$500", "192",
                     id="runs-within-the-bill-keep-its-cost"),
        # r-1 runs 16 GPUs x 24 h = 384 GPU-h, twice the bill: capped at the bill's 192 GPU-h and $480.
        pytest.param(_job(101, "r-1", "2025-06-03T00:00:00", "2025-06-04T00:00:00", 16, 24), "$500", "192",
                     id="hours-beyond-the-bill-are-capped-at-it"),
    ],
)
def test_joined_uploads_by_hand(app, sacct, cost, gpu_hours):
    at = open_retro(app, {"retro.billing": NONE, "retro.runs": NONE})
    at.file_uploader(key="retro.billing_upload").set_value(("focus_day.csv", FOCUS_DAY, "text/csv"))
    at.file_uploader(key="retro.runs_upload").set_value(("sacct.txt", (SACCT_HEADER + sacct + UNBILLED_JOB).encode(),
                                                         "text/plain"))
    at.run()
    assert not at.exception and not at.error
    assert (_tiles(at)["Cost"], _tiles(at)["GPU-hours"]) == (cost, gpu_hours)
    assert _tiles(at)["Runs without a bill"] == "8 GPU-h"  # r-x
    assert not at.warning  # r-1 holds every billed GPU-hour: a full match


def test_a_failed_join_warns_and_never_adds_run_hours_to_the_bill(app):
    billing, runs = _import("focus_sample.csv"), _import("wandb_sample.csv")
    assert not set(billing["run_id"].dropna()) & set(runs["run_id"].dropna())  # W&B ids are not Slurm job names
    at = open_retro(app, {"retro.runs": "wandb_sample.csv"})
    assert not at.exception and not at.error
    tiles = _tiles(at)
    assert tiles["Cost"] == usd_sig(billing["cost"].sum())
    assert tiles["GPU-hours"] == count_sig(billing["gpu_hours"].sum())  # 105k, not 203k
    assert tiles["Runs without a bill"] == f"{count_sig(runs['gpu_hours'].sum())} GPU-h"
    assert tiles["Rows"] == f"{len(billing):,}"
    (warning,) = [w.value for w in at.warning]
    assert warning.startswith("Only 0 % of billed GPU-hours matched the run export on run_id")
    assert "Try joining on project" in warning
    at.selectbox(key="retro.join").set_value("project").run()
    assert not at.warning  # the fix: 99 % of billed GPU-hours match on project
    assert _tiles(at)["GPU-hours"] == count_sig(billing["gpu_hours"].sum())


# --- (2) filters ----------------------------------------------------------------------------------------------------

FILTER_CASES = {
    "one-team": {"teams": ["llm-pretrain"]},
    "another-team": {"teams": ["research"]},
    "untagged": {"teams": ["(untagged)"]},
    "two-teams": {"teams": ["data", "llm-eval"]},
    "april": {"dates": (date(2025, 4, 1), date(2025, 4, 30))},
    "last-six-weeks": {"dates": (date(2025, 5, 20), date(2025, 6, 30))},
    "one-day": {"dates": (date(2025, 6, 2), date(2025, 6, 2))},
    "team-in-may": {"teams": ["llm-pretrain"], "dates": (date(2025, 5, 1), date(2025, 5, 31))},
}


@pytest.mark.parametrize("case", FILTER_CASES.values(), ids=FILTER_CASES.keys())
def test_filters_give_the_cost_of_the_rows_they_keep(app, case):
    usage = _import("focus_sample.csv")
    expected = _filtered(usage, **case)
    assert 0 < len(expected) < len(usage)
    at = open_retro(app, {"retro.runs": NONE})
    assert _tiles(at)["Cost"] == usd_sig(usage["cost"].sum())
    if "teams" in case:
        at.multiselect(key="retro.teams").set_value(case["teams"])
    if "dates" in case:
        at.slider(key="retro.dates").set_value(case["dates"])
    at.run()
    assert not at.exception and not at.error
    tiles = _tiles(at)
    assert tiles["Cost"] == usd_sig(expected["cost"].sum()) != usd_sig(usage["cost"].sum())
    assert (tiles["GPU-hours"], tiles["Rows"]) == (count_sig(expected["gpu_hours"].sum()), f"{len(expected):,}")


@pytest.mark.parametrize("teams", [["llm-eval"], ["data"], ["research", "(untagged)"]], ids="+".join)
def test_a_filter_over_the_joined_default_view_gives_the_bills_rows_of_the_teams_kept(app, teams):
    """The page's first view joins the bundled bill with its Slurm runs (332 rows); a team's tiles are the sums of
    that team's billing rows (the join never adds run hours to the bill), whichever rows the view keeps."""
    expected = _filtered(_import("focus_sample.csv"), teams=teams)
    at = open_retro(app)
    at.multiselect(key="retro.teams").set_value(teams).run()
    assert not at.exception and not at.error
    tiles = _tiles(at)
    assert tiles["Cost"] == usd_sig(expected["cost"].sum())
    assert tiles["GPU-hours"] == count_sig(expected["gpu_hours"].sum())


# --- (3) unreadable uploads -----------------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)
UNKNOWN_COLUMNS = b"alpha,beta,gamma\n1,2,3\n4,5,6\n"


@pytest.mark.parametrize(
    ("side", "data", "other"),
    [
        pytest.param("billing", PNG, "slurm_sample.txt", id="billing-png"),
        pytest.param("billing", UNKNOWN_COLUMNS, "slurm_sample.txt", id="billing-unknown-columns"),
        pytest.param("runs", PNG, "focus_sample.csv", id="runs-png"),
        pytest.param("runs", UNKNOWN_COLUMNS, "focus_sample.csv", id="runs-unknown-columns"),
    ],
)
def test_an_unreadable_upload_is_explained_at_the_top_and_leaves_the_view_as_it_was(app, side, data, other):
    at = open_retro(app)  # the bundled FOCUS billing and Slurm runs
    before = _tiles(at)
    at.file_uploader(key=f"retro.{side}_upload").set_value(("export.csv", data, "text/csv")).run()
    assert not at.exception
    with pytest.raises(UnreadableFile) as expected:
        ingest.import_bytes(data, filename="export.csv", options=UTC)
    assert [shown(e.value) for e in at.error] == [str(expected.value)]
    assert _tiles(at) == before  # the bundled quarter, both exports, not the other export alone
    assert _tiles(at) != _expected_tiles(_import(other))
    order = _element_order(at)
    assert order.index("error") < order.index("metric")  # said above the tiles
    sample = "focus_sample.csv" if side == "billing" else "slurm_sample.txt"
    assert any(f"the view still shows **{markdown_text(sample)}**" in info.value for info in at.info)


def _element_order(at) -> list[str]:
    """The main area's element types in the order they are drawn."""
    return [getattr(node, "type", "") for node in leaves(at.main)]


AZURE_NO_USABLE_ROW = b"UsageDateTime,MeterCategory,PreTaxCost,Currency\n2022-11-03,,,\n"  # OpenCost's BOM.csv, cut


@pytest.mark.parametrize(("runs", "advice"), [
    pytest.param(None, "", id="bill-alone"),
    pytest.param("slurm_sample.txt", " The page follows the bill: to see **slurm\\_sample\\.txt** alone, remove "
                 "**empty\\.csv** and choose (none) as the billing export.", id="beside-runs"),
])
def test_an_export_with_no_usable_row_is_said_after_another_export_s_dates(app, runs, advice):
    # The bundled quarter's date slider is in the session when the upload arrives; the new export has no dates.
    at = open_retro(app, {"retro.runs": runs or NONE})
    assert at.slider(key="retro.dates").value == (date(2025, 4, 1), date(2025, 6, 30))
    at.file_uploader(key="retro.billing_upload").set_value(("empty.csv", AZURE_NO_USABLE_ROW, "text/csv")).run()
    assert not at.exception
    assert [w.value for w in at.warning] == [
        "**empty\\.csv** holds no row the Retrospective can use: of its 1 row, 1 rejected (line 2: PreTaxCost is "
        "empty). The Import usage page lists every rejected and excluded row with its reason." + advice]


# --- (4) every tab on the bundled data ------------------------------------------------------------------------------

def _keys_and_labels(block):
    found = {getattr(block, "key", None), getattr(block, "label", None)}
    for child in (getattr(block, "children", None) or {}).values():
        found |= _keys_and_labels(child)
    return found


# Something each tab draws and no other does.
TAB_MARKERS = {
    "Spend": "retro.spend",
    "Attribution": "retro.attribution",
    "Plan vs actual": "retro.gap",
    "Waste": "retro.waste",
    "Load profile": "retro.heatmap",
    "Purchase mix": "retro.mix",
    "Unit costs": "Achieved MFU",
}


def test_every_tab_has_a_marker():
    assert list(TAB_MARKERS) == TABS


@pytest.mark.parametrize("tab", TABS)
def test_every_tab_renders_on_the_bundled_data(app, tab):
    at = open_retro(app)
    at.session_state["retro.view"] = tab
    at.run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert [t.label for t in at.tabs if len(t.children)] == [tab]  # lazy: only the open tab draws
    assert TAB_MARKERS[tab] in _keys_and_labels(next(t for t in at.tabs if t.label == tab))


def _gpu_hours_label(value):
    return f"{count_sig(value)} GPU-h"


# The waterfall's unit -> its axis title and label format (dashboard.figures.retro_gap).
GAP_UNITS = {"usd": ("US dollars", usd_sig), "gpu_hours": ("GPU-hours", _gpu_hours_label)}


@pytest.mark.parametrize("unit", GAP_UNITS)
def test_plan_vs_actual_parts_add_up_to_the_stated_gap(app, unit):
    axis, fmt = GAP_UNITS[unit]
    at = open_retro(app, {"retro.view": "Plan vs actual"})
    if unit != "usd":
        at.button_group(key="retro.gap_unit").set_value(unit).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="retro.plan").value == SAMPLE_PLAN  # the bundled quarter opens with its own plan

    joined, _ = join_usage(_amortised("focus_sample.csv"), _amortised("slurm_sample.txt"), on="run_id")
    scenario = presets()[SAMPLE_PLAN]
    main_runs = gap.suggest_main_runs(joined)
    assert at.multiselect(key="retro.main_runs.run_id").value == main_runs == ["pretrain-13b"]
    summary = gap.decomposition_summary(scenario_outputs(scenario), scenario, joined, main_runs, FAILED_STATES)
    plan, actual = getattr(summary, f"plan_{unit}"), getattr(summary, f"actual_{unit}")

    parts = at.dataframe[0].value
    assert parts["part"].tolist() == list(gap.PARTS)
    assert parts[unit].sum() == pytest.approx(actual - plan, rel=1e-9)
    title = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["title"]["text"]
    sign = "+" if actual > plan else ""
    gap_text = sign + fmt(actual - plan)
    assert title == f"Plan vs actual ({axis}): {fmt(plan)} planned, {fmt(actual)} actual, gap {gap_text}"


# --- (5) the URL carries the filters ----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("url", "billing", "case"),
    [
        pytest.param({"retro.teams": "llm-pretrain"}, "focus_sample.csv", {"teams": ["llm-pretrain"]}, id="one-team"),
        pytest.param({"retro.teams": ["data", "research"]}, "focus_sample.csv", {"teams": ["data", "research"]},
                     id="two-teams"),
        pytest.param({"retro.dates": ["2025-05-01", "2025-05-31"]}, "focus_sample.csv",
                     {"dates": (date(2025, 5, 1), date(2025, 5, 31))}, id="dates"),
        pytest.param({"retro.billing": "gcp_sample.csv", "retro.teams": "research"}, "gcp_sample.csv",
                     {"teams": ["research"]}, id="another-billing-sample"),
    ],
)
def test_a_link_selects_the_filters(app, url, billing, case):
    at = open_retro(app, {"retro.runs": NONE, **url})
    assert not at.exception and not at.error and not at.warning
    assert at.multiselect(key="retro.teams").value == case.get("teams", [])
    assert at.slider(key="retro.dates").value == case.get("dates", (date(2025, 4, 1), date(2025, 6, 30)))
    expected = _filtered(_import(billing), **case)
    assert _tiles(at)["Cost"] == usd_sig(expected["cost"].sum())


def test_a_link_opens_a_tab(app):
    at = open_retro(app, {"retro.view": "Waste"})
    assert not at.exception
    assert [t.label for t in at.tabs if len(t.children)] == ["Waste"]


# --- (6) purchase-mix what-if ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("reserved", "spot", "too_much"),
    [(80, 30, True), (100, 1, True), (51, 50, True), (70, 30, False), (0, 100, False), (50, 0, False)],
)
def test_a_mix_over_100_percent_is_an_error_not_an_exception(app, reserved, spot, too_much):
    at = open_retro(app, {"retro.runs": NONE, "retro.view": "Purchase mix"})
    at.slider(key="retro.mix_reserved").set_value(reserved)
    at.slider(key="retro.mix_spot").set_value(spot)
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    tiles = _tiles(at)
    if too_much:
        assert errors == [f"Reserved {reserved} % + spot {spot} % exceeds 100 %: lower one of them "
                          "(on-demand is the rest)."]
        assert "At this mix" not in tiles
    else:
        usage = _import("focus_sample.csv")
        assert errors == []
        assert tiles["GPU cost as billed"] == usd_sig(usage.loc[usage["gpu_hours"] != 0, "cost"].sum())
        assert "At this mix" in tiles


# --- (7) what the page knows and does not ---------------------------------------------------------------------------

def _chart(at, key):
    return json.loads(next(chart for chart in at.get("plotly_chart") if chart.proto.id.endswith(key) or
                           key in chart.proto.id).proto.spec)


def _trace_names(at):
    return [trace.get("name") for chart in at.get("plotly_chart")
            for trace in json.loads(chart.proto.spec)["data"]]


def test_the_whole_export_is_drawn_against_its_budget_and_a_team_only_against_its_own(app):
    at = open_retro(app, {"retro.runs": NONE})
    assert "Budget $1M" in _trace_names(at)
    at.multiselect(key="retro.teams").set_value(["research"]).run()
    assert not at.exception and not at.error
    assert not [name for name in _trace_names(at) if name and name.startswith("Budget")]  # not the company's $1M
    at.number_input(key="retro.view_budget.teams=research").set_value(60_000.0).run()
    assert "Budget $60k" in _trace_names(at)
    at.multiselect(key="retro.teams").set_value([]).run()
    assert "Budget $1M" in _trace_names(at)


def test_a_closed_quarter_gets_no_forecast_even_for_a_team_whose_spend_stops_early(app):
    at = open_retro(app, {"retro.runs": NONE, "retro.teams": "research"})  # research's last GPU day is 28 May
    assert not [name for name in _trace_names(at) if name and name.startswith("Forecast")]
    assert any("No forecast: the export covers the period" in c.value for c in at.caption)


@pytest.mark.parametrize(("name", "what"), [("gcp_sample.csv", "Commitments amortised here"),
                                            ("azure_sample.csv", "Commitments amortised here"),
                                            ("focus_sample.csv", "Commitments amortised by the provider")])
def test_the_price_per_gpu_hour_says_how_commitments_were_treated(app, name, what):
    at = open_retro(app, {"retro.billing": name, "retro.runs": NONE})
    assert not at.exception and not at.error
    tiles = _tiles(at)
    assert tiles["$/GPU-hour treatment"] == COMMITMENT_LABEL
    assert tiles == _expected_tiles(_import(name))
    assert any(c.value.startswith(what) for c in at.caption)


@pytest.mark.parametrize(("slot", "name", "what", "button"), [
    ("billing", "wandb_sample.csv", "a W&B runs export, not a billing export", "Use it as the run export"),
    ("billing", "slurm_sample.txt", "a Slurm sacct export, not a billing export", "Use it as the run export"),
    ("runs", "focus_sample.csv", "a FOCUS export, not a run export", "Use it as the billing export"),
])
def test_a_file_in_the_wrong_slot_is_recognised_and_can_be_moved(app, slot, name, what, button):
    at = open_retro(app, {"retro.billing": NONE, "retro.runs": NONE})
    at.file_uploader(key=f"retro.{slot}_upload").set_value((name, (SAMPLES / name).read_bytes(), "text/csv")).run()
    assert not at.exception and not at.error
    (warning,) = [w.value for w in at.warning]
    assert what in warning
    assert not at.get("plotly_chart") and not at.metric  # no empty chart with a legend
    moved = next(b for b in at.button if b.label == button)
    moved.click().run()
    assert not at.exception and not at.error and not at.warning
    assert _tiles(at) == _expected_tiles(_import(name))


def test_an_upload_over_a_sample_is_said_on_the_picker(app):
    at = open_retro(app, {"retro.runs": NONE})
    name = "gcp_sample.csv"
    at.file_uploader(key="retro.billing_upload").set_value((name, (SAMPLES / name).read_bytes(), "text/csv")).run()
    assert any(c.value.startswith(f"Replaced by your upload **{markdown_text(name)}**") for c in at.caption)


def test_the_plan_choice_survives_an_upload_and_a_far_plan_is_flagged(app):
    at = open_retro(app, {"retro.view": "Plan vs actual"})
    assert at.selectbox(key="retro.plan").value == SAMPLE_PLAN
    assert not at.warning
    name = "gcp_sample.csv"
    at.file_uploader(key="retro.billing_upload").set_value((name, (SAMPLES / name).read_bytes(), "text/csv")).run()
    assert at.selectbox(key="retro.plan").value == NONE  # the sample's plan went with the sample (issue 34)
    llama = next(name for name in presets() if name.startswith("Llama"))
    at.selectbox(key="retro.plan").set_value(llama).run()
    (warning,) = [w.value for w in at.warning]
    assert warning.startswith("The actual main run used") and "fewer GPU-hours than the plan's" in warning
    at.session_state["retro.view"] = "Spend"
    at.run()
    at.session_state["retro.view"] = "Plan vs actual"
    at.run()
    assert at.selectbox(key="retro.plan").value == llama  # kept while the tab was closed


def test_unknown_parts_are_drawn_as_unknown(app):
    at = open_retro(app, {"retro.view": "Plan vs actual"})  # Slurm: states known, tokens not
    spec = _chart(at, "retro.gap")
    waterfall, unknown = spec["data"]
    assert waterfall["text"][2] == "unknown"
    assert unknown["x"] == ["efficiency"]
    assert unknown["text"][0].replace("<br>", " ") == f"unknown: import {gap.NEEDS_TOKENS}"


def test_waste_has_a_headline_in_dollars_and_share_of_spend(app):
    at = open_retro(app, {"retro.view": "Waste"})
    assert not at.exception and not at.error
    (headline,) = [h.value for h in at.subheader]
    assert headline.startswith("Waste found: $") and headline.endswith("of spend")
    labels = [m.label for m in at.metric]
    assert {"Successful-run share", "Storage growing", "Untagged spend (hygiene)"} <= set(labels)


def test_the_rows_behind_a_waste_check_are_read_when_asked(app):
    at = open_retro(app, {"retro.view": "Waste"})
    assert not at.exception
    drawn = len(at.dataframe)  # the tab as first drawn
    at.toggle(key="retro.waste.rows.storage_growth").set_value(True).run()
    assert not at.exception and len(at.dataframe) == drawn + 1
    assert "3 rows behind this figure (first 3 shown)." in [c.value for c in at.caption]
    (rows,) = [frame.value for frame in at.dataframe if "northwind-checkpoints" in set(frame.value.get(
        "resource_id", []))]  # the sample's checkpoint bucket: $46, $207, $368 a month
    assert rows["resource_id"].tolist() == ["northwind-checkpoints"] * 3
    assert rows["cost"].tolist() == [46.0, 207.0, 368.0]


def test_unit_costs_say_what_to_import_in_words(app):
    at = open_retro(app, {"retro.view": "Unit costs"})
    captions = [c.value for c in at.caption]
    assert any(c.startswith("$ per million tokens needs a run export with tokens: load the W&B sample")
               for c in captions)
    assert not any("usd_per" in c or c.startswith(("mfu", "usd")) for c in captions)  # never internal names


# --- (8) billing data shown as text (issue 12, item 9) --------------------------------------------------------------

EVIL_TEAM = '<a href="http://evil.example/login"><b>ops</b></a>'
EVIL_IDS = ["[x](http://evil.example/login)", "![x](http://evil.example/pixel.png)"]


def _hostile_focus() -> bytes:
    """A FOCUS quarter whose team tag is a link and whose two storage buckets, named like a markdown link and
    image, grow every month (so Waste → Storage growth lists them)."""
    header = ["BillingAccountId", "ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "PricingCategory",
              "ServiceName", "ResourceId", "SkuPriceDetails", "ConsumedQuantity", "ConsumedUnit", "ListCost",
              "BilledCost", "EffectiveCost", "BillingCurrency", "CommitmentDiscountStatus", "Tags"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    team = json.dumps({"team": EVIL_TEAM, "project": ":red[spoofed]", "run_id": "r-1"})
    for month, cost in ((4, 100.0), (5, 200.0), (6, 400.0)):
        writer.writerow(["1", f"2025-{month:02d}-03T00:00:00Z", f"2025-{month:02d}-04T00:00:00Z", "Usage", "Standard",
                         "Amazon Elastic Compute Cloud", "i-1", json.dumps({"InstanceType": "p5.48xlarge",
                                                                            "GpuCount": 8}),
                         "24", "Hours", "480", "480", "480", "USD", "", team])
        for bucket in EVIL_IDS:
            writer.writerow(["1", f"2025-{month:02d}-01T00:00:00Z", f"2025-{month + 1:02d}-01T00:00:00Z", "Usage",
                             "Standard", "Amazon Simple Storage Service", bucket, "", "720", "GB-Hours", str(cost),
                             str(cost), str(cost), "USD", "", ""])
    return out.getvalue().encode()


def _texts(block):
    """Every string an element shows as markdown: values, labels, bodies and help of the whole tree."""
    found = []
    for name in ("value", "label", "body", "help"):
        value = getattr(block, name, None)
        if isinstance(value, str):
            found.append(value)
    for child in (getattr(block, "children", None) or {}).values():
        found += _texts(child)
    return found


LIVE_MARKDOWN = re.compile(r"(?<!\\)\]\((?:https?:)?//|(?<!\\):red\[")


def test_billing_data_never_becomes_a_link_an_image_or_styled_text(app):
    at = open_retro(app, {"retro.billing": NONE, "retro.runs": NONE})
    at.file_uploader(key="retro.billing_upload").set_value(("evil.csv", _hostile_focus(), "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    seen_storage = False
    for tab in TABS:
        at.session_state["retro.view"] = tab
        at.run()
        assert not at.exception
        texts = _texts(at.main) + _texts(at.sidebar)
        assert not [text for text in texts if LIVE_MARKDOWN.search(text)]
        seen_storage |= any("pixel" in text for text in texts)
        for chart in at.get("plotly_chart"):
            spec = chart.proto.spec
            assert "<a " not in spec and "<b>" not in spec, tab
            if tab in ("Spend", "Attribution"):
                assert "&lt;a href=" in spec  # the tag is there, as text
    assert seen_storage  # the bucket names were shown (escaped) in Waste → Storage growth


@pytest.mark.parametrize(("name", "slot"), [("gcp_sample.csv", "billing"), ("wandb_sample.csv", "runs")])
def test_the_import_page_hands_its_import_to_the_retrospective(app, name, slot):
    at = app.run()
    at.switch_page("app_pages/imports.py").run()
    at.selectbox(key="sample").set_value(name).run()
    next(b for b in at.button if b.label == "Open in Retrospective").click().run()
    assert not at.exception and not at.error
    assert any(c.value.startswith("Replaced by **") and "from Import usage" in c.value for c in at.caption)
    other = "focus_sample.csv" if slot == "runs" else "slurm_sample.txt"
    billing = _import(name if slot == "billing" else other)
    assert _tiles(at)["Cost"] == usd_sig(billing["cost"].sum())
    assert any(f"**{markdown_text(name)}**" in m.value for m in at.markdown)  # the one-line data summary
    next(b for b in at.button if b.label == "Use the choice above instead").click().run()
    assert not any("from Import usage" in c.value for c in at.caption)


def _focus_days(days: int) -> bytes:
    """FOCUS_DAY's GPU row on each of ``days`` days from 1 June 2025."""
    header, gpu_row = FOCUS_DAY.split(b"\n")[:2]
    rows = [gpu_row.replace(b"2025-06-03T", f"2025-06-{1 + day:02d}T".encode())
            .replace(b"2025-06-04T", f"2025-06-{2 + day:02d}T".encode()) for day in range(days)]
    return b"\n".join([header, *rows]) + b"\n"


@pytest.mark.parametrize(("data", "forecast", "caption"), [
    # 1–7 June of a quarter that ends on 30 June: seven days of data are enough for a run rate.
    pytest.param(_focus_days(7), True, "Forecast: the export ends on 07 Jun 2025, before the quarter does",
                 id="a-week"),
    # One day (3 June), or six, are not: no forecast, and the caption says why.
    pytest.param(FOCUS_DAY, False, "No forecast: the data cover 1 day, fewer than the 7 a run rate needs",
                 id="one-day"),
    pytest.param(_focus_days(6), False, "No forecast: the data cover 6 days, fewer than the 7", id="six-days"),
])
def test_an_export_that_stops_before_its_quarter_ends_gets_a_forecast_band_from_a_week_of_data(
        app, data, forecast, caption):
    at = open_retro(app, {"retro.billing": NONE, "retro.runs": NONE})
    at.file_uploader(key="retro.billing_upload").set_value(("focus.csv", data, "text/csv")).run()
    assert not at.exception and not at.error
    assert ("Forecast (80 % band)" in _trace_names(at)) is forecast
    assert any(caption in c.value for c in at.caption), [c.value for c in at.caption]


# (tab, table column, how it is configured): sums over $1k or 1,000 GPU-hours have no decimals; a rate keeps cents.
TABLE_FORMATS = [
    ("Attribution", "cost", {"format": "dollar", "step": 1.0}),
    ("Attribution", "gpu_hours", {"format": "%,.0f"}),
    ("Plan vs actual", "usd", {"format": "dollar", "step": 1.0}),
    ("Plan vs actual", "gpu_hours", {"format": "%,.0f"}),
    ("Purchase mix", "cost", {"format": "dollar", "step": 1.0}),
    ("Purchase mix", "gpu_hours", {"format": "%,.0f"}),
    ("Purchase mix", "usd_per_gpu_hour", {"format": "dollar"}),
]


@pytest.mark.parametrize(("tab", "column", "expected"), TABLE_FORMATS)
def test_table_sums_have_thousands_separators_and_no_cents(app, tab, column, expected):
    at = open_retro(app)
    at.session_state["retro.view"] = tab
    at.run()
    configs = [json.loads(frame.proto.columns) for frame in at.dataframe]
    config = next(config[column]["type_config"] for config in configs if column in config)
    assert {key: config.get(key) for key in expected} == expected
    assert "step" in expected or "step" not in config


def test_an_import_note_names_its_file_once_and_writes_dollars_as_the_tiles(app):
    # The bundled FOCUS sample's unused commitment: 73,248 USD (CommitmentDiscountStatus = Unused rows), as the
    # tile caption beside it writes it, and under the file's name without "In focus_sample.csv, " again.
    at = open_retro(app)
    assert not at.exception
    texts = [shown(block.value) for block in (*at.markdown, *at.caption)]
    note = next(text for text in texts if "CommitmentDiscountStatus = Unused" in text)
    assert "**focus_sample.csv**: Unused commitment (CommitmentDiscountStatus = Unused) is $73.2k of cost" in note
    assert "In focus_sample.csv" not in note
    assert any("**focus_sample.csv** + **slurm_sample.txt** · " in text and " % matched" in text for text in texts)


@pytest.mark.parametrize(("join", "said"), [("run_id", True), ("project", False)])
def test_missing_tokens_are_explained_by_the_join_when_the_run_export_counts_them(app, join, said):
    # The W&B sample counts tokens, but its run ids are hashes no bill carries: joined on run_id, no token reaches
    # the view, and Unit costs must not tell the user to load the W&B sample they have loaded. On project they do.
    at = open_retro(app, {"retro.runs": "wandb_sample.csv", "retro.join": join})
    at.session_state["retro.view"] = "Unit costs"
    at.run()
    assert not at.exception
    captions = [shown(c.value) for c in at.caption]
    explained = [c for c in captions if "wandb_sample.csv** counts tokens, but none of its runs" in c]
    assert bool(explained) == said
    if said:
        assert all("load the W&B sample" not in c for c in captions)
        assert any(c.startswith("$ per million tokens needs runs with tokens in this view") for c in captions)
        assert "**project** in the sidebar" in explained[0]
    else:
        (value,) = [m.value for m in at.metric if m.label == "$ per million tokens"]
        assert value.startswith("$")  # the tokens reached the view


def test_plan_vs_actual_says_why_efficiency_is_unknown_when_the_run_export_counts_tokens(app):
    at = open_retro(app, {"retro.runs": "wandb_sample.csv", "retro.join": "run_id"})
    at.session_state["retro.view"] = "Plan vs actual"
    at.run()
    assert not at.exception
    assert any(shown(c.value).startswith("Efficiency needs the main run's tokens: **wandb_sample.csv** counts tokens")
               for c in at.caption)
