"""Regressions of session 9's API hunt on the jury closed forms (findings F4 and F7.6).

F4: a declared category with neither labelled items nor any judge's verdict was reported by
Dawid–Skene as θ = 0 with a narrow interval and no warning. F7.6: ``jury_plan`` planned a
constant score (all scores equal) and an empty test set (n = 0) without a word.
"""

import math
import warnings

import numpy as np
import pytest

import bayesjudge as bj
from bayesjudge.categorical_jury_estimate import categorical_jury_estimate
from bayesjudge.core.categorical_jury import (
    categorical_dawid_skene,
    categorical_jury_log_likelihood,
)
from bayesjudge.data import CategoricalJuryCounts
from bayesjudge.data.jury import JuryCounts
from bayesjudge.jury_estimate import jury_plan
from bayesjudge.warnings import SmallSampleWarning

PATTERNS, TEST = ["00", "11", "01"], [50, 40, 10]
LABELLED = [[10, 0, 0], [0, 10, 0]]  # x items all "00", y items all "11"; z: none


def _blind(**kwargs) -> CategoricalJuryCounts:
    """Categories x, y, z: z has no labelled item and no judge ever says z."""
    return CategoricalJuryCounts.from_counts(
        PATTERNS, TEST, labelled=[*LABELLED, [0, 0, 0]], judges=["a", "b"],
        categories=["x", "y", "z"], **kwargs,
    )  # fmt: skip


def _without_z() -> CategoricalJuryCounts:
    return CategoricalJuryCounts.from_counts(
        PATTERNS, TEST, labelled=LABELLED, judges=["a", "b"], categories=["x", "y"]
    )


def _blind_warnings(record) -> list[str]:
    return [
        str(w.message)
        for w in record
        if issubclass(w.category, SmallSampleWarning) and "no judge's verdict" in str(w.message)
    ]


@pytest.mark.parametrize("method", ["dawid-skene", "dawid-skene-bootstrap"])
def test_blind_category_is_nan_with_the_unit_interval_and_warns(method):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ds = bj.estimate(_blind(), method=method, random_seed=1, n_resamples=200)
    (message,) = _blind_warnings(record)
    assert "['z']" in message and "system=all/stratum=all" in message
    assert "estimate is NaN and their interval [0, 1]" in message
    assert "leave them out of categories" in message and "label some items" in message
    assert np.isnan(ds["estimate"].sel(category="z")).all()
    np.testing.assert_array_equal(ds["ci"].sel(category="z").values.ravel(), [0.0, 1.0])
    assert np.isnan(ds["confusion_hat"].sel(truth="z")).all()
    # Reference: the other shares are the fit of the model without z (categories x, y),
    # bj.estimate(_without_z()), whose EM sees the same data; the K-specific smoothing of
    # the Wald interval differs (1/3 vs 1/2 pseudo-item per cell), so only the estimates
    # and the confusion rows are compared. Tolerance: the EM's own tol=1e-10 per step.
    ref = bj.estimate(_without_z())
    np.testing.assert_allclose(
        ds["estimate"].sel(category=["x", "y"]).values.ravel(), [0.6, 0.4], atol=1e-8
    )
    np.testing.assert_allclose(
        ds["estimate"].sel(category=["x", "y"]).values, ref["estimate"].values, atol=1e-8
    )
    np.testing.assert_allclose(
        ds["confusion_hat"].sel(truth=["x", "y"], verdict=["x", "y"]).values,
        ref["confusion_hat"].values,
        atol=1e-6,
    )


def test_the_ems_zero_is_not_the_maximum_likelihood():
    """Why NaN and not 0: θ_z = 0 is the EM's fixed point, not what the data prefer.

    With z explaining the ten "01" items (a says x, b says y), x and y fit their labelled
    items exactly and the log-likelihood is higher than at the EM's answer θ_z = 0.
    """
    pats = np.array([[0, 0], [1, 1], [0, 1]])
    lab = np.array([*LABELLED, [0, 0, 0]])
    fit = categorical_dawid_skene(pats, TEST, lab)
    assert fit.pi[2] == 0.0
    conf = np.zeros((2, 3, 3))
    conf[0] = [[1, 0, 0], [0, 1, 0], [1, 0, 0]]  # judge a: x->x, y->y, z->x
    conf[1] = [[1, 0, 0], [0, 1, 0], [0, 1, 0]]  # judge b: x->x, y->y, z->y
    pi = np.array([0.5, 0.4, 0.1])
    # Independent reference: each test pattern then comes from one category only
    # (P("00") = 0.5, P("11") = 0.4, P("01") = 0.1) and the labelled items have probability 1.
    ref = 50 * math.log(0.5) + 40 * math.log(0.4) + 10 * math.log(0.1)
    value = categorical_jury_log_likelihood(pats, TEST, lab, pi, conf)
    assert value == pytest.approx(ref, abs=1e-9)
    assert value > fit.log_likelihood + 1.0  # -94.33 against -96.01


def test_blind_category_makes_the_score_nan_with_the_range_of_the_scores():
    with pytest.warns(SmallSampleWarning, match="score NaN"):
        ds = categorical_jury_estimate(_blind(), scores={"x": 2, "y": 1, "z": -1})
    assert np.isnan(ds["score"]).all()
    np.testing.assert_array_equal(ds["score_ci"].values.ravel(), [-1.0, 2.0])


