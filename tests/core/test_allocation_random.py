"""Tests for the random labelling design's planning in bayesjudge.core.allocation.

References: Tenenbein's double-sampling variance written in its (φ, a, b) form; the inverse
Fisher information of the full likelihood from finite differences of scipy.stats.binom.logpmf;
the issue's measured mean widths (1,800 unlabelled + 200 labelled items); Monte Carlo at fixed
seeds with tolerances from the Monte Carlo standard error (MCSE).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from bayesjudge.core.allocation import (
    LabelPlan,
    allocation_report,
    labels_for_width,
    random_design_variance,
)

Z95 = float(stats.norm.isf(0.025))


def tenenbein(theta, q0, q1, labelled, judged):
    """Var = (a−b)² φ(1−φ)/N + φ² a(1−a)/(Lφ) + (1−φ)² b(1−b)/(L(1−φ)), scalar Python."""
    phi = theta * q1 + (1 - theta) * (1 - q0)
    a = theta * q1 / phi
    b = theta * (1 - q1) / (1 - phi)
    return (
        (a - b) ** 2 * phi * (1 - phi) / judged
        + phi**2 * a * (1 - a) / (labelled * phi)
        + (1 - phi) ** 2 * b * (1 - b) / (labelled * (1 - phi))
    )


def test_matches_tenenbein_form_on_random_inputs():
    rng = np.random.default_rng(5)
    for _ in range(300):
        theta, q0, q1 = rng.uniform(0.01, 0.99, 3)
        labelled = int(rng.integers(1, 500))
        judged = labelled + int(rng.integers(0, 5000))
        got = random_design_variance(theta, q0, q1, labelled, judged)
        assert got == pytest.approx(tenenbein(theta, q0, q1, labelled, judged), rel=1e-10)


def neg_loglik(params, k, n, tn, m0, tp, m1):
    """Minus the random design's full log-likelihood, from scipy.stats.binom.logpmf."""
    theta, q0, q1 = params
    p = theta * q1 + (1 - theta) * (1 - q0)
    return -(
        stats.binom.logpmf(k, n, p)
        + stats.binom.logpmf(tn, m0, q0)
        + stats.binom.logpmf(tp, m1, q1)
        + stats.binom.logpmf(m1, m0 + m1, theta)
    )


def fd_hessian(f, x, h=1e-4):
    x = np.asarray(x, float)
    d = len(x)
    out = np.empty((d, d))
    for i in range(d):
        for j in range(d):
            e_i, e_j = np.eye(d)[i] * h, np.eye(d)[j] * h
            out[i, j] = (f(x + e_i + e_j) - f(x + e_i - e_j) - f(x - e_i + e_j)
                         + f(x - e_i - e_j)) / (4 * h * h)  # fmt: skip
    return out


@pytest.mark.parametrize(
    ("theta", "q0", "q1", "labelled", "unlabelled"),
    [
        # Expected counts are whole numbers, so the observed information there equals the
        # expected one (the binomial log-likelihood's Hessian is linear in the counts):
        # m1 = 300, m0 = 700, tn = 560, tp = 270, p = 0.41, k = 1640.
        (0.3, 0.8, 0.9, 1000, 4000),
        # m1 = 100, m0 = 900, tn = 720, tp = 90, p = 0.27, k = 270.
        (0.1, 0.8, 0.9, 1000, 1000),
        # m1 = 500, m0 = 500, tn = 300, tp = 350, p = 0.55, k = 11000; J = 0.3.
        (0.5, 0.6, 0.7, 1000, 20000),
    ],
)
def test_equals_inverse_fisher_information_of_the_full_likelihood(
    theta, q0, q1, labelled, unlabelled
):
    m1 = round(theta * labelled)
    m0 = labelled - m1
    tn, tp = round(q0 * m0), round(q1 * m1)
    p = theta * q1 + (1 - theta) * (1 - q0)
    k = round(p * unlabelled)
    assert (m1, tn, tp, k) == pytest.approx(
        (theta * labelled, q0 * m0, q1 * m1, p * unlabelled), abs=1e-9
    )
    info = fd_hessian(lambda x: neg_loglik(x, k, unlabelled, tn, m0, tp, m1), [theta, q0, q1])
    var_fisher = np.linalg.inv(info)[0, 0]
    expected = random_design_variance(theta, q0, q1, labelled, labelled + unlabelled)
    assert var_fisher == pytest.approx(expected, rel=1e-5)


