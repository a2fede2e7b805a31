"""Scenario comparison table: which inputs are listed, the outputs and their differences, highlights and safe CSV.

The two compute-only plans cost GPU-hours × $2 with GPU-hours = 6·N·D / (989e12 · MFU · 3600) (H100 dense BF16),
so every expected number below is worked out from that formula, not read from the code.
"""

import csv
import io
import math
import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from bare_plan import COMPUTE_ONLY

from dashboard.core import compare
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.core.scenario_query import scenario_from_query
from dashboard.report.cells import money

PLAN = dict(COMPUTE_ONLY, total_params=1e9, tokens=1e11, mfu=0.4, reserved_share=1.0, spot_share=0.0,
            price_reserved_per_gpu_hour=2.0, gpu_count=100, budget_usd=1e6)
GPU_HOURS_AT_40 = 6 * 1e9 * 1e11 / (989e12 * 0.4 * 3600)  # 421.3 GPU-hours


def plan(name: str = "A", **changes) -> Scenario:
    return Scenario(**{**PLAN, "name": name, **changes})


def table_for(scenarios, ranges=None):
    return compare.comparison_table(scenarios, [scenario_outputs(s) for s in scenarios], ranges)


def row(table, key):
    rows = table[table["key"] == key]
    assert len(rows) == 1, key
    return rows.iloc[0]


@pytest.mark.parametrize(
    ("changes", "keys"),
    [
        pytest.param({}, [], id="only-the-name-differs"),
        pytest.param({"mfu": 0.2}, ["mfu"], id="one-number"),
        pytest.param({"mfu": 0.2, "gpu_type": "B200"}, ["gpu_type", "mfu"], id="schema-order"),
        pytest.param({"checkpoint_async": False}, ["checkpoint_async"], id="boolean"),
        pytest.param({"active_params": 5e8}, ["active_params"], id="none-against-a-number"),
        pytest.param({"range_mfu_low": 0.5}, ["range_mfu_low"], id="uncertainty-range"),
    ],
)
def test_input_rows_are_exactly_the_differing_keys(changes, keys):
    table = table_for([plan("A"), plan("B", **changes)])
    inputs = table[table["section"] == "Input"]
    assert list(inputs["key"]) == keys
    assert "name" not in set(table["key"]) and "schema_" not in set(table["key"])


def test_outputs_are_the_headlines_with_hand_computed_values_and_deltas():
    table = table_for([plan("A"), plan("B", mfu=0.2)])
    outputs = table[table["section"] == "Output"]
    # Compute-only single runs: the programme is the main pre-training alone, its one stage-kind row.
    rows = compare.HEADLINES + compare.THROUGHPUT_ROWS + compare.PROGRAMME_ROWS
    assert list(outputs["key"]) == [key for key, _ in rows] + ["programme.stage_cost.main"]
    assert list(outputs["item"]) == [label for _, label in rows] + ["Stage cost: Main pre-training"]
    assert list(table.columns) == ["section", "item", "key", "A", "B", "Δ B"]
    cost = row(table, "cost_total_usd")
    assert cost["A"] == pytest.approx(2.0 * GPU_HOURS_AT_40)
    assert cost["B"] == pytest.approx(4.0 * GPU_HOURS_AT_40)  # half the MFU: twice the hours
    assert cost["Δ B"] == pytest.approx(2.0 * GPU_HOURS_AT_40)
    days = row(table, "wall_clock_days")
    assert days["Δ B"] == pytest.approx(GPU_HOURS_AT_40 / 100 / 24)
    mfu = row(table, "mfu")
    assert (mfu["A"], mfu["B"], mfu["Δ B"]) == (0.4, 0.2, pytest.approx(-0.2))
    assert math.isnan(row(table, "budget_status")["Δ B"])
    # Both entered their MFU; the layout, the same in both, predicts one step time and one predicted MFU.
    assert (row(table, "mfu_used")["A"], row(table, "mfu_used")["B"]) == (0.4, 0.2)
    step = row(table, "throughput.step_time_s")
    assert step["A"] == step["B"] and step["Δ B"] == 0.0


