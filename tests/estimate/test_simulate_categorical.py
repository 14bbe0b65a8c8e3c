"""The K-category simulators: moments against their expectations, seeds, shapes, confusions.

Moment checks use R independent groups of one call (fixed seed) and a tolerance of 4 Monte
Carlo standard errors of the mean (variance: 4 × the large-sample SE sqrt(2 / (R - 1)) of a
variance ratio), per checked cell.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayesjudge.data import CategoricalCounts
from bayesjudge.simulate import (
    preference_confusion,
    rubric_confusion,
    simulate_categorical_count_arrays,
    simulate_categorical_counts,
    simulate_categorical_items,
)

THETA = np.array([0.45, 0.15, 0.40])
CONF = np.array([[0.80, 0.12, 0.08], [0.15, 0.70, 0.15], [0.05, 0.10, 0.85]])
R = 4000
SYSTEMS = [f"r{i}" for i in range(R)]


def verdict_shares(theta, conf):
    """P(verdict = j) = sum_i theta_i C[i, j], written as a loop (the reference)."""
    k = len(theta)
    return np.array([sum(theta[i] * conf[i, j] for i in range(k)) for j in range(k)])


def assert_mean(draws, expected, variance, label):
    mean = draws.mean(axis=0)
    se = np.sqrt(variance / draws.shape[0])
    assert np.all(np.abs(mean - expected) < 4 * se), (label, mean, expected, se)


def test_stratified_moments():
    n, m = 60, np.array([20, 10, 30])
    counts = simulate_categorical_counts(
        THETA, CONF, n, m, system=SYSTEMS, categories=["A", "tie", "B"], random_seed=101
    )
    test = counts.test.values[:, 0]  # (R, K)
    cal = counts.calibration.values[:, 0]  # (R, K, K)
    p = verdict_shares(THETA, CONF)
    assert (test.sum(axis=1) == n).all()
    assert_mean(test, n * p, n * p * (1 - p), "test")
    ratio = test.var(axis=0, ddof=1) / (n * p * (1 - p))
    assert np.all(np.abs(ratio - 1) < 4 * np.sqrt(2 / (R - 1))), ratio
    # covariance of two categories: -n p_0 p_2 (multinomial)
    cov = np.cov(test[:, 0], test[:, 2])[0, 1]
    expected_cov = -n * p[0] * p[2]
    assert abs(cov / expected_cov - 1) < 4 * np.sqrt(2 / (R - 1)) * 1.5
    assert (cal.sum(axis=2) == m).all()  # row totals fixed by design
    for i in range(3):
        assert_mean(cal[:, i], m[i] * CONF[i], m[i] * CONF[i] * (1 - CONF[i]), f"row {i}")
    assert counts.design == "stratified" and counts.categories == ["A", "tie", "B"]


def test_random_design_moments():
    n, m = 50, 40
    counts = simulate_categorical_counts(
        THETA, CONF, n, m, design="random", system=SYSTEMS, random_seed=102
    )
    cal = counts.calibration.values[:, 0]
    rows = cal.sum(axis=2)  # (R, K): labelled items per truth ~ Multinomial(m, theta)
    assert (rows.sum(axis=1) == m).all() and counts.design == "random"
    assert_mean(rows, m * THETA, m * THETA * (1 - THETA), "truth rows")
    cells = cal.reshape(R, 9)
    joint = (THETA[:, None] * CONF).ravel()  # P(truth i, verdict j)
    assert_mean(cells, m * joint, m * joint * (1 - joint), "cells")
    p = verdict_shares(THETA, CONF)
    assert_mean(counts.test.values[:, 0], n * p, n * p * (1 - p), "test")


def test_item_tables_have_the_law_of_the_counts():
    r = 400
    labels = [f"r{i}" for i in range(r)]
    n, m = 30, np.array([6, 4, 8])
    test, cal = simulate_categorical_items(
        THETA, CONF, n, m, system=labels, categories=["A", "tie", "B"], random_seed=103
    )
    counts = CategoricalCounts.from_frames(test, cal, system="system", categories=["A", "tie", "B"])
    p = verdict_shares(THETA, CONF)
    assert_mean(counts.test.values[:, 0], n * p, n * p * (1 - p), "item test")
    c = counts.calibration.values[:, 0]
    assert (c.sum(axis=2) == m).all()
    for i in range(3):
        assert_mean(c[:, i], m[i] * CONF[i], m[i] * CONF[i] * (1 - CONF[i]), f"item row {i}")
    # the hidden truth column follows theta
    truth = np.array([(test["truth"] == c).mean() for c in ["A", "tie", "B"]])
    se = np.sqrt(THETA * (1 - THETA) / len(test))
    assert np.all(np.abs(truth - THETA) < 4 * se)


def test_random_item_tables_label_a_random_subset():
    one = simulate_categorical_items(
        THETA, CONF, n=[30, 20], m=[10, 5], design="random", one_table=True,
        system=["a", "b"], random_seed=104,
    )  # fmt: skip
    assert one.groupby("system")["human"].count().tolist() == [10, 5]
    labelled = one[one["human"].notna()]
    assert (labelled["human"] == labelled["truth"]).all()
    assert one["item"].is_unique
    test, cal = simulate_categorical_items(
        THETA, CONF, n=[30, 20], m=[10, 5], design="random", system=["a", "b"],
        random_seed=104,
    )  # fmt: skip
    assert len(test) == 65 and set(cal["item"]) <= set(test["item"])


def test_seeds_shapes_and_broadcasting():
    a = simulate_categorical_counts(THETA, CONF, 100, [5, 5, 5], random_seed=7)
    b = simulate_categorical_counts(THETA, CONF, 100, [5, 5, 5], random_seed=7)
    c = simulate_categorical_counts(THETA, CONF, 100, [5, 5, 5], random_seed=8)
    assert a.ds.identical(b.ds) and not a.ds.identical(c.ds)
    gen = simulate_categorical_counts(
        THETA, CONF, 100, [5, 5, 5], random_seed=np.random.default_rng(7)
    )
    assert gen.ds["test"].identical(a.ds["test"])
    assert "random_seed=7" in a.ds.attrs["simulation"]
    # per-system theta (2, 1, K), per-stratum n (1, 3), one confusion: (system, stratum)
    two = simulate_categorical_counts(
        [[[0.2, 0.3, 0.5]], [[0.5, 0.3, 0.2]]], CONF, [[10, 20, 30]], [4, 4, 4],
        system=["s", "t"], stratum=["x", "y", "z"], random_seed=1,
    )  # fmt: skip
    assert two.test.sum("category").values.tolist() == [[10, 20, 30], [10, 20, 30]]
    ordered = simulate_categorical_counts(
        [0.2, 0.8], rubric_confusion(2, 0.5), 5, [1, 1], ordered=True, random_seed=1
    )
    assert ordered.ordered and ordered.categories == [0, 1]
    # scalar parameters serve every labelled group, as in simulate_counts
    labelled = simulate_categorical_counts(
        THETA, CONF, 10, [1, 1, 1], system=["a", "b"], random_seed=0
    )
    assert labelled.n().values.ravel().tolist() == [10, 10]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(theta=[0.5, 0.6, 0.1]), "theta must sum to 1"),
        (dict(theta=[1.2, -0.2, 0.0]), r"probabilities in \[0, 1\]"),
        (dict(confusion=np.eye(2)), "confusion is 2 × 2"),
        (dict(confusion=[[1, 0, 0], [0, 1, 0], [0, 0.5, 0.4]]), "per truth row"),
        (dict(m=10), r"labelled items per truth category, shape \(\.\.\., K\)"),
        (dict(theta=[THETA, THETA]), r"group shape \(2,\) but the labels give \(\)"),
        (dict(n=[1, 2, 3], system=["a", "b"]), "do not broadcast to one group shape"),
        (dict(categories=["a", "b"]), "categories has 2 labels but theta has K = 3"),
        (dict(design="both"), "design must be one of"),
        (dict(random_seed=-1), "random_seed must be"),
        (dict(n=-3), "non-negative"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    args = dict(theta=THETA, confusion=CONF, n=10, m=[1, 2, 3]) | kwargs
    theta, confusion, n, m = (args.pop(k) for k in ("theta", "confusion", "n", "m"))
    with pytest.raises(ValueError, match=message):
        simulate_categorical_counts(theta, confusion, n, m, **args)


def test_preference_confusion_structure():
    c = preference_confusion(0.7, tie_rate=0.1, tie_accuracy=0.5)
    np.testing.assert_allclose(c.sum(axis=-1), 1, atol=1e-15)
    assert c[0, 2] == c[2, 0] == pytest.approx(0.2)  # symmetric: A↔B mistakes alike
    np.testing.assert_allclose(c[1], [0.25, 0.5, 0.25])
    biased = preference_confusion(0.7, tie_rate=0.1, bias=0.05)
    assert biased[0, 0] == pytest.approx(0.75) and biased[2, 0] == pytest.approx(0.25)
    np.testing.assert_allclose(biased.sum(axis=-1), 1, atol=1e-15)
    assert preference_confusion([0.6, 0.7], [[0.1], [0.2]]).shape == (2, 2, 3, 3)
    with pytest.raises(ValueError, match="outside"):
        preference_confusion(0.95, tie_rate=0.1)


def test_rubric_confusion_matches_a_logistic_cdf_reference():
    k, spread, bias = 5, 0.7, 0.3
    c = rubric_confusion(k, spread, bias=bias)
    ref = np.zeros((k, k))
    for i in range(k):  # scipy.stats.logistic, cut at the midpoints between grades
        cuts = np.r_[-np.inf, np.arange(k - 1) + 0.5, np.inf]
        cdf = stats.logistic.cdf(cuts, loc=i + bias, scale=spread)
        ref[i] = np.diff(cdf)
    np.testing.assert_allclose(c, ref, atol=1e-14)
    np.testing.assert_allclose(rubric_confusion(4, 1e-3), np.eye(4), atol=1e-12)
    many = rubric_confusion(3, [0.5, 1.0, 2.0])
    assert many.shape == (3, 3, 3)
    assert many[0, 1, 1] > many[1, 1, 1] > many[2, 1, 1]  # wider noise, fewer exact grades
    with pytest.raises(ValueError, match="spread must be positive"):
        rubric_confusion(3, 0.0)
    with pytest.raises(ValueError, match="K must be an integer >= 2"):
        rubric_confusion(1, 0.5)


def test_count_arrays_are_the_counts_without_the_container():
    labels = ["s", "t", "u"]
    counts = simulate_categorical_counts(
        THETA, CONF, 40, 12, design="random", system=labels, random_seed=9
    )
    arrays = simulate_categorical_count_arrays(
        THETA, CONF, 40, 12, design="random", size=(3,), random_seed=9
    )
    np.testing.assert_array_equal(arrays["test"], counts.test.values[:, 0])
    np.testing.assert_array_equal(arrays["calibration"], counts.calibration.values[:, 0])
    many = simulate_categorical_count_arrays(THETA, CONF, 5, [1, 2, 3], size=(7, 2), random_seed=3)
    assert many["test"].shape == (7, 2, 3) and many["calibration"].shape == (7, 2, 3, 3)
    with pytest.raises(ValueError, match="do not broadcast"):
        simulate_categorical_count_arrays([THETA] * 2, CONF, 5, [1, 2, 3], size=(3,))
