"""AppTest: "How good were our plans?" On the Retrospective's Plan vs actual tab, with the bundled sample and a plan
saved in the store, *Keep this comparison* keeps the outcome; the tab and the Compare page then say how close the
last plans came ("Our last plan was off by …"). A plan that is not saved cannot be kept, and keeping the same
plan and dates again replaces the record. A plan far from the bill's size is flagged and kept only when confirmed;
a kept comparison can be removed, and the removal is audited."""

from __future__ import annotations

from pathlib import Path

import pytest
from shown_text import shown

from dashboard.core.plan_accuracy import accuracy, accuracy_sentence
from dashboard.core.presets import presets
from dashboard.store.scenario_store import ScenarioStore

SAMPLE_PLAN = next(name for name in presets() if name.startswith("Sample organisation"))
SAVED = "Q2 plan (v2) #1 & 50%: kept"  # punctuation the name rules allow, shown as text
KEEP = "Keep this comparison"


def _save(store_url):
    plan = presets()[SAMPLE_PLAN].model_copy(update={"name": SAVED})
    with ScenarioStore(store_url) as store:
        store.save(plan.name, plan)


def _outcomes(store_url):
    with ScenarioStore(store_url) as store:
        return store.outcomes()


def _plan_vs_actual(app, plan_choice):
    at = app.run()
    at.switch_page("app_pages/retro.py").run()
    at.session_state["retro.view"] = "Plan vs actual"
    at.run()
    at.selectbox(key="retro.plan").set_value(plan_choice).run()
    assert not at.exception, at.exception
    return at


def _sentences(at) -> list[str]:
    return [shown(block.value) for block in at.markdown if block.value.startswith(("Our last", "No plan has"))]


def test_keeping_a_saved_plans_comparison_shows_on_the_tab_and_on_compare(app, store_url):
    _save(store_url)
    at = _plan_vs_actual(app, f"Saved: {SAVED}")
    assert _sentences(at) == [accuracy_sentence(accuracy([]))]  # nothing kept yet
    button = at.button(key="retro.keep_outcome")
    assert button.label == KEEP and not button.disabled
    button.click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    (kept,) = _outcomes(store_url)
    o = kept.outcome
    assert o.scenario_name == SAVED and o.currency == "USD" and kept.recorded_by == "(local user)"
    dates = at.slider(key="retro.dates").value
    assert (o.period_start, o.period_end) == (dates[0], dates[1])
    success = shown(at.success[0].value)
    assert success.startswith(f"Kept: **{SAVED}** against the actuals of {o.period_start:%Y-%m-%d} – "
                              f"{o.period_end:%Y-%m-%d} (GPU-hours ")
    sentence = accuracy_sentence(accuracy([o]))
    assert sentence.startswith("Our last plan was off by ") and " on cost." in sentence
    assert _sentences(at) == [sentence]
    # the groups add up to the gap the tab shows
    assert o.price_gpu_hours + o.quantity_gpu_hours + o.efficiency_gpu_hours == pytest.approx(
        o.actual_gpu_hours - o.plan_gpu_hours)

    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert any(header.value == "How good were our plans?" for header in at.subheader)
    assert _sentences(at) == [sentence]
    table = next(frame.value for frame in at.dataframe if "Plan" in frame.value.columns
                 and "GPU-h error" in frame.value.columns)
    assert table["Plan"].tolist() == [SAVED]
    assert table["Period (UTC)"].tolist() == [f"{o.period_start:%Y-%m-%d} – {o.period_end:%Y-%m-%d}"]


def test_keeping_the_same_plan_and_dates_again_replaces_the_record(app, store_url):
    _save(store_url)
    at = _plan_vs_actual(app, f"Saved: {SAVED}")
    at.button(key="retro.keep_outcome").click().run()
    first = _outcomes(store_url)[0].recorded_at
    at.button(key="retro.keep_outcome").click().run()
    assert not at.exception and not at.error
    (kept,) = _outcomes(store_url)
    assert kept.recorded_at >= first
    assert _sentences(at)[0].startswith("Our last plan was off by ")


def test_a_plan_not_saved_in_the_store_cannot_be_kept(app):
    at = _plan_vs_actual(app, SAMPLE_PLAN)
    button = at.button(key="retro.keep_outcome")
    assert button.disabled and "Only a plan saved in the scenario store can be kept" in button.help


