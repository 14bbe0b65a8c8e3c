"""Tests for bayesjudge.core.jury: several judges on the same items (Dawid–Skene, agreement)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, gammaln, logit
from scipy.stats import bernoulli, multinomial, norm
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from bayesjudge.core.jury import (
    _information,
    cohen_kappa,
    dawid_skene,
    dawid_skene_interval,
    gwet_ac1,
    jury_log_likelihood,
    majority_verdicts,
    majority_vote,
    pair_table,
    pattern_log_likelihood,
)
from bayesjudge.core.kernels import rogan_gladen_counts
from bayesjudge.core.naive import naive
from bayesjudge.warnings import SmallSampleWarning

#: The 2^3 complete patterns of three judges, "111" first.
PATS3 = np.array([[a, b, c] for a in (1, 0) for b in (1, 0) for c in (1, 0)])
Q0 = np.array([0.80, 0.85, 0.90])
Q1 = np.array([0.70, 0.90, 0.90])  # J = 0.50, 0.75, 0.80


def pattern_probs(pats, q0, q1):
    """P(v | t = 0), P(v | t = 1) of complete patterns (no missing entries)."""
    p1 = np.prod(np.where(pats == 1, q1, 1 - q1), axis=1)
    p0 = np.prod(np.where(pats == 0, q0, 1 - q0), axis=1)
    return p0, p1


def draw(rng, theta, n=500, m0=40, m1=40, q0=Q0, q1=Q1):
    """Test counts (P,) and stratified labelled counts (2, P) of PATS3."""
    p0, p1 = pattern_probs(PATS3, q0, q1)
    test = rng.multinomial(n, theta * p1 + (1 - theta) * p0)
    lab = np.stack([rng.multinomial(m0, p0), rng.multinomial(m1, p1)])
    return test, lab


def scipy_log_pattern(pats, q0, q1):
    """log P(v | t) with scipy.stats.bernoulli, judge by judge (missing entries skipped)."""
    out = np.zeros((2, len(pats)))
    for p, row in enumerate(pats):
        for j, verdict in enumerate(row):
            if verdict < 0:
                continue
            out[0, p] += bernoulli.logpmf(1 - verdict, q0[j])  # q0: P(says 0 | t = 0)
            out[1, p] += bernoulli.logpmf(verdict, q1[j])
    return out


def logit_loglik(z, pats, test, lab, design, n_judges, smoothing=0.0):
    """Negative (penalised) log-likelihood at z = (logit θ, logit q0, logit q1)."""
    th, q0, q1 = expit(z[0]), expit(z[1 : 1 + n_judges]), expit(z[1 + n_judges :])
    pen = smoothing * np.sum(np.log(np.r_[q0, q1]) + np.log1p(-np.r_[q0, q1]))
    return -(jury_log_likelihood(pats, test, lab, th, q0, q1, design=design) + pen)


# --------------------------------------------------------------------------- likelihood


def test_pattern_log_likelihood_matches_scipy_bernoulli():
    pats = np.array([[1, 0, -1], [0, 0, 1], [-1, 1, 1], [1, 1, 1]])
    q0, q1 = np.array([0.8, 0.6, 0.95]), np.array([0.7, 0.9, 0.55])
    got = pattern_log_likelihood(pats, q0, q1)
    np.testing.assert_allclose(got, scipy_log_pattern(pats, q0, q1), rtol=1e-13)


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_jury_log_likelihood_matches_scipy(design):
    pats = np.array([[1, 0, -1], [0, 0, 1], [-1, 1, 1], [1, 1, 1]])
    test, lab = np.array([5, 7, 0, 11]), np.array([[2, 3, 0, 1], [0, 1, 4, 6]])
    theta, q0, q1 = 0.35, np.array([0.8, 0.6, 0.95]), np.array([0.7, 0.9, 0.55])
    ll = scipy_log_pattern(pats, q0, q1)
    expected = np.sum(test * np.log(theta * np.exp(ll[1]) + (1 - theta) * np.exp(ll[0])))
    expected += np.sum(lab * ll)
    if design == "random":
        expected += lab[0].sum() * bernoulli.logpmf(0, theta) + lab[1].sum() * np.log(theta)
    got = jury_log_likelihood(pats, test, lab, theta, q0, q1, design=design)
    assert got == pytest.approx(expected, rel=1e-13)


def test_jury_log_likelihood_is_multinomial_without_its_coefficient():
    # Complete patterns: the test counts are Multinomial(n, θ P(v|1) + (1 - θ) P(v|0)).
    test = np.array([60, 12, 9, 20, 7, 5, 14, 73])
    p0, p1 = pattern_probs(PATS3, Q0, Q1)
    n = test.sum()
    ref = multinomial.logpmf(test, n, 0.4 * p1 + 0.6 * p0)
    const = gammaln(n + 1) - gammaln(test + 1).sum()
    got = jury_log_likelihood(PATS3, test, None, 0.4, Q0, Q1)
    assert got + const == pytest.approx(ref, rel=1e-12)


def test_perfect_judge_contradiction_is_minus_infinity():
    ll = pattern_log_likelihood([[1, 0], [1, 1]], [1.0, 1.0], [1.0, 1.0])
    assert np.isneginf(ll[:, 0]).all() and ll[1, 1] == 0.0 and np.isneginf(ll[0, 1])


# ---------------------------------------------------------------------------- EM / MLE


@pytest.mark.parametrize(
    ("k", "n", "tn", "m0", "tp", "m1"),
    [(400, 1000, 70, 100, 90, 100), (130, 200, 35, 40, 30, 40), (55, 90, 17, 25, 40, 44)],
)
def test_one_judge_stratified_is_rogan_gladen(k, n, tn, m0, tp, m1):
    # Saturated model: the MLE is q̂0 = tn/m0, q̂1 = tp/m1 and the Rogan-Gladen θ̂ when in (0, 1).
    rg = rogan_gladen_counts(k, n, tn, m0, tp, m1, clip=True).theta
    assert 0 < rg < 1
    fit = dawid_skene([[1], [0]], [k, n - k], [[m0 - tn, tn], [tp, m1 - tp]], tol=1e-14)
    assert fit.converged
    assert fit.theta == pytest.approx(rg, abs=1e-9)
    assert fit.q0[0] == pytest.approx(tn / m0, abs=1e-9)
    assert fit.q1[0] == pytest.approx(tp / m1, abs=1e-9)


@pytest.mark.parametrize(
    ("design", "labelled", "smoothing"),
    [("stratified", True, 0.0), ("random", True, 0.0), ("stratified", False, 0.0),
     ("stratified", True, 1.5)],
)  # fmt: skip
def test_em_matches_scipy_optimiser(design, labelled, smoothing):
    test, lab = draw(np.random.default_rng(3), 0.3)
    lab = lab if labelled else None
    fit = dawid_skene(PATS3, test, lab, design=design, smoothing=smoothing, tol=1e-12)
    z0 = np.zeros(7)  # independent start: θ = q = ½ would be a saddle, so nudge the qs up
    z0[1:] = 1.0
    opt = minimize(logit_loglik, z0, args=(PATS3, test, lab, design, 3, smoothing),
                   method="BFGS", options={"gtol": 1e-9})  # fmt: skip
    ours = logit(np.r_[fit.theta, fit.q0, fit.q1])
    np.testing.assert_allclose(ours, opt.x, atol=2e-4)
    # EM reaches the optimiser's (penalised) maximum; log_likelihood leaves the prior out.
    assert -logit_loglik(ours, PATS3, test, lab, design, 3, smoothing) >= -opt.fun - 1e-7
    penalty = -logit_loglik(ours, PATS3, test, lab, design, 3, smoothing) - fit.log_likelihood
    q = np.r_[fit.q0, fit.q1]
    assert penalty == pytest.approx(smoothing * np.sum(np.log(q) + np.log1p(-q)), abs=1e-9)


def test_random_design_fixed_point_pools_labelled_truths():
    test, lab = draw(np.random.default_rng(4), 0.7)
    fit = dawid_skene(PATS3, test, lab, design="random", tol=1e-13)
    pooled = (test @ fit.posterior + lab[1].sum()) / (test.sum() + lab.sum())
    assert fit.theta == pytest.approx(pooled, abs=1e-12)
    strat = dawid_skene(PATS3, test, lab, design="stratified", tol=1e-13)
    assert strat.theta == pytest.approx(test @ strat.posterior / test.sum(), abs=1e-12)


def test_label_switching_symmetry_without_labels():
    # Flipping every verdict maps (θ, q0, q1) to (1 - θ, q1, q0): same likelihood.
    test, _ = draw(np.random.default_rng(5), 0.3)
    fit = dawid_skene(PATS3, test, tol=1e-13)
    flip = dawid_skene(1 - PATS3, test, tol=1e-13)
    assert flip.theta == pytest.approx(1 - fit.theta, abs=1e-9)
    np.testing.assert_allclose(flip.q0, fit.q1, atol=1e-9)
    np.testing.assert_allclose(flip.q1, fit.q0, atol=1e-9)
    assert (fit.q0 + fit.q1 > 1).all()  # the majority start picks better-than-chance judges


def test_perfect_judges_have_no_nan_and_binomial_wald():
    pats = [[1, 1, 1], [0, 0, 0], [1, 0, 1]]
    test, lab = [70, 30, 0], [[0, 5, 0], [4, 0, 0]]
    fit = dawid_skene(pats, test, lab)
    assert fit.theta == pytest.approx(0.7, abs=1e-12)
    np.testing.assert_array_equal(np.r_[fit.q0, fit.q1], 1.0)
    assert np.isfinite(fit.log_likelihood) and not np.isnan(fit.posterior).any()
    # "101" has no item and probability 0 under both truths: its posterior is taken at q
    # clipped to 1 - 1e-10, where two "correct" verdicts of three outweigh one "incorrect".
    assert fit.posterior[2] == pytest.approx(1.0, abs=1e-9)
    # Every q on the boundary is held fixed: the interval is the logit Wald of 70 in 100.
    _, lo, hi = dawid_skene_interval(pats, test, lab)
    half = norm.ppf(0.975) / np.sqrt(100 * 0.7 * 0.3)
    assert (lo, hi) == pytest.approx((expit(logit(0.7) - half), expit(logit(0.7) + half)))


def test_theta_on_the_boundary_gives_the_exact_binomial_limit():
    pats = [[1, 1, 1], [0, 0, 0]]
    est, lo, hi = dawid_skene_interval(pats, [0, 50], [[0, 3], [3, 0]])
    assert est == 0.0 and lo == 0.0
    assert hi == pytest.approx(1 - 0.025 ** (1 / 50), rel=1e-12)  # Clopper-Pearson for 0/50


def test_missing_entry_is_the_sum_over_both_verdicts():
    q0, q1 = np.array([0.8, 0.6, 0.95]), np.array([0.7, 0.9, 0.55])
    ll = np.exp(pattern_log_likelihood([[1, -1, 0], [1, 1, 0], [1, 0, 0]], q0, q1))
    np.testing.assert_allclose(ll[:, 0], ll[:, 1] + ll[:, 2], rtol=1e-14)


def test_em_with_missing_entries_matches_scipy_optimiser():
    pats = np.array([[1, -1, 1], [0, 0, -1], [1, 1, 0], [-1, 0, 0], [1, 1, 1], [0, 0, 0],
                     [1, 0, 1], [0, 1, -1]])  # fmt: skip
    test, lab = (
        [40, 30, 12, 9, 80, 70, 15, 11],
        [[1, 4, 2, 3, 0, 6, 1, 2], [5, 0, 3, 1, 7, 0, 2, 1]],
    )
    fit = dawid_skene(pats, test, lab, tol=1e-12)
    opt = minimize(logit_loglik, np.r_[0.0, np.ones(6)], args=(pats, test, lab, "stratified", 3),
                   method="BFGS", options={"gtol": 1e-9})  # fmt: skip
    np.testing.assert_allclose(logit(np.r_[fit.theta, fit.q0, fit.q1]), opt.x, atol=2e-4)
    assert fit.converged and (0 < fit.posterior).all() and (fit.posterior < 1).all()


# ------------------------------------------------------------------------ input checks


@pytest.mark.parametrize(
    ("patterns", "test", "labelled", "match"),
    [
        ([[1, -1], [0, -1]], [3, 4], [[1, 0], [0, 1]], r"judge\(s\) \[1\]"),
        ([[1, 2]], [3], None, "patterns must hold 1"),
        ([[1, 0], [1, 0]], [1, 2], [[1, 1], [0, 0]], "distinct rows"),
        ([[-1, -1], [1, 0]], [1, 2], [[1, 1], [0, 0]], "no verdict"),
        ([[1, 0], [0, 1]], [1, 2], None, "not identified"),
        ([[1], [0]], [1, 2, 3], [[1, 1], [0, 0]], "test must have shape"),
        ([[1], [0]], [1, 2], [[1, 1]], "labelled must have shape"),
        ([[1], [0]], [0, 0], [[1, 1], [1, 1]], "at least one item"),
    ],
)
def test_bad_input_is_refused(patterns, test, labelled, match):
    with pytest.raises(ValueError, match=match):
        dawid_skene(patterns, test, labelled)


def test_bad_options_are_refused():
    test, lab = draw(np.random.default_rng(0), 0.5)
    with pytest.raises(ValueError, match="design"):
        dawid_skene(PATS3, test, lab, design="srs")
    with pytest.raises(ValueError, match="smoothing"):
        dawid_skene(PATS3, test, lab, smoothing=-1)
    with pytest.raises(ValueError, match="max_iter"):
        dawid_skene(PATS3, test, lab, max_iter=0)
    with pytest.raises(ValueError, match="method"):
        dawid_skene_interval(PATS3, test, lab, method="profile")
    with pytest.raises(ValueError, match="n_resamples"):
        dawid_skene_interval(PATS3, test, lab, method="bootstrap", n_resamples=10)


# ----------------------------------------------------------------- intervals (fast checks)


def draw_random_design(rng, theta, n, m):
    """Test counts and labelled counts of m items drawn at random from the same population."""
    p0, p1 = pattern_probs(PATS3, Q0, Q1)
    test = rng.multinomial(n, theta * p1 + (1 - theta) * p0)
    lab = rng.multinomial(m, np.r_[(1 - theta) * p0, theta * p1]).reshape(2, -1)
    return test, lab


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_observed_information_matches_numerical_hessian(design):
    test, lab = draw_random_design(np.random.default_rng(8), 0.3, 500, 80)
    fit = dawid_skene(PATS3, test, lab, design=design, tol=1e-13)
    z0 = logit(np.r_[fit.theta, fit.q0, fit.q1])
    step, eye = 1e-4, np.eye(7) * 1e-4
    hess = np.empty((7, 7))
    for i in range(7):
        for j in range(7):
            f = [logit_loglik(z0 + a * eye[i] + b * eye[j], PATS3, test, lab, design, 3)
                 for a, b in ((1, 1), (1, -1), (-1, 1), (-1, -1))]  # fmt: skip
            hess[i, j] = (f[0] - f[1] - f[2] + f[3]) / (4 * step**2)
    info = _information(
        PATS3, test, lab, fit.theta, fit.q0, fit.q1, random=design == "random", smoothing=0.0
    )
    np.testing.assert_allclose(info, hess, rtol=1e-5, atol=1e-4 * np.abs(hess).max())


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_wald_and_bootstrap_agree_on_a_large_sample(design):
    test, lab = draw_random_design(np.random.default_rng(6), 0.3, 4000, 600)
    est, lo, hi = dawid_skene_interval(PATS3, test, lab, design=design)
    _, blo, bhi = dawid_skene_interval(
        PATS3, test, lab, design=design, method="bootstrap", n_resamples=2000, random_seed=1
    )
    # Both estimate the same sampling spread; the bootstrap ends carry MC error ~ 3%.
    assert (hi - lo) == pytest.approx(bhi - blo, rel=0.1)
    assert lo < est < hi and blo < est < bhi
    again = dawid_skene_interval(
        PATS3, test, lab, design=design, method="bootstrap", n_resamples=2000, random_seed=1
    )
    assert again == (est, blo, bhi)


def test_bootstrap_warns_below_1000_resamples():
    test, lab = draw(np.random.default_rng(7), 0.5)
    with pytest.warns(SmallSampleWarning):
        dawid_skene_interval(PATS3, test, lab, method="bootstrap", n_resamples=200, random_seed=0)


@pytest.mark.parametrize("theta", [0.3, 0.7])
def test_wald_coverage_fast(theta):
    # 200 replications: 95% coverage within 3 MC-SEs (sqrt(.95 * .05 / 200) = 0.0154).
    rng = np.random.default_rng(20251127)
    reps, hits = 200, 0
    for _ in range(reps):
        test, lab = draw(rng, theta)
        _, lo, hi = dawid_skene_interval(PATS3, test, lab)
        hits += lo <= theta <= hi
    assert abs(hits / reps - 0.95) < 3 * np.sqrt(0.95 * 0.05 / reps)


# ------------------------------------------------------------------------ majority vote


def test_majority_verdicts_ties():
    pats = [[1, 1, 0], [1, 0, -1], [0, 0, 1], [-1, -1, 1]]
    assert majority_verdicts(pats).tolist() == [1.0, 0.5, 0.0, 1.0]
    assert majority_verdicts(pats, ties="incorrect").tolist() == [1.0, 0.0, 0.0, 1.0]
    assert majority_verdicts(pats, ties="correct").tolist() == [1.0, 1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="ties"):
        majority_verdicts(pats, ties="coin")


def test_majority_vote_of_one_judge_is_naive():
    assert majority_vote([[1], [0]], [37, 63]) == naive(37, 100)


def test_majority_vote_counts_ties_half():
    # 50 majority-correct + 10 ties (½ each) of 100 items: 55 / 100; Wilson of 55 in 100.
    est, lo, hi = majority_vote([[1, 1, 0], [1, 0, -1], [0, 0, 1]], [50, 10, 40])
    assert (est, lo, hi) == naive(55, 100)


# ---------------------------------------------------------------------------- agreement


def test_pair_table_over_items_both_judged():
    pats = [[1, 1, 0], [1, 0, -1], [0, 0, 1], [-1, 1, 1]]
    np.testing.assert_array_equal(pair_table(pats, [5, 6, 7, 8], 0, 1), [[7, 0], [6, 5]])
    np.testing.assert_array_equal(pair_table(pats, [5, 6, 7, 8], 1, 2), [[0, 7], [5, 8]])
    with pytest.raises(ValueError, match="judge index"):
        pair_table(pats, [5, 6, 7, 8], 0, 3)


TABLES = [
    [[40, 10], [5, 45]],
    [[118, 5], [2, 0]],
    [[20, 5, 3], [4, 30, 6], [2, 7, 23]],
    [[3, 9], [11, 2]],
]


@pytest.mark.parametrize("table", TABLES)
def test_cohen_kappa_matches_statsmodels(table):
    ref = sm_cohens_kappa(table)  # statsmodels.stats.inter_rater.cohens_kappa(table)
    got = cohen_kappa(table)
    assert got.estimate == pytest.approx(ref.kappa, rel=1e-12)
    assert got.se == pytest.approx(ref.std_kappa, rel=1e-12)
    z = norm.ppf(0.975)
    assert (got.lower, got.upper) == pytest.approx(
        (max(ref.kappa - z * ref.std_kappa, -1), min(ref.kappa + z * ref.std_kappa, 1))
    )


def multinomial_delta_se(stat, table):
    """Delta-method SE of a function of the cell shares, numerical gradient (independent)."""
    t = np.asarray(table, float)
    n, p = t.sum(), (t / t.sum()).ravel()
    grad = np.empty(p.size)
    for i in range(p.size):
        e = np.zeros(p.size)
        e[i] = 1e-6
        grad[i] = (stat((p + e).reshape(t.shape)) - stat((p - e).reshape(t.shape))) / 2e-6
    return np.sqrt(grad @ (np.diag(p) - np.outer(p, p)) @ grad / n)


def ac1_loops(p):
    """Gwet's AC1 written with loops from the definitions (p: cell shares, any scale)."""
    p = p / p.sum()
    k = p.shape[0]
    pi = [(sum(p[i, j] for j in range(k)) + sum(p[j, i] for j in range(k))) / 2 for i in range(k)]
    pe = sum(x * (1 - x) for x in pi) / (k - 1)
    pa = sum(p[i, i] for i in range(k))
    return (pa - pe) / (1 - pe)


