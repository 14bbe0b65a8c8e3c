"""Tests of the seeded simulator of the misclassification model."""

import numpy as np
import pandas as pd
import pytest

from bayesjudge.data import JudgeCounts
from bayesjudge.simulate import (
    demo_design,
    judge_quality,
    latent_correlation,
    simulate_count_arrays,
    simulate_counts,
    simulate_instability,
    simulate_items,
    simulate_paired_items,
    simulate_shift,
    youden_pair,
)


def test_draws_match_model_moments():
    # k ~ Bin(n, p) with p = theta*q1 + (1-theta)*(1-q0); tn ~ Bin(m0, q0); tp ~ Bin(m1, q1).
    groups, theta, q0, q1, n, m0, m1 = 5000, 0.35, 0.8, 0.85, 200, 60, 40
    counts = simulate_counts(
        theta, q0, q1, n, m0, m1, system=[f"g{i}" for i in range(groups)], random_seed=11
    )
    p = theta * q1 + (1 - theta) * (1 - q0)
    for var, size, prob in (("k", n, p), ("tn", m0, q0), ("tp", m1, q1)):
        draws = counts.dataset[var].values.ravel()
        mean_se = np.sqrt(size * prob * (1 - prob) / groups)
        assert abs(draws.mean() - size * prob) <= 4 * mean_se, var
        # variance of a binomial; SE of the sample variance ~ sqrt(2/groups) * var for near-normal
        var_expected = size * prob * (1 - prob)
        assert abs(draws.var(ddof=1) - var_expected) <= 4 * np.sqrt(2 / groups) * var_expected, var
    assert (counts.dataset["n"] == n).all()


def test_seed_reproducible_and_different_seeds_differ():
    a = simulate_counts(0.5, 0.7, 0.9, 1000, 100, 100, system=list("abcdefgh"), random_seed=5)
    b = simulate_counts(0.5, 0.7, 0.9, 1000, 100, 100, system=list("abcdefgh"), random_seed=5)
    c = simulate_counts(0.5, 0.7, 0.9, 1000, 100, 100, system=list("abcdefgh"), random_seed=6)
    assert a.dataset.equals(b.dataset)
    assert not a.dataset.equals(c.dataset)


def test_two_dimensional_design():
    design = demo_design()
    counts = simulate_counts(
        **{v: design[v].values for v in ("theta", "q0", "q1", "n", "m0", "m1")},
        system=design["system"].values.tolist(),
        stratum=design["stratum"].values.tolist(),
        random_seed=1,
    )
    assert counts.dataset["k"].dims == ("system", "stratum")
    assert counts.systems == ["model-a", "model-b", "model-c"]
    assert counts.strata == ["reasoning", "knowledge"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"theta": 1.2}, "theta"),
        ({"q0": -0.1}, "q0"),
        ({"n": 10.5}, "n must be"),
        ({"m1": -3}, "m1 must be"),
    ],
)
def test_bad_parameters_are_named(kwargs, match):
    args = {"theta": 0.5, "q0": 0.7, "q1": 0.9, "n": 100, "m0": 10, "m1": 10} | kwargs
    with pytest.raises(ValueError, match=match):
        simulate_counts(**args)


# ----------------------------------------------------------------- issue 4: the engine


def within(observed, expected, se, k=4.0):
    """|observed - expected| <= k standard errors (elementwise)."""
    return np.all(np.abs(np.asarray(observed) - np.asarray(expected)) <= k * np.asarray(se))


def binomial_moments_ok(draws, size, prob, k=4.0):
    """Mean and variance of i.i.d. Binomial(size, prob) draws within k MC-SE.

    SE of the mean: sqrt(var / R); SE of the sample variance ~ var * sqrt(2 / (R - 1))
    (normal approximation; the binomials here have size * p * (1 - p) >= 10).
    """
    draws = np.asarray(draws, float).ravel()
    reps = draws.size
    var = size * prob * (1 - prob)
    mean_ok = abs(draws.mean() - size * prob) <= k * np.sqrt(var / reps)
    var_ok = abs(draws.var(ddof=1) - var) <= k * var * np.sqrt(2 / (reps - 1))
    return mean_ok and var_ok


