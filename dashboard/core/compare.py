"""Side-by-side comparison of 2–4 scenarios: the inputs that differ, the headline outputs and their differences.

The table holds raw values (the engine's numbers, the scenario's inputs); pages and the report format and
highlight them. `to_csv_bytes` exports it with the formula-injection escaping of `dashboard.core.safe_csv`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from numbers import Real
from typing import Any
from urllib.parse import urlencode

import pandas as pd

from dashboard.core import catalogue, programme, risk, scaling
from dashboard.core.engine import PlanResult
from dashboard.core.safe_csv import to_safe_csv
from dashboard.core.scenario import Scenario, ScenarioError, scenario_from_dict
from dashboard.core.scenario_query import scenario_to_query
from dashboard.format import short

MIN_SCENARIOS = 2
MAX_SCENARIOS = 4
FIXED_COLUMNS = ("section", "item", "key")
DELTA_PREFIX = "Δ "
INPUT_SECTION = "Input"
OUTPUT_SECTION = "Output"

# Every scenario key except the file version and the scenario's own name, in the schema's order.
INPUT_KEYS = tuple(name for name in Scenario.model_fields if name not in {"schema_", "name"})

# Headline outputs in the Plan page's order, with its labels (units are in the formatted values).
HEADLINES = tuple((key, catalogue.label(key)) for key in (*catalogue.HEADLINE_OUTPUTS, "feasibility_status"))

# How fast each option runs (`dashboard.core.throughput`), after the headlines: the MFU the plan prices with, its
# evidence grade, the step and tokens per second at that MFU, then the layout's own prediction, labelled as such.
THROUGHPUT_ROWS = tuple((key, catalogue.label(key)) for key in (
    "mfu_used", "throughput.mfu_source", "step_time_s", "tokens_per_s_per_gpu", "throughput.mfu_predicted",
    "throughput.step_time_s", "throughput.tokens_per_s_per_gpu"))

# The programme around the main run (`dashboard.core.programme`), after the throughput rows: its totals, then one
# row per stage kind present in any option, the kinds' costs summed (0 in an option without that kind).
PROGRAMME_ROWS = tuple((key, catalogue.label(key)) for key in (
    "programme.total_usd", "programme.final_run_share", "programme.gpu_hours", "programme.calendar_days"))
STAGE_COST_PREFIX = "programme.stage_cost."
# A stage's numbers read in the units of the programme's totals: GPU-hours, dollars, calendar days.
STAGE_NUMBERS = {"gpu_hours": "programme.gpu_hours", "cost_usd": "programme.total_usd",
                 "calendar_days": "programme.calendar_days"}

# Monte Carlo rows (`MonteCarlo.summary()` percentiles), each placed after its point estimate's row.
RANGE_ROWS = {
    key: tuple((percentile, catalogue.label(f"{percentile}.{key}")) for percentile in ("p10", "p90"))
    for key in ("cost_total_usd", "gpu_hours_total", "wall_clock_days")
}


def input_label(key: str) -> str:
    """The Plan page's label of an input (dashboard.core.catalogue)."""
    return catalogue.label(key)


def _loss(value: float) -> str:
    return catalogue.text("predicted_loss", value)  # three decimals: 0.01 nats matter


def _clashes(candidate: str, taken: set[str]) -> bool:
    """A column name already used, or one that is (or whose Δ column would be) another's Δ column name."""
    return (candidate in taken or f"{DELTA_PREFIX}{candidate}" in taken
            or (candidate.startswith(DELTA_PREFIX) and candidate.removeprefix(DELTA_PREFIX) in taken))


