"""The memory model against published figures (dashboard.validation.memory_validation): Korthikanti et al. 2022 Fig. 1,
published layouts that ran (and plans that cannot), and the measured runs of ../shared/reference/measured-runs.csv."""

from __future__ import annotations

import math
import warnings

import pytest
from measured_runs import COLUMNS, MEASURED_RUNS

from dashboard.core import memory
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.validation import memory_validation


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
    assert memory_validation.main(["--check"]) == 0, "run: python -m dashboard.validation.memory_validation"


def test_the_memory_bar_note_is_computed():
    note = memory_validation.validation_note()
    assert note.startswith("Memory model checked against Korthikanti et al. 2022 (model states within 1.5 %")
    assert "5 of 5 published layouts that ran fit" in note


def test_a_row_with_a_missing_key_is_not_complete():
    assert memory_validation.run_scenario(MEASURED_RUNS[0] | {"micro_batch": ""}) is None
    assert memory_validation.run_scenario(MEASURED_RUNS[0] | {"gpu_type": "TPU v4"}) is None


# Issue 48: memory recipes. Bytes per parameter (weights, gradients, fp32 master + Adam's two moments).
@pytest.mark.parametrize(("framework", "recipe", "expected"), [
    ("megatron", {}, (2, 4, 12)),  # bf16 weights, fp32 main gradients, fp32 master + moments: Megatron's 18
    ("other", {}, (2, 4, 12)),
    ("deepspeed", {}, (2, 2, 12)),  # ZeRO's 2 + 2 + K with K = 12
    ("fsdp", {}, (4, 4, 8)),  # fp32 sharded parameters are the master; fp32 gradients and moments
    ("torchtitan", {"weight_dtype": "bf16", "master_weights": False, "optimizer_dtype": "bf16"}, (2, 4, 4)),
    ("megatron", {"weight_dtype": "fp8"}, (1, 4, 12)),  # FP8 weights with an fp32 master
    ("megatron", {"gradient_dtype": "bf16", "optimizer_dtype": "8bit"}, (2, 2, 6)),
    ("deepspeed", {"master_weights": False}, (2, 2, 8)),
])
def test_a_recipe_s_bytes_per_parameter(framework, recipe, expected):
    assert memory.recipe_bytes(framework, **recipe) == expected


@pytest.mark.parametrize("row", memory_validation.zero_figure_1_rows(), ids=lambda row: f"stage-{row['stage']}")
def test_zero_figure_1(row):
    # 7.5B on 64 GPUs, 2 + 2 + 12 bytes: 16 Ψ = 120 GB; stage 1: 4 Ψ + 12 Ψ / 64 = 31.4; stage 2: 2 Ψ + 14 Ψ / 64 =
    # 16.6; stage 3: 16 Ψ / 64 = 1.875 (printed 1.9).
    expected = {0: 120.0, 1: 31.40625, 2: 16.640625, 3: 1.875}[row["stage"]]
    assert row["predicted"] == pytest.approx(expected, rel=1e-12)
    assert abs(row["error"]) <= row["tolerance"]


def test_deepspeed_zero_1_holds_what_the_zero_paper_measures():
    # Issue 48: a DeepSpeed user was told 43.2 GB (the 18-byte recipe) where ZeRO-1 holds 31.4.
    scenario = Scenario(total_params=7.5e9, gpu_count=64, tensor_parallel=1, pipeline_parallel=1, zero_stage=1,
                        framework="deepspeed", weight_dtype="fp16", gradient_dtype="fp16")
    mem = scenario_outputs(scenario)["memory"]
    states_gb = (mem["weights_gb"] + mem["gradients_gb"] + mem["optimizer_gb"]) * memory.GB / 1e9
    assert states_gb == pytest.approx(4 * 7.5 + 12 * 7.5 / 64, rel=1e-9)


def _second_files():
    paths = (memory_validation.MEASURED_RUNS_2_CSV, memory_validation.MEASURED_MEMORY_CSV)
    missing = [path for path in paths if not path.exists()]
    if missing:
        warnings.warn(f"{missing} not found: the recipes' runs are not checked", stacklevel=2)
        pytest.skip(f"SKIPPED LOUDLY: {missing} missing (../shared not mounted)")
    return [memory_validation.measured_rows(path) for path in paths]


