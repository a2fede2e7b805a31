"""`make bench-scale`'s Retrospective views: on a generated dataset every view runs as the page runs it, names the
table it read and the drill-downs find the rows a count of the generated table finds; the targets' verdicts, the
regression gate on the views and the docs' tables (no timing is asserted)."""

import json

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from bench import scale_questions, scale_views
from bench.ingest_bench import focus_table
from dashboard.workspace.imports import import_to_workspace

ROWS = 6000


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    folder = tmp_path_factory.mktemp("views")
    (folder / "parts").mkdir()
    table = focus_table(ROWS, seed=5)
    pq.write_table(table, folder / "parts" / "part-0000.parquet")
    workspace = folder / "workspace"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PLANNER_WORKSPACE_DIR", str(workspace))
        import_to_workspace(folder / "parts", "focus", stream_min_bytes=0)
        yield table, scale_views.measure(str(workspace), "focus")


def test_every_view_and_drill_down_is_measured_cold_and_warm(measured):
    _, result = measured
    views = result["views"]
    assert tuple(views) == scale_views.VIEWS
    assert {"cold_seconds", "seconds"} <= set(result["bare"])
    for name, figures in views.items():
        assert figures["cold_seconds"] > 0 and figures["warm_seconds"] > 0, name
        assert figures["ratio"] == figures["warm_seconds"] / result["bare"]["seconds"], name
    # the first view is the page's, step by step; the warm one reuses the dataset the page holds open
    assert list(views["first_view"]["steps"]) == ["open", "amortise", "join", "currency", "options", "tiles", "spend"]
    assert list(views["first_view"]["warm_steps"]) == ["amortise", "join", "currency", "options", "tiles", "spend"]
    assert views["spend"]["cold_seconds"] == views["first_view"]["steps"]["spend"]
    # the tabs whose section adds queries to the figure's say how the cold run split
    assert list(views["gap"]["steps"]) == ["figure", "measured inputs"]
    assert list(views["mix"]["steps"]) == ["figure", "what-if mix"]
    assert views["gap"]["cold_seconds"] == sum(views["gap"]["steps"].values())
    assert "steps" not in views["waste"]


JOBS_READ = ("the whole-period rollup by team, project, run_id, run_state, pricing, charge_kind, gpu_sign, cost_sign, "
             "tokens_sign, segment, job_hours, currency")


@pytest.mark.parametrize(("view", "read"), [
    # the tiles read the smallest rollup by the signs (GPU rows, costed rows): the jobs rollup, whole-period
    ("first_view", "tiles: " + JOBS_READ),
    ("spend", "the daily rollup by team,"),
    ("attribution", "the whole-period rollup by team, project, run_id,"),
    ("load", "the hourly rollup by pricing, charge_kind,"),
    ("gap", JOBS_READ),  # a run's segments in time order, marked at import
    ("waste", JOBS_READ),  # its sums; the rows behind each check from the rows
    ("mix", "the whole-period rollup by team, project, run_id,"),  # the GPU rows by tier: by the signs
    ("units", "the whole-period rollup by team, project, run_id, run_state, pricing, charge_kind, gpu_type,"),
    # a filtered view's tiles: the smallest rollup by the signs that keeps the team or project
    ("team_first_view", "tiles: the whole-period rollup by team, project, run_id,"),
    ("project_first_view", "tiles: the whole-period rollup by team, project, run_id,"),
    ("team_spend", "the daily rollup by team,"),
    ("project_spend", "the daily rollup by team, project,"),  # the project filter needs the project in the grain
    ("resource_rows", f"the rows ({ROWS:,})"),
    ("run_rows", f"the rows ({ROWS:,})"),
])
def test_each_view_names_the_table_it_read(measured, view, read):
    assert measured[1]["views"][view]["answered_from"].startswith(read)


def test_the_drill_downs_find_the_generated_rows_of_one_resource_and_one_run(measured):
    table, result = measured
    views = result["views"]
    resource = pc.sum(pc.equal(table["ResourceId"].cast("string"), scale_views.RESOURCE)).as_py()
    run = pc.sum(pc.match_substring(table["Tags"].cast("string"), f'"run_id": "{scale_views.RUN}"')).as_py()
    assert 0 < resource < 10 and 0 < run < 100  # 6,000 rows over 5,000 resources, over 301 tags
    assert views["resource_rows"]["rows"] == resource
    assert views["run_rows"]["rows"] == run


@pytest.mark.parametrize(("seconds", "passes", "passes_seconds"), [
    ((1.0, 0.5, 2.0, 1.0), True, True),  # 0.5× and 0.5× the scan, 1 s and 0.5 s
    ((2.5, 0.5, 2.0, 1.0), False, False),  # cold 1.25× the scan and over 2 s
    ((1.9, 1.2, 2.0, 1.0), False, False),  # warm 1.2× the scan and over 1 s
    ((3.0, 1.5, 4.0, 2.0), True, False),  # within the scan, over the seconds
])
def test_a_view_passes_at_most_the_scan_cold_and_warm_and_under_2_s_and_1_s(seconds, passes, passes_seconds):
    figures = scale_views._entry(*seconds, "the rows (1)")
    assert figures["passes"] is passes
    assert figures["passes_seconds"] is passes_seconds


