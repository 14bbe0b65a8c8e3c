"""The numpy kernels of bayesjudge.core.kernels: each formula once, checked against scalars."""

import warnings
from fractions import Fraction

import numpy as np
import pytest

import bayesjudge as bj
from bayesjudge.compare import compare
from bayesjudge.core.kernels import (
    LOW_J_THRESHOLD,
    linear_combination_interval,
    low_j,
    low_j_category,
    rg_difference_delta,
    rogan_gladen_counts,
    rogan_gladen_ratio,
    youden_from_counts,
    youden_interval,
    youden_is_zero,
    youden_numerator,
)
from bayesjudge.core.paired import rg_difference_se
from bayesjudge.diagnostics import check_comparison, comparison_table
from bayesjudge.estimate import estimate
from bayesjudge.warnings import LowJudgeQualityWarning

# A grid of small counts with many exact J = 0 cases (tn/m0 + tp/m1 == 1).
GRID = np.array(
    [
        (k, n, tn, m0, tp, m1)
        for n in (1, 7)
        for k in (0, 1, n)
        for m0, m1 in ((1, 1), (2, 4), (3, 5), (6, 6))
        for tn in range(m0 + 1)
        for tp in range(m1 + 1)
    ],
    dtype=float,
)


def _scalar_rg(k, n, tn, m0, tp, m1):
    """θ̂ by exact rational arithmetic; None where Ĵ = 0."""
    j = Fraction(int(tn), int(m0)) + Fraction(int(tp), int(m1)) - 1
    if j == 0:
        return None
    return (Fraction(int(k), int(n)) + Fraction(int(tn), int(m0)) - 1) / j


def test_rogan_gladen_counts_matches_exact_scalar_computation():
    theta, ok = rogan_gladen_counts(*GRID.T)
    clipped, ok_c = rogan_gladen_counts(*GRID.T, clip=True)
    np.testing.assert_array_equal(ok, ok_c)
    assert (~ok).sum() > 20  # the grid holds many J = 0 cases
    for row, t, c, good in zip(GRID, theta, clipped, ok, strict=True):
        ref = _scalar_rg(*row)
        assert good == (ref is not None), row
        if ref is None:
            assert np.isnan(t) and np.isnan(c)
        else:
            assert t == pytest.approx(float(ref), rel=1e-12, abs=1e-12), row
            assert c == pytest.approx(min(max(float(ref), 0.0), 1.0), rel=1e-12, abs=1e-12)


def test_rogan_gladen_ratio_matches_the_counts_kernel():
    k, n, tn, m0, tp, m1 = GRID.T
    by_ratio, ok_ratio = rogan_gladen_ratio(k / n, tn / m0, tp / m1)
    by_counts, ok = rogan_gladen_counts(k, n, tn, m0, tp, m1)
    # On this grid float tn/m0 + tp/m1 - 1 is exactly 0 wherever J = 0 (small denominators).
    np.testing.assert_array_equal(ok_ratio, ok)
    np.testing.assert_allclose(by_ratio[ok], by_counts[ok], rtol=1e-12, atol=1e-12)


def test_empty_calibration_class_is_not_identified():
    _, ok = rogan_gladen_counts([5, 5, 5], 10, [0, 3, 0], [0, 4, 4], [3, 0, 3], [4, 0, 4])
    assert ok.tolist() == [False, False, True]


def test_identified_mask_is_exact_at_huge_counts_near_2_53():
    big = 2**53
    half = 2**52
    # tn/m0 + tp/m1 == 1 exactly; float64 would round the products m0·m1 ≈ 2**106.
    tn = np.array([half, half + 1, half, half - 1, 1, 2**51])
    tp = np.array([half, half, half - 1, half + 1, big - 1, 2**51])
    m0 = np.array([big, big, big, big, big, 2**52])
    m1 = np.array([big, big, big, big, big, 2**52])
    expected_zero = [
        Fraction(int(a), int(b)) + Fraction(int(c), int(d)) == 1
        for a, b, c, d in zip(tn, m0, tp, m1, strict=True)
    ]
    assert expected_zero == [True, False, False, True, True, True]
    assert youden_is_zero(tn, m0, tp, m1).tolist() == expected_zero
    _, ok = rogan_gladen_counts(np.full(6, 10), 20, tn, m0, tp, m1)
    assert ok.tolist() == [not z for z in expected_zero]
    # As floats too (the validated counts of the core are floats).
    args = (a.astype(float) for a in (tn, m0, tp, m1))
    assert youden_is_zero(*args).tolist() == expected_zero


