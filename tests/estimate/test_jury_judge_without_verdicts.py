"""A judge without any verdict is left out of the Dawid–Skene fit and the plan, by name.

Regression for huntcli findings 8 and 2b (session 2026-11-28 c): a K-category judge with no
verdict voided the whole jury (estimate NaN, nothing planned), and ``jury_plan(n=10**20)``
raised a TypeError instead of refusing n above 2**53.
"""

from __future__ import annotations

import numpy as np
import pytest

from bayesjudge.categorical_jury_estimate import categorical_jury_estimate
from bayesjudge.core.categorical_jury import categorical_dawid_skene
from bayesjudge.data import CategoricalJuryCounts
from bayesjudge.jury_estimate import jury_plan
from bayesjudge.simulate import simulate_categorical_jury
from bayesjudge.warnings import SmallSampleWarning

CONF = np.array([
    [[0.80, 0.15, 0.05], [0.25, 0.60, 0.15], [0.10, 0.15, 0.75]],
    [[0.70, 0.20, 0.10], [0.20, 0.65, 0.15], [0.05, 0.25, 0.70]],
])  # fmt: skip
CATS = ["A", "tie", "B"]


@pytest.fixture(scope="module")
def pair():
    """Judges a, b: 300 test and 15 labelled items a category (stratified)."""
    return simulate_categorical_jury(
        [0.4, 0.2, 0.4], CONF, n=300, m=[15, 15, 15], categories=CATS, judges=["a", "b"],
        random_seed=20261128,
    )  # fmt: skip


@pytest.fixture(scope="module")
def with_silent_judge(pair):
    """The same items with a third judge c who gave no verdict at all (pattern "xy-")."""
    return CategoricalJuryCounts.from_counts(
        [p + "-" for p in pair.patterns], pair.test.values.ravel(),
        pair.labelled.transpose("truth", ...).values.reshape(3, -1), judges=["a", "b", "c"],
        categories=CATS,
    )  # fmt: skip


def test_estimate_is_the_other_judges_estimate(pair, with_silent_judge):
    with pytest.warns(SmallSampleWarning, match=r"judge\(s\) \['c'\] gave no verdict"):
        got = categorical_jury_estimate(with_silent_judge)
    ref = categorical_jury_estimate(pair)
    np.testing.assert_allclose(got["estimate"].values, ref["estimate"].values, rtol=1e-12)
    np.testing.assert_allclose(got["ci"].values, ref["ci"].values, rtol=1e-12)
    # and against the core EM on the pair's own patterns (an independent path)
    fit = categorical_dawid_skene(
        pair.verdicts, pair.test.values.ravel(),
        pair.labelled.transpose("truth", ...).values.reshape(3, -1),
    )  # fmt: skip
    np.testing.assert_allclose(got["estimate"].values.ravel(), fit.pi, rtol=1e-8)
    conf = got["confusion_hat"].squeeze()
    assert np.isnan(conf.sel(judge="c")).all() and np.isfinite(conf.sel(judge="a")).all()


def test_per_judge_warning_names_the_judge(with_silent_judge):
    with pytest.warns(SmallSampleWarning, match=r"Judge 'c' alone: No test items"):
        categorical_jury_estimate(with_silent_judge, method="per-judge")


def test_plan_leaves_out_the_juries_with_the_silent_judge(pair, with_silent_judge):
    with pytest.warns(SmallSampleWarning, match=r"Judge\(s\) \['c'\] gave no verdict"):
        got = jury_plan(with_silent_judge, [30, 90])
    ref = jury_plan(pair, [30, 90])
    for jury in ("a", "b", "a+b"):
        np.testing.assert_allclose(
            got["width"].sel(jury=jury).values, ref["width"].sel(jury=jury).values, rtol=1e-12
        )
    for jury in ("c", "a+c", "b+c", "a+b+c"):
        assert np.isnan(got["width"].sel(jury=jury).values).all()


@pytest.mark.parametrize("n", [10**20, 2**64 + 1, 2**53 + 1, 1e20])
def test_plan_refuses_test_items_above_two_to_the_53(pair, n):
    with pytest.raises(ValueError, match=r"n must be at most 2\*\*53.*--plan-items"):
        jury_plan(pair, [30], n=n)


def test_plan_for_a_huge_test_set_is_bounded_by_the_labels(pair):
    """At n = 10^15 a single judge's width stays that of its labels (it was 1 before)."""
    plan = jury_plan(pair, [30], n=10**15)
    single = plan["width"].sel(jury="a").values
    assert np.isfinite(single).all() and (single < 0.9).all()
    assert (plan["width"].sel(jury="a+b").values < single).all()


@pytest.fixture(scope="module")
def fifteen():
    """K = 15 categories, three judges right 70 % of the time, 400 test and 45 labelled items."""
    k = 15
    conf = np.full((3, k, k), 0.3 / (k - 1)) + np.eye(k) * (0.7 - 0.3 / (k - 1))
    return simulate_categorical_jury(
        np.full(k, 1 / k), conf, n=400, m=[3] * k, judges=["a", "b", "c"], random_seed=3
    )


def test_plan_refuses_a_jury_with_too_many_parameters(fifteen):
    """(K − 1)(1 + J·K) = 14 · 46 = 644 > 600: refused up front, with the way out named."""
    with pytest.raises(ValueError, match=r"= 644 parameters, above the limit of 600.*max_size="):
        jury_plan(fifteen, [60])


def test_plan_refuses_a_count_beyond_any_float(pair):
    """10**400 overflows float: still the 2**53 message, not an OverflowError."""
    with pytest.raises(ValueError, match=r"n must be at most 2\*\*53"):
        jury_plan(pair, [30], n=10**400)
