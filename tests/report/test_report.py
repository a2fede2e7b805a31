"""The HTML report: self-contained (nothing loaded from the network), escaped, every chart and caveat present,
and the same numbers as the CLI. Pages are read with the standard library's HTMLParser."""

import json
from datetime import UTC, datetime

import pytest
from plotly.offline import get_plotlyjs
from report_page import Page

from dashboard.cli import main
from dashboard.core import catalogue, uncertainty
from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario, default_scenario
from dashboard.report import cells
from dashboard.report import html as report
from dashboard.report.cells import count, money

GENERATED = datetime(2026, 12, 1, 14, 30, tzinfo=UTC)
DRAWS = 200
HOSTILE = "<script>alert(1)</script>"
TST_PRESET = next(s for s in presets().values() if s.method == "tst")
CHARTS_PER_SCENARIO = 6 + 2  # the Plan page's six, the Monte Carlo distribution and tornado
COMPARE_CHARTS = 3
CAVEAT_HEADINGS = (
    "Compare methods only at equal loss", "Validate any speedup with a pilot before the plan relies on it",
    "What is not counted", "Monte Carlo assumptions",
)
EXTERNAL = ("http://", "https://", "//")


@pytest.fixture(scope="module")
def three() -> tuple[str, Page]:
    scenarios = [default_scenario(), TST_PRESET, Scenario(name=HOSTILE, gpu_count=256)]
    document = report.build_report(scenarios, generated_at=GENERATED, draws=DRAWS, seed=3, title="Q3 <options>")
    return document, Page(document)


def test_nothing_is_loaded_from_the_network(three):
    _, page = three
    for tag, attributes in page.tags:
        for name in ("src", "href", "action", "data", "poster"):
            value = (attributes.get(name) or "").strip().lower()
            assert not value.startswith(EXTERNAL), (tag, name, value)
        assert tag not in {"link", "img", "iframe", "object", "embed"}, tag
        assert "url(" not in (attributes.get("style") or "")
    internal = [a["href"] for tag, a in page.tags if tag == "a"]
    assert internal and all(href.startswith("#") for href in internal)


def test_plotly_js_is_embedded_once_before_the_charts(three):
    document, page = three
    assert document.count(get_plotlyjs()[:200]) == 1
    assert len([script for script in page.scripts if len(script) > 1_000_000]) == 1
    assert document.index(get_plotlyjs()[:200]) < document.index('class="plotly-graph-div"')


@pytest.mark.parametrize("scenario_count", [1, 2, 4])
def test_one_chart_div_per_expected_chart(scenario_count):
    scenarios = [Scenario(name=f"S{i}", gpu_count=64 * (i + 1)) for i in range(scenario_count)]
    page = Page(report.build_report(scenarios, generated_at=GENERATED, draws=50))
    divs = page.plotly_divs()
    assert len(divs) == COMPARE_CHARTS + CHARTS_PER_SCENARIO * scenario_count
    assert len(set(divs)) == len(divs)
    assert ("comparison" in page.tables) == (scenario_count > 1)  # a comparison needs two scenarios


def test_scenario_names_and_title_are_escaped(three):
    document, page = three
    assert HOSTILE not in document
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in document
    # plotly.js, the print helper and one per chart: the hostile name added none
    assert len(page.scripts) == 2 + COMPARE_CHARTS + 3 * CHARTS_PER_SCENARIO
    text = "".join(page.text)
    for name in (default_scenario().name, TST_PRESET.name, HOSTILE):
        assert name in text
    assert page.headings["h1"] == ["Q3 <options>"]
    assert "<title>Q3 &lt;options&gt;</title>" in document


def test_sections_caveats_and_method(three):
    _, page = three
    h2 = page.headings["h2"]
    assert h2[:5] == ["Summary", "Headline numbers", "Comparison", "Cost, time and ranges", "Assumptions"]
    assert h2[5:8] == [f"Scenario 1: {default_scenario().name}", f"Scenario 2: {TST_PRESET.name}",
                       f"Scenario 3: {HOSTILE}"]
    assert h2[8:] == ["Caveats", "Method & sources"]  # the method's own title is not repeated
    for heading in CAVEAT_HEADINGS:
        assert heading in page.headings["h3"]
    assert "1. Compute" in page.headings["h3"]
    assert any(heading.endswith(". What is not counted") for heading in page.headings["h3"])  # the method's own
    text = "".join(page.text)
    assert "Generated 2026-12-01 14:30 UTC" in text
    assert "Power and facilities" in text  # docs/method.md §10
    assert f"{DRAWS:,} draws per scenario with seed 3" in text
    assert "12,311 → 4,768 B200-hours" in text  # the published TST run


