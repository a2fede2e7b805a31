"""Ten canonical bill questions for `make bench-scale`: each answered on the rollup path (the smallest rollup that
answers it, chosen by ``dashboard.workspace.rollups.choose``, queried through Ibis as a page would) beside bare DuckDB
over the raw Parquet (hand-written SQL), in the same process, and the two answers compared.

Where a question is a Retrospective figure (``FIGURE_OF``), the figure's own queries are timed too, as the page runs
them: ``dashboard.retro.tabs.run`` on a view of the dataset, which reads the rollup the figure's grain chooses or the
rows, beside the question's bare DuckDB time (their first run: a page's small results are kept after it).

``python -m bench.scale_questions`` generates ROWS FOCUS rows (default 1,000,000), imports them in a fresh process
(the import's time and peak memory, beside the same import without sorting, rollups and proofs in another), times
the ten questions in another and the Retrospective's views (``bench.scale_views``) cold and warm in a third, writes
``bench/scale_results/<commit>.json`` and fails when a question's ratio to bare DuckDB (or a view's, warm) grew more
than ``GATE`` times since the previous JSON of the same ROWS (see docs/benchmarks.md).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import ibis
import ibis.expr.types as ir
import pandas as pd

from bench import scale_views
from dashboard.ingest.run_states import FAILED_STATES
from dashboard.query.compiled import built, execute, query

ROWS = 1_000_000
RUNS = 3  # each question runs three times on each path; the fastest is kept (the first is reported too)
GATE = 1.2  # a question's ratio to bare DuckDB may grow this much between two runs of the same size
NOISE_S = 0.05  # below this much slower in absolute terms a ratio's growth is noise, not a regression
RESULTS = Path(__file__).resolve().parent / "scale_results"
TEAM = "team-3"
MONTH = ("2025-05-01", "2025-06-01")  # one team's month: rows starting in May 2025
DAY_S = 86_400
HOUR_S = 3_600
_FAILED = "(" + ", ".join(f"'{state}'" for state in FAILED_STATES) + ")"


def _label(table: ir.Table, column: str) -> ir.StringValue:
    from dashboard.query.columns import label

    return label(table, column)


def _money(value: ir.NumericValue) -> ir.NumericValue:
    return value.sum().cast("float64")


def _spread(table: ir.Table, unit: str, value: str) -> ir.Table:
    """``value`` per ``unit`` (day or hour) of a rollup, the rows across units (their ``start_s``, ``end_s``) spread
    over the units they cover by their share of the time."""
    size = DAY_S if unit == "day" else HOUR_S
    within = table.filter(table.start_s.isnull())
    within = within.group_by(unit).aggregate(v=_money(within[value]))
    across = table.filter(table.start_s.notnull())
    first, last = across.start_s // size, (across.end_s - 1) // size
    pieces = across.select("start_s", "end_s", v=across[value].cast("float64"),
                           at=ibis.range(first, last + 1).unnest())
    share = ((ibis.least(pieces.end_s, (pieces.at + 1) * size) - ibis.greatest(pieces.start_s, pieces.at * size))
             / (pieces.end_s - pieces.start_s))
    spread = pieces.group_by(pieces.at.name(unit)).aggregate(v=(pieces.v * share).sum())
    both = ibis.union(within, spread, distinct=False)
    return both.group_by(unit).aggregate(v=both.v.sum())


def _spread_sql(size: int, value: str, where: str = "TRUE") -> str:
    """Bare SQL: ``value`` of the raw rows per day or hour (``size`` seconds), spread as ``_spread`` does."""
    return f"""WITH t AS (SELECT {value} AS v, epoch(period_start)::BIGINT AS s,
                  greatest(coalesce(epoch(period_end)::BIGINT, epoch(period_start)::BIGINT),
                           epoch(period_start)::BIGINT) AS e FROM {{usage}} WHERE {where}),
               p AS (SELECT v, s, e, unnest(range(s // {size}, CASE WHEN e > s THEN (e - 1) // {size} + 1
                                                               ELSE s // {size} + 1 END)) AS u FROM t)
               SELECT u, sum(CASE WHEN e > s THEN v * (least(e, (u + 1) * {size}) - greatest(s, u * {size}))
                                  / (e - s)::DOUBLE ELSE v END) AS v FROM p GROUP BY u"""


@dataclass(frozen=True)
class Question:
    """A bill question: what it groups or filters by (``columns``, ``unit``), its Ibis query over the chosen table,
    and the bare SQL over the raw rows (``{usage}``: their ``read_parquet``)."""

    name: str
    columns: tuple[str, ...]
    unit: str | None
    layer: Callable[[ir.Table], ir.Table]
    sql: str


def _per_team(t: ir.Table) -> ir.Table:
    return t.group_by(team=_label(t, "team")).aggregate(cost=_money(t.cost), billed=_money(t.billed_cost))


def _per_project(t: ir.Table) -> ir.Table:
    return t.group_by(team=_label(t, "team"), project=_label(t, "project")).aggregate(cost=_money(t.cost))


def _team_month(t: ir.Table) -> ir.Table:
    first, end = (pd.Timestamp(day, tz="UTC").value // 10**9 // DAY_S for day in MONTH)
    rows = t.filter((t.team == TEAM) & (t.day >= first) & (t.day < end))
    return rows.group_by("day").aggregate(cost=_money(rows.cost))


def _top_runs(t: ir.Table) -> ir.Table:
    runs = t.group_by(run=_label(t, "run_id")).aggregate(cost=_money(t.cost))
    return runs.order_by([runs.cost.desc(), runs.run]).limit(20)


def _gpu_types(t: ir.Table) -> ir.Table:
    return t.group_by("gpu_type").aggregate(gpu_hours=_money(t.gpu_hours))


def _commitments(t: ir.Table) -> ir.Table:
    rows = t.filter((t.pricing == "reserved") | t.charge_kind.isin(["commitment", "unused_commitment"]))
    return rows.group_by("day").aggregate(amortised=_money(rows.cost), billed=_money(rows.billed_cost))


def _sum_where(value: ir.NumericValue, where: ir.BooleanValue) -> ir.NumericValue:
    return value.sum(where=where).cast("float64").fill_null(0)


def _waste(t: ir.Table) -> ir.Table:
    return t.aggregate(failed_gpu_hours=_sum_where(t.gpu_hours, t.run_state.isin(list(FAILED_STATES))),
                       unused_commitment=_sum_where(t.cost, t.charge_kind == "unused_commitment"),
                       untagged_gpu_hours=_sum_where(t.gpu_hours, t.run_id.isnull()))


def _plan_vs_actual(t: ir.Table) -> ir.Table:
    runs = t.filter(t.run_id.notnull())
    return runs.group_by("run_id").aggregate(gpu_hours=_money(runs.gpu_hours), cost=_money(runs.cost))


QUESTIONS: tuple[Question, ...] = (
    Question("spend_per_day", (), "day", lambda t: _spread(t, "day", "cost"), _spread_sql(DAY_S, "cost")),
    Question("spend_per_team", ("team",), None, _per_team,
             "SELECT coalesce(team, '(untagged)') AS team, sum(cost) AS cost, sum(billed_cost) AS billed "
             "FROM {usage} GROUP BY 1"),
    Question("spend_per_project", ("team", "project"), None, _per_project,
             "SELECT coalesce(team, '(untagged)') AS team, coalesce(project, '(untagged)') AS project, "
             "sum(cost) AS cost FROM {usage} GROUP BY 1, 2"),
    Question("one_team_month", ("team",), "day", _team_month,
             f"SELECT epoch(period_start)::BIGINT // {DAY_S} AS day, sum(cost) AS cost FROM {{usage}} "
             f"WHERE team = '{TEAM}' AND period_start >= TIMESTAMPTZ '{MONTH[0]} 00:00:00+00' "
             f"AND period_start < TIMESTAMPTZ '{MONTH[1]} 00:00:00+00' GROUP BY 1"),
    Question("top_20_runs", ("run_id",), None, _top_runs,
             "SELECT coalesce(run_id, '(untagged)') AS run, sum(cost) AS cost FROM {usage} GROUP BY 1 "
             "ORDER BY cost DESC, run LIMIT 20"),
    Question("gpu_hours_by_type", ("gpu_type",), None, _gpu_types,
             "SELECT gpu_type, sum(gpu_hours) AS gpu_hours FROM {usage} GROUP BY 1"),
    Question("commitments_amortised", ("pricing", "charge_kind"), "day", _commitments,
             f"SELECT epoch(period_start)::BIGINT // {DAY_S} AS day, sum(cost) AS amortised, "
             "sum(billed_cost) AS billed FROM {usage} "
             "WHERE pricing = 'reserved' OR charge_kind IN ('commitment', 'unused_commitment') GROUP BY 1"),
    Question("waste", ("run_state", "charge_kind", "run_id"), None, _waste,
             f"SELECT coalesce(sum(gpu_hours) FILTER (WHERE run_state IN {_FAILED}), 0), "
             "coalesce(sum(cost) FILTER (WHERE charge_kind = 'unused_commitment'), 0), "
             "coalesce(sum(gpu_hours) FILTER (WHERE run_id IS NULL), 0) FROM {usage}"),
    Question("load_profile", (), "hour", lambda t: _spread(t, "hour", "gpu_hours"),
             _spread_sql(HOUR_S, "gpu_hours")),
    Question("plan_vs_actual", ("run_id",), None, _plan_vs_actual,
             "SELECT run_id, sum(gpu_hours) AS gpu_hours, sum(cost) AS cost FROM {usage} "
             "WHERE run_id IS NOT NULL GROUP BY 1"),
)


# the questions that are a figure of the Retrospective's registry (``dashboard.retro.registry.FIGURES``) by name
FIGURE_OF = {"spend_per_day": "spend", "spend_per_project": "attribution", "waste": "waste",
             "load_profile": "load", "plan_vs_actual": "gap"}


@built
def _expr(usage: ir.Table, index: int) -> ir.Table:
    return QUESTIONS[index].layer(usage)


@query
def answer(usage: ir.Table, index: int) -> pd.DataFrame:
    """Question ``index`` over ``usage`` (a rollup or the rows) through the query layer, as a page runs a figure:
    built and compiled once per shape, then run on the table."""
    result = execute(_expr(usage, index))
    assert isinstance(result, pd.DataFrame)
    return result


def same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Whether two answers hold the same rows (in any order), numbers equal to 1e-9 relative (a rollup adds exact
    decimals, DuckDB doubles in its own order)."""
    if a.shape != b.shape:
        return False
    a, b = a.copy(), b.copy()
    a.columns = b.columns = range(a.shape[1])
    keys = [c for c in a.columns if not pd.api.types.is_float_dtype(a[c]) and not pd.api.types.is_float_dtype(b[c])]
    if keys:
        a, b = (f.astype({k: "string" for k in keys}).sort_values(keys).reset_index(drop=True) for f in (a, b))
    for column in a.columns:
        if column in keys:
            if not a[column].equals(b[column]):
                return False
        else:
            x, y = a[column].astype("float64").fillna(0), b[column].astype("float64").fillna(0)
            if not ((x - y).abs() <= 1e-9 * y.abs().clip(lower=1)).all():
                return False
    return True


def measure(workspace: str, name: str) -> dict:
    """Each question on the rollup path and as bare DuckDB SQL over the raw Parquet, in this process."""
    os.environ["PLANNER_WORKSPACE_DIR"] = workspace
    import duckdb

    from dashboard.query import opened
    from dashboard.query.engine import configure_duckdb, connect
    from dashboard.retro import tabs
    from dashboard.retro.registry import FIGURES
    from dashboard.retro.view import whole
    from dashboard.workspace import datasets, rollup_rows, rollups

    backend = connect("duckdb")
    bare = duckdb.connect()
    configure_duckdb(bare)
    at = datasets.current(name)
    info = datasets.metadata(name, at)
    usage = f"read_parquet('{datasets.usage_folder(name, at) / '**' / '*.parquet'}')"
    view = dataclasses.replace(whole(opened.fixed(datasets.open_table(backend, name, at))),
                               rollups=rollup_rows.chooser(backend, info, at))  # the page's view of the dataset
    entries = {entry.name: entry for entry in FIGURES}
    figures = {}
    for index, question in enumerate(QUESTIONS):
        layer_s, bare_s, label = [], [], ""
        layer_answer = bare_answer = pd.DataFrame()
        for _ in range(RUNS):
            started = time.perf_counter()
            chosen = rollups.choose(backend, info, at, question.columns, question.unit)
            layer_answer = answer(chosen.table, index)
            layer_s.append(time.perf_counter() - started)
            label = chosen.label
            started = time.perf_counter()
            bare_answer = bare.sql(question.sql.format(usage=usage)).df()
            bare_s.append(time.perf_counter() - started)
        if not same(layer_answer, bare_answer):
            raise AssertionError(f"{question.name}: the rollup path and bare DuckDB disagree:\n{layer_answer.head()}"
                                 f"\n{bare_answer.head()}")
        figures[question.name] = {"rollup_seconds": min(layer_s), "rollup_first_seconds": layer_s[0],
                                  "bare_seconds": min(bare_s), "bare_first_seconds": bare_s[0],
                                  "ratio": min(layer_s) / min(bare_s), "answered_by": label,
                                  "answer_rows": len(layer_answer)}
        if question.name in FIGURE_OF:
            entry = entries[FIGURE_OF[question.name]]
            started = time.perf_counter()
            tabs.run(entry, view)
            seconds = time.perf_counter() - started
            figures[question.name]["figure"] = {"name": FIGURE_OF[question.name], "seconds": seconds,
                                                "ratio": seconds / min(bare_s),
                                                "answered_by": tabs.source(entry, view)[1]}
    return figures


def commit() -> str:
    """The checkout's short commit, with "-dirty" when it has changes."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def previous(rows: int, folder: Path = RESULTS, this: str = "") -> dict | None:
    """The latest kept result of ``rows`` rows other than ``this`` commit's, by its ``at`` time."""
    kept = []
    for path in folder.glob("*.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("rows") == rows and data.get("commit") != this:
            kept.append(data)
    return max(kept, key=lambda data: str(data.get("at")), default=None)


# what the gate compares in each part of a result: the ratio to bare DuckDB and the seconds it is a ratio of
GATED = {"questions": ("ratio", "rollup_seconds"), "views": ("ratio", "warm_seconds")}


def regressions(now: dict, before: dict | None, gate: float = GATE, noise_s: float = NOISE_S) -> list[str]:
    """The questions and views (``GATED``) whose ratio to bare DuckDB grew more than ``gate`` times since
    ``before`` and are more than ``noise_s`` slower in absolute terms: each as a sentence."""
    if before is None:
        return []
    found = []
    for part, (ratio, seconds) in GATED.items():
        for name, figures in now.get(part, {}).items():
            old = before.get(part, {}).get(name)
            if not old or ratio not in old or seconds not in old:
                continue
            if figures[ratio] > gate * old[ratio] and figures[seconds] - old[seconds] > noise_s:
                found.append(f"{name}: {figures[ratio]:.2f}× bare DuckDB, was {old[ratio]:.2f}× at "
                             f"{before.get('commit')} (gate {gate}×)")
    return found


def latest(folder: Path = RESULTS) -> list[dict]:
    """The latest kept result of each size, smallest size first."""
    by_rows: dict[int, dict] = {}
    for path in folder.glob("*.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("rows"), int):
            kept = by_rows.get(data["rows"])
            if kept is None or str(data.get("at")) > str(kept.get("at")):
                by_rows[data["rows"]] = data
    return [by_rows[rows] for rows in sorted(by_rows)]


def _wrapped(text: str) -> list[str]:
    return textwrap.wrap(text, 115, break_on_hyphens=False, break_long_words=False)


def _cpu(imported: dict) -> str:
    """The import's CPU seconds as a clause, when the run recorded them."""
    if "cpu_seconds" not in imported:
        return ""
    return (f"; CPU {imported['cpu_seconds']:.1f} s, of which {imported['finish_cpu_seconds']:.1f} s after the last "
            f"row, {imported['cpu_seconds'] / imported['bare_cpu_seconds']:.2f}×")


def docs_section(folder: Path = RESULTS) -> list[str]:
    """docs/benchmarks.md's section on `make bench-scale`: what it does, how to run it larger, the latest results."""
    about = (
        "Not part of `make bench`: `bench/scale_questions.py` generates `ROWS` FOCUS rows (default 1,000,000; a "
        "quarter of hourly lines of 12 teams, 25 projects each, one run per project, 3 pricing tiers, 5,000 resources "
        "each with one team's project, as in a real bill), imports them "
        "into the workspace in a fresh process (each batch sorted by team, project and start and its rollups' sums "
        "taken as it is written, the rollups summed, proven and kept within their size budget after the last row: "
        "[engines.md](engines.md#workspace-and-large-exports)), then answers ten canonical bill questions in "
        "another, each on the rollup "
        "path (the smallest rollup that answers it, chosen by `dashboard.workspace.rollups.choose`, queried through "
        "the query layer as a page runs a figure) and as bare DuckDB SQL over the raw Parquet, in the same process, "
        "the faster of three runs of each. The two answers must agree (to 1e-9 relative) or the run fails. Each run "
        "is kept as `bench/scale_results/<commit>.json`; the run fails when a question's ratio to bare DuckDB grew "
        f"more than {GATE}× since the previous result of the same size (and is more than {NOISE_S} s slower). "
        "Then, in a third fresh process, the Retrospective's views as the page runs them (`bench/scale_views.py`): "
        "the first view (opening the dataset, amortising, the join's stats, the currency, the filters' options, the "
        "tiles and the Spend tab), each tab, a one-team and a one-project filter (the first view and Spend), each "
        "cold (first run) and warm (the faster of two more), against the bare DuckDB scan of the raw rows "
        "(`spend_per_day`'s SQL) in "
        "the same process, and a resource's and a run's rows (drill-downs, target 3 s at 10⁸ rows); the gate covers "
        "each view's warm ratio too. "
        "Targets: every question at most 1.0× the bare scan; the import with sorting and rollups at most 1.5× the "
        "import without them, the same rows imported in another process of the same run with the rows written "
        "unsorted in the same row groups on the reading thread (the import puts each batch in order on a worker "
        "thread while it writes the one before), no sums taken and nothing built after the last row (also reported "
        "in CPU seconds, less sensitive than wall seconds to a shared machine's load); "
        "rollups at most 5 % of the rows.")
    larger = (
        "Larger sizes: `make bench-scale ROWS=10000000` needs about 0.6 GB of scratch under `BENCH_SCALE_DIR` (0.3 GB "
        "of generated parts, 0.3 GB of dataset) and took 9.5 to 12 minutes on this shared two-core machine, most of "
        "it the import. `make bench-scale ROWS=100000000` is the issue's quarter: about 6 GB of scratch (3 GB of "
        "parts, 3 GB of dataset: the import without sorting and rollups writes its own first and it is deleted) "
        "plus DuckDB's spill of the batches' rollup sums past `PLANNER_IMPORT_ENGINE_MB`, and ten times the 10⁷ "
        "run's work: about 940 CPU-seconds for the two imports (with and without rollups), generating the parts "
        "about 11 minutes (kept for the next run), the rest of the run about 20 minutes on two cores. Run the larger "
        "sizes on a quiet machine: the questions' figures are ratios within one run, but the import's seconds and "
        "memory are not, and its wall ratio moves with the machine's speed between its two imports (1.25× and 1.38× "
        "in two runs at 10⁸ an hour apart, 1.27× to 1.52× in six pairs at 10⁷). The 10⁸ run below ran alone on "
        "the two cores. The views alone over the dataset a run left: `python -m bench.scale_bench child views "
        "<workspace> <dataset>`.")
    lines = ["## `make bench-scale`", "", *_wrapped(about), "", *_wrapped(larger), ""]
    for result in latest(folder):
        imported = result["import"]
        lines += [f"Last run at {result['rows']:,} rows ({result['at']}, commit {result['commit']}): import "
                  f"{imported['seconds']:.1f} s, of which {imported['finish_seconds']:.1f} s after the last row was "
                  f"written ({imported['seconds'] / imported['bare_seconds']:.2f}× the import without sorting, "
                  f"rollups and proofs{_cpu(imported)}), peak "
                  f"{imported['peak_rss'] / 1e6:,.0f} MB; rollups {imported['rollup_rows']:,} rows "
                  f"({100 * imported['rollup_rows'] / result['rows']:.1f} % of the rows).", "",
                  "| Question | Rollup path (s) | Bare DuckDB (s) | Ratio | Answered by |", "|---|---|---|---|---|"]
        for name in [q.name for q in QUESTIONS if q.name in result["questions"]]:
            figures = result["questions"][name]
            lines.append(f"| `{name}` | {figures['rollup_seconds']:.3f} | {figures['bare_seconds']:.3f} | "
                         f"{figures['ratio']:.2f}× | {figures['answered_by'].split(', built')[0]} |")
        lines.append("")
        ran = {q.name: result["questions"][q.name]["figure"] for q in QUESTIONS
               if "figure" in result["questions"].get(q.name, {})}
        if ran:
            lines += [*_wrapped("The figures among them, as the page runs them (`dashboard.retro.tabs.run`, first "
                                "run: a page keeps the small results after it), against the question's bare DuckDB:"),
                      "", "| Figure | Page path (s) | Ratio | Answered from |", "|---|---|---|---|"]
            lines += [f"| `{figure['name']}` (`{name}`) | {figure['seconds']:.3f} | {figure['ratio']:.2f}× | "
                      f"{figure['answered_by'].split(', built')[0]} |" for name, figure in ran.items()]
            lines.append("")
        lines += scale_views.docs_lines(result)
    return lines


def main() -> int:
    from bench.scale_bench import SCRATCH, _run_child, _size, write_parts

    rows = _size("ROWS", ROWS)
    measured = commit()  # the code measured: the checkout as the run starts
    scratch = Path(os.environ.get("BENCH_SCALE_DIR", "").strip() or SCRATCH)
    workspace = scratch / "workspace"
    parts = scratch / f"focus_parts_{rows}"
    write_parts(parts, rows, min(rows, _size("PART_ROWS", 2_000_000)))
    name = f"questions-{rows}"
    bare = _run_child("import-bare", str(parts), str(scratch / "workspace-bare"), name)
    shutil.rmtree(scratch / "workspace-bare", ignore_errors=True)
    imported = _run_child("import-rollups", str(parts), str(workspace), name)
    imported.update(bare_seconds=bare["seconds"], bare_cpu_seconds=bare["cpu_seconds"],
                    bare_peak_rss=bare["peak_rss"])
    answers = _run_child("questions", str(workspace), name)
    answers.pop("peak_rss", None)
    viewed = _run_child("views", str(workspace), name)  # another fresh process: the first view is cold
    result = {"commit": measured, "at": datetime.now(UTC).isoformat(timespec="seconds"), "rows": rows,
              "import": imported, "questions": answers, "views": viewed["views"], "bare_scan": viewed["bare"],
              "warm_up_seconds": viewed["warm_up_seconds"], "views_peak_rss": viewed["peak_rss"]}
    before = previous(rows, this=result["commit"])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{result['commit']}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n",
                                                      encoding="utf-8")
    print(f"scale_questions_rows: {rows:,}")
    print(f"scale_import_seconds: {imported['seconds']:.1f} (after the last row {imported['finish_seconds']:.1f}; "
          f"{imported['seconds'] / imported['bare_seconds']:.2f}× the import without sorting, rollups and proofs, "
          f"{imported['bare_seconds']:.1f} s, target <= 1.5)")
    if "cpu_seconds" in imported:
        print(f"scale_import_cpu_seconds: {imported['cpu_seconds']:.1f} (after the last row "
              f"{imported['finish_cpu_seconds']:.1f}; {imported['cpu_seconds'] / imported['bare_cpu_seconds']:.2f}× "
              f"the import's CPU without them, {imported['bare_cpu_seconds']:.1f} s)")
    print(f"scale_import_peak_rss_gb: {imported['peak_rss'] / 1e9:.2f}")
    print(f"scale_rollup_rows: {imported['rollup_rows']:,} ({100 * imported['rollup_rows'] / rows:.1f} % of the rows,"
          " target <= 5 % at 10^8)")
    for question, figures in answers.items():
        print(f"scale_{question}: rollup {figures['rollup_seconds']:.3f} s "
              f"(first {figures['rollup_first_seconds']:.3f}), bare DuckDB {figures['bare_seconds']:.3f} s, "
              f"{figures['ratio']:.2f}× (target <= 1.0); "
              f"{figures['answered_by']}")
        if "figure" in figures:
            figure = figures["figure"]
            print(f"scale_figure_{figure['name']}: page path {figure['seconds']:.3f} s, {figure['ratio']:.2f}× the "
                  f"bare {question}; from {figure['answered_by']}")
    for line in scale_views.printed(result):
        print(line)
    failed = regressions(result, before)
    for line in failed:
        print(f"scale_regression: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
