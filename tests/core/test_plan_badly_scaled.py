"""Plans for a huge test set beside few labels: badly scaled information, not singular.

Regression for huntcli finding 2 (session 2026-11-28 c): at n = 10^15 test items the binary and
K-category planners called every identified single judge and pair "singular" (a condition
number above 1e12) and planned width 1. The references invert the same information exactly in
rational arithmetic (``fractions.Fraction``), independent of numpy's linear algebra.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import prod

import numpy as np
import pytest

from bayesjudge.core.categorical_jury import categorical_dawid_skene_plan
from bayesjudge.core.jury import dawid_skene_plan, planned_inverse

Q0 = np.array([0.80, 0.85, 0.90])
Q1 = np.array([0.70, 0.90, 0.90])
CONF = np.array([
    [[0.80, 0.15, 0.05], [0.25, 0.60, 0.15], [0.10, 0.15, 0.75]],
    [[0.70, 0.20, 0.10], [0.20, 0.65, 0.15], [0.05, 0.25, 0.70]],
])  # fmt: skip
PI = np.array([0.4, 0.2, 0.4])


def exact_solve(matrix, rhs):
    """x with matrix @ x = rhs, by Gauss–Jordan elimination in exact rational arithmetic."""
    a = [[*list(row), Fraction(b)] for row, b in zip(matrix, rhs, strict=True)]
    size = len(a)
    for col in range(size):
        piv = next(r for r in range(col, size) if a[r][col] != 0)
        a[col], a[piv] = a[piv], a[col]
        for r in range(size):
            if r != col and a[r][col] != 0:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
    return [a[r][-1] / a[r][r] for r in range(size)]


def outer_sum(grads, probs, dim):
    """Σ_p ∇P_p ∇P_pᵀ / P_p (the Fisher information of one multinomial draw), exactly."""
    out = [[Fraction(0)] * dim for _ in range(dim)]
    for g, prob in zip(grads, probs, strict=True):
        for i in range(dim):
            for j in range(dim):
                out[i][j] += g[i] * g[j] / prob
    return out


def exact_binary_information(theta, q0, q1, n, m0, m1):
    """n·I_test + m0·I_0 + m1·I_1 in rational arithmetic, coordinates [logit θ, logit q0, logit q1].

    ∂P/∂logit θ = θ(1−θ)(P1 − P0); ∂P1/∂logit q1_j = P1 (v_j − q1_j); ∂P0/∂logit q0_j = P0
    ((1 − v_j) − q0_j): an independent derivation, with no numpy linear algebra.
    """
    theta, q0, q1 = Fraction(theta), [Fraction(x) for x in q0], [Fraction(x) for x in q1]
    n_j = len(q0)
    dim = 1 + 2 * n_j
    test, lab0, lab1 = [], [], []
    for v in itertools.product((1, 0), repeat=n_j):
        p1 = prod(q if x else 1 - q for q, x in zip(q1, v, strict=True))
        p0 = prod(1 - q if x else q for q, x in zip(q0, v, strict=True))
        g0 = [p0 * ((1 - x) - q) for q, x in zip(q0, v, strict=True)]
        g1 = [p1 * (x - q) for q, x in zip(q1, v, strict=True)]
        zero = [Fraction(0)] * n_j
        grad = [theta * (1 - theta) * (p1 - p0)] + [(1 - theta) * g for g in g0]
        test.append((grad + [theta * g for g in g1], theta * p1 + (1 - theta) * p0))
        lab0.append(([Fraction(0), *g0, *zero], p0))
        lab1.append(([Fraction(0), *zero, *g1], p1))
    parts = [outer_sum(*zip(*rows, strict=True), dim) for rows in (test, lab0, lab1)]
    weights = [Fraction(n), Fraction(m0), Fraction(m1)]
    return [
        [sum(w * part[i][j] for w, part in zip(weights, parts, strict=True)) for j in range(dim)]
        for i in range(dim)
    ]


def exact_categorical_information(pi, conf, n, m):
    """As exact_binary_information for K classes: π log-odds against category 0 first.

    Coordinates: log(π_c/π_0) for c = 1..K−1, then per judge and truth the verdicts' log-odds
    against the row's largest entry; ∂π_k/∂η_c = π_k(δ_kc − π_c), likewise for each row.
    """
    pi = [Fraction(x) for x in pi]
    conf = [[[Fraction(x) for x in row] for row in judge] for judge in conf]
    k, n_j = len(pi), len(conf)
    rows = [(j, t, c) for j in range(n_j) for t in range(k) for c in range(k)
            if c != max(range(k), key=lambda d: conf[j][t][d])]  # fmt: skip
    dim = k - 1 + len(rows)
    test, labs = [], [[] for _ in range(k)]
    for v in itertools.product(range(k), repeat=n_j):
        lik = [prod(conf[j][t][v[j]] for j in range(n_j)) for t in range(k)]
        rows_grad = [[lik[t] * ((v[j] == c) - conf[j][t][c]) if s == t else Fraction(0)
                      for j, s, c in rows] for t in range(k)]  # fmt: skip
        dpi = [sum(pi[t] * ((t == c) - pi[c]) * lik[t] for t in range(k)) for c in range(1, k)]
        grad = dpi + [sum(pi[t] * rows_grad[t][r] for t in range(k)) for r in range(len(rows))]
        test.append((grad, sum(p * x for p, x in zip(pi, lik, strict=True))))
        for t in range(k):
            labs[t].append(([Fraction(0)] * (k - 1) + rows_grad[t], lik[t]))
    parts = [outer_sum(*zip(*r, strict=True), dim) for r in (test, *labs)]
    weights = [Fraction(n)] + [Fraction(x) for x in m]
    return [
        [sum(w * part[i][j] for w, part in zip(weights, parts, strict=True)) for j in range(dim)]
        for i in range(dim)
    ]


@pytest.mark.parametrize("n", [1e12, 1e15, 2**53])
@pytest.mark.parametrize("judges", [[0], [1, 2], [0, 1, 2]])
def test_binary_plan_matches_the_exact_inverse_for_a_huge_test_set(n, judges):
    theta, m0, m1 = 0.4, 12, 8
    q0, q1 = Q0[judges], Q1[judges]
    info = exact_binary_information(theta, q0, q1, n, m0, m1)
    var = float(exact_solve(info, [1] + [0] * (len(info) - 1))[0])
    plan = dawid_skene_plan(theta, q0, q1, n, m0, m1)
    # tolerance: the plan's float rounding; before the fix sd was inf (width 1) at 10^15
    np.testing.assert_allclose(plan.sd, theta * (1 - theta) * np.sqrt(var), rtol=1e-6)
    assert plan.width < 1


def test_one_judge_at_a_huge_test_set_is_the_rogan_gladen_label_variance():
    """n → ∞ leaves only the labels' part of the Rogan–Gladen delta variance."""
    theta, q0, q1, n, m0, m1 = 0.4, 0.8, 0.9, 1e15, 12, 8
    p = theta * q1 + (1 - theta) * (1 - q0)
    var = p * (1 - p) / n + (1 - theta) ** 2 * q0 * (1 - q0) / m0 + theta**2 * q1 * (1 - q1) / m1
    plan = dawid_skene_plan(theta, [q0], [q1], n, m0, m1)
    # sd = √var / J, J = q0 + q1 - 1 (the docstring's closed form), tolerance: rounding only
    np.testing.assert_allclose(plan.sd, np.sqrt(var) / (q0 + q1 - 1), rtol=1e-8)