@pytest.mark.parametrize(("seconds", "passes"), [((2.9, 0.4), True), ((3.1, 0.4), False), ((0.5, 3.2), False)])
def test_a_drill_down_passes_within_3_s(seconds, passes):
    assert scale_views._entry(*seconds, 1.0, 1.0, "the rows (1)", drill_down=True)["passes"] is passes


def _result(commit, ratio, warm_s, at="2026-12-06T08:00:00+00:00"):
    return {"commit": commit, "at": at, "rows": 1_000_000, "questions": {},
            "views": {"first_view": {"ratio": ratio, "warm_seconds": warm_s}}}


@pytest.mark.parametrize(("ratio", "warm_s", "flagged"), [
    (0.50, 0.20, False),  # as before
    (0.59, 0.30, False),  # 1.18×: under the gate
    (0.65, 0.30, True),  # 1.3× and 0.1 s slower
    (0.65, 0.22, False),  # 1.3× but 0.02 s slower: noise
])
def test_the_gate_flags_a_view_whose_warm_ratio_grew_more_than_1_2_times(ratio, warm_s, flagged):
    found = scale_questions.regressions(_result("bbb", ratio, warm_s), _result("aaa", 0.50, 0.20))
    assert found == ([f"first_view: {ratio:.2f}× bare DuckDB, was 0.50× at aaa (gate 1.2×)"] if flagged else [])


def test_a_result_from_before_the_views_gates_the_questions_only():
    before = {"commit": "aaa", "rows": 1_000_000, "questions": {"waste": {"ratio": 0.1, "rollup_seconds": 0.1}}}
    now = {**_result("bbb", 9.0, 9.0), "questions": {"waste": {"ratio": 0.5, "rollup_seconds": 0.5}}}
    assert scale_questions.regressions(now, before) == ["waste: 0.50× bare DuckDB, was 0.10× at aaa (gate 1.2×)"]


def _view(cold_s, warm_s, cold_ratio, ratio, passes, passes_seconds, read="the rows (10)"):
    return {"cold_seconds": cold_s, "warm_seconds": warm_s, "cold_ratio": cold_ratio, "ratio": ratio,
            "answered_from": read, "passes": passes, "passes_seconds": passes_seconds}


def test_the_docs_tables_give_each_view_its_seconds_ratios_source_and_verdicts(tmp_path):
    first = {**_view(3.0, 0.5, 1.5, 0.25, False, False,
                     "tiles: the rows (10); Spend: the daily rollup by team, currency, built 12:03"),
             "steps": {"open": 1.0, "spend": 2.0}, "warm_steps": {"spend": 0.5}}
    result = {"commit": "abc", "at": "2026-12-06T08:00:00+00:00", "rows": 10, "warm_up_seconds": 1.5,
              "bare_scan": {"cold_seconds": 2.0, "seconds": 2.0},
              "views": {"first_view": first, "waste": _view(1.0, 0.8, 0.5, 0.4, True, True),
                        "gap": {**_view(5.0, 0.1, 2.5, 0.05, False, False),
                                "steps": {"figure": 1.0, "measured inputs": 4.0}},
                        "run_rows": {**_view(3.5, 1.0, 1.75, 0.5, False, None), "rows": 1234}}}
    lines = scale_views.docs_lines(result)
    assert ("| First view (tiles, Spend) | 3.000 | 0.500 | 1.50× | 0.25× | tiles: the rows (10); Spend: the daily "
            "rollup by team, currency | **miss** | **miss** |") in lines
    assert "| Waste tab | 1.000 | 0.800 | 0.50× | 0.40× | the rows (10) | pass | pass |" in lines
    assert f"| One run's rows ({scale_views.RUN}) | 3.500 | 1.000 | 1,234 | the rows (10) | **miss** |" in lines
    text = " ".join(lines)
    assert "open 1.00, spend 2.00 s" in text and "2.000 s cold" in text
    assert "Plan vs actual tab: figure 1.00 s, measured inputs 4.00 s." in text
    assert scale_views.docs_lines({"rows": 10, "questions": {}}) == []  # a result from before the views
    # the bench's docs section carries them after the questions' tables
    (tmp_path / "abc.json").write_text(json.dumps({**result, "questions": {}, "import": {
        "seconds": 2.0, "finish_seconds": 1.0, "bare_seconds": 1.0, "peak_rss": 1e8, "rollup_rows": 1}}))
    section = scale_questions.docs_section(tmp_path)
    assert section[-len(lines):] == lines
