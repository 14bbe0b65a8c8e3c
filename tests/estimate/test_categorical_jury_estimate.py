"""categorical_jury_estimate and bj.estimate(CategoricalJuryCounts): the core per group.

References: every group's numbers against the core functions on that group's arrays (exact),
K = 2 counts against the binary jury_estimate (1e-9), "per-judge" against
estimate_categorical(counts.for_judge(j)) (exact); a simulated data set's estimates against
the truth within 4 standard errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesjudge as bj
from bayesjudge.categorical_estimate import estimate_categorical
from bayesjudge.categorical_jury_estimate import categorical_jury_estimate
from bayesjudge.core import categorical_jury as core
from bayesjudge.data import CategoricalJuryCounts
from bayesjudge.data.jury import JuryCounts
from bayesjudge.jury_estimate import jury_estimate
from bayesjudge.simulate import preference_confusion, simulate_categorical_jury
from bayesjudge.warnings import ConvergenceWarning, SmallSampleWarning

CATS = ["A", "tie", "B"]
SCORES = {"A": 1, "tie": 0.5, "B": 0}
# simulate_categorical_jury(PI, CONF, n=600, m=[30, 30, 30], system=["x", "y"], ...)
CONF = np.stack(
    [preference_confusion(a, tie_rate=0.1, tie_accuracy=t) for a, t in ((0.8, 0.6), (0.75, 0.7),
                                                                         (0.85, 0.5))]
)  # fmt: skip
PI = np.array([[0.45, 0.15, 0.40], [0.30, 0.30, 0.40]])


@pytest.fixture(scope="module")
def counts():
    return simulate_categorical_jury(
        PI, CONF, n=600, m=[30, 30, 30], system=["x", "y"], categories=CATS,
        judges=["a", "b", "c"], missing=0.1, random_seed=11,
    )  # fmt: skip


@pytest.fixture(scope="module")
def easy():
    """One group of good judges without missing verdicts: the bootstrap's EM is quick."""
    conf = np.stack([preference_confusion(a, tie_rate=0.05, tie_accuracy=t)
                     for a, t in ((0.9, 0.8), (0.85, 0.85), (0.9, 0.75))])  # fmt: skip
    return simulate_categorical_jury(
        [[0.4, 0.2, 0.4], [0.3, 0.3, 0.4]], conf, n=300, m=[20, 20, 20], system=["x", "y"],
        categories=CATS, judges=["a", "b", "c"], random_seed=5,
    )  # fmt: skip


def group_arrays(counts, s):
    """The core's arrays of system s: its observed patterns, test and labelled counts."""
    test = counts.test.isel(system=s, stratum=0).values
    lab = counts.labelled.isel(system=s, stratum=0).values
    seen = (test + lab.sum(axis=0)) > 0
    return counts.verdicts.astype(int)[seen], test[seen], lab[:, seen]


@pytest.mark.parametrize("method", ["dawid-skene", "dawid-skene-bootstrap"])
def test_each_group_is_the_core_dawid_skene(counts, easy, method):
    boot = method == "dawid-skene-bootstrap"
    counts = easy if boot else counts  # two groups each; easy's bootstrap EM is quick
    ds = categorical_jury_estimate(
        counts, method=method, scores=SCORES, n_resamples=1000, random_seed=3
    )
    assert ds["estimate"].dims == ("system", "stratum", "category")
    assert ds["ci"].dims == ("system", "stratum", "category", "ci_bound")
    assert ds["confusion_hat"].dims == ("system", "stratum", "judge", "truth", "verdict")
    rng = np.random.default_rng(3)  # the groups draw from one stream, in order
    for s in range(2):
        args = group_arrays(counts, s)
        ref = core.categorical_dawid_skene_interval(
            *args, method="bootstrap" if boot else "wald", scores=[1, 0.5, 0],
            n_resamples=1000, random_seed=rng,
        )  # fmt: skip
        fit = core.categorical_dawid_skene(*args)
        got = ds.isel(system=s, stratum=0)
        np.testing.assert_array_equal(got["estimate"].values, ref.estimate)
        np.testing.assert_array_equal(got["ci"].values, np.column_stack([ref.lower, ref.upper]))
        assert got["score"].item() == ref.score
        assert tuple(got["score_ci"].values) == (ref.score_lower, ref.score_upper)
        np.testing.assert_array_equal(got["confusion_hat"].values, fit.confusion)
    assert ds.attrs["method"] == method and ds.attrs["ci_prob"] == 0.95
    assert ds.attrs["n_resamples"] == (1000 if boot else 0)
    assert ds.attrs["categories"] == '["A", "tie", "B"]'
    assert ds["category"].values.tolist() == CATS