@pytest.mark.parametrize(
    ("changes", "key", "expected"),
    [
        pytest.param({"gpu_type": "B200"}, "gpu_type", None, id="text"),
        pytest.param({"checkpoint_async": False}, "checkpoint_async", None, id="boolean"),
        pytest.param({"active_params": 5e8}, "active_params", None, id="none"),
        pytest.param({"gpu_count": 64}, "gpu_count", -36.0, id="integer"),
        pytest.param({"tokens": 3e11}, "tokens", 2e11, id="float"),
    ],
)
def test_delta_is_a_number_only_between_numbers(changes, key, expected):
    delta = row(table_for([plan("A"), plan("B", **changes)]), key)["Δ B"]
    if expected is None:
        assert math.isnan(delta)
    else:
        assert delta == pytest.approx(expected)


def summary(p10: float, p90: float, prob_over_budget: float = 0.0) -> dict:
    return {q: {"cost_total_usd": v, "gpu_hours_total": v / 2, "wall_clock_days": v / 100} for q, v in
            (("p10", p10), ("p90", p90))} | {"prob_over_budget": prob_over_budget}


@pytest.mark.parametrize(("chances", "shown"), [
    ((0.1, 0.3), ("within", "at risk")),  # the Plan page's rule: above a 20 % chance of overrun, "at risk"
    ((0.2, 0.0), ("within", "within")),  # at the threshold itself, not yet
])
def test_with_ranges_the_budget_row_reads_as_the_plan_page_s_tile(chances, shown):
    scenarios = [plan("A"), plan("B", mfu=0.2)]
    assert [scenario_outputs(s)["budget_status"] for s in scenarios] == ["within", "within"]
    ranges = [summary(700.0, 1100.0, chance) for chance in chances]
    budget = row(table_for(scenarios, ranges), "budget_status")
    assert (budget["A"], budget["B"]) == shown
    assert tuple(row(table_for(scenarios), "budget_status")[["A", "B"]]) == ("within", "within")  # no ranges


def test_ranges_add_p10_p90_rows_after_their_point_estimates():
    table = table_for([plan("A"), plan("B", mfu=0.2)], [summary(700.0, 1100.0), summary(1500.0, 2100.0)])
    outputs = list(table[table["section"] == "Output"]["key"])
    assert outputs[:9] == [
        "cost_total_usd", "cost_total_usd_p10", "cost_total_usd_p90",
        "gpu_hours_total", "gpu_hours_total_p10", "gpu_hours_total_p90",
        "wall_clock_days", "wall_clock_days_p10", "wall_clock_days_p90",
    ]
    assert row(table, "cost_total_usd_p10")["item"] == "Total cost P10"
    p90 = row(table, "cost_total_usd_p90")
    assert (p90["A"], p90["B"], p90["Δ B"]) == (1100.0, 2100.0, 1000.0)
    assert row(table, "gpu_hours_total_p10")["Δ B"] == 400.0  # 1500/2 − 700/2
    assert row(table, "wall_clock_days_p90")["A"] == 11.0


@pytest.mark.parametrize(
    ("count", "results", "ranges", "message"),
    [
        pytest.param(1, 1, None, "compare 2 to 4 scenarios, not 1", id="one"),
        pytest.param(5, 5, None, "compare 2 to 4 scenarios, not 5", id="five"),
        pytest.param(2, 1, None, "2 scenarios but 1 results", id="missing-result"),
        pytest.param(2, 2, 3, "2 scenarios but 3 ranges", id="extra-range"),
    ],
)
def test_wrong_counts_raise_a_clear_error(count, results, ranges, message):
    scenarios = [plan(f"S{i}") for i in range(count)]
    with pytest.raises(ValueError, match=message):
        compare.comparison_table(scenarios, [scenario_outputs(scenarios[0])] * results,
                                 None if ranges is None else [summary(1.0, 2.0)] * ranges)


@pytest.mark.parametrize(
    ("names", "unique"),
    [
        pytest.param(["A", "B"], ["A", "B"], id="distinct"),
        pytest.param(["A", "A", "A"], ["A", "A (2)", "A (3)"], id="repeats"),
        pytest.param(["key", "section"], ["key (2)", "section (2)"], id="fixed-columns"),
        pytest.param(["B", "Δ B"], ["B", "Δ B (2)"], id="delta-lookalike-second"),
        pytest.param(["Δ B", "B"], ["Δ B", "B (2)"], id="delta-lookalike-first"),
    ],
)
def test_unique_names(names, unique):
    assert compare.unique_names(names) == unique


def test_shared_names_give_unique_columns():
    table = table_for([plan("Same"), plan("Same", mfu=0.2)])
    assert list(table.columns[3:]) == ["Same", "Same (2)", "Δ Same (2)"]
    assert compare.scenario_columns(table) == ["Same", "Same (2)"]


