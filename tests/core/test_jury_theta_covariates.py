"""The covariate model with a truth that depends on item covariates (theta_covariates).

P(Z_i = 1 | w_i) = expit(α_g + δᵀ w_i); θ_g is the mean of that probability over the group's
test items (all its items under the random design). Checked: without theta covariates the fit
is the one before they existed (reference values), the likelihood against scipy.stats, the EM
optimum against scipy.optimize, the observed information against a numerical Hessian of the
likelihood, the aggregation and its delta-method interval, and the confounding that motivates
the model (a truth that rises with length read as a judge's length bias). Coverage over many
data sets: tests/core/test_jury_theta_covariates_slow.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from jury_covariate_simulation import simulate
from scipy import optimize, special, stats

from bayesjudge.core.jury_covariates import covariate_dawid_skene, covariate_log_likelihood


def simulate_confounded(rng, n=1500, alpha=0.0, delta=2.0, labelled=100):
    """Truth rising with an item covariate w; three judges WITHOUT any covariate effect."""
    q0, q1 = np.array([0.75, 0.7, 0.7]), np.array([0.8, 0.75, 0.7])
    w = rng.normal(size=n)
    truth = (rng.random(n) < special.expit(alpha + delta * w)).astype(int)
    item, judge = np.repeat(np.arange(n), 3), np.tile(np.arange(3), n)
    p = np.where(truth[item] == 1, q1[judge], 1 - q0[judge])
    verdict = (rng.random(3 * n) < p).astype(int)
    seen = np.where(np.arange(n) < labelled, truth, -1)
    return item, judge, verdict, w, seen, truth


def test_without_theta_covariates_the_fit_is_unchanged():
    """Reference values from the module before theta covariates (git HEAD of 2026-11-28):

    ``rng = np.random.default_rng(7); item, judge, verdict, x, seen, _ = simulate(rng,
    n_items=120, labelled=20); covariate_dawid_skene(item, judge, verdict, x, seen,
    group=np.arange(120) % 2, design="random")`` — one EM from the majority vote, which is
    ``n_starts=1`` since multi-start EM (the default now finds a higher maximum here: see
    ``test_multi_start_keeps_the_highest_maximum``).
    """
    rng = np.random.default_rng(7)
    item, judge, verdict, x, seen, _ = simulate(rng, n_items=120, labelled=20)
    fit = covariate_dawid_skene(
        item, judge, verdict, x, seen, group=np.arange(120) % 2, design="random", n_starts=1
    )
    np.testing.assert_allclose(fit.theta, [0.3297151685569293, 0.30330744592937847], atol=1e-12)
    np.testing.assert_allclose(
        fit.theta_lower, [0.19093203166692346, 0.17258210002080668], atol=1e-12
    )
    np.testing.assert_allclose(fit.theta_upper, [0.5062542348703319, 0.47607885639699493],
                               atol=1e-12)  # fmt: skip
    slopes = [0.2539620224532182, 0.31391407846503017, 0.21057340890296516,
              0.12686353955398944, 0.30712721108167496, -0.14397652760917595]  # fmt: skip
    np.testing.assert_allclose(fit.coef[:, :, 1].ravel(), slopes, atol=1e-12)
    se = [0.25049973319522634, 0.2710659011577397, 0.692088833569318, 0.6886877265085697]
    np.testing.assert_allclose(np.sqrt(np.diag(fit.coef_cov))[:4], se, atol=1e-12)
    assert fit.log_likelihood == pytest.approx(-230.98529938338174, abs=1e-12)
    assert fit.n_iter == 304
    # the new fields: the constant model's truth parameters are logit θ_g
    np.testing.assert_allclose(fit.theta_coef, special.logit(fit.theta), atol=1e-9)
    assert fit.theta_coef_cov.shape == (2, 2)
    assert (fit.n_starts, fit.n_best) == (1, 1)


def test_multi_start_keeps_the_highest_maximum():
    """The reference data above (120 items, 20 labelled, random design) have two maxima.

    Measured (2026-11-28): the vote's EM stops at penalised log-likelihood -231.00658 (θ =
    0.330, 0.303); the start from the labels-only fit reaches -230.94058 (θ = 0.451, 0.470,
    judge 2 nearly perfect), and the three random starts (seed 0) the vote's maximum.
    """
    rng = np.random.default_rng(7)
    item, judge, verdict, x, seen, _ = simulate(rng, n_items=120, labelled=20)
    args = (item, judge, verdict, x, seen)
    kw = {"group": np.arange(120) % 2, "design": "random"}
    one = covariate_dawid_skene(*args, **kw, n_starts=1)
    best = covariate_dawid_skene(*args, **kw)
    assert (best.n_starts, best.n_best) == (5, 1)
    ridge = 1e-3

    def objective(fit):
        ll = covariate_log_likelihood(*args, fit.theta, fit.coef, **kw)
        assert ll == pytest.approx(fit.log_likelihood, abs=1e-9)
        return ll - ridge / 2 * (fit.coef**2).sum()

    assert objective(best) == pytest.approx(-230.94058080484, abs=1e-6)
    assert objective(one) == pytest.approx(-231.00658190499, abs=1e-6)
    np.testing.assert_allclose(best.theta, [0.4511087, 0.46981282], atol=1e-6)
    # without labelled items there is no labels-only start: the vote and random ones
    no_labels = covariate_dawid_skene(*args[:4], np.full(120, -1), **kw, n_starts=2)
    assert no_labels.n_starts == 2


@pytest.mark.parametrize("n_starts", [0, 2.5, True, "3"])
def test_bad_n_starts(n_starts):
    with pytest.raises(ValueError, match="n_starts must be a whole number of EM starts"):
        covariate_dawid_skene([0, 0, 0], [0, 1, 2], [1, 0, 1], None, [-1], n_starts=n_starts)


def small_data(seed=11, n=150):
    rng = np.random.default_rng(seed)
    item, judge, verdict, w, seen, _ = simulate_confounded(rng, n=n, labelled=30)
    x = np.column_stack([w[item], rng.normal(size=item.size)])  # a row covariate too
    tcov = np.column_stack([w, rng.normal(size=n)])
    return item, judge, verdict, x, seen, np.arange(n) % 2, tcov


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_log_likelihood_against_scipy(design):
    item, judge, verdict, x, seen, group, tcov = small_data()
    rng = np.random.default_rng(12)
    coef, tcoef = rng.normal(size=(3, 2, 3)), rng.normal(size=4)  # α_0, α_1, δ_1, δ_2
    got = covariate_log_likelihood(
        item, judge, verdict, x, seen, None, coef, group=group, design=design,
        theta_covariates=tcov, theta_coef=tcoef,
    )  # fmt: skip
    expected = 0.0
    for i in range(len(seen)):
        r = item == i
        per_truth = [
            stats.bernoulli.logpmf(
                verdict[r],
                special.expit(coef[judge[r], t, 0] + (coef[judge[r], t, 1:] * x[r]).sum(1)),
            ).sum()
            for t in (0, 1)
        ]  # fmt: skip
        p = special.expit(tcoef[group[i]] + tcov[i] @ tcoef[2:])
        prior = stats.bernoulli.logpmf([0, 1], p)
        if seen[i] < 0:
            expected += special.logsumexp(np.add(per_truth, prior))
        else:
            expected += per_truth[seen[i]] + (prior[seen[i]] if design == "random" else 0.0)
    assert got == pytest.approx(expected, rel=1e-12)


def penalised(params, args, design, ridge, n_groups=2):
    item, judge, verdict, x, seen, group, tcov = args
    k = n_groups + tcov.shape[1]
    ll = covariate_log_likelihood(item, judge, verdict, x, seen, None, params[k:].reshape(3, 2, -1),
                                  group=group, design=design, theta_covariates=tcov,
                                  theta_coef=params[:k])  # fmt: skip
    return ll - ridge / 2 * (params**2).sum()


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_em_reaches_the_optimum_and_the_information_is_its_curvature(design):
    args = small_data(n=300)  # at 150 items a judge is nearly separated (variance ~ 400)
    ridge = 1e-3
    fit = covariate_dawid_skene(*args[:5], group=args[5], design=design, theta_covariates=args[6],
                                ridge=ridge, tol=1e-10)  # fmt: skip
    assert fit.converged
    em = np.concatenate([fit.theta_coef, fit.coef.ravel()])
    res = optimize.minimize(lambda p: -penalised(p, args, design, ridge), np.zeros(em.size),
                            method="BFGS", options={"gtol": 1e-7})  # fmt: skip
    assert penalised(em, args, design, ridge) >= -res.fun - 1e-9
    # the EM optimum is a maximum: BFGS started there stays there
    res = optimize.minimize(lambda p: -penalised(p, args, design, ridge), em, method="BFGS",
                            options={"gtol": 1e-7})  # fmt: skip
    np.testing.assert_allclose(em, res.x, atol=1e-4)
    if design == "stratified":
        # Two maxima (measured 2026-11-28): BFGS from 0 and the vote's EM stop at -556.52801,
        # the multi-start EM (the labels-only start) reaches -556.50052.
        one = covariate_dawid_skene(*args[:5], group=args[5], design=design,
                                    theta_covariates=args[6], ridge=ridge, tol=1e-10,
                                    n_starts=1)  # fmt: skip
        low = np.concatenate([one.theta_coef, one.coef.ravel()])
        assert penalised(em, args, design, ridge) > penalised(low, args, design, ridge) + 0.02
    # the observed information against central second differences of the penalised likelihood
    h, size = 1e-3, em.size
    hess = np.zeros((size, size))
    f0 = penalised(em, args, design, ridge)
    for a in range(size):
        for b in range(a, size):
            ea, eb = np.eye(size)[a] * h, np.eye(size)[b] * h
            if a == b:
                val = (penalised(em + ea, args, design, ridge) - 2 * f0
                       + penalised(em - ea, args, design, ridge)) / h**2  # fmt: skip
            else:
                val = sum(s * penalised(em + sa * ea + sb * eb, args, design, ridge)
                          for s, sa, sb in ((1, 1, 1), (-1, 1, -1), (-1, -1, 1), (1, -1, -1))
                          ) / (4 * h**2)  # fmt: skip
            hess[a, b] = hess[b, a] = val
    cov = np.linalg.inv(-hess)
    k = fit.theta_coef.size
    np.testing.assert_allclose(fit.theta_coef_cov, cov[:k, :k], rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(fit.coef_cov, cov[k:, k:], rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_theta_is_the_mean_over_the_test_items_with_a_delta_interval(design):
    item, judge, verdict, x, seen, group, tcov = small_data(seed=13, n=300)
    fit = covariate_dawid_skene(item, judge, verdict, x, seen, group=group, design=design,
                                theta_covariates=tcov, alpha=0.1)  # fmt: skip
    a, d = fit.theta_coef[:2], fit.theta_coef[2:]
    for g in (0, 1):
        sel = (group == g) & ((seen < 0) | (design == "random"))
        p = special.expit(a[g] + tcov[sel] @ d)
        assert fit.theta[g] == pytest.approx(p.mean(), rel=1e-12)

        # delta method by a numerical gradient of logit(mean p) in (α, δ)
        def logit_theta(par, sel=sel, g=g):
            return special.logit(special.expit(par[g] + tcov[sel] @ par[2:]).mean())

        grad = optimize.approx_fprime(fit.theta_coef, logit_theta, 1e-7)
        se = np.sqrt(grad @ fit.theta_coef_cov @ grad)
        z = stats.norm.ppf(0.95)
        want = special.expit(special.logit(p.mean()) + np.array([-z, z]) * se)
        np.testing.assert_allclose([fit.theta_lower[g], fit.theta_upper[g]], want, rtol=1e-5)


def test_a_truth_rising_with_length_is_not_read_as_a_length_bias():
    """Judges without length bias; the truth's logit rises by 2 per SD of the length.

    ``simulate_confounded(np.random.default_rng(5))`` (1500 items, 100 labelled): the
    constant-θ model finds a length slope of more than 3 SE in some judge's q; the θ(x) model
    finds none beyond 3 SE, recovers δ = 2 within 3 SE and covers the test items' θ.
    """
    item, judge, verdict, w, seen, _ = simulate_confounded(np.random.default_rng(5))
    args = (item, judge, verdict, w[item], seen)
    # one EM start each (as measured before multi-start EM; 1500 items have one maximum here)
    const = covariate_dawid_skene(*args, design="random", n_starts=1)
    model = covariate_dawid_skene(*args, design="random", theta_covariates=w, n_starts=1)
    z_const = const.coef[:, :, 1] / np.sqrt(np.diag(const.coef_cov)).reshape(3, 2, 2)[:, :, 1]
    z_model = model.coef[:, :, 1] / np.sqrt(np.diag(model.coef_cov)).reshape(3, 2, 2)[:, :, 1]
    assert np.abs(z_const).max() > 3, z_const
    assert np.abs(z_model).max() < 3, z_model
    assert abs(model.theta_coef[1] - 2.0) < 3 * np.sqrt(model.theta_coef_cov[1, 1])
    target = special.expit(2.0 * w).mean()  # every item under the random design
    assert model.theta_lower[0] <= target <= model.theta_upper[0]
    assert not const.theta_lower[0] <= target <= const.theta_upper[0]  # the bias, too


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"theta_covariates": [[0.0], [1.0], [2.0]]}, r"shape \(2, p_t\)"),
        ({"theta_covariates": [[0.0], [np.inf]]}, "NaN/inf"),
    ],
)
def test_bad_theta_covariates(change, match):
    args = {"item": [0, 0, 1], "judge": [0, 1, 0], "verdict": [1, 0, 1],
            "covariates": [[0.0], [1.0], [2.0]], "truth": [-1, 1]} | change  # fmt: skip
    with pytest.raises(ValueError, match=match):
        covariate_dawid_skene(**args)


def test_log_likelihood_needs_the_truth_coefficients():
    with pytest.raises(ValueError, match="theta_coef must hold α per group then δ"):
        covariate_log_likelihood([0, 0], [0, 1], [1, 1], None, [-1], None, np.zeros((2, 2, 1)),
                                 theta_covariates=[[1.0]], theta_coef=[0.0])  # fmt: skip
