"""W&B runs-table reader: GPU-count columns, run states, runtime, tags, tokens, and the row accounting."""

from __future__ import annotations

from pathlib import Path

import hypothesis.strategies as st
import pandas as pd
import pytest
from hypothesis import given, settings

from dashboard.ingest.engine import read_table
from dashboard.ingest.formats import wandb
from dashboard.ingest.schema import CANONICAL_COLUMNS, ReadOptions, UnreadableFile

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "ingest" / "wandb_runs.csv"
APP_SAMPLE = Path(__file__).resolve().parents[2] / "data" / "samples" / "wandb_sample.csv"
HEADER = ["Name", "State", "User", "Tags", "Created", "Runtime", "ID", "num_gpus"]


def table_from_file(path: Path) -> pd.DataFrame:
    """The file as decode hands it over: strings, NA for empty cells, index = source line number."""
    table = pd.read_csv(path, dtype="string", keep_default_na=False).replace("", pd.NA)
    table.index = range(2, len(table) + 2)
    return table


def table_from_rows(rows: list[dict[str, str]], header: list[str] = HEADER) -> pd.DataFrame:
    """A runs table from dicts of cells; unspecified cells are empty."""
    table = pd.DataFrame([[row.get(name) for name in header] for row in rows], columns=header, dtype="string")
    table.index = range(2, len(rows) + 2)
    return table


def run(**cells: str) -> dict[str, str]:
    """One finished 1-hour run on 8 GPUs, with ``cells`` overriding."""
    return {"Name": "r", "State": "finished", "User": "alice", "Tags": "llm", "ID": "abc12345",
            "Created": "2025-06-01T10:00:00.000Z", "Runtime": "3600", "num_gpus": "8"} | cells


@pytest.fixture(scope="module")
def sample():
    return read_table(wandb.FORMAT, table_from_file(SAMPLE), ReadOptions())


def by_id(result) -> pd.DataFrame:
    return result.usage.set_index("run_id")


def test_sample_counts_and_total_gpu_hours(sample):
    # 10 runs: 5 used; pending and 0-GPU runs excluded; missing runtime, no GPU count, unknown state rejected.
    assert (len(sample.usage), len(sample.excluded), len(sample.rejected)) == (5, 2, 3)
    # 43200 s × 32 + 21600 s × 32 + 1800 s × 2 (trainer.devices) + 3600 s × (4 devices × 2 nodes)
    # + 7200 s × 16, over 3600 s/h = 384 + 192 + 1 + 8 + 32 = 617 GPU-hours.
    assert sample.usage["gpu_hours"].sum() == 617.0
    assert by_id(sample)["gpu_hours"].to_dict() == {
        "a1b2c3d4": 384.0, "e5f6g7h8": 192.0, "s1s1s1s1": 1.0, "s2s2s2s2": 8.0, "v1v1v1v1": 32.0}


def test_sample_states_map_to_the_slurm_vocabulary(sample):
    assert by_id(sample)["run_state"].to_dict() == {
        "a1b2c3d4": "COMPLETED", "e5f6g7h8": "FAILED", "s1s1s1s1": "CANCELLED", "s2s2s2s2": "FAILED",
        "v1v1v1v1": "RUNNING"}


def test_sample_excluded_and_rejected_reasons(sample):
    assert dict(zip(sample.excluded["line"], sample.excluded["reason"], strict=True)) == {
        8: wandb.NOT_STARTED_RULE, 9: wandb.NO_GPU_RULE}
    assert dict(zip(sample.rejected["line"], sample.rejected["reason"], strict=True)) == {
        7: "Runtime: empty run time",
        10: "no GPU count: none of num_gpus, trainer.devices has a value; map a column to gpu_count",
        11: "State: unknown W&B run state 'exploded'",
    }


def test_sample_team_project_ids_tokens_and_gpu_type(sample):
    usage = by_id(sample)
    assert usage.loc["a1b2c3d4", ["team", "project", "resource_id", "gpu_type"]].tolist() == [
        "pretraining", "pretrain-7b", "1001", "H100"]  # team tag, Group, logged slurm_job_id
    assert usage.loc["s1s1s1s1", ["team", "project", "resource_id"]].tolist() == [
        "bob", "lr-sweep", "s1s1s1s1"]
    assert usage.loc["v1v1v1v1", "gpu_type"] == "A100_80GB"  # nvidia_a100_80gb
    assert usage.loc["a1b2c3d4", "tokens"] == 1.2e9  # tokens_seen; train/tokens_per_second is a rate
    assert pd.isna(usage.loc["s1s1s1s1", "tokens"])


