"""Session-10 hostile findings on the random design's planning (huntC F1)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from bayesjudge.core.allocation import (
    allocation_report,
    labels_for_width,
    random_design_variance,
)
from bayesjudge.warnings import LowJudgeQualityWarning, SmallSampleWarning

Z95 = stats.norm.isf(0.025)


def planned_width(theta, q0, q1, labels, judged):
    """Width at the planning θ of L labels, θ kept in [1/(L+2), (L+1)/(L+2)] (independent)."""
    lo = 1 / (labels + 2)
    t = min(max(theta, lo), 1 - lo)
    return 2 * Z95 * math.sqrt(random_design_variance(t, q0, q1, labels, judged))


@pytest.mark.parametrize("theta", [0.0, 1.0, 1e-4])
def test_labels_for_width_never_promises_zero_width_at_the_boundary(theta):
    # Before the fix: labels_for_width(0.1, 0.0, 0.8, 0.9, judged=2000) gave labels=1, width=0.
    plan = labels_for_width(0.1, theta, 0.8, 0.9, judged=2000)
    assert bool(plan.reachable) and plan.labels > 1 and plan.width > 0
    # The smallest L meeting the target, by brute force over L at the smoothed planning θ.
    widths = [planned_width(theta, 0.8, 0.9, L, 2000) for L in range(1, 400)]
    first = 1 + next(i for i, w in enumerate(widths) if w <= 0.1)
    assert plan.labels == first
    assert plan.width == pytest.approx(widths[first - 1], rel=1e-12)
    assert plan.m0 + plan.m1 == plan.labels


def test_boundary_plan_is_monotone_and_unreachable_case():
    # The planned width decreases in L at θ = 0 (what the bisection relies on).
    w = [planned_width(0.0, 0.7, 0.9, L, 10**6) for L in range(1, 3000)]
    assert all(a >= b for a, b in itertools.pairwise(w))
    # 100 judged items cannot reach 0.001 even at θ = 0: all 100 labelled, width > 0.
    plan = labels_for_width(0.001, 0.0, 0.8, 0.9, judged=100)
    assert not bool(plan.reachable) and plan.labels == 100 and plan.width > 0.001
    # Interior θ: unchanged closed form (docstring example: 200 labels, width 0.0998).
    plan = labels_for_width(0.10, 0.3, 0.8, 0.9, judged=2000)
    assert (int(plan.labels), round(float(plan.width), 4)) == (200, 0.0998)


def test_allocation_report_random_option_off_the_boundary_warns():
    # p̂ = 0.25 < 1 - q̃0 = 1/3: θ̃ is clipped to 0 (huntC F1: "predicted width 0.000").
    with pytest.warns(SmallSampleWarning, match="on the boundary 0 or 1"):
        r = allocation_report(200, 0.25, 0.7, 0.9, n=2000, design="both")
    assert float(r.theta_tilde) == 0.0 and float(r.random_theta) == 0.0
    expected = planned_width(0.0, 8 / 12, 10 / 12, 200, 2000)  # θ = 1/202
    assert r.random.length == pytest.approx(expected, rel=1e-12)
    assert r.random.length > 0.01
    assert (r.random.m0, r.random.m1) == (199, 1)  # round(200/202) = 1
    # The stratified options are as before (no boundary smoothing there).
    plain = allocation_report(200, 0.25, 0.7, 0.9, n=2000)
    assert plain.exact == r.exact and plain.random is None and plain.random_theta is None


def test_allocation_report_random_option_with_chance_judge_plans_worst_case():
    # J̃ = 4/12 + 5/12 - 1 < 0: before the fix m0 = 200, m1 = 0, length 0.
    with pytest.warns(LowJudgeQualityWarning, match="worst case θ = 1/2"):
        r = allocation_report(200, 0.4, 0.3, 0.4, n=2000, design="random")
    assert float(r.random_theta) == 0.5
    expected = 2 * Z95 * math.sqrt(random_design_variance(0.5, 4 / 12, 5 / 12, 200, 2000))
    assert r.random.length == pytest.approx(expected, rel=1e-12)
    assert (r.random.m0, r.random.m1) == (100, 100)


def test_interior_pilot_is_silent_and_unchanged():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = allocation_report(200, 0.4, 0.7, 0.9, n=1000, design="both")
    assert float(r.random_theta) == pytest.approx(float(r.theta_tilde), abs=0)
    assert (r.random.m0, r.random.m1) == (173, 27)
    assert round(float(r.random.length), 4) == 0.0898
    np.testing.assert_equal(r.random_theta, r.theta_tilde)


def test_boundary_plan_is_safe_in_simulation():
    # Plan a 0.05-wide interval at θ = 0 (2000 judged, q0 0.8, q1 0.9), then simulate the
    # random design at true θ = 0.002 with that many labels (1000 reps, seed 10): the
    # profile-likelihood intervals (what estimate uses there) are on average no wider than
    # planned, and cover θ at least 95 % - 3 MCSE of the time.
    from bayesjudge.core.likelihood import likelihood_interval

    plan = labels_for_width(0.05, 0.0, 0.8, 0.9, judged=2000)
    labels, judged, theta, reps = int(plan.labels), 2000, 0.002, 1000
    rng = np.random.default_rng(10)
    truth = rng.random((reps, judged)) < theta
    verdict = np.where(truth, rng.random((reps, judged)) < 0.9, rng.random((reps, judged)) < 0.2)
    lab, unl = slice(0, labels), slice(labels, judged)
    m1 = truth[:, lab].sum(1)
    tp = (truth[:, lab] & verdict[:, lab]).sum(1)
    tn = (~truth[:, lab] & ~verdict[:, lab]).sum(1)
    res = likelihood_interval(
        verdict[:, unl].sum(1), judged - labels, tn, labels - m1, tp, m1, alpha=0.05
    )
    widths = res.upper - res.lower
    assert widths.mean() <= 0.05, widths.mean()
    covered = (res.lower <= theta) & (theta <= res.upper)
    assert covered.mean() >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps), covered.mean()
