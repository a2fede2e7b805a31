"""Server-side rerun time of the Plan page after a slider move, against a minimal slider-and-four-charts page.

Both pages run under `streamlit.testing.v1.AppTest` in this process. After one warm-up run each, the first
`st.slider` of each page is moved SAMPLES times, every time to a value not seen before (so every rerun recomputes
instead of hitting a cache, which is cleared once before the warm-ups), and `at.run()` is timed, in wall-clock
and in this process's CPU time (steadier on a shared machine: waiting for a core does not count). The two pages'
samples alternate so that a noisy neighbour slows both alike; each ratio is of their medians.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PLAN_APP = ROOT / "dashboard" / "app.py"
REFERENCE_APP = ROOT / "bench" / "reference_app.py"
SAMPLES = 30
TIMEOUT_S = 60
RATIO_TARGET = 1.3


def _distinct_values(name: str, at: AppTest, count: int) -> list[float | int]:
    """`count` values of the first slider, evenly spread over its range, on its step and all unlike its value."""
    if not at.slider:
        raise SystemExit(f"the {name} page has no st.slider to move")
    slider = at.slider[0]
    kind = type(slider.value)
    steps = round((slider.max - slider.min) / slider.step)
    picks = np.unique(np.round(np.linspace(0, steps, count + 1)).astype(int))
    values = [kind(round(slider.min + int(i) * slider.step, 12)) for i in picks]
    values = [v for v in values if v != slider.value][:count]
    if len(values) < count:
        raise SystemExit(f"the first slider of the {name} page ({slider.label!r}) has fewer than {count + 1} values")
    return values


def main() -> None:
    """Warm both pages up, time the interleaved slider moves, print the medians and their ratio."""
    st.cache_data.clear()
    st.cache_resource.clear()
    apps = {"plan": AppTest.from_file(str(PLAN_APP), default_timeout=TIMEOUT_S),
            "reference": AppTest.from_file(str(REFERENCE_APP), default_timeout=TIMEOUT_S)}
    for name, at in apps.items():
        at.run()
        if at.exception:
            raise SystemExit(f"the {name} page raised: {at.exception[0].value}")
    values = {name: _distinct_values(name, at, SAMPLES) for name, at in apps.items()}
    samples: dict[str, list[float]] = {name: [] for name in apps}
    cpu: dict[str, list[float]] = {name: [] for name in apps}
    for i in range(SAMPLES):
        for name, at in apps.items():
            at.slider[0].set_value(values[name][i])
            started, started_cpu = time.perf_counter(), time.process_time()
            at.run()
            samples[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - started_cpu)
            if at.exception:
                raise SystemExit(f"the {name} page raised at slider value {values[name][i]}: {at.exception[0].value}")
    plan_ms, reference_ms = (statistics.median(samples[name]) * 1e3 for name in apps)
    plan_label = apps["plan"].slider[0].label
    print(f"plan_rerun_ms: {plan_ms:.1f} (median of {SAMPLES} moves of the slider {plan_label!r}, "
          "each to a new value, so no st.cache_data hit)")
    print(f"reference_rerun_ms: {reference_ms:.1f} (one st.slider and four 100-point plotly charts, same moves)")
    print(f"plan_rerun_ratio: {plan_ms / reference_ms:.2f} (target <= {RATIO_TARGET})")
    plan_cpu_ms, reference_cpu_ms = (statistics.median(cpu[name]) * 1e3 for name in apps)
    print(f"plan_rerun_cpu_ms: {plan_cpu_ms:.1f}, reference_rerun_cpu_ms: {reference_cpu_ms:.1f} "
          f"(process CPU time of the same reruns)")
    print(f"plan_rerun_cpu_ratio: {plan_cpu_ms / reference_cpu_ms:.2f} (target <= {RATIO_TARGET})")


if __name__ == "__main__":
    main()