def test_comparison_highlights_the_differing_gpu_count(three):
    document, page = three
    header = page.tables["comparison"][0]
    # Each option's header carries its loss: 7B on 2T tokens is 1.8172 + 482.01/7e9^0.3478 + 2085.43/2e12^0.3658
    assert header[1] == f"{default_scenario().name}loss 2.065"
    assert header[3] == f"{HOSTILE}loss 2.065"  # escaped in the file (see test_scenario_names_and_title_are_escaped)
    gpus = page.row("comparison", "GPUs")
    assert gpus[1:4] == ["512", "64", "256"]  # default 512; the TST preset's 64 B200 (its JSON file); 256
    assert gpus[4:] == ["-448", "-256"]
    assert 'class="num diff"' in document


def test_all_inputs_are_listed_under_assumptions(three):
    _, page = three
    rows = page.tables["assumptions"]
    assert len(rows) == 1 + len(Scenario.model_fields) - 2  # header, then every input but schema and name
    assert page.row("assumptions", "Training method")[1:] == ["baseline", "tst", "baseline"]


@pytest.mark.parametrize(
    ("text", "expected", "absent"),
    [
        pytest.param("[paper](https://arxiv.org/abs/1)", "<span>paper (https://arxiv.org/abs/1)</span>", "href",
                     id="link-shows-its-address"),
        pytest.param("<https://example.com>", "<span>https://example.com</span>", "href", id="autolink"),
        pytest.param("![chart](http://example.com/c.png)", "<span>chart (http://example.com/c.png)</span>", "<img",
                     id="image"),
        pytest.param('<a href="https://x.org">x</a>', "&lt;a href=", "<a ", id="raw-html-is-text"),
        pytest.param("[see **this**](https://x.org)", "<strong>this</strong> (https://x.org)", "href",
                     id="nested-markup"),
        pytest.param("[up](#top)", '<a href="#top">up</a>', "<span", id="in-page-anchor-kept"),
    ],
)
def test_markdown_links_become_plain_text(text, expected, absent):
    rendered = report.render_markdown(text)
    assert expected in rendered
    assert absent not in rendered


@pytest.mark.parametrize(("shift", "tag"), [(0, "h1"), (1, "h2"), (2, "h3")])
def test_markdown_headings_shift(shift, tag):
    assert report.render_markdown("# Title", heading_shift=shift) == f"<{tag}>Title</{tag}>"


def test_markdown_section_is_the_body_under_its_heading():
    text = "# T\n\n## 1. A\n\none\n\n## 2. What is not counted\n\nPower and more.\n\n## 3. C\n\nthree\n"
    assert report.markdown_section(text, "What is not counted") == "Power and more."
    with pytest.raises(ValueError, match="no section 'Missing'"):
        report.markdown_section(text, "Missing")


@pytest.mark.parametrize(
    ("section", "key", "value", "first", "expected"),
    [
        ("Output", "cost_total_usd", 1_450_000.0, 200_000.0, "+$1.25M"),
        ("Output", "gpu_hours_total_p90", 7_500.0, 10_000.0, "-2.5k"),
        ("Output", "overhead_fraction", 0.0625, 0.05, "+1.25 pp"),
        ("Output", "predicted_loss", 2.0, 2.1234, "-0.123"),
        ("Input", "tokens", 5e12, 2e12, "+3T"),
        ("Input", "price_spot_per_gpu_hour", 1.0, 1.5, "-$0.5"),
        ("Input", "price_reserved_per_gpu_hour", 2.2346, 2.0, "+$0.235"),  # three significant figures
        ("Input", "gpu_count", 64, 64, "≈ same"),
        ("Input", "mfu", float("nan"), 0.4, ""),
        ("Input", "method", "tst", "baseline", ""),
        # Below half a percent: $446,000 against $445,000 is 0.22 %; 2.066 nats against 2.065 is 0.05 %.
        ("Output", "cost_total_usd", 446_000.0, 445_000.0, "≈ same"),
        ("Output", "predicted_loss", 2.066, 2.065, "≈ same"),
        # Below the displayed precision: 4.80 days and 4.8018 days both read "4.8 days".
        ("Output", "wall_clock_days", 4.8018, 4.8, "≈ same"),
        # One percent is a change: $101k against $100k.
        ("Output", "cost_total_usd", 101_000.0, 100_000.0, "+$1k"),
    ],
)
def test_format_delta(section, key, value, first, expected):
    assert cells.format_delta(section, key, value, first) == expected