def unique_names(names: list[str]) -> list[str]:
    """Scenario names made unique as column names: a repeat gets " (2)", " (3)", …; the fixed columns are taken."""
    taken = set(FIXED_COLUMNS)
    unique = []
    for name in names:
        candidate, number = name, 1
        while _clashes(candidate, taken):
            number += 1
            candidate = f"{name} ({number})"
        taken.add(candidate)
        unique.append(candidate)
    return unique


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same kind (true/false is not the number 1; two NaN are the same)."""
    if _is_number(a) and _is_number(b):
        return bool(a == b or (math.isnan(a) and math.isnan(b)))
    return type(a) is type(b) and a == b


def _delta(value: Any, first: Any) -> float:
    """value − first for two numbers; NaN for text, true/false, a missing value or NaN."""
    if _is_number(value) and _is_number(first):
        return float(value) - float(first)
    return math.nan


def input_rows(scenarios: list[Scenario], *, differing_only: bool) -> list[tuple[str, str, list[Any]]]:
    """(key, label, one value per scenario) for every input, or only those whose value is not the same in all."""
    dumps = [scenario.model_dump() for scenario in scenarios]  # the programme as its stages' objects
    rows = []
    for key in INPUT_KEYS:
        values = [dump[key] for dump in dumps]
        if differing_only and all(_same(value, values[0]) for value in values[1:]):
            continue
        rows.append((key, input_label(key), values))
    return rows


def inputs_table(scenarios: list[Scenario]) -> pd.DataFrame:
    """Every input of one or more scenarios: columns item, key, then one per scenario (names made unique)."""
    if not scenarios:
        raise ValueError("inputs_table needs at least one scenario")
    columns = unique_names([scenario.name for scenario in scenarios])
    records = [
        {"item": label, "key": key, **dict(zip(columns, values, strict=True))}
        for key, label, values in input_rows(scenarios, differing_only=False)
    ]
    return pd.DataFrame.from_records(records, columns=["item", "key", *columns])


def stage_text(field: str, value: float) -> str:
    """One number of a programme stage ("gpu_hours", "cost_usd" or "calendar_days") as the catalogue writes its
    programme total: "1.24k", "$12.3k", "0.101 days"."""
    return catalogue.text(STAGE_NUMBERS[field], value)


def entry_name(key: str) -> str:
    """The catalogue entry that formats a comparison row: a stage kind's cost reads as the programme's dollars."""
    return STAGE_NUMBERS["cost_usd"] if key.startswith(STAGE_COST_PREFIX) else key


def stage_cost_rows(results: list[PlanResult]) -> list[tuple[str, str, list[float]]]:
    """(key, label, each option's cost) for every stage kind present in any option, in calendar order; an option's
    stages of one kind are summed, an option without the kind costs 0."""
    costs: list[dict[str, float]] = [{} for _ in results]
    for option, result in zip(costs, results, strict=True):
        for stage in result["programme"]["stages"]:
            option[stage["kind"]] = option.get(stage["kind"], 0.0) + stage["cost_usd"]
    kinds = sorted({kind for option in costs for kind in option}, key=programme.ORDER.index)
    return [(f"{STAGE_COST_PREFIX}{kind}", f"Stage cost: {programme.KIND_LABELS[kind]}",
             [option.get(kind, 0.0) for option in costs]) for kind in kinds]


def headline_value(key: str, result: Mapping[str, Any], summary: dict[str, Any] | None = None) -> Any:
    """A headline output as the Plan page shows it: the budget status is `risk.budget_verdict` ("infeasible" when
    the plan cannot run; with its Monte Carlo `summary`, "at risk" when the chance of overrun passes the
    threshold)."""
    if key == "budget_status":
        return risk.budget_verdict(result, summary)
    value: Any = result
    for part in key.split("."):  # "throughput.step_time_s": a nested output
        value = value[part]
    return value


def comparison_table(
    scenarios: list[Scenario], results: list[PlanResult], ranges: list[dict[str, Any]] | None = None
) -> pd.DataFrame:
    """Differing inputs, then headline outputs (and P10/P90 rows with `ranges`), then how fast each runs
    (`THROUGHPUT_ROWS`), then the programme (`PROGRAMME_ROWS` and one cost row per stage kind), one column per
    scenario.

    `results` are `engine.scenario_outputs` of each scenario and `ranges` their `MonteCarlo.summary()`, in the same
    order. Columns: section, item, key, one per scenario named by its name (made unique), then `Δ <name>` for
    each scenario after the first: its value minus the first scenario's, NaN where either value is not a number.
    """
    count = len(scenarios)
    if not MIN_SCENARIOS <= count <= MAX_SCENARIOS:
        raise ValueError(f"compare {MIN_SCENARIOS} to {MAX_SCENARIOS} scenarios, not {count}")
    if len(results) != count:
        raise ValueError(f"{count} scenarios but {len(results)} results: pass one engine result per scenario")
    if ranges is not None and len(ranges) != count:
        raise ValueError(f"{count} scenarios but {len(ranges)} ranges: pass one Monte Carlo summary per scenario")

    rows = [(INPUT_SECTION, label, key, values) for key, label, values in input_rows(scenarios, differing_only=True)]
    for key, label in HEADLINES:
        values = [headline_value(key, result, None if ranges is None else ranges[position])
                  for position, result in enumerate(results)]
        rows.append((OUTPUT_SECTION, label, key, values))
        if ranges is not None:
            rows.extend(
                (OUTPUT_SECTION, range_label, f"{key}_{percentile}", [summary[percentile][key] for summary in ranges])
                for percentile, range_label in RANGE_ROWS.get(key, ())
            )
    rows.extend((OUTPUT_SECTION, label, key, [headline_value(key, result) for result in results])
                for key, label in THROUGHPUT_ROWS + PROGRAMME_ROWS)
    rows.extend((OUTPUT_SECTION, label, key, values) for key, label, values in stage_cost_rows(results))

    columns = unique_names([scenario.name for scenario in scenarios])
    deltas = [f"{DELTA_PREFIX}{name}" for name in columns[1:]]
    records = []
    for section, label, key, values in rows:
        record: dict[str, Any] = {"section": section, "item": label, "key": key}
        record.update(zip(columns, values, strict=True))
        record.update({delta: _delta(value, values[0]) for delta, value in zip(deltas, values[1:], strict=True)})
        records.append(record)
    table = pd.DataFrame.from_records(records, columns=[*FIXED_COLUMNS, *columns, *deltas])
    table[columns] = table[columns].astype(object)
    table[deltas] = table[deltas].astype(float)
    return table


def scenario_columns(table: pd.DataFrame) -> list[str]:
    """The per-scenario value columns of a comparison table (after the fixed ones, before the Δ columns)."""
    count = (len(table.columns) - len(FIXED_COLUMNS) + 1) // 2
    return list(table.columns[len(FIXED_COLUMNS):len(FIXED_COLUMNS) + count])


def highlight_mask(table: pd.DataFrame) -> pd.DataFrame:
    """True for every scenario cell whose value differs from the first scenario's in its row; False elsewhere."""
    columns = scenario_columns(table)
    mask = pd.DataFrame(False, index=table.index, columns=table.columns)
    first = table[columns[0]]
    for column in columns[1:]:
        mask[column] = [not _same(value, base) for value, base in zip(table[column], first, strict=True)]
    return mask


def to_csv_bytes(table: pd.DataFrame) -> bytes:
    """The comparison table as formula-injection-safe CSV bytes; a programme's stages as their JSON."""
    return to_safe_csv(table.map(lambda value: json.dumps(value, ensure_ascii=False)
                                 if isinstance(value, list | tuple) else value))


# Comparable options: the seeds' rule is to compare methods only at equal loss.
LOSS_TOLERANCE = 0.01  # nats per token: predicted losses further apart than this buy different models
MATCH_LEVERS = {"tokens": "training tokens", "size": "model size"}
MATCHED_PREFIX = "Matched: "
NAME_CHARS = 120


class MatchError(ValueError):
    """An option whose predicted loss cannot be moved to the target with the chosen lever; one-line message."""


def comparable(losses: list[float]) -> bool:
    """True when the predicted losses lie within LOSS_TOLERANCE of each other."""
    return max(losses) - min(losses) <= LOSS_TOLERANCE


def loss_banner(names: list[str], results: list[PlanResult]) -> str | None:
    """A warning when the options' predicted losses differ by more than LOSS_TOLERANCE, else None."""
    losses = [result["predicted_loss"] for result in results]
    worst, best = max(losses), min(losses)
    if comparable(losses):
        return None
    costs = [result["cost_total_usd"] for result in results]
    cheapest = costs.index(min(costs))
    if losses[cheapest] == worst:
        lead = "The cheaper options train a worse model"
    else:
        lead = f"{names[losses.index(worst)]} trains a worse model than {names[losses.index(best)]}"
    return (f"{lead}: loss {_loss(worst)} vs {_loss(best)} (nats per token). Options with different predicted losses "
            "buy different models; compare them at equal loss (“Match loss”).")


def _loss_fit(scenario: Scenario) -> scaling.LossFit:
    return scaling.FITS[scenario.scaling_fit]


def match_loss(scenario: Scenario, target_loss: float, lever: str) -> Scenario:
    """The scenario with its tokens (lever "tokens") or its size ("size") moved so its predicted loss is the target.

    Inverts L(N, D) = E + A/N^α + B/D^β (dashboard.core.scaling) at the scenario's fit: D = (B / (L − E − A/N^α))^(1/β)
    at fixed active parameters N, or N = (A / (L − E − B/D^β))^(1/α) at fixed tokens D; a mixture of experts keeps
    its active share of the total. Raises MatchError when no amount of the lever reaches the target or the result
    leaves the scenario's allowed range.
    """
    if lever not in MATCH_LEVERS:
        raise MatchError(f"match loss by {lever!r}: use one of {', '.join(MATCH_LEVERS)}")
    fit = _loss_fit(scenario)
    data = scenario.to_json_dict()
    if lever == "tokens":
        remaining = target_loss - fit.E - fit.A / scenario.active ** fit.alpha
        if remaining <= 0:
            floor = target_loss - remaining
            raise MatchError(f"{scenario.name}: at {short(scenario.active)} parameters no number of tokens brings the "
                             f"loss below {_loss(floor)}; match by model size instead")
        data["tokens"] = (fit.B / remaining) ** (1.0 / fit.beta)
    else:
        remaining = target_loss - fit.E - fit.B / scenario.tokens ** fit.beta
        if remaining <= 0:
            floor = target_loss - remaining
            raise MatchError(f"{scenario.name}: on {short(scenario.tokens)} tokens no model size brings the loss "
                             f"below {_loss(floor)}; match by tokens instead")
        factor = (fit.A / remaining) ** (1.0 / fit.alpha) / scenario.active
        data["total_params"] = scenario.total_params * factor
        if scenario.active_params is not None:
            data["active_params"] = scenario.active_params * factor
    try:
        return scenario_from_dict(data)
    except ScenarioError as error:
        raise MatchError(f"{scenario.name}: matching the loss needs {error}") from None


def option_loss(scenario: Scenario) -> float:
    """The scenario's predicted loss, L(N_active, D) at its own fit (the engine's formula)."""
    fit = _loss_fit(scenario)
    return float(scaling.predicted_loss(scenario.active, scenario.tokens, fit.E, fit.A, fit.B, fit.alpha, fit.beta))


def _same_size(a: Scenario, b: Scenario) -> bool:
    return math.isclose(a.tokens, b.tokens, rel_tol=1e-9) and math.isclose(a.total_params, b.total_params,
                                                                            rel_tol=1e-9)


def match_options(scenarios: list[Scenario], lever: str) -> tuple[list[Scenario], list[str]]:
    """The first option as it is and every other moved to its predicted loss, its name starting "Matched: " so a
    table or report says so; an option that cannot be moved is kept as it is and its reason listed."""
    target = option_loss(scenarios[0])
    matched, problems = [scenarios[0]], []
    for scenario in scenarios[1:]:
        try:
            moved = match_loss(scenario, target, lever)
            if _same_size(moved, scenario):
                matched.append(scenario)  # already at the target loss
            else:
                matched.append(moved.model_copy(update={"name": f"{MATCHED_PREFIX}{scenario.name}"[:NAME_CHARS]}))
        except MatchError as error:
            matched.append(scenario)
            problems.append(str(error))
    return matched, problems


def match_note(name: str, before: Scenario, after: Scenario, before_usd: float, after_usd: float, money: Any,
               count: Any) -> str | None:
    """What matching the loss moved and what it costs, in one line; None when nothing moved."""
    if _same_size(before, after):
        return None
    if before.tokens != after.tokens:
        moved = f"tokens {count(before.tokens)} → {count(after.tokens)}"
    else:
        moved = f"parameters {count(before.total_params)} → {count(after.total_params)}"
    change = after_usd - before_usd
    sign = "+" if change >= 0 else "-"
    return (f"{name}: {moved}, loss {_loss(option_loss(before))} → {_loss(option_loss(after))}; total cost "
            f"{money(before_usd)} → {money(after_usd)} ({sign}{money(abs(change))})")


def badges(results: list[PlanResult], summaries: list[dict[str, Any]]) -> list[list[str]]:
    """Per option: "cheapest", "fastest", "lowest risk" where it alone holds the lowest total cost, wall-clock or
    chance of exceeding its budget among the options that can run (a tie, or a plan that cannot run, gives no
    badge)."""
    runs = [result["feasible"] for result in results]
    measures = {
        "cheapest": [result["cost_total_usd"] for result in results],
        "fastest": [result["wall_clock_days"] for result in results],
        "lowest risk": [summary["prob_over_budget"] for summary in summaries],
    }
    earned: list[list[str]] = [[] for _ in results]
    for badge, values in measures.items():
        running = [value for value, run in zip(values, runs, strict=True) if run]
        if not running:
            continue
        lowest = min(running)
        if running.count(lowest) == 1:
            earned[next(i for i, value in enumerate(values) if runs[i] and value == lowest)].append(badge)
    return earned


def summary_lines(names: list[str], results: list[PlanResult], summaries: list[dict[str, Any]],
                  money: Any) -> list[str]:
    """The lines a reviewer reads first: each option's budget verdict (`risk.verdict_line`, the same verdict as its
    status row), the cheapest of the options that can run, and the highest overrun risk."""
    runs = [result["feasible"] for result in results]
    costs = [result["cost_total_usd"] for result in results]
    running = [position for position, run in enumerate(runs) if run]
    risks = [summary["prob_over_budget"] for summary in summaries]
    riskiest = risks.index(max(risks))
    verdicts = [risk.budget_verdict(result, summary) for result, summary in zip(results, summaries, strict=True)]
    lines = [risk.verdict_line(names, verdicts, risks)]
    if running:
        cheapest = min(running, key=costs.__getitem__)
        lines.append(f"Cheapest: {names[cheapest]} ({money(costs[cheapest])})")
    lines.append(f"Highest overrun risk: {names[riskiest]}, {catalogue.text('prob_over_budget', risks[riskiest])} "
                 "chance of exceeding its budget")
    return lines


def optimism_note(name: str, point_usd: float, p10_usd: float, point_rank: float, money: Any) -> str | None:
    """Why a P10 above the point estimate is not a bug: the ranges are skewed towards higher cost."""
    if p10_usd <= point_usd:
        return None
    return (f"{name}: the point estimate ({money(point_usd)}) is below P10 ({money(p10_usd)}), at P{point_rank:.0f} "
            "of the draws. Its input ranges lean towards higher cost (lower MFU, more failures, longer runs are "
            "likelier than the opposite), so most draws cost more than the plan's single number: the estimate "
            "is optimistic; read P50 as the likely cost.")


def plan_link(base_url: str, scenario: Scenario, baseline: Scenario | None = None) -> str:
    """The Plan page's shareable address for a scenario (and a pinned baseline)."""
    query = urlencode(scenario_to_query(scenario, baseline))
    return f"{base_url.rstrip('/')}/" + (f"?{query}" if query else "")
