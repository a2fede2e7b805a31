"""The memory model against published figures (dashboard.core.memory_validation): Korthikanti et al. 2022 Fig. 1,
published layouts that ran (and plans that cannot), and the measured runs of ../shared/reference/measured-runs.csv."""

from __future__ import annotations

import warnings

import pytest
from measured_runs import COLUMNS, MEASURED_RUNS

from dashboard.core import memory, memory_validation
from dashboard.core.engine import scenario_outputs


@pytest.mark.parametrize("row", memory_validation.figure_1_rows(), ids=lambda row: f"{row['model']}-{row['quantity']}")
def test_korthikanti_figure_1_within_its_tolerance(row):
    # Targets: parameters + optimizer within 2 %, activations within 5 % (GiB per GPU, 8 × A100-80GB TP).
    assert abs(row["error"]) <= row["tolerance"], row


@pytest.mark.parametrize("case", memory_validation.LAYOUTS, ids=lambda case: case[0])
def test_published_layouts_fit_and_impossible_plans_do_not(case):
    name, keys, _, ran = case
    result = scenario_outputs(memory_validation.layout_scenario(keys))
    assert result["feasible"] is ran, (name, result["memory"])
    if ran:
        assert memory_validation.layout_scenario(keys).activation_recompute != "full"


@pytest.mark.parametrize("row", MEASURED_RUNS, ids=lambda row: row["row_id"])
def test_each_complete_measured_run_is_accepted_and_fits(row):
    scenario = memory_validation.run_scenario(row)
    assert scenario is not None
    result = scenario_outputs(scenario)
    assert result["feasible"], (row["row_id"], result["memory"], result["feasibility_problems"])
    assert result["layout"]["tensor_parallel"] == int(row["tp"])
    assert result["layout"]["pipeline_parallel"] == int(row["pp"])


def _shared_rows():
    if not memory_validation.MEASURED_RUNS_CSV.exists():
        warnings.warn(f"{memory_validation.MEASURED_RUNS_CSV} not found: the measured-runs file is not checked, only "
                      "the rows copied into this test", stacklevel=2)
        pytest.skip(f"SKIPPED LOUDLY: {memory_validation.MEASURED_RUNS_CSV} is missing (../shared not mounted)")
    return memory_validation.measured_rows()


def test_every_complete_row_of_the_shared_file_is_accepted_and_fits():
    rows = _shared_rows()
    results = memory_validation.measured_run_results(rows)
    assert results and all(result["accepted"] and result["fits"] for result in results), results
    # The copy above is exactly the file's complete rows.
    complete = [row for row in rows if memory_validation.run_scenario(row) is not None]
    assert [{key: row[key] for key in COLUMNS} for row in complete] == MEASURED_RUNS


def test_the_validation_page_is_written_by_the_script():
    _shared_rows()
    assert memory_validation.main(["--check"]) == 0, "run: python -m dashboard.core.memory_validation"


def test_the_memory_bar_note_is_computed():
    note = memory.VALIDATION_NOTE
    assert note == memory_validation.validation_note()
    assert note.startswith("Memory model checked against Korthikanti et al. 2022 (model states within 1.5 %")
    assert "5 of 5 published layouts that ran fit" in note


def test_a_row_with_a_missing_key_is_not_complete():
    assert memory_validation.run_scenario(MEASURED_RUNS[0] | {"micro_batch": ""}) is None
    assert memory_validation.run_scenario(MEASURED_RUNS[0] | {"gpu_type": "TPU v4"}) is None
