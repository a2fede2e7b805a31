"""The Compare page's outputs: the saved list, the comparison table, the grouped charts and the presentation layout."""

from __future__ import annotations

import html
from functools import partial
from typing import TYPE_CHECKING, Literal, get_args

import pandas as pd
import streamlit as st

from dashboard.core import catalogue, compare, risk
from dashboard.core.scenario import Scenario
from dashboard.figures import compare as compare_figures
from dashboard.report.cells import count, format_delta, format_output, is_same, money
from dashboard.safe_text import markdown_text
from dashboard.store.scenario_store import AuditEntry
from dashboard.ui import compare_cache, compare_state
from dashboard.ui.cache import chart, plan_monte_carlo, plan_result
from dashboard.ui.compare_state import OVERWRITE, SAVE_NAME, UPLOAD, UPLOAD_ROUND

if TYPE_CHECKING:
    from dashboard.ui.plan_view import MetricDelta

HIGHLIGHT = "background-color: #fff3bf"
SAME_STYLE = "color: #888"  # a Δ too small to read as a change
ROW_PX = 35  # st.dataframe's row height: the table shows every row without scrolling (up to 900 px)
MATCH = "compare.match"
LABELS = "compare.labels"
SHORT_LABEL_CHARS = 24
SCALE = "compare.scale"
AS_SAVED = "saved"
MATCH_CHOICES = {AS_SAVED: "as saved", **{lever: f"by {text}" for lever, text in compare.MATCH_LEVERS.items()}}
# Large numbers for a projector, headers of one fixed height, and no sidebar.
PRESENTATION_CSS = """<style>
[data-testid="stMetricValue"] { font-size: 2.8rem; }
[data-testid="stMetricLabel"] p { font-size: 1.15rem; }
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"]
  { display: none; }
.cmp-head { height: 6.5rem; overflow: hidden; }
.cmp-name { font-size: 1.6rem; font-weight: 700; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.cmp-loss { color: #555; font-size: 1.05rem; white-space: nowrap; }
.cmp-badges { height: 1.9rem; overflow: hidden; white-space: nowrap; }
.cmp-badge { display: inline-block; margin: .25rem .35rem 0 0; padding: 0 .6rem; border-radius: 1rem;
  background: #e3f2e6; color: #1b5e20; font-weight: 600; font-size: .95rem; }
</style>"""
# One grid row per metric, in the Plan page's order and labels; lower is better for each (the Δ arrow's colour).
PresentationRow = Literal["cost_total_usd", "gpu_hours_total", "wall_clock_days", "cost_per_million_tokens",
                          "predicted_loss"]
PRESENTATION_ROWS: tuple[PresentationRow, ...] = get_args(PresentationRow)


def store_controls(store_words: str) -> None:
    """Save the Plan's scenario, import files, add the presets; what kind of store underneath (never its path or
    host: every user of a server sees this page)."""
    state = st.session_state
    st.subheader("Save and import")
    st.text_input("Save the Plan's scenario as", key=SAVE_NAME, max_chars=120,
                  placeholder=compare_state.plan_scenario().name,
                  help="1–120 characters: letters, digits, spaces and - – — _ . , ( ) + & # ' % :")
    st.checkbox("Overwrite a saved scenario with the same name", key=OVERWRITE)
    st.button("Save", on_click=compare_state.save_plan, icon=":material/save:", type="primary")
    st.file_uploader("Import scenario JSON files", type=["json"], accept_multiple_files=True,
                     key=f"{UPLOAD}.{state.get(UPLOAD_ROUND, 0)}", on_change=compare_state.import_files,
                     help="One scenario per file, or an array of them (as exported here). All or nothing: a bad "
                          "file or a name already taken imports none.")
    st.button("Add the bundled presets", on_click=compare_state.add_presets, icon=":material/library_add:")
    st.caption(f"Saved in {store_words}.")


def saved_table(scenarios: dict[str, Scenario], owners: dict[str, str] | None = None) -> None:
    """Every saved scenario with its owner (e-mail only) and headline numbers, the MFU it is priced with among them
    ("34.7 % (predicted)" from the layout, or "40 % (entered)")."""
    rows = []
    for name, scenario in scenarios.items():
        result = plan_result(scenario)
        rows.append({"Scenario": name, "Owner": (owners or {}).get(name, "(no owner)"),
                     "Total cost": money(result["cost_total_usd"]),
                     "GPU-hours": count(result["gpu_hours_total"]), "Wall-clock (days)": result["wall_clock_days"],
                     "MFU": f"{catalogue.text('mfu_used', result['mfu_used'])} "
                            f"({result['throughput']['mfu_source']})",
                     "Method": scenario.method,
                     "Budget at the point estimate": compare.headline_value("budget_status", result)})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"Wall-clock (days)": st.column_config.NumberColumn(format="%.1f")})


