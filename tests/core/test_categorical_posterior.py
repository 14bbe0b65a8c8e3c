"""The importance sampler of the separate-calibration K-category posterior.

References, each written independently of the package:

- an exact Dirichlet mixture (``_mixture``): expanding Π_j (Σ_t θ_t C_tj)^{x_j} over the ways
  of giving each test verdict a truth and integrating C against its Dirichlet posterior term
  by term makes the marginal posterior of θ a finite mixture of Dirichlets, whose marginals
  are Beta mixtures: means and quantiles to 1e-10;
- the binary exact engine (``bayesjudge.core.exact.exact_marginals``) at K = 2;
- the PyMC model by NUTS (``bj.fit(counts, calibration="separate")``, slow).

Tolerances are 4 Monte Carlo SE of the sampler (its effective sample size).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import betainc, gammaln

from bayesjudge.core.categorical import ROW_PSEUDO_ITEMS
from bayesjudge.core.categorical_posterior import (
    THETA_PRIOR,
    default_confusion_prior,
    posterior_categorical,
    posterior_draws,
    posterior_linear,
    posterior_summary,
    weighted_quantile,
)
from bayesjudge.core.exact import exact_marginals
from bayesjudge.warnings import SmallSampleWarning


def _compositions(total: int, k: int):
    """Every way of writing ``total`` as k non-negative integers (stars and bars)."""
    for cut in itertools.combinations(range(total + k - 1), k - 1):
        edges = (-1, *cut, total + k - 1)
        yield [edges[i + 1] - edges[i] - 1 for i in range(k)]


def _log_beta(a):
    return gammaln(a).sum(-1) - gammaln(a.sum(-1))


def _mixture(x, c, alpha, beta, random=False):
    """Components (J, K) and weights (J,) of the exact Dirichlet-mixture posterior of θ.

    B[t, j] = test items with verdict j given truth t (column sums x_j): the term of B is
    Π_j multinomial(x_j; B[:, j]) · Π_t θ_t^{r_t} · Π_tj C_tj^{B_tj} with r = B 1; C's rows
    integrate to B(β_t + c_t + B_t) / B(β_t + c_t), θ's part to B(α (+ m) + r).
    """
    x = np.asarray(x)
    k = len(x)
    post_c = np.broadcast_to(np.asarray(beta, float), (k, k)) + np.asarray(c, float)
    base = np.broadcast_to(np.asarray(alpha, float), (k,)) + (
        np.asarray(c).sum(-1) if random else 0
    )
    comps, logw = [], []
    for choice in itertools.product(*(list(_compositions(int(xj), k)) for xj in x)):
        b = np.array(choice).T
        lw = sum(gammaln(x[j] + 1) - gammaln(b[:, j] + 1).sum() for j in range(k))
        lw += (_log_beta(post_c + b) - _log_beta(post_c)).sum()
        comps.append(base + b.sum(1))
        logw.append(lw + _log_beta(base + b.sum(1)))
    logw = np.array(logw)
    w = np.exp(logw - logw.max())
    return np.array(comps), w / w.sum()


def _marginal_quantile(comps, w, k, q):
    a, b = comps[:, k], comps.sum(1) - comps[:, k]
    return brentq(lambda t: float((w * betainc(a, b, t)).sum()) - q, 0, 1, xtol=1e-12)


def _marginal_cdf(comps, w, k, t):
    a, b = comps[:, k], comps.sum(1) - comps[:, k]
    return float((w * betainc(a, b, t)).sum())


X = np.array([4, 2, 3])
C = np.array([[8, 1, 1], [2, 6, 1], [1, 1, 7]])


@pytest.mark.parametrize(
    ("alpha", "beta", "design"),
    [
        (None, None, "stratified"),  # the default priors: flat θ, Perks's Dirichlet(1/3) rows
        (1.0, 1.0, "stratified"),  # flat rows
        ([2.0, 1.0, 0.5], [[3, 1, 1], [1, 3, 1], [1, 1, 3]], "random"),
    ],
)
def test_matches_the_exact_dirichlet_mixture(alpha, beta, design):
    priors = {} if alpha is None else {"theta_prior": alpha, "confusion_prior": beta}
    if alpha is None:
        alpha, beta = 1.0, 1.0 / 3.0  # the reference is written with the values themselves
    comps, w = _mixture(X, C, alpha, beta, random=design == "random")
    mean = (w[:, None] * comps / comps.sum(1, keepdims=True)).sum(0)
    post = posterior_draws(
        X, C, **priors, calibration_design=design, draws=100_000, random_seed=7,
    )  # fmt: skip
    assert post.ess > 1e4  # the random design weights by Π θ^m too: about 12 % of the draws
    theta = np.nan_to_num(post.theta)
    got_mean = (post.weights[:, None] * theta).sum(0)
    # The self-normalised estimate's MC SE, (Σ w² (θ − mean)²)^½: unlike sd/√ESS it counts
    # the weights' correlation with θ (over 15 other seeds its z-scores had sd 0.7-1.0; sd/√ESS
    # gave 1.1-1.3).
    mc_se = np.sqrt((post.weights[:, None] ** 2 * (theta - got_mean) ** 2).sum(0))
    assert np.all(np.abs(got_mean - mean) < 4 * mc_se), (got_mean, mean, mc_se)
    ci = posterior_linear(
        X, C, np.eye(3), **priors, calibration_design=design, draws=100_000, random_seed=7,
    )  # fmt: skip
    np.testing.assert_allclose(ci.estimate, got_mean, rtol=1e-12)
    for k in range(3):
        for q, got in ((0.025, ci.lower[k]), (0.975, ci.upper[k])):
            # the exact CDF at the sampled quantile is q within the quantile's MC error
            err = abs(_marginal_cdf(comps, w, k, float(got)) - q)
            assert err < 4 * np.sqrt(q * (1 - q) / post.ess), (k, q, got)
            ref = _marginal_quantile(comps, w, k, q)
            assert abs(got - ref) < 0.02  # and the limits themselves are close


def test_score_interval_is_the_linear_functional_of_the_same_draws():
    v = np.array([1.0, 0.5, 0.0])
    both = posterior_linear(X, C, np.vstack([np.eye(3), v]), draws=20_000, random_seed=3)
    score = posterior_categorical(X, C, scores=v, draws=20_000, random_seed=3)
    assert float(score.estimate) == pytest.approx(float(both.estimate[3]), abs=1e-12)
    assert float(score.lower) == pytest.approx(float(both.lower[3]), abs=1e-12)
    assert float(both.estimate[:3] @ v) == pytest.approx(float(both.estimate[3]), abs=1e-12)


def test_k2_equals_the_binary_exact_posterior():
    # (incorrect, correct): k = 420 of n = 1000 judged correct; tn = 70 of m0 = 100, tp = 88
    # of m1 = 100. Flat priors on both sides (the binary default Beta(1, 1); the K-category
    # default rows are Perks's Beta(1/2, 1/2) at K = 2, so flat rows are asked for).
    exact = exact_marginals(420, 1000, 70, 100, 88, 100)["theta"]
    flat = {"confusion_prior": 1.0, "draws": 40_000, "random_seed": 1}
    ci = posterior_categorical([580, 420], [[70, 30], [12, 88]], **flat)
    post = posterior_draws([580, 420], [[70, 30], [12, 88]], **flat)
    sd = float(exact.sd())
    assert abs(float(ci.estimate[1]) - float(exact.mean())) < 4 * sd / np.sqrt(post.ess)
    for q, got in ((0.025, ci.lower[1]), (0.975, ci.upper[1])):
        assert abs(float(exact.cdf(float(got))) - q) < 4 * np.sqrt(q * (1 - q) / post.ess)


def test_vectorised_over_groups_and_seeded():
    x = np.array([[[30, 20, 50]], [[10, 40, 50]]])  # (system 2, stratum 1, K)
    c = np.array([[80, 15, 5], [10, 80, 10], [5, 15, 80]])
    a = posterior_categorical(x, c, draws=500, random_seed=4)
    b = posterior_categorical(x, c, draws=500, random_seed=4)
    assert a.estimate.shape == (2, 1, 3)
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_allclose(a.estimate.sum(-1), 1.0, rtol=1e-12)
    assert (a.lower <= a.estimate).all() and (a.estimate <= a.upper).all()
    post = posterior_draws(x, c, draws=500, random_seed=4)
    assert post.theta.shape == (500, 2, 1, 3) and post.ess.shape == (2, 1)
    np.testing.assert_allclose(post.weights.sum(0), 1.0, rtol=1e-12)


def test_empty_calibration_cells_and_rows_use_the_prior():
    # The closed forms refuse a truth row without items; the posterior uses its prior.
    x = [30, 20, 50]
    c = [[40, 0, 0], [0, 40, 0], [0, 0, 40]]
    ci = posterior_categorical(x, c, draws=4000, random_seed=2)
    assert np.all(ci.lower > 0) and np.all(ci.upper < 1)
    with pytest.warns(SmallSampleWarning, match="effective sample size"):
        posterior_draws([30, 20, 50], [[2, 1, 1], [1, 1, 1], [0, 0, 0]], draws=200,
                        random_seed=1)  # fmt: skip


def test_a_group_without_any_proposal_inside_the_simplex_is_nan_and_warned():
    # Test verdicts all "B" while only 1 labelled item of truth B exists and the judge
    # never said B for A or tie among 400 each: with 100 proposals and flat rows none maps
    # inside (Perks's 1/3 rows put more proposals near the vertex, so a few land inside).
    with pytest.warns(SmallSampleWarning, match="NaN where no proposal"):
        res = posterior_summary([0, 0, 400], [[400, 0, 0], [0, 400, 0], [0, 0, 1]],
                                np.eye(3), draws=100, max_draws=100, random_seed=1,
                                confusion_prior=1.0)  # fmt: skip
    assert float(res.ess) == 0 and np.isnan(res.lower).all() and np.isnan(res.estimate).all()


def test_default_priors_are_flat_theta_and_perks_rows():
    # Default: θ ~ Dirichlet(1), each confusion row ~ Dirichlet(1/K): the same draws as
    # passing them, and not those of flat rows.
    assert default_confusion_prior(3) == pytest.approx(1 / 3) and THETA_PRIOR == 1.0
    assert default_confusion_prior(5) == ROW_PSEUDO_ITEMS / 5
    same = {"draws": 500, "random_seed": 3, "warn": False}
    default = posterior_draws(X, C, **same)
    perks = posterior_draws(X, C, theta_prior=1.0, confusion_prior=np.full((3, 3), 1 / 3), **same)
    flat = posterior_draws(X, C, confusion_prior=1.0, **same)
    np.testing.assert_array_equal(default.weights, perks.weights)
    assert not np.array_equal(default.weights, flat.weights)
    with pytest.raises(ValueError, match="k must be a whole number"):
        default_confusion_prior(1)


def test_the_model_and_the_sampler_share_one_default_prior():
    # bj.fit's CategoricalPriors default must be the sampler's (and so the study's).
    from bayesjudge.models.categorical import CategoricalPriors

    for k in (2, 3, 5):
        np.testing.assert_array_equal(
            CategoricalPriors().confusion_alpha(k), np.full((k, k), default_confusion_prior(k))
        )
        np.testing.assert_array_equal(CategoricalPriors().theta_alpha(k), np.full(k, THETA_PRIOR))


def test_weighted_quantile_matches_numpy_with_equal_or_repeated_weights():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(501, 2))
    for q in (0.001, 0.025, 0.5, 0.975, 0.999):
        np.testing.assert_allclose(
            weighted_quantile(v, np.full(v.shape, 1 / 501), q),
            np.quantile(v, q, axis=0, method="hazen"),
            rtol=1e-10,  # cumulative sums of 1/501 against numpy's index arithmetic
        )
    # draws with weight 0 (outside the simplex; NaN) are ignored
    padded = np.concatenate([v, np.full((50, 2), np.nan)])
    w = np.concatenate([np.full(v.shape, 1 / 501), np.zeros((50, 2))])
    np.testing.assert_allclose(
        weighted_quantile(padded, w, 0.3), weighted_quantile(v, w[:501], 0.3)
    )


def test_bad_input():
    with pytest.raises(ValueError, match="draws must be a whole number"):
        posterior_draws(X, C, draws=10)
    with pytest.raises(ValueError, match="theta_prior must be finite and > 0"):
        posterior_draws(X, C, theta_prior=0)
    with pytest.raises(ValueError, match="confusion_prior of shape"):
        posterior_draws(X, C, confusion_prior=[1, 2])
    with pytest.raises(ValueError, match="calibration must hold"):
        posterior_draws(X, C[:2])
    with pytest.raises(ValueError, match="scores must hold one value per category"):
        posterior_categorical(X, C, scores=[1, 0])
    with pytest.raises(ValueError, match="calibration_design"):
        posterior_draws(X, C, calibration_design="both")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        posterior_draws(X, C, draws=2000, random_seed=0)  # ESS well above 200: no warning


@pytest.mark.slow
def test_matches_the_mcmc_fit_of_the_separate_model():
    # bj.fit(counts, calibration="separate"): the PyMC model by NUTS with the sampler's default
    # priors (flat θ, Perks's Dirichlet(1/3) rows), passed explicitly; that they are also
    # bj.fit's defaults is test_the_model_and_the_sampler_share_one_default_prior.
    import arviz as az

    import bayesjudge as bj
    from bayesjudge.data import CategoricalCounts
    from bayesjudge.models.categorical import CategoricalPriors

    test = np.array([31, 12, 17])
    cal = np.array([[14, 3, 1], [2, 9, 3], [1, 2, 12]])
    counts = CategoricalCounts.from_counts(test, cal, categories=["A", "tie", "B"])
    priors = CategoricalPriors(theta=THETA_PRIOR, confusion=default_confusion_prior(3))
    fit = bj.fit(counts, calibration="separate", priors=priors, draws=2000, chains=4,
                 random_seed=3)  # fmt: skip
    post = posterior_draws(test, cal, draws=200_000, random_seed=5)
    theta = np.nan_to_num(post.theta)
    for i in range(3):
        draws = fit.posterior["theta"].isel(system=0, stratum=0, category=i)
        single = draws.rename("x").to_dataset()
        ess_bulk = float(az.ess(single, method="bulk")["x"])
        ess_tail = float(az.ess(single, method="tail")["x"])
        mean = float((post.weights * theta[:, i]).sum())
        sd = float(np.sqrt((post.weights * (theta[:, i] - mean) ** 2).sum()))
        assert abs(float(draws.mean()) - mean) < 4 * sd * np.sqrt(1 / ess_bulk + 1 / post.ess)
        for q in (0.025, 0.5, 0.975):
            at = float(draws.quantile(q))
            cdf = float(post.weights[theta[:, i] <= at].sum())
            assert abs(cdf - q) < 4 * np.sqrt(q * (1 - q) * (1 / ess_tail + 1 / post.ess)), (i, q)