def test_random_calibration_counts_follow_the_shift_law():
    # m1 ~ Bin(m, theta_Q); tn | m0 ~ Bin(m0, q0); tp | m1 ~ Bin(m1, q1); k ~ Bin(n, p_P).
    reps, theta_p, theta_q, q0, q1, n, m = 20_000, 0.5, 0.3, 0.7, 0.9, 1000, 200
    d = simulate_count_arrays(
        theta_p,
        q0,
        q1,
        n,
        calibration="random",
        m=m,
        theta_calibration=theta_q,
        size=(reps,),
        random_seed=7,
    )
    assert (d["m0"] + d["m1"] == m).all() and (d["n"] == n).all()
    p = theta_p * q1 + (1 - theta_p) * (1 - q0)
    assert binomial_moments_ok(d["k"], n, p)
    assert binomial_moments_ok(d["m1"], m, theta_q)
    # Pooled conditional rates: tn / m0 and tp / m1 over all reps (binomial totals).
    for sub, total, q in (("tn", "m0", q0), ("tp", "m1", q1)):
        rate = d[sub].sum() / d[total].sum()
        assert within(rate, q, np.sqrt(q * (1 - q) / d[total].sum())), sub


def test_random_calibration_without_shift_uses_test_accuracy():
    d = simulate_count_arrays(
        0.35, 0.8, 0.85, 100, calibration="random", m=150, size=(20_000,), random_seed=3
    )
    assert binomial_moments_ok(d["m1"], 150, 0.35)


def test_count_arrays_keep_simulate_counts_draws():
    # simulate_counts is a thin wrapper: same seed, same numbers.
    arrays = simulate_count_arrays([0.2, 0.7], 0.7, 0.9, 500, 60, 40, random_seed=4)
    counts = simulate_counts([0.2, 0.7], 0.7, 0.9, 500, 60, 40, system=["a", "b"], random_seed=4)
    for name, values in arrays.items():
        assert counts.dataset[name].values.ravel().tolist() == values.tolist(), name


def _item_groups(groups):
    return [f"s{i:04d}" for i in range(groups)]


def test_items_moments_and_round_trip_stratified():
    # Per group: judge "correct" rate on the test set is p; calibration judge rates are q0, q1;
    # counted with from_frames the totals are exactly n, m0, m1 and k, tn, tp are binomial.
    groups, theta, q0, q1, n, m0, m1 = 800, 0.4, 0.75, 0.85, 60, 30, 40
    labels = _item_groups(groups)
    test, calib = simulate_items(theta, q0, q1, n, m0, m1, system=labels, random_seed=21)
    assert set(test.columns) == {"system", "item", "truth", "judge"}
    assert set(calib.columns) == {"system", "item", "judge", "human"}
    counts = JudgeCounts.from_frames(test, calib, system="system")
    assert counts.systems == labels
    ds = counts.dataset
    assert (ds["n"] == n).all() and (ds["m0"] == m0).all() and (ds["m1"] == m1).all()
    p = theta * q1 + (1 - theta) * (1 - q0)
    assert binomial_moments_ok(ds["k"].values, n, p)
    assert binomial_moments_ok(ds["tn"].values, m0, q0)
    assert binomial_moments_ok(ds["tp"].values, m1, q1)
    # The hidden truth has mean theta and the test verdicts depend on it through q0, q1.
    assert within(test["truth"].mean(), theta, np.sqrt(theta * (1 - theta) / len(test)))
    for truth, rate in ((1, q1), (0, 1 - q0)):
        sub = test.loc[test["truth"] == truth, "judge"]
        assert within(sub.mean(), rate, np.sqrt(rate * (1 - rate) / len(sub))), truth


