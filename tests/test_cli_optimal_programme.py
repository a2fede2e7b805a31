"""`optimal` at programme level: the final run a budget buys shrinks by the programme's other stages."""

import json

import pytest

from dashboard.cli import main

LADDER_AND_ABLATIONS = 'programme=[{"kind":"scaling_ladder"},{"kind":"ablations","runs":20,"compute_fraction":0.01}]'


def _answer(capsys, *sets: str) -> dict:
    args = ["optimal", "--budget-usd", "1000000", "--json"]
    for item in ("experiment_overhead=0", *sets):
        args += ["--set", item]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def test_a_programme_leaves_less_of_the_budget_to_the_final_run(capsys):
    single = _answer(capsys)
    programme = _answer(capsys, LADDER_AND_ABLATIONS)
    assert programme["total_params"] < single["total_params"]
    # The single run is the main run and its evaluation and debugging shares: 1.1 main runs. The programme adds 20
    # ablations at 1 % and a ladder at 10⁻², 10⁻²·⁵, … 10⁻⁴ of the main run's compute, each with 10 % repeats.
    ratio = programme["final_run_share"] / single["final_run_share"]
    stages = 1.1 * (20 * 0.01 + 0.01 * (1 + 10**-0.5 + 0.1 + 10**-1.5 + 0.01))
    expected = 1.1 / (1.1 + stages)
    assert abs(ratio - expected) < 0.05


def test_a_bad_stage_is_refused_with_the_key_named(capsys):
    assert main(["optimal", "--budget-usd", "1e6", "--set", 'programme=[{"kind":"ablations","runs":0}]']) == 2
    assert "programme stage 1 (ablations) runs = 0 is out of range" in capsys.readouterr().err


PROBE = json.dumps([{"kind": "scaling_ladder", "runs": 100}] * 20, separators=(",", ":"))


@pytest.mark.parametrize("command", [["optimal", "--budget-usd", "1e6"], ["estimate"]], ids=["optimal", "estimate"])
def test_twenty_ladders_of_a_hundred_runs_are_refused_before_any_pricing(capsys, monkeypatch, command):
    from dashboard.core import engine

    def never(*args, **kwargs):
        raise AssertionError("priced")

    monkeypatch.setattr(engine, "cost_arrays", never)
    assert main([*command, "--set", f"programme={PROBE}"]) == 2
    assert ("20 × 'Scaling ladder' of 100 runs = 2,000 priced runs; at most 200 a programme "
            "(PLANNER_PROGRAMME_MAX_RUNS)") in capsys.readouterr().err
