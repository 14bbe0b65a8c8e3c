"""Planning a jury: the expected information and the planned width of the Dawid–Skene θ̂."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import expit, logit
from scipy.stats import bernoulli

from bayesjudge.core.jury import (
    dawid_skene,
    dawid_skene_interval,
    dawid_skene_plan,
    dawid_skene_unit_information,
)

Q0 = np.array([0.80, 0.85, 0.90])
Q1 = np.array([0.70, 0.90, 0.90])
PATS3 = np.array(list(itertools.product((1, 0), repeat=3)))


def scipy_log_probs(z, n_judges, pats):
    """log P(pattern) of a test item and log P(pattern | t) with scipy.stats.bernoulli."""
    th, q0, q1 = expit(z[0]), expit(z[1 : 1 + n_judges]), expit(z[1 + n_judges :])
    l0 = np.array([sum(bernoulli.logpmf(1 - v, q0[j]) for j, v in enumerate(r)) for r in pats])
    l1 = np.array([sum(bernoulli.logpmf(v, q1[j]) for j, v in enumerate(r)) for r in pats])
    return np.logaddexp(np.log1p(-th) + l0, np.log(th) + l1), l0, l1, th


def fisher_by_differences(theta, q0, q1, design):
    """Σ_p P_p ∇log P_p ∇log P_pᵀ with central differences, an independent computation."""
    n_judges = len(q0)
    pats = np.array(list(itertools.product((1, 0), repeat=n_judges)))
    z = np.r_[logit(theta), logit(q0), logit(q1)]
    h = 1e-6
    grads = []
    for d in range(z.size):
        up, down = z.copy(), z.copy()
        up[d] += h
        down[d] -= h
        hi, lo = scipy_log_probs(up, n_judges, pats), scipy_log_probs(down, n_judges, pats)
        # Stratified labelled items carry log P(v | t); random ones also log P(t).
        extra = design == "random"
        g_test = (hi[0] - lo[0]) / (2 * h)
        g0 = (hi[1] + extra * np.log1p(-hi[3]) - lo[1] - extra * np.log1p(-lo[3])) / (2 * h)
        g1 = (hi[2] + extra * np.log(hi[3]) - lo[2] - extra * np.log(lo[3])) / (2 * h)
        grads.append((g_test, g0, g1))
    grads = np.array(grads)  # (d, 3, P)
    logp, l0, l1, _ = scipy_log_probs(z, n_judges, pats)
    weights = np.exp(np.stack([logp, l0, l1]))
    return np.einsum("kp,dkp,ekp->kde", weights, grads, grads)


@pytest.mark.parametrize("design", ["stratified", "random"])
@pytest.mark.parametrize("n_judges", [1, 2, 3])
def test_unit_information_equals_fisher_information_by_differences(design, n_judges):
    q0, q1 = Q0[:n_judges], Q1[:n_judges]
    ours = dawid_skene_unit_information(0.35, q0, q1, design=design)
    ref = fisher_by_differences(0.35, q0, q1, design)
    if design == "random":
        # A random labelled item's truth is data: its information is the mixture over the
        # truth, (1 - θ) I_0 + θ I_1 (per truth, the θ term is the curvature θ(1 - θ), which
        # the Wald interval uses with the observed m0, m1; its square-score form differs).
        ours = np.stack([ours[0], 0.65 * ours[1] + 0.35 * ours[2]])
        ref = np.stack([ref[0], 0.65 * ref[1] + 0.35 * ref[2]])
    # Central differences with h = 1e-6 of log-probabilities of order 1: error ~1e-9.
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    ("theta", "q0", "q1", "n", "m0", "m1"),
    [(0.4, 0.8, 0.9, 1000, 50, 50), (0.85, 0.6, 0.95, 300, 20, 80), (0.1, 0.9, 0.7, 5000, 10, 10)],
)
def test_one_judge_plan_is_the_rogan_gladen_delta_variance(theta, q0, q1, n, m0, m1):
    p = theta * q1 + (1 - theta) * (1 - q0)
    j = q0 + q1 - 1
    var = (p * (1 - p) / n + (1 - theta) ** 2 * q0 * (1 - q0) / m0) / j**2
    var += theta**2 * q1 * (1 - q1) / m1 / j**2
    plan = dawid_skene_plan(theta, [q0], [q1], n, m0, m1)
    np.testing.assert_allclose(plan.sd, np.sqrt(var), rtol=1e-10)
    half = 1.959963984540054 * np.sqrt(var) / (theta * (1 - theta))
    np.testing.assert_allclose(plan.width, expit(logit(theta) + half) - expit(logit(theta) - half))


def test_plan_broadcasts_over_budgets_and_splits():
    m0, m1 = np.meshgrid([10, 40, 160], [5, 20, 80], indexing="ij")
    plan = dawid_skene_plan(0.3, Q0, Q1, 500, m0, m1)
    assert plan.width.shape == (3, 3)
    one = dawid_skene_plan(0.3, Q0, Q1, 500, 40, 80)
    np.testing.assert_allclose(plan.width[1, 2], one.width, rtol=1e-12)
    # More labels never widen the planned interval.
    assert (np.diff(plan.width, axis=0) < 0).all() and (np.diff(plan.width, axis=1) < 0).all()


def test_adding_a_judge_never_widens_the_plan():
    base = dawid_skene_plan(0.3, Q0[:2], Q1[:2], 500, 30, 30)
    more = dawid_skene_plan(0.3, Q0, Q1, 500, 30, 30)
    weak = dawid_skene_plan(0.3, np.r_[Q0[:2], 0.55], np.r_[Q1[:2], 0.5], 500, 30, 30)
    assert more.width < base.width and weak.width <= base.width + 1e-12


def test_two_judges_without_labels_are_not_identified():
    plan = dawid_skene_plan(0.3, Q0[:2], Q1[:2], 500, 0, 0)
    assert np.isinf(plan.sd) and (plan.lower, plan.upper) == (0.0, 1.0)
    three = dawid_skene_plan(0.3, Q0, Q1, 500, 0, 0)
    assert np.isfinite(three.sd)  # three judges: identified without labels (Hui–Walter)


def test_planned_width_matches_simulated_dawid_skene():
    """The planned sd and width against 400 simulated data sets (3 judges, n=500, 40+40)."""
    rng = np.random.default_rng(20261128)
    theta, n, m0, m1, reps = 0.3, 500, 40, 40, 400
    p0 = np.prod(np.where(PATS3 == 0, Q0, 1 - Q0), axis=1)
    p1 = np.prod(np.where(PATS3 == 1, Q1, 1 - Q1), axis=1)
    est, width = np.empty(reps), np.empty(reps)
    for r in range(reps):
        test = rng.multinomial(n, theta * p1 + (1 - theta) * p0)
        lab = np.stack([rng.multinomial(m0, p0), rng.multinomial(m1, p1)])
        fit = dawid_skene_interval(PATS3, test, lab)
        est[r], width[r] = fit.estimate, fit.upper - fit.lower
    plan = dawid_skene_plan(theta, Q0, Q1, n, m0, m1)
    # The sd of 400 draws has relative MC-SE 1/sqrt(2·399) = 3.5 %: allow 4 MC-SE.
    assert abs(est.std(ddof=1) / plan.sd - 1) < 4 / np.sqrt(2 * (reps - 1))
    # The mean width: its MC-SE from the replicates; 4 MC-SE plus 2 % for the O(1/n) gap
    # between the observed information at θ̂ and the expected one at θ.
    mcse = width.std(ddof=1) / np.sqrt(reps)
    assert abs(width.mean() - plan.width) < 4 * mcse + 0.02 * plan.width
    assert abs(est.mean() - theta) < 4 * est.std(ddof=1) / np.sqrt(reps)


def test_planning_takes_the_estimates_of_a_fit():
    rng = np.random.default_rng(7)
    p0 = np.prod(np.where(PATS3 == 0, Q0, 1 - Q0), axis=1)
    p1 = np.prod(np.where(PATS3 == 1, Q1, 1 - Q1), axis=1)
    test = rng.multinomial(800, 0.6 * p1 + 0.4 * p0)
    lab = np.stack([rng.multinomial(30, p0), rng.multinomial(30, p1)])
    fit = dawid_skene(PATS3, test, lab, smoothing=0.5)
    plan = dawid_skene_plan(fit.theta, fit.q0, fit.q1, 800, 30, 30)
    res = dawid_skene_interval(PATS3, test, lab, smoothing=0.5)
    # Observed and expected information agree to O(1/sqrt(n)) on one data set.
    assert abs(plan.width / (res.upper - res.lower) - 1) < 0.25


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"q0": [1.0, 0.8, 0.8]}, "strictly between 0 and 1"),
        ({"q0": [0.8] * 17, "q1": [0.8] * 17}, "1 to 16 judges"),
        ({"m0": -1}, "m0 must be finite and non-negative"),
        ({"n": np.nan}, "n must be finite"),
    ],
)
def test_bad_plans_are_refused(kwargs, match):
    args = {"theta": 0.3, "q0": Q0, "q1": Q1, "n": 500, "m0": 10, "m1": 10, **kwargs}
    with pytest.raises(ValueError, match=match):
        dawid_skene_plan(**args)