def test_items_random_calibration_round_trip_matches_count_law():
    groups, theta, theta_q, q0, q1, n, m = 800, 0.5, 0.7, 0.7, 0.9, 40, 50
    labels = _item_groups(groups)
    test, calib = simulate_items(
        theta,
        q0,
        q1,
        n,
        calibration="random",
        m=m,
        theta_calibration=theta_q,
        system=labels,
        random_seed=8,
    )
    ds = JudgeCounts.from_frames(test, calib, system="system").dataset
    assert ((ds["m0"] + ds["m1"]) == m).all()
    assert binomial_moments_ok(ds["m1"].values, m, theta_q)
    p = theta * q1 + (1 - theta) * (1 - q0)
    assert binomial_moments_ok(ds["k"].values, n, p)
    # Same law as simulate_counts(calibration="random"): compare the means of both samples.
    other = simulate_counts(
        theta,
        q0,
        q1,
        n,
        calibration="random",
        m=m,
        theta_calibration=theta_q,
        system=labels,
        random_seed=9,
    ).dataset
    for name in ("k", "m1", "tn", "tp"):
        a, b = ds[name].values.ravel(), other[name].values.ravel()
        se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
        assert within(a.mean(), b.mean(), se), name


def test_items_two_dimensional_labels_and_sizes():
    theta = [[0.2, 0.5], [0.6, 0.9]]
    test, calib = simulate_items(
        theta,
        0.7,
        0.9,
        [[3, 4], [5, 6]],
        [[1, 2], [0, 3]],
        2,
        system=["a", "b"],
        stratum=["x", "y"],
        random_seed=1,
    )
    counts = JudgeCounts.from_frames(test, calib, system="system", stratum="stratum")
    assert counts.n.values.tolist() == [[3, 4], [5, 6]]
    assert counts.m0.values.tolist() == [[1, 2], [0, 3]]
    assert counts.m1.values.tolist() == [[2, 2], [2, 2]]
    # item ids restart in every group
    assert test.groupby(["system", "stratum"])["item"].min().eq(0).all()


def test_items_seed_reproducible():
    a = simulate_items(0.5, 0.7, 0.9, 30, 5, 5, system=["a", "b"], random_seed=3)
    b = simulate_items(0.5, 0.7, 0.9, 30, 5, 5, system=["a", "b"], random_seed=3)
    c = simulate_items(0.5, 0.7, 0.9, 30, 5, 5, system=["a", "b"], random_seed=4)
    pd.testing.assert_frame_equal(a[0], b[0])
    pd.testing.assert_frame_equal(a[1], b[1])
    assert not a[0].equals(c[0])


def test_shift_realised_accuracies_and_shared_judge_behaviour():
    # theta_P on the test truth, theta_Q on the calibration truth, the same (q0, q1) on both.
    theta_p, theta_q, q0, q1 = 0.5, 0.25, 0.7, 0.9
    test, calib = simulate_shift(
        theta_p, theta_q, q0, q1, n=40_000, m=40_000, items=True, random_seed=12
    )
    for frame, column, theta in ((test, "truth", theta_p), (calib, "human", theta_q)):
        truth = frame[column].to_numpy()
        assert within(truth.mean(), theta, np.sqrt(theta * (1 - theta) / truth.size)), column
        for value, rate in ((1, q1), (0, 1 - q0)):
            judged = frame.loc[truth == value, "judge"]
            assert within(judged.mean(), rate, np.sqrt(rate * (1 - rate) / len(judged)))
    counts = simulate_shift(
        theta_p, theta_q, q0, q1, n=1000, m=200, system=["a", "b"], random_seed=12
    )
    assert counts.systems == ["a", "b"] and ((counts.m0 + counts.m1) == 200).all()


