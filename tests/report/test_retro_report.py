"""The Retrospective report (dashboard/report/retro_html.py through dashboard/ui/retro_report_view.py): the page's
tiles, its three figures and their notes, offline, printable on A4, escaped, in the bill's currency.

The report is built as the page's download builds it (`retro_report_view._report`, with the widgets' defaults) from
the page's default data, the bundled FOCUS sample joined with the Slurm sample on run_id; the tiles' expected values
are computed here by hand from the rows with pandas and written as the page writes them.
"""

import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard.core.presets import presets
from dashboard.format import count_sig, money
from dashboard.ingest import import_path
from dashboard.ingest.schema import ReadOptions
from dashboard.query import tables
from dashboard.report.retro_html import ReportFigure, Tiles, note_html, retrospective_report
from dashboard.retro import filters as view
from dashboard.retro.amortise import amortise_commitments
from dashboard.retro.filters import filter_options
from dashboard.retro.join import join_usage
from dashboard.retro.summary import Accounting, accounting
from dashboard.retro.view import Filters, RetroView
from dashboard.ui import retro_report_view as report_view

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples"
NOK_BILL = ROOT / "tests" / "data" / "currency" / "focus_one_gpu_nok.csv"
HOSTILE = "<script>alert(1)</script>"
SAMPLE_PLAN = next(name for name in presets() if name.startswith("Sample organisation"))
MINUTE = "2025-07-01T09:30:00+00:00"


