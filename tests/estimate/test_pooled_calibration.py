"""Tests for bayesjudge.diagnostics.check_pooled_calibration (issue 15, guardrails).

The real-data failure it guards against (9 judges × 8 systems, 500 splits): pooling the
calibration over systems covered 0.000 for all eight systems of one judge whose J differs from
0.01 to 0.70 between systems, with intervals of width 0–0.008 wrong by up to 0.85 and no
warning. It is reproduced here by simulation; the false-alarm rate for a judge that is the same
on every system is checked at fixed seeds with Monte Carlo tolerances.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import xarray as xr

import bayesjudge as bj
from bayesjudge.core.kernels import rogan_gladen_counts
from bayesjudge.core.pooling import homogeneity_test, pooled_half_width, pooling_bias
from bayesjudge.diagnostics import (
    POOLED_BIAS_RATIO_MAX,
    check_pooled_calibration,
    collapsed_interval_message,
    collapsed_intervals,
)
from bayesjudge.warnings import CalibrationDesignWarning, PooledCalibrationWarning

SYSTEMS = [f"sys{i}" for i in range(8)]


def simulate(rng, q0, q1, theta, n=500, m=40, systems=SYSTEMS):
    """One data set: per system n test items, m truly-incorrect and m truly-correct labels."""
    shape = (len(systems),)
    q0, q1, theta = (np.broadcast_to(np.asarray(v, float), shape) for v in (q0, q1, theta))
    p = theta * q1 + (1 - theta) * (1 - q0)
    return bj.JudgeCounts.from_counts(
        n=[n] * len(systems),
        k=rng.binomial(n, p),
        m0=[m] * len(systems),
        tn=rng.binomial(m, q0),
        m1=[m] * len(systems),
        tp=rng.binomial(m, q1),
        system=list(systems),
    )


def run(counts, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = check_pooled_calibration(counts, **kw)
    found = [w for w in caught if issubclass(w.category, PooledCalibrationWarning)]
    return result, found


# The real-data judge: J from 0.01 to 0.70 across the 8 systems (q1 = 0.9, q0 = J + 0.1).
J_REAL = np.linspace(0.01, 0.70, 8)
Q1_REAL = np.full(8, 0.9)
Q0_REAL = J_REAL + 1 - Q1_REAL
THETA_REAL = np.linspace(0.3, 0.8, 8)


def test_reproduces_the_real_data_failure_and_warns_naming_the_systems():
    rng = np.random.default_rng(15)
    counts = simulate(rng, Q0_REAL, Q1_REAL, THETA_REAL)
    # The failure: the pooled correction is far from the truth for the low-J systems, with
    # a half-width much smaller than the error.
    ds = counts.dataset.isel(stratum=0)
    arr = {v: ds[v].values for v in ("k", "n", "tn", "m0", "tp", "m1")}
    pooled = tuple(arr[f].sum() for f in ("tn", "m0", "tp", "m1"))
    theta_pooled = rogan_gladen_counts(arr["k"], arr["n"], *pooled).theta
    half = pooled_half_width(arr["k"], arr["n"], *pooled)
    error = np.abs(theta_pooled - THETA_REAL)
    assert error.max() > 0.4 and (error > half).sum() >= 4, (error, half)

    result, found = run(counts)
    assert len(found) == 1
    message = str(found[0].message)
    for name in SYSTEMS:  # every system named, with its q̂ and its bias
        assert f"{name}: q̂0 = " in message
    assert "q0 X² = " in message and "Do not pool" in message
    assert "calibration='separate'" in message and "hierarchical" in message
    assert bool(result["flagged"].item()) and bool(result["q_differs"].item())
    assert result.attrs["tested"] is True
    # The Dataset holds what the core computes.
    h0 = homogeneity_test(arr["tn"], arr["m0"])
    assert result["q0_statistic"].item() == pytest.approx(float(h0.statistic), rel=1e-12)
    b = pooling_bias(arr["k"], arr["n"], arr["tn"], arr["m0"], arr["tp"], arr["m1"])
    np.testing.assert_allclose(result["bias"].values[:, 0], b.bias, rtol=1e-12)
    np.testing.assert_allclose(result["bias_linear"].values[:, 0], b.linear, rtol=1e-12)
    np.testing.assert_allclose(result["bias_se"].values[:, 0], b.se, rtol=1e-12)
    np.testing.assert_allclose(result["q0_hat"].values[:, 0], arr["tn"] / arr["m0"])
    # The worst system is listed first (|bias|, or |first-order bias| where not identified).
    size = np.where(np.isfinite(b.bias), np.abs(b.bias), np.abs(b.linear))
    worst = SYSTEMS[int(np.argmax(size))]
    listed = message.split("bias pooling adds to θ̂")[1]
    assert listed.index(f"{worst}: ") < min(listed.index(f"{s}: ") for s in SYSTEMS if s != worst)


def test_power_on_the_real_data_judge():
    # 30 fixed-seed data sets of the real-data judge with 40 labels of each kind per
    # system: the warning fires in every one (a miss would be the real-data failure again).
    rng = np.random.default_rng(2026)
    fired = sum(bool(run(simulate(rng, Q0_REAL, Q1_REAL, THETA_REAL))[1]) for _ in range(30))
    assert fired == 30


def false_alarm_rate(seed, reps, m, q0, q1):
    rng = np.random.default_rng(seed)
    return sum(bool(run(simulate(rng, q0, q1, THETA_REAL, m=m))[1]) for _ in range(reps)) / reps


def test_false_alarm_rate_for_a_judge_equal_on_every_system():
    # A judge with q0 = 0.8, q1 = 0.9 on all 8 systems, 40 labels of each kind: the check
    # warns in at most alpha = 0.05 of 200 fixed-seed data sets, within 3 MCSE
    # (0.05 + 3 · 0.0154). Measured: 0.035 here; 0.020 in the 1000 data sets of the slow test.
    rate = false_alarm_rate(40, 200, 40, 0.8, 0.9)
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 200), rate


@pytest.mark.slow
@pytest.mark.parametrize(("m", "q0", "q1"), [(40, 0.8, 0.9), (15, 0.9, 0.9), (100, 0.7, 0.95)])
def test_false_alarm_rate_slow(m, q0, q1):
    # As above with 1000 data sets (3 MCSE = 0.0207), small (15) to large (100) calibration
    # sets per system (15 labels at q = 0.9: 1.5 expected errors per system). Measured: 0.020,
    # 0.016 and 0.022 (the Bonferroni split keeps the rule below alpha = 0.05).
    rate = false_alarm_rate(1000 + m, 1000, m, q0, q1)
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 1000), rate


def test_no_warning_when_the_calibration_is_already_one_shared_set():
    # with_calibration_from broadcasts one set: the per-system labels are unknown.
    tests = bj.JudgeCounts.from_counts(n=[500, 500], k=[300, 200], system=["a", "b"])
    calib = bj.JudgeCounts.from_counts(m0=40, tn=30, m1=40, tp=36)
    counts = tests.with_calibration_from(calib)
    assert counts.calibration_shared_over == ("system",)
    result, found = run(counts)
    assert found == []
    assert result.attrs["tested"] is False and "shared" in result.attrs["reason"]
    assert not bool(result["flagged"].any()) and np.isnan(result["bias"]).all()


def test_one_system_is_not_tested():
    counts = bj.JudgeCounts.from_counts(n=500, k=300, m0=40, tn=30, m1=40, tp=36)
    result, found = run(counts)
    assert found == [] and result.attrs["tested"] is False


def test_judge_near_chance_on_one_system_warns_and_says_not_identifiable():
    # sys0: own Ĵ = 20/40 + 20/40 - 1 = 0 exactly; the others q̂0 = q̂1 = 0.9.
    counts = bj.JudgeCounts.from_counts(
        n=[500] * 4, k=[250, 300, 300, 300], m0=[40] * 4, tn=[20, 36, 36, 36],
        m1=[40] * 4, tp=[20, 36, 36, 36], system=["sys0", "b", "c", "d"],
    )  # fmt: skip
    result, found = run(counts)
    assert len(found) == 1
    assert "sys0: q̂0 = 0.50, q̂1 = 0.50, bias not identifiable (own Ĵ = 0.00; first order" in (
        str(found[0].message)
    )
    assert not bool(result["identified"].sel(system="sys0").item())


def test_tiny_difference_with_huge_calibration_is_not_warned():
    # q0 = 0.90 vs 0.92 with 20000 labels each: the chi-square test rejects (p < 1e-8) but
    # the biases are shown below half a standard error of the pooled estimates (n = 200
    # test items per system, whose binomial error dominates): no warning.
    counts = bj.JudgeCounts.from_counts(
        n=[200, 200], k=[120, 120], m0=[20000, 20000], tn=[18000, 18400],
        m1=[20000, 20000], tp=[18000, 18000], system=["a", "b"],
    )  # fmt: skip
    result, found = run(counts)
    assert result["q0_pvalue"].item() < 1e-8 and bool(result["q_differs"].item())
    assert found == [] and not bool(result["flagged"].item())
    bias, se = result["bias"].values.ravel(), result["bias_se"].values.ravel()
    tol = result["tolerance"].values.ravel()
    assert (np.abs(bias) + result.attrs["z_bias"] * se <= tol).all()
    assert tol == pytest.approx(
        POOLED_BIAS_RATIO_MAX * result["half_width"].values.ravel() / 1.959963984540054
    )


def test_a_bias_that_matters_warns_without_a_significant_homogeneity_test():
    # 20 systems; one (s0) has q0 = 0.6 instead of 0.9 with 60 labels: the omnibus test
    # over 20 groups may not reach alpha/4 but the bias test on s0 does.
    systems = [f"s{i}" for i in range(20)]
    tn = [36] + [54] * 19
    counts = bj.JudgeCounts.from_counts(
        n=[5000] * 20, k=[2500] * 20, m0=[60] * 20, tn=tn, m1=[60] * 20, tp=[54] * 20,
        system=systems,
    )  # fmt: skip
    result, found = run(counts)
    assert bool(result["bias_excess"].sel(system="s0").item())
    assert len(found) == 1 and "s0: q̂0 = 0.60" in str(found[0].message)


def test_pooling_over_strata_and_over_both_dims():
    rng = np.random.default_rng(3)
    counts = bj.JudgeCounts.from_counts(
        n=np.full((2, 3), 400), k=rng.binomial(400, 0.6, (2, 3)), m0=np.full((2, 3), 50),
        tn=np.array([[45, 45, 20], [44, 46, 21]]), m1=np.full((2, 3), 50),
        tp=np.full((2, 3), 45), system=["a", "b"], stratum=["x", "y", "z"],
    )  # fmt: skip
    result, found = run(counts, dims="stratum")
    assert result["q0_pvalue"].dims == ("system",) and result["bias"].dims == ("system", "stratum")
    assert len(found) == 1 and "In system a, " in str(found[0].message)
    assert "z: q̂0 = 0.40" in str(found[0].message)
    result, found = run(counts, dims=("system", "stratum"))
    assert result["q0_pvalue"].dims == ()
    assert "system=a/stratum=z: q̂0 = 0.40" in str(found[0].message)
    # Over systems only: strata tested separately, no difference within any stratum.
    result, found = run(counts, dims=["system"])
    assert result["q0_pvalue"].dims == ("stratum",) and found == []


def test_warning_class_stacklevel_and_bad_dims():
    assert issubclass(PooledCalibrationWarning, CalibrationDesignWarning)
    rng = np.random.default_rng(15)
    counts = simulate(rng, Q0_REAL, Q1_REAL, THETA_REAL)
    with pytest.warns(PooledCalibrationWarning) as record:
        check_pooled_calibration(counts)
    assert record[0].filename == __file__
    with pytest.raises(ValueError, match="dims must name"):
        check_pooled_calibration(counts, dims=("judge",))
    with pytest.raises(ValueError, match="dims must name"):
        check_pooled_calibration(counts, dims=())
    with pytest.raises(ValueError, match="alpha"):
        check_pooled_calibration(counts, alpha=1.5)


def test_collapsed_intervals_and_their_message():
    dims = ("system", "stratum")
    ds = xr.Dataset(
        {
            "ci": ((*dims, "ci_bound"), [[[0.0, 0.0]], [[0.1, 0.3]], [[1.0, 1.0]], [[0.0, 0.2]]]),
            "p_hat": (dims, [[0.10], [0.5], [0.95], [0.3]]),
            "q0_hat": (dims, [[0.8]] * 4),
            "q1_hat": (dims, [[0.9]] * 4),
        },
        coords={"system": list("abcd"), "stratum": ["all"], "ci_bound": ["lower", "upper"]},
    )
    assert collapsed_intervals(ds).values.ravel().tolist() == [True, False, True, False]
    message = collapsed_interval_message(ds)
    assert "system=a/stratum=all is the single point [0, 0] (p̂ = 0.100, q̂0 = 0.800" in message
    assert "system=c/stratum=all is the single point [1, 1]" in message
    assert "system=b" not in message and "system=d" not in message
    assert "outside [0, 1]" in message and "not a certain θ" in message
    assert collapsed_interval_message(ds.isel(system=[1, 3])) is None
    with pytest.raises(ValueError, match="'interval'"):
        collapsed_intervals(ds, var="interval")


def test_counts_with_a_joint_verdict_table_are_checked_on_their_counts():
    # Regression: the joint table's "pattern" dim broke the check (notebook 03, paired items).
    test = bj.simulate.simulate_paired_items(
        [0.6, 0.7, 0.8], 0.85, 0.9, n=300, correlation=0.5, system=["a", "b", "c"],
        random_seed=1,
    )  # fmt: skip
    _, calibration = bj.simulate_items(
        [0.6, 0.7, 0.8], 0.85, 0.9, n=1, m0=100, m1=100, system=["a", "b", "c"], random_seed=2
    )
    counts = bj.JudgeCounts.from_frames(
        test.drop(columns="truth"), calibration, system="system", item="item"
    )
    assert counts.has_joint
    result = check_pooled_calibration(counts)
    assert set(result["q0_hat"].dims) == {"system", "stratum"}
    np.testing.assert_allclose(
        result["q0_hat"].values.ravel(), (counts.tn / counts.m0).values.ravel()
    )