def test_judge_quality_parameterisation():
    # Fiedler Sec. 5: q0 = q1, so J = 2q - 1 and q = (1 + J) / 2.
    q0, q1 = judge_quality([0.3, 0.6])
    assert np.allclose(q0, [0.65, 0.8]) and np.allclose(q1, q0)
    q0, q1 = judge_quality(0.6, q0=0.7)
    assert np.isclose(q0, 0.7) and np.isclose(q1, 0.9)
    # J_B = J_A + delta_J (Sec. 5: "Delta J = J_B - J_A").
    q0, q1 = youden_pair(0.3, 0.2)
    assert np.allclose(q0 + q1 - 1, [0.3, 0.5])


def test_instability_own_shared_and_pooled_calibration():
    kwargs = dict(
        theta_a=0.6, delta=0.05, j_a=0.3, delta_j=0.3, n=400, m0=100, m1=100, random_seed=5
    )
    own = simulate_instability(**kwargs)
    shared = simulate_instability(**kwargs, shared="A")
    pooled = simulate_instability(**kwargs, shared="pooled")
    assert own.calibration_shared_over == ()
    assert shared.calibration_shared_over == ("system",)
    assert pooled.calibration_shared_over == ("system",)
    cal = ["m0", "tn", "m1", "tp"]
    a_own = own.dataset[cal].sel(system="A")
    for name in cal:
        assert (shared.dataset[name] == a_own[name]).all(), name
        assert (pooled.dataset[name] == own.dataset[name].sum("system")).all(), name
    assert (shared.dataset["k"] == own.dataset["k"]).all()
    # The draws are simulate_counts with theta = (theta_A, theta_A + delta) and the (q0, q1)
    # of youden_pair, whose moments are tested above.
    q0, q1 = youden_pair(0.3, 0.3)
    same = simulate_counts([0.6, 0.65], q0, q1, 400, 100, 100, system=["A", "B"], random_seed=5)
    assert own.dataset.equals(same.dataset)


