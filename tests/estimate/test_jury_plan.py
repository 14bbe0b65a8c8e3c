"""jury_plan: which judge or jury gives the narrowest interval per label budget."""

from __future__ import annotations

import numpy as np
import pytest

from bayesjudge.core.jury import dawid_skene, dawid_skene_plan
from bayesjudge.data.jury import JuryCounts
from bayesjudge.jury_estimate import jury_plan
from bayesjudge.simulate import simulate_jury

Q0 = [0.80, 0.85, 0.90, 0.6]
Q1 = [0.70, 0.90, 0.90, 0.6]


@pytest.fixture(scope="module")
def counts():
    return simulate_jury(
        [0.3, 0.7], Q0, Q1, n=600, m0=40, m1=40, judges=["a", "b", "c", "weak"],
        systems=["s1", "s2"], random_seed=20261128,
    )  # fmt: skip


def test_plan_equals_the_core_plan_at_the_pilot_estimates(counts):
    plan = jury_plan(counts, [20, 100], allocation="balanced")
    g = counts.sel(system="s2")
    v = g.verdicts.astype(int)
    fit = dawid_skene(
        v, g.test.values.ravel(), g.labelled.values.reshape(2, -1), smoothing=0.5
    )  # the pilot, computed independently of jury_plan
    ref = dawid_skene_plan(fit.theta, fit.q0[[0, 2]], fit.q1[[0, 2]], 600, [10, 50], [10, 50])
    got = plan["width"].sel(system="s2", jury="a+c").squeeze().values
    np.testing.assert_allclose(got, ref.width, rtol=1e-12)
    assert (plan["m1"].values == [10, 50]).all()


def test_every_subset_is_planned_and_the_best_is_named(counts):
    plan = jury_plan(counts, [10, 40, 160])
    assert plan.sizes["jury"] == 15 and plan["jury_size"].values.max() == 4
    width = plan["width"].values
    best = plan["best_jury"].values
    for idx in np.ndindex(best.shape):
        s, r, b = idx
        assert plan["jury"].values[np.argmin(width[s, r, :, b])] == best[idx]
    assert (plan["ratio"] <= 1).all() and (plan["ratio"] > 0).all()
    # The full jury beats the best single judge by far on these judges.
    assert float(plan["ratio"].max()) < 0.85
    assert set(plan["best_single"].values.ravel()) <= {"a", "b", "c", "weak"}


def test_optimal_split_is_never_wider_than_balanced(counts):
    opt = jury_plan(counts, [20, 60, 200])
    bal = jury_plan(counts, [20, 60, 200], allocation="balanced")
    assert (opt["width"] <= bal["width"] + 1e-15).all()
    assert ((opt["m1"] > 0) & (opt["m1"] < opt["budget"])).all()


def test_named_juries_max_size_and_n(counts):
    plan = jury_plan(counts, [50], juries=[["a"], ["c", "a"], "b"])
    assert plan["jury"].values.tolist() == ["a", "a+c", "b"]
    small = jury_plan(counts, [50], max_size=2)
    assert small.sizes["jury"] == 4 + 6
    big = jury_plan(counts, [50], n=60_000, juries=[["a", "b", "c"]])
    base = jury_plan(counts, [50], juries=[["a", "b", "c"]])
    assert (big["width"] < base["width"]).all()


def test_random_design_plans_proportional_labels():
    rand = simulate_jury(
        0.3, Q0[:3], Q1[:3], n=400, m=60, design="random", judges=["a", "b", "c"],
        random_seed=3,
    )  # fmt: skip
    with pytest.raises(ValueError, match="allocation='proportional'"):
        jury_plan(rand, [40])
    plan = jury_plan(rand, [40], allocation="proportional")
    theta = float(plan["theta_hat"].squeeze())
    assert float(plan["m1"].isel(jury=0).squeeze()) == np.round(40 * theta)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"budgets": [1]}, "at least 2"),
        ({"budgets": [10**23, 20]}, r"at most 2\*\*53"),
        ({"budgets": [10.5]}, "whole numbers"),
        ({"budgets": ["x"]}, "list of label counts"),
        ({"budgets": [10], "juries": [["nobody"]]}, "distinct judges"),
        ({"budgets": [10], "juries": [["a", "a"]]}, "distinct judges"),
        ({"budgets": [10], "allocation": "greedy"}, "allocation must be"),
        ({"budgets": [10], "max_size": 0}, "max_size must be at least 1"),
    ],
)
def test_bad_requests_are_refused(counts, kwargs, match):
    with pytest.raises(ValueError, match=match):
        jury_plan(counts, **kwargs)


def test_too_many_judges_need_named_juries():
    many = JuryCounts.from_counts(
        ["1" * 11, "0" * 11], [10, 10], judges=[f"j{i}" for i in range(11)]
    )
    with pytest.raises(ValueError, match="name the ones to plan"):
        jury_plan(many, [10])


def test_judge_names_that_make_jury_names_ambiguous_are_refused():
    counts = JuryCounts.from_counts(
        ["111", "000", "110"], [30, 30, 5], labelled=[[0, 10, 1], [10, 0, 1]],
        judges=["a", "b", "a+b"],
    )  # fmt: skip
    with pytest.raises(ValueError, match="contain '\\+', so two juries get the same name"):
        jury_plan(counts, [10])
