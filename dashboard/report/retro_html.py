"""The Retrospective as one HTML document for the review meeting (pure; never imports streamlit).

`retrospective_report` takes the small results the Retrospective page already computes: the tiles' numbers, its
spend, waste and plan-vs-actual figures as plotly figures, and the notes that go with them as text. Like the Compare
report (`dashboard.report.html`) it inlines plotly.js once and loads nothing from the network, draws every chart with
the report's own template (`theme.themed`, whatever plotly's default template is in the process that built the
figures), keeps each chart whole on an A4 page when printed, and HTML-escapes everything that comes from a file
(team names, run ids, file names) or from the user (the filters, the title). Amounts are written in the bill's
currency as `dashboard.format.money` writes them ("$1.2k", "1.2k NOK").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from dashboard.format import count_sig, money, money_symbol
from dashboard.report.html import STYLE as COMPARE_STYLE
from dashboard.report.html import _Charts
from dashboard.report.html import _e as escape
from dashboard.safe_text import WORD_JOINER

DEFAULT_TITLE = "Retrospective report"
TILE_LABELS = {"cost": "Cost", "gpu_hours": "GPU-hours", "non_gpu_cost": "Non-GPU cost", "rows": "Rows",
               "runs_without_bill": "Runs without a bill"}
STYLE = COMPARE_STYLE + """
.tiles { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: .75rem; margin: 1rem 0; }
.tile { border: 1px solid #d0d0d0; border-radius: 6px; padding: .5rem .9rem; break-inside: avoid;
  page-break-inside: avoid; }