@pytest.mark.parametrize("count_", [0, 5])
def test_report_needs_one_to_four_scenarios(count_):
    with pytest.raises(ValueError, match=f"1 to 4 scenarios, not {count_}"):
        report.build_report([default_scenario()] * count_, generated_at=GENERATED, draws=10)


def test_report_shows_the_cli_numbers(tmp_path, capsys):
    """Default and the TST preset: the CLI's total cost and GPU-hours, formatted, in the headline and comparison."""
    scenarios = [default_scenario(), TST_PRESET]
    page = Page(report.build_report(scenarios, generated_at=GENERATED, draws=DRAWS))
    cost_cells = page.row("headlines", "Total cost")[1:]
    hours_cells = page.row("headlines", "GPU-hours")[1:]
    compared_cost = page.row("comparison", "Total cost")[1:3]
    compared_hours = page.row("comparison", "GPU-hours")[1:3]
    for column, scenario in enumerate(scenarios):
        path = tmp_path / f"s{column}.json"
        path.write_text(json.dumps(scenario.to_json_dict()))
        assert main(["estimate", str(path), "--json"]) == 0
        cli = json.loads(capsys.readouterr().out)
        assert cost_cells[column].startswith(money(cli["cost_total_usd"]) + "P10–P90 ")
        assert hours_cells[column].startswith(count(cli["gpu_hours_total"]) + "P10–P90 ")
        assert compared_cost[column] == money(cli["cost_total_usd"])
        assert compared_hours[column] == count(cli["gpu_hours_total"])


def test_the_summary_comes_first_with_budget_cheapest_risk_loss_and_plan_links():
    """Two hand-built plans: 1B params × 100B tokens at MFU 0.4 on H100 is 6·1e9·1e11 / (989e12·0.4·3600) = 421.3
    GPU-hours; at MFU 0.2 twice that. Both well within a $1M budget; the faster one is the cheaper one."""
    fast = Scenario(name="Fast", total_params=1e9, tokens=1e11, mfu=0.4, gpu_count=64)
    slow = Scenario(name="Slow", total_params=1e9, tokens=1e11, mfu=0.2, gpu_count=64)
    page = Page(report.build_report([slow, fast], generated_at=GENERATED, draws=DRAWS, app_url="http://plan.example:8501/"))
    assert page.headings["h2"][0] == "Summary"
    text = "".join(page.text)
    lines = text[text.index("Within budget"):]
    assert lines.startswith("Within budget: Slow, Fast.")
    assert "Cheapest: Fast ($" in lines and "Highest overrun risk: " in lines
    assert "Fast: predicted loss 2.372 nats per token" in lines  # 1.8172 + 482.01/1e9^0.3478 + 2085.43/1e11^0.3658
    summary = text[:text.index("Headline numbers")]
    assert "http" not in summary  # the summary fits one page: the long Plan links are in each option's section
    slow_section = text[text.rindex("Scenario 1: Slow"):text.rindex("Scenario 2: Fast")]  # the sections, not the nav
    assert ("Open in the planner: http://plan.example:8501/?name=Slow&total_params=1e%2B09&tokens=1e%2B11&gpu_count=64"
            "&mfu=0.2Programme") in slow_section
    assert "base." not in slow_section  # each link is the option alone, as short as it can be


@pytest.mark.parametrize(
    ("author", "meta"),
    [
        pytest.param(None, "Generated 2026-12-01 14:30 UTC · 1 scenario", id="no-author"),
        pytest.param("  ", "Generated 2026-12-01 14:30 UTC · 1 scenario", id="blank-author"),
        pytest.param("Ana <Ops>", "Generated 2026-12-01 14:30 UTC by Ana <Ops> · 1 scenario", id="author-escaped"),
    ],
)
def test_generation_time_and_author(author, meta):
    document = report.build_report([default_scenario()], generated_at=GENERATED, draws=20, author=author)
    assert meta in "".join(Page(document).text)
    assert "<Ops>" not in document


