"""Tests for bayesjudge.core.naive: Wilson and Wald intervals for the judged-correct share p."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from bayesjudge.core.naive import naive

# statsmodels' "normal" method is the Wald interval.
SM_METHOD = {"wilson": "wilson", "wald": "normal"}


def _random_counts(seed: int, size: int):
    rng = np.random.default_rng(seed)
    n = np.exp(rng.uniform(0, np.log(1e6), size)).round().astype(int)
    k = rng.binomial(n, rng.beta(0.5, 0.5, size))
    # Force a share of the exact edges k = 0 and k = n.
    k[:50] = 0
    k[50:100] = n[50:100]
    return k, n


@pytest.mark.parametrize("method", ["wilson", "wald"])
@pytest.mark.parametrize("alpha", [0.001, 0.05, 0.1, 0.32])
def test_matches_statsmodels_on_random_counts(method, alpha):
    k, n = _random_counts(seed=11, size=5_000)
    est, lo, hi = naive(k, n, alpha=alpha, method=method)
    # Reference: statsmodels.stats.proportion.proportion_confint(k, n, alpha, method).
    sm_lo, sm_hi = proportion_confint(k, n, alpha=alpha, method=SM_METHOD[method])
    np.testing.assert_allclose(est, k / n, rtol=0, atol=0)
    np.testing.assert_allclose(lo, sm_lo, rtol=0, atol=1e-12)
    np.testing.assert_allclose(hi, sm_hi, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["wilson", "wald"])
def test_matches_statsmodels_scalar_small_n(method):
    for n in range(1, 31):
        for k in range(n + 1):
            est, lo, hi = naive(k, n, method=method)
            sm_lo, sm_hi = proportion_confint(k, n, alpha=0.05, method=SM_METHOD[method])
            assert abs(lo - sm_lo) <= 1e-12 and abs(hi - sm_hi) <= 1e-12, (k, n)
            assert isinstance(est, np.floating) and isinstance(lo, np.floating)


def test_single_value_pasted_from_statsmodels():
    # statsmodels 0.15.0: proportion_confint(400, 1000, 0.05, "wilson")
    #   -> (0.37007478121137727, 0.4306905704857338)
    est, lo, hi = naive(400, 1000)
    assert est == 0.4
    assert lo == pytest.approx(0.37007478121137727, abs=1e-12)
    assert hi == pytest.approx(0.4306905704857338, abs=1e-12)


def test_wilson_edges_are_exact():
    # At k = 0 the Wilson lower bound is exactly 0 and the upper is z^2 / (n + z^2).
    z2 = 1.959963984540054**2
    _, lo, hi = naive([0, 10], 10)
    assert lo[0] == 0.0 and hi[1] == 1.0
    assert hi[0] == pytest.approx(z2 / (10 + z2), abs=1e-15)
    assert lo[1] == pytest.approx(10 / (10 + z2), abs=1e-15)


def test_wald_degenerates_at_edges():
    _, lo, hi = naive([0, 7], 7, method="wald")
    np.testing.assert_array_equal(lo, [0.0, 1.0])
    np.testing.assert_array_equal(hi, [0.0, 1.0])


def test_broadcasting_and_writeable_output():
    out = naive(np.array([[0], [5], [10]]), np.array([10, 20]))
    assert all(a.shape == (3, 2) for a in out)
    out.estimate[0, 0] = 0.5  # broadcast results are real arrays, not read-only views
    assert out.lower[2, 1] < 0.5 < out.upper[2, 1]


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 10**7),
    frac=st.floats(0, 1),
    alpha=st.floats(1e-6, 0.999),
    method=st.sampled_from(["wilson", "wald"]),
)
def test_properties(n, frac, alpha, method):
    k = round(frac * n)
    est, lo, hi = naive(k, n, alpha=alpha, method=method)
    assert 0.0 <= lo <= est <= hi <= 1.0
    # A smaller alpha never gives a narrower interval (both intervals are centred sets
    # growing with z).
    _, lo2, hi2 = naive(k, n, alpha=alpha / 2, method=method)
    assert lo2 <= lo + 1e-15 and hi2 >= hi - 1e-15


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 10**6), frac=st.floats(0, 1))
def test_wilson_symmetry(n, frac):
    # Swapping "correct" and "incorrect" mirrors the interval: [1 - hi(n-k), 1 - lo(n-k)].
    k = round(frac * n)
    _, lo, hi = naive(k, n)
    _, lo_m, hi_m = naive(n - k, n)
    assert lo == pytest.approx(1 - hi_m, abs=1e-12)
    assert hi == pytest.approx(1 - lo_m, abs=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"k": -1, "n": 10}, r"k must be a non-negative whole-number count; got \[-1\]"),
        ({"k": 2.5, "n": 10}, r"k must be a non-negative whole-number count; got \[2.5\]"),
        ({"k": np.nan, "n": 10}, r"k must be a non-negative whole-number count; got \[nan\]"),
        ({"k": 1, "n": 0}, r"n must be at least 1; got \[0\]"),
        ({"k": 1, "n": -3}, r"n must be a non-negative whole-number count"),
        ({"k": 1, "n": np.inf}, r"n must be a non-negative whole-number count; got \[inf\]"),
        ({"k": 11, "n": 10}, r"k=11 > n=10"),
        ({"k": [1, 12], "n": [10, 10]}, r"k=12 > n=10"),
        ({"k": "3", "n": 10}, r"k must be a whole-number count; got values of type <U1"),
        ({"k": True, "n": 10}, r"k must be a whole-number count; got values of type bool"),
        ({"k": 1, "n": 10, "alpha": 0}, r"alpha must be in \(0, 1\)"),
        ({"k": 1, "n": 10, "alpha": 1.0}, r"alpha must be in \(0, 1\)"),
        ({"k": 1, "n": 10, "alpha": np.nan}, r"alpha must be in \(0, 1\)"),
        ({"k": 1, "n": 10, "alpha": "x"}, r"alpha must be a number in \(0, 1\)"),
        ({"k": 1, "n": 10, "method": "exact"}, r"method must be one of 'wilson', 'wald'"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        naive(**kwargs)