def test_sample_periods_are_created_plus_runtime(sample):
    first = by_id(sample).loc["a1b2c3d4"]
    assert first["period_start"] == pd.Timestamp("2025-06-02T06:00:00Z")
    assert first["period_end"] == pd.Timestamp("2025-06-02T18:00:00Z")  # + 43200 s


def test_wandb_has_no_prices(sample):
    assert (sample.usage[["cost", "billed_cost"]] == 0.0).all().all()
    assert sample.usage["currency"].isna().all()
    assert sample.warnings[0] == wandb.PRICE_WARNING
    assert any("still running" in warning for warning in sample.warnings)


def test_usage_has_the_canonical_columns_and_dtypes(sample):
    assert {name: str(dtype) for name, dtype in sample.usage.dtypes.items()} == CANONICAL_COLUMNS
    assert list(sample.usage.columns) == list(CANONICAL_COLUMNS)


def test_empty_export_reads_to_an_empty_canonical_table():
    result = read_table(wandb.FORMAT, table_from_rows([]), ReadOptions())
    assert len(result.usage) == 0
    assert {name: str(dtype) for name, dtype in result.usage.dtypes.items()} == CANONICAL_COLUMNS


@pytest.mark.parametrize(("state", "canonical"), [
    ("finished", "COMPLETED"),
    ("failed", "FAILED"),
    ("crashed", "FAILED"),
    ("killed", "CANCELLED"),
    ("running", "RUNNING"),
    ("Finished", "COMPLETED"),
    ("preempted", "PREEMPTED"),
])
def test_state_is_normalised(state, canonical):
    usage = read_table(wandb.FORMAT, table_from_rows([run(State=state)]), ReadOptions()).usage
    assert usage["run_state"].tolist() == [canonical]


@pytest.mark.parametrize("state", ["COMPLETED", "exploded", "CD"])
def test_non_wandb_state_is_rejected(state):
    result = read_table(wandb.FORMAT, table_from_rows([run(State=state)]), ReadOptions())
    assert result.rejected["reason"].tolist() == [f"State: unknown W&B run state '{state}'"]


@pytest.mark.parametrize(("column", "value", "gpus"), [
    ("num_gpus", "8", 8),
    ("n_gpus", "4", 4),
    ("gpu_count", "2", 2),
    ("config.num_gpus", "16", 16),
    ("world_size", "64", 64),
    ("trainer.devices", "8", 8),
    ("trainer.devices", "[0, 1, 2, 3]", 4),
    ("trainer.devices", "[0]", 1),
])
def test_gpu_count_columns(column, value, gpus):
    header = ["State", "Created", "Runtime", "ID", column]
    table = table_from_rows([run(**{column: value})], header)
    assert read_table(wandb.FORMAT, table, ReadOptions()).usage.loc[0, "gpu_hours"] == gpus  # 1 h each


def test_devices_are_multiplied_by_nodes():
    header = ["State", "Created", "Runtime", "ID", "trainer.devices", "trainer.num_nodes"]
    table = table_from_rows([run(**{"trainer.devices": "8", "trainer.num_nodes": "4"})], header)
    assert read_table(wandb.FORMAT, table, ReadOptions()).usage.loc[0, "gpu_hours"] == 32.0  # 8 × 4 GPUs × 1 h


def test_first_gpu_column_with_a_value_wins_per_row():
    header = ["State", "Created", "Runtime", "ID", "num_gpus", "world_size"]
    table = table_from_rows([run(num_gpus="8", world_size="16"), run(num_gpus=None, world_size="16")], header)
    assert read_table(wandb.FORMAT, table, ReadOptions()).usage["gpu_hours"].tolist() == [8.0, 16.0]


def test_unreadable_gpu_count_is_rejected_naming_the_value():
    result = read_table(wandb.FORMAT, table_from_rows([run(num_gpus="auto")]), ReadOptions())
    assert result.rejected["reason"].tolist() == ["num_gpus: cannot read 'auto' as a GPU count"]


def test_mapping_picks_the_gpu_column():
    header = ["State", "Created", "Runtime", "ID", "accelerators"]
    table = table_from_rows([run(accelerators="4")], header)
    result = read_table(wandb.FORMAT, table, ReadOptions(mapping={"gpu_count": "accelerators"}))
    assert result.usage.loc[0, "gpu_hours"] == 4.0


