"""Hostile and careless scenario input at every boundary: physical bounds, strict types, bounded JSON, short quotes.

Each case is what a user could type in a file, a `--set` or a link; each must be refused with one line that
names the key and what is allowed, never a traceback, a NaN, or a value silently taken for another.
"""

import json
import math
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dashboard.cli import main
from dashboard.core.engine import output_arrays, scenario_arrays, scenario_outputs
from dashboard.core.json_input import MAX_DEPTH, MAX_JSON_BYTES
from dashboard.core.scenario import (
    Scenario,
    ScenarioError,
    default_scenario,
    scenario_from_dict,
    scenario_from_json,
    with_overrides,
)
from dashboard.core.scenario_bundle import read_bundle
from dashboard.core.scenario_query import scenario_from_query
from dashboard.core.uncertainty import monte_carlo

DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "9" * 5_000
TEN_MB = "x" * 10_000_000
ROOT = Path(__file__).resolve().parents[2]
MEMORY_LIMIT_BYTES = 2 * 1024**3
MESSAGE_CHARS = 400  # a message quotes at most a short prefix of the bad value


def _cli(capsys, *args):
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- item 3: bounds that mean something physical --------------------------------------------------------------

@pytest.mark.parametrize(("key", "value", "allowed"), [
    ("checkpoint_interval_min", 1e-300, "(allowed: ≥ 1 and ≤ 100000)"),
    ("checkpoint_interval_min", 0.001, "(allowed: ≥ 1 and ≤ 100000)"),
    ("checkpoint_interval_min", 0.5, "(allowed: ≥ 1 and ≤ 100000)"),
    ("mfu", 1e-300, "(allowed: ≥ 0.01 and ≤ 1)"),
    ("budget_usd", 1e-300, "(allowed: ≥ 1 and ≤ 1e+13)"),
    ("total_params", 1.0, "(allowed: ≥ 1e+06 and ≤ 1e+14)"),
    ("tokens", 1e-300, "(allowed: ≥ 1e+06 and ≤ 1e+16)"),
    ("peak_tflops", 1e-300, "(allowed: ≥ 1 and ≤ 100000)"),
    ("checkpoint_write_gb_per_s", 1e-300, "(allowed: ≥ 0.01 and ≤ 100000)"),
    ("checkpoint_bytes_per_param", 1e-300, "(allowed: ≥ 0.5 and ≤ 100)"),
    ("budget_warning_fraction", 1e-300, "(allowed: ≥ 0.01 and ≤ 1)"),
    ("range_mfu_low", 1e-300, "(allowed: ≥ 0.01 and ≤ 1)"),
])
def test_unphysical_values_are_refused_with_the_allowed_range(key, value, allowed):
    with pytest.raises(ScenarioError) as error:
        with_overrides(default_scenario(), [f"{key}={value!r}"])
    assert str(error.value) == f"{key} = {value!r} is out of range {allowed}"


# Bounded together by the GPU count.
LAYOUT_KEYS = ("tensor_parallel", "pipeline_parallel", "expert_parallel", "context_parallel")
NUMERIC_KEYS = [key for key, field in Scenario.model_fields.items()
                if any(getattr(meta, "ge", None) is not None for meta in field.metadata)]


def test_every_bounded_key_says_why_in_its_description():
    missing = [key for key in NUMERIC_KEYS if "Bounds:" not in (Scenario.model_fields[key].description or "")]
    assert missing == []
    assert not [key for key, field in Scenario.model_fields.items()
                if any(getattr(meta, "gt", None) is not None for meta in field.metadata)], "open bounds remain"


def _bound(key: str, end: str) -> float:
    return next(getattr(meta, end) for meta in Scenario.model_fields[key].metadata
                if getattr(meta, end, None) is not None)


def _finite_outputs(result: dict) -> list[str]:
    # Infinite MTBF and optimal intervals mean "never interrupted"; every cost and hour must be a number.
    checked = {"gpu_hours_total", "gpu_hours_main_run", "wall_clock_days", "cost_total_usd",
               "cost_per_million_tokens", "storage_cost_usd", "storage_peak_gb", "predicted_loss",
               "overhead_fraction", "dataset_gb", "checkpoint_size_gb", "checkpoint_write_s"}
    bad = [key for key in checked if not math.isfinite(result[key])]
    bad += [f"cost_breakdown.{key}" for key, value in result["cost_breakdown"].items() if not math.isfinite(value)]
    # Infinite means "impossible", printed as null: no speedup pays for the pilot and switching (break-even), or
    # TST cannot reach the baseline's loss from the unique data (scarcity factor, and so its net saving).
    impossible = {"break_even_speedup", "scarcity_factor", "net_savings_with_scarcity_usd"}
    bad += [f"tst.{key}" for key, value in result["tst"].items()
            if key not in impossible and not math.isfinite(value)]
    return bad