@pytest.mark.parametrize("n", [1e15, 2**53])
@pytest.mark.parametrize("judges", [[0], [0, 1]])
def test_categorical_plan_matches_the_exact_inverse_for_a_huge_test_set(n, judges):
    conf, m = CONF[judges], [7, 5, 8]
    info = exact_categorical_information(PI, conf, n, m)
    cols = [exact_solve(info, [int(i == c) for i in range(len(info))])[:2] for c in range(2)]
    cov = np.array([[float(x) for x in col] for col in cols])  # π block of the inverse
    plan = categorical_dawid_skene_plan(PI, conf, n, m)
    for k in range(3):
        # the delta method: ∂ logit π_k / ∂ log(π_c/π_0) = (δ_kc − π_c) / (1 − π_k), c = 1, 2
        g = np.array([((k == c) - PI[c]) / (1 - PI[k]) for c in (1, 2)])
        ref = PI[k] * (1 - PI[k]) * np.sqrt(g @ cov @ g)
        np.testing.assert_allclose(plan.sd[k], ref, rtol=1e-6)
    assert (plan.width < 1).all()


def test_unidentified_stays_singular_at_any_scale():
    """Two judges without labels (binary), or without a label of one category (K = 3)."""
    for n in (500, 1e15):
        plan = dawid_skene_plan(0.4, Q0[:2], Q1[:2], n, 0, 0)
        assert np.isinf(plan.sd) and (plan.lower, plan.upper) == (0.0, 1.0)
        kplan = categorical_dawid_skene_plan(PI, CONF, n, [0, 0, 0])
        assert np.isinf(kplan.sd).all()


def test_test_items_above_two_to_the_53_are_refused():
    with pytest.raises(ValueError, match=r"n must be at most 2\*\*53"):
        dawid_skene_plan(0.4, Q0, Q1, 2**53 + 2, 10, 10)
    with pytest.raises(ValueError, match=r"n must be at most 2\*\*53"):
        categorical_dawid_skene_plan(PI, CONF, 1e20, [5, 5, 5])


def test_planned_inverse_of_a_rank_one_test_information():
    """unit = (11ᵀ, I): the exact inverse of n·11ᵀ + I is I − n/(1 + 2n)·11ᵀ."""
    unit = np.stack([np.ones((2, 2)), np.eye(2)])
    for n in (1.0, 1e15):
        cov, ok = planned_inverse(n, unit, [1.0], 2)
        ref = np.eye(2) - n / (1 + 2 * n) * np.ones((2, 2))
        np.testing.assert_allclose(cov, ref, rtol=1e-12)
        assert ok
    _, ok = planned_inverse(1e15, unit, [0.0], 1)
    assert not ok