HISTORY_ACTIONS = {"save": "saved", "overwrite": "overwrote (the earlier inputs are kept in the audit table)",
                   "rename": "renamed", "duplicate": "saved as a copy", "delete": "deleted", "adopt": "adopted"}


def history(entries: list[AuditEntry]) -> None:
    """A saved scenario's changes, newest first: when, who (e-mail only), what and the earlier name or owner."""
    if not entries:
        st.caption("No recorded changes: it was saved before the store kept a history.")
        return
    rows = []
    for entry in reversed(entries):
        earlier = entry.previous_name if entry.action in ("rename", "duplicate") else entry.previous_owner_email
        rows.append({"When (UTC)": entry.at.strftime("%Y-%m-%d %H:%M:%S"), "Who": entry.actor,
                     "What": HISTORY_ACTIONS.get(entry.action, entry.action), "Name": entry.name,
                     "Before": {"rename": f"was “{earlier}”", "duplicate": f"copy of “{earlier}”",
                                "adopt": f"owner was {earlier or '(no owner)'}"}.get(entry.action, "")})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="compare.history")


def _styled(shown: pd.DataFrame, mask: pd.DataFrame):
    """Changed cells highlighted; a Δ that reads "≈ same" in grey."""
    def css(_: pd.DataFrame) -> pd.DataFrame:
        same = shown.map(lambda text: isinstance(text, str) and is_same(text))
        return mask.map(lambda differs: HIGHLIGHT if differs else "").mask(same, SAME_STYLE)

    return shown.style.apply(css, axis=None)


def _dataframe(shown: pd.DataFrame, mask: pd.DataFrame, names: dict[str, str], label: str) -> None:
    """A table with its first column frozen and each short header's full name on hover."""
    config = {"item": st.column_config.TextColumn(label, pinned=True, width="medium")}
    config.update({header: st.column_config.TextColumn(header, help=markdown_text(name))
                   for header, name in names.items()})
    st.dataframe(_styled(shown, mask), hide_index=True, width="stretch", column_config=config,
                 height=min(ROW_PX * (len(shown) + 1) + 3, 900))


def table(scenarios: tuple[Scenario, ...]) -> None:
    """Headline outputs first, the inputs that differ in a collapsible section; changed cells highlighted."""
    st.subheader("Headline outputs")
    shown, mask, names = compare_cache.display(scenarios, compare.OUTPUT_SECTION)
    _dataframe(shown, mask, names, "Output")
    inputs, input_mask, input_names = compare_cache.display(scenarios, compare.INPUT_SECTION)
    with st.expander(f"Inputs that differ ({len(inputs)})", icon=":material/tune:"):
        if inputs.empty:
            st.caption("Every input is the same in all options.")
        else:
            _dataframe(inputs, input_mask, input_names, "Input")
    st.download_button("Download the table (CSV)", data=partial(compare_cache.csv_bytes, scenarios),
                       file_name="comparison.csv",
                       mime="text/csv", on_click="ignore", icon=":material/table_view:",
                       help="Raw values, one column per scenario and one Δ column per scenario after the first; "
                            "text cells that a spreadsheet would run as a formula are escaped.")


def input_rows_differ(scenarios: list[Scenario]) -> bool:
    return bool(compare.input_rows(scenarios, differing_only=True))


def warnings(scenarios: tuple[Scenario, ...]) -> None:
    """The loss-comparability banner and, per option, a point estimate below P10 explained."""
    results = [plan_result(scenario) for scenario in scenarios]
    names = compare.unique_names([result["name"] for result in results])
    banner = compare.loss_banner(names, results)
    if banner:
        st.warning(markdown_text(banner), icon=":material/balance:")
    for name, scenario, result in zip(names, scenarios, results, strict=True):
        mc = plan_monte_carlo(scenario, *compare_cache.DRAWS_AND_SEED)
        note = compare.optimism_note(name, result["cost_total_usd"], mc.percentile("cost_total_usd", 10),
                                     mc.point_rank("cost_total_usd"), money)
        if note:
            st.info(markdown_text(note), icon=":material/trending_up:")


def match_controls(scenarios: tuple[Scenario, ...]) -> tuple[Scenario, ...]:
    """The "match loss" choice; returns the options to show (moved to the first one's loss when asked)."""
    lever = st.segmented_control(
        "Match loss", list(MATCH_CHOICES), key=MATCH, bind="query-params", format_func=MATCH_CHOICES.__getitem__,
        help="Options with different predicted losses buy different models. Move each option's training tokens "
             "(or its model size) so its predicted loss equals the first option's, and see what that costs.")
    if not lever or lever == AS_SAVED:
        return scenarios
    moved, notes, problems = compare_cache.matched(scenarios, lever)
    for note in notes:
        st.caption(markdown_text(note))
    for problem in problems:
        st.error(markdown_text(f"Not matched: {problem}."))
    return moved


