"""The model's shape: layers, width, heads, FFN and vocabulary, given or assumed from the size, and the MoE split.

A shape key left unset follows the parameter count from the published shapes below: the row nearest in
log-parameters to the active parameters (the width a token sees) gives every key the scenario leaves out.
When the width is given but not the heads, heads = d_model / 128 (the head size of Llama 2 and 3) and
multi-head attention (K/V heads = heads); when the width is given but not the FFN, a gated (SwiGLU) FFN is
8/3·d_model wide (Shazeer 2020, as Llama) and a plain one 4·d_model (GPT-3).

MoE (`n_experts` routed, `experts_per_token` of them per token, `n_shared_experts` always used): the routed
experts hold n_experts / (n_experts − experts_per_token) of the parameters a token does not use, so with
active parameters N_a of N: expert parameters = n_experts · (N − N_a) / (n_experts − experts_per_token); the
rest (attention, shared experts, embeddings) is dense. Without `active_params` the active count follows from
the shape: one expert is (3 if gated else 2) · d_model · ffn_hidden_size parameters per layer, and a token
leaves n_experts − experts_per_token of them unused in every layer.

Every function broadcasts over numpy arrays; NaN marks a key left unset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

HEAD_DIM = 128  # heads = d_model / 128 when the width is given without heads (Llama 2 and 3 head size)
GATED_FFN_RATIO = 8.0 / 3.0  # SwiGLU width for the same parameters as a 4·d plain FFN (Shazeer 2020; Llama)
PLAIN_FFN_RATIO = 4.0  # GPT-3 (Brown et al. 2020 §2.1: d_ff = 4·d_model)
MOE_AGREEMENT = 0.05  # active_params and the active count the MoE keys give must agree within 5 %
SHAPE_KEYS = ("n_layers", "d_model", "n_heads", "n_kv_heads", "ffn_hidden_size", "ffn_type", "vocab_size")


@dataclass(frozen=True)
class Published:
    """One published model's shape: parameters (10⁹), layers, width, heads, K/V heads, FFN width and kind,
    vocabulary, and where it is printed."""

    name: str
    params_b: float
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    ffn_hidden_size: int
    ffn_type: str
    vocab_size: int
    source: str


GPT3 = "Brown et al. 2020 (GPT-3), arXiv 2005.14165, Table 2.1 (d_ff = 4·d_model, vocabulary 50,257)"
LLAMA2 = "Touvron et al. 2023 (Llama 2), arXiv 2307.09288, Table 1 and released params.json"
LLAMA3 = "Llama Team 2024 (Llama 3), arXiv 2407.21783, Table 3"
# Ordered by size. Korthikanti et al. 2022 (arXiv 2205.05198) Table 3 gives the 530B and 1T shapes;
# Chinchilla 70B (Hoffmann et al. 2022, Table 4: 80 layers, 8,192, 64 heads) agrees with Llama 2 70B's depth
# and width; Gopher 280B is Rae et al. 2021 (arXiv 2112.11446) Table 1.
TABLE = (
    Published("GPT-3 Small", 0.125, 12, 768, 12, 12, 3072, "plain", 50257, GPT3),
    Published("GPT-3 Medium", 0.35, 24, 1024, 16, 16, 4096, "plain", 50257, GPT3),
    Published("GPT-3 Large", 0.76, 24, 1536, 16, 16, 6144, "plain", 50257, GPT3),
    Published("GPT-3 XL", 1.3, 24, 2048, 24, 24, 8192, "plain", 50257, GPT3),
    Published("GPT-3 2.7B", 2.7, 32, 2560, 32, 32, 10240, "plain", 50257, GPT3),
    Published("Llama 2 7B", 6.74, 32, 4096, 32, 32, 11008, "gated", 32000, LLAMA2),
    Published("Llama 3 8B", 8.03, 32, 4096, 32, 8, 14336, "gated", 128256, LLAMA3),
    Published("Llama 2 13B", 13.0, 40, 5120, 40, 40, 13824, "gated", 32000, LLAMA2),
    Published("Llama 2 70B", 69.0, 80, 8192, 64, 8, 28672, "gated", 32000, LLAMA2),
    Published("GPT-3 175B", 174.6, 96, 12288, 96, 96, 49152, "plain", 50257, GPT3),
    Published("Gopher 280B", 280.0, 80, 16384, 128, 128, 65536, "plain", 32000,
              "Rae et al. 2021 (Gopher), arXiv 2112.11446, Table 1"),
    Published("Llama 3.1 405B", 405.9, 126, 16384, 128, 8, 53248, "gated", 128256, LLAMA3),
    Published("MT-NLG 530B", 529.6, 105, 20480, 128, 128, 81920, "plain", 51200,
              "Korthikanti et al. 2022, arXiv 2205.05198, Table 3"),
    Published("GPT 1T", 1008.0, 128, 25600, 160, 160, 102400, "plain", 51200,
              "Korthikanti et al. 2022, arXiv 2205.05198, Table 3"),
)
_LOG_PARAMS = np.log(np.array([row.params_b * 1e9 for row in TABLE]))
_EDGES = (_LOG_PARAMS[1:] + _LOG_PARAMS[:-1]) / 2.0  # nearest row in log-parameters
_COLUMNS = {key: np.array([float(getattr(row, key)) for row in TABLE])
            for key in ("n_layers", "d_model", "n_heads", "n_kv_heads", "ffn_hidden_size", "vocab_size")}
_GATED = np.array([1.0 if row.ffn_type == "gated" else 0.0 for row in TABLE])


def table_index(active_params) -> np.ndarray:
    """Row of `TABLE` nearest in log-parameters to each active parameter count."""
    return np.searchsorted(_EDGES, np.log(np.fmax(np.asarray(active_params, dtype=float), 1.0)))


def ffn_multiplier(gated) -> np.ndarray:
    """Weight matrices of one FFN (or expert): 3 gated (SwiGLU), 2 plain."""
    return np.where(np.asarray(gated, dtype=float) > 0, 3.0, 2.0)


def expert_params(total_params, active_params, n_experts, experts_per_token) -> np.ndarray:
    """Routed-expert parameters of the whole model: n / (n − k) of the parameters a token leaves unused when the
    MoE keys are given, else (no keys) total − active, the parameters a token does not use."""
    unused = np.asarray(total_params, dtype=float) - np.asarray(active_params, dtype=float)
    n = np.asarray(n_experts, dtype=float)
    k = np.asarray(experts_per_token, dtype=float)
    keyed = np.isfinite(n) & np.isfinite(k) & (n > k)
    with np.errstate(invalid="ignore", divide="ignore"):
        experts = np.where(keyed, unused * n / np.where(keyed, n - k, 1.0), unused)
    return np.fmin(experts, np.asarray(total_params, dtype=float))


def moe_factor(n_experts, experts_per_token, n_shared_experts) -> np.ndarray:
    """FFN activations a token leaves per layer, in experts: routed top-k plus shared (1 for a dense model)."""
    k = np.asarray(experts_per_token, dtype=float)
    routed = np.isfinite(np.asarray(n_experts, dtype=float)) & np.isfinite(k)
    return np.where(routed, np.nan_to_num(k) + np.asarray(n_shared_experts, dtype=float), 1.0)


def resolve(active_params, total_params, n_layers, d_model, n_heads, n_kv_heads, ffn_hidden_size, ffn_gated,
            vocab_size, n_experts, experts_per_token) -> dict[str, np.ndarray]:
    """Every shape key per row, the unset (NaN) ones assumed (see the module text). `ffn_gated` is 1 gated,
    0 plain, NaN unset. A MoE row without an FFN width takes the expert width its parameter split gives.
    `shape_assumed` is 1 where the layers or the width come from the size (a published model's, not this one's)."""
    row = table_index(active_params)
    table = {key: column[row] for key, column in _COLUMNS.items()}
    width_given = np.isfinite(np.asarray(d_model, dtype=float))
    layers = np.where(np.isnan(n_layers), table["n_layers"], n_layers)
    width = np.where(width_given, d_model, table["d_model"])
    heads_given = np.isfinite(np.asarray(n_heads, dtype=float))
    heads = np.where(heads_given, n_heads,
                     np.where(width_given, np.fmax(np.rint(width / HEAD_DIM), 1.0), table["n_heads"]))
    kv = np.where(np.isfinite(np.asarray(n_kv_heads, dtype=float)), n_kv_heads,
                  np.where(heads_given | width_given, heads, table["n_kv_heads"]))
    gated = np.where(np.isnan(ffn_gated), _GATED[row], ffn_gated)
    by_width = width * np.where(gated > 0, GATED_FFN_RATIO, PLAIN_FFN_RATIO)
    default_ffn = np.where(width_given, np.rint(by_width), table["ffn_hidden_size"])
    n = np.asarray(n_experts, dtype=float)
    k = np.asarray(experts_per_token, dtype=float)
    moe = np.isfinite(n) & np.isfinite(k) & (n > k)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_expert = (np.asarray(total_params, dtype=float) - active_params) / np.where(moe, n - k, 1.0)
        expert_ffn = np.rint(per_expert / (ffn_multiplier(gated) * width * layers))
    ffn = np.where(np.isfinite(np.asarray(ffn_hidden_size, dtype=float)), ffn_hidden_size,
                   np.where(moe & (expert_ffn >= 1), expert_ffn, default_ffn))
    vocab = np.where(np.isnan(vocab_size), table["vocab_size"], vocab_size)
    assumed = (np.isnan(np.asarray(n_layers, dtype=float)) | ~width_given).astype(float)
    return {"n_layers": layers, "d_model": width, "n_heads": heads, "n_kv_heads": kv, "ffn_hidden_size": ffn,
            "ffn_gated": gated, "vocab_size": vocab, "shape_assumed": assumed}


def resolve_arrays(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`resolve` on engine input columns (`dashboard.core.engine.scenario_arrays`), in their float precision (Monte
    Carlo's float32 draws stay float32)."""
    columns = [arrays[key] for key in RESOLVE_INPUTS]
    if all(isinstance(column, np.ndarray) and column.shape == (1,) and column.dtype == np.float64
           for column in columns):  # one scenario: cached by its inputs
        return {key: value.copy() for key, value in _resolve_one(b"".join(c.tobytes() for c in columns)).items()}
    out = resolve(*columns)
    dtype = np.asarray(arrays["total_params"]).dtype
    return {key: value.astype(dtype, copy=False) for key, value in out.items()} if dtype.kind == "f" else out


