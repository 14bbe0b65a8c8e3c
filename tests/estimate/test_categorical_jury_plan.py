"""jury_plan on K-category counts: the narrowest jury and split of the labels per budget.

Checked: at K = 2 the plan of ``CategoricalJuryCounts.from_jury_counts(counts)`` is the binary
plan of ``counts`` (widths 1e-9, the same splits and choices) for every allocation; the widths
against the core plan at an independently computed pilot (1e-12); the choices against the
target widths; "optimal" against a brute-force search over every split of a small budget;
the balanced and proportional splits; the refusals.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bayesjudge.core.categorical_jury import categorical_dawid_skene, categorical_dawid_skene_plan
from bayesjudge.data import CategoricalJuryCounts
from bayesjudge.jury_estimate import jury_plan
from bayesjudge.simulate import simulate_categorical_jury, simulate_jury
from bayesjudge.warnings import SmallSampleWarning

CONF = np.array([
    [[0.85, 0.10, 0.05], [0.30, 0.55, 0.15], [0.15, 0.10, 0.75]],
    [[0.80, 0.15, 0.05], [0.25, 0.60, 0.15], [0.10, 0.15, 0.75]],
    [[0.60, 0.20, 0.20], [0.30, 0.40, 0.30], [0.25, 0.20, 0.55]],
])  # fmt: skip
SCORES = {"A": 1, "tie": 0.5, "B": 0}


@pytest.fixture(scope="module")
def counts():
    """Two systems, three judges (the third weak), 400 test and 20 labelled items a category."""
    return simulate_categorical_jury(
        [[0.45, 0.15, 0.40], [0.3, 0.3, 0.4]], CONF, n=400, m=[20, 20, 20],
        system=["s1", "s2"], categories=["A", "tie", "B"], judges=["a", "b", "weak"],
        random_seed=20261128,
    )  # fmt: skip


@pytest.mark.parametrize("allocation", ["optimal", "balanced", "proportional"])
def test_k2_plan_is_the_binary_plan(allocation):
    binary = simulate_jury(
        [0.3, 0.7], [0.8, 0.85, 0.9], [0.7, 0.9, 0.85], n=300, m0=30, m1=30,
        judges=["a", "b", "c"], systems=["s1", "s2"], random_seed=7,
    )  # fmt: skip
    ref = jury_plan(binary, [20, 41, 100], allocation=allocation)
    ours = jury_plan(CategoricalJuryCounts.from_jury_counts(binary), [20, 41, 100],
                     allocation=allocation)  # fmt: skip
    for c in (0, 1):  # θ and 1 - θ have one interval width
        np.testing.assert_allclose(ours["width"].isel(category=c), ref["width"], atol=1e-9)
    np.testing.assert_allclose(ours["sd"].isel(category=1), ref["sd"], atol=1e-9)
    np.testing.assert_array_equal(ours["m"].isel(category=1), ref["m1"])
    np.testing.assert_array_equal(ours["best_jury"], ref["best_jury"])
    np.testing.assert_array_equal(ours["best_single"], ref["best_single"])
    np.testing.assert_allclose(ours["ratio"], ref["ratio"], atol=1e-9)
    np.testing.assert_allclose(ours["theta_hat"].isel(category=1), ref["theta_hat"], atol=1e-9)


def test_widths_are_the_core_plan_at_the_pilot(counts):
    plan = jury_plan(counts, [30, 90], allocation="balanced", scores=SCORES)
    g = counts.sel(system="s2")
    fit = categorical_dawid_skene(
        g.verdicts.astype(int), g.test.values.ravel(), g.labelled.values.reshape(3, -1),
        smoothing=0.5,
    )  # the pilot, computed independently of jury_plan  # fmt: skip
    np.testing.assert_allclose(plan["theta_hat"].sel(system="s2").squeeze(), fit.pi, atol=1e-12)
    splits = [[10, 10, 10], [30, 30, 30]]
    ref = categorical_dawid_skene_plan(
        fit.pi, fit.confusion[[0, 2]], 400, splits, scores=[1, 0.5, 0]
    )
    one = plan.sel(system="s2", jury="a+weak").squeeze()
    np.testing.assert_allclose(one["width"].values, ref.width, rtol=1e-12)
    np.testing.assert_allclose(one["score_width"].values, ref.score_width, rtol=1e-12)
    np.testing.assert_allclose(one["target_width"].values, ref.score_width, rtol=1e-12)
    assert (plan["m"].sel(budget=30) == 10).all()


def test_choices_follow_the_target_width(counts):
    plan = jury_plan(counts, [15, 60, 240])
    assert plan.attrs["target"] == "widest category"
    np.testing.assert_allclose(plan["target_width"], plan["width"].max("category"))
    target = plan["target_width"].values
    for s, r, b in np.ndindex(plan["best_jury"].shape):
        assert plan["jury"].values[np.argmin(target[s, r, :, b])] == plan["best_jury"][s, r, b]
    singles = plan["jury"].values[plan["jury_size"].values == 1]
    assert set(plan["best_single"].values.ravel()) <= set(singles)
    assert ((plan["ratio"] > 0) & (plan["ratio"] <= 1)).all()
    # every split spends its budget and labels at least one item of each category
    assert (plan["m"].sum("category") == plan["budget"]).all() and (plan["m"] >= 1).all()
    with_scores = jury_plan(counts, [15, 60], scores=SCORES)
    assert with_scores.attrs["target"] == "score"
    np.testing.assert_allclose(with_scores["target_width"], with_scores["score_width"])


def test_optimal_is_the_best_of_every_split_of_a_small_budget(counts):
    """Budget 8 over 3 categories: 21 splits with at least one item each, all on the grid."""
    plan = jury_plan(counts, [8], juries=[["a", "b", "weak"]], scores=SCORES)
    pi = plan["theta_hat"].sel(system="s1").squeeze().values
    conf = plan["confusion_hat"].sel(system="s1").squeeze().values
    splits = np.array([s for s in itertools.product(range(1, 7), repeat=3) if sum(s) == 8])
    assert len(splits) == 21
    ref = categorical_dawid_skene_plan(pi, conf, 400, splits, scores=[1, 0.5, 0])
    best = np.argmin(ref.score_width)
    one = plan.sel(system="s1").squeeze()
    assert float(one["score_width"]) == pytest.approx(ref.score_width[best], rel=1e-12)
    np.testing.assert_array_equal(one["m"].values, splits[best])


def test_balanced_and_proportional_splits(counts):
    bal = jury_plan(counts, [30, 31], allocation="balanced")
    np.testing.assert_array_equal(bal["m"].sel(budget=30).values[0, 0, 0], [10, 10, 10])
    assert sorted(bal["m"].sel(budget=31).values[0, 0, 0]) == [10, 10, 11]
    prop = jury_plan(counts, [200], allocation="proportional")
    theta = prop["theta_hat"].values  # (system, stratum, category)
    m = prop["m"].sel(budget=200).values  # (system, stratum, jury, category)
    assert (np.abs(m - 200 * theta[:, :, None, :]) <= 1).all()
    opt = jury_plan(counts, [200])
    # the optimal split is never wider than the proportional one (the grid holds a split
    # within one item of it per category, and widths change little there)
    assert (opt["target_width"] <= prop["target_width"] * 1.001).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"budgets": [2, 30]}, r"at least K = 3 labelled items .*\[2\]"),
        ({"scores": {"A": 1, "tie": 2}}, r"missing \['B'\]"),
        ({"allocation": "even"}, "allocation must be one of"),
    ],
)
def test_refusals(counts, kwargs, match):
    args = {"budgets": [30]} | kwargs
    with pytest.raises(ValueError, match=match):
        jury_plan(counts, **args)


def test_random_design_and_binary_scores_are_refused(counts):
    random = simulate_categorical_jury([0.4, 0.2, 0.4], CONF, n=200, m=60, design="random",
                                       random_seed=1)  # fmt: skip
    with pytest.raises(ValueError, match="allocation='proportional'"):
        jury_plan(random, [30])
    assert jury_plan(random, [30], allocation="proportional")["m"].sum() == 30 * 7
    binary = simulate_jury(0.6, [0.8] * 3, [0.8] * 3, n=100, m0=10, m1=10, random_seed=2)
    with pytest.raises(ValueError, match="scores= values the categories"):
        jury_plan(binary, [20], scores={"a": 1})
    with pytest.raises(TypeError, match="JuryCounts or a CategoricalJuryCounts"):
        jury_plan("counts", [20])


def test_a_group_without_test_items_has_no_plan():
    two = simulate_categorical_jury(
        [[0.45, 0.15, 0.40], [0.3, 0.3, 0.4]], CONF, n=[400, 0], m=[20, 20, 20],
        system=["s1", "s2"], random_seed=1,
    )  # fmt: skip
    with pytest.warns(SmallSampleWarning, match=r"No plan for \(system, stratum\) \[\('s2'"):
        plan = jury_plan(two, [30])
    assert plan["width"].sel(system="s2").isnull().all()
    assert plan["best_jury"].sel(system="s2").item() == ""
    assert np.isnan(plan["ratio"].sel(system="s2").item())
    assert plan["best_jury"].sel(system="s1").item() == "j0+j1+j2"