def test_highlight_marks_cells_that_differ_from_the_first_scenario():
    table = table_for([plan("A"), plan("B", mfu=0.2), plan("C", gpu_type="B200")])
    mask = compare.highlight_mask(table)
    assert list(mask.columns) == list(table.columns)
    assert not mask[["section", "item", "key", "A", "Δ B", "Δ C"]].to_numpy().any()
    by_key = mask.set_index(table["key"])
    assert (by_key.at["mfu", "B"], by_key.at["mfu", "C"]) == (True, False)
    assert (by_key.at["gpu_type", "B"], by_key.at["gpu_type", "C"]) == (False, True)
    assert (by_key.at["budget_status", "B"], by_key.at["budget_status", "C"]) == (False, False)  # all "within"
    assert by_key.at["cost_total_usd", "B"] and by_key.at["cost_total_usd", "C"]


def test_csv_escapes_formula_names_and_keeps_negative_deltas_numeric():
    name = '=HYPERLINK("http://example.com","x")'
    table = table_for([plan("A", mfu=0.2), plan(name)])  # the second is cheaper: negative Δ
    rows = list(csv.reader(io.StringIO(compare.to_csv_bytes(table).decode("utf-8"))))
    assert rows[0][:4] == ["section", "item", "key", "A"]
    assert rows[0][4] == "'" + name
    assert rows[0][5] == "Δ " + name
    cost = next(r for r in rows if r[2] == "cost_total_usd")
    assert float(cost[5]) == pytest.approx(-2.0 * GPU_HOURS_AT_40)  # 2·H − 4·H, written as a number


def test_inputs_table_lists_every_input_of_one_or_more_scenarios():
    table = compare.inputs_table([plan("A")])
    assert list(table.columns) == ["item", "key", "A"]
    assert len(table) == len(Scenario.model_fields) - 2  # all but schema and name
    values = dict(zip(table["key"], table["A"], strict=True))
    assert (values["mfu"], values["gpu_type"], values["active_params"]) == (0.4, "h100", None)
    assert table.set_index("key").at["mfu", "item"] == "MFU"  # the Plan page's label; the unit is in the value
    assert table.set_index("key").at["seq_len", "item"] == "Sequence length"  # no internal names


# Loss matching: L(N, D) = E + A/N^α + B/D^β with the Epoch refit (E 1.8172, A 482.01, B 2085.43, α 0.3478,
# β 0.3658); the expected tokens and sizes below are that formula inverted by hand.
E, A, B, ALPHA, BETA = 1.8172, 482.01, 2085.43, 0.3478, 0.3658


def hand_loss(params, tokens):
    return E + A / params ** ALPHA + B / tokens ** BETA


@pytest.mark.parametrize(
    ("changes", "lever", "key", "expected"),
    [
        pytest.param({"total_params": 7e9, "tokens": 2e11}, "tokens", "tokens",
                     (B / (hand_loss(7e9, 2e12) - E - A / 7e9 ** ALPHA)) ** (1 / BETA), id="tokens"),
        pytest.param({"total_params": 7e9, "tokens": 2e11}, "size", "total_params",
                     (A / (hand_loss(7e9, 2e12) - E - B / 2e11 ** BETA)) ** (1 / ALPHA), id="size-dense"),
    ],
)
def test_match_loss_inverts_the_loss_law(changes, lever, key, expected):
    target = hand_loss(7e9, 2e12)
    matched = compare.match_loss(Scenario(**changes), target, lever)
    assert getattr(matched, key) == pytest.approx(expected, rel=1e-9)
    assert scenario_outputs(matched)["predicted_loss"] == pytest.approx(target, abs=1e-9)


def test_match_loss_by_size_keeps_a_mixture_of_experts_share():
    moe = Scenario(total_params=8e9, active_params=2e9, tokens=1e12)
    target = hand_loss(4e9, 1e12)  # as if the active parameters doubled
    matched = compare.match_loss(moe, target, "size")
    assert matched.active_params == pytest.approx(4e9, rel=1e-9)
    assert matched.total_params == pytest.approx(16e9, rel=1e-9)