@pytest.mark.parametrize("end", ["ge", "le"])
@pytest.mark.parametrize("key", NUMERIC_KEYS)
def test_every_allowed_extreme_prices_to_finite_numbers(key, end):
    data = default_scenario().to_json_dict()
    data[key] = _bound(key, end)
    if key in ("reserved_share", "spot_share") and end == "le":
        data["reserved_share" if key == "spot_share" else "spot_share"] = 0.0
    if key == "active_params" or (key == "total_params" and end == "ge"):
        data["active_params"] = None
    if key in LAYOUT_KEYS and end == "le":  # TP within a node; TP · PP and EP divide the GPUs
        data.update(gpus_per_node=1024, gpu_count=4096 * 1024)
    if key in ("n_experts", "experts_per_token"):  # the two go together, top-k within the experts
        partner = "experts_per_token" if key == "n_experts" else "n_experts"
        data[partner] = 1 if key == "n_experts" else data[key]
        data["active_params"] = 1e9  # given, so no expert width is derived from 7B over 100,000 experts
    result = scenario_outputs(Scenario.model_validate(data))
    assert _finite_outputs(result) == []
    assert result["budget_status"] in ("within", "warning", "over")


def test_the_most_expensive_allowed_corner_is_still_a_number():
    worst = {key: _bound(key, "le") for key in NUMERIC_KEYS
             if not key.startswith("range_") and key not in LAYOUT_KEYS}
    worst.update(spot_share=0.0, active_params=None, checkpoint_write_s=None, attention_flops=True,
                 activation_recompute=True, method="tst", peak_tflops=_bound("peak_tflops", "ge"),
                 mfu=_bound("mfu", "ge"), checkpoint_interval_min=_bound("checkpoint_interval_min", "ge"),
                 checkpoint_write_gb_per_s=_bound("checkpoint_write_gb_per_s", "ge"), gpus_per_node=1,
                 gpu_type="custom")
    result = scenario_outputs(Scenario.model_validate(worst))
    assert _finite_outputs(result) == []
    assert result["budget_status"] == "over"


# -- item 10: no NaN, and a non-number is never "within" ------------------------------------------------------

def test_a_cost_that_is_not_a_number_is_never_within_budget():
    arrays = scenario_arrays([default_scenario()])
    arrays["checkpoint_interval_min"] = arrays["checkpoint_interval_min"] * 0 + 1e-300  # past validation
    with np.errstate(all="ignore"):
        out = output_arrays(arrays)
    assert not math.isfinite(out["cost_total_usd"][0])
    assert int(out["budget_status_index"][0]) == 2


def test_the_issue_command_is_refused_not_priced_as_null(capsys):
    code, out, err = _cli(capsys, "estimate", "--set", "checkpoint_interval_min=1e-300", "--json")
    assert (code, out) == (2, "")
    assert err == "error: checkpoint_interval_min = 1e-300 is out of range (allowed: ≥ 1 and ≤ 100000)\n"


# -- item 11: size, depth and number length at the boundary ---------------------------------------------------

HOSTILE_FILES = {
    "5000-digit-int": (f'{{"gpu_count": {HUGE_INT}}}', "has 5,000 digits: at most 40 are read"),
    "5000-digit-float": (f'{{"mfu": 0.{HUGE_INT}}}', "has 5,000 digits: at most 40 are read"),
    "huge-exponent": ('{"mfu": 1e999}', "mfu = inf: must be a finite number"),
    "nan": ('{"mfu": NaN}', "NaN is not a number JSON allows"),
    "100000-deep": (DEEP, f"nested 100,000 levels deep: a scenario file is one flat object or an array of them "
                          f"(at most {MAX_DEPTH} levels are read)"),
    "deep-objects": ('{"a":' * 50_000 + "1" + "}" * 50_000, "nested 50,000 levels deep"),
    "duplicate-key": ('{"gpu_count": 8, "gpu_count": 4096}', "the key 'gpu_count' appears twice in one object"),
    "too-large": (" " * (MAX_JSON_BYTES + 1) + "{}",
                  f"more than the {MAX_JSON_BYTES:,} bytes a scenario file may hold"),
}


@pytest.mark.parametrize(("text", "message"), HOSTILE_FILES.values(), ids=list(HOSTILE_FILES))
def test_hostile_json_is_refused_by_every_reader(text, message):
    for read in (scenario_from_json, read_bundle):
        with pytest.raises(ScenarioError) as error:
            read(text)
        assert message in str(error.value)
        assert "\n" not in str(error.value) and len(str(error.value)) < MESSAGE_CHARS


