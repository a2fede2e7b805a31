"""The Plan page's measured inputs: a link's `measured.` parameters mark the inputs that hold their measured value
in the sidebar, survive into the page's own link, and an edited input loses its line."""

import re

import pytest

from dashboard.core import catalogue, provenance
from dashboard.core.provenance import Provenance
from dashboard.ui.plan_controls import mix_handles, mix_shares

QUARTER = {"measured.period": "2025-04-01_2025-06-30"}
# 0.348 = the median of 19 main-run jobs, observed 31.2-35.6 %; rates over 1,200 node-days.
LINK = {"mfu": "0.348", "node_failures_per_1000_node_days": "2.5", "measured.mfu": "0.348_0.312_0.356_19__0",
        "measured.node_failures_per_1000_node_days": "2.5_0.86_5.7_3_1200_1", **QUARTER}


def _plain(text: str) -> str:
    """Markdown as read: escapes and word joiners (`dashboard.safe_text`) removed."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


def _measured_block(at) -> str:
    texts = [_plain(m.value) for m in at.sidebar.markdown if "Measured from" in m.value]
    return texts[0] if texts else ""


def _open(app, link):
    for name, value in link.items():
        app.query_params[name] = value
    return app.run()


def test_a_link_marks_each_measured_input_with_its_provenance(app):
    at = _open(app, LINK)
    assert not at.exception
    block = _measured_block(at)
    assert "Measured from the imports of 2025-04-01 to 2025-06-30" in block
    assert "MFU 34.8 % — measured over 19 jobs, observed 31.2 %–35.6 %" in block
    assert "the throughput model predicts" in block  # both MFUs are shown
    assert "3 interruptions over 1.2k node-days" in block
    assert block.count(provenance.THIN.split(":")[0]) == 1  # the rate is thin, the MFU is not
    for name, value in LINK.items():  # the page's own link carries them on
        assert at.query_params[name] == value


def test_an_input_that_no_longer_holds_its_value_has_no_line(app):
    at = _open(app, {**LINK, "mfu": "0.4"})  # the plan's MFU is not the measured one
    block = _measured_block(at)
    assert "MFU" not in block.replace("Measured from", "") and "node-days" in block
    assert "measured.mfu" not in at.query_params


def test_a_preset_forgets_the_measured_inputs(app):
    at = _open(app, LINK)
    preset = at.sidebar.selectbox(key="plan.preset")
    preset.set_value(preset.options[0]).run()
    assert not at.exception
    assert _measured_block(at) == ""
    assert not any(name.startswith(provenance.PREFIX) for name in at.query_params)


def test_a_bad_measured_parameter_is_named_and_dropped(app):
    at = _open(app, {**LINK, "measured.mfu": "0.348_<b>x</b>_1_1__0"})
    assert not at.exception
    warnings = " ".join(box.value for box in at.warning)
    assert "Ignored measured.mfu" in _plain(warnings)
    assert "<b>" not in warnings
    assert "MFU 34" not in _measured_block(at)


@pytest.mark.parametrize("shares", [(0.838, 0.0343), (0.8, 0.1), (0.5, 0.25), (0.0, 0.0343), (0.333, 0.667)])
def test_the_purchase_mix_control_holds_measured_shares_exactly(shares):
    """Three-figure shares read back from the control's percent handles unchanged (0.0343, not
    0.034300000000000004), so a measured plan is not marked edited on arrival."""
    assert mix_shares(mix_handles(*shares)) == shares


def test_the_lines_are_the_core_s():
    assert provenance.line(Provenance("mfu", 0.348, 0.312, 0.356, 19)) == (
        "MFU 34.8 % — measured over 19 jobs, observed 31.2 %–35.6 %")


def _retro_with_wandb(app):
    """The Retrospective's Plan vs actual on the bundled bill with the W&B runs (they count tokens) joined on
    project."""
    at = app.run()
    at.switch_page("app_pages/retro.py")
    for name, value in {"retro.runs": "wandb_sample.csv", "retro.join": "project",
                        "retro.view": "Plan vs actual"}.items():
        at.query_params[name] = value
    return at.run()


def test_the_retrospective_opens_the_next_plan_with_its_measured_inputs(app):
    """The bundled bill with the W&B runs joined on project and the sample organisation's 13B plan: the button
    opens the Plan page with the measured MFU (16 main-run jobs, the median of 6·13e9·tokens / (GPU-h · 989 TFLOP/s ·
    3600): 0.340-0.356 as the generator draws it at 85-89 % of the plan's 40 %), the plan pinned as the baseline."""
    at = _retro_with_wandb(app)
    assert not at.exception
    compared = at.session_state["retro.plan"]
    at.checkbox(key="retro.carry_overrun").uncheck().run()  # the measured inputs alone (the overrun: below)
    next(b for b in at.button if b.label == "Plan the next run from this quarter").click().run()
    assert not at.exception
    plan = at.session_state["plan.scenario"]
    assert 0.340 <= plan.mfu <= 0.356
    assert plan.name.endswith("(calibrated)")
    assert at.session_state["plan.baseline"].name == compared
    block = _measured_block(at)
    assert "Measured from the imports of 2025-04-01 to 2025-06-30" in block
    assert re.search(r"MFU 3[45](\.\d)? % — measured over 16 jobs, observed", block)
    assert at.query_params["measured.period"] == "2025-04-01_2025-06-30"
    assert at.query_params["measured.mfu"].startswith(f"{plan.mfu:.6g}_")
    assert at.query_params["base.name"] == compared


def test_the_rows_behind_the_measured_mfu(app):
    """The W&B sample's 16 main-run jobs with tokens that did not fail are the rows behind the MFU."""
    at = _retro_with_wandb(app)
    at.selectbox(key="retro.calibration_rows").set_value("mfu").run()
    assert not at.exception
    rows = next(frame.value for frame in at.dataframe if "tokens" in frame.value.columns)
    assert len(rows) == 16 and (rows["tokens"] > 0).all()
    assert set(rows["run_state"]) == {"COMPLETED"}


def test_a_thin_input_is_applied_only_when_ticked(app):
    """The W&B sample's node failures are thin (7 over about 511 node-days, under the 1,000 a rate needs): the
    next plan keeps the compared plan's rate unless its box is ticked; spot interruptions and debugging have no
    observations and never reach the plan."""
    at = _retro_with_wandb(app)
    assert not at.exception
    table = next(frame.value for frame in at.dataframe if "next_plan" in frame.value.columns)
    uses = dict(zip(table["input"], table["next_plan"], strict=True))
    assert uses["Debugging (× main run)"] == uses["Spot interruptions per 1,000 node-days"] == "plan's value stays"
    assert uses["Node failures per 1,000 node-days"] == "only if ticked below"
    assert uses["MFU"] == "applied"
    box = at.checkbox(key="retro.use_thin.node_failures_per_1000_node_days")
    assert box.value is False
    next(b for b in at.button if b.label == "Plan the next run from this quarter").click().run()
    plan, baseline = at.session_state["plan.scenario"], at.session_state["plan.baseline"]
    assert plan.node_failures_per_1000_node_days == baseline.node_failures_per_1000_node_days
    assert plan.debug_overhead == baseline.debug_overhead
    assert "Debugging (× main run)" not in _measured_block(at) and "0 runs" not in _measured_block(at)


def test_a_ticked_thin_input_goes_into_the_next_plan(app):
    at = _retro_with_wandb(app)
    at.checkbox(key="retro.use_thin.node_failures_per_1000_node_days").check().run()
    next(b for b in at.button if b.label == "Plan the next run from this quarter").click().run()
    assert not at.exception
    # 7 node failures over about 511 node-days: 13.7 per 1,000
    assert 13.0 <= at.session_state["plan.scenario"].node_failures_per_1000_node_days <= 14.5
    assert "Node failures per 1,000 node-days" in _measured_block(at)


def test_the_next_plan_carries_last_quarter_s_overrun(app):
    """The bundled quarter against the sample 13B plan: each part of Plan vs actual is listed with how the next plan
    carries it, and the Plan page opens with a banner naming how far the last plan missed ($597k planned, $870k
    actual: 45.7 % over) and the parts it carries, the next plan costing at least the actual."""
    at = _retro_with_wandb(app)
    assert not at.exception
    assert at.checkbox(key="retro.carry_overrun").value is True
    listed = " ".join(_plain(m.value) for m in at.markdown)
    assert "cut the commitment" in listed and "the next plan's work is the work done" in listed
    next(b for b in at.button if b.label == "Plan the next run from this quarter").click().run()
    assert not at.exception
    banner = " ".join(_plain(box.value) for box in at.info)
    assert "The last plan missed by 45.7 %" in banner
    for part in ("scale", "efficiency", "failures and restarts", "experiments", "idle / unattributed", "price"):
        assert part in banner
    plan = at.session_state["plan.scenario"]
    assert plan.tokens > 1e12  # the work done, not the work planned


def test_the_overrun_can_be_left_out(app):
    at = _retro_with_wandb(app)
    at.checkbox(key="retro.carry_overrun").uncheck().run()
    next(b for b in at.button if b.label == "Plan the next run from this quarter").click().run()
    assert not at.exception
    assert not any("The last plan missed" in box.value for box in at.info)
    assert at.session_state["plan.scenario"].tokens == at.session_state["plan.baseline"].tokens


@pytest.mark.parametrize(("mfu", "grade"), [("0.348", "measured"), ("0.4", "entered")])
def test_the_mfu_s_grade_under_the_tiles_says_measured_while_the_plan_holds_it(app, mfu, grade):
    at = _open(app, {**LINK, "mfu": mfu})
    assert not at.exception
    captions = [_plain(c.value) for c in at.main.caption if "Evidence" in c.value]
    assert len(captions) == 1
    assert captions[0].startswith(f"MFU {catalogue.text('mfu_used', float(mfu))} {grade}; the layout predicts ")
    assert f"GPU-hours, wall-clock: {grade} MFU" in captions[0]