@pytest.mark.parametrize(
    ("scenario", "target", "lever", "message"),
    [
        pytest.param(Scenario(name="Tiny", total_params=1e8), 2.0, "tokens",
                     f"Tiny: at 100M parameters no number of tokens brings the loss below {E + A / 1e8 ** ALPHA:.3f}",
                     id="model-too-small"),
        pytest.param(Scenario(name="Short", tokens=1e9), 2.0, "size",
                     f"Short: on 1B tokens no model size brings the loss below {E + B / 1e9 ** BETA:.3f}",
                     id="too-few-tokens"),
        pytest.param(Scenario(name="Huge"), E + 1e-9, "tokens", "Huge: at 7B parameters no number of tokens",
                     id="target-at-the-floor"),
        pytest.param(Scenario(name="Far"), E + B / 2e12 ** BETA + 1e-4, "size",
                     "Far: matching the loss needs total_params", id="out-of-range"),
        pytest.param(Scenario(name="X"), 2.0, "mfu", "match loss by 'mfu': use one of tokens, size", id="bad-lever"),
    ],
)
def test_match_loss_says_when_it_cannot(scenario, target, lever, message):
    with pytest.raises(compare.MatchError, match=re.escape(message)):
        compare.match_loss(scenario, target, lever)


def test_match_options_keeps_the_first_and_lists_what_failed():
    first, fewer, tiny = plan("A", tokens=1e12), plan("B", tokens=1e11), plan("C", total_params=1e8)
    matched, problems = compare.match_options([first, fewer, tiny], "tokens")
    assert matched[0] is first and matched[2] is tiny
    assert compare.option_loss(matched[1]) == pytest.approx(hand_loss(1e9, 1e12), abs=1e-9)
    assert len(problems) == 1 and problems[0].startswith("C: at 100M parameters")


def result(cost, days=10.0, budget=1e6, loss=2.0, feasible=True):
    # The engine's point-estimate status with the default 90 % warning share.
    status = "over" if cost > budget else "warning" if cost > 0.9 * budget else "within"
    return {"cost_total_usd": cost, "wall_clock_days": days, "budget_usd": budget, "predicted_loss": loss,
            "feasible": feasible, "budget_status": status}


@pytest.mark.parametrize(
    ("results", "risks", "expected"),
    [
        pytest.param([result(300e3, 20), result(257e3, 30), result(900e3, 5)], [0.1, 0.2, 0.48],
                     [[], ["cheapest"], ["fastest"]], id="one-each-and-risk-to-the-first"),
        pytest.param([result(300e3, 20), result(300e3, 30)], [0.1, 0.1], [["fastest"], []], id="ties-earn-nothing"),
        # The second is cheapest and fastest but cannot run: the badges go to the best of the plans that run.
        pytest.param([result(300e3, 20), result(1e3, 2, feasible=False), result(400e3, 10)], [0.3, 0.0, 0.2],
                     [["cheapest"], [], ["fastest", "lowest risk"]], id="a-plan-that-cannot-run-earns-nothing"),
    ],
)
def test_badges(results, risks, expected):
    if expected[0] == []:
        expected[0] = ["lowest risk"]
    summaries = [{"prob_over_budget": risk} for risk in risks]
    assert compare.badges(results, summaries) == expected


def test_summary_lines():
    results = [result(300e3), result(257e3), result(1.2e6)]
    summaries = [{"prob_over_budget": p} for p in (0.05, 0.2, 0.999)]
    # B's 20 % is not above the 20 % threshold: within. The chance in the table's own format (99.9 %).
    assert compare.summary_lines(["A", "B", "D"], results, summaries, money) == [
        "Within budget: A, B. Over: D.", "Cheapest: B ($257k)",
        "Highest overrun risk: D, 99.9 % chance of exceeding its budget",
    ]


def test_summary_lines_leave_out_plans_that_cannot_run():
    # C is the cheapest and within its budget, but cannot run: its cost buys no run.
    results = [result(300e3), result(612, feasible=False), result(1.2e6)]
    summaries = [{"prob_over_budget": p} for p in (0.05, 0.0, 0.999)]
    assert compare.summary_lines(["A", "C", "D"], results, summaries, money) == [
        "Within budget: A. Over: D. Cannot run: C.", "Cheapest: A ($300k)",
        "Highest overrun risk: D, 99.9 % chance of exceeding its budget",
    ]


def test_summary_lines_when_no_plan_can_run():
    results = [result(300e3, feasible=False), result(500e3, feasible=False)]
    summaries = [{"prob_over_budget": p} for p in (0.1, 0.3)]
    assert compare.summary_lines(["A", "B"], results, summaries, money) == [
        "Cannot run: A, B.",
        "Highest overrun risk: B, 30 % chance of exceeding its budget",
    ]