def test_different_losses_raise_the_banner_and_a_low_point_estimate_is_explained():
    """A 1B model on 20B tokens predicts a far higher loss than the 7B default (1.8172 + 482.01/1e9^0.3478 +
    2085.43/2e10^0.3658 = 2.530 against 2.065)."""
    small = Scenario(name="Small", total_params=1e9, tokens=2e10, gpu_count=8)
    text = "".join(Page(report.build_report([default_scenario(), small], generated_at=GENERATED, draws=DRAWS)).text)
    assert "Not comparable as they stand. The cheaper options train a worse model: loss 2.530 vs 2.065" in text
    optimistic = "".join(Page(report.build_report([TST_PRESET], generated_at=GENERATED, draws=DRAWS)).text)
    run = uncertainty.monte_carlo(TST_PRESET, DRAWS, uncertainty.DEFAULT_SEED)
    if run.percentile("cost_total_usd", 10) > run.point["cost_total_usd"]:
        assert "is below P10" in optimistic and "read P50 as the likely cost" in optimistic
    else:
        assert "is below P10" not in optimistic


def test_four_options_with_long_names_stay_under_6_mb():
    long = [s.model_copy(update={"name": (s.name + " — " + "x" * 120)[:120]}) for s in presets().values()][:4]
    document = report.build_report(long, generated_at=GENERATED)  # 10,000 draws, as the app's download
    assert len(document.encode("utf-8")) < 6_000_000


AT_40 = default_scenario().model_copy(update={"mfu": 0.4, "name": "Default at 40 % MFU"})


def test_the_budget_status_in_the_report_is_the_plan_page_s():
    # The default plan at an entered 40 % MFU is within its $500k budget at the point estimate ($446k), but about half
    # of its draws overrun it: "at risk" on the Plan page's tile, so in both of the report's tables too.
    scenarios = [AT_40, Scenario(name="Cheap", total_params=1e9, tokens=1e11, gpu_count=64)]
    mcs = [uncertainty.monte_carlo(s, DRAWS) for s in scenarios]
    assert mcs[0].prob_over_budget > 0.2 and mcs[1].prob_over_budget == 0.0
    page = Page(report.build_report(scenarios, generated_at=GENERATED, draws=DRAWS))
    assert page.row("headlines", "Budget status")[1:] == ["at risk", "within"]
    assert page.row("comparison", "Budget status")[1:3] == ["at risk", "within"]


def test_the_summary_and_every_status_row_give_one_verdict_per_option():
    # One plan at each status: the default plan at an entered 40 % MFU is under its $500k budget at the point
    # estimate ($446k) but more than 20 % of its draws overrun: at risk; "Cheap" (421 GPU-hours) is within; "Tight"
    # is the default plan with a $100k budget: over; "Too big" (2T parameters on 8 GPUs) does not fit in memory: it
    # cannot run.
    scenarios = [AT_40, Scenario(name="Cheap", total_params=1e9, tokens=1e11, gpu_count=64),
                 Scenario(name="Tight", budget_usd=100_000.0), Scenario(name="Too big", total_params=2e12, gpu_count=8)]
    chance = uncertainty.monte_carlo(scenarios[0], DRAWS).prob_over_budget
    assert chance > 0.2
    page = Page(report.build_report(scenarios, generated_at=GENERATED, draws=DRAWS))
    expected = ["at risk", "within", "over", "infeasible"]
    assert page.row("headlines", "Budget status")[1:] == expected
    assert page.row("comparison", "Budget status")[1:5] == expected
    name = scenarios[0].name
    text = "".join(page.text)
    assert (f"Within budget: Cheap. At risk: {name} ({catalogue.text('prob_over_budget', chance)}). Over: Tight. "
            "Cannot run: Too big.") in text


def test_the_report_grades_each_option_s_numbers():
    # 405B on 16,384 H100 with the MFU unset lies outside the validated region: priced at Llama 3 405B's published
    # MFU, and the report says so; the default plan is inside the Hopper BF16 region.
    llama = next(s for s in presets().values() if s.name.startswith("Llama 3.1 405B"))
    page = Page(report.build_report([default_scenario(), llama.model_copy(update={"mfu": None})],
                                    generated_at=GENERATED, draws=50))
    assert page.row("headlines", "Evidence")[1:] == ["validated MFU, assumed prices", "published MFU, entered prices"]
    text = "".join(page.text)
    assert "from published runs (Llama 3 405B), as the plan lies outside every validated region" in text
