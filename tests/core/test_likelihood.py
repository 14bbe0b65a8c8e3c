"""Tests for bayesjudge.core.likelihood: the random labelling design's MLE and intervals.

References are independent: the log-likelihood against ``scipy.stats.binom.logpmf``, the
MLE against a brute-force ``scipy.optimize`` maximisation of the full log-likelihood over
(θ, q0, q1), the profile interval against ``scipy.optimize.minimize`` over (q0, q1) for each
θ plus ``brentq`` on θ, the human-only interval against statsmodels' Wilson interval, and
coverage by a fixed-seed simulation with a tolerance of 3 Monte Carlo standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from random_design import CHI2, EDGE, brute_mle, brute_profile, full_loglik, simulate
from scipy import optimize, stats
from statsmodels.stats.proportion import proportion_confint

from bayesjudge.core import likelihood as lik
from bayesjudge.core.likelihood import (
    double_sampling_mle,
    human_only,
    likelihood_interval,
    random_design_loglik,
)
from bayesjudge.core.ppi import ppi_mean

# (k, n, tn, m0, tp, m1): typical, small, and edges.
COUNT_SETS = [
    (738, 1800, 112, 140, 54, 60),  # theta = 0.3, q0 = 0.8, q1 = 0.9 (consistent counts)
    (350, 1800, 150, 184, 14, 16),  # theta = 0.08
    (30, 50, 8, 10, 9, 10),  # small
    (13, 50, 3, 7, 4, 9),  # small, noisy
    (0, 20, 5, 5, 3, 5),  # k = 0
    (20, 20, 4, 5, 5, 5),  # k = n
    (40, 100, 10, 10, 10, 10),  # perfect judge on the labelled items: a = 1, b = 0
    (40, 100, 0, 10, 0, 10),  # perfectly wrong judge on the labelled items
    (40, 100, 6, 10, 0, 0),  # m1 = 0: theta_hat = 0
    (40, 100, 0, 0, 7, 10),  # m0 = 0: theta_hat = 1
    (0, 0, 30, 40, 50, 60),  # every item labelled: theta_hat = m1 / (m0 + m1)
]


# ---------------------------------------------------------------------- the likelihood


@pytest.mark.parametrize("c", COUNT_SETS)
def test_loglik_matches_scipy(c):
    rng = np.random.default_rng(3)
    for theta, q0, q1 in rng.uniform(0.01, 0.99, size=(5, 3)):
        ours = random_design_loglik(theta, q0, q1, *c)
        assert ours == pytest.approx(full_loglik(theta, q0, q1, *c), rel=1e-12, abs=1e-10)


def test_loglik_at_boundaries_matches_scipy():
    # 0 log 0 = 0: a perfect judge and theta = 0 are finite where the data allow them.
    c = (40, 100, 0, 10, 0, 0)  # m1 = 0, every labelled verdict "correct"
    assert random_design_loglik(0.0, 0.0, 0.7, *c) == pytest.approx(
        full_loglik(0.0, 0.0, 0.7, *c), abs=1e-12
    )
    assert random_design_loglik(0.5, 1.0, 0.7, *c) == -np.inf  # tn = 0 < m0 needs q0 < 1


# ---------------------------------------------------------------------------- the MLE


@pytest.mark.parametrize("c", COUNT_SETS)
def test_mle_matches_brute_force_maximisation(c):
    theta, best = brute_mle(c)
    ours = double_sampling_mle(*c)
    assert ours == pytest.approx(theta, abs=1e-6)
    # The likelihood at the closed form is the maximum (q0, q1 from the (phi, a, b) map).
    k, n, tn, m0, tp, m1 = c
    fp, fn = m0 - tn, m1 - tp
    phi = (k + tp + fp) / (n + m0 + m1)
    a = tp / (tp + fp) if tp + fp else 0.5
    b = fn / (fn + tn) if fn + tn else 0.5
    q1 = phi * a / ours if ours > 0 else 0.5
    q0 = (1 - phi) * (1 - b) / (1 - ours) if ours < 1 else 0.5
    assert full_loglik(ours, q0, q1, *c) >= best - 1e-9


def test_mle_is_tenenbein_by_hand():
    # K = 738 + 54 + 28 = 820 of N = 2000 judged correct; a = 54/82, b = 6/118.
    # theta = 0.41 * 54/82 + 0.59 * 6/118 = 0.27 + 0.03 = 0.3.
    assert double_sampling_mle(738, 1800, 112, 140, 54, 60) == pytest.approx(0.3, abs=1e-15)


def test_mle_nan_where_a_share_is_free_and_the_interval_holds_the_segment():
    # No labelled item judged correct (tp + fp = 0) but k = 5 unlabelled ones are: a is
    # free, and every theta in [(1 - K/N) b, K/N + (1 - K/N) b] maximises the likelihood.
    c = (5, 10, 3, 3, 0, 1)
    assert math.isnan(double_sampling_mle(*c))
    big_n, big_k, b = 14, 5, 1 / 4
    segment = ((1 - big_k / big_n) * b, big_k / big_n + (1 - big_k / big_n) * b)
    best = lik._max_kernel(*(np.float64(v) for v in c))
    for theta in np.linspace(*segment, 5):
        with np.errstate(all="ignore"):  # as in likelihood_interval
            assert lik._profile_kernel(np.float64(theta), *(np.float64(v) for v in c)) == (
                pytest.approx(best, abs=1e-9)
            )
    res = likelihood_interval(*c)
    assert math.isnan(res.estimate)
    assert res.lower < segment[0] and res.upper > segment[1]


def test_no_labelled_items():
    res = likelihood_interval(5, 10, 0, 0, 0, 0)
    assert math.isnan(res.estimate)
    assert (res.lower, res.upper) == (0.0, 1.0)


# ------------------------------------------------------------- the profile interval


# Small count sets here (the search is slow); 1,800 + 200 items in test_likelihood_slow.py.
@pytest.mark.parametrize(
    "c",
    [
        (30, 50, 8, 10, 9, 10),
        (13, 50, 3, 7, 4, 9),
        (40, 100, 10, 10, 10, 10),
        (0, 20, 5, 5, 3, 5),
    ],
)
def test_profile_interval_matches_brute_force(c):
    # brentq on the brute-force deviance, bracketed within 0.01 of our ends: a sign change
    # there (else brentq raises) and then the brute-force root to 1e-12.
    theta_hat, lmax = brute_mle(c)
    dev = lambda t: 2 * (lmax - brute_profile(t, c)) - CHI2  # noqa: E731
    res = likelihood_interval(*c)
    lower = optimize.brentq(dev, max(res.lower - 0.01, EDGE), res.lower + 0.01, xtol=1e-12)
    upper = optimize.brentq(dev, res.upper - 0.01, min(res.upper + 0.01, 1 - EDGE), xtol=1e-12)
    assert res.lower == pytest.approx(lower, abs=1e-5)
    assert res.upper == pytest.approx(upper, abs=1e-5)
    assert res.lower < theta_hat < res.upper


def test_profile_interval_reaches_zero_only_without_truly_correct_labels():
    # m1 = 0: theta = 0 is allowed, and the deviance there is below the chi2 quantile.
    c = (40, 100, 6, 10, 0, 0)
    res = likelihood_interval(*c)
    assert res.lower == 0.0 and res.estimate == 0.0
    _, lmax = brute_mle(c)
    dev = lambda t: 2 * (lmax - brute_profile(t, c)) - CHI2  # noqa: E731
    upper = optimize.brentq(dev, res.upper - 0.01, res.upper + 0.01, xtol=1e-12)
    assert res.upper == pytest.approx(upper, abs=1e-5)
    # m0 = 0: the mirror image.
    res = likelihood_interval(60, 100, 0, 0, 4, 10)
    assert res.upper == 1.0 and res.estimate == 1.0


def test_profile_kernel_matches_brute_force_profile():
    c = (738, 1800, 112, 140, 54, 60)
    counts = [np.float64(v) for v in c]
    k, n, tn, m0, tp, m1 = c
    coef = (
        math.log(math.comb(n, k))
        + math.log(math.comb(m0, tn))
        + math.log(math.comb(m1, tp))
        + math.log(math.comb(m0 + m1, m1))
    )
    for theta in (0.05, 0.2, 0.3, 0.45, 0.8):
        with np.errstate(all="ignore"):  # as in likelihood_interval
            ours = lik._profile_kernel(np.float64(theta), *counts) + coef
        assert ours == pytest.approx(brute_profile(theta, c), abs=1e-7)


def test_vectorised_equals_one_by_one():
    cols = np.array(COUNT_SETS).T
    res = likelihood_interval(*cols, alpha=0.1)
    for i, c in enumerate(COUNT_SETS):
        one = likelihood_interval(*c, alpha=0.1)
        for a, b in zip(res, one, strict=True):
            np.testing.assert_allclose(a[i], b, atol=1e-9)


def test_interval_holds_the_estimate_and_shrinks_with_alpha():
    cols = np.array(COUNT_SETS).T
    wide, narrow = likelihood_interval(*cols, alpha=0.01), likelihood_interval(*cols, alpha=0.2)
    ok = ~np.isnan(narrow.estimate)
    assert np.all(narrow.lower[ok] <= narrow.estimate[ok])
    assert np.all(narrow.estimate[ok] <= narrow.upper[ok])
    assert np.all(wide.lower <= narrow.lower + 1e-12)
    assert np.all(wide.upper >= narrow.upper - 1e-12)


# ------------------------------------------------------------------- test-set estimand


def test_test_set_estimate_equals_the_mle_and_stays_in_the_support():
    cols = np.array(COUNT_SETS).T
    res = lik.test_set_interval(*cols)
    np.testing.assert_allclose(res.estimate, double_sampling_mle(*cols), atol=1e-15)
    _, n, _, m0, _, m1 = cols
    big_n = n + m0 + m1
    assert np.all(res.lower >= m1 / big_n - 1e-15)
    assert np.all(res.upper <= (m1 + n) / big_n + 1e-15)
    # Every item labelled: theta_test = m1 / N exactly.
    every = lik.test_set_interval(0, 0, 30, 40, 50, 60)
    assert every.lower == every.upper == pytest.approx(60 / 100)


def test_test_set_interval_is_narrower_than_the_population_one():
    c = (738, 1800, 112, 140, 54, 60)
    pop, ts = likelihood_interval(*c), lik.test_set_interval(*c)
    assert pop.lower < ts.lower < ts.upper < pop.upper


def test_test_set_interval_without_prediction_error_is_the_profile_interval_of_mu():
    # k = 0, all unlabelled items judged incorrect: mu = (m1 + n b) / N, and with b estimated
    # from fn of fn + tn the prediction error n b (1 - b) / N^2 widens it; compare the
    # profile deviance of the brute-force constrained maximisation at the ends.
    c = (0, 200, 150, 170, 10, 30)
    _, n, tn, m0, tp, m1 = c
    big_n = n + m0 + m1
    fn = m1 - tp
    res = lik.test_set_interval(*c)
    b_hat = fn / (fn + tn)

    def statistic(t):
        b = (big_n * t - m1) / n
        dev = 2 * (stats.binom.logpmf(fn, fn + tn, b_hat) - stats.binom.logpmf(fn, fn + tn, b))
        v = n * b * (1 - b) / big_n**2
        d2 = (res.estimate - t) ** 2
        return dev * d2 / (d2 + v * dev) - CHI2

    lower = optimize.brentq(statistic, m1 / big_n + 1e-9, res.estimate - 1e-9)
    upper = optimize.brentq(statistic, res.estimate + 1e-9, (m1 + n) / big_n - 1e-9)
    assert res.lower == pytest.approx(lower, abs=1e-6)
    assert res.upper == pytest.approx(upper, abs=1e-6)


# ------------------------------------------------------------------------- human only


def test_human_only_is_statsmodels_wilson():
    m0 = np.array([140, 0, 10, 5, 0])
    m1 = np.array([60, 10, 0, 5, 1])
    res = human_only(tn=m0 // 2, m0=m0, tp=m1 // 2, m1=m1, alpha=0.1)
    for i in range(len(m0)):
        lo, hi = proportion_confint(m1[i], m0[i] + m1[i], alpha=0.1, method="wilson")
        assert res.estimate[i] == pytest.approx(m1[i] / (m0[i] + m1[i]), abs=1e-15)
        assert res.lower[i] == pytest.approx(lo, abs=1e-12)
        assert res.upper[i] == pytest.approx(hi, abs=1e-12)


def test_human_only_nan_without_labelled_items():
    res = human_only(0, 0, 0, 0)
    assert all(math.isnan(v) for v in res)


# ------------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"k": 5, "n": 4}, r"k=5 > n=4"),
        ({"tn": 11}, r"tn=11 > m0=10"),
        ({"tp": -1}, r"tp must be a non-negative"),
        ({"m1": 2.5}, r"m1 must be a non-negative whole-number"),
        ({"alpha": 1.5}, r"alpha must be in \(0, 1\)"),
        ({"method": "wald"}, r"method must be one of 'profile'"),
    ],
)
def test_bad_input_names_the_field(kwargs, match):
    args = {"k": 3, "n": 10, "tn": 5, "m0": 10, "tp": 2, "m1": 4, **kwargs}
    for f in (likelihood_interval, lik.test_set_interval):
        with pytest.raises(ValueError, match=match):
            f(**args)


def test_test_set_interval_is_not_collected_as_a_test():
    assert lik.test_set_interval.__test__ is False


# -------------------------------------------------------------------------- coverage


@pytest.mark.parametrize("theta", [0.3, 0.7])
def test_coverage_small_simulation(theta):
    # 600 simulated evaluations (seed fixed): coverage within 0.95 +/- 3 MC-SE (+/- 0.027).
    reps = 600
    counts, theta_test = simulate(theta, reps, np.random.default_rng(20261127))
    tol = 3 * math.sqrt(0.95 * 0.05 / reps)
    pop = likelihood_interval(*counts)
    assert abs(np.mean((pop.lower <= theta) & (theta <= pop.upper)) - 0.95) <= tol
    ts = lik.test_set_interval(*counts)
    assert abs(np.mean((ts.lower <= theta_test) & (theta_test <= ts.upper)) - 0.95) <= tol
    # Widths: the likelihood interval about as narrow as PPI++ on the same counts (the
    # issue's 0.100 at theta = 0.3), half as wide as the human-only interval.
    ppi = ppi_mean(*counts)
    width = np.mean(pop.upper - pop.lower)
    assert width <= 1.05 * np.mean(ppi.upper - ppi.lower)
    human = human_only(*counts[2:])
    assert width <= 0.85 * np.mean(human.upper - human.lower)


# -------------------------------------------------------------- PPI++, random design


def test_ppi_mean_is_ppi_py_on_random_design_items():
    # Item-level random design: N = 1,000 judged items, a random 150 of them labelled. PPI++
    # takes the labelled items' (Y, Yhat) and the *unlabelled* items' Yhat; ppi_mean takes
    # their counts (n, k of the unlabelled items only, each item counted once).
    import ppi_py  # here, not at module level: its import resets the warning filters

    rng = np.random.default_rng(11)
    truth = rng.random(1000) < 0.3
    verdict = np.where(truth, rng.random(1000) < 0.9, rng.random(1000) >= 0.8)
    labelled = np.zeros(1000, dtype=bool)
    labelled[rng.choice(1000, 150, replace=False)] = True
    y, yhat, yhat_u = truth[labelled] * 1.0, verdict[labelled] * 1.0, verdict[~labelled] * 1.0
    est = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05)
    k, n = int(verdict[~labelled].sum()), int((~labelled).sum())
    m1, m0 = int(truth[labelled].sum()), int((~truth[labelled]).sum())
    tp = int((truth & verdict & labelled).sum())
    tn = int((~truth & ~verdict & labelled).sum())
    ours = ppi_mean(k, n, tn, m0, tp, m1)
    np.testing.assert_allclose(
        [ours.estimate, ours.lower, ours.upper],
        [float(np.ravel(est)[0]), float(lo[0]), float(hi[0])],
        atol=1e-10,
    )