def test_plurality_is_the_core_plurality_vote(counts):
    ds = categorical_jury_estimate(counts, method="plurality", scores=SCORES)
    for s in range(2):
        test = counts.test.isel(system=s, stratum=0).values
        ref = core.plurality_vote(counts.verdicts.astype(int), test, 3, scores=[1, 0.5, 0])
        got = ds.isel(system=s, stratum=0)
        np.testing.assert_array_equal(got["estimate"].values, ref.estimate)
        np.testing.assert_array_equal(got["ci"].values, np.column_stack([ref.lower, ref.upper]))
        assert got["score"].item() == ref.score


def test_per_judge_is_estimate_categorical_of_each_judge(counts):
    ds = categorical_jury_estimate(counts, method="per-judge", scores=SCORES)
    assert ds["estimate"].dims == ("system", "stratum", "judge", "category")
    for judge in counts.judges:
        ref = estimate_categorical(counts.for_judge(judge), scores=SCORES)
        got = ds.sel(judge=judge)
        for name in ("estimate", "ci", "score", "score_ci", "confusion_hat"):
            np.testing.assert_array_equal(got[name].values, ref[name].values)


def test_estimates_recover_the_truth(counts):
    # One simulated data set (seed 11): every share within 4 SE of the truth, SE from the
    # Wald interval (half-width on the logit scale mapped back is ~1.96 SE).
    ds = categorical_jury_estimate(counts, scores=SCORES)
    est = ds["estimate"].squeeze("stratum").values
    half = (ds["ci"].diff("ci_bound").squeeze().values) / 2
    assert np.all(np.abs(est - PI) <= 4 * half / 1.96), (est, PI)
    assert ds["converged"].all()
    np.testing.assert_allclose(ds["score"].squeeze("stratum"), est @ [1, 0.5, 0], atol=1e-12)


def test_k2_counts_match_the_binary_jury_estimate():
    binary = JuryCounts.from_counts(
        ["111", "110", "101", "011", "100", "010", "001", "000"],
        test=[300, 40, 35, 30, 20, 25, 30, 200],
        labelled=[[1, 1, 2, 1, 3, 4, 3, 25], [24, 3, 4, 2, 1, 2, 1, 3]],
        judges=["a", "b", "c"],
    )
    cat = CategoricalJuryCounts.from_jury_counts(binary)
    ref = jury_estimate(binary)
    # The categorical Wald interval is built around the fit with 1/K = 0.5 pseudo-items per
    # cell (core.categorical_jury, interval_smoothing): the binary one with smoothing=0.5.
    ref_ci = jury_estimate(binary, smoothing=0.5)["ci"]
    got = categorical_jury_estimate(cat).sel(category="correct")
    np.testing.assert_allclose(got["estimate"].values, ref["estimate"].values, atol=1e-9)
    np.testing.assert_allclose(got["ci"].values, ref_ci.values, atol=1e-9)
    conf = categorical_jury_estimate(cat)["confusion_hat"]
    np.testing.assert_allclose(
        conf.sel(truth="correct", verdict="correct").values, ref["q1_hat"].values, atol=1e-9
    )
    maj = jury_estimate(binary, method="majority")
    plu = categorical_jury_estimate(cat, method="plurality").sel(category="correct")
    np.testing.assert_allclose(plu["ci"].values, maj["ci"].values, atol=1e-12)