RESOLVE_INPUTS = ("active_params", "total_params", "n_layers", "d_model", "n_heads", "n_kv_heads", "ffn_hidden_size",
                  "ffn_gated", "vocab_size", "n_experts", "experts_per_token")


@lru_cache(maxsize=1024)
def _resolve_one(key: bytes) -> dict[str, np.ndarray]:
    values = np.frombuffer(key, dtype=np.float64).copy()
    return resolve(*(values[index:index + 1] for index in range(len(RESOLVE_INPUTS))))


@dataclass(frozen=True)
class ModelShape:
    """A scenario's shape with every key filled; `assumed` names the keys taken from the size, `source` the
    published model they come from ("given" when none is assumed)."""

    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    ffn_hidden_size: int
    ffn_type: str
    vocab_size: int
    assumed: tuple[str, ...]
    source: str

    @property
    def from_the_size(self) -> bool:
        """Whether the layers or the width are a published model's, taken from the size (as `shape_assumed`):
        heads, FFN or vocabulary filled in around a given depth and width leave the shape the user's."""
        return "n_layers" in self.assumed or "d_model" in self.assumed


def _nan(value: float | int | None) -> float:
    return math.nan if value is None else float(value)


def _gated(ffn_type: str | None) -> float:
    return math.nan if ffn_type is None else float(ffn_type == "gated")