def test_issue_measured_widths():
    # The issue: 1,800 unlabelled + 200 labelled items, q0 = 0.8, q1 = 0.9, flat priors: mean
    # 95 % width of the full likelihood's posterior 0.100 (θ = 0.3) and 0.068 (θ = 0.08),
    # PPI++ 0.099 and 0.066 (simulation means, 3 decimals).
    for theta, reported in ((0.3, 0.100), (0.08, 0.068)):
        width = 2 * Z95 * math.sqrt(random_design_variance(theta, 0.8, 0.9, 200, 2000))
        assert width == pytest.approx(reported, abs=0.0015), (theta, width)


def test_limits():
    # Judge no better than chance: human-only θ(1−θ)/L; perfect judge: θ(1−θ)/N.
    assert random_design_variance(0.3, 0.5, 0.5, 200, 2000) == pytest.approx(0.21 / 200)
    assert random_design_variance(0.3, 1.0, 1.0, 200, 2000) == pytest.approx(0.21 / 2000)
    # Inverted judge (J < 0) is as informative as the mirrored one.
    assert random_design_variance(0.3, 0.2, 0.1, 200, 2000) == pytest.approx(
        random_design_variance(0.3, 0.8, 0.9, 200, 2000)
    )
    # N = ∞ and L = N.
    assert random_design_variance(0.3, 0.8, 0.9, 200) == pytest.approx(
        tenenbein(0.3, 0.8, 0.9, 200, math.inf)
    )
    assert random_design_variance(0.3, 0.8, 0.9, 500, 500) == pytest.approx(0.21 / 500)
    # θ = 0: no variance; broadcasting.
    assert random_design_variance(0.0, 0.8, 0.9, 10, 100) == 0.0
    assert random_design_variance([0.2, 0.3], 0.8, 0.9, 200, [1000, 2000]).shape == (2,)


def simulate_random_design(rng, reps, theta, q0, q1, labelled, judged):
    """Counts of the random design: (K, tp, fp, fn, tn) over all N and the L labelled items."""
    truth_l = rng.binomial(labelled, theta, reps)  # labelled truly correct (m1)
    tp = rng.binomial(truth_l, q1)
    tn = rng.binomial(labelled - truth_l, q0)
    fp, fn = labelled - truth_l - tn, truth_l - tp
    p = theta * q1 + (1 - theta) * (1 - q0)
    k_unlabelled = rng.binomial(judged - labelled, p, reps)
    return k_unlabelled + tp + fp, tp, fp, fn, tn


def tenenbein_mle(K, tp, fp, fn, tn, judged):
    phi = K / judged
    return phi * tp / (tp + fp) + (1 - phi) * fn / (fn + tn)


@pytest.mark.parametrize("theta", [0.3, 0.08])
def test_variance_matches_simulation(theta):
    # 20000 data sets of N = 2000 judged items of which L = 300 labelled, q0 = 0.8, q1 = 0.9.
    # The empirical variance of the closed-form MLE matches the formula within 4 MCSE (MCSE
    # of a variance from the fourth central moment) plus 2 % (first-order: E[1/(Lφ)] etc.).
    rng = np.random.default_rng(int(1000 * theta))
    reps, labelled, judged = 20000, 300, 2000
    K, tp, fp, fn, tn = simulate_random_design(rng, reps, theta, 0.8, 0.9, labelled, judged)
    est = tenenbein_mle(K, tp, fp, fn, tn, judged)
    assert np.isfinite(est).all()
    dev2 = (est - est.mean()) ** 2
    var, mcse = dev2.mean(), dev2.std(ddof=1) / math.sqrt(reps)
    expected = random_design_variance(theta, 0.8, 0.9, labelled, judged)
    assert abs(var - expected) < 4 * mcse + 0.02 * expected, (var, expected, mcse)
    assert abs(est.mean() - theta) < 4 * math.sqrt(var / reps) + 0.002


@pytest.mark.parametrize(("theta", "judged"), [(0.3, 2000), (0.08, 2000), (0.6, None)])
def test_labels_for_width_is_the_smallest_meeting_the_target(theta, judged):
    target = 0.08
    plan = labels_for_width(target, theta, 0.8, 0.9, judged=judged)
    assert isinstance(plan, LabelPlan) and bool(plan.reachable)
    big_n = math.inf if judged is None else judged

    def width(L):
        return 2 * Z95 * math.sqrt(tenenbein(theta, 0.8, 0.9, L, big_n))

    assert width(plan.labels) <= target < width(plan.labels - 1)
    assert plan.width == pytest.approx(width(plan.labels))
    assert plan.m0 + plan.m1 == plan.labels and plan.m1 == round(theta * plan.labels)


