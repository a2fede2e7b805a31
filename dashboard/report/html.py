"""The report as one HTML document: headline numbers with ranges, the comparison, every chart, caveats and method.

Numbers come from `engine.scenario_outputs` and `uncertainty.monte_carlo`, charts from the figure builders, the method
notes from docs/method.md rendered with Python-Markdown. plotly.js is inlined once and nothing is loaded from the
network; user text (scenario names, stage names, the title) is HTML-escaped.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as etree
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import markdown
import plotly.graph_objects as go
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor
from plotly.offline import get_plotlyjs

from dashboard.core import catalogue, compare, engine, evidence, throughput, uncertainty
from dashboard.core.engine import PlanResult, TstComparison
from dashboard.core.references import TST_RUN
from dashboard.core.scenario import Scenario
from dashboard.figures import compare as compare_figures
from dashboard.figures import plan_charts
from dashboard.figures import throughput as step_figures
from dashboard.figures import uncertainty as uncertainty_figures
from dashboard.figures.plan import saving_split_text
from dashboard.report.cells import count, format_delta, format_input, format_output, is_same, money
from dashboard.report.theme import themed

if TYPE_CHECKING:
    import pandas as pd

METHOD_MD = Path(__file__).resolve().parents[2] / "docs" / "method.md"
NOT_COUNTED_HEADING = "What is not counted"
MAX_SCENARIOS = compare.MAX_SCENARIOS
DEFAULT_TITLE = "Pretraining budget options"
DEFAULT_APP_URL = "http://127.0.0.1:8501"  # `make run`'s address; the app passes its own
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True, "toImageButtonOptions": {"format": "png", "scale": 2}}
CAVEATS = (
    "Compare methods only at equal loss",
    "Validate any speedup with a pilot before the plan relies on it",
    "MFU: entered or predicted from the layout",
    "What is not counted",
    "Monte Carlo assumptions",
)
MONTE_CARLO_CHARTS = ("Cost distribution", "Tornado")
HEADING_TAGS = {f"h{level}" for level in range(1, 7)}

STYLE = """
body { margin: 0; color: #1a1a1a; background: #fff;
  font: 17px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 2rem; margin: 0 0 .3rem; }
