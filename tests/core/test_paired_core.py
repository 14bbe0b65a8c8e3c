"""Tests for bayesjudge.core.paired: paired bootstrap, delta-method SE, moved bias formulas."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import bayesjudge.studies.comparison as comparison
from bayesjudge.core.bootstrap import bootstrap_difference
from bayesjudge.core.paired import (
    naive_difference_bias,
    pair_cells,
    paired_bootstrap,
    rg_difference_se,
    shared_calibration_bias,
    shared_calibration_shift,
    system_pairs,
)
from bayesjudge.warnings import LowJudgeQualityWarning

CELLS_2 = np.array([[1, 1], [1, 0], [0, 1], [0, 0]])  # canonical order 11, 10, 01, 00
CELLS_3 = np.array(list(itertools.product([1, 0], repeat=3)))  # 111, 110, …, 000


# ----------------------------------------------------------------------- bootstrap


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("design", ["stratified", "random"])
def test_two_systems_reproduce_bootstrap_difference_exactly(shared, design):
    # Same seed, same draw order (joint table, A's calibration, B's) -> identical intervals.
    table = np.array([[450, 100, 50, 400], [30, 12, 3, 15]])  # two groups
    cal_a = dict(tn_a=[70, 20], m0_a=[100, 25], tp_a=[90, 28], m1_a=[100, 30])
    cal_b = dict(tn_b=[60, 21], m0_b=[90, 26], tp_b=[85, 27], m1_b=[95, 30])
    kwargs = dict(n_resamples=2000, calibration_design=design, random_seed=11)
    ref = bootstrap_difference(
        *table.T, **cal_a, **({} if shared else cal_b), shared_calibration=shared, **kwargs
    )
    if shared:
        cal = [np.array(cal_a[k]) for k in ("tn_a", "m0_a", "tp_a", "m1_a")]
    else:
        cal = [
            np.stack([cal_a[f"{k}_a"], cal_b[f"{k}_b"]], axis=-1) for k in ("tn", "m0", "tp", "m1")
        ]
    got = paired_bootstrap(table, CELLS_2, *cal, shared_calibration=shared, **kwargs)
    np.testing.assert_array_equal(got.estimate[:, 0], ref.estimate)
    np.testing.assert_array_equal(got.lower[:, 0], ref.lower)
    np.testing.assert_array_equal(got.upper[:, 0], ref.upper)
    assert got.first.tolist() == [0] and got.second.tolist() == [1]


def test_system_pairs_order():
    first, second = system_pairs(4)
    assert list(zip(first.tolist(), second.tolist(), strict=True)) == list(
        itertools.combinations(range(4), 2)
    )


def _marginal_pair(joint3, i, j):
    """2x2 table (11, 10, 01, 00) of systems i, j from a K=3 joint table."""
    return np.array([joint3[(CELLS_3[:, i] == a) & (CELLS_3[:, j] == b)].sum() for a, b in CELLS_2])


def test_three_systems_pairs_match_two_system_bootstrap_in_distribution():
    # The K=3 multinomial marginalised to a pair is the pair's 2x2 multinomial, so each pair's
    # interval has the law of bootstrap_difference on the marginal table. The K=3 endpoints
    # are compared with the mean over SEEDS K=2 runs; tolerance 4 MC standard errors, the MC
    # sd of an endpoint measured from the same SEEDS runs (seeds fixed).
    joint3 = np.array([300, 40, 60, 20, 30, 10, 50, 490])
    tn, m0, tp, m1 = [70, 60, 75], [100, 100, 100], [90, 85, 88], [100, 100, 100]
    n_res, seeds = 4000, 20
    got = paired_bootstrap(joint3, CELLS_3, tn, m0, tp, m1, n_resamples=n_res, random_seed=5)
    assert got.theta.shape == (3,) and got.estimate.shape == (3,)
    for p, (i, j) in enumerate(zip(got.first, got.second, strict=True)):
        pair = _marginal_pair(joint3, i, j)
        runs = np.array(
            [
                bootstrap_difference(
                    *pair,
                    tn[i],
                    m0[i],
                    tp[i],
                    m1[i],
                    tn[j],
                    m0[j],
                    tp[j],
                    m1[j],
                    n_resamples=n_res,
                    random_seed=100 + s,
                )
                for s in range(seeds)
            ]
        )
        assert got.estimate[p] == pytest.approx(runs[0, 0], abs=1e-15)
        for col, value in ((1, got.lower[p]), (2, got.upper[p])):
            mean, sd = runs[:, col].mean(), runs[:, col].std(ddof=1)
            assert abs(value - mean) < 4 * sd * np.sqrt(1 + 1 / seeds)


def test_pairing_narrows_the_interval_when_verdicts_agree():
    # Same margins (k_A = 600, k_B = 550 of 1000); paired table with strong agreement versus
    # the same items treated as unpaired (no joint table). Var of the paired difference is
    # (n10 + n01)/n - Δp² = 0.15 - 0.0025 vs p_A(1-p_A) + p_B(1-p_B) = 0.4875 for unpaired.
    cal = (140, 200, 180, 200)
    paired = paired_bootstrap(
        [500, 100, 50, 350], CELLS_2, *cal, shared_calibration=True, random_seed=1
    )
    unpaired = paired_bootstrap(
        np.zeros(0),
        np.zeros((0, 2)),
        *cal,
        k=[600, 550],
        n=[1000, 1000],
        shared_calibration=True,
        random_seed=1,
    )
    assert paired.estimate == pytest.approx(unpaired.estimate)
    width_p = paired.upper - paired.lower
    width_u = unpaired.upper - unpaired.lower
    # Test parts dominate here: the width ratio should be near sqrt(0.1475 / 0.4875) = 0.55
    # plus the common calibration part; it is certainly below 0.8.
    assert width_p[0] < 0.8 * width_u[0]


def test_unshared_items_are_resampled_and_kept():
    # Half of B's items are unshared: the totals enter the estimate.
    joint = [200, 50, 25, 225]  # 500 shared
    got = paired_bootstrap(
        joint,
        CELLS_2,
        70,
        100,
        90,
        100,
        k=[250, 500],
        n=[500, 1000],
        random_seed=3,
        n_resamples=2000,
    )
    p = np.array([250 / 500, 500 / 1000])
    theta = (p + 0.7 - 1) / 0.6
    np.testing.assert_allclose(got.theta, np.clip(theta, 0, 1), rtol=1e-12)
    assert got.lower[0] < got.estimate[0] < got.upper[0]


def test_paired_bootstrap_errors():
    with pytest.raises(ValueError, match="0/1 matrix"):
        paired_bootstrap([1, 2, 3], CELLS_2, 7, 10, 9, 10)
    with pytest.raises(ValueError, match="at least 2 systems"):
        paired_bootstrap([1, 2], [[1], [0]], 7, 10, 9, 10)
    with pytest.raises(ValueError, match="include its shared items"):
        paired_bootstrap([5, 1, 1, 3], CELLS_2, 7, 10, 9, 10, k=[5, 9], n=[10, 10])
    with pytest.raises(ValueError, match="Pass both k and n"):
        paired_bootstrap([5, 1, 1, 3], CELLS_2, 7, 10, 9, 10, k=[6, 6])
    with pytest.raises(ValueError, match="at least one test item"):
        paired_bootstrap(np.zeros(0), np.zeros((0, 2)), 7, 10, 9, 10, k=[0, 1], n=[0, 2])
    with pytest.raises(ValueError, match="not identified"):
        paired_bootstrap([5, 1, 1, 3], CELLS_2, [5, 7], 10, [5, 9], 10)
    with pytest.raises(ValueError, match="do not broadcast"):
        paired_bootstrap([5, 1, 1, 3], CELLS_2, [7, 7, 7], 10, 9, 10)


def test_undefined_replicates_warn():
    # Tiny calibration near chance: some replicates have q0* + q1* == 1.
    with pytest.warns(LowJudgeQualityWarning, match="not identified"):
        paired_bootstrap(
            [5, 1, 1, 3],
            CELLS_2,
            3,
            4,
            2,
            4,
            shared_calibration=True,
            random_seed=0,
            n_resamples=1000,
        )


# -------------------------------------------------------------------- delta method


def test_delta_shared_is_fiedler_appendix_b_transcription():
    # Fiedler App. B: SE² = Var̂(Z_B,i − Z_A,i)/(N Ĵ²) + (p̂_B − p̂_A)²(q̂0(1−q̂0)/m0 +
    # q̂1(1−q̂1)/m1)/Ĵ⁴, with Var̂ the plug-in (ddof=0) variance of per-item differences.
    n11, n10, n01, n00 = 450, 100, 50, 400
    z_a = np.repeat([1, 1, 0, 0], [n11, n10, n01, n00])
    z_b = np.repeat([1, 0, 1, 0], [n11, n10, n01, n00])
    tn, m0, tp, m1 = 70, 100, 90, 100
    q0, q1 = tn / m0, tp / m1
    j = q0 + q1 - 1
    n = z_a.size
    expected = (
        np.var(z_b - z_a) / (n * j**2)
        + (z_b.mean() - z_a.mean()) ** 2 * (q0 * (1 - q0) / m0 + q1 * (1 - q1) / m1) / j**4
    )
    got = rg_difference_se(n11, n10, n01, n00, tn, m0, tp, m1, shared_calibration=True)
    assert got.se**2 == pytest.approx(expected, rel=1e-12)
    assert got.var_test + got.var_calibration == pytest.approx(expected, rel=1e-12)
    assert got.estimate == pytest.approx((z_a.mean() - z_b.mean()) / j, rel=1e-12)


def _numerical_delta(n11, n10, n01, n00, cal_a, cal_b, totals, shared):
    """SE² as gradient' Σ gradient by central differences (independent of the formula).

    Parameters: the 4 shared-cell shares (multinomial over n_s), the unshared rates of A and
    B (binomial over u_A, u_B), and q0, q1 of each calibration table (binomial over m0, m1).
    """
    cells = np.array([n11, n10, n01, n00], dtype=float)
    n_s = cells.sum()
    (k_a, n_a), (k_b, n_b) = totals
    u_a, u_b = n_a - n_s, n_b - n_s
    rho_a = (k_a - cells[0] - cells[1]) / u_a if u_a else 0.0
    rho_b = (k_b - cells[0] - cells[2]) / u_b if u_b else 0.0
    (tn_a, m0_a, tp_a, m1_a), (tn_b, m0_b, tp_b, m1_b) = cal_a, cal_b
    x0 = np.concatenate(
        [cells / n_s, [rho_a, rho_b, tn_a / m0_a, tp_a / m1_a, tn_b / m0_b, tp_b / m1_b]]
    )

    def f(x):
        pi, ra, rb, q0a, q1a, q0b, q1b = x[:4], x[4], x[5], x[6], x[7], x[8], x[9]
        if shared:
            q0b, q1b = q0a, q1a
        p_a = (n_s * (pi[0] + pi[1]) + u_a * ra) / n_a
        p_b = (n_s * (pi[0] + pi[2]) + u_b * rb) / n_b
        return (p_a + q0a - 1) / (q0a + q1a - 1) - (p_b + q0b - 1) / (q0b + q1b - 1)

    h = 1e-6
    grad = np.array([(f(x0 + h * e) - f(x0 - h * e)) / (2 * h) for e in np.eye(x0.size)])
    cov = np.zeros((10, 10))
    pi = x0[:4]
    cov[:4, :4] = (np.diag(pi) - np.outer(pi, pi)) / n_s
    for idx, (rate, size) in enumerate(
        [(rho_a, u_a), (rho_b, u_b), (x0[6], m0_a), (x0[7], m1_a), (x0[8], m0_b), (x0[9], m1_b)]
    ):
        cov[4 + idx, 4 + idx] = rate * (1 - rate) / size if size else 0.0
    if shared:  # B's q entries unused (gradient 0 there)
        cov[8:, 8:] = 0.0
    return grad @ cov @ grad, f(x0)


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize(
    "totals", [None, ((330, 700), (420, 650))], ids=["all-shared", "with-unshared"]
)
def test_delta_matches_numerical_jacobian(shared, totals):
    table = (250, 60, 40, 150)  # n_s = 500
    cal_a, cal_b = (70, 100, 90, 100), (55, 80, 100, 120)
    if totals is None:
        totals_used = ((310, 500), (290, 500))
        kw = {}
    else:
        totals_used = totals
        kw = dict(k_a=totals[0][0], n_a=totals[0][1], k_b=totals[1][0], n_b=totals[1][1])
    b = {} if shared else dict(zip(("tn_b", "m0_b", "tp_b", "m1_b"), cal_b, strict=True))
    got = rg_difference_se(*table, *cal_a, **b, shared_calibration=shared, **kw)
    var, est = _numerical_delta(*table, cal_a, cal_a if shared else cal_b, totals_used, shared)
    assert got.se**2 == pytest.approx(var, rel=1e-6)
    assert got.estimate == pytest.approx(est, rel=1e-12)


@pytest.mark.parametrize("shared", [True, False])
def test_delta_se_matches_simulated_sd(shared):
    # Simulate R paired test sets and calibration sets from the truth the counts describe
    # (cells 0.45/0.10/0.05/0.40 of n=1000; q0_A=0.7, q1_A=0.9, q0_B=0.8, q1_B=0.85, m0=m1=200)
    # and compare the sd of the unclipped RG differences with the SE at the truth. The
    # Monte Carlo standard error of an sd from R normal-ish draws is sd / sqrt(2 (R - 1))
    # (0.5% at R = 20000); tolerance 4 of them. Measured: +0.12% (shared), +0.43% (separate).
    rng = np.random.default_rng(7)
    reps, n, m = 20_000, 1000, 200
    pi = np.array([0.45, 0.10, 0.05, 0.40])
    q0a, q1a, q0b, q1b = 0.7, 0.9, 0.8, 0.85
    cells = rng.multinomial(n, pi, size=reps)
    k_a, k_b = cells[:, 0] + cells[:, 1], cells[:, 0] + cells[:, 2]
    tn_a, tp_a = rng.binomial(m, q0a, reps), rng.binomial(m, q1a, reps)
    if shared:
        tn_b, tp_b = tn_a, tp_a
        b = {}
    else:
        tn_b, tp_b = rng.binomial(m, q0b, reps), rng.binomial(m, q1b, reps)
        b = dict(tn_b=round(q0b * m), m0_b=m, tp_b=round(q1b * m), m1_b=m)

    def theta(k, tn, tp):
        return (k / n + tn / m - 1) / (tn / m + tp / m - 1)

    sd = np.std(theta(k_a, tn_a, tp_a) - theta(k_b, tn_b, tp_b), ddof=1)
    se = rg_difference_se(
        *(pi * n).round().astype(int),
        round(q0a * m),
        m,
        round(q1a * m),
        m,
        shared_calibration=shared,
        **b,
    ).se
    assert abs(sd / se - 1) < 4 / np.sqrt(2 * (reps - 1))


def test_delta_unpaired_has_no_covariance():
    # No shared items: the test part is Var p̂_A / J_A² + Var p̂_B / J_B² (Lee eq. 10 per system).
    got = rg_difference_se(
        0, 0, 0, 0, 70, 100, 90, 100, 60, 100, 95, 100, k_a=600, n_a=1000, k_b=500, n_b=800
    )
    j_a, j_b = 0.6, 0.55
    expected = 0.6 * 0.4 / 1000 / j_a**2 + 0.625 * 0.375 / 800 / j_b**2
    assert got.var_test == pytest.approx(expected, rel=1e-12)


def test_delta_errors():
    with pytest.raises(ValueError, match="missing: tn_b"):
        rg_difference_se(5, 1, 1, 3, 7, 10, 9, 10)
    with pytest.raises(ValueError, match="do not pass tn_b"):
        rg_difference_se(5, 1, 1, 3, 7, 10, 9, 10, 7, 10, 9, 10, shared_calibration=True)
    with pytest.raises(ValueError, match="Pass all of k_a"):
        rg_difference_se(5, 1, 1, 3, 7, 10, 9, 10, shared_calibration=True, k_a=6)
    with pytest.raises(ValueError, match="include its shared items"):
        rg_difference_se(
            5, 1, 1, 3, 7, 10, 9, 10, shared_calibration=True, k_a=5, n_a=10, k_b=6, n_b=10
        )
    with pytest.raises(ValueError, match="not identified"):
        rg_difference_se(5, 1, 1, 3, 5, 10, 5, 10, shared_calibration=True)


# ---------------------------------------------------------------------------- bias


def test_bias_formulas_moved_to_core():
    assert comparison.shared_rg_bias is shared_calibration_bias
    assert comparison.naive_bias is naive_difference_bias
    # App. C middle line: (θ_A ΔJ − Δq0)/J_B is the bias of θ̂*_A; Δθ̂ = θ̂_B − θ̂*_A has minus it.
    theta_a, q0a, q1a, q0b, q1b = 0.738, 0.70, 0.80, 0.76, 0.86
    d_j, d_q0, j_b = (q0a + q1a) - (q0b + q1b), q0a - q0b, q0b + q1b - 1
    expected = -(theta_a * d_j - d_q0) / j_b
    assert shared_calibration_bias(theta_a, 0.6, q0a, q1a, q0b, q1b) == pytest.approx(
        expected, rel=1e-12
    )
    with pytest.raises(ValueError, match="shared_from must be one of"):
        shared_calibration_bias(0.7, 0.6, 0.7, 0.8, 0.7, 0.8, shared_from="C")


def test_shared_calibration_shift_is_app_c_per_system():
    # θ̂* − θ = [θ (q1 − q1_c) − (1 − θ)(q0 − q0_c)] / J_c (Fiedler App. C, written per system);
    # shared_calibration_bias is the difference of two shifts.
    rng = np.random.default_rng(12)
    theta, q0, q1 = rng.uniform(0.05, 0.95, size=(3, 5))
    q0_c, q1_c = rng.uniform(0.6, 0.95, size=2)
    expected = (theta * (q1 - q1_c) - (1 - theta) * (q0 - q0_c)) / (q0_c + q1_c - 1)
    np.testing.assert_allclose(
        shared_calibration_shift(theta, q0, q1, q0_c, q1_c), expected, rtol=1e-12
    )
    # B's set shared (shared_from="B"): θ̂_B is consistent, so the bias of θ̂_B − θ̂_A is
    # minus A's shift with q_c = (q0_B, q1_B).
    j_b = q0[1] + q1[1] - 1
    shift_a = (theta[0] * (q1[0] - q1[1]) - (1 - theta[0]) * (q0[0] - q0[1])) / j_b
    bias = shared_calibration_bias(theta[0], theta[1], q0[0], q1[0], q0[1], q1[1])
    assert bias == pytest.approx(-shift_a, rel=1e-12) and abs(bias) > 0.01
    # Unclipped estimates outside [0, 1] are allowed; J_c = 0 gives NaN, bad q's raise.
    assert np.isfinite(shared_calibration_shift(1.2, 0.8, 0.9, 0.7, 0.8))
    assert np.isnan(shared_calibration_shift(0.5, 0.8, 0.9, 0.5, 0.5))
    with pytest.raises(ValueError, match="q0_c must be a proportion"):
        shared_calibration_shift(0.5, 0.8, 0.9, 1.5, 0.5)


def test_pair_cells_marginalise_the_joint_table():
    rng = np.random.default_rng(3)
    verdicts = np.array(list(itertools.product([1, 0], repeat=3)))
    joint = rng.integers(0, 20, size=(2, 8))
    for a, b in ((0, 1), (0, 2), (2, 1)):
        cells = pair_cells(joint, verdicts, a, b)
        for cell, (x, y) in zip(cells, ((1, 1), (1, 0), (0, 1), (0, 0)), strict=True):
            rows = (verdicts[:, a] == x) & (verdicts[:, b] == y)
            np.testing.assert_array_equal(cell, joint[:, rows].sum(axis=1))
