"""Uncertainty of a plan: Monte Carlo ranges of cost, GPU-hours and wall-clock, and a one-at-a-time tornado.

Each uncertain input has a low and a high end given in the scenario as multiples of its likely value (the
scenario's own value). Draws are triangular(low, likely, high), or log-normal with low and high as the 5th and
95th percentiles (its median is then √(low·high), which is the likely value when the range is symmetric on a
log scale). Inputs are drawn independently; a draw beyond what a scenario allows (MFU above 1, a TST speedup
below 1) is set to that bound. Draws are priced by `engine.cost_arrays`, the same function the point estimate uses,
in single precision (float32: seven significant digits, far finer than the Monte Carlo error of about 0.3 %
at 100,000 draws, and twice as fast). A plan whose ranges are all zero-width is its point estimate in every
draw. A seed fixes every number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dashboard.core import engine, layout, programme, throughput
from dashboard.core.hardware import generation_of
from dashboard.core.scenario import Scenario

DEFAULT_DRAWS = 10_000
DEFAULT_SEED = 0
MAX_DRAWS = 1_000_000
CHUNK_DRAWS = 8_192  # draws priced per engine call: the arrays stay in the CPU cache
DRAW_DTYPE = np.float32
UNIFORM_BITS = 24  # float32 holds k / 2²⁴ exactly, so uniforms stay strictly below 1
Z_95 = 1.6448536269514722  # standard normal 95th percentile
OUTPUTS = ("cost_total_usd", "gpu_hours_total", "wall_clock_days")
PERCENTILES = (10, 50, 90)
CONFIDENCE_LEVELS = (0.8, 0.9)
MFU_BOUNDS = (0.01, 1.0)  # the scenario's bounds on mfu
LAYOUT_KEYS = ("tensor_parallel", "pipeline_parallel", "zero_stage")


@dataclass(frozen=True)
class UncertainInput:
    """One input that Monte Carlo varies: its scenario key, the prefix of its range keys and a label."""

    key: str
    range_name: str
    label: str
    floor: float = 0.0
    ceiling: float = np.inf


INPUTS = (
    UncertainInput("mfu", "mfu", "MFU", ceiling=1.0),
    UncertainInput("price_reserved_per_gpu_hour", "price_reserved", "Reserved $/GPU-hour"),
    UncertainInput("price_on_demand_per_gpu_hour", "price_on_demand", "On-demand $/GPU-hour"),
    UncertainInput("price_spot_per_gpu_hour", "price_spot", "Spot $/GPU-hour"),
    UncertainInput("node_failures_per_1000_node_days", "node_failures", "Node failure rate"),
    UncertainInput("spot_interruptions_per_1000_node_days", "spot_interruptions", "Spot interruption rate"),
    UncertainInput("tokens", "tokens", "Training tokens"),
    UncertainInput("experiment_overhead", "experiments", "Experiment overhead"),
    UncertainInput("tst_speedup", "tst_speedup", "TST speedup", floor=1.0),
)


@dataclass(frozen=True)
class InputRange:
    """An input's low, likely and high values in its own unit, as stated (before draws are held to bounds)."""

    input: UncertainInput
    low: float
    likely: float
    high: float


@dataclass(frozen=True)
class TornadoBar:
    """Total cost with one input at its low and at its high end, every other input at its likely value."""

    input: UncertainInput
    input_low: float
    input_high: float
    cost_low_usd: float
    cost_high_usd: float

    @property
    def swing_usd(self) -> float:
        return abs(self.cost_high_usd - self.cost_low_usd)


