"""The report's programme: per option a table of its stages (GPU-hours, cost, calendar days, note) under the final
run's share, stage names shown as text, and the comparison's programme rows.

The compute-only plans cost GPU-hours × $2 on 100 GPUs: the main run's H = 6·1e9·1e11 / (989e12 · 0.4 · 3600) =
421.3 GPU-hours ($843, 0.176 days); 8 ablation runs at 1 % of its compute take 0.08·H = 33.7 GPU-hours ($67.4,
33.7 / 100 / 24 = 0.014 days); evaluations of one checkpoint in four every 30 minutes, beside the run, take
4.213 h / 2 × 2·1e9·3e8 / (989e12 · 0.2 · 3600) = 1.77 GPU-hours ($3.55, 0.00074 days).
"""

from datetime import UTC, datetime

import pytest
from bare_plan import COMPUTE_ONLY
from report_page import Page

from dashboard.core.scenario import Scenario
from dashboard.figures import plan_charts
from dashboard.report import html as report

PLAN = COMPUTE_ONLY | dict(total_params=1e9, tokens=1e11, reserved_share=1.0, spot_share=0.0,
                          price_reserved_per_gpu_hour=2.0, gpu_count=100, budget_usd=1e6)
HOSTILE = "<script>alert(1)</script>"
ABLATIONS = {"kind": "ablations", "name": HOSTILE, "runs": 8, "compute_fraction": 0.01, "repeat_allowance": 0.0,
             "gpu_count": 64}
EVALUATION = {"kind": "evaluation", "every_nth_checkpoint": 4, "benchmark_tokens": 3e8, "inference_mfu": 0.2}
GENERATED = datetime(2026, 12, 1, 14, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def two() -> tuple[str, Page]:
    staged = Scenario.model_validate(PLAN | {"name": "Staged", "programme": [ABLATIONS, EVALUATION],
                                                     "start_date": "2027-01-04"})
    single = Scenario.model_validate(PLAN | {"name": "Single"})
    document = report.build_report([staged, single], generated_at=GENERATED, draws=50)
    return document, Page(document)


def test_each_option_has_its_programme_table(two):
    _, page = two
    assert page.headings["h3"].count("Programme") == 2  # one per option
    staged = page.tables["scenario-1"]
    assert staged[0] == ["Stage", "GPU-hours", "Cost", "Calendar days", "Note"]
    assert staged[1][:4] == [HOSTILE, "33.7", "$67.4", "0.014 days"]
    assert staged[1][4] == "8 runs of 224M at 0.01 × the main run's compute"  # √(6e18 / 120) = 2.24e8 parameters
    assert staged[2][:4] == ["Main pre-training", "421", "$843", "0.176 days"]
    assert staged[3][:4] == ["Evaluations", "1.77", "$3.55", "0.00074 days"]
    # 421.3 + 33.7 + 1.77 = 456.8 GPU-hours, $914; the calendar is the ablations then the main run (evaluations
    # beside it): 1.08 × 421.3 / 100 / 24 = 0.19 days.
    assert staged[4] == ["Programme total", "457", "$914", "0.19 days", ""]
    assert page.tables["scenario-2"][1:] == [
        ["Main pre-training", "421", "$843", "0.176 days", page.tables["scenario-2"][1][4]],
        ["Programme total", "421", "$843", "0.176 days", ""]]


def test_the_caption_gives_the_final_run_s_share_and_the_calendar(two):
    _, page = two
    text = "".join(page.text)
    # 421.3 / 456.8 = 92.2 %; 0.19 days from 4 January end ⌈0.19⌉ = 1 day on.
    assert ("Final run's share of the programme: 92.2 % ($843 of $914). Programme calendar: 0.19 days, 2027-01-04 "
            "to 2027-01-05.") in text
    assert "Final run's share of the programme: 100 % ($843 of $843). Programme calendar: 0.176 days." in text


def test_a_stage_name_is_text_never_markup(two):
    document, page = two
    assert HOSTILE not in document
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in document
    # plotly.js, the print helper, the three comparison charts and each option's: none from the name
    assert len(page.scripts) == 2 + 3 + 2 * (len(plan_charts.CHARTS) + 2)


def test_the_comparison_has_the_programme_rows(two):
    _, page = two
    assert page.row("comparison", "Programme total")[1:4] == ["$914", "$843", "-$71"]  # $842.6 − $913.6 = −$71.0
    assert page.row("comparison", "Final run's share of the programme")[1:4] == ["92.2 %", "100 %", "+7.77 pp"]
    assert page.row("comparison", "Stage cost: Ablations")[1:4] == ["$67.4", "$0", "-$67.4"]
    assert page.row("comparison", "Stage cost: Main pre-training")[1:4] == ["$843", "$843", "≈ same"]
    # The inputs that differ list the programme as text, the hostile stage name escaped with it.
    assert page.row("comparison", "Programme")[1:3] == [f"{HOSTILE} (8 runs); Evaluations", "none (the single run)"]
