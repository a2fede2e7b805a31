"""Median seconds of two calls timed alternately, so that a noisy neighbour slows both alike."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def paired_medians_s(measured: Callable[[], object], reference: Callable[[], object], rounds: int,
                     calls: int = 1) -> tuple[float, float]:
    """Median seconds per call of `measured` and `reference` over `rounds` alternating rounds of `calls` calls
    each, after one warm-up call of each."""
    samples: tuple[list[float], list[float]] = ([], [])
    measured(), reference()
    for _ in range(rounds):
        for call, seconds in zip((measured, reference), samples, strict=True):
            started = time.perf_counter()
            for _ in range(calls):
                call()
            seconds.append((time.perf_counter() - started) / calls)
    return statistics.median(samples[0]), statistics.median(samples[1])