def test_file_without_gpu_columns_is_unreadable_and_names_candidates():
    table = table_from_rows([run()], ["State", "Created", "Runtime", "ID"])
    with pytest.raises(UnreadableFile, match="num_gpus, n_gpus, gpu_count"):
        read_table(wandb.FORMAT, table, ReadOptions())


def test_mapping_to_an_absent_column_is_unreadable():
    with pytest.raises(UnreadableFile, match="gpu_count → 'gpus_used'"):
        read_table(wandb.FORMAT, table_from_rows([run()]), ReadOptions(mapping={"gpu_count": "gpus_used"}))


def test_file_without_state_is_unreadable():
    with pytest.raises(UnreadableFile, match="State"):
        read_table(wandb.FORMAT, table_from_rows([run()], ["Created", "Runtime", "ID", "num_gpus"]), ReadOptions())


@pytest.mark.parametrize(("runtime", "hours"), [
    ("3600", 1.0), ("5400.0", 1.5), ("02:00:00", 2.0), ("0", 0.0),
])
def test_runtime_forms(runtime, hours):
    result = read_table(wandb.FORMAT, table_from_rows([run(Runtime=runtime, num_gpus="1")]), ReadOptions())
    assert result.usage.loc[0, "gpu_hours"] == hours


@pytest.mark.parametrize(("tags", "team"), [
    ("llm,team:pretraining", "pretraining"),
    ("team=infra,llm", "infra"),
    ("Team: Data ,x", "Data"),
    ('["llm", "team:eval"]', "eval"),
    ("llm,teamwork", "alice"),  # no team tag: the user
    (None, "alice"),
])
def test_team_from_tags_else_user(tags, team):
    assert read_table(wandb.FORMAT, table_from_rows([run(Tags=tags)]), ReadOptions()).usage.loc[0, "team"] == team


def test_run_id_falls_back_to_name():
    result = read_table(wandb.FORMAT, table_from_rows([run(ID=None, Name="pretrain-7b")]), ReadOptions())
    assert result.usage.loc[0, ["run_id", "resource_id"]].tolist() == ["pretrain-7b", "pretrain-7b"]


def test_unreadable_tokens_are_unknown_with_a_warning():
    header = [*HEADER, "train/tokens"]
    result = read_table(wandb.FORMAT, table_from_rows([run(**{"train/tokens": "lots"})], header), ReadOptions())
    assert pd.isna(result.usage.loc[0, "tokens"])
    assert any("unreadable token count" in warning for warning in result.warnings)


def test_app_sample_reads_as_intended():
    # make_run_samples.py: one run per GPU job that started (22 pretrain-13b + 3 burn-in + 46 April sweep jobs + 4
    # data-mix-pilot + 5 ablate-lr-warmup + 3 on 10 May + 5 fine-tune + 30 eval-harness + 9 eval-full-suite = 127),
    # a pending run and a 0-GPU debug run (excluded) and a run that crashed before logging its runtime (rejected).
    table = table_from_file(APP_SAMPLE)
    result = read_table(wandb.FORMAT, table, ReadOptions())
    assert (len(result.usage), len(result.excluded), len(result.rejected)) == (127, 2, 1)
    assert set(result.usage["team"]) == {"llm-pretrain", "research", "data", "llm-eval"}
    assert set(result.usage["project"]) == {"pretrain-13b", "ablations", "data-mix", "tokenizer", "chat", "evals"}
    assert result.usage["resource_id"].notna().all() and result.usage["resource_id"].is_unique  # Slurm job ids

    usage = result.usage.assign(name=table.loc[result.usage["source_row"], "Name"].to_numpy())
    main = usage[usage["name"].str.startswith("pretrain-13b-seg")]
    assert len(main) == 22
    kept = main[main["run_state"] == "COMPLETED"]  # 14 jobs, 916 h on 64 GPUs; the 8 failed jobs' work is lost
    assert len(kept) == 14
    plan_rate = 1e12 / 54_769  # tokens per GPU-hour of the sample plan (sample_org_13b preset)
    assert (kept["tokens"] / kept["gpu_hours"] / plan_rate).between(0.849, 0.891).all()
    # 916 h x 64 GPUs x 0.85..0.89 x plan_rate = 0.910..0.953 T (W&B runtimes start a minute or two after Slurm's)
    assert 0.90e12 < kept["tokens"].sum() < 0.96e12