def test_labels_for_width_out_of_reach_and_bad_input():
    # 300 judged items, θ = 0.3: labelling all 300 gives 2·1.96·sqrt(0.21/300) = 0.104.
    plan = labels_for_width(0.05, 0.3, 0.8, 0.9, judged=300)
    assert not bool(plan.reachable) and plan.labels == 300
    assert plan.width == pytest.approx(2 * Z95 * math.sqrt(0.21 / 300))
    plan = labels_for_width([0.05, 0.2], 0.3, 0.8, 0.9, judged=300)
    assert plan.reachable.tolist() == [False, True]
    with pytest.raises(ValueError, match="target_width"):
        labels_for_width(0.0, 0.3, 0.8, 0.9)
    with pytest.raises(ValueError, match="design must be one of"):
        labels_for_width(0.1, 0.3, 0.8, 0.9, design="cluster")
    with pytest.raises(ValueError, match="q0 \\+ q1 > 1"):
        labels_for_width(0.1, 0.3, 0.4, 0.5, design="stratified")
    with pytest.raises(ValueError, match="labelled"):
        random_design_variance(0.3, 0.8, 0.9, 300, 200)


def test_stratified_plan_against_brute_force():
    # Minimise m0 + m1 subject to eq. (10) <= (w / 2z)² by brute force over m0.
    theta, q0, q1, n, target = 0.3, 0.8, 0.9, 2000, 0.1
    plan = labels_for_width(target, theta, q0, q1, judged=n, design="stratified")
    p = theta * q1 + (1 - theta) * (1 - q0)
    j = q0 + q1 - 1
    room = (target / (2 * Z95)) ** 2 * j**2 - p * (1 - p) / n
    a, b = (1 - theta) ** 2 * q0 * (1 - q0), theta**2 * q1 * (1 - q1)
    best = min(m0 + math.ceil(b / (room - a / m0)) for m0 in range(1, 5000) if a / m0 < room)
    assert best <= plan.labels <= best + 1
    assert plan.width <= target
    var = (p * (1 - p) / n + a / plan.m0 + b / plan.m1) / j**2
    assert plan.width == pytest.approx(2 * Z95 * math.sqrt(var))
    # Not reachable: the test set alone is wider than the target.
    plan = labels_for_width(0.01, theta, q0, q1, judged=100, design="stratified")
    assert not bool(plan.reachable) and plan.labels == -1


@pytest.mark.parametrize("theta", [0.3, 0.1])
def test_planned_labels_give_the_target_width_in_simulation(theta):
    # Plan a 0.06-wide 95 % interval with 3000 judged items, then simulate the design with
    # that many labels: the mean width of the Wald interval of the MLE (plug-in double-
    # sampling variance) is within 2 % of the target (MCSE of the mean width is < 0.1 %),
    # and its coverage within 3 MCSE of 95 %.
    target, judged, reps = 0.06, 3000, 4000
    plan = labels_for_width(target, theta, 0.8, 0.9, judged=judged)
    rng = np.random.default_rng(int(100 * theta) + 7)
    K, tp, fp, fn, tn = simulate_random_design(rng, reps, theta, 0.8, 0.9, plan.labels, judged)
    phi = K / judged
    a, b = tp / (tp + fp), fn / (fn + tn)
    est = phi * a + (1 - phi) * b
    var = ((a - b) ** 2 * phi * (1 - phi) / judged + phi**2 * a * (1 - a) / (tp + fp)
           + (1 - phi) ** 2 * b * (1 - b) / (fn + tn))  # fmt: skip
    widths = 2 * Z95 * np.sqrt(var)
    assert abs(widths.mean() / target - 1) < 0.02, widths.mean()
    covered = np.abs(est - theta) <= Z95 * np.sqrt(var)
    assert abs(covered.mean() - 0.95) < 3 * math.sqrt(0.95 * 0.05 / reps), covered.mean()


def test_allocation_report_random_and_both():
    both = allocation_report(200, 0.4, 0.7, 0.9, n=1000, design="both")
    strat = allocation_report(200, 0.4, 0.7, 0.9, n=1000)
    assert strat.random is None
    assert both.exact == strat.exact and both.algorithm1 == strat.algorithm1
    expected = (
        2
        * Z95
        * math.sqrt(
            random_design_variance(both.theta_tilde, both.q0_tilde, both.q1_tilde, 200, 1000)
        )
    )
    assert both.random.length == pytest.approx(expected, rel=1e-12)
    assert (
        both.random.m1 == round(200 * both.theta_tilde) and both.random.m0 + both.random.m1 == 200
    )
    only = allocation_report(200, 0.4, 0.7, 0.9, n=1000, design="random")
    assert only.symmetric is None and only.exact is None and only.random == both.random
    with pytest.raises(ValueError, match="m must not exceed n"):
        allocation_report(200, 0.4, 0.7, 0.9, n=150, design="random")
    with pytest.raises(ValueError, match="design must be one of"):
        allocation_report(200, 0.4, 0.7, 0.9, design="stratify")