@dataclass(frozen=True)
class MonteCarlo:
    """Draws of the three headline outputs and what a planner reads off them."""

    draws: int
    seed: int
    shape: str
    budget_usd: float
    point: dict[str, float]
    samples: dict[str, np.ndarray]
    tornado: tuple[TornadoBar, ...]
    feasible: bool = True  # the plan runs (memory per GPU and layout, `dashboard.core.feasibility`)

    def percentile(self, output: str, q: float) -> float:
        return float(np.percentile(self.samples[output], q))

    def point_rank(self, output: str) -> float:
        """Where the point estimate falls among the draws, as a percentile (0-100)."""
        return 100.0 * float(np.mean(self.samples[output] <= self.point[output]))

    def mean(self, output: str) -> float:
        """Mean of the draws, summed as differences from the point estimate (exact when nothing varies)."""
        return self.point[output] + float(np.mean(self.samples[output] - self.point[output]))

    @property
    def prob_over_budget(self) -> float:
        return float(np.mean(self.samples["cost_total_usd"] > self.budget_usd))

    def budget_for_confidence(self, level: float) -> float:
        """The budget that the total stays within with probability `level`."""
        return float(np.quantile(self.samples["cost_total_usd"], level))

    def summary(self) -> dict[str, Any]:
        """Plain numbers for the CLI's JSON and the report: percentiles, overrun probability, tornado."""
        result: dict[str, Any] = {
            f"p{q}": {output: self.percentile(output, q) for output in OUTPUTS} for q in PERCENTILES
        }
        result["mean"] = {output: self.mean(output) for output in OUTPUTS}
        result["prob_over_budget"] = self.prob_over_budget
        for level in CONFIDENCE_LEVELS:
            result[f"budget_for_{round(100 * level)}_percent_usd"] = self.budget_for_confidence(level)
        result["tornado"] = {
            bar.input.key: {
                "input_low": bar.input_low, "input_high": bar.input_high,
                "low": bar.cost_low_usd, "high": bar.cost_high_usd,
            }
            for bar in self.tornado
        }
        result["monte_carlo"] = {"draws": self.draws, "seed": self.seed, "shape": self.shape}
        result["feasible"] = self.feasible
        return result


def as_drawn(scenario: Scenario) -> Scenario:
    """The scenario as its draws price it: its layout fixed at the point estimate's (a plan's layout is chosen
    once; the draws vary what it costs, not how it is laid out), and its MFU a number: an unset `mfu` becomes the
    MFU the plan uses (the layout's prediction, or the published runs' median outside every validated region), and
    its range, where the scenario keeps the defaults set for a guessed MFU, the prediction's band for the plan's
    region (`throughput.error_band`), widened to the published runs' span where those are priced. A scenario
    already so is returned as it is (`monte_carlo` hands its drawn scenario on to `simulate`, `tornado` and
    `input_ranges`)."""
    if scenario.mfu is not None and all(getattr(scenario, key) is not None for key in LAYOUT_KEYS):
        return scenario
    point = engine.cost_arrays(engine.scenario_arrays([scenario]), scenario.programme)
    lay = point["plan"]["layout"]
    update: dict[str, float | None] = {key: int(lay[key][0]) for key in LAYOUT_KEYS}
    if scenario.mfu is not None:
        return scenario.model_copy(update=update)
    used = float(point["mfu_used"][0])  # the prediction, or the published runs' median outside every region
    update["mfu"] = min(max(used, MFU_BOUNDS[0]), MFU_BOUNDS[1])
    fields = Scenario.model_fields
    if (scenario.range_mfu_low, scenario.range_mfu_high) == (fields["range_mfu_low"].default,
                                                              fields["range_mfu_high"].default):
        moe = scenario.n_experts is not None or scenario.active < scenario.total_params
        args = (generation_of(scenario.gpu_type), scenario.precision, scenario.total_params, scenario.gpu_count, moe)
        band = throughput.error_band(*args)
        low, high = 1.0 - band, 1.0 + band
        published = throughput.published_fallback(*args)
        if published is not None:  # the published runs' span, at least as wide as the widest held-out band
            low, high = min(low, published.low / published.median), max(high, published.high / published.median)
        update |= {"range_mfu_low": low, "range_mfu_high": high}
    return scenario.model_copy(update=update)


def input_ranges(scenario: Scenario) -> tuple[InputRange, ...]:
    """Every uncertain input's low / likely / high in its own unit (as the draws price them: `as_drawn`)."""
    data = as_drawn(scenario).model_dump()
    ranges = []
    for item in INPUTS:
        likely = float(data[item.key])
        low = likely * data[f"range_{item.range_name}_low"]
        high = likely * data[f"range_{item.range_name}_high"]
        ranges.append(InputRange(item, low, likely, high))
    return tuple(ranges)