def test_the_compare_page_says_when_nothing_was_kept(app):
    at = app.run()
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception
    assert _sentences(at) == [accuracy_sentence(accuracy([]))]


def test_a_bill_in_another_currency_is_kept_in_gpu_hours_and_left_out_of_cost(app, store_url):
    _save(store_url)
    nok = Path(__file__).resolve().parents[1] / "data" / "currency" / "koku_cur_nok.csv"
    at = app.run()
    at.switch_page("app_pages/retro.py")
    at.query_params["retro.runs"] = "(none)"
    at.run()
    at.file_uploader(key="retro.billing_upload").set_value((nok.name, nok.read_bytes(), "text/csv")).run()
    at.session_state["retro.view"] = "Plan vs actual"
    at.run()
    at.selectbox(key="retro.plan").set_value(f"Saved: {SAVED}").run()
    at.button(key="retro.keep_outcome").click().run()
    # no GPU-hours against the 13B plan's 77.5k: flagged (the cost is not compared in NOK), kept when confirmed
    assert "The actuals have no GPU-hours against the plan's 77.5k" in " ".join(shown(b.value) for b in at.warning)
    at.button(key="retro.keep_anyway").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    (kept,) = _outcomes(store_url)
    assert kept.outcome.currency == "NOK" and kept.outcome.cost_error is None
    assert (kept.outcome.price_usd, kept.outcome.quantity_usd, kept.outcome.efficiency_usd) == (None, None, None)
    assert shown(at.success[0].value).endswith(", cost not compared).")
    (sentence,) = _sentences(at)
    assert sentence.startswith("Our last plan was off by ")
    assert " on GPU-hours; cost is not compared (1 billed in another currency)." in sentence


def _with_bill(app, path: Path, plan_choice: str):
    at = app.run()
    at.switch_page("app_pages/retro.py")
    at.query_params["retro.runs"] = "(none)"
    at.run()
    at.file_uploader(key="retro.billing_upload").set_value((path.name, path.read_bytes(), "text/csv")).run()
    at.session_state["retro.view"] = "Plan vs actual"
    at.run()
    at.selectbox(key="retro.plan").set_value(plan_choice).run()
    assert not at.exception, at.exception
    return at


SMALL_BILL = Path(__file__).resolve().parents[1] / "data" / "ingest" / "gcp_small.csv"  # $14.46, 9 GPU-hours


def test_a_plan_far_from_the_bill_is_flagged_and_kept_only_when_confirmed(app, store_url):
    """The sample 13B plan ($597k, 77.5k GPU-h) against a $14.46 bill of 9 GPU-hours ($11.4 of GPU compute): both
    flagged, nothing kept until *Keep it anyway*."""
    _save(store_url)
    at = _with_bill(app, SMALL_BILL, f"Saved: {SAVED}")
    at.button(key="retro.keep_outcome").click().run()
    assert not at.exception
    assert _outcomes(store_url) == []
    warning = " ".join(shown(box.value) for box in at.warning)
    assert "Look before keeping this comparison" in warning
    assert "The plan's cost ($597k) is" in warning and "more than the actuals' ($11.4)" in warning  # GPU rows
    assert "The plan's GPU-hours (77.5k) is" in warning
    at.button(key="retro.keep_cancel").click().run()
    assert _outcomes(store_url) == [] and not any("Look before" in box.value for box in at.warning)
    at.button(key="retro.keep_outcome").click().run()
    at.button(key="retro.keep_anyway").click().run()
    assert not at.exception
    (kept,) = _outcomes(store_url)
    assert kept.outcome.actual_usd <= 14.46  # the GPU compute of the $14.46 bill
    assert _sentences(at)[0].startswith("Our last plan was off by ")
    assert "within" not in _sentences(at)[0]


def test_a_kept_comparison_can_be_removed_and_the_removal_is_audited(app, store_url):
    _save(store_url)
    at = _plan_vs_actual(app, f"Saved: {SAVED}")
    at.button(key="retro.keep_outcome").click().run()
    assert len(_outcomes(store_url)) == 1
    at.button(key="retro.remove_outcome").click().run()
    assert not at.exception and not at.error
    assert _outcomes(store_url) == []
    assert _sentences(at) == [accuracy_sentence(accuracy([]))]
    with ScenarioStore(store_url) as store:
        entry = store.audit_trail()[-1]
    assert (entry.action, entry.name) == ("remove outcome", SAVED)