h2 { font-size: 1.5rem; margin: 2.5rem 0 .75rem; padding-bottom: .25rem; border-bottom: 2px solid #d0d0d0; }
h3 { font-size: 1.2rem; margin: 1.75rem 0 .5rem; }
.meta, .note { color: #555; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .75rem 0 1.25rem; font-size: .95rem; }
th, td { border: 1px solid #d0d0d0; padding: .3rem .6rem; text-align: left; vertical-align: top; }
thead th { background: #f2f2f2; }
tbody th { min-width: 13rem; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.diff { background: #fff3c4; font-weight: 600; }
td.same { color: #888; }
tr.group th { background: #e8eef7; }
.range { display: block; color: #555; font-size: .85em; }
.key { display: block; color: #666; font-size: .8em; }
code, .key { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
figure.chart { margin: 1rem 0 2rem; break-inside: avoid; page-break-inside: avoid; }
figure.chart .plotly-graph-div { height: 450px; }
details > summary { cursor: pointer; font-weight: 600; margin: .5rem 0; }
.summary { border: 2px solid #1f77b4; border-radius: 6px; padding: .5rem 1.25rem; margin: 1rem 0; }
.summary ul.lines { font-size: 1.1rem; font-weight: 600; padding-left: 1.2rem; }
.banner { border-left: 4px solid #ff7f0e; background: #fff6ec; padding: .4rem 1rem; margin: .75rem 0; }
.link { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85em;
  overflow-wrap: anywhere; user-select: all; }
.caveat { border-left: 4px solid #d62728; background: #fdf3f3; padding: .1rem 1rem .4rem; margin: 1rem 0; }
@media print {
  body { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  .scroll { overflow: visible; }
  table { font-size: 9pt; }
  tbody th { min-width: 8rem; }
  nav { display: none; }
  .modebar-container { display: none !important; }  /* plotly's toolbar is screen furniture: it printed over titles */
  figure.chart { width: 17cm; }
  figure.chart .plotly-graph-div { height: 10cm; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  /* The first page is the one-page summary: the header, the summary and the headline numbers, then a page break. */
  header { break-after: avoid; }
  header h1 { font-size: 1.5rem; }
  .meta { font-size: 9pt; }
  #summary h2, #headlines h2 { margin-top: .6rem; }
  #summary, #headlines { break-inside: avoid; page-break-inside: avoid; }
  #headlines table { font-size: 8.5pt; }
  #headlines + section { break-before: page; page-break-before: always; }
}
"""
# Closed <details> would print closed: open them all before printing.
PRINT_SCRIPT = (
    "window.addEventListener('beforeprint', () => document.querySelectorAll('details').forEach(d => d.open = true));"
)


class _PlainLinks(Treeprocessor):
    """Links and images become plain text showing their address (in-page #anchors stay); headings move down."""

    def __init__(self, md: markdown.Markdown, heading_shift: int) -> None:
        super().__init__(md)
        self.heading_shift = heading_shift

    def run(self, root: etree.Element) -> None:
        for element in root.iter():
            if element.tag == "a" and not element.get("href", "").startswith("#"):
                self._flatten(element, element.get("href", ""))
            elif element.tag == "img":
                element.text = element.get("alt", "")
                self._flatten(element, element.get("src", ""))
            elif element.tag in HEADING_TAGS:
                element.tag = f"h{min(6, int(element.tag[1]) + self.heading_shift)}"

    @staticmethod
    def _flatten(element: etree.Element, address: str) -> None:
        element.tag = "span"
        element.attrib.clear()
        if not address or "".join(element.itertext()).strip() == address:
            return
        if len(element):
            element[-1].tail = f"{element[-1].tail or ''} ({address})"
        else:
            element.text = f"{element.text or ''} ({address})"


class _SafeMarkdown(Extension):
    """Raw HTML is shown as text, links and images as plain text, headings shifted down by `heading_shift`."""

    def __init__(self, heading_shift: int = 0) -> None:
        super().__init__()
        self.heading_shift = heading_shift

    def extendMarkdown(self, md: markdown.Markdown) -> None:  # Python-Markdown's name
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_PlainLinks(md, self.heading_shift), "plain_links", 15)  # after "inline" (20)


def render_markdown(text: str, heading_shift: int = 0) -> str:
    """Markdown (with tables) as HTML with no raw HTML, no links out and no images."""
    return markdown.markdown(text, extensions=["tables", _SafeMarkdown(heading_shift)])


def markdown_section(text: str, heading: str) -> str:
    """The body of the `## ` section whose heading contains `heading`, up to the next heading."""
    lines = text.splitlines()
    for start, line in enumerate(lines):
        if line.startswith("## ") and heading in line:
            body = []
            for following in lines[start + 1:]:
                if following.startswith("#"):
                    break
                body.append(following)
            return "\n".join(body).strip()
    raise ValueError(f"no section {heading!r} in the method notes")


def without_title(text: str) -> str:
    """Markdown without its leading `# ` title line (the report gives the section its own heading)."""
    first, _, rest = text.lstrip().partition("\n")
    return rest if first.startswith("# ") else text


@cache
def method_text() -> str:
    return METHOD_MD.read_text(encoding="utf-8")


# HTML pieces.

def _e(text: Any) -> str:
    return html.escape(str(text))


def _cell(content: str, classes: str = "") -> str:
    return f'<td class="{classes}">{content}</td>' if classes else f"<td>{content}</td>"


def _value_cell(text: str, value: Any, highlight: bool = False) -> str:
    """A cell showing `text` for `value`: numbers right-aligned, a highlighted cell marked."""
    classes = [] if isinstance(value, str | bool) or value is None else ["num"]
    return _cell(_e(text), " ".join([*classes, "diff"] if highlight else classes))


def _table(header: list[str], rows: list[str], *, escaped: bool = False) -> str:
    """A table with a header row (plain text, or HTML already escaped when `escaped`) and body rows."""
    head = "".join(f"<th>{column if escaped else _e(column)}</th>" for column in header)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def _item(label: str) -> str:
    return f"<th>{_e(label)}</th>"


def headline_table(names: list[str], results: list[PlanResult], summaries: list[dict[str, Any]]) -> str:
    """Headline outputs per scenario, with P10–P90 under the Monte Carlo outputs, then the total's evidence
    (`evidence.short`), budget and overrun odds."""
    rows = []
    for key, label in compare.HEADLINES:
        cells = []
        for result, summary in zip(results, summaries, strict=True):
            text = _e(format_output(key, compare.headline_value(key, result, summary)))
            if key in uncertainty.OUTPUTS:
                low, high = (format_output(key, summary[q][key]) for q in ("p10", "p90"))
                text += f'<span class="range">P10–P90 {_e(low)} – {_e(high)}</span>'
            cells.append(_cell(text, "" if key in ("budget_status", "feasibility_status") else "num"))
        rows.append(f"<tr>{_item(label)}{''.join(cells)}</tr>")
    extra = (
        (catalogue.label("evidence"), [evidence.short(result["evidence"]) for result in results]),
        (catalogue.label("budget_usd"), [money(result["budget_usd"]) for result in results]),
        (catalogue.label("prob_over_budget"),
         [catalogue.text("prob_over_budget", summary["prob_over_budget"]) for summary in summaries]),
        *((catalogue.label(key), [money(summary[key]) for summary in summaries])
          for key in ("budget_for_80_percent_usd", "budget_for_90_percent_usd")),
    )
    for label, texts in extra:
        rows.append(f"<tr>{_item(label)}{''.join(_cell(_e(text), 'num') for text in texts)}</tr>")
    return _table(["", *_loss_header(names, results)], rows, escaped=True)


def comparison_html(table: pd.DataFrame) -> str:
    """The comparison: headline outputs first, then the inputs that differ in a collapsible section (open), changed
    cells highlighted and one Δ column per option after the first."""
    columns = compare.scenario_columns(table)
    deltas = [column for column in table.columns if column not in (*compare.FIXED_COLUMNS, *columns)]
    mask = compare.highlight_mask(table)

    def rows_of(section: str) -> list[str]:
        fmt = format_input if section == compare.INPUT_SECTION else format_output
        rows = []
        for index, row in zip(table.index, table.to_dict("records"), strict=True):
            if row["section"] != section:
                continue
            cells = [_value_cell(fmt(row["key"], row[column]), row[column], highlight=mask.at[index, column])
                     for column in columns]
            for column in columns[1:len(deltas) + 1]:  # one Δ column per scenario after the first
                text = format_delta(section, row["key"], row[column], row[columns[0]])
                cells.append(_cell(_e(text), "num same" if is_same(text) else "num"))
            rows.append(f"<tr>{_item(row['item'])}{''.join(cells)}</tr>")
        return rows

    losses = table.set_index("key").loc["predicted_loss", columns]
    header = ["", *(f'{_e(column)}<span class="range">loss {_e(format_output("predicted_loss", losses[column]))}'
                    "</span>" for column in columns), *(_e(delta) for delta in deltas)]
    outputs = _table(header, rows_of(compare.OUTPUT_SECTION), escaped=True)
    inputs = rows_of(compare.INPUT_SECTION)
    if not inputs:
        return outputs + "<p class=\"note\">Every input is the same in all options.</p>"
    return (f"{outputs}<details open><summary>Inputs that differ ({len(inputs)})</summary>"
            f"{_table(header, inputs, escaped=True)}</details>")


def inputs_html(scenarios: list[Scenario]) -> str:
    """Every input of every scenario."""
    table = compare.inputs_table(scenarios)
    columns = list(table.columns[2:])
    rows = []
    for row in table.to_dict("records"):
        cells = [_value_cell(format_input(row["key"], row[column]), row[column]) for column in columns]
        rows.append(f"<tr>{_item(row['item'])}{''.join(cells)}</tr>")
    return _table(["", *columns], rows)


PROGRAMME_HEADER = ("Stage", "GPU-hours", "Cost", "Calendar days", "Note")


def programme_html(result: PlanResult) -> str:
    """An option's programme: one row per stage in calendar order (GPU-hours, cost, calendar days, note) and the
    programme's totals, under a caption with the final run's share and the calendar."""
    plan = result["programme"]

    def numbers(values: dict[str, Any]) -> str:
        return "".join(_cell(_e(compare.stage_text(field, values[field])), "num") for field in compare.STAGE_NUMBERS)

    rows = [f"<tr>{_item(stage['label'])}{numbers(stage)}{_cell(_e(stage['note']))}</tr>" for stage in plan["stages"]]
    totals = {"gpu_hours": plan["gpu_hours"], "cost_usd": plan["total_usd"], "calendar_days": plan["calendar_days"]}
    rows.append(f'<tr class="group">{_item(catalogue.label("programme.total_usd"))}{numbers(totals)}<td></td></tr>')
    dates = (f", {_e(plan['start_date'])} to {_e(plan['end_date'])}" if plan["start_date"] else "")
    caption = (f"<p>{_e(catalogue.label('programme.final_run_share'))}: "
               f"<strong>{_e(catalogue.text('programme.final_run_share', plan['final_run_share']))}</strong> "
               f"({_e(catalogue.text('programme.final_run_usd', plan['final_run_usd']))} of "
               f"{_e(catalogue.text('programme.total_usd', plan['total_usd']))}). "
               f"{_e(catalogue.label('programme.calendar_days'))}: "
               f"{_e(catalogue.text('programme.calendar_days', plan['calendar_days']))}{dates}.</p>")
    return caption + _table(list(PROGRAMME_HEADER), rows)


class _Charts:
    """Figures as HTML divs with ids numbered in document order (the same report gives the same ids)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, figure: go.Figure, caption: str) -> str:
        self.count += 1
        div = themed(figure).to_html(full_html=False, include_plotlyjs=False, config=PLOTLY_CONFIG,
                             div_id=f"chart-{self.count}")
        return f'<figure class="chart" aria-label="{_e(caption)}">{div}</figure>'


def tst_saving_text(tst: TstComparison) -> str:
    """TST's saving as the chart's title and the Total cost tiles' difference give it: total(baseline) − total(TST)
    of the same plan, with its parts."""
    verb = "saves" if tst["net_savings_usd"] >= 0 else "costs"
    return (f"switching the plan to TST {verb} {money(abs(tst['net_savings_usd']))} "
            f"({money(tst['baseline_cost_usd'])} with the baseline, {money(tst['tst_cost_usd'])} with TST): "
            f"{saving_split_text(tst)}")


def mfu_caveat_html(names: list[str], results: list[PlanResult]) -> str:
    """Each option's MFU (entered, predicted or published) beside the layout's prediction, its numbers' evidence
    grades and where it leaves the validated region: the Plan page's lines (`figures.throughput`, `evidence`)."""
    items = []
    for name, result in zip(names, results, strict=True):
        said = f"{step_figures.mfu_line(result)}. {evidence.line(result['evidence'])}"
        caveat = step_figures.region_line(result)
        items.append(f"<li>{_e(name)}: {_e(said)}{'. ' + _e(caveat) if caveat else ''}</li>")
    return (f"<p>{_e(throughput.validation_sentence())} An entered MFU is the plan's own assumption.</p>"
            f"<ul>{''.join(items)}</ul>")


def caveats_html(scenarios: list[Scenario], results: list[PlanResult], draws: int, seed: int) -> str:
    """The caveats: equal loss, pilot validation, the MFU's source, what is not counted, Monte Carlo assumptions."""
    names = compare.unique_names([scenario.name for scenario in scenarios])
    losses = [result["predicted_loss"] for result in results]
    equal_loss = (
        "<p>Every method comparison in the planner is at matched loss: the TST comparison gives TST the baseline's "
        "predicted loss, as the published result was measured. A GPU-hours saving that lowers quality is not a "
        "saving. Before choosing between scenarios, read their predicted loss: cheaper options that train a "
        "smaller model or on fewer tokens buy a worse model.</p>"
    )
    if len(scenarios) > 1:
        equal_loss += (
            f"<p>The scenarios here predict losses from {_e(format_output('predicted_loss', min(losses)))} to "
            f"{_e(format_output('predicted_loss', max(losses)))} "
            "nats per token.</p>"
        )
    ref = TST_RUN
    pilot = (
        f"<p>TST's speedup rests on one published run: a {_e(ref.label)} on {_e(ref.gpu_type)} "
        f"({_e(ref.source)}), {ref.baseline_gpu_hours:,.0f} → {ref.tst_gpu_hours:,.0f} "
        f"{_e(ref.gpu_type)}-hours at matched loss, reading {_e(count(ref.tst_tokens))} raw tokens instead "
        f"of {_e(count(ref.baseline_tokens))}. It is not shown at other sizes or data mixes. Run a pilot "
        "(the plan's TST pilot line) and check its loss curve before the plan relies on the speedup; the same "
        "holds for any other claimed speedup.</p>"
    )
    tst = [(name, scenario, result) for name, scenario, result in zip(names, scenarios, results, strict=True)
           if scenario.method == "tst"]
    if tst:
        items = "".join(
            f"<li>{_e(name)}: {scenario.tst_speedup:.2f}× speedup assumed, pilot "
            f"{_e(money(result['tst']['pilot_cost_usd']))}; {_e(tst_saving_text(result['tst']))}</li>"
            for name, scenario, result in tst
        )
        pilot += f"<p>Scenarios here that rely on TST:</p><ul>{items}</ul>"
    else:
        pilot += "<p>No scenario here uses TST.</p>"
    shapes = "".join(f"<li>{_e(name)}: {_e(scenario.range_shape)}</li>"
                     for name, scenario in zip(names, scenarios, strict=True))
    inputs = ", ".join(_e(item.label) for item in uncertainty.INPUTS)
    monte_carlo = (
        f"<p>{draws:,} draws per scenario with seed {seed}; the same seed reproduces every number. Inputs drawn: "
        f"{inputs}. Each is drawn <strong>independently</strong> between its low and high end (the scenario's "
        "<code>range_*</code> keys, multiples of its likely value): correlations, such as a slow cluster that also "
        "fails more, are not modelled, so the true tails may be wider. Triangular draws use (low, likely, high); "
        "log-normal draws put low and high at the 5th and 95th percentiles. Everything else is fixed at the "
        f"scenario's value.</p><p>Shape per scenario:</p><ul>{shapes}</ul>"
    )
    not_counted = render_markdown(markdown_section(method_text(), NOT_COUNTED_HEADING))
    bodies = (equal_loss, pilot, mfu_caveat_html(names, results), not_counted, monte_carlo)
    return "".join(
        f'<div class="caveat"><h3>{_e(heading)}</h3>{body}</div>' for heading, body in zip(CAVEATS, bodies, strict=True)
    )


def _loss_header(names: list[str], results: list[PlanResult]) -> list[str]:
    """Column headers as HTML: each option's name and, under it, its predicted loss."""
    return [f'{_e(name)}<span class="range">loss {_e(format_output("predicted_loss", result["predicted_loss"]))}'
            "</span>" for name, result in zip(compare.unique_names(names), results, strict=True)]


def summary_html(scenarios: list[Scenario], results: list[PlanResult], runs: list[uncertainty.MonteCarlo],
                 app_url: str) -> str:
    """What a reviewer reads first: within budget, cheapest, highest overrun risk; each option's predicted loss; the
    loss-comparability warning and any point estimate below P10. With the headline table it fills the first printed
    page; the Plan links, long, are in each option's own section (`plan_link_html`)."""
    names = compare.unique_names([scenario.name for scenario in scenarios])
    summaries = [run.summary() for run in runs]
    lines = "".join(f"<li>{_e(line)}</li>" for line in compare.summary_lines(names, results, summaries, money))
    items = [f"<li><strong>{_e(name)}</strong>: predicted loss "
             f"{_e(format_output('predicted_loss', result['predicted_loss']))} nats per token</li>"
             for name, result in zip(names, results, strict=True)]
    notes = []
    banner = compare.loss_banner(names, results)
    if banner:
        notes.append(f'<p class="banner"><strong>Not comparable as they stand.</strong> {_e(banner)}</p>')
    for name, result, run, summary in zip(names, results, runs, summaries, strict=True):
        note = compare.optimism_note(name, result["cost_total_usd"], summary["p10"]["cost_total_usd"],
                                     run.point_rank("cost_total_usd"), money)
        if note:
            notes.append(f'<p class="banner">{_e(note)}</p>')
    return (f'<div class="summary"><ul class="lines">{lines}</ul><ul>{"".join(items)}</ul>{"".join(notes)}'
            "</div>")


def plan_link_html(app_url: str, scenario: Scenario) -> str:
    """The option's Plan link: the planner opened on exactly this scenario."""
    return (f'<p>Open in the planner: <span class="link">{_e(compare.plan_link(app_url, scenario))}</span></p>')


def build_report(
    scenarios: list[Scenario],
    *,
    generated_at: datetime,
    draws: int = uncertainty.DEFAULT_DRAWS,
    seed: int = uncertainty.DEFAULT_SEED,
    title: str = DEFAULT_TITLE,
    author: str | None = None,
    app_url: str = DEFAULT_APP_URL,
) -> str:
    """One self-contained HTML document comparing 1–4 scenarios (see the module docstring).

    `generated_at` is printed to the minute with its time zone; `author`, when given, beside it; `app_url` is the
    planner's address that each option's Plan link starts with.
    """
    if not 1 <= len(scenarios) <= MAX_SCENARIOS:
        raise ValueError(f"a report compares 1 to {MAX_SCENARIOS} scenarios, not {len(scenarios)}")
    results = [engine.scenario_outputs(scenario) for scenario in scenarios]
    runs = [uncertainty.monte_carlo(scenario, draws, seed) for scenario in scenarios]
    summaries = [run.summary() for run in runs]
    names = [scenario.name for scenario in scenarios]
    columns = compare.unique_names(names)
    chart = _Charts()

    sections = [("summary", "Summary", summary_html(scenarios, results, runs, app_url)),
                ("headlines", "Headline numbers", headline_table(names, results, summaries))]
    if len(scenarios) > 1:
        table = compare.comparison_table(scenarios, results, summaries)
        sections.append(("comparison", "Comparison", (
            f"<p class=\"note\">Δ columns: each scenario minus “{_e(columns[0])}”. Highlighted cells differ from "
            "it. Inputs every scenario shares are listed under Assumptions.</p>" + comparison_html(table)
        )))
    compare_charts = (
        chart(compare_figures.cost_breakdown_figure(names, results), "Cost by line item")
        + chart(compare_figures.timeline_figure(names, scenarios, results), "Main run wall-clock")
        + chart(compare_figures.range_figure(names, results, summaries), "Total cost ranges")
    )
    sections.append(("charts", "Cost, time and ranges", compare_charts))
    open_attr = " open" if len(scenarios) == 1 else ""
    sections.append(("assumptions", "Assumptions", (
        f"<details{open_attr}><summary>All {len(compare.INPUT_KEYS)} inputs of each scenario</summary>"
        f"{inputs_html(scenarios)}</details>"
    )))
    for number, (column, scenario, result, run) in enumerate(zip(columns, scenarios, results, runs, strict=True), 1):
        body = plan_link_html(app_url, scenario)
        body += f"<h3>{_e(catalogue.label('programme'))}</h3>{programme_html(result)}"
        body += "".join(chart(plan_charts.plan_chart(name, scenario, result), name) for name in plan_charts.CHARTS)
        body += chart(uncertainty_figures.distribution_figure(run), MONTE_CARLO_CHARTS[0])
        body += chart(uncertainty_figures.tornado_figure(run), MONTE_CARLO_CHARTS[1])
        sections.append((f"scenario-{number}", f"Scenario {number}: {column}", body))
    sections.append(("caveats", "Caveats", caveats_html(scenarios, results, draws, seed)))
    sections.append(("method", "Method & sources", render_markdown(without_title(method_text()), heading_shift=1)))

    contents = "".join(f'<li><a href="#{anchor}">{_e(heading)}</a></li>' for anchor, heading, _ in sections)
    body = "".join(
        f'<section id="{anchor}"><h2>{_e(heading)}</h2>{content}</section>' for anchor, heading, content in sections
    )
    stamp = generated_at.strftime("%Y-%m-%d %H:%M") + (f" {generated_at.tzname()}" if generated_at.tzname() else "")
    listing = "; ".join(_e(column) for column in columns)
    by = f" by {_e(author.strip())}" if author and author.strip() else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{_e(title)}</title><style>{STYLE}</style>"
        f"<script>{get_plotlyjs()}</script><script>{PRINT_SCRIPT}</script></head>"
        f"<body><main><header><h1>{_e(title)}</h1>"
        f"<p class=\"meta\">Generated {_e(stamp)}{by} · {len(scenarios)} scenario{'s' if len(scenarios) > 1 else ''}: "
        f"{listing} · Monte Carlo {draws:,} draws, seed {seed}</p></header>"
        f"<nav><ol>{contents}</ol></nav>{body}</main></body></html>\n"
    )