class _Sampler:
    """Draws every uncertain input at once, one row each, into buffers reused chunk after chunk.

    Reusing the buffers matters: a fresh array for every step of the inverse CDF costs more than the
    arithmetic at this size. Per-input constants are spread to full rows once, so every step is a plain
    element-wise operation.
    """

    def __init__(self, ranges: tuple[InputRange, ...], shape: str, width: int) -> None:
        def rows(values: list[float]) -> np.ndarray:
            spread = np.empty((len(values), width), dtype=DRAW_DTYPE)
            spread[:] = np.array(values, dtype=DRAW_DTYPE)[:, None]
            return spread

        low, likely, high = ([getattr(r, end) for r in ranges] for end in ("low", "likely", "high"))
        self.shape = shape
        self.rows = len(ranges)
        self.bounded = [(row, r.input.floor, r.input.ceiling) for row, r in enumerate(ranges)
                        if r.input.floor > 0 or np.isfinite(r.input.ceiling)]
        if shape == "lognormal":
            # median · exp(σz) with the median √(low·high); a zero likely value stays zero.
            ratio = np.divide(high, low, out=np.ones(len(ranges)), where=np.array(low) > 0)
            sigma = np.log(ratio) / (2.0 * Z_95)
            self.minus_two_variance = rows(list(-2.0 * sigma**2))
            self.median = rows(list(np.sqrt(np.multiply(low, high))))
        else:
            # Inverse CDF of triangular(a, c, b): a + √(u·(b−a)(c−a)) below u = (c−a)/(b−a), else
            # b − √((1−u)(b−a)(b−c)); computed as both roots and a mask, without branches.
            width_ab = np.subtract(high, low)
            self.low, self.high = rows(low), rows(high)
            self.left_scale = rows(list(width_ab * np.subtract(likely, low)))
            self.right_scale = rows(list(width_ab * np.subtract(high, likely)))
            self.split = rows(list(np.divide(np.subtract(likely, low), width_ab, out=np.zeros(len(ranges)),
                                             where=width_ab > 0)))
        self.values = np.empty(len(ranges) * width, dtype=DRAW_DTYPE)
        self.work = np.empty(len(ranges) * (width + 1), dtype=DRAW_DTYPE)
        self.mask = np.empty(len(ranges) * width, dtype=bool)

    @staticmethod
    def _uniforms(rng: np.random.Generator, out: np.ndarray) -> None:
        """Uniforms k / 2²⁴ on [0, 1) into `out`, row by row, from the top 24 bits of each 32-bit half of the
        generator's raw 64-bit words (small blocks come from the heap rather than fresh pages)."""
        words = (out.shape[1] + 1) // 2
        for row in out:
            bits = rng.bit_generator.random_raw(words).view(np.uint32)[:out.shape[1]]
            np.right_shift(bits, 32 - UNIFORM_BITS, out=bits)
            np.multiply(bits, DRAW_DTYPE(2.0**-UNIFORM_BITS), out=row)

    def draw(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """`count` draws of every input (rows); the array is overwritten by the next call."""
        rows = self.rows
        values = self.values[:rows * count].reshape(rows, count)
        if self.shape == "lognormal":
            self._scaled_normals(rng, values)
            np.exp(values, out=values)
            values *= self.median[:, :count]
            for row, floor, ceiling in self.bounded:
                np.clip(values[row], floor, ceiling, out=values[row])
            return values
        work = self.work[:rows * count].reshape(rows, count)
        mask = self.mask[:rows * count].reshape(rows, count)
        self._uniforms(rng, work)
        np.less(work, self.split[:, :count], out=mask)
        np.multiply(work, self.left_scale[:, :count], out=values)
        np.sqrt(values, out=values)
        values += self.low[:, :count]
        np.subtract(1.0, work, out=work)
        work *= self.right_scale[:, :count]
        np.sqrt(work, out=work)
        np.subtract(self.high[:, :count], work, out=work)
        values -= work
        values *= mask
        values += work
        return values  # triangular draws lie within [low, high], already inside the bounds

    def _scaled_normals(self, rng: np.random.Generator, out: np.ndarray) -> None:
        """σ·z for standard normals z, into `out`, by Box–Muller: each pair of uniforms gives r·cos θ and r·sin θ
        with r = √(−2σ² ln u), so σ costs one multiply per pair."""
        rows, count = out.shape
        half = (count + 1) // 2
        radius = self.work[:rows * half].reshape(rows, half)
        angle = self.work[rows * half:2 * rows * half].reshape(rows, half)
        self._uniforms(rng, radius)
        self._uniforms(rng, angle)
        np.subtract(1.0, radius, out=radius)  # (0, 1]: the logarithm stays finite
        np.log(radius, out=radius)
        radius *= self.minus_two_variance[:, :half]
        np.sqrt(radius, out=radius)
        angle *= DRAW_DTYPE(2.0 * np.pi)
        np.cos(angle, out=out[:, :half])
        out[:, :half] *= radius
        np.sin(angle[:, :count - half], out=out[:, half:])
        out[:, half:] *= radius[:, :count - half]


def simulate(scenario: Scenario, draws: int, seed: int) -> dict[str, np.ndarray]:
    """`draws` Monte Carlo values of each headline output; the same seed gives the same values.

    Inputs are drawn and priced in float32, `CHUNK_DRAWS` at a time through `engine.cost_arrays`, so the arrays stay
    in the CPU cache. With every range zero-width each draw is the point estimate, exactly. A scenario at the
    far end of the bounds whose costs overflow float32 (3.4e38) is priced again in float64, from the same draws.
    """
    scenario = as_drawn(scenario)
    samples = _priced(scenario, draws, seed, DRAW_DTYPE)
    if all(np.isfinite(values).all() for values in samples.values()):
        return samples
    return _priced(scenario, draws, seed, np.float64)


def _priced(scenario: Scenario, draws: int, seed: int, dtype: type) -> dict[str, np.ndarray]:
    ranges = input_ranges(scenario)
    base = engine.scenario_arrays([scenario])
    point = engine.cost_arrays(base, scenario.programme)
    if all(item.low == item.high for item in ranges):
        return {output: np.full(draws, point[output][0]) for output in OUTPUTS}
    stages = programme.scaled(point) if scenario.programme else ()  # each draw moves the stages with the main run
    rng = np.random.default_rng(seed)
    base = {key: values.astype(dtype) for key, values in base.items()}
    # The draws price at a fixed MFU and layout (`as_drawn`): the step-time model has nothing to add to them.
    base.update({key: np.full(1, np.nan, dtype=dtype) for key in layout.LINK_KEYS})
    keys = [item.input.key for item in ranges]
    sampler = _Sampler(ranges, scenario.range_shape, min(CHUNK_DRAWS, draws))
    samples: dict[str, np.ndarray] = {output: np.empty(draws, dtype=dtype) for output in OUTPUTS}
    for start in range(0, draws, CHUNK_DRAWS):
        count = min(CHUNK_DRAWS, draws - start)
        arrays = dict(base)
        arrays.update(zip(keys, sampler.draw(rng, count), strict=True))
        result = engine.cost_arrays(arrays, stages)
        for output in OUTPUTS:
            samples[output][start:start + count] = result[output]
    return samples


def tornado(scenario: Scenario) -> tuple[TornadoBar, ...]:
    """One-at-a-time swings of total cost, largest first (inputs that do not move the total come last)."""
    scenario = as_drawn(scenario)
    ranges = input_ranges(scenario)
    ends = [tuple(float(np.clip(v, r.input.floor, r.input.ceiling)) for v in (r.low, r.high)) for r in ranges]
    arrays = engine.scenario_arrays([scenario])
    arrays.update({item.input.key: np.full(2 * len(ranges), item.likely) for item in ranges})
    for row, item in enumerate(ranges):
        arrays[item.input.key][2 * row:2 * row + 2] = ends[row]
    cost = np.broadcast_to(engine.cost_arrays(arrays, scenario.programme)["cost_total_usd"], (2 * len(ranges),))
    bars = [
        TornadoBar(item.input, ends[row][0], ends[row][1], float(cost[2 * row]), float(cost[2 * row + 1]))
        for row, item in enumerate(ranges)
    ]
    return tuple(sorted(bars, key=lambda bar: bar.swing_usd, reverse=True))


def monte_carlo(scenario: Scenario, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED) -> MonteCarlo:
    """Monte Carlo of a scenario's cost, GPU-hours and wall-clock days over its input ranges."""
    if not 1 <= draws <= MAX_DRAWS:
        raise ValueError(f"draws = {draws:,}: use 1 to {MAX_DRAWS:,}")
    if seed < 0:
        raise ValueError(f"seed = {seed}: use a whole number of 0 or more")
    scenario = as_drawn(scenario)
    point = engine.cost_arrays(engine.scenario_arrays([scenario]), scenario.programme)
    return MonteCarlo(
        draws=draws,
        seed=seed,
        shape=scenario.range_shape,
        budget_usd=scenario.budget_usd,
        point={output: float(point[output][0]) for output in OUTPUTS},
        samples=simulate(scenario, draws, seed),
        tornado=tornado(scenario),
        feasible=bool(point["plan"]["feasible"][0]),
    )