def test_paired_items_marginals_correlation_and_verdicts():
    # Gaussian copula: realised phi correlation of correctness = requested, within MC error.
    # MC-SE from 200 independent blocks of 1000 items (sd of block estimates / sqrt(200)).
    theta = np.array([0.3, 0.6, 0.8])
    q0, q1 = np.array([0.7, 0.8, 0.9]), np.array([0.9, 0.75, 0.85])
    rho, n, blocks = 0.3, 200_000, 200  # phi <= 0.327 for (0.3, 0.8)
    frame = simulate_paired_items(
        theta, q0, q1, n, correlation=rho, system=["a", "b", "c"], random_seed=31
    )
    assert len(frame) == 3 * n
    truth = frame["truth"].to_numpy().reshape(n, 3)
    judge = frame["judge"].to_numpy().reshape(n, 3)
    assert within(truth.mean(0), theta, np.sqrt(theta * (1 - theta) / n))
    for j in range(3):
        for value, rate in ((1, q1[j]), (0, 1 - q0[j])):
            sub = judge[truth[:, j] == value, j]
            assert within(sub.mean(), rate, np.sqrt(rate * (1 - rate) / sub.size))
    per_block = truth.reshape(blocks, n // blocks, 3)
    for j, k in ((0, 1), (0, 2), (1, 2)):
        overall = np.corrcoef(truth[:, j], truth[:, k])[0, 1]
        block_r = [np.corrcoef(b[:, j], b[:, k])[0, 1] for b in per_block]
        se = np.std(block_r, ddof=1) / np.sqrt(blocks)
        assert within(overall, rho, se), (j, k, overall, se)
    # Verdicts are conditionally independent given the truth: within the cell where both
    # systems are truly correct, verdict correlation ~ 0.
    both = (truth[:, 0] == 1) & (truth[:, 1] == 1)
    r = np.corrcoef(judge[both, 0], judge[both, 1])[0, 1]
    assert abs(r) <= 4 / np.sqrt(both.sum())
    counts = JudgeCounts.from_frames(frame, system="system")
    assert counts.n.values.ravel().tolist() == [n, n, n]


def test_paired_items_correlation_matrix_and_independence():
    # A matrix request: pairs (0, 1) correlated, (0, 2) and (1, 2) independent (latent r = 0).
    corr = np.array([[1, 0.5, 0], [0.5, 1, 0], [0, 0, 1]])
    latent = latent_correlation([0.5, 0.5, 0.4], corr)
    assert np.isclose(latent[0, 1], np.sin(np.pi * 0.5 / 2), atol=1e-8)  # Sheppard's formula
    assert latent[0, 2] == 0 and latent[1, 2] == 0
    n, blocks = 100_000, 100
    frame = simulate_paired_items([0.5, 0.5, 0.4], 0.8, 0.9, n, correlation=corr, random_seed=2)
    truth = frame["truth"].to_numpy().reshape(n, 3)
    # MC-SE of each realised correlation from 100 independent blocks of 1000 items.
    per_block = truth.reshape(blocks, n // blocks, 3)
    for (j, k), target in (((0, 1), 0.5), ((0, 2), 0.0), ((1, 2), 0.0)):
        overall = np.corrcoef(truth[:, j], truth[:, k])[0, 1]
        block_r = [np.corrcoef(b[:, j], b[:, k])[0, 1] for b in per_block]
        se = np.std(block_r, ddof=1) / np.sqrt(blocks)
        assert within(overall, target, se), (j, k, overall, se)


def test_paired_items_seed_reproducible():
    a = simulate_paired_items([0.4, 0.6], 0.8, 0.9, 100, correlation=0.3, random_seed=1)
    b = simulate_paired_items([0.4, 0.6], 0.8, 0.9, 100, correlation=0.3, random_seed=1)
    c = simulate_paired_items([0.4, 0.6], 0.8, 0.9, 100, correlation=0.3, random_seed=2)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    assert a["system"].unique().tolist() == ["s0", "s1"]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: simulate_counts(0.5, 0.7, 0.9, 100, calibration="random"), "needs m"),
        (lambda: simulate_counts(0.5, 0.7, 0.9, 100, 10), "m1 missing"),
        (lambda: simulate_counts(0.5, 0.7, 0.9, 100, calibration="mixed", m=5), "calibration"),
        (
            lambda: simulate_counts(0.5, 0.7, 0.9, 100, 10, 10, theta_calibration=0.3),
            "theta_calibration applies only",
        ),
        (
            lambda: simulate_counts(0.5, 0.7, 0.9, 100, 10, 10, calibration="random", m=20),
            "m0 and m1 are random",
        ),
        (
            lambda: simulate_counts(
                0.5, 0.7, 0.9, 100, calibration="random", m=20, theta_calibration=1.5
            ),
            "theta_calibration must be",
        ),
        (
            lambda: simulate_count_arrays([0.5, 0.6], 0.7, 0.9, 100, 10, 10, size=(3,)),
            "theta \\(2,\\)",
        ),
        (lambda: simulate_items(0.5, 0.7, 0.9, -1, 2, 2), "n must be"),
        (lambda: simulate_items([0.5, 0.6], 0.7, 0.9, 5, 2, 2), "labels give"),
        (lambda: simulate_shift(0.5, 0.3, 0.7, 0.9, 100, 2.5), "m must be"),
        (lambda: judge_quality(1.2), "youden"),
        (lambda: judge_quality(0.6, q0=0.5), "q1 = 1 \\+ youden - q0"),
        (lambda: youden_pair(0.9, 0.2), "J_B"),
        (
            lambda: simulate_instability(0.5, 0.05, 0.3, 0.1, 100, 10, 10, shared="C"),
            "shared must be",
        ),
        (lambda: simulate_instability(0.98, 0.05, 0.3, 0.1, 100, 10, 10), "theta_a \\+ delta"),
        (lambda: simulate_paired_items([0.5, 0.6], [0.7, 0.8, 0.9], 0.9, 10), "lengths"),
        (lambda: simulate_paired_items([0.1, 0.9], 0.7, 0.9, 10, correlation=0.5), "impossible"),
        (
            lambda: simulate_paired_items(
                [0.5, 0.5, 0.5],
                0.7,
                0.9,
                10,
                correlation=[[1, 0.9, -0.9], [0.9, 1, 0.9], [-0.9, 0.9, 1]],
            ),
            "positive semi",
        ),
        (
            lambda: simulate_paired_items([0.5, 1.0], 0.7, 0.9, 10, correlation=0.2),
            "strictly inside",
        ),
        (
            lambda: simulate_paired_items([0.5, 0.5], 0.7, 0.9, 10, correlation=[0.2, 0.3]),
            "symmetric",
        ),
    ],
)
def test_engine_bad_inputs_name_the_field(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- review (issue 4) ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "match"),
    [
        # numpy's "Mismatch is between arg 0 with shape (2,) and arg 6 with shape (3,)" named
        # neither theta nor the labels.
        (
            lambda: simulate_counts([0.1, 0.2], 0.7, 0.9, 10, 5, 5, system=["a", "b", "c"]),
            r"theta \(2,\).*labels \(3,\)",
        ),
        (
            lambda: simulate_items([0.1, 0.2], 0.7, 0.9, 10, 5, 5, system=["a", "b", "c"]),
            r"theta \(2,\).*labels \(3,\)",
        ),
        # numpy's "SeedSequence expects int ..." / "expected non-negative integer".
        (lambda: simulate_counts(0.5, 0.7, 0.9, 10, 5, 5, random_seed="abc"), "random_seed"),
        (lambda: simulate_counts(0.5, 0.7, 0.9, 10, 5, 5, random_seed=-1), "random_seed"),
        (lambda: simulate_paired_items([0.5, 0.6], 0.8, 0.9, 5, random_seed=1.5), "random_seed"),
        # The message showed "J_A=np.float64(0.9)".
        (lambda: youden_pair(0.9, 0.2), r"got J_A=0\.9, J_B=1\.1"),
        # A NaN correlation was reported as "got shape (2, 2)".
        (
            lambda: simulate_paired_items([0.5, 0.5], 0.8, 0.9, 10, correlation=np.nan),
            "finite",
        ),
        # A diagonal other than 1 was silently ignored.
        (
            lambda: simulate_paired_items(
                [0.5, 0.6], 0.8, 0.9, 10, correlation=[[0.5, 0.2], [0.2, 0.5]]
            ),
            "diagonal",
        ),
    ],
)
def test_review_bad_inputs_name_the_field(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_correlation_at_the_frechet_bounds_is_reachable():
    # Equal accuracies allow correlation 1 (identical truths); accuracies θ and 1 − θ allow -1
    # (complementary truths). Root finding on the open interval used to fail with scipy's
    # "f(a) and f(b) must have different signs".
    same = simulate_paired_items([0.5, 0.5], 0.8, 0.9, 2000, correlation=1.0, random_seed=1)
    truth = same.pivot(index="item", columns="system", values="truth")
    assert (truth["s0"] == truth["s1"]).all()
    opposite = simulate_paired_items([0.3, 0.7], 0.8, 0.9, 2000, correlation=-1.0, random_seed=1)
    truth = opposite.pivot(index="item", columns="system", values="truth")
    assert (truth["s0"] + truth["s1"] == 1).all()
    # Upper bound for unequal accuracies (0.3, 0.6): P(both) = min = 0.3, correlation
    # (0.3 - 0.18) / sqrt(0.21 * 0.24) = 0.5345; then s0 correct implies s1 correct.
    bound = (0.3 - 0.3 * 0.6) / np.sqrt(0.21 * 0.24)
    latent = latent_correlation([0.3, 0.6], bound)
    assert latent[0, 1] == pytest.approx(1.0)
    frame = simulate_paired_items([0.3, 0.6], 0.8, 0.9, 2000, correlation=bound, random_seed=2)
    truth = frame.pivot(index="item", columns="system", values="truth")
    assert (truth["s0"] <= truth["s1"]).all()