@pytest.mark.parametrize("table", TABLES)
def test_gwet_ac1_matches_definition_and_delta_method(table):
    got = gwet_ac1(table)
    assert got.estimate == pytest.approx(ac1_loops(np.asarray(table, float)), rel=1e-12)
    # Gwet's (2008) variance is the multinomial linearisation of AC1.
    assert got.se == pytest.approx(multinomial_delta_se(ac1_loops, table), rel=1e-7)


def test_gwet_ac1_kappa_paradox_table():
    # 125 items, raters agree on "+" for 118 (hand computation): p_a = 118/125 = 0.944,
    # π+ = (123 + 120)/250 = 0.972, p_e = 2·0.972·0.028 = 0.054432,
    # AC1 = (0.944 - 0.054432)/(1 - 0.054432) = 0.940781…, while κ = -0.00128/0.05472 ≈ -0.0234.
    assert gwet_ac1([[118, 5], [2, 0]]).estimate == pytest.approx(0.889568 / 0.945568, rel=1e-12)
    assert cohen_kappa([[118, 5], [2, 0]]).estimate == pytest.approx(-0.00128 / 0.05472)


def test_agreement_refuses_bad_tables():
    with pytest.raises(ValueError, match="square"):
        gwet_ac1([[1, 2, 3], [4, 5, 6]])
    with pytest.raises(ValueError, match="undefined"):
        cohen_kappa([[10, 0], [0, 0]])


def test_interval_reuses_a_given_fit_and_refuses_another():
    rng = np.random.default_rng(5)
    test, lab = draw(rng, 0.4)
    fit = dawid_skene(PATS3, test, lab)
    for method in ("wald", "bootstrap"):
        kw = {"method": method, "random_seed": 1, "n_resamples": 1000}
        ref = dawid_skene_interval(PATS3, test, lab, **kw)
        assert dawid_skene_interval(PATS3, test, lab, fit=fit, **kw) == ref
    with pytest.raises(ValueError, match="fit must be the DawidSkeneResult"):
        dawid_skene_interval(PATS3[:4], test[:4], lab[:, :4], fit=fit)
