"""`make bench-scale`'s ten bill questions: on a generated dataset each is answered by a rollup and gives bare DuckDB's
answer over the raw rows; the regression gate and the choice of the previous result (no timing is asserted)."""

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

from bench import scale_questions
from bench.ingest_bench import focus_table
from dashboard.workspace.imports import import_to_workspace


def test_every_question_is_answered_by_a_rollup_as_bare_duckdb_answers_it(tmp_path, monkeypatch):
    (tmp_path / "parts").mkdir()
    pq.write_table(focus_table(5000, seed=4), tmp_path / "parts" / "part-0000.parquet")
    workspace = tmp_path / "workspace"
    monkeypatch.setenv("PLANNER_WORKSPACE_DIR", str(workspace))
    import_to_workspace(tmp_path / "parts", "focus", stream_min_bytes=0)
    figures = scale_questions.measure(str(workspace), "focus")  # raises when an answer differs from bare DuckDB's
    assert list(figures) == [question.name for question in scale_questions.QUESTIONS]
    assert len(figures) == 10
    for name, answered in figures.items():
        assert "rollup" in answered["answered_by"], name
        assert answered["answer_rows"] > 0, name
    assert figures["top_20_runs"]["answer_rows"] == 20
    assert figures["waste"]["answer_rows"] == 1
    assert figures["load_profile"]["answered_by"].startswith("hourly rollup")
    # the questions that are figures, run by the registry's runner as the page runs them: from their grain's rollup
    ran = {name: answered["figure"] for name, answered in figures.items() if "figure" in answered}
    assert {name: figure["name"] for name, figure in ran.items()} == scale_questions.FIGURE_OF
    assert ran["spend_per_day"]["answered_by"].startswith("the daily rollup by team")
    assert ran["spend_per_project"]["answered_by"].startswith("the whole-period rollup")
    assert ran["load_profile"]["answered_by"].startswith("the hourly rollup")  # its row tests held by the signs
    for name in ("waste", "plan_vs_actual"):  # a run's segments by their marks: the jobs rollup
        assert ran[name]["answered_by"].startswith("the whole-period rollup by team, project, run_id, run_state"), name
    assert ran["waste"]["answered_by"].endswith("; the rows behind it from the rows (5,000)")  # its drill-downs


@pytest.mark.parametrize(("a", "b", "same"), [
    (pd.DataFrame({"k": ["x", "y"], "v": [1.0, 2.0]}), pd.DataFrame({"k": ["y", "x"], "v": [2.0, 1.0]}), True),
    (pd.DataFrame({"k": ["x"], "v": [0.1 + 0.2]}), pd.DataFrame({"k": ["x"], "v": [0.3]}), True),
    (pd.DataFrame({"k": ["x"], "v": [1.0]}), pd.DataFrame({"k": ["x"], "v": [1.01]}), False),
    (pd.DataFrame({"k": ["x"], "v": [1.0]}), pd.DataFrame({"k": ["z"], "v": [1.0]}), False),
    (pd.DataFrame({"k": ["x"], "v": [1.0]}), pd.DataFrame({"k": ["x", "y"], "v": [1.0, 0.0]}), False),
])
def test_answers_compared(a, b, same):
    assert scale_questions.same(a, b) is same


def _result(commit, ratio, seconds, at="2026-12-06T08:00:00+00:00", rows=1_000_000):
    return {"commit": commit, "at": at, "rows": rows,
            "questions": {"spend_per_day": {"ratio": ratio, "rollup_seconds": seconds}}}


@pytest.mark.parametrize(("ratio", "seconds", "flagged"), [
    (0.50, 0.20, False),  # as before
    (0.59, 0.30, False),  # 1.18×: under the gate
    (0.65, 0.30, True),  # 1.3× and 0.1 s slower
    (0.65, 0.22, False),  # 1.3× but 0.02 s slower: noise
    (0.40, 0.10, False),  # faster
])
def test_the_gate_flags_a_ratio_grown_more_than_1_2_times(ratio, seconds, flagged):
    before = _result("aaa", 0.50, 0.20)
    found = scale_questions.regressions(_result("bbb", ratio, seconds), before)
    assert bool(found) is flagged
    if flagged:
        assert found == [f"spend_per_day: {ratio:.2f}× bare DuckDB, was 0.50× at aaa (gate 1.2×)"]
    assert scale_questions.regressions(_result("bbb", ratio, seconds), None) == []


def test_the_previous_result_is_the_latest_of_the_same_size_from_another_commit(tmp_path):
    kept = [_result("a1", 1, 1, at="2026-12-05T10:00:00+00:00"), _result("b2", 1, 1, at="2026-12-06T09:00:00+00:00"),
            _result("c3", 1, 1, at="2026-12-06T10:00:00+00:00", rows=10_000_000),
            _result("d4", 1, 1, at="2026-12-06T11:00:00+00:00")]
    for result in kept:
        (tmp_path / f"{result['commit']}.json").write_text(json.dumps(result))
    (tmp_path / "broken.json").write_text("{not json")
    assert scale_questions.previous(1_000_000, tmp_path, this="e5")["commit"] == "d4"
    assert scale_questions.previous(1_000_000, tmp_path, this="d4")["commit"] == "b2"
    assert scale_questions.previous(10_000_000, tmp_path, this="e5")["commit"] == "c3"
    assert scale_questions.previous(100, tmp_path) is None
