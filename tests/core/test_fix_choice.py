"""The fixes the "Can it run?" panel offers: every one makes the plan run within its batch and a sane count of GPUs;
the rest are only considered, each with why."""

import pytest

from dashboard.core import fix_choice
from dashboard.core.engine import scenario_outputs
from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario, scenario_from_dict

# Plans that do not fit: every preset with eager attention (its s × s scores), and hand cases.
# 70B on 64 H100 with nothing sharded: 18 B × 70e9 = 1,173 GB of model states per GPU, against 80.
STUCK = Scenario(total_params=70e9, gpu_count=64, tensor_parallel=1, pipeline_parallel=1, zero_stage=0)
# 70B on 16 GPUs with a 16-sequence batch: more GPUs fit, and 32 still have a sequence each.
SMALL_BATCH = Scenario(total_params=70e9, gpu_count=16, global_batch_tokens=4096 * 16, micro_batch_size=1)
# 70B on 64 GPUs, PP 2 and a 4-sequence batch: deeper pipelines get fewer micro-batches than stages.
THIN_BATCH = Scenario(total_params=70e9, gpu_count=64, tensor_parallel=1, pipeline_parallel=2, zero_stage=0,
                      global_batch_tokens=4096 * 4)
CASES = {**{f"{name} (eager)": Scenario.model_validate({**plan.to_json_dict(), "attention": "eager"})
            for name, plan in presets().items()},
         "stuck": STUCK, "small batch": SMALL_BATCH, "thin batch": THIN_BATCH}


@pytest.mark.parametrize("name", list(CASES))
def test_no_fix_offered_fails_to_run(name):
    scenario = CASES[name]
    shown, considered = fix_choice.offered(scenario)
    assert [item.extra_cost_usd for item in shown] == sorted(item.extra_cost_usd for item in shown)
    for item in shown:
        fixed = scenario_from_dict(scenario.to_json_dict() | item.fix.changes)
        result = scenario_outputs(fixed)
        assert result["feasible"], item.fix.label
        assert fixed.gpu_count <= min(8 * scenario.gpu_count, 16_384)
        assert fixed.gpu_count == scenario.gpu_count or fixed.gpu_count <= result["max_useful_gpus"]
        assert item.total_usd == pytest.approx(result["cost_total_usd"])
    assert all(item.reason for item in considered)


@pytest.mark.parametrize(("gpus", "bound"), [
    (64, 512),  # 8 × 64
    (2_048, 16_384),  # 8 × 2,048 is Llama 3 405B's cluster
    (4_096, 16_384),  # 8 × 4,096 = 32,768, beyond the largest published cluster
    (65_536, 16_384),
])
def test_the_gpu_bound_is_eight_times_the_plan_or_the_largest_published_cluster(gpus, bound):
    assert fix_choice.gpu_bound(Scenario(gpu_count=gpus)) == bound


@pytest.mark.parametrize(("scenario", "offered", "considered"), [
    # Llama 3.1 405B with eager attention on its 16,384 GPUs: flash and full recompute make it run; 16 × its GPUs
    # (262,144) also would, beyond 16,384; the rest do not fit.
    (CASES["Llama 3.1 405B: 15.6T tokens on 16,384 H100 (final run only) (eager)"],
     ["fused (flash) attention", "full activation recompute"],
     {"262,144 GPUs": "262,144 GPUs is more than 8 × the plan's 16,384 or the largest published training cluster "
                      "(16,384 GPUs, Llama 3 405B), the smaller",
      "ZeRO-3": "still does not fit"}),
    # 16 → 32 GPUs: 16 sequences at TP · PP keep 32 busy.
    (SMALL_BATCH, ["32 GPUs"], {"full activation recompute": "still does not fit"}),
    # 4 sequences of one each: PP 32 gets 2 micro-batches per step, TP 8 · PP 8 gets 4; ZeRO-3 adds no stage and
    # no GPU (the plan's own batch idles 56 of its 64 GPUs, fix or not).
    (THIN_BATCH, ["ZeRO-3"],
     {"PP 32": "2 micro-batches per step for 32 pipeline stages: over half of each step idles in the bubble",
      "TP 8 · PP 8 · ZeRO-1": "4 micro-batches per step for 8 pipeline stages: over half of each step idles in the "
                              "bubble"}),
])
def test_what_is_offered_and_why_the_rest_is_not(scenario, offered, considered):
    shown, others = fix_choice.offered(scenario)
    assert [item.fix.label for item in shown] == offered
    reasons = {item.fix.label: item.reason for item in others}
    assert {label: reasons.get(label) for label in considered} == considered


@pytest.mark.parametrize(("changes", "text"), [
    ({"attention": "flash"}, "Attention kernel eager → flash"),
    ({"gpu_count": 1024}, "GPUs 512 → 1,024"),
    ({"tensor_parallel": 4, "zero_stage": 3}, "Tensor parallel proposed → 4; ZeRO stage proposed → 3"),
])
def test_a_fix_says_what_it_changes(changes, text):
    assert fix_choice.changes_text(Scenario(attention="eager"), changes) == text


def test_a_plan_that_fits_has_nothing_to_offer():
    assert fix_choice.offered(Scenario()) == ([], [])