.tile .label { color: #555; font-size: .9rem; }
.tile .value { font-size: 1.6rem; font-weight: 600; font-variant-numeric: tabular-nums; }
.tile .sub { color: #555; font-size: .85rem; }
.lead { font-size: 1.15rem; font-weight: 600; }
.empty { border-left: 4px solid #2ca02c; background: #f1f9f1; padding: .4rem 1rem; margin: .75rem 0; }
ul.notes { color: #333; font-size: .95rem; }
dl.meta-list { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .5rem 0; }
dl.meta-list dt { color: #555; }
dl.meta-list dd { margin: 0; overflow-wrap: anywhere; }
@page { size: A4; margin: 14mm 12mm; }
@media print {
  .tiles { grid-template-columns: repeat(3, 1fr); }
  .tile .value { font-size: 15pt; }
  section { break-before: auto; }
  .lead, .empty { break-after: avoid; page-break-after: avoid; }
}
"""
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


@dataclass(frozen=True)
class Tiles:
    """The Retrospective's headline numbers for the filtered view, in the bill's currency (None: not known)."""

    cost: float | None
    gpu_hours: float | None
    per_gpu_hour: float | None
    non_gpu_cost: float | None
    rows: int
    per_gpu_hour_note: str = ""  # how commitments were treated ("commitments amortised"), under the value
    runs_without_bill_gpu_hours: float | None = None  # only with a run export joined to a bill


@dataclass(frozen=True)
class ReportFigure:
    """One of the page's figures with what the page says about it: `lead` above the chart, `notes` under it, and
    `empty` said instead of the chart when there is nothing to draw (`figure` None). Text is Markdown as the page
    writes it (see `note_html`)."""

    heading: str
    figure: go.Figure | None
    notes: Sequence[str] = field(default_factory=tuple)
    lead: str = ""
    empty: str = ""


def note_html(text: str) -> str:
    """A note the page writes in Markdown, as HTML: **bold** and backslash escapes are read and the word joiners
    that stop Streamlit's autolinks dropped (`safe_text.markdown_text`'s), everything else is literal text,
    HTML-escaped."""
    parts = _BOLD.split(str(text))
    pieces = []
    for index, part in enumerate(parts):
        literal = escape(_ESCAPED.sub(r"\1", part).replace(WORD_JOINER, ""))
        pieces.append(f"<strong>{literal}</strong>" if index % 2 else literal)
    return "".join(pieces)


def per_gpu_hour_label(currency: str | None) -> str:
    """The $/GPU-hour tile's label in the bill's currency, as the page writes it ("NOK per GPU-hour")."""
    return f"{money_symbol(currency)} per GPU-hour"


def tile_values(tiles: Tiles, currency: str | None) -> list[tuple[str, str, str]]:
    """(label, value, note) of each tile as the page shows it."""
    values = [
        (TILE_LABELS["cost"], money(tiles.cost, currency), ""),
        (TILE_LABELS["gpu_hours"], count_sig(tiles.gpu_hours), ""),
        (per_gpu_hour_label(currency), money(tiles.per_gpu_hour, currency), tiles.per_gpu_hour_note),
        (TILE_LABELS["non_gpu_cost"], money(tiles.non_gpu_cost, currency), ""),
        (TILE_LABELS["rows"], f"{tiles.rows:,}", ""),
    ]
    if tiles.runs_without_bill_gpu_hours is not None:
        values.append((TILE_LABELS["runs_without_bill"], f"{count_sig(tiles.runs_without_bill_gpu_hours)} GPU-h", ""))
    return values


def tiles_html(tiles: Tiles, currency: str | None) -> str:
    boxes = "".join(
        f'<div class="tile"><div class="label">{escape(label)}</div><div class="value">{escape(value)}</div>'
        + (f'<div class="sub">{escape(note)}</div>' if note else "") + "</div>"
        for label, value, note in tile_values(tiles, currency))
    return f'<div class="tiles">{boxes}</div>'


def _notes(notes: Sequence[str]) -> str:
    return f'<ul class="notes">{"".join(f"<li>{note_html(note)}</li>" for note in notes)}</ul>' if notes else ""


def figure_html(item: ReportFigure, chart: _Charts) -> str:
    lead = f'<p class="lead">{note_html(item.lead)}</p>' if item.lead else ""
    if item.figure is not None:
        body = chart(item.figure, item.heading)
    else:
        body = f'<p class="empty">{note_html(item.empty or "Nothing to draw in this view.")}</p>'
    return lead + body + _notes(item.notes)


def stamp(generated_at: datetime) -> str:
    """The generation time to the minute with its zone's name ("2025-07-01 09:30 UTC")."""
    return generated_at.strftime("%Y-%m-%d %H:%M") + (f" {generated_at.tzname()}" if generated_at.tzname() else "")


def retrospective_report(
    tiles: Tiles,
    figures: Sequence[ReportFigure],
    *,
    currency: str | None,
    generated_at: datetime,
    files: Sequence[str],
    filters: Sequence[tuple[str, str]],
    notes: Sequence[str] = (),
    title: str = DEFAULT_TITLE,
) -> str:
    """One self-contained HTML document: the title, when it was generated (to the minute, in `generated_at`'s
    zone; pass UTC), the data line (`files`, each as the page names it, "focus_sample.csv (billing export)"), the
    filters in force (label, value), the tiles with the `notes` that change them, then each figure with its notes.
    """
    chart = _Charts()
    sections = [("tiles", "Headline numbers", tiles_html(tiles, currency) + _notes(notes))]
    sections += [(f"figure-{number}", item.heading, figure_html(item, chart))
                 for number, item in enumerate(figures, 1)]
    contents = "".join(f'<li><a href="#{anchor}">{escape(heading)}</a></li>' for anchor, heading, _ in sections)
    body = "".join(f'<section id="{anchor}"><h2>{escape(heading)}</h2>{content}</section>'
                   for anchor, heading, content in sections)
    data = " + ".join(escape(name) for name in files) or "no file"
    filter_text = "; ".join(f"{escape(label)}: {escape(value)}" for label, value in filters) or "none"
    amounts = f"in {escape(currency)}" if currency else "with no currency (the data carries no prices)"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{escape(title)}</title><style>{STYLE}</style>"
        f"<script>{get_plotlyjs()}</script></head>"
        f"<body><main><header><h1>{escape(title)}</h1>"
        f"<p class=\"meta\">Generated {escape(stamp(generated_at))} · amounts {amounts}</p>"
        f"<dl class=\"meta-list\"><dt>Data</dt><dd>{data}</dd><dt>Filters</dt><dd>{filter_text}</dd></dl>"
        f"</header><nav><ol>{contents}</ol></nav>{body}</main></body></html>\n"
    )
