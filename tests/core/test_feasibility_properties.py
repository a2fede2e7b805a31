"""Monotonicity of memory per GPU and of wall-clock against the batch limit (hypothesis)."""

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dashboard.core import layout, memory
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario

POW2 = st.sampled_from([1, 2, 4, 8])


def memory_gb(total, active, tp, pp, ep, gpus, zero, seq, micro, hidden, heads, layers, recompute):
    local = memory.params_per_gpu(total, active, tp, pp, ep)
    states = memory.model_states_gb(local, total / gpus, zero)
    layer = memory.layer_activation_bytes(seq, micro, hidden, heads, tp, recompute)
    return float(sum(states) + memory.activation_bytes(layer, layers, pp) / memory.GB)


plans = st.fixed_dictionaries({
    "total": st.floats(1e8, 2e12), "active_share": st.floats(0.05, 1.0), "tp": POW2, "pp": POW2,
    "ep": POW2, "dp": st.sampled_from([1, 2, 8, 64, 512]), "zero": st.integers(0, 3),
    "seq": st.sampled_from([512, 2048, 8192]), "micro": st.integers(1, 8),
    "hidden": st.sampled_from([1024, 4096, 16384]), "heads": st.sampled_from([8, 32, 128]),
    "layers_per_stage": st.integers(1, 16), "recompute": st.integers(0, 2),
})


def _memory(plan, **changes):
    plan = {**plan, **changes}
    return memory_gb(plan["total"], plan["total"] * plan["active_share"], plan["tp"], plan["pp"], plan["ep"],
                     plan["tp"] * plan["pp"] * plan["dp"], plan["zero"], plan["seq"], plan["micro"], plan["hidden"],
                     plan["heads"], plan["layers_per_stage"] * 16, plan["recompute"])


@settings(max_examples=300, deadline=None)
@given(plans)
def test_more_memory_saving_never_raises_memory_per_gpu(plan):
    assume(plan["dp"] % plan["ep"] == 0 and (plan["dp"] // 2) % plan["ep"] == 0)  # data parallel a multiple of EP
    # Same GPUs (TP · PP · DP) and layers a multiple of 16, so every PP here (up to 16) divides the layers evenly.
    here = _memory(plan)
    if plan["zero"] < 3:
        assert _memory(plan, zero=plan["zero"] + 1) <= here * (1 + 1e-12)
    if plan["recompute"] < 2:
        assert _memory(plan, recompute=plan["recompute"] + 1) <= here * (1 + 1e-12)
    if plan["dp"] % 2 == 0:
        assert _memory(plan, tp=plan["tp"] * 2, dp=plan["dp"] // 2) <= here * (1 + 1e-12)
        assert _memory(plan, pp=plan["pp"] * 2, dp=plan["dp"] // 2) <= here * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(st.floats(1e8, 1e11), st.sampled_from([2**18, 2**20, 2**22]), st.integers(1, 8), st.floats(1.0, 8.0),
       st.floats(0.0, 20.0))
def test_more_gpus_never_lower_wall_clock_below_the_batch_limit(params, batch_tokens, micro, factor, failures):
    base = dict(total_params=params, tokens=params * 20, seq_len=2048, global_batch_tokens=batch_tokens,
                tensor_parallel=1, pipeline_parallel=1, micro_batch_size=micro,
                node_failures_per_1000_node_days=failures)
    useful = scenario_outputs(Scenario(**base, gpu_count=8))["max_useful_gpus"]
    assume(useful >= 8)
    at_limit = scenario_outputs(Scenario(**base, gpu_count=int(useful)))
    beyond = scenario_outputs(Scenario(**base, gpu_count=int(useful * factor)))
    assert beyond["wall_clock_days"] >= at_limit["wall_clock_days"] * (1 - 1e-12)
    assert beyond["gpu_hours_total"] >= at_limit["gpu_hours_total"] * (1 - 1e-12)


@settings(max_examples=200, deadline=None)
@given(st.floats(1e8, 2e12), st.sampled_from([8, 64, 512, 4096, 16384]), st.sampled_from(["H100", "A100", "B200"]),
       st.integers(0, 2))
def test_a_proposed_layout_that_fits_really_fits(params, gpus, gpu, recompute):
    scenario = Scenario(total_params=params, gpu_count=gpus, gpu_type=gpu,
                        activation_recompute=memory.RECOMPUTE_MODES[recompute])
    result = scenario_outputs(scenario)
    lay = result["layout"]
    assert lay["tensor_parallel"] * lay["pipeline_parallel"] * lay["data_parallel"] == gpus
    assert lay["tensor_parallel"] <= 8
    assert result["memory"]["fits"] == (result["memory"]["total_gb"] <= result["memory"]["gpu_memory_gb"])
    if result["memory"]["fits"] and lay["zero_stage"] == 1 and lay["tensor_parallel"] > 1:
        # The smallest TP: half the TP (same PP) must not fit.
        smaller = layout.resolve({**_inputs(scenario), "tensor_parallel": lay["tensor_parallel"] / 2,
                                  "pipeline_parallel": lay["pipeline_parallel"], "zero_stage": 1})
        assert not smaller["fits"][0] or lay["pipeline_parallel"] > 1


def _inputs(scenario):
    from dashboard.core.feasibility import _layout_inputs

    return _layout_inputs(scenario)


def _naive_proposal(scenario):
    """The documented order, tried one layout at a time: ZeRO 1 → 3; TP 1, 2, … within the node; then PP."""
    from dashboard.core.feasibility import _memory_at, gpu_memory_gb_of

    limit, gpus = gpu_memory_gb_of(scenario), scenario.gpu_count
    tps = [t for t in (1, 2, 4, 8) if t <= scenario.gpus_per_node and gpus % t == 0]
    for zero in (1, 2, 3):
        for tp in tps:
            if _memory_at(scenario, tp, 1, zero) <= limit:
                return tp, 1, zero
        pp = 2
        while pp <= scenario.n_layers and gpus % (tps[-1] * pp) == 0:
            if _memory_at(scenario, tps[-1], pp, zero) <= limit:
                return tps[-1], pp, zero
            pp *= 2
    return None


@settings(max_examples=150, deadline=None)
@given(st.floats(1e8, 2e12), st.sampled_from([1, 8, 24, 64, 384, 512, 4096, 16384]),
       st.sampled_from(["H100", "A100", "B200"]), st.integers(0, 2), st.sampled_from([2048, 4096, 8192]),
       st.integers(1, 128))
def test_proposal_matches_trying_every_layout_in_order(params, gpus, gpu, recompute, seq, layers):
    scenario = Scenario(total_params=params, gpu_count=gpus, gpu_type=gpu, seq_len=seq, n_layers=layers,
                        activation_recompute=memory.RECOMPUTE_MODES[recompute])
    result = scenario_outputs(scenario)
    naive = _naive_proposal(scenario)
    lay = result["layout"]
    if naive is None:
        assert not result["feasible"]
    else:
        assert result["feasible"]
        assert (lay["tensor_parallel"], lay["pipeline_parallel"], lay["zero_stage"]) == naive