def test_only_the_blind_group_and_category_are_touched():
    """s1 has z verdicts and z labelled items (pattern "22"); s0 has neither."""
    test = np.array([[*TEST, 0], [50, 40, 10, 10]])[:, None, :]
    lab = np.array([[[10, 0, 0, 0], [0, 10, 0, 0], [0, 0, 0, 0]],
                    [[10, 0, 0, 0], [0, 10, 0, 0], [0, 0, 0, 5]]])[:, None]  # fmt: skip
    counts = CategoricalJuryCounts.from_counts(
        [*PATTERNS, "22"], test, labelled=lab, judges=["a", "b"], categories=["x", "y", "z"],
        systems=["s0", "s1"],
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ds = bj.estimate(counts)
    (message,) = _blind_warnings(record)
    assert "system=s0" in message and "s1" not in message
    assert np.isnan(ds["estimate"].sel(system="s0", category="z")).all()
    informed = ds["estimate"].sel(system="s1").values.ravel()
    assert np.isfinite(informed).all() and informed[2] > 0.05


def test_a_category_with_verdicts_but_no_labels_is_left_alone():
    """Three judges who say z on some items: z's row is identified by the verdicts."""
    counts = CategoricalJuryCounts.from_counts(
        ["000", "111", "222", "001", "221"], [40, 30, 20, 5, 5],
        labelled=[[10, 0, 0, 1, 0], [0, 10, 0, 0, 0], [0, 0, 0, 0, 0]],
        judges=["a", "b", "c"], categories=["x", "y", "z"],
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ds = bj.estimate(counts)
    assert not _blind_warnings(record)
    assert np.isfinite(ds["estimate"]).all() and ds["estimate"].sel(category="z").item() > 0.1


# ------------------------------------------------------------------------------ F7.6


def _cat_pilot() -> CategoricalJuryCounts:
    return CategoricalJuryCounts.from_counts(
        ["000", "111", "222", "001", "121", "220", "010", "012"],
        test=[120, 60, 150, 30, 20, 25, 15, 10],
        labelled=[[10, 0, 0, 2, 0, 1, 1, 0], [1, 8, 0, 1, 3, 0, 1, 1], [0, 0, 12, 0, 1, 2, 0, 0]],
        judges=["a", "b", "c"], categories=["A", "tie", "B"],
    )  # fmt: skip


def _binary_pilot() -> JuryCounts:
    return JuryCounts.from_counts(
        ["111", "110", "101", "011", "100", "010", "001", "000"],
        test=[300, 40, 35, 30, 20, 25, 30, 200],
        labelled=[[1, 1, 2, 1, 3, 4, 3, 25], [24, 3, 4, 2, 1, 2, 1, 3]],
        judges=["a", "b", "c"],
    )  # fmt: skip


@pytest.mark.parametrize("value", [1, 0.5, -2])
def test_plan_refuses_scores_that_are_all_equal(value):
    with pytest.raises(ValueError, match="scores must not all be equal") as err:
        jury_plan(_cat_pilot(), [30], scores={"A": value, "tie": value, "B": value})
    assert "Σ v θ_k = v for every θ" in str(err.value)
    assert "drop scores=" in str(err.value)


@pytest.mark.parametrize("pilot", [_cat_pilot, _binary_pilot])
@pytest.mark.parametrize("n", [0, -5, 0.5, 2.5, True, float("nan"), float("inf"), "90"])
def test_plan_refuses_an_n_that_is_not_a_whole_number_of_items(pilot, n):
    with pytest.raises(ValueError, match="n must be a whole number of unlabelled test items"):
        jury_plan(pilot(), [30], n=n)


@pytest.mark.parametrize("pilot", [_cat_pilot, _binary_pilot])
def test_plan_still_takes_any_whole_n_of_at_least_one(pilot):
    key = "target_width" if pilot is _cat_pilot else "width"
    one = jury_plan(pilot(), [30], n=1)[key].values
    assert np.isfinite(one).all() and (one > 0).all()
    as_int = jury_plan(pilot(), [30], n=90)[key].values
    np.testing.assert_array_equal(jury_plan(pilot(), [30], n=np.int64(90))[key].values, as_int)
    np.testing.assert_array_equal(jury_plan(pilot(), [30], n=90.0)[key].values, as_int)


def test_a_labelled_category_no_judge_gives_is_not_stuck_at_zero():
    """F4b of the hunt: π_k = 0 is a fixed point of EM, and the vote start put a category
    that has labelled items but no judge's verdict there (θ = (0.6, 0.4, 0), log-likelihood
    −96.009). The maximum is θ = (0.5, 0.4, 0.1): −94.335 (the likelihood at both points from
    categorical_jury_log_likelihood, the confusion at the maximum written out by hand)."""
    from bayesjudge.core import categorical_jury as cj

    pats = np.array([[0, 0], [1, 1], [0, 1]])
    x = [50, 40, 10]
    lab = np.array([[10, 0, 0], [0, 10, 0], [0, 0, 5]])  # 5 labelled z items, all "01"
    fit = cj.categorical_dawid_skene(pats, x, lab)
    np.testing.assert_allclose(fit.pi, [0.5, 0.4, 0.1], atol=1e-6)
    conf = np.zeros((2, 3, 3))
    conf[0] = [[1, 0, 0], [0, 1, 0], [1, 0, 0]]
    conf[1] = [[1, 0, 0], [0, 1, 0], [0, 1, 0]]
    best = cj.categorical_jury_log_likelihood(pats, x, lab, np.array([0.5, 0.4, 0.1]), conf)
    assert fit.log_likelihood == pytest.approx(best, abs=1e-6)
    assert best == pytest.approx(-94.3348392329039, abs=1e-9)  # the call above, this commit