def test_every_run_of_both_new_files_is_accepted_and_fits_with_its_recipe():
    runs, peaks = _second_files()
    results = memory_validation.measured_run_results(runs)
    assert len(results) == 35 and all(result["accepted"] and result["fits"] for result in results), results
    measured = memory_validation.measured_memory_results(peaks)
    assert len(measured) == 24 and all(row["accepted"] and row["fits"] for row in measured), measured
    # KempnerForge's 7B on one H200 (KM-1) and 70B on 8 (KM-18) fit with its recipe, not with Megatron's 18 bytes.
    by_id = {row["row_id"]: row for row in peaks}
    for row_id in ("KM-1", "KM-18"):
        told = memory_validation.run_scenario(memory_validation.memory_row(by_id[row_id]))
        assert told is not None and scenario_outputs(told)["feasible"]
        megatron = told.model_copy(update={"framework": "megatron", "weight_dtype": None, "gradient_dtype": None,
                                           "master_weights": None, "optimizer_dtype": None})
        assert not scenario_outputs(megatron)["feasible"]


@pytest.mark.parametrize(("micro_batches", "unsharded", "expected_params"), [
    (2, True, 7.5e9),  # kept unsharded across the 2 micro-batches: every parameter's fp32 gradient
    (1, True, 7.5e9 / 64),  # one micro-batch: reduce-scattered at once, sharded
    (2, False, 7.5e9 / 64),
])
def test_unsharded_gradient_accumulation(micro_batches, unsharded, expected_params):
    # 7.5B, ZeRO-3 over 64 GPUs (TP 1, PP 1), fp32 gradients: 4 bytes per parameter held.
    scenario = Scenario(total_params=7.5e9, gpu_count=64, tensor_parallel=1, pipeline_parallel=1, zero_stage=3,
                        seq_len=4096, global_batch_tokens=64 * 4096 * micro_batches, framework="torchtitan",
                        unsharded_gradient_accumulation=unsharded)
    result = scenario_outputs(scenario)
    assert result["micro_batches_per_step"] == micro_batches
    assert result["memory"]["gradients_gb"] == pytest.approx(4 * expected_params / memory.GB, rel=1e-9)


# Issue 48: KempnerForge's measured allocator peaks (measured-memory.csv), worked by hand from the row's shape and
# layout: at the start of the last micro-batch's backward a GPU holds bf16 weights and moments (6 bytes per sharded
# parameter; on one GPU without FSDP also 2 of bf16 gradients), the fp32 unsharded gradients of the earlier
# micro-batches (4 per parameter of the TP shard; with one micro-batch, bf16 sharded ones), every layer's saved input
# (2·s·b·h / TP) and the loss's 8 bytes per logit of the whole s·b·V. The TP shard keeps the input embedding whole.
PEAK_ROWS = ("KM-1", "KM-3", "KM-5", "KM-8", "KM-12", "KM-18", "KM-24")
PEAK_TOLERANCE = 0.03


def _by_hand_gib(row: dict[str, str]) -> float:
    n, layers, h = float(row["total_params_b"]) * 1e9, int(row["n_layers"]), int(row["d_model"])
    vocab, s, b, tp, dp = (int(row[key]) for key in ("vocab_size", "seq_len", "micro_batch", "tp", "dp"))
    local = (n - 2 * vocab * h) / tp + vocab * h / tp + vocab * h
    if int(row["num_gpus"]) == 1:
        states = 8 * n
    else:
        sharded = local / dp
        states = 6 * sharded + (4 * local if int(row["grad_accum"]) > 1 else 2 * sharded)
    return (states + layers * 2 * s * b * h / tp + 8 * s * b * vocab) / 2**30


def _peak_rows() -> dict[str, dict[str, str]]:
    _second_files()
    return {row["row_id"]: row for row in memory_validation.measured_rows(memory_validation.MEASURED_MEMORY_CSV)}


@pytest.mark.parametrize("row_id", PEAK_ROWS)
def test_a_measured_peak_is_the_sum_worked_by_hand(row_id):
    row = _peak_rows()[row_id]
    result = memory_validation.measured_memory_results([row])[0]
    assert result["tensors_gb"] == pytest.approx(_by_hand_gib(row), rel=1e-9)
    assert abs(result["tensors_gb"] / float(row["measured_peak_gib"]) - 1) <= PEAK_TOLERANCE, result


def test_the_measured_peaks_behind_the_memory_bar_sentence():
    results = memory_validation.measured_memory_results(list(_peak_rows().values()))
    mean, worst = memory_validation.measured_peak_errors(results)
    assert len(results) == memory_validation.MEASURED_PEAK_ROWS == 24
    assert memory_validation.MEASURED_PEAK_ERROR == (math.ceil(mean * 1000) / 1000, math.ceil(worst * 1000) / 1000)
    assert mean <= 0.03 and worst <= 0.16  # the worst is KM-2, whose batch the report and its script disagree on
    assert sorted(abs(row["error"]) for row in results)[-2] <= 0.03
    note = memory_validation.validation_note()
    assert "24 measured peaks (KempnerForge, H200: within 1.9 % on average, 15.4 % at worst)" in note