def charts(scenarios: tuple[Scenario, ...]) -> None:
    """Cost breakdown, timeline and P10–P90 ranges per option on one scale, then the TST view of each TST option."""
    scale = st.segmented_control("Scale", list(compare_figures.SCALES), key=SCALE, bind="query-params",
                                 format_func=compare_figures.SCALES.__getitem__, default="usd",
                                 help="“% of total” shows each option's own split; “log” keeps a small option "
                                      "visible beside a large one.") or "usd"
    st.plotly_chart(compare_cache.figure(scenarios, "cost", scale), width="stretch", key="compare.chart.cost")
    st.plotly_chart(compare_cache.figure(scenarios, "timeline", scale), width="stretch", key="compare.chart.timeline")
    st.plotly_chart(compare_cache.figure(scenarios, "range", "log" if scale == "log" else "usd"), width="stretch",
                    key="compare.chart.range")
    tst = [scenario for scenario in scenarios if scenario.method == "tst"]
    for position, scenario in enumerate(tst):
        st.subheader(f"TST against baseline: {markdown_text(scenario.name)}")
        st.plotly_chart(chart(scenario, "TST vs baseline"), width="stretch", key=f"compare.chart.tst.{position}")


def short_label_inputs(names: list[str]) -> None:
    """A short label per option for the presentation layout's headers (blank: the name, cut to fit)."""
    labels = st.session_state.setdefault(LABELS, {})

    def keep(name: str, key: str) -> None:
        labels[name] = (st.session_state.get(key) or "").strip()

    with st.expander("Short labels for the presentation layout", icon=":material/label:"):
        for column, name in zip(st.columns(len(names)), names, strict=True):
            key = f"{LABELS}.{name}"
            column.text_input(markdown_text(name), value=labels.get(name, ""), key=key, max_chars=SHORT_LABEL_CHARS,
                              on_change=keep, args=(name, key), placeholder="e.g. Option A")


def short_labels(names: list[str]) -> list[str]:
    labels = st.session_state.get(LABELS, {})
    return [labels.get(name, "") for name in names]


def _header_html(name: str, short: str, badges: list[str], loss: str) -> str:
    """A fixed-height column header: the short label (full name on hover), its loss and its badges."""
    chips = "".join(f'<span class="cmp-badge">{html.escape(badge)}</span>' for badge in badges)
    return (f'<div class="cmp-head" title="{html.escape(name, quote=True)}">'
            f'<div class="cmp-name">{html.escape(short)}</div>'
            f'<div class="cmp-loss">loss {html.escape(loss)}</div><div class="cmp-badges">{chips}</div></div>')


def _delta(key: str, values: list[float], position: int) -> MetricDelta:
    """`st.metric`'s delta arguments against the first option: "≈ same" in grey with no arrow when too small."""
    if position == 0:
        return {"delta": None}
    text = format_delta(compare.OUTPUT_SECTION, key, values[position], values[0])
    if is_same(text):
        return {"delta": text, "delta_color": "off", "delta_arrow": "off"}
    return {"delta": f"{text} vs first", "delta_color": "inverse"}


def presentation(scenarios: tuple[Scenario, ...], short_labels: list[str]) -> None:
    """A grid for a projector: one row per metric across all options, fixed-height headers, Δ against the first."""
    st.html(PRESENTATION_CSS)
    results = [plan_result(scenario) for scenario in scenarios]
    runs = [plan_monte_carlo(scenario, *compare_cache.DRAWS_AND_SEED) for scenario in scenarios]
    summaries = [run.summary() for run in runs]
    names = compare.unique_names([result["name"] for result in results])
    earned = compare.badges(results, summaries)
    count_ = len(scenarios)
    for column, name, short, badges, result in zip(st.columns(count_), names, short_labels, earned, results,
                                                   strict=True):
        column.html(_header_html(name, short or name, badges, format_output("predicted_loss",
                                                                             result["predicted_loss"])))
    for key in PRESENTATION_ROWS:
        values = [result[key] for result in results]
        for position, column in enumerate(st.columns(count_, border=True)):
            with column:
                st.metric(catalogue.label(key), format_output(key, values[position]), **_delta(key, values, position))
                if key == "cost_total_usd":
                    run = runs[position]
                    st.caption(markdown_text(  # literal: two "$" would start maths
                        f"P10–P90 {money(run.percentile('cost_total_usd', 10))} – "
                        f"{money(run.percentile('cost_total_usd', 90))}"))
    for position, column in enumerate(st.columns(count_, border=True)):
        result, summary = results[position], summaries[position]
        with column:
            status = risk.budget_verdict(result, summary)
            st.metric(catalogue.label("budget_status"), status,
                      help=markdown_text("; ".join(result["feasibility_problems"])) or None)
            st.caption(markdown_text(f"{catalogue.text('prob_over_budget', summary['prob_over_budget'])} chance of "
                                     f"exceeding the {money(result['budget_usd'])} budget"))
    st.plotly_chart(compare_cache.figure(scenarios, "range"), width="stretch", key="compare.chart.range")