def test_an_overflowing_number_in_a_bundle_names_its_scenario():
    with pytest.raises(ScenarioError) as error:
        read_bundle('[{}, {"mfu": -1e999}]')
    assert str(error.value) == "scenario 2 of 2: mfu = -inf: must be a finite number"


@pytest.mark.parametrize(("text", "message"), HOSTILE_FILES.values(), ids=list(HOSTILE_FILES))
def test_hostile_files_exit_2_with_one_line_from_estimate_and_report(tmp_path, capsys, text, message):
    path = tmp_path / "plan.json"
    path.write_text(text)
    for args in (["estimate", str(path), "--json"], ["report", str(path), "-o", str(tmp_path / "r.html")]):
        code, out, err = _cli(capsys, *args)
        assert code == 2 and out == ""
        assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(("value", "message"), [
    (HUGE_INT, "--set gpu_count: the number 99999999999999999999… (5,000 characters) has 5,000 digits"),
    (DEEP[:60_000] + DEEP[-60_000:], "--set gpu_count: nested 60,000 levels deep"),
])
def test_hostile_set_values_exit_2_with_one_line(capsys, value, message):
    code, out, err = _cli(capsys, "estimate", "--set", f"gpu_count={value}")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_a_key_set_twice_is_refused(capsys):
    code, _, err = _cli(capsys, "estimate", "--set", "gpu_count=8", "--set", "gpu_count=4096")
    assert (code, err) == (2, "error: --set gpu_count is given twice: keep one of them\n")


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


