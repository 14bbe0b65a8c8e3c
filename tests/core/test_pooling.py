"""Tests for bayesjudge.core.pooling: homogeneity tests and the bias that pooling implies.

References: scipy.stats.chi2_contingency (Pearson and G, no Yates correction) on the table of
the groups with items; a brute-force likelihood-ratio statistic from scipy.stats.binom.logpmf;
the Rogan–Gladen ratio written out in scalar Python; Monte Carlo at fixed seeds with
tolerances from the Monte Carlo standard error (MCSE).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from bayesjudge.core.pooling import homogeneity_test, pooled_half_width, pooling_bias

Z95 = float(stats.norm.isf(0.025))


def scipy_reference(x, m, lambda_=None):
    """chi2_contingency on the groups with items (rows) × {success, failure}."""
    x, m = np.asarray(x), np.asarray(m)
    keep = m > 0
    table = np.stack([x[keep], m[keep] - x[keep]], axis=1)
    stat, p, df, _ = stats.chi2_contingency(table, correction=False, lambda_=lambda_)
    return stat, p, df


def test_pearson_and_g_match_scipy_chi2_contingency_on_random_tables():
    rng = np.random.default_rng(20261127)
    for _ in range(200):
        groups = int(rng.integers(2, 10))
        m = rng.integers(0, 60, groups)
        m[:2] = rng.integers(1, 60, 2)  # at least two groups with items
        x = rng.binomial(m, rng.uniform(0.3, 0.95, groups))
        if x.sum() in (0, m.sum()):
            continue
        for method, lam in (("pearson", None), ("likelihood-ratio", "log-likelihood")):
            h = homogeneity_test(x, m, method=method)
            stat, p, df = scipy_reference(x, m, lam)
            assert h.df == df == (m > 0).sum() - 1
            assert h.statistic == pytest.approx(stat, rel=1e-10, abs=1e-12)
            assert h.pvalue == pytest.approx(p, rel=1e-8, abs=1e-14)
            assert h.pooled == pytest.approx(x.sum() / m.sum())


def test_g_statistic_matches_brute_force_binomial_likelihood_ratio():
    # G = 2 [sum_g log Bin(x_g | m_g, x_g/m_g) - sum_g log Bin(x_g | m_g, pooled)].
    x, m = np.array([45, 30, 12, 0]), np.array([50, 40, 30, 5])
    pooled = x.sum() / m.sum()
    own = sum(stats.binom.logpmf(a, b, a / b) for a, b in zip(x, m, strict=True))
    null = sum(stats.binom.logpmf(a, b, pooled) for a, b in zip(x, m, strict=True))
    h = homogeneity_test(x, m, method="likelihood-ratio")
    assert h.statistic == pytest.approx(2 * (own - null), rel=1e-10)
    assert h.pvalue == pytest.approx(stats.chi2.sf(2 * (own - null), 3), rel=1e-9)


def test_published_style_hand_value():
    # q0 = 0.9, 0.9, 0.5 with 50 labels each: pooled 115/150; expected successes 38.33 each.
    # X² = sum (x - 38.333)² / (50 · 0.7667 · 0.2333) = (2·6.667² + 13.333²) / 8.944 = 29.81.
    h = homogeneity_test([45, 45, 25], [50, 50, 50])
    v = 50 * (115 / 150) * (35 / 150)
    expected = (2 * (45 - 115 / 3) ** 2 + (25 - 115 / 3) ** 2) / v
    assert h.statistic == pytest.approx(expected, rel=1e-12)
    assert h.statistic == pytest.approx(29.8137, abs=1e-4)
    assert h.pvalue == pytest.approx(math.exp(-expected / 2), rel=1e-12)  # chi2(2) tail


def test_vectorised_over_axis_equals_column_by_column():
    rng = np.random.default_rng(7)
    m = rng.integers(1, 80, (6, 5))
    x = rng.binomial(m, 0.8)
    h = homogeneity_test(x, m, axis=0)
    ht = homogeneity_test(x.T, m.T, axis=1)
    for j in range(5):
        hj = homogeneity_test(x[:, j], m[:, j])
        assert h.statistic[j] == pytest.approx(hj.statistic, rel=1e-12)
        assert h.pvalue[j] == pytest.approx(hj.pvalue, rel=1e-12)
        assert ht.statistic[j] == pytest.approx(hj.statistic, rel=1e-12)


def test_degenerate_tables():
    # Every item a success: the groups agree exactly.
    h = homogeneity_test([10, 20, 5], [10, 20, 5])
    assert (h.statistic, h.pvalue, h.df) == (0.0, 1.0, 2)
    h = homogeneity_test([0, 0], [10, 3], method="likelihood-ratio")
    assert (h.statistic, h.pvalue) == (0.0, 1.0)
    # Fewer than two groups with items: nothing to test.
    h = homogeneity_test([7, 0], [10, 0])
    assert math.isnan(h.statistic) and math.isnan(h.pvalue) and h.df == 0
    h = homogeneity_test([0, 0], [0, 0])
    assert math.isnan(h.pooled)


def test_bad_input_names_the_field():
    with pytest.raises(ValueError, match="successes"):
        homogeneity_test([11, 2], [10, 5])
    with pytest.raises(ValueError, match="method must be one of"):
        homogeneity_test([1, 2], [10, 5], method="fisher")


def test_pearson_level_under_homogeneity_by_simulation():
    # 8 groups of 40 labels, q = 0.85 (expected failures 6 per group): the rejection rate at
    # 0.05 is within 3 MCSE of 0.05 (asymptotic test; 4000 tables, MCSE 0.0034).
    rng = np.random.default_rng(11)
    m = np.full((8, 4000), 40)
    x = rng.binomial(m, 0.85)
    rate = float((homogeneity_test(x, m).pvalue < 0.05).mean())
    mcse = math.sqrt(0.05 * 0.95 / 4000)
    assert abs(rate - 0.05) < 3 * mcse, rate


def rg(p, q0, q1):
    return (p + q0 - 1) / (q0 + q1 - 1)


def diff_var(smooth, m, big, g):
    """Var(x_g/m_g − Σ x/M) for independent binomial counts x_h ~ Bin(m_h, smooth_h)."""
    v = smooth * (1 - smooth) * m  # Var of each count
    return sum(v[h] * ((1 / m[g] - 1 / big) if h == g else -1 / big) ** 2 for h in range(len(m)))


def test_pooling_bias_against_scalar_rogan_gladen():
    k, n = np.array([600, 300, 100]), np.array([1000, 500, 400])
    tn, m0 = np.array([90, 50, 30]), np.array([100, 100, 40])
    tp, m1 = np.array([90, 85, 30]), np.array([100, 100, 50])
    pooled = (tn.sum(), m0.sum(), tp.sum(), m1.sum())
    r = pooling_bias(k, n, tn, m0, tp, m1)
    q0c, q1c = pooled[0] / pooled[1], pooled[2] / pooled[3]
    jc = q0c + q1c - 1
    smooth0, smooth1 = (tn + 1) / (m0 + 2), (tp + 1) / (m1 + 2)
    for g in range(3):
        own = rg(k[g] / n[g], tn[g] / m0[g], tp[g] / m1[g])
        pool = rg(k[g] / n[g], q0c, q1c)
        assert r.theta_own[g] == pytest.approx(own, rel=1e-12)
        assert r.theta_pooled[g] == pytest.approx(pool, rel=1e-12)
        assert r.bias[g] == pytest.approx(pool - own, rel=1e-10, abs=1e-14)
        th = min(max(pool, 0.0), 1.0)
        lin = ((1 - th) * (q0c - tn[g] / m0[g]) - th * (q1c - tp[g] / m1[g])) / jc
        assert r.linear[g] == pytest.approx(lin, rel=1e-12)
        # The delta-method SE under homogeneity, written out.
        var = (
            (1 - th) ** 2 * q0c * (1 - q0c) * (1 / m0[g] - 1 / pooled[1])
            + th**2 * q1c * (1 - q1c) * (1 / m1[g] - 1 / pooled[3])
        ) / jc**2
        assert r.se_null[g] == pytest.approx(math.sqrt(var), rel=1e-12)

        # Unrestricted: Var(x_g/m_g - sum x/M) with each group's own smoothed q.
        free = (
            (1 - th) ** 2 * diff_var(smooth0, m0, pooled[1], g)
            + th**2 * diff_var(smooth1, m1, pooled[3], g)
        ) / jc**2
        assert r.se[g] == pytest.approx(math.sqrt(max(var, free)), rel=1e-12)
    assert r.identified.all()


def test_pooling_bias_flags_what_own_calibration_cannot_identify():
    # Group 1: own Ĵ = 5/10 + 5/10 - 1 = 0 exactly (bias NaN, first-order bias defined);
    # group 2: no truly-correct labels; group 3: no test items.
    k, n = [50, 50, 50, 0], [100, 100, 100, 0]
    tn, m0 = [8, 5, 8, 8], [10, 10, 10, 10]
    tp, m1 = [9, 5, 0, 9], [10, 10, 0, 10]
    r = pooling_bias(k, n, tn, m0, tp, m1)
    assert r.identified.tolist() == [True, False, False, False]
    assert np.isnan(r.bias[1:]).all() and np.isnan(r.theta_own[1:]).all()
    assert np.isfinite(r.linear[:2]).all() and np.isnan(r.linear[2:]).all()
    assert np.isfinite(r.se[:2]).all() and np.isnan(r.se[2:]).all()
    assert np.isfinite(r.theta_pooled[:3]).all() and np.isnan(r.theta_pooled[3])


def test_pooling_bias_along_another_axis():
    rng = np.random.default_rng(2)
    m = rng.integers(20, 60, (3, 5))
    counts = (rng.binomial(400, 0.5, (3, 5)), np.full((3, 5), 400), rng.binomial(m, 0.8), m,
              rng.binomial(m, 0.9), m)  # fmt: skip
    r0 = pooling_bias(*counts, axis=0)
    r1 = pooling_bias(*(c.T for c in counts), axis=1)
    for field in ("bias", "linear", "se", "se_null"):
        np.testing.assert_allclose(getattr(r0, field), getattr(r1, field).T, rtol=1e-12)


@pytest.mark.parametrize("theta", [0.2, 0.7])
def test_pooling_bias_se_matches_simulation_under_homogeneity(theta):
    # 6 groups, q0 = 0.8, q1 = 0.9, 300 labels of each kind per group, n = 2000: the sd of
    # the bias and of its first-order version over 4000 data sets match the mean null SE
    # within 4 MCSE of the sd (≈ sd / sqrt(2 (R - 1))) plus 3% (first-order approximation).
    rng = np.random.default_rng(int(100 * theta))
    reps, groups, m, n = 4000, 6, 300, 2000
    q0, q1 = 0.8, 0.9
    p = theta * q1 + (1 - theta) * (1 - q0)
    k = rng.binomial(n, p, (reps, groups))
    tn = rng.binomial(m, q0, (reps, groups))
    tp = rng.binomial(m, q1, (reps, groups))
    r = pooling_bias(k, n, tn, m, tp, m, axis=1)
    se = r.se_null[:, 0].mean()
    tol = 4 / math.sqrt(2 * (reps - 1)) + 0.03
    for values in (r.bias[:, 0], r.linear[:, 0]):
        sd = values.std(ddof=1)
        assert abs(values.mean()) < 4 * sd / math.sqrt(reps)
        assert abs(se / sd - 1) < tol, (se, sd)
    assert (r.se >= r.se_null).all()


def test_pooling_bias_unrestricted_se_matches_simulation_when_the_judge_differs():
    # q0 = 0.9, 0.8, 0.6 on three groups of 200 labels (q1 = 0.9, p = 0.5): ``se`` is the SE
    # of the q̂ differences with θ and J held at the values the pooled estimates converge to
    # (θ* = (p + q̄0 − 1)/J̄, J̄ = q̄0 + 0.9 − 1), or the null SE where that is larger. The sd
    # of that combination over 4000 data sets (4 MCSE + 3 % tolerance) against the mean SE.
    rng = np.random.default_rng(99)
    reps, m, n = 4000, 200, 3000
    q0 = np.array([0.9, 0.8, 0.6])
    k = rng.binomial(n, 0.5, (reps, 3))
    tn = rng.binomial(m, q0, (reps, 3))
    tp = rng.binomial(m, 0.9, (reps, 3))
    r = pooling_bias(k, n, tn, m, tp, m, axis=1)
    j_bar = q0.mean() + 0.9 - 1
    th = (0.5 + q0.mean() - 1) / j_bar
    q0c, q1c = tn.mean(1, keepdims=True) / m, tp.mean(1, keepdims=True) / m
    combo = ((1 - th) * (q0c - tn / m) - th * (q1c - tp / m)) / j_bar
    tol = 4 / math.sqrt(2 * (reps - 1)) + 0.03
    sd = combo.std(axis=0, ddof=1)
    se = r.se.mean(axis=0)
    # Group 2 (q0 = 0.6, the most variable): the unrestricted SE, larger than the null one.
    assert r.se_null[:, 2].mean() < 0.95 * sd[2]
    assert abs(se[2] / sd[2] - 1) < tol, (se, sd)
    # Groups 0 and 1: the null SE is the larger; ``se`` never understates the spread.
    assert (se >= sd * (1 - tol)).all(), (se, sd)


def test_pooled_half_width_is_z_times_eq10():
    # Eq. (10) with the pooled calibration: p = 0.4, q0 = 0.7, q1 = 0.9, n = 1000,
    # m0 = m1 = 100: θ = (0.4 + 0.7 - 1)/0.6 = 1/6.
    th = 0.1 / 0.6
    var = (0.4 * 0.6 / 1000 + (1 - th) ** 2 * 0.21 / 100 + th**2 * 0.09 / 100) / 0.36
    assert pooled_half_width(400, 1000, 70, 100, 90, 100) == pytest.approx(
        Z95 * math.sqrt(var), rel=1e-12
    )
    # J = 0 policy: NaN; no test items: NaN.
    out = pooled_half_width([400, 0], [1000, 0], [50, 70], [100, 100], [50, 90], [100, 100])
    assert np.isnan(out).all()