def test_youden_from_counts_and_numerator():
    _, _, tn, m0, tp, m1 = GRID.T
    j = youden_from_counts(tn, m0, tp, m1)
    num = youden_numerator(tn, m0, tp, m1)
    for jj, nn, a, b, c, d in zip(j, num, tn, m0, tp, m1, strict=True):
        exact = Fraction(int(a), int(b)) + Fraction(int(c), int(d)) - 1
        assert jj == pytest.approx(float(exact), abs=1e-15)
        assert nn == exact * int(b) * int(d)
    assert np.isnan(youden_from_counts(0, 0, 3, 4))


def test_youden_interval_is_bj_youden_newcombe():
    cal = (np.array([6, 70, 2, 0]), np.array([20, 100, 3, 5]), np.array([19, 19, 3, 5]), 20)
    got = youden_interval(*cal, alpha=0.05)
    ref = bj.youden(*cal, alpha=0.05, method="newcombe")
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(g, r)
    wald = linear_combination_interval([(cal[0], cal[1]), (cal[2], 20)], (1, 1), -1.0, 0.05,
                                       "wald", 1.0)  # fmt: skip
    for g, r in zip(wald, bj.youden(*cal, alpha=0.05, method="wald"), strict=True):
        np.testing.assert_array_equal(g, r)


# --------------------------------------------------------------------- the one low-J rule


def test_low_j_category_follows_the_rule_in_order():
    j = [0.6, 0.1, -0.6, 0.3, 0.0, -0.3, 0.0, 0.2]
    lo = [0.5, -0.1, -0.7, -0.01, -0.2, -0.5, -0.2, 0.0]
    hi = [0.7, 0.3, -0.5, 0.6, 0.2, 0.1, 0.2, 0.4]
    ident = [True, True, True, True, False, True, True, True]
    got = low_j_category(j, lo, hi, ident).tolist()
    assert got == ["fine", "low", "worse", "uncertain", "undefined", "uncertain", "low",
                   "uncertain"]  # fmt: skip
    # Without a mask, Ĵ = 0 is "low" (PPI++ does not divide by J).
    assert low_j_category(0.0, -0.2, 0.2) == "low"
    assert LOW_J_THRESHOLD == 0.2


def test_low_j_rule_regression_estimate_and_check_comparison_agree():
    """m0 = m1 = 20, tn = 6, tp = 19: Ĵ = 0.25.

    Before, ``estimate`` used the Agresti–Caffo interval of J, (-0.0014, 0.456), and warned
    that judge quality is uncertain, while ``check_comparison`` used Newcombe's,
    (0.0081, 0.473), and said nothing. Now both apply the one rule (Newcombe): no warning.
    """
    counts = bj.JudgeCounts.from_counts(n=1000, k=500, m0=20, tn=6, m1=20, tp=19)
    rule = low_j(6, 20, 19, 20, alpha=0.05)
    assert rule.youden == pytest.approx(0.25)
    assert rule.lower == pytest.approx(0.008086579480147793, rel=1e-12)
    assert rule.upper == pytest.approx(0.47279997852425126, rel=1e-12)
    assert rule.category == "fine"
    with warnings.catch_warnings():
        warnings.simplefilter("error", LowJudgeQualityWarning)
        estimate(counts)
    found = check_comparison(counts, warn=False, random_seed=0)
    assert [d.code for d in found if d.code == "low_j"] == []


@pytest.mark.parametrize(
    ("tn", "m0", "tp", "m1", "category"),
    [(2, 3, 3, 3, "uncertain"), (55, 100, 50, 100, "low"), (20, 100, 20, 100, "worse"),
     (5, 10, 5, 10, "undefined")],
)  # fmt: skip
def test_estimate_and_check_comparison_flag_the_same_judges(tn, m0, tp, m1, category):
    counts = bj.JudgeCounts.from_counts(n=1000, k=500, m0=m0, tn=tn, m1=m1, tp=tp)
    assert low_j(tn, m0, tp, m1, 0.05).category == category
    with pytest.warns(LowJudgeQualityWarning):
        estimate(counts)
    found = check_comparison(counts, warn=False, random_seed=0)
    assert [d.code for d in found if d.code == "low_j"] == ["low_j"]


# ------------------------------------------------------------------- delta-method Δθ