@pytest.mark.parametrize("command", ["estimate", "report"])
@pytest.mark.parametrize("special", ["/dev/zero", "/dev/urandom", "/dev/null", "."])
def test_only_regular_files_are_read(tmp_path, command, special):
    # In a child under a memory cap and a timeout: reading /dev/zero whole would otherwise take this process down.
    args = [special] if command == "estimate" else [special, "-o", str(tmp_path / "r.html")]
    done = subprocess.run([sys.executable, "-m", "dashboard", command, *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, preexec_fn=_limit_memory)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: {special} is not a regular file: give a scenario JSON file\n"


def test_report_refuses_a_negative_seed_like_estimate(tmp_path, capsys):
    code, out, err = _cli(capsys, "report", "data/scenarios/default.json", "-o", str(tmp_path / "r.html"),
                          "--seed", "-1")
    assert (code, out, err) == (2, "", "error: --seed -1: use a whole number of 0 or more\n")


# -- item 12: strict types and no duplicates -------------------------------------------------------------------

@pytest.mark.parametrize(("data", "message"), [
    ({"gpu_count": True}, "gpu_count = True: Input should be a valid integer (write a whole number such as 512)"),
    ({"gpu_count": 512.0}, "gpu_count = 512.0: Input should be a valid integer"),
    ({"gpu_count": "512"}, "gpu_count = '512': Input should be a valid integer"),
    ({"attention_flops": "yes"}, "attention_flops = 'yes': Input should be a valid boolean (write true or false)"),
    ({"attention_flops": "on"}, "attention_flops = 'on': Input should be a valid boolean"),
    ({"checkpoint_async": 1}, "checkpoint_async = 1: Input should be a valid boolean"),
    ({"mfu": True}, "mfu = True: Input should be a valid number (write a number such as 0.4)"),
    ({"mfu": "0.4"}, "mfu = '0.4': Input should be a valid number"),
    ({"name": 2024}, "name = 2024: Input should be a valid string (write text in quotes)"),
    ({"schema": True}, "schema = True: this planner reads scenario files with \"schema\": 1"),
])
def test_loose_types_in_a_file_are_refused(data, message):
    with pytest.raises(ScenarioError) as error:
        scenario_from_json(json.dumps(data))
    assert str(error.value).startswith(message)


def test_a_file_with_true_for_a_gpu_count_exits_2(tmp_path, capsys):
    path = tmp_path / "plan.json"
    path.write_text('{"schema": 1, "gpu_count": true}')
    code, out, err = _cli(capsys, "estimate", str(path), "--json")
    assert (code, out) == (2, "") and "gpu_count = True: Input should be a valid integer" in err


@pytest.mark.parametrize(("params", "warning"), [
    ({"gpu_count": "true"}, "Link: ignored gpu_count = True: Input should be a valid integer"),
    ({"gpu_count": "512.0"}, "Link: ignored gpu_count = 512.0: Input should be a valid integer"),
    ({"checkpoint_async": "1"}, "Link: ignored checkpoint_async = 1: Input should be a valid boolean"),
    ({"checkpoint_async": "yes"}, "Link: ignored checkpoint_async = 'yes': Input should be a valid boolean"),
    ({"gpu_count": ["8", "4096"]}, "Link: ignored 'gpu_count': given 2 times in the address; keep one"),
    ({"base.mfu": ["0.3", "0.5"]}, "Link baseline: ignored 'mfu': given 2 times in the address; keep one"),
])
def test_loose_or_repeated_link_values_are_ignored_with_a_warning(params, warning):
    link = scenario_from_query(params)
    assert (link.scenario, link.baseline) == (default_scenario(), default_scenario())
    assert any(message.startswith(warning) for message in link.warnings), link.warnings


def test_strict_link_values_still_load():
    link = scenario_from_query({"gpu_count": "1024", "checkpoint_async": "true", "mfu": "0.35", "name": "2024"})
    assert (link.scenario.gpu_count, link.scenario.checkpoint_async, link.scenario.mfu) == (1024, True, 0.35)
    assert link.scenario.name == "2024" and link.warnings == []


# -- item 13: a bad value is quoted by a short prefix only -----------------------------------------------------

@pytest.mark.parametrize("data", [
    {"gpu_type": TEN_MB}, {"mfu": TEN_MB}, {TEN_MB: 1}, {"name": TEN_MB}, {"method": TEN_MB},
], ids=["gpu_type", "mfu", "key", "name", "method"])
def test_a_10_mb_bad_value_is_quoted_by_a_short_prefix(data):
    with pytest.raises(ScenarioError) as error:
        scenario_from_dict(data)
    message = str(error.value)
    assert len(message) < MESSAGE_CHARS and "(10,000,002 characters)" in message


@pytest.mark.parametrize("data", [
    {"gpu_type": "x" * 100_000}, {"mfu": "x" * 100_000}, {"x" * 100_000: 1}, {"name": "x" * 100_000},
    {"scaling_fit": "x" * 100_000},
], ids=["gpu_type", "mfu", "key", "name", "scaling_fit"])
def test_a_long_bad_value_in_a_file_is_quoted_by_a_short_prefix(data):
    with pytest.raises(ScenarioError) as error:
        scenario_from_json(json.dumps(data))
    message = str(error.value)
    assert len(message) < MESSAGE_CHARS and "(100,002 characters)" in message


def test_a_long_bad_set_is_quoted_by_a_short_prefix(capsys):
    code, _, err = _cli(capsys, "estimate", "--set", "x" * 100_000)
    assert code == 2 and len(err) < MESSAGE_CHARS and "(100,002 characters)" in err


def test_a_long_link_key_is_quoted_by_a_short_prefix():
    link = scenario_from_query({"k" * 100_000: "1"})
    assert len(link.warnings) == 1 and len(link.warnings[0]) < MESSAGE_CHARS


@pytest.mark.parametrize(("args", "message"), [
    (["--budget-usd", "nan"], "argument --budget-usd: 'nan' is not a finite number"),
    (["--budget-usd", "1e999"], "argument --budget-usd: '1e999' is not a finite number"),
    (["--target-loss", "inf"], "argument --target-loss: 'inf' is not a finite number"),
    (["--budget-usd", "1e-300"], "--budget-usd 1e-300 is out of range (allowed: ≥ 1 and ≤ 1e+13)"),
    (["--budget-usd", "1e300"], "--budget-usd 1e+300 is out of range (allowed: ≥ 1 and ≤ 1e+13)"),
])
def test_optimal_refuses_budgets_and_losses_that_are_not_finite_or_physical(capsys, args, message):
    try:
        code = main(["optimal", *args])
    except SystemExit as done:  # argparse's own refusal of the option's type
        code = done.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1 and len(err) < MESSAGE_CHARS


def test_monte_carlo_at_the_most_expensive_allowed_corner_is_still_a_number():
    # Costs near 1e40 overflow float32 (3.4e38), in which draws are normally priced.
    worst = Scenario(total_params=1e14, tokens=1e16, mfu=0.01, gpu_type="custom", peak_tflops=1,
                     checkpoint_interval_min=1, checkpoint_write_gb_per_s=0.01, gpus_per_node=1,
                     node_failures_per_1000_node_days=10_000, gpu_count=10_000_000, experiment_overhead=100,
                     keep_last_checkpoints=100_000, method="tst", range_shape="lognormal", range_mfu_low=0.01,
                     range_tokens_high=100, range_node_failures_high=100, range_tst_speedup_low=0.01)
    with np.errstate(all="ignore"):
        summary = monte_carlo(worst, 2_000, 0).summary()
    numbers = [value for part in ("p10", "p50", "p90", "mean") for value in summary[part].values()]
    assert numbers and all(math.isfinite(value) for value in numbers)
    assert math.isfinite(summary["budget_for_90_percent_usd"])