class _Parsed(HTMLParser):
    """Every src / href, the tiles' (label, value) pairs, the chart divs and the text outside scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.tiles: list[list[str]] = []
        self.charts = 0
        self.text: list[str] = []
        self._tile_part: str | None = None
        self._script = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.targets += [value for name, value in attrs if name in ("src", "href") and value]
        classes = (attributes.get("class") or "").split()
        if "tile" in classes:
            self.tiles.append([])
        if "plotly-graph-div" in classes:
            self.charts += 1
        if self.tiles and ("label" in classes or "value" in classes):
            self._tile_part = "part"
        self._script = tag == "script"

    def handle_endtag(self, tag):
        self._tile_part = None
        self._script = False

    def handle_data(self, data):
        if self._tile_part and self.tiles:
            self.tiles[-1].append(data)
        if not self._script:
            self.text.append(data)


def _parsed(text: str) -> _Parsed:
    parser = _Parsed()
    parser.feed(text)
    return parser


def _import(path: Path, **options):
    return import_path(path, options=ReadOptions(**options)) if options else import_path(path)


class _Part:
    """What the page holds of an import: its file name, summary and rows."""

    def __init__(self, path: Path, usage: pd.DataFrame, summary: Accounting) -> None:
        self.filename, self.usage, self.summary = path.name, usage, summary


def _report(billing_path: Path, runs_path: Path | None = None, *, teams=None, billing_name: str | None = None,
            plan=SAMPLE_PLAN) -> tuple[str, pd.DataFrame, str]:
    """The report as the page's download writes it for this billing export (and run export), whole period: the
    report, the rows of the view it shows and the currency."""
    billing_rows, billing_report = import_path(billing_path)
    amortised, amortisation = amortise_commitments(tables.table_of(billing_rows))
    runs = None
    if runs_path is not None:
        runs_rows, runs_report = _import(runs_path, timezone="UTC")
        runs = _Part(runs_path, runs_rows, accounting(runs_report))
    usage, stats = join_usage(amortised, runs and tables.table_of(runs.usage), on="run_id")
    currencies = sorted(usage.to_pandas()["currency"].dropna().unique())
    currency = "+".join(currencies) or None  # as the page names it
    bounds = filter_options(usage)
    filters = (bounds.start, bounds.end, tuple(teams) if teams else None, None, None)
    shown = view.filtered(usage, *filters) if teams else usage
    billing = _Part(billing_path, billing_rows, accounting(billing_report))
    if billing_name:
        billing.filename = billing_name
    files = tuple(report_view.data_line(billing, runs, "run_id"))
    retro = RetroView(
        data_key=(billing_path.name, runs_path and runs_path.name, "run_id"), usage=usage, shown=shown,
        billing=amortised, runs=runs and tables.table_of(runs.usage), bounds=bounds,
        filters=Filters(*filters), join_on="run_id", stats=stats, amortisation=amortisation,
        currencies=tuple(currencies), files=files, plan=presets()[plan] if plan else None)
    text = report_view._report(retro, minute=MINUTE)
    return text, shown.to_pandas(), currency


@pytest.fixture(scope="module")
def sample():
    return _report(SAMPLES / "focus_sample.csv", SAMPLES / "slurm_sample.txt")


def test_the_tiles_hold_the_pages_values_computed_by_hand(sample):
    text, rows, currency = sample
    assert currency == "USD"
    gpu = rows["gpu_hours"] > 0
    cost = rows["cost"].sum()
    gpu_hours = rows.loc[gpu, "gpu_hours"].sum()
    expected = {
        "Cost": money(cost),
        "GPU-hours": count_sig(gpu_hours),
        "$ per GPU-hour": money(rows.loc[gpu, "cost"].sum() / gpu_hours),
        "Non-GPU cost": money(rows.loc[~gpu, "cost"].sum()),
        "Rows": f"{len(rows):,}",
    }
    tiles = {label: value for label, value, *_ in _parsed(text).tiles}
    assert {label: tiles[label] for label in expected} == expected
    assert expected["Cost"] == "$951k"  # the sample's quarter, as the page's Cost tile reads it


def test_the_report_has_the_title_stamp_data_line_filters_and_the_three_figures(sample):
    text, _, _ = sample
    parsed = _parsed(text)
    plain = " ".join(" ".join(parsed.text).split())
    assert "<title>Retrospective report</title>" in text
    assert "Generated 2025-07-01 09:30 UTC" in plain
    assert "focus_sample.csv (billing export, 242 rows used)" in plain
    assert "slurm_sample.txt (run export" in plain and "joined on run_id" in plain
    assert re.search(r"Dates: \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d \(UTC\), the whole export; Teams: all", plain)
    assert parsed.charts == 3
    for heading in ("Spend", "Waste", "Plan vs actual"):
        assert f"<h2>{heading}</h2>" in text
    assert re.search(r"Waste found: \$\d", plain)
    assert "Plan: " + SAMPLE_PLAN.split(":")[0] in plain
    assert "The 6 parts add up exactly to actual − plan" in plain
    assert "Rows spanning several days" in plain


def test_the_report_loads_nothing_from_the_network_and_prints_on_a4(sample):
    text, _, _ = sample
    targets = _parsed(text).targets
    assert targets and all(target.startswith("#") for target in targets), targets
    assert not re.search(r"""<(script|link|img|iframe)[^>]+(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "@page { size: A4" in text
    assert re.search(r"figure\.chart \{[^}]*break-inside: avoid", text)
    assert text.count("<script>") == 1 + 3  # plotly.js once, then one call per chart


def test_a_hostile_team_name_and_file_name_are_escaped(tmp_path):
    source = (SAMPLES / "focus_sample.csv").read_text(encoding="utf-8")
    tag = '""team"": ""data""'
    assert tag in source
    hostile = tmp_path / "hostile.csv"
    hostile.write_text(source.replace(tag, '""team"": ""<script>alert(1)</script>""'), encoding="utf-8")
    text, rows, _ = _report(hostile, teams=[HOSTILE], billing_name="<img src=x onerror=alert(1)>.csv", plan=None)
    assert len(rows) > 0
    assert HOSTILE not in text
    assert "<img src=x" not in text
    assert "Teams: &lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "&lt;img src=x onerror=alert(1)&gt;.csv" in text
    assert "No plan chosen to compare with" in text


def test_a_nok_bill_is_reported_in_nok(tmp_path):
    text, rows, currency = _report(NOK_BILL)
    assert currency == "NOK"
    tiles = {label: value for label, value, *_ in _parsed(text).tiles}
    assert tiles["Cost"] == "30.2 NOK"  # 2 × 12.34 + 5.50 (the fixture's README)
    assert tiles["NOK per GPU-hour"] == "12.3 NOK"
    assert tiles["Non-GPU cost"] == "5.5 NOK"
    assert not any("$" in value for value in tiles.values())
    assert "$ per GPU-hour" not in tiles
    assert "amounts in NOK" in text
    plain = " ".join(" ".join(_parsed(text).text).split())
    assert "the gap is compared in GPU-hours" in plain  # the plan in US dollars is not mixed with NOK


def test_the_builder_escapes_notes_and_themes_figures_whatever_the_default_template():
    figure = go.Figure(go.Bar(x=["a"], y=[1]))
    figure.layout.template = go.layout.Template(layout={"colorway": ["#000001"]})  # streamlit's placeholders
    text = retrospective_report(
        Tiles(cost=1.0, gpu_hours=None, per_gpu_hour=None, non_gpu_cost=0.0, rows=1),
        [ReportFigure("Spend", figure, notes=[f"**{HOSTILE}** \\*kept\\*"]), ReportFigure("Waste", None,
                                                                                          empty="None found.")],
        currency=None, generated_at=datetime(2025, 1, 2, 3, 4, tzinfo=UTC), files=["a.csv"], filters=[])
    assert HOSTILE not in text
    assert "<strong>&lt;script&gt;alert(1)&lt;/script&gt;</strong> *kept*" in text
    assert "#000001" not in text
    assert "None found." in text and "Generated 2025-01-02 03:04 UTC" in text
    assert note_html("a \\$ b") == "a $ b"
