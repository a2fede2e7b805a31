"""Loss fits and the compute-optimal split against the published worked numbers (anchors §4.1)."""

import pytest

from dashboard.core import scaling


def _fit(key):
    f = scaling.FITS[key]
    return f.E, f.A, f.B, f.alpha, f.beta


@pytest.mark.parametrize(
    ("fit", "expected"),
    # Chinchilla 70B / 1.4T: 1.937 with Hoffmann's rounded constants, 1.974 with Epoch's refit.
    [("hoffmann2022", 1.937), ("epoch2024", 1.974)],
)
def test_chinchilla_predicted_loss(fit, expected):
    assert scaling.predicted_loss(70e9, 1.4e12, *_fit(fit)) == pytest.approx(expected, abs=1e-3)


@pytest.mark.parametrize(
    ("fit", "flops", "params", "tokens"),
    [
        # anchors-calculators.md §4.1 worked numbers (rounded there, so 3 % tolerance).
        ("hoffmann2022", 1e21, 1.8e9, 91e9),
        ("hoffmann2022", 1e23, 14.6e9, 1.14e12),
        ("hoffmann2022", 1e25, 117e9, 14.3e12),
        ("epoch2024", 1e21, 2.8e9, 60e9),
        ("epoch2024", 1e23, 29e9, 0.57e12),
        ("epoch2024", 1e25, 312e9, 5.3e12),
    ],
)
def test_compute_optimal_split(fit, flops, params, tokens):
    E, A, B, alpha, beta = _fit(fit)
    n_opt, d_opt = scaling.compute_optimal(flops, A, B, alpha, beta)
    assert n_opt == pytest.approx(params, rel=0.03)
    assert d_opt == pytest.approx(tokens, rel=0.03)
    assert 6 * n_opt * d_opt == pytest.approx(flops)


def test_optimum_beats_neighbours():
    E, A, B, alpha, beta = _fit("epoch2024")
    n_opt, d_opt = scaling.compute_optimal(1e23, A, B, alpha, beta)
    best = scaling.predicted_loss(n_opt, d_opt, E, A, B, alpha, beta)
    for factor in (0.8, 1.25):
        assert scaling.predicted_loss(n_opt * factor, d_opt / factor, E, A, B, alpha, beta) > best


def test_tokens_for_loss_reduction_by_hand():
    # B = 410.7, β = 0.28, D = 1e12: data term 410.7 / 1e12^0.28 = 0.18986; minus 0.01 -> D' = (B/0.17986)^(1/β).
    data_term = 410.7 / 1e12**0.28
    expected = (410.7 / (data_term - 0.01)) ** (1 / 0.28)
    assert scaling.tokens_for_loss_reduction(70e9, 1e12, 0.01, 410.7, 0.28) == pytest.approx(expected)
    assert scaling.tokens_for_loss_reduction(70e9, 1e12, 1.0, 410.7, 0.28) == float("inf")
