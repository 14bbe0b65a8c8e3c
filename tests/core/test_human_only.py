"""Tests for the judge-versus-human-only comparison (Lee et al. Sec. 6, Prop. 6.1 / B.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bayesjudge.core.allocation import (
    HUMAN_ONLY_Q_THRESHOLD,
    human_only_regime,
    judge_beats_human_only,
    variance_vs_human_only,
)


def eq14(theta, q, m, m1):
    """Lee et al. eq. (14): n -> inf, q0 = q1 = q, M1 truly-correct calibration items."""
    return ((1 - theta) ** 2 * q * (1 - q) / (m - m1) + theta**2 * q * (1 - q) / m1) / (
        2 * q - 1
    ) ** 2


def eq10(theta, q0, q1, m0, m1, n):
    """Lee et al. eq. (10) at the true parameters, p = theta q1 + (1 - theta)(1 - q0)."""
    p = theta * q1 + (1 - theta) * (1 - q0)
    return (
        p * (1 - p) / n + (1 - theta) ** 2 * q0 * (1 - q0) / m0 + theta**2 * q1 * (1 - q1) / m1
    ) / (q0 + q1 - 1) ** 2


# ----------------------------------------------------------------------------------------
# Formulas
# ----------------------------------------------------------------------------------------


def test_threshold_value():
    # 1/2 + 1/(2 sqrt 2) = 0.8535533905932737 (Prop. 6.1).
    assert HUMAN_ONLY_Q_THRESHOLD == pytest.approx(0.8535533905932737, abs=1e-15)
    assert not human_only_regime(HUMAN_ONLY_Q_THRESHOLD - 1e-9).exists
    r = human_only_regime(HUMAN_ONLY_Q_THRESHOLD + 1e-12)
    assert r.exists and r.lower == pytest.approx(0.5, abs=1e-5)
    assert r.upper == pytest.approx(0.5, abs=1e-5)
    # q = 1: [1/2 - sqrt(1/2 - 1/4), 1/2 + sqrt(1/4)] = [0, 1].
    r = human_only_regime(1.0)
    assert (r.lower, r.upper, bool(r.exists)) == (0.0, 1.0, True)


def test_regime_by_hand():
    # q = 0.9: 1/(4 * 0.8^2) = 0.390625, sqrt(0.5 - 0.390625) = 0.33071891388307384.
    r = human_only_regime(0.9)
    assert r.lower == pytest.approx(0.5 - 0.33071891388307384, abs=1e-15)
    assert r.upper == pytest.approx(0.5 + 0.33071891388307384, abs=1e-15)


def test_empty_regime_representation():
    r = human_only_regime([0.0, 0.3, 0.5, 0.7, 0.85])
    assert not r.exists.any()
    np.testing.assert_array_equal(r.lower, 0.5)
    np.testing.assert_array_equal(r.upper, 0.5)
    assert not r.contains(0.5).any()
    assert np.isfinite(r.lower).all()


@pytest.mark.parametrize("q", [0.86, 0.9, 0.95, 0.99, 1.0])
def test_boundary_variances_are_equal(q):
    # On the boundary of the Prop. 6.1 regime the eq. (14) variance (M1 -> m theta) equals
    # the human-only variance theta(1 - theta)/m.
    m = 1000
    r = human_only_regime(q)
    for theta in (r.lower, r.upper):
        if theta in (0.0, 1.0):
            continue  # q = 1: both variances are 0 at the ends
        comp = variance_vs_human_only(theta, q, q, m)
        assert comp.judge == pytest.approx(eq14(theta, q, m, m * theta), rel=1e-12)
        assert comp.human == pytest.approx(theta * (1 - theta) / m, rel=1e-15)
        assert abs(comp.judge - comp.human) <= 1e-12 * comp.human
        assert comp.ratio == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(
    q=st.floats(0.5 + 1e-3, 1.0),
    theta=st.floats(1e-3, 1 - 1e-3),
    m=st.integers(1, 10**6),
)
def test_inside_regime_judge_wins_outside_loses(q, theta, m):
    r = human_only_regime(q)
    ratio = variance_vs_human_only(theta, q, q, m).ratio
    # Closed form of the ratio under the default split (Prop. 6.1 derivation):
    # [q(1-q)/(m (2q-1)^2)] / [theta(1-theta)/m].
    assert ratio == pytest.approx(q * (1 - q) / ((2 * q - 1) ** 2 * theta * (1 - theta)), rel=1e-12)
    margin = 1e-9
    if r.exists and r.lower + margin < theta < r.upper - margin:
        assert ratio < 1
        assert r.contains(theta)
    elif not r.exists or theta < r.lower - margin or theta > r.upper + margin:
        assert ratio > 1
        assert not r.contains(theta)


def test_general_variance_matches_eq10():
    rng = np.random.default_rng(1)
    theta, q0, q1 = rng.random(200), 0.5 + rng.random(200) / 2, 0.6 + rng.random(200) * 0.4
    m, n = rng.integers(20, 2000, 200), rng.integers(10, 10**5, 200)
    m1 = np.maximum(1, (m * rng.random(200)).astype(int))
    m1 = np.minimum(m1, m - 1)
    comp = variance_vs_human_only(theta, q0, q1, m, n=n, m1=m1)
    np.testing.assert_allclose(comp.judge, eq10(theta, q0, q1, m - m1, m1, n), rtol=1e-13)
    np.testing.assert_allclose(comp.human, theta * (1 - theta) / m, rtol=1e-15)
    np.testing.assert_allclose(comp.ratio, comp.judge / comp.human, rtol=1e-13)
    # Default split m1 = m theta is eq. (10) with m0 = m(1 - theta), m1 = m theta.
    inner = (theta > 0.01) & (theta < 0.99)
    default = variance_vs_human_only(theta[inner], q0[inner], q1[inner], m[inner], n=n[inner])
    ref = eq10(theta, q0, q1, m * (1 - theta), m * theta, n)[inner]
    np.testing.assert_allclose(default.judge, ref, rtol=1e-12)


def test_edge_theta_zero_and_one():
    c = variance_vs_human_only([0.0, 1.0], 0.8, 0.9, 100)
    np.testing.assert_array_equal(c.human, 0.0)
    # n -> inf, default split: judge variance (1-theta) q0(1-q0)/(m J^2) at theta = 0.
    assert c.judge[0] == pytest.approx(0.8 * 0.2 / (100 * 0.7**2), rel=1e-14)
    np.testing.assert_array_equal(c.ratio, np.inf)
    # A perfect judge at theta = 0 is also exact: 0 / 0 is reported as ratio 1.
    c = variance_vs_human_only(0.0, 1.0, 0.9, 100)
    assert (c.judge, c.human, c.ratio) == (0.0, 0.0, 1.0)


# ----------------------------------------------------------------------------------------
# Prop. B.2 finite-m sufficient condition (13)
# ----------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    theta=st.floats(0.01, 0.99),
    q=st.floats(0.86, 0.999),
    m=st.integers(10, 10**6),
    delta=st.floats(1e-4, 0.5),
)
def test_condition_13_certifies_the_hoeffding_band(theta, q, m, delta):
    # When (13) holds, eq. (14) is at most theta(1-theta)/m for every M1 in the Hoeffding band
    # [m(theta - eps), m(theta + eps)]; eq. (14) is convex in M1, so the ends are the worst.
    holds = judge_beats_human_only(theta, q, m, delta)
    eps = math.sqrt(math.log(2 / delta) / (2 * m))
    if eps >= min(theta, 1 - theta):
        assert not holds
        return
    assume(holds)
    human = theta * (1 - theta) / m
    for m1 in (m * (theta - eps), m * (theta + eps)):
        assert eq14(theta, q, m, m1) <= human * (1 + 1e-12)


def test_condition_13_tends_to_regime():
    # eps = O(m^-1/2): for theta strictly inside the regime the condition eventually holds;
    # outside it never does.
    r = human_only_regime(0.9)
    thetas = np.array([r.lower + 0.01, 0.5, r.upper - 0.01])
    assert judge_beats_human_only(thetas, 0.9, 10**9).all()
    assert not judge_beats_human_only(thetas, 0.9, 20).any()
    outside = np.array([r.lower - 0.01, r.upper + 0.01])
    assert not judge_beats_human_only(outside, 0.9, 10**12).any()
    assert not judge_beats_human_only(0.5, [0.2, 0.5, 0.85], 10**12).any()


def test_condition_13_by_hand():
    # theta = 0.25, q = 0.9, delta = 0.05 (python3 math, eps = sqrt(log(2/delta)/(2m))):
    # m = 200: eps = 0.0960323, factor = 1 + 0.75 eps/(0.75 - eps) + 0.25 eps/(0.25 - eps)
    # = 1.2660634, bound = q(1-q)/(2q-1)^2 * factor = 0.09/0.64 * 1.2660634 = 0.1780402
    # <= theta(1-theta) = 0.1875 -> holds; m = 50: eps = 0.1920646, factor = 2.0869681,
    # bound = 0.2934799 > 0.1875 -> fails.
    eps = math.sqrt(math.log(40) / 400)
    factor = 1 + 0.75 * eps / (0.75 - eps) + 0.25 * eps / (0.25 - eps)
    assert 0.09 / 0.64 * factor == pytest.approx(0.1780402, abs=1e-7)
    assert judge_beats_human_only(0.25, 0.9, 200)
    assert not judge_beats_human_only(0.25, 0.9, 50)


# ----------------------------------------------------------------------------------------
# Simulation: the variance formulas against Monte Carlo
# ----------------------------------------------------------------------------------------


def _var_and_se(x):
    """Sample variance and its Monte Carlo standard error sqrt((mu4 - s^4)/R)."""
    v = x.var(ddof=1)
    c = x - x.mean()
    return v, math.sqrt((np.mean(c**4) - v**2) / x.size)


@pytest.mark.parametrize(
    ("theta", "q0", "q1", "m", "n", "m1"),
    [
        (0.4, 0.85, 0.9, 2000, 20_000, None),  # random calibration sample (default split)
        (0.3, 0.8, 0.9, 4000, None, 2000),  # designed split, n -> inf
        (0.6, 0.9, 0.9, 4000, 20_000, None),
    ],
)
def test_simulated_variances_match_formulas(theta, q0, q1, m, n, m1):
    # 40,000 replicates; each must agree with its formula within 3 MC-SE (relative MC-SE
    # about 0.7%). The delta-method formula is O(1/m) optimistic: with 2,000,000 replicates
    # the true Rogan-Gladen variance exceeded it by 0.28%, 0.25% and 0.15% in these three
    # settings (and by 1.4% at m = 500, too close to the MC error to test), so m is large
    # enough here for the approximation error to sit well inside the tolerance.
    rng = np.random.default_rng(17)
    reps = 40_000
    p = theta * q1 + (1 - theta) * (1 - q0)
    big_m1 = rng.binomial(m, theta, reps) if m1 is None else np.full(reps, m1)
    tp = rng.binomial(big_m1, q1)
    tn = rng.binomial(m - big_m1, q0)
    p_hat = p if n is None else rng.binomial(n, p, reps) / n
    q0_hat, q1_hat = tn / (m - big_m1), tp / big_m1
    rg = (p_hat + q0_hat - 1) / (q0_hat + q1_hat - 1)  # Rogan-Gladen, eq. (5)
    phi = rng.binomial(m, theta, reps) / m  # human-only estimate M1/m
    comp = variance_vs_human_only(theta, q0, q1, m, n=n, m1=m1)
    for sample, formula in ((rg, comp.judge), (phi, comp.human)):
        v, se = _var_and_se(sample)
        assert abs(v - formula) <= 3 * se, (v, formula, se)


# ----------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"q0": 0.4, "q1": 0.6}, "q0 \\+ q1 must exceed 1"),
        ({"q0": 0.3, "q1": 0.5}, "flip its verdicts"),
        ({"theta": 1.5}, "theta must be a proportion"),
        ({"m": 0}, "m must be at least 1"),
        ({"n": 0}, "n must be at least 1"),
        ({"m1": 0}, "m1 must be between 1 and m - 1"),
        ({"m1": 100}, "m1 must be between 1 and m - 1"),
        ({"m1": 2.5}, "m1 must be a non-negative whole-number"),
    ],
)
def test_variance_bad_input(kwargs, match):
    args = {"theta": 0.5, "q0": 0.9, "q1": 0.9, "m": 100} | kwargs
    with pytest.raises(ValueError, match=match):
        variance_vs_human_only(**args)


def test_regime_and_condition_bad_input():
    with pytest.raises(ValueError, match="q must be a proportion"):
        human_only_regime(1.1)
    with pytest.raises(ValueError, match="delta must be in"):
        judge_beats_human_only(0.5, 0.9, 100, delta=0)
    with pytest.raises(ValueError, match="delta must be a number"):
        judge_beats_human_only(0.5, 0.9, 100, delta="x")
    with pytest.raises(ValueError, match="broadcast"):
        judge_beats_human_only([0.1, 0.2], 0.9, [10, 20, 30])
