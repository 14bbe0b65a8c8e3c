"""The covariate model of several judges: Dawid–Skene with q0, q1 logistic in item covariates."""

from __future__ import annotations

import numpy as np
import pytest
from jury_covariate_simulation import simulate
from scipy import special, stats

from bayesjudge.core.jury import dawid_skene, dawid_skene_interval
from bayesjudge.core.jury_covariates import (
    covariate_dawid_skene,
    covariate_log_likelihood,
    covariate_q,
)


def test_without_covariates_it_is_dawid_skene():
    rng = np.random.default_rng(1)
    item, judge, verdict, _, seen, _ = simulate(rng)
    fit = covariate_dawid_skene(item, judge, verdict, None, seen, ridge=0.0, tol=1e-12)
    matrix = np.full((seen.size, 3), -1)
    matrix[item, judge] = verdict
    patterns, inverse = np.unique(matrix, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    test = np.bincount(inverse[seen < 0], minlength=len(patterns))
    lab = np.stack([np.bincount(inverse[seen == t], minlength=len(patterns)) for t in (0, 1)])
    ds = dawid_skene(patterns, test, lab, tol=1e-13)
    interval = dawid_skene_interval(patterns, test, lab, tol=1e-13)
    assert fit.converged
    assert fit.theta[0] == pytest.approx(ds.theta, abs=1e-7)
    np.testing.assert_allclose(1 - special.expit(fit.coef[:, 0, 0]), ds.q0, atol=1e-6)
    np.testing.assert_allclose(special.expit(fit.coef[:, 1, 0]), ds.q1, atol=1e-6)
    # two independent routes to the observed information (analytic Louis vs numerical)
    assert fit.theta_lower[0] == pytest.approx(interval.lower, abs=1e-5)
    assert fit.theta_upper[0] == pytest.approx(interval.upper, abs=1e-5)


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_log_likelihood_against_scipy(design):
    rng = np.random.default_rng(2)
    item, judge, verdict, x, seen, _ = simulate(rng, n_items=30, labelled=8)
    group = np.arange(30) % 2
    theta = np.array([0.3, 0.6])
    coef = rng.normal(size=(3, 2, 2))
    got = covariate_log_likelihood(
        item, judge, verdict, x, seen, theta, coef, group=group, design=design
    )
    expected = 0.0
    for i in range(30):
        rows = item == i
        per_truth = [
            stats.bernoulli.logpmf(
                verdict[rows],
                special.expit(coef[judge[rows], t, 0] + coef[judge[rows], t, 1] * x[rows]),
            ).sum()
            for t in (0, 1)
        ]
        prior = [np.log1p(-theta[group[i]]), np.log(theta[group[i]])]
        if seen[i] < 0:
            expected += special.logsumexp(np.add(per_truth, prior))
        else:
            expected += per_truth[seen[i]] + (prior[seen[i]] if design == "random" else 0.0)
    assert got == pytest.approx(expected, rel=1e-12)


def test_recovers_a_position_effect():
    rng = np.random.default_rng(3)
    coef = np.array([[[-1.4, 0.0], [2.2, 1.2]], [[-1.1, 0.8], [1.4, 0.0]],
                     [[-0.9, 0.0], [1.7, 0.0]]])  # fmt: skip
    item, judge, verdict, x, seen, truth = simulate(
        rng, n_items=1500, coef=coef, labelled=150, both_orders=True
    )
    fit = covariate_dawid_skene(item, judge, verdict, x, seen)
    se = np.sqrt(np.diag(fit.coef_cov)).reshape(coef.shape)
    assert np.all(np.abs(fit.coef - coef) < 4 * se), (fit.coef - coef) / se
    assert fit.theta_lower[0] < truth[seen < 0].mean() < fit.theta_upper[0]


def test_covariate_q_and_its_interval():
    coef = np.array([[[-1.0, 0.5], [2.0, -0.3]]])
    cov = np.diag(np.full(4, 0.01))
    out = covariate_q(coef, [[0.0], [2.0]], cov)
    assert out["q0"][0].tolist() == pytest.approx(special.expit([1.0, 0.0]).tolist())
    assert out["q1"][0].tolist() == pytest.approx(special.expit([2.0, 1.4]).tolist())
    # at x = 2 the variance of eta is 0.01 (1 + 4): delta method on the logit scale
    half = 1.959963985 * np.sqrt(0.05)
    assert out["q1_ci"][0, 1].tolist() == pytest.approx(
        special.expit([1.4 - half, 1.4 + half]).tolist()
    )
    assert (out["q0_ci"][..., 0] < out["q0"]).all() and (out["q0"] < out["q0_ci"][..., 1]).all()


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"verdict": [2, 1, 0]}, "verdict must hold"),
        ({"item": [0, 5, 1]}, "item indexes"),
        ({"covariates": [[np.nan], [1], [2]]}, "finite"),
        ({"truth": [3, -1]}, "truth must hold"),
        ({"judge": [0, 2, 0]}, r"judge\(s\) \[1\]"),
    ],
)
def test_bad_input(change, match):
    args = {"item": [0, 0, 1], "judge": [0, 1, 0], "verdict": [1, 0, 1],
            "covariates": [[0.0], [1.0], [2.0]], "truth": [-1, 1]} | change  # fmt: skip
    with pytest.raises(ValueError, match=match):
        covariate_dawid_skene(**args)