cells = {
    "State": st.sampled_from(["finished", "crashed", "pending", "running", "weird", ""]),
    "Created": st.sampled_from(["2025-06-01T10:00:00.000Z", "2025-06-01", "yesterday", ""]),
    "Runtime": st.sampled_from(["3600", "0", "-1", "", "x", "01:00:00"]),
    "ID": st.sampled_from(["a", "b", ""]),
    "num_gpus": st.sampled_from(["8", "0", "", "-2", "two", "[0,1]"]),
}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.fixed_dictionaries(cells), max_size=12))
def test_every_row_is_used_excluded_or_rejected_once(rows):
    table = table_from_rows(rows).replace("", pd.NA)
    result = read_table(wandb.FORMAT, table, ReadOptions())
    lines = [*result.usage["source_row"], *result.excluded["line"], *result.rejected["line"]]
    assert sorted(lines) == list(table.index)
    assert (result.usage["gpu_hours"] >= 0).all()
    assert {name: str(dtype) for name, dtype in result.usage.dtypes.items()} == CANONICAL_COLUMNS


# (config columns and cells, the model size read). Shape: 12 · layers · hidden² (+ vocab · hidden):
# 12 · 32 · 4096² = 6,442,450,944; + 32,000 · 4,096 = 131,072,000.
MODEL_SIZE_CASES = [
    ({"n_params": "7000000000"}, 7e9),
    ({"num_params": "1.3e10"}, 13e9),
    ({"model.n_params": "13000000000"}, 13e9),
    ({"params": "70B"}, 70e9),
    ({"model/num_parameters": "350M"}, 350e6),
    ({"model.n_layers": "32", "model.d_model": "4096"}, 6_442_450_944.0),
    ({"num_hidden_layers": "32", "hidden_size": "4096", "vocab_size": "32000"}, 6_573_522_944.0),
    ({"n_params": "7e9", "n_layers": "2", "d_model": "8"}, 7e9),  # a logged count wins over the shape
]


@pytest.mark.parametrize(("cells", "params"), MODEL_SIZE_CASES)
def test_the_model_size_from_the_config_columns(cells, params):
    header = [*HEADER, *cells]
    result = read_table(wandb.FORMAT, table_from_rows([run(**cells), run(ID="other")], header), ReadOptions())
    assert result.model_params == {2: params}  # line 2 logs it; line 3 (no value) has none


@pytest.mark.parametrize("bad", ["0", "-5", "2e16", "lots"])
def test_an_implausible_model_size_is_left_out(bad):
    header = [*HEADER, "n_params"]
    result = read_table(wandb.FORMAT, table_from_rows([run(n_params=bad)], header), ReadOptions())
    assert result.model_params == {} and len(result.usage) == 1  # the run is kept, its size is not
    if bad != "lots":
        assert any("model size outside" in warning for warning in result.warnings)


def test_the_bundled_sample_logs_its_model_sizes():
    """data/samples/generator/make_run_samples.py writes model.n_params 13e9 for the 13B runs and 1.3e9 for the
    ablation sweep."""
    result = read_table(wandb.FORMAT, table_from_file(APP_SAMPLE), ReadOptions())
    assert set(result.model_params.values()) == {13e9, 1.3e9}
    assert set(result.model_params) <= set(result.usage["source_row"])


LAYOUT_CASES = [
    # config cells, the layout read from line 2
    ({"megatron.tensor_model_parallel_size": "4", "megatron.pipeline_model_parallel_size": "2",
      "megatron.micro_batch_size": "1"}, {"tensor_parallel": 4, "pipeline_parallel": 2, "micro_batch_size": 1}),
    ({"deepspeed/train_micro_batch_size_per_gpu": "2"}, {"micro_batch_size": 2}),  # a leaf after "/"
    ({"tp_size": "8", "pp_size": "1.0"}, {"tensor_parallel": 8, "pipeline_parallel": 1}),
    ({"tensor_parallel": "0.5", "pipeline_parallel": "0", "micro_batch": "many"}, None),  # none is a layout
]


@pytest.mark.parametrize(("cells", "layout"), LAYOUT_CASES)
def test_the_layout_from_the_config_columns(cells, layout):
    header = [*HEADER, *cells]
    result = read_table(wandb.FORMAT, table_from_rows([run(**cells), run(ID="other")], header), ReadOptions())
    assert result.run_layout == ({2: layout} if layout else {})  # line 3 logs none
    assert len(result.usage) == 2  # a run is kept whatever its layout cells say


def test_the_bundled_sample_logs_no_layout():
    """The generator logs GPUs (trainer.devices × trainer.num_nodes) and model.n_params, no TP / PP / micro-batch."""
    assert read_table(wandb.FORMAT, table_from_file(APP_SAMPLE), ReadOptions()).run_layout == {}