# Reference numbers from the code before the kernel existed (bayesjudge at commit 80450ae),
# each line the generating call ``rg_difference_se(*args, **kw)`` and (estimate, se,
# var_test, var_calibration) as printed by ``[repr(float(x)) for x in result]``.
DELTA_CASES = [
    ((450, 100, 50, 400, 70, 100, 90, 100), {"shared_calibration": True},
     (0.08333333333333343, 0.021623889395587292, 0.00040972222222222213,
      5.787037037037044e-05)),
    ((450, 100, 50, 400, 70, 100, 90, 100, 60, 100, 85, 120), {},
     (0.09234234234234201, 0.13143156300857242, 0.0014252647918188456,
      0.015848990963057495)),
    ((0, 0, 0, 0, 30, 40, 35, 40, 20, 40, 38, 40),
     {"k_a": 120, "n_a": 200, "k_b": 90, "n_b": 180},
     (0.5600000000000002, 0.21286922768046693, 0.009930710562414267, 0.0353825975308642)),
    ((300, 40, 60, 100, 80, 100, 70, 90),
     {"k_a": 400, "n_a": 600, "k_b": 420, "n_b": 650, "shared_calibration": True},
     (0.035502958579881616, 0.035217488880816265, 0.0012269790973705398,
      1.3292425699877387e-05)),
]  # fmt: skip


@pytest.mark.parametrize(("args", "kw", "expected"), DELTA_CASES)
def test_delta_difference_equals_the_old_values(args, kw, expected):
    got = rg_difference_se(*args, **kw)
    np.testing.assert_allclose([float(x) for x in got], expected, rtol=1e-13)
    cells = args[:4]
    n_s = sum(cells)
    totals = (kw.get("k_a", cells[0] + cells[1]), kw.get("n_a", n_s),
              kw.get("k_b", cells[0] + cells[2]), kw.get("n_b", n_s))  # fmt: skip
    cal_b = None if kw.get("shared_calibration") else args[8:12]
    kernel = rg_difference_delta(cells, totals, args[4:8], cal_b)
    np.testing.assert_allclose([float(x) for x in kernel], expected, rtol=1e-13)


def test_delta_difference_is_nan_where_not_identified():
    r = rg_difference_delta((0, 0, 0, 0), ([50, 50], 100, [40, 40], 100),
                            ([5, 70], 10, [5, 90], [10, 100]))  # fmt: skip
    assert np.isnan(r.estimate[0]) and np.isnan(r.se[0])
    assert np.isfinite(r.estimate[1]) and np.isfinite(r.se[1])


# Generated by ``bayesjudge.diagnostics._comparison_table(counts, 0.05)`` at commit 80450ae
# for the three-system counts of the test below (pairs a-b, a-c, b-c).
TABLE_REFERENCE = {
    "delta_theta": [0.371428571428571, 0.18948412698412703, -0.18194444444444396],
    "delta_theta_se": [0.0723432513956252, 0.060696939645313586, 0.08208880837127684],
    "shared_delta_theta": [0.1666666666666668, 0.06250000000000011, -0.10416666666666669],
    "shared_se": [0.03745217366782502, 0.03907687824953823, 0.03956221356092788],
    "shared_bias": [-0.20476190476190453, -0.12698412698412725, 0.07777777777777728],
}


def test_comparison_table_equals_the_old_values_and_compare_delta():
    counts = bj.JudgeCounts.from_counts(
        n=[1000, 1000, 800], k=[600, 500, 450], m0=[200, 200, 150], tn=[160, 120, 100],
        m1=[200, 200, 150], tp=[180, 180, 140], system=["a", "b", "c"])  # fmt: skip
    table = comparison_table(counts, 0.05)
    assert table["pair"].values.tolist() == ["a - b", "a - c", "b - c"]
    for name, ref in TABLE_REFERENCE.items():
        np.testing.assert_allclose(table[name].values.ravel(), ref, rtol=1e-12, err_msg=name)
    # compare(method="delta") is the same implementation.
    out = compare(counts, method="delta")
    np.testing.assert_array_equal(out["estimate"].values, table["delta_theta"].values)
    np.testing.assert_array_equal(out["se"].values, table["delta_theta_se"].values)


# -------------------------------------------------------------- the numba twin (coverage)


def test_numba_twin_of_the_rogan_gladen_kernel_is_equal_on_a_grid():
    from bayesjudge.studies.coverage import _rg_replicate

    theta, ok = rogan_gladen_counts(*GRID.T, clip=True)
    for row, expected, good in zip(GRID.astype(np.int64), theta, ok, strict=True):
        k, n, tn, m0, tp, m1 = (int(v) for v in row)
        got = _rg_replicate(k, n, tn, m0, tp, m1, float(m0 * m1))
        if good:
            assert got == expected, row
        else:
            assert np.isnan(got), row
    assert (~ok).any()
