"""estimate() and compare() with the labelling design: defaults, the likelihood method, the
test-set estimand, the human-only baseline and the warnings that issue 15 asks for."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bayesjudge.compare import compare
from bayesjudge.core import likelihood as lik
from bayesjudge.core.correction import lang_reiczigel_interval
from bayesjudge.data import JudgeCounts
from bayesjudge.estimate import estimate
from bayesjudge.warnings import LowJudgeQualityWarning, SmallSampleWarning

# Two systems, each with its own randomly labelled items (theta about 0.3 and 0.6).
RANDOM = {
    "n": [1800, 1800],
    "k": [738, 1100],
    "m0": [140, 80],
    "tn": [112, 64],
    "m1": [60, 120],
    "tp": [54, 108],
    "system": ["a", "b"],
}


def random_counts(**over):
    return JudgeCounts.from_counts(**{**RANDOM, **over}, design="random")


def stratified_counts(**over):
    return JudgeCounts.from_counts(**{**RANDOM, **over})


def values(ds, name):
    return ds[name].transpose("system", "stratum", ...).values


def test_default_method_follows_the_design():
    strat = estimate(stratified_counts())
    assert strat.attrs["method"] == "lang-reiczigel"
    assert strat.attrs["method_chosen"] == "design default"
    assert strat.attrs["design"] == "stratified"
    assert strat.attrs["estimand"] == "population"
    rand = estimate(random_counts())
    assert rand.attrs["method"] == "likelihood"
    assert rand.attrs["design"] == "random"
    assert rand.attrs["ci_kind"] == "profile likelihood"
    asked = estimate(random_counts(), method="lang-reiczigel")
    assert asked.attrs["method_chosen"] == "requested"


def test_likelihood_method_equals_the_core_function():
    out = estimate(random_counts(), method="likelihood", alpha=0.1)
    cols = [np.array(RANDOM[v]) for v in ("k", "n", "tn", "m0", "tp", "m1")]
    ref = lik.likelihood_interval(*cols, alpha=0.1)
    np.testing.assert_allclose(values(out, "estimate")[:, 0], ref.estimate, atol=1e-15)
    np.testing.assert_allclose(values(out, "ci")[:, 0, 0], ref.lower, atol=1e-15)
    np.testing.assert_allclose(values(out, "ci")[:, 0, 1], ref.upper, atol=1e-15)
    human = lik.human_only(*cols[2:], alpha=0.1)
    np.testing.assert_allclose(values(out, "human_estimate")[:, 0], human.estimate)
    np.testing.assert_allclose(values(out, "human_ci")[:, 0, 0], human.lower)
    np.testing.assert_allclose(values(out, "human_ci")[:, 0, 1], human.upper)


def test_test_set_estimand():
    out = estimate(random_counts(), estimand="test-set")
    cols = [np.array(RANDOM[v]) for v in ("k", "n", "tn", "m0", "tp", "m1")]
    ref = lik.test_set_interval(*cols)
    np.testing.assert_allclose(values(out, "ci")[:, 0, 0], ref.lower, atol=1e-15)
    np.testing.assert_allclose(values(out, "ci")[:, 0, 1], ref.upper, atol=1e-15)
    assert out.attrs["estimand"] == "test-set"
    assert "test-set" in out.attrs["ci_kind"]
    for method in ("lang-reiczigel", "ppi++", "bootstrap"):
        with pytest.raises(ValueError, match="estimand='test-set' has a closed form only"):
            estimate(random_counts(), method=method, estimand="test-set")
    with pytest.raises(ValueError, match="closed form only for method='likelihood'"):
        estimate(stratified_counts(), estimand="test-set")
    with pytest.raises(ValueError, match="estimand must be one of"):
        estimate(random_counts(), estimand="sample")


def test_likelihood_refuses_stratified_counts_and_shared_calibration():
    with pytest.raises(ValueError, match="needs the random labelling design"):
        estimate(stratified_counts(), method="likelihood")
    with pytest.raises(ValueError, match="needs each group's own labelled items"):
        estimate(random_counts(), method="likelihood", calibration="shared")
    # Without a method, pooled calibration falls back to Lang-Reiczigel and says so.
    pooled = estimate(random_counts(), calibration="shared")
    assert pooled.attrs["method"] == "lang-reiczigel"
    tests = JudgeCounts.from_counts(n=[100, 80], k=[70, 50], system=["a", "b"])
    calib = JudgeCounts.from_counts(m0=40, tn=30, m1=60, tp=54, design="random")
    attached = tests.with_calibration_from(calib)
    with pytest.raises(ValueError, match="calibration_shared_over"):
        estimate(attached, method="likelihood")
    out = estimate(attached)
    assert out.attrs["method"] == "lang-reiczigel"
    # Copies of one set are not a group's own sample: no human-only baseline.
    assert np.isnan(values(out, "human_estimate")).all()


def test_human_baseline_is_nan_for_the_stratified_design():
    out = estimate(stratified_counts())
    assert np.isnan(values(out, "human_estimate")).all()
    assert np.isnan(values(out, "human_ci")).all()
    assert values(out, "human_ci").shape == (2, 1, 2)


def test_bootstrap_takes_the_counts_design():
    counts = random_counts()
    auto = estimate(counts, method="bootstrap", random_seed=5, n_resamples=1000)
    assert auto.attrs["bootstrap_design"] == "random"
    same = estimate(
        counts, method="bootstrap", random_seed=5, n_resamples=1000, bootstrap_design="random"
    )
    np.testing.assert_array_equal(values(auto, "ci"), values(same, "ci"))
    other = estimate(
        counts, method="bootstrap", random_seed=5, n_resamples=1000, bootstrap_design="stratified"
    )
    assert other.attrs["bootstrap_design"] == "stratified"
    assert not np.array_equal(values(auto, "ci"), values(other, "ci"))
    with pytest.raises(ValueError, match="bootstrap_design must be one of"):
        estimate(counts, method="bootstrap", bootstrap_design="cluster")


def test_likelihood_groups_without_labels_or_with_a_free_share():
    counts = random_counts(m0=[0, 3], tn=[0, 3], m1=[0, 1], tp=[0, 0], k=[700, 900])
    with pytest.warns(SmallSampleWarning) as record:
        warnings.simplefilter("ignore", LowJudgeQualityWarning)  # J = 0 for b: tested below
        out = estimate(counts)
    text = " ".join(str(w.message) for w in record)
    assert "No labelled items in system=a/stratum=all" in text
    assert "No labelled item among the items of one verdict in system=b/stratum=all" in text
    est, ci = values(out, "estimate")[:, 0], values(out, "ci")[:, 0]
    assert np.isnan(est).all()
    assert np.isnan(ci[0]).all() and np.isfinite(ci[1]).all()


def test_likelihood_without_unlabelled_items():
    # Every item labelled (n = 0): fine for the likelihood, theta_hat = m1 / (m0 + m1).
    counts = random_counts(n=[0, 0], k=[0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        out = estimate(counts)
    np.testing.assert_allclose(values(out, "estimate")[:, 0], [60 / 200, 120 / 200])
    ts = estimate(counts, estimand="test-set")
    np.testing.assert_allclose(values(ts, "ci")[:, 0, 0], [60 / 200, 120 / 200])
    np.testing.assert_allclose(values(ts, "ci")[:, 0, 1], [60 / 200, 120 / 200])


def test_low_j_warning_for_the_likelihood_says_it_does_not_divide_by_j():
    counts = random_counts(tn=[70, 40], tp=[30, 60])  # q0 = q1 = 0.5: J = 0
    with pytest.warns(LowJudgeQualityWarning, match="The likelihood does not divide by J"):
        out = estimate(counts)
    assert np.isfinite(values(out, "estimate")).all()


def test_interval_clipped_to_a_point_warns():
    # p_hat = 0 with q0_hat = 0.5: Rogan-Gladen (0 + 0.5 - 1) / 0.45 = -1.1, and the whole
    # Lang-Reiczigel interval lies below 0, so it is clipped to [0, 0].
    counts = JudgeCounts.from_counts(n=1000, k=0, m0=100, tn=50, m1=100, tp=95)
    lower, upper = lang_reiczigel_interval(0.0, 0.5, 0.95, 1000, 100, 100)
    assert lower == upper == 0.0  # the premise of the test
    with pytest.warns(SmallSampleWarning, match=r"single point at 0 or 1 in system=.*/stratum"):
        out = estimate(counts, method="lang-reiczigel")
    assert values(out, "ci").ravel().tolist() == [0.0, 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LowJudgeQualityWarning)
        warnings.simplefilter("error", SmallSampleWarning)
        estimate(stratified_counts())  # ordinary intervals: no such warning


def test_pooling_advice_says_to_check_q0_q1_first():
    counts = JudgeCounts.from_counts(
        n=[1000, 1000], k=[400, 500], m0=[100, 0], tn=[70, 0], m1=[100, 0], tp=[90, 0],
        system=["a", "no-cal"],
    )  # fmt: skip
    with pytest.warns(SmallSampleWarning, match=r"calibration='shared'") as record:
        estimate(counts)
    text = " ".join(str(w.message) for w in record)
    assert "q0 and q1 do not differ between the systems" in text
    assert "tests this on the systems' own calibration counts" in text


def test_compare_carries_the_design_and_refuses_likelihood():
    counts = random_counts()
    out = compare(counts, method="delta")
    assert out.attrs["design"] == "random"
    boot = compare(counts, n_resamples=1000, random_seed=1)
    assert boot.attrs["bootstrap_design"] == "random"
    assert compare(stratified_counts(), method="delta").attrs["design"] == "stratified"
    assert compare(counts, method=None, n_resamples=1000, random_seed=1).attrs["method"] == (
        "bootstrap"
    )
    with pytest.raises(ValueError, match="compare has no method 'likelihood'"):
        compare(counts, method="likelihood")