def test_bj_estimate_dispatches_and_refuses_what_does_not_apply(counts):
    ds = bj.estimate(counts, scores=SCORES)
    ref = categorical_jury_estimate(counts, scores=SCORES)
    assert ds.attrs["method"] == "dawid-skene"
    np.testing.assert_array_equal(ds["ci"].values, ref["ci"].values)
    with pytest.raises(ValueError, match="calibration='shared' is not available"):
        bj.estimate(counts, calibration="shared")
    with pytest.raises(ValueError, match="estimand='test-set' is not available"):
        bj.estimate(counts, estimand="test-set")
    with pytest.raises(ValueError, match=r"method must be one of .*'plurality'.*'majority'"):
        bj.estimate(counts, method="majority")


def test_bootstrap_is_reproducible_from_its_seed_and_capped_by_bj_estimate(easy):
    a = categorical_jury_estimate(easy, method="dawid-skene-bootstrap", random_seed=7)
    b = bj.estimate(easy, method="dawid-skene-bootstrap", random_seed=7)
    # estimate's default n_resamples=10,000 is capped at 2000, as for JuryCounts.
    assert a.attrs["n_resamples"] == b.attrs["n_resamples"] == 2000
    np.testing.assert_array_equal(a["ci"].values, b["ci"].values)
    assert a.attrs["random_seed"] == "7"
    c = categorical_jury_estimate(easy, method="dawid-skene-bootstrap", random_seed=8)
    assert not np.array_equal(a["ci"].values, c["ci"].values)


def test_unusable_and_unlabelled_groups_warn_with_what_to_do():
    counts = CategoricalJuryCounts.from_counts(
        ["00", "11", "22", "01"],
        test=[[[40, 30, 20, 5]], [[0, 0, 0, 0]]],
        labelled=np.zeros((2, 1, 3, 4), int),
        judges=["a", "b"], categories=CATS, systems=["x", "y"],
    )  # fmt: skip
    with pytest.warns(SmallSampleWarning, match=r"NaN for system=x/stratum=all.*label some"):
        ds = categorical_jury_estimate(counts)
    assert ds["estimate"].isnull().all()
    three = CategoricalJuryCounts.from_counts(
        ["000", "111", "222", "001", "112"], [50, 30, 40, 5, 4],
        judges=["a", "b", "c"], categories=CATS,
    )  # fmt: skip
    with pytest.warns(SmallSampleWarning, match="No labelled items.*Label some items"):
        ds = categorical_jury_estimate(three)
    assert np.isfinite(ds["estimate"]).all()


def test_non_convergence_warns(counts, monkeypatch):
    real = core.categorical_dawid_skene  # each group's own fit, reported as not converged
    monkeypatch.setattr(
        core, "categorical_dawid_skene", lambda *a, **k: real(*a, **k)._replace(converged=False)
    )
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        ds = categorical_jury_estimate(counts)
    assert not ds["converged"].any()


def test_bad_arguments_are_refused(counts):
    with pytest.raises(TypeError, match="needs a CategoricalJuryCounts"):
        categorical_jury_estimate(counts.for_judge("a"))
    with pytest.raises(ValueError, match="method must be one of"):
        categorical_jury_estimate(counts, method="majority")
    with pytest.raises(ValueError, match="scores"):
        categorical_jury_estimate(counts, scores={"A": 1, "B": 0})
    with pytest.raises(ValueError, match="alpha"):
        categorical_jury_estimate(counts, alpha=1.5)
    with pytest.raises(ValueError, match="n_resamples"):
        categorical_jury_estimate(counts, method="dawid-skene-bootstrap", n_resamples=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        categorical_jury_estimate(counts, method="plurality")  # nothing to warn about