def test_the_summary_groups_each_option_by_its_own_status():
    # A and D are under budget at the point estimate but overrun in 49.6 % and 30.3 % of draws (above 20 %): at
    # risk; B is within; C's $1.2M is over its $1M; E near the budget (950k > 90 % of 1M, 10 % chance); F cannot run.
    results = [result(600e3), result(300e3), result(1.2e6), result(700e3), result(950e3), result(100e3, feasible=False)]
    summaries = [{"prob_over_budget": p} for p in (0.496, 0.05, 0.9, 0.303, 0.1, 0.0)]
    names = ["A", "B", "C", "D", "E", "F"]
    line = compare.summary_lines(names, results, summaries, money)[0]
    assert line == ("Within budget: B. Near the budget (warning): E. At risk: A (49.6 %), D (30.3 %). Over: C. "
                    "Cannot run: F.")
    statuses = [compare.headline_value("budget_status", r, s) for r, s in zip(results, summaries, strict=True)]
    assert statuses == ["at risk", "within", "over", "at risk", "warning", "infeasible"]


@pytest.mark.parametrize(
    ("costs", "losses", "expected"),
    [
        pytest.param([300e3, 200e3], [2.049, 2.258], "The cheaper options train a worse model: loss 2.258 vs 2.049",
                     id="cheaper-is-worse"),
        pytest.param([200e3, 300e3], [2.1, 2.3], "B trains a worse model than A: loss 2.300 vs 2.100",
                     id="dearer-is-worse"),
        pytest.param([200e3, 300e3], [2.049, 2.058], None, id="within-0.01"),
    ],
)
def test_loss_banner(costs, losses, expected):
    results = [result(cost, loss=loss) for cost, loss in zip(costs, losses, strict=True)]
    banner = compare.loss_banner(["A", "B"], results)
    assert banner is None if expected is None else banner.startswith(expected)


def test_optimism_note_only_when_the_point_is_below_p10():
    assert compare.optimism_note("A", 100.0, 90.0, 30.0, money) is None
    note = compare.optimism_note("A", 441e3, 460e3, 8.0, money)
    assert note.startswith("A: the point estimate ($441k) is below P10 ($460k), at P8 of the draws.")


def test_a_plan_link_opens_the_same_scenario():
    scenario = plan("Option B", gpu_count=1024)
    link = compare.plan_link("http://127.0.0.1:8501", scenario, plan("Option A"))
    query = dict(parse_qsl(urlsplit(link).query))
    opened = scenario_from_query(query)
    assert link.startswith("http://127.0.0.1:8501/?") and not opened.warnings
    assert opened.scenario == scenario and opened.baseline == plan("Option A")


def test_a_moved_option_says_so_in_its_name():
    matched, _ = compare.match_options([plan("A", tokens=1e12), plan("B" * 120, tokens=1e11)], "tokens")
    assert matched[1].name == ("Matched: " + "B" * 120)[:120]
    unchanged, _ = compare.match_options([plan("A"), plan("Twin")], "tokens")  # already at the same loss
    assert unchanged[1].name == "Twin"


def test_one_mfu_per_option_and_the_layout_s_prediction_labelled():
    # DeepSeek-V3 at its published 35 % (entered) and with the MFU unset (priced at the same published 35 %: no MoE
    # run validated). Tokens per second per GPU at 35 %: 989e12 · 0.35 / (6 · 37e9) = 1,559, in both columns.
    from dashboard.core.presets import presets

    deepseek = next(s for s in presets().values() if s.name.startswith("DeepSeek-V3"))
    table = table_for([deepseek, deepseek.model_copy(update={"mfu": None, "name": "predicted"})])
    first, second = compare.scenario_columns(table)
    tokens = row(table, "tokens_per_s_per_gpu")
    assert tokens[first] == pytest.approx(989e12 * 0.35 / (6 * 37e9), rel=1e-6)
    assert tokens[second] == pytest.approx(tokens[first], rel=1e-9)
    assert (row(table, "throughput.mfu_source")[first], row(table, "throughput.mfu_source")[second]) == (
        "entered", "published")
    predicted = row(table, "throughput.tokens_per_s_per_gpu")
    assert predicted["item"].startswith("Layout's predicted") and predicted[first] < 0.5 * tokens[first]
    # Step time × steps × GPUs = the GPU-hours priced.
    step = row(table, "step_time_s")[first]
    result = scenario_outputs(deepseek)
    assert step * result["optimizer_steps"] * 2048 / 3600 == pytest.approx(result["gpu_hours_ideal"], rel=1e-6)
