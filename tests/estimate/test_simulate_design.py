"""The random labelling design in ``bayesjudge.simulate`` (issue 15).

The generator must draw from the full likelihood of the random design
(``docs/labelling-design.md``)::

    k ~ Bin(n, p),  m1 ~ Bin(m, theta),  tn | m0 ~ Bin(m0, q0),  tp | m1 ~ Bin(m1, q1),

and the test-set accuracy (m1 + T_u) / (n + m) must be the share truly correct among n + m
items that are each truly correct with probability theta, so that (n + m) * theta_test is
exactly Bin(n + m, theta) and T_u has the joint law with k of an item-level simulation.
Tolerances are Monte Carlo ones (z-scores within 4, goodness-of-fit p-values above 1e-3) at a
fixed seed.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayesjudge.data import JudgeCounts
from bayesjudge.simulate import simulate_count_arrays, simulate_counts, simulate_labelled_table

THETA, Q0, Q1 = 0.3, 0.8, 0.9
N_UNLABELLED, LABELLED = 60, 40
P = THETA * Q1 + (1 - THETA) * (1 - Q0)
REPS = 40_000


@pytest.fixture(scope="module")
def draws():
    return simulate_count_arrays(
        THETA, Q0, Q1, N_UNLABELLED, m=LABELLED, design="random", test_set=True,
        size=(REPS,), random_seed=20_251_127,
    )  # fmt: skip


def _gof_pvalue(values, pmf, min_expected=5.0):
    """Chi-square goodness-of-fit p-value of integer ``values`` against ``pmf`` on 0..len-1.

    Neighbouring cells are merged until each expects at least ``min_expected`` draws.
    """
    observed = np.bincount(values, minlength=pmf.size).astype(float)
    expected = pmf * values.size
    obs_cells, exp_cells, o, e = [], [], 0.0, 0.0
    for ob, ex in zip(observed, expected, strict=True):
        o, e = o + ob, e + ex
        if e >= min_expected:
            obs_cells.append(o)
            exp_cells.append(e)
            o, e = 0.0, 0.0
    obs_cells[-1] += o
    exp_cells[-1] += e
    exp_cells = np.array(exp_cells) * sum(obs_cells) / sum(exp_cells)
    return stats.chisquare(obs_cells, exp_cells).pvalue


def _z(values, mean):
    values = np.asarray(values, dtype=float)
    return (values.mean() - mean) / (values.std(ddof=1) / np.sqrt(values.size))


def test_sizes_are_fixed_and_each_item_counted_once(draws):
    assert (draws["n"] == N_UNLABELLED).all()
    assert (draws["m0"] + draws["m1"] == LABELLED).all()
    assert ((draws["tn"] <= draws["m0"]) & (draws["tp"] <= draws["m1"])).all()
    assert ((draws["k"] >= 0) & (draws["k"] <= N_UNLABELLED)).all()


def test_marginals_follow_the_full_likelihood(draws):
    # k ~ Bin(n, p) and m1 ~ Bin(m, theta): exact pmfs (scipy), chi-square goodness of fit.
    assert _gof_pvalue(draws["k"], stats.binom.pmf(np.arange(61), 60, P)) > 1e-3
    assert _gof_pvalue(draws["m1"], stats.binom.pmf(np.arange(41), 40, THETA)) > 1e-3
    # Means within Monte Carlo error: E m1 = L theta, E k = n p.
    assert abs(_z(draws["m1"], LABELLED * THETA)) < 4
    assert abs(_z(draws["k"], N_UNLABELLED * P)) < 4


def test_agreement_counts_are_binomial_given_the_truth_counts(draws):
    # tp | m1 ~ Bin(m1, q1), tn | m0 ~ Bin(m0, q0): the residuals tp - q1 m1 have mean 0 and
    # variance E[m1] q1 (1 - q1); a z-score on their sum.
    for agree, size, q in (("tp", "m1", Q1), ("tn", "m0", Q0)):
        residual = draws[agree] - q * draws[size]
        se = np.sqrt((draws[size] * q * (1 - q)).sum())
        assert abs(residual.sum() / se) < 4, agree
        # And the variance law: Var(residual) = E[size] q (1 - q).
        expected_var = draws[size].mean() * q * (1 - q)
        assert residual.var(ddof=1) == pytest.approx(expected_var, rel=0.03)
    # Given m1 the agreement counts do not depend on k: k and m1 uncorrelated.
    assert abs(np.corrcoef(draws["k"], draws["m1"])[0, 1]) < 4 / np.sqrt(REPS)


def test_test_set_accuracy_is_the_share_of_all_items(draws):
    items = N_UNLABELLED + LABELLED
    correct = np.round(draws["theta_test"] * items).astype(int)
    np.testing.assert_allclose(correct / items, draws["theta_test"], atol=1e-12)
    # Every one of the n + m items is truly correct with probability theta, independently:
    # the number truly correct is Bin(n + m, theta) exactly.
    assert _gof_pvalue(correct, stats.binom.pmf(np.arange(items + 1), items, THETA)) > 1e-3
    unlabelled = correct - draws["m1"]
    assert ((unlabelled >= 0) & (unlabelled <= N_UNLABELLED)).all()
    # Cov(T_u, k) = n (P(true, judged correct) - theta p) = n theta (q1 - p).
    centred = (unlabelled - unlabelled.mean()) * (draws["k"] - draws["k"].mean())
    expected = N_UNLABELLED * THETA * (Q1 - P)
    assert abs(_z(centred * REPS / (REPS - 1), expected)) < 4


def _item_level(rng, reps):
    """Independent reference: judge n + m items, label a random subset of m of them."""
    items = N_UNLABELLED + LABELLED
    truth = rng.random((reps, items)) < THETA
    verdict = np.where(truth, rng.random((reps, items)) < Q1, rng.random((reps, items)) >= Q0)
    order = rng.permuted(np.tile(np.arange(items), (reps, 1)), axis=1)
    labelled = np.zeros((reps, items), dtype=bool)
    np.put_along_axis(labelled, order[:, :LABELLED], True, axis=1)
    k = (verdict & ~labelled).sum(axis=1)
    unlabelled_correct = (truth & ~labelled).sum(axis=1)
    return k, unlabelled_correct


def test_joint_law_of_k_and_the_unlabelled_truth_matches_an_item_level_simulation(draws):
    k_ref, t_ref = _item_level(np.random.default_rng(7), REPS)
    t_sim = np.round(draws["theta_test"] * (N_UNLABELLED + LABELLED)).astype(int) - draws["m1"]
    # Two-sample chi-square on the joint cells of (k, T_u), binned into 5 x 5 quantile cells.
    k_edges = np.quantile(np.concatenate([k_ref, draws["k"]]), [0.2, 0.4, 0.6, 0.8])
    t_edges = np.quantile(np.concatenate([t_ref, t_sim]), [0.2, 0.4, 0.6, 0.8])

    def cells(k, t):
        index = np.searchsorted(k_edges, k, side="right") * 5
        return np.bincount(index + np.searchsorted(t_edges, t, side="right"), minlength=25)

    table = np.stack([cells(k_ref, t_ref), cells(draws["k"], t_sim)])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_stratified_test_set_accuracy_is_the_share_of_the_test_items():
    out = simulate_count_arrays(
        THETA, Q0, Q1, 50, 20, 20, test_set=True, size=(20_000,), random_seed=3
    )
    correct = np.round(out["theta_test"] * 50).astype(int)
    assert _gof_pvalue(correct, stats.binom.pmf(np.arange(51), 50, THETA)) > 1e-3
    assert (out["m0"] == 20).all() and (out["m1"] == 20).all()


def test_same_draws_as_random_calibration_and_test_set_draws_come_last():
    args = (THETA, Q0, Q1, 1800)
    legacy = simulate_count_arrays(*args, calibration="random", m=200, size=(50,), random_seed=5)
    design = simulate_count_arrays(*args, m=200, design="random", size=(50,), random_seed=5)
    with_truth = simulate_count_arrays(
        *args, m=200, design="random", test_set=True, size=(50,), random_seed=5
    )
    for key in ("n", "k", "m0", "tn", "m1", "tp"):
        np.testing.assert_array_equal(legacy[key], design[key])
        np.testing.assert_array_equal(design[key], with_truth[key])
    assert "theta_test" not in design


def test_simulate_counts_declares_the_design_and_returns_the_test_set_truth():
    counts, truth = simulate_counts(
        [[0.2, 0.5], [0.6, 0.9]], Q0, Q1, n=300, m=100, design="random", test_set=True,
        system=["a", "b"], stratum=["x", "y"], random_seed=9,
    )  # fmt: skip
    assert isinstance(counts, JudgeCounts) and counts.design == "random"
    assert truth.dims == counts.n.dims and truth.shape == (2, 2)
    assert list(truth["system"].values) == ["a", "b"]
    np.testing.assert_allclose(truth * 400, np.round(truth * 400), atol=1e-9)
    # The counts equal the arrays drawn with the same seed.
    again = simulate_count_arrays(
        [[0.2, 0.5], [0.6, 0.9]], Q0, Q1, 300, m=100, design="random", test_set=True,
        size=(2, 2), random_seed=9,
    )  # fmt: skip
    np.testing.assert_array_equal(counts.m1.values, again["m1"])
    np.testing.assert_allclose(truth.values, again["theta_test"])
    # Without design= the counts keep the stratified declaration (backward compatible).
    legacy = simulate_counts(0.5, Q0, Q1, 100, calibration="random", m=50, random_seed=1)
    assert legacy.design == "stratified"
    assert simulate_counts(0.5, Q0, Q1, 100, 10, 10, random_seed=1).design == "stratified"
    declared = simulate_counts(0.5, Q0, Q1, 100, 10, 10, design="stratified", random_seed=1)
    assert declared.design == "stratified"


def test_seeded_and_reproducible():
    a = simulate_counts(0.4, Q0, Q1, 500, m=100, design="random", random_seed=11)
    b = simulate_counts(0.4, Q0, Q1, 500, m=100, design="random", random_seed=11)
    c = simulate_counts(0.4, Q0, Q1, 500, m=100, design="random", random_seed=12)
    assert a.dataset.equals(b.dataset)
    assert not a.dataset.equals(c.dataset)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"design": "random", "calibration": "stratified", "m0": 10, "m1": 10},
         r"design='random'.*calibration='stratified'.*from_counts"),
        ({"design": "random", "m": 20, "theta_calibration": 0.2}, r"theta_calibration"),
        ({"design": "Random", "m": 20}, r"design must be None, 'stratified' or 'random'.*Random"),
        ({"design": "random", "m0": 10, "m1": 10}, r"needs m, the labelled items.*m0=10"),
        ({"design": "random"}, r"needs m.*got m=None"),
        ({"design": "random", "m": -1}, r"\bm\b"),
        ({"design": "random", "m": 20, "test_set": "yes"}, r"test_set must be True or False"),
    ],
)  # fmt: skip
def test_bad_design_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate_counts(0.5, Q0, Q1, 100, random_seed=1, **kwargs)


def test_edge_probabilities_and_empty_groups():
    # theta = 0: nobody is correct; theta = 1 with a perfect judge: everyone; n = 0 is fine.
    zero = simulate_count_arrays(0.0, Q0, Q1, 30, m=10, design="random", test_set=True,
                                 size=(5,), random_seed=1)  # fmt: skip
    assert (zero["theta_test"] == 0).all() and (zero["m1"] == 0).all()
    one = simulate_count_arrays(1.0, 1.0, 1.0, 30, m=10, design="random", test_set=True,
                                size=(5,), random_seed=1)  # fmt: skip
    assert (one["theta_test"] == 1).all() and (one["k"] == 30).all()
    only_labelled = simulate_count_arrays(0.5, Q0, Q1, 0, m=10, design="random", test_set=True,
                                          size=(5,), random_seed=1)  # fmt: skip
    np.testing.assert_allclose(only_labelled["theta_test"], only_labelled["m1"] / 10)
    empty = simulate_count_arrays(0.5, Q0, Q1, 0, 5, 5, test_set=True, random_seed=1)
    assert np.isnan(empty["theta_test"])


def test_labelled_table_labels_a_random_subset_of_the_judged_items():
    groups = [f"s{g}" for g in range(3000)]
    table = simulate_labelled_table(THETA, Q0, Q1, n=20, m=10, system=groups, random_seed=4)
    assert len(table) == 3000 * 30
    labelled = table["human"].notna()
    assert (labelled.groupby(table["system"]).sum() == 10).all()
    assert (table.loc[labelled, "human"] == table.loc[labelled, "truth"]).all()
    # Chosen without looking at the truth or the item's position: m1 ~ Bin(10, theta) per
    # group, and every position is labelled with probability 10 / 30.
    m1 = table.loc[labelled].groupby("system")["truth"].sum().to_numpy()
    assert _gof_pvalue(m1, stats.binom.pmf(np.arange(11), 10, THETA)) > 1e-3
    by_position = labelled.groupby(table["item"]).mean()
    se = np.sqrt((1 / 3) * (2 / 3) / 3000)
    assert (np.abs(by_position - 1 / 3) < 4 * se).all()
    # The verdicts follow the judge: P(judge = 1) = p over all judged items.
    assert abs(_z(table["judge"], P)) < 4


def test_labelled_table_counts_as_the_random_design():
    groups = [f"s{g}" for g in range(2000)]
    table = simulate_labelled_table(THETA, Q0, Q1, n=20, m=10, system=groups, random_seed=5)
    counts = JudgeCounts.from_frames(table, system="system")
    assert counts.design == "random"
    assert (counts.n.values == 20).all() and ((counts.m0 + counts.m1).values == 10).all()
    k = counts.k.values.ravel()
    assert _gof_pvalue(k, stats.binom.pmf(np.arange(21), 20, P)) > 1e-3
    residual = (counts.tp - Q1 * counts.m1).values
    assert abs(residual.sum() / np.sqrt((counts.m1.values * Q1 * (1 - Q1)).sum())) < 4


def test_labelled_table_seeded_and_checked():
    a = simulate_labelled_table(0.5, Q0, Q1, n=30, m=5, random_seed=8)
    b = simulate_labelled_table(0.5, Q0, Q1, n=30, m=5, random_seed=8)
    assert a.equals(b) and list(a.columns) == ["item", "truth", "judge", "human"]
    with pytest.raises(ValueError, match=r"\bm\b"):
        simulate_labelled_table(0.5, Q0, Q1, n=30, m=-1, random_seed=8)
