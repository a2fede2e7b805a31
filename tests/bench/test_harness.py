"""The benchmark engine on a fake catalogue: a gated miss fails the run, an ungated miss or a skip does not, and
results.json and the docs say what happened. Nothing is timed."""

import json

import pytest

from bench.harness import Benchmark, Measurement, Skipped, main, run


def _entry(name: str, value: float, gate: bool, target: float = 1.5) -> Benchmark:
    return Benchmark(name=name, unit="ms", measures=f"{name} measures.", reference=f"{name}'s reference",
                     target=target, gate=gate, measure=lambda: Measurement(value, 1.0, "fixed figures"))


def _skipped() -> Measurement:
    raise Skipped("no Chromium here")


def _run(tmp_path, catalogue, names=()) -> tuple[int, dict, str]:
    code = run(catalogue, names, tmp_path / "results.json", tmp_path / "benchmarks.md")
    return code, json.loads((tmp_path / "results.json").read_text()), (tmp_path / "benchmarks.md").read_text()


def test_a_gated_miss_fails_the_run_and_is_recorded_as_not_met(tmp_path, capsys):
    code, data, docs = _run(tmp_path, [_entry("fast", 1.0, gate=True), _entry("slow", 3.0, gate=True)])
    assert code == 1
    slow = data["benchmarks"]["slow"]
    assert slow["met"] is False and slow["ratio"] == 3.0 and slow["value"] == 3.0 and slow["reference"] == 1.0
    assert {"unit", "target", "gate", "timestamp"} <= set(slow) and slow["gate"] is True
    assert data["benchmarks"]["fast"]["met"] is True
    assert {"python", "platform", "updated"} <= set(data)
    assert "| slow " in capsys.readouterr().out and "MISS" in docs
    assert "## `slow`" in docs and "slow measures. Compared with slow's reference." in docs


def test_an_ungated_miss_and_a_skip_pass_the_run(tmp_path):
    skipped = Benchmark(name="browser", unit="ms", measures="m", reference="r", target=1.0, gate=True,
                        measure=_skipped)
    code, data, _ = _run(tmp_path, [_entry("noisy", 3.0, gate=False), skipped])
    assert code == 0
    assert data["benchmarks"]["noisy"]["met"] is False
    browser = data["benchmarks"]["browser"]
    assert browser["met"] is None and browser["skipped"] == "no Chromium here"


def test_a_broken_benchmark_fails_the_run_and_the_others_still_run(tmp_path):
    broken = Benchmark(name="broken", unit="s", measures="m", reference="r", target=1.0, gate=False,
                       measure=lambda: 1 / 0)
    code, data, _ = _run(tmp_path, [broken, _entry("after", 1.0, gate=True)])
    assert code == 1
    assert data["benchmarks"]["broken"]["error"].startswith("ZeroDivisionError")
    assert data["benchmarks"]["after"]["met"] is True


def test_a_subset_run_keeps_the_other_results(tmp_path):
    catalogue = [_entry("first", 1.0, gate=True), _entry("second", 1.2, gate=True)]
    _run(tmp_path, catalogue)
    code, data, docs = _run(tmp_path, [_entry("first", 3.0, gate=False), catalogue[1]], names=["first"])
    assert code == 0
    assert data["benchmarks"]["first"]["ratio"] == 3.0 and data["benchmarks"]["second"]["ratio"] == 1.2
    assert "| second " in docs


def test_an_unknown_name_is_refused(capsys):
    with pytest.raises(SystemExit):
        main(["nothing"], [_entry("first", 1.0, gate=True)])
    assert "no benchmark named nothing" in capsys.readouterr().err


def test_the_catalogue_names_are_unique_and_every_entry_says_what_it_compares_with():
    from bench.catalogue import CATALOGUE

    assert len({b.name for b in CATALOGUE}) == len(CATALOGUE)
    assert all(b.measures and b.reference and b.unit and b.target > 0 for b in CATALOGUE)