def shape_of(total_params: float, active_params: float, given: dict[str, Any]) -> ModelShape:
    """The shape of a model of these sizes with the shape keys in `given` (None = assumed)."""
    return _shape_of(total_params, active_params, tuple(sorted(given.items())))


@lru_cache(maxsize=1024)
def _shape_of(total_params: float, active_params: float, items: tuple[tuple[str, Any], ...]) -> ModelShape:
    given = dict(items)
    values = {key: given.get(key) for key in SHAPE_KEYS}

    def column(key: str) -> np.ndarray:
        return np.array([_nan(given.get(key))])

    out = resolve(np.array([active_params]), np.array([total_params]), column("n_layers"), column("d_model"),
                  column("n_heads"), column("n_kv_heads"), column("ffn_hidden_size"),
                  np.array([_gated(values["ffn_type"])]), column("vocab_size"), column("n_experts"),
                  column("experts_per_token"))
    assumed = tuple(key for key in SHAPE_KEYS if values[key] is None)
    row = TABLE[int(table_index(np.array([active_params]))[0])]
    source = f"{row.name} ({row.source})" if assumed else "given"
    return ModelShape(
        n_layers=int(out["n_layers"][0]), d_model=int(out["d_model"][0]), n_heads=int(out["n_heads"][0]),
        n_kv_heads=int(out["n_kv_heads"][0]), ffn_hidden_size=int(out["ffn_hidden_size"][0]),
        ffn_type="gated" if out["ffn_gated"][0] > 0 else "plain", vocab_size=int(out["vocab_size"][0]),
        assumed=assumed, source=source,
    )


class Shaped(Protocol):
    """What `model_shape` reads of a plan (`dashboard.core.scenario.Scenario`, which imports this module), besides
    its ``SHAPE_KEYS``."""

    total_params: float
    n_experts: int | None
    experts_per_token: int | None

    @property
    def active(self) -> float: ...


def model_shape(scenario: Shaped) -> ModelShape:
    """The scenario's shape: its own keys, the rest assumed from its size (see the module text)."""
    given = {key: getattr(scenario, key) for key in SHAPE_KEYS}
    given |= {"n_experts": scenario.n_experts, "experts_per_token": scenario.experts_per_token}
    return shape_of(scenario.total_params, scenario.active, given)


def describe(shape: ModelShape) -> str:
    """"126 layers × 16,384, 128 heads (8 KV)" (the K/V heads only when fewer than the heads)."""
    kv = f" ({shape.n_kv_heads:,} KV)" if shape.n_kv_heads != shape.n_heads else ""
    return f"{shape.n_layers:,} layers × {shape.d_model:,}, {shape.n_heads:,} heads{kv}"


def active_from_shape(total_params: float, shape: ModelShape, n_experts: int, experts_per_token: int) -> float:
    """Active parameters a MoE of this shape has: total − (n − k) unused experts in every layer."""
    expert = float(ffn_multiplier(shape.ffn_type == "gated")) * shape.d_model * shape.ffn_hidden_size
    return total_params - (n_experts - experts_per_token) * expert * shape.n_layers
