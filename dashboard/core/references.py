"""Published reference runs: the one place their figures are typed (defaults, chart markers, help and the report).

Each figure is as published; the sources are in docs/method.md.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TstRun:
    """A published Token Superposition Training run against its baseline at matched loss."""

    label: str
    source: str
    gpu_type: str
    baseline_gpu_hours: float
    tst_gpu_hours: float
    baseline_tokens: float
    tst_tokens: float

    @property
    def speedup(self) -> float:
        """Baseline GPU-hours over TST GPU-hours at the same loss."""
        return self.baseline_gpu_hours / self.tst_gpu_hours

    @property
    def token_multiplier(self) -> float:
        """Raw tokens TST reads over the baseline's."""
        return self.tst_tokens / self.baseline_tokens

    def as_dict(self) -> dict[str, str | float]:
        return {
            "label": self.label, "source": self.source, "gpu_type": self.gpu_type,
            "baseline_gpu_hours": self.baseline_gpu_hours, "tst_gpu_hours": self.tst_gpu_hours,
            "baseline_tokens": self.baseline_tokens, "tst_tokens": self.tst_tokens,
        }


@dataclass(frozen=True)
class FailureRecord:
    """Unexpected interruptions of a published training run, as a rate per 1,000 node-days."""

    label: str
    source: str
    interruptions: int
    days: float
    nodes: int

    @property
    def per_1000_node_days(self) -> float:
        return 1000.0 * self.interruptions / (self.days * self.nodes)


# Peng, Gigant, Quesnelle, "Efficient Pre-Training with Token Superposition": a 10B-total / 1B-active MoE on B200.
TST_RUN = TstRun(
    label="published 10B-A1B MoE",
    source="arXiv 2605.06546",
    gpu_type="B200",
    baseline_gpu_hours=12_311.0,
    tst_gpu_hours=4_768.0,
    baseline_tokens=1.05e12,
    tst_tokens=2.0e12,
)

# "The Llama 3 Herd of Models", Table 5: 419 unexpected interruptions in 54 days on 2,048 nodes (16,384 H100).
LLAMA3_405B_FAILURES = FailureRecord(
    label="Llama 3 405B", source="arXiv 2407.21783", interruptions=419, days=54.0, nodes=2_048,
)

# Published dense-training MFU: above this the plan is beyond any published large run (Llama 3 405B 38–43 %,
# PaLM 540B 46.2 %, MegaScale 175B 55.2 %).
PUBLISHED_DENSE_MFU_MAX = 0.6


@dataclass(frozen=True)
class Cluster:
    """A published training run's cluster: how many GPUs one job trained on."""

    label: str
    source: str
    gpus: int


# The largest cluster one published training run names: Llama 3 405B on 16,384 H100 ("The Llama 3 Herd of Models",
# arXiv 2407.21783 §3.3.2 Table 4 and §3.3.4; ../shared/reference/measured-runs.csv row L3-2). Larger published
# figures are platforms (ByteRobust: over 200,000 GPUs across jobs) or projections (Kokolis et al.: 131,072).
LARGEST_TRAINING_CLUSTER = Cluster(label="Llama 3 405B", source="arXiv 2407.21783", gpus=16_384)
