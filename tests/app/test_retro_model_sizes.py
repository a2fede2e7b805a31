"""AppTest: the Retrospective measures MFU at each job's model size as the uploaded W&B export logs it (no
--params), the compared plan's size for the jobs that log none, and says which jobs those are (issue 50)."""

import re

from sized_runs import PLAN_PARAMS, UNSIZED, write_export

from dashboard.core import catalogue


def _measured_table(at):
    return next(frame.value for frame in at.dataframe if "next_plan" in frame.value.columns)


def _plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


def test_the_page_measures_each_job_at_its_own_size(app, tmp_path):
    """Three jobs log 7e9 (MFU 0.30, 0.42, 0.38), two log none and ran at 0.40 and 0.41 at the sample plan's 13e9:
    the page shows the median, 40 %, and names the two jobs that took the plan's size."""
    path = write_export(tmp_path / "runs.csv", unsized=UNSIZED)
    at = app.run()
    at.switch_page("app_pages/retro.py")
    at.query_params["retro.join"] = "project"
    at.run()
    at.file_uploader(key="retro.runs_upload").set_value((path.name, path.read_bytes(), "text/csv")).run()
    at.session_state["retro.view"] = "Plan vs actual"
    at.run()
    jobs = [f"job{number}" for number in range(5)] + [f"unsized{number}" for number in range(len(UNSIZED))]
    at.multiselect(key="retro.main_runs.project").set_value(jobs).run()  # the file's pretrain jobs, not the bill's
    assert not at.exception, at.exception
    assert at.session_state["retro.plan"].startswith("Sample organisation")  # its 13B model: PLAN_PARAMS
    assert PLAN_PARAMS == 13e9
    row = _measured_table(at).set_index("input").loc[catalogue.label("mfu")]
    assert row["measured"] == catalogue.text("mfu", 0.40), row["caveat"]
    assert "(3 of them as the run export logs them)" in row["basis"]
    assert "2 jobs (unsized0, unsized1) log no model size: measured at the plan's 1.3e+10 parameters" in row["caveat"]
    captions = " ".join(_plain(caption.value) for caption in at.caption)
    assert "MFU uses each job's model size as the run export logs it" in captions
