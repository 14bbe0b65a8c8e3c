"""Tests for bayesjudge.core.youden: Youden's J and ΔJ with Wald, Agresti-Caffo, Newcombe."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats import proportion as statsmodels_proportion

from bayesjudge.core.youden import youden, youden_difference

METHODS = ("wald", "agresti-caffo", "newcombe")
Z95 = float(stats.norm.isf(0.025))


# ----------------------------------------------------------------------------------------
# Independent scalar references (transcribed from the papers, plain Python floats)
# ----------------------------------------------------------------------------------------


def wilson(x, m, z):
    """Wilson (1927) score interval in the textbook form (p + z²/2m ± z√(...))/(1 + z²/m)."""
    p = x / m
    denom = 1 + z * z / m
    centre = (p + z * z / (2 * m)) / denom
    half = z * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / denom
    return centre - half, centre + half


def reference_linear(props, signs, offset, alpha, method):
    """Interval for offset + sum(sign * x/m) over independent proportions, unclipped.

    Wald: Agresti & Caffo (2000) eq. (1); adjusted: their "add one success and one failure"
    to each sample; Newcombe (1998) method 10 generalised by MOVER (Zou & Donner 2008).
    """
    z = float(stats.norm.ppf(1 - alpha / 2))
    est = offset + sum(s * x / m for (x, m), s in zip(props, signs, strict=True))
    if method == "newcombe":
        lo_sq = hi_sq = 0.0
        for (x, m), s in zip(props, signs, strict=True):
            lo, hi = wilson(x, m, z)
            p = x / m
            if s > 0:
                lo_sq += (p - lo) ** 2
                hi_sq += (hi - p) ** 2
            else:
                lo_sq += (hi - p) ** 2
                hi_sq += (p - lo) ** 2
        return est, est - math.sqrt(lo_sq), est + math.sqrt(hi_sq)
    add = 1 if method == "agresti-caffo" else 0
    adj = [((x + add) / (m + 2 * add), m + 2 * add) for x, m in props]
    centre = offset + sum(s * p for (p, _), s in zip(adj, signs, strict=True))
    se = math.sqrt(sum(p * (1 - p) / mm for p, mm in adj))
    return est, centre - z * se, centre + z * se


def ref_youden(tn, m0, tp, m1, alpha, method):
    est, lo, hi = reference_linear([(tn, m0), (tp, m1)], (1, 1), -1.0, alpha, method)
    return est, max(lo, -1.0), min(hi, 1.0)


def ref_difference(a, b, alpha, method):
    props = [(a[0], a[1]), (a[2], a[3]), (b[0], b[1]), (b[2], b[3])]
    est, lo, hi = reference_linear(props, (1, 1, -1, -1), 0.0, alpha, method)
    return est, max(lo, -2.0), min(hi, 2.0)


# ----------------------------------------------------------------------------------------
# Reference values
# ----------------------------------------------------------------------------------------


def test_wald_by_hand():
    # q^0 = 0.7, q^1 = 0.9: J^ = 0.6, Var = 0.7*0.3/100 + 0.9*0.1/100 = 0.003,
    # half-width = 1.959963984540054 * sqrt(0.003) = 0.10735155...
    est, lo, hi = youden(70, 100, 90, 100)
    half = 1.959963984540054 * math.sqrt(0.003)
    assert est == pytest.approx(0.6, abs=1e-15)
    assert (lo, hi) == pytest.approx((0.6 - half, 0.6 + half), abs=1e-14)


def test_agresti_caffo_by_hand():
    # tn = tp = m0 = m1 = 5: adjusted q = 6/7 each, centre 2*6/7 - 1 = 5/7,
    # Var = 2 * (6/7)(1/7)/7; upper clipped to 1; estimate stays at the raw J^ = 1.
    est, lo, hi = youden(5, 5, 5, 5, method="agresti-caffo")
    var = 2 * (6 / 7) * (1 / 7) / 7
    assert est == 1.0 and hi == 1.0
    assert lo == pytest.approx(5 / 7 - Z95 * math.sqrt(var), abs=1e-14)


@pytest.mark.parametrize("method", METHODS)
def test_matches_transcribed_reference(method):
    rng = np.random.default_rng(3)
    m0 = rng.integers(1, 300, 500)
    m1 = rng.integers(1, 300, 500)
    tn = rng.integers(0, m0 + 1)
    tp = rng.integers(0, m1 + 1)
    tn[:20], tp[20:40] = 0, m1[20:40]  # edges q^ = 0 and 1
    for alpha in (0.05, 0.2):
        got = youden(tn, m0, tp, m1, alpha=alpha, method=method)
        ref = np.array(
            [
                ref_youden(int(a), int(b), int(c), int(d), alpha, method)
                for a, b, c, d in zip(tn, m0, tp, m1, strict=True)
            ]
        )
        for field, col in zip(got, ref.T, strict=True):
            np.testing.assert_allclose(field, col, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("method", "sm_method"),
    [("wald", "wald"), ("agresti-caffo", "agresti-caffo"), ("newcombe", "newcomb")],
)
def test_matches_statsmodels(method, sm_method):
    # statsmodels.stats.proportion.confint_proportions_2indep(count1, nobs1, count2, nobs2,
    # compare="diff") is an interval for p1 - p2; J = q1 - (1 - q0), so p1 = tp/m1 and
    # p2 = (m0 - tn)/m0. statsmodels does not clip, we clip to [-1, 1].
    sm = statsmodels_proportion
    rng = np.random.default_rng(4)
    m0 = rng.integers(1, 400, 300)
    m1 = rng.integers(1, 400, 300)
    tn = rng.integers(0, m0 + 1)
    tp = rng.integers(0, m1 + 1)
    tn[:10] = m0[:10]
    tp[10:20] = 0
    est, lo, hi = youden(tn, m0, tp, m1, alpha=0.1, method=method)
    sm_lo, sm_hi = sm.confint_proportions_2indep(
        tp, m1, m0 - tn, m0, compare="diff", method=sm_method, alpha=0.1
    )
    np.testing.assert_allclose(est, tp / m1 - (m0 - tn) / m0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(lo, np.clip(sm_lo, -1, 1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(hi, np.clip(sm_hi, -1, 1), rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_difference_matches_transcribed_reference(method):
    rng = np.random.default_rng(5)
    size = 300
    ms = rng.integers(1, 200, (4, size))
    xs = rng.integers(0, ms + 1)
    got = youden_difference(xs[0], ms[0], xs[1], ms[1], xs[2], ms[2], xs[3], ms[3], method=method)
    ref = np.array(
        [
            ref_difference(
                (xs[0, i], ms[0, i], xs[1, i], ms[1, i]),
                (xs[2, i], ms[2, i], xs[3, i], ms[3, i]),
                0.05,
                method,
            )
            for i in range(size)
        ]
    )
    for field, col in zip(got, ref.T, strict=True):
        np.testing.assert_allclose(field, col, rtol=0, atol=1e-12)


def test_difference_newcombe_against_statsmodels_wilson():
    # MOVER from statsmodels' own Wilson limits: proportion_confint(x, m, method="wilson").
    sm = statsmodels_proportion
    a, b = (51, 100, 89, 100), (57, 100, 95, 100)
    lims = [
        sm.proportion_confint(x, m, alpha=0.05, method="wilson")
        for x, m in zip(a[::2] + b[::2], a[1::2] + b[1::2], strict=True)
    ]
    p = [x / m for x, m in zip(a[::2] + b[::2], a[1::2] + b[1::2], strict=True)]
    est = p[0] + p[1] - p[2] - p[3]
    lo = est - math.sqrt(
        sum((p[i] - lims[i][0]) ** 2 for i in (0, 1))
        + sum((lims[i][1] - p[i]) ** 2 for i in (2, 3))
    )
    hi = est + math.sqrt(
        sum((lims[i][1] - p[i]) ** 2 for i in (0, 1))
        + sum((p[i] - lims[i][0]) ** 2 for i in (2, 3))
    )
    got = youden_difference(*a, *b, method="newcombe")
    assert got == pytest.approx((est, lo, hi), abs=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_difference_reduces_to_youden_when_b_is_known(method):
    # With 10^12 items in each group of set b its proportions are known (here exactly 0.5
    # and 0.8, J_b = 0.3), so the Delta J interval is the J_a interval shifted by -J_b.
    big = 10**12
    d = youden_difference(40, 60, 70, 90, big // 2, big, 4 * big // 5, big, method=method)
    j = youden(40, 60, 70, 90, method=method)
    assert d == pytest.approx(tuple(v - 0.3 for v in j), abs=1e-6)


# ----------------------------------------------------------------------------------------
# Properties
# ----------------------------------------------------------------------------------------


@st.composite
def calibration(draw, max_m=500):
    m0 = draw(st.integers(1, max_m))
    m1 = draw(st.integers(1, max_m))
    return draw(st.integers(0, m0)), m0, draw(st.integers(0, m1)), m1


@settings(max_examples=200, deadline=None)
@given(calibration(), st.sampled_from(METHODS), st.floats(0.001, 0.5))
def test_interval_properties(counts, method, alpha):
    est, lo, hi = youden(*counts, alpha=alpha, method=method)
    assert -1 <= lo <= hi <= 1
    if method != "agresti-caffo":  # Agresti-Caffo is centred at the adjusted estimate
        assert lo <= est + 1e-15 and est - 1e-15 <= hi
    # A wider level never gives a shorter interval.
    lo2, hi2 = youden(*counts, alpha=alpha / 2, method=method)[1:]
    assert lo2 <= lo + 1e-15 and hi2 >= hi - 1e-15


@settings(max_examples=200, deadline=None)
@given(calibration(200), calibration(200), st.sampled_from(METHODS))
def test_difference_is_antisymmetric(a, b, method):
    # Swapping the sets negates the estimate and mirrors the interval.
    d_ab = youden_difference(*a, *b, method=method)
    d_ba = youden_difference(*b, *a, method=method)
    assert d_ab.estimate == pytest.approx(-d_ba.estimate, abs=1e-14)
    assert d_ab.lower == pytest.approx(-d_ba.upper, abs=1e-12)
    assert d_ab.upper == pytest.approx(-d_ba.lower, abs=1e-12)
    assert -2 <= d_ab.lower <= d_ab.upper <= 2


def test_broadcasting_and_scalar_output():
    est, lo, hi = youden([70, 80], 100, 90, [100, 200])
    assert est.shape == lo.shape == hi.shape == (2,)
    est, lo, hi = youden(70, 100, 90, 100)
    assert np.ndim(est) == 0 and isinstance(est, np.floating)
    d = youden_difference(70, 100, 90, 100, [[60], [65]], 100, 90, [100, 120, 140])
    assert d.estimate.shape == (2, 3)


# ----------------------------------------------------------------------------------------
# Coverage: exact enumeration and simulation
# ----------------------------------------------------------------------------------------


def exact_coverage(q0, q1, m0, m1, method):
    """Coverage of J = q0 + q1 - 1 summed over every (tn, tp) with its binomial probability."""
    tn = np.arange(m0 + 1)[:, None]
    tp = np.arange(m1 + 1)[None, :]
    weight = stats.binom.pmf(tn, m0, q0) * stats.binom.pmf(tp, m1, q1)
    _, lo, hi = youden(tn, m0, tp, m1, method=method)
    j = q0 + q1 - 1
    return float((weight * ((lo <= j) & (j <= hi))).sum())


SETTINGS = [(0.7, 0.9, 100, 100), (0.6, 0.8, 50, 50), (0.85, 0.97, 40, 60)]


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("method", METHODS)
def test_simulated_coverage_matches_enumeration(setting, method):
    # 20,000 simulated calibration sets; the simulated coverage must agree with the exact
    # (enumerated) coverage within 3 Monte Carlo standard errors.
    q0, q1, m0, m1 = setting
    rng = np.random.default_rng(2024)
    reps = 20_000
    tn, tp = rng.binomial(m0, q0, reps), rng.binomial(m1, q1, reps)
    _, lo, hi = youden(tn, m0, tp, m1, method=method)
    j = q0 + q1 - 1
    sim = np.mean((lo <= j) & (j <= hi))
    exact = exact_coverage(q0, q1, m0, m1, method)
    mc_se = math.sqrt(exact * (1 - exact) / reps)
    assert abs(sim - exact) <= 3 * mc_se, (sim, exact, mc_se)


def test_exact_coverage_levels():
    # Enumerated (no Monte Carlo error) coverage of the nominal 95% intervals.
    # Measured: (q0, q1, m0, m1) -> Wald / Agresti-Caffo / Newcombe
    #   (0.7, 0.9, 100, 100): 0.9419 / 0.9503 / 0.9528
    #   (0.6, 0.8, 50, 50):   0.9422 / 0.9466 / 0.9512
    #   (0.85, 0.97, 40, 60): 0.9128 / 0.9500 / 0.9476
    #   (0.95, 0.95, 15, 15): 0.7821 / 0.9799 / 0.9392
    # Wald under-covers everywhere (badly for small groups with q near 1); Agresti-Caffo and
    # Newcombe stay within 1 point of nominal at these group sizes, with Agresti-Caffo
    # conservative at very small m. The +-0.01 band is the accuracy stated in the docstring
    # for groups of 40-100 items (Newcombe dips to ~0.93 at 20-30 items with q near 1).
    for setting in SETTINGS:
        assert exact_coverage(*setting, "wald") < 0.945
        for method in ("agresti-caffo", "newcombe"):
            assert abs(exact_coverage(*setting, method) - 0.95) <= 0.01
    small = (0.95, 0.95, 15, 15)
    assert exact_coverage(*small, "wald") < 0.80
    assert exact_coverage(*small, "agresti-caffo") >= 0.95


def exact_coverage_difference(qa, qb, m, method):
    """Coverage of Delta J over every (tn_a, tp_a, tn_b, tp_b) (four m-item groups)."""
    x = np.arange(m + 1)
    axes = [x.reshape([-1 if i == k else 1 for i in range(4)]) for k in range(4)]
    qs = (qa[0], qa[1], qb[0], qb[1])
    weight = math.prod(stats.binom.pmf(axes[k], m, qs[k]) for k in range(4))
    _, lo, hi = youden_difference(axes[0], m, axes[1], m, axes[2], m, axes[3], m, method=method)
    d = qa[0] + qa[1] - qb[0] - qb[1]
    return float((weight * ((lo <= d) & (d <= hi))).sum())


def test_difference_coverage():
    # Sets a: (q0, q1) = (0.7, 0.9), b: (0.75, 0.95), 40 items per group; true Delta J = -0.1.
    # Enumerated: Wald 0.9447, Agresti-Caffo 0.9594, Newcombe 0.9566. Simulation (20,000
    # sets) must match the enumeration within 3 MC-SE.
    qa, qb, m = (0.7, 0.9), (0.75, 0.95), 40
    rng = np.random.default_rng(99)
    reps = 20_000
    draws = [rng.binomial(m, q, reps) for q in (*qa, *qb)]
    for method in METHODS:
        exact = exact_coverage_difference(qa, qb, m, method)
        _, lo, hi = youden_difference(
            draws[0], m, draws[1], m, draws[2], m, draws[3], m, method=method
        )
        d = qa[0] + qa[1] - qb[0] - qb[1]  # same float as in the enumeration
        sim = np.mean((lo <= d) & (d <= hi))
        assert abs(sim - exact) <= 3 * math.sqrt(exact * (1 - exact) / reps), (method, sim, exact)
        assert abs(exact - 0.95) <= 0.01 or method == "wald"
    assert exact_coverage_difference(qa, qb, m, "wald") < 0.95


# ----------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0, 0, 5, 10), "m0 must be at least 1.*both label types"),
        ((5, 10, 0, 0), "m1 must be at least 1.*both label types"),
        ((11, 10, 5, 10), "tn counts items among the m0 items"),
        ((5, 10, 12, 10), "tp counts items among the m1 items"),
        ((-1, 10, 5, 10), "tn must be a non-negative whole-number"),
        ((5, 10.5, 5, 10), "m0 must be a non-negative whole-number"),
        ((5, 10, "7", 10), "tp must be a whole-number count"),
        (([1, 2], 10, [1, 2, 3], 10), "broadcast"),
    ],
)
def test_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        youden(*args)


def test_bad_method_and_alpha():
    with pytest.raises(ValueError, match="method must be one of"):
        youden(5, 10, 5, 10, method="wilson")
    with pytest.raises(ValueError, match="alpha"):
        youden(5, 10, 5, 10, alpha=1.0)
    with pytest.raises(ValueError, match="m0_b must be at least 1"):
        youden_difference(5, 10, 5, 10, 0, 0, 5, 10)
    with pytest.raises(ValueError, match="tp_a counts items among the m1_a"):
        youden_difference(5, 10, 11, 10, 5, 10, 5, 10)
