"""Tests of the several-judges simulators (issue 17): simulate_jury, simulate_jury_arrays and
jury_pattern_probabilities.

References are computed independently of the simulators' code paths:

* the intercepts and the pattern probabilities under dependence: ``scipy.integrate.quad`` of
  the defining integral over the item effect (not the Gauss–Hermite rule the module uses);
* without dependence: the product of the judges' verdict probabilities, written out;
* the item table: counted again with pandas and compared with the JuryCounts.

Monte Carlo tolerances are 4 MC-SE of the compared quantity (fixed seeds; several quantities
are checked per test, so 4 rather than 3 keeps a false alarm below 1e-3 per test).
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy import integrate, special, stats

from bayesjudge.data.jury import JuryCounts
from bayesjudge.simulate import (
    _jury_intercepts,
    jury_pattern_probabilities,
    simulate_jury,
    simulate_jury_arrays,
)

Q0 = np.array([0.8, 0.7, 0.9])
Q1 = np.array([0.9, 0.8, 0.85])
Z = 4.0  # MC-SE multiples


def _marginal(a, sigma):
    """E[expit(a + σU)], U ~ N(0, 1), by adaptive quadrature."""
    return integrate.quad(
        lambda u: special.expit(a + sigma * u) * stats.norm.pdf(u), -np.inf, np.inf,
        epsabs=1e-14, epsrel=1e-12,
    )[0]  # fmt: skip


def _pattern_quad(pattern, q0, q1, sigma, t):
    """P(pattern | t) under the item-effect law, by quadrature (no missing entries)."""
    a = _jury_intercepts(q1 if t == 1 else q0, sigma)

    def integrand(u):
        right = special.expit(a + sigma * u)  # P(verdict = truth | t, u)
        says1 = right if t == 1 else 1 - right
        return np.prod(np.where(np.asarray(pattern) == 1, says1, 1 - says1)) * stats.norm.pdf(u)

    return integrate.quad(integrand, -np.inf, np.inf, epsabs=1e-14, epsrel=1e-12)[0]


# ------------------------------------------------------------------- the law, exactly


@pytest.mark.parametrize("sigma", [0.5, 1.5, 3.0, 5.0])
def test_intercepts_keep_the_marginal_q(sigma):
    q = np.array([0.55, 0.7, 0.9, 0.99, 0.05])
    a = _jury_intercepts(q, sigma)
    # 5e-8 at σ = 5: the Gauss–Hermite rule's accuracy there (module constant's note).
    tol = 5e-8 if sigma == 5.0 else 1e-10
    np.testing.assert_allclose([_marginal(ai, sigma) for ai in a], q, atol=tol)
    assert np.all(np.abs(a) > np.abs(special.logit(q)))  # the effect flattens the marginal


def test_intercepts_at_the_boundary_and_without_dependence():
    a = _jury_intercepts(np.array([0.0, 1.0, 0.3]), 1.5)
    assert a[0] == -np.inf and a[1] == np.inf
    np.testing.assert_allclose(
        _jury_intercepts(np.array([0.3, 0.8]), 0.0), special.logit([0.3, 0.8])
    )


def test_intercepts_of_a_non_contiguous_array():
    # A transposed (non-contiguous) q once came back with the σ = 0 intercepts: the roots were
    # written into a copy made by reshape (marginal 0.70 instead of 0.80 at σ = 2).
    q = np.array([[0.8, 0.6], [0.7, 0.9]]).T
    assert not q.flags.c_contiguous
    a = _jury_intercepts(q, 2.0)
    np.testing.assert_allclose(a, _jury_intercepts(np.ascontiguousarray(q), 2.0), rtol=0, atol=0)
    np.testing.assert_allclose([[_marginal(v, 2.0) for v in row] for row in a], q, atol=1e-10)


def test_pattern_probabilities_without_dependence_are_products():
    patterns, prob = jury_pattern_probabilities(Q0, Q1)
    assert patterns.tolist() == [list(p) for p in itertools.product((1, 0), repeat=3)]
    says1 = {0: 1 - Q0, 1: Q1}
    for t in (0, 1):
        expected = [np.prod(np.where(np.array(p) == 1, says1[t], 1 - says1[t])) for p in patterns]
        np.testing.assert_allclose(prob[t], expected, rtol=1e-14)


@pytest.mark.parametrize("sigma", [1.5, 3.0])
def test_pattern_probabilities_under_dependence_match_quadrature(sigma):
    patterns, prob = jury_pattern_probabilities(Q0, Q1, dependence=sigma)
    for t in (0, 1):
        expected = [_pattern_quad(p, Q0, Q1, sigma, t) for p in patterns]
        np.testing.assert_allclose(prob[t], expected, atol=1e-10)
    # Marginals: judge j's P(says 1 | t) is 1 - q0 / q1 whatever σ.
    for t, target in ((0, 1 - Q0), (1, Q1)):
        np.testing.assert_allclose(prob[t] @ (patterns == 1), target, atol=1e-10)


@pytest.mark.parametrize("missing", [0.2, 0.6])
def test_pattern_probabilities_with_missing_verdicts(missing):
    patterns, prob = jury_pattern_probabilities(Q0, Q1, dependence=1.0, missing=missing)
    assert len(patterns) == 3**3 - 1 and not (patterns == -1).all(axis=1).any()
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, atol=1e-12)
    # Share missing per judge: μ − μ^J / J (an all-missing item keeps one judge's verdict).
    np.testing.assert_allclose(prob @ (patterns == -1), missing - missing**3 / 3, atol=1e-12)
    # Missing at random: the observed verdicts keep the judges' q's.
    seen = prob @ (patterns >= 0)
    np.testing.assert_allclose((prob[0] @ (patterns == 0)) / seen[0], Q0, atol=1e-10)
    np.testing.assert_allclose((prob[1] @ (patterns == 1)) / seen[1], Q1, atol=1e-10)


def test_agreement_increases_with_dependence():
    agree = []
    for sigma in (0.0, 0.5, 1.0, 2.0, 3.0):
        patterns, prob = jury_pattern_probabilities(Q0, Q1, dependence=sigma)
        same = patterns[:, 0] == patterns[:, 1]
        agree.append(prob[:, same].sum(axis=1))
    assert np.all(np.diff(np.array(agree), axis=0) > 0)


# ------------------------------------------------------------------- item-level draws


def test_marginal_q_preserved_under_dependence_item_by_item():
    m = 40_000
    counts = simulate_jury(0.5, Q0, Q1, n=1, m0=m, m1=m, dependence=1.5, random_seed=11)
    marg = counts.marginal().isel(system=0, stratum=0)
    for name, q, total in (("tn", Q0, "m0"), ("tp", Q1, "m1")):
        share = marg[name].values / marg[total].values
        se = np.sqrt(q * (1 - q) / m)
        assert np.all(np.abs(share - q) < Z * se), (name, share, q)


def test_item_draws_follow_the_pattern_probabilities():
    m = 30_000
    counts = simulate_jury(
        0.5, Q0, Q1, n=1, m0=m, m1=m, dependence=2.0, missing=0.3, random_seed=12
    )
    patterns, prob = jury_pattern_probabilities(Q0, Q1, dependence=2.0, missing=0.3)
    labels = ["".join({1: "1", 0: "0", -1: "-"}[int(v)] for v in row) for row in patterns]
    observed = counts.labelled.isel(system=0, stratum=0).to_pandas().reindex(columns=labels)
    observed = observed.fillna(0).to_numpy()
    for t in (0, 1):
        # Pearson's chi-square over the 26 patterns at the 1e-4 level.
        chi2 = (((observed[t] - m * prob[t]) ** 2) / (m * prob[t])).sum()
        assert chi2 < stats.chi2.ppf(1 - 1e-4, len(labels) - 1), (t, chi2)


def test_pairwise_agreement_increases_with_sigma_item_by_item():
    m = 20_000
    agree = []
    for sigma in (0.0, 1.5):
        counts = simulate_jury(0.5, Q0, Q1, n=1, m0=m, m1=m, dependence=sigma, random_seed=13)
        table = counts.pair_table("j0", "j1", items="labelled").values.reshape(2, 2)
        agree.append(np.trace(table) / table.sum())
    se = np.sqrt(2 * 0.25 / (2 * m))  # at most, per share
    assert agree[1] - agree[0] > Z * se


def test_theta_recovered_and_judged_shares():
    n, theta = 50_000, 0.3
    counts, items = simulate_jury(
        theta, Q0, Q1, n=n, m0=10, m1=10, dependence=1.0, random_seed=14, return_items=True
    )
    test_items = items[items["human"].isna()].drop_duplicates("item")
    assert len(test_items) == n
    se = np.sqrt(theta * (1 - theta) / n)
    assert abs(test_items["truth"].mean() - theta) < Z * se
    # Each judge calls p_j = θ q1 + (1 − θ)(1 − q0) of the test items correct.
    p = theta * Q1 + (1 - theta) * (1 - Q0)
    marg = counts.marginal().isel(system=0, stratum=0)
    assert np.all(np.abs(marg["k"].values / n - p) < Z * np.sqrt(p * (1 - p) / n))


def test_missing_share_and_no_item_without_verdict():
    n, mu = 20_000, 0.5
    counts, items = simulate_jury(0.6, Q0, Q1, n=n, missing=mu, random_seed=15, return_items=True)
    per_item = items.groupby("item").size()
    assert per_item.min() >= 1 and len(per_item) == n
    share = 1 - len(items) / (3 * n)
    expected = mu - mu**3 / 3
    assert abs(share - expected) < Z * np.sqrt(expected * (1 - expected) / (3 * n))
    assert not any(set(p) == {"-"} for p in counts.patterns)


def test_designs():
    strat = simulate_jury(
        [0.4, 0.7], Q0, Q1, n=[100, 150], m0=[20, 30], m1=[25, 35], systems=["a", "b"],
        random_seed=1,
    )  # fmt: skip
    assert strat.design == "stratified"
    assert strat.test.sum("pattern").values.ravel().tolist() == [100, 150]
    assert strat.labelled.sum("pattern").values.reshape(2, 2).tolist() == [[20, 25], [30, 35]]
    rand = simulate_jury(0.7, Q0, Q1, n=5000, m=1000, design="random", random_seed=2)
    assert rand.design == "random"
    assert int(rand.test.sum()) == 4000 and int(rand.labelled.sum()) == 1000
    m1 = int(rand.labelled.sel(truth=1).sum())
    assert abs(m1 / 1000 - 0.7) < Z * np.sqrt(0.7 * 0.3 / 1000)


def test_items_table_counts_to_the_jury_counts_and_ids_are_unique_per_system():
    counts, items = simulate_jury(
        [[0.3, 0.6], [0.5, 0.8]], Q0, Q1, n=80, m0=5, m1=7, systems=["a", "b"],
        strata=["x", "y"], missing=0.2, judges=["gpt", "claude", "llama"], random_seed=3,
        return_items=True,
    )  # fmt: skip
    assert list(items.columns) == [
        "system", "stratum", "item", "judge_name", "verdict", "human", "truth",
    ]  # fmt: skip
    assert not items.duplicated(["system", "item", "judge_name"]).any()
    assert items.groupby("system")["item"].nunique().tolist() == [2 * 92, 2 * 92]
    assert items.groupby(["system", "item"])["stratum"].nunique().max() == 1
    assert set(items["verdict"]) <= {0, 1}
    # Recount: one pattern string per item.
    wide = items.pivot_table(
        index=["system", "stratum", "item"], columns="judge_name", values="verdict"
    ).reindex(columns=["gpt", "claude", "llama"])
    pattern = wide.apply(lambda r: "".join("-" if np.isnan(v) else str(int(v)) for v in r), axis=1)
    human = items.groupby(["system", "stratum", "item"])["human"].first()
    # (JuryCounts.to_frame is not used: the recount must not depend on the container's views.)
    frame = (
        counts.test.to_series().to_frame("test")
        .join(counts.labelled.sel(truth=1, drop=True).to_series().rename("labelled_correct"))
        .join(counts.labelled.sel(truth=0, drop=True).to_series().rename("labelled_incorrect"))
    )  # fmt: skip
    recount = (
        pattern.to_frame("pattern")
        .assign(kind=np.where(human.isna(), "test", np.where(human.fillna(-1) == 1, "one", "zero")))
        .reset_index()
        .groupby(["system", "stratum", "pattern", "kind"])
        .size()
        .unstack("kind", fill_value=0)
    )
    got = frame.loc[recount.index]
    assert (got["test"].values == recount["test"].values).all()
    assert (got["labelled_correct"].values == recount["one"].values).all()
    assert (got["labelled_incorrect"].values == recount["zero"].values).all()
    assert int(frame.to_numpy().sum()) == 4 * 92
    labelled = items[items["human"].notna()]
    assert (labelled["human"] == labelled["truth"]).all()


def test_attrs_hold_the_settings():
    counts = simulate_jury(0.5, Q0, Q1, n=50, dependence=1.5, missing=0.1, random_seed=7)
    attrs = counts.dataset.attrs
    assert attrs["simulated_dependence"] == 1.5 and attrs["simulated_missing"] == 0.1
    assert attrs["simulated_random_seed"] == 7
    settings = json.loads(attrs["simulation"])
    assert settings["random_seed"] == 7 and settings["design"] == "stratified"
    assert settings["q0"] == [[Q0.tolist()]]
    generator = simulate_jury(0.5, Q0, Q1, n=50, random_seed=np.random.default_rng(1))
    assert "simulated_random_seed" not in generator.dataset.attrs
    assert json.loads(generator.dataset.attrs["simulation"])["random_seed"] is None


def test_reproducible_by_seed():
    kwargs = dict(n=200, m0=10, m1=10, dependence=1.0, missing=0.2, return_items=True)
    a, items_a = simulate_jury(0.6, Q0, Q1, random_seed=5, **kwargs)
    b, items_b = simulate_jury(0.6, Q0, Q1, random_seed=5, **kwargs)
    c, _ = simulate_jury(0.6, Q0, Q1, random_seed=6, **kwargs)
    assert a.dataset.identical(b.dataset)
    assert items_a.equals(items_b)
    assert not a.test.equals(c.test)
    x = simulate_jury_arrays(0.6, Q0, Q1, n=200, m0=10, m1=10, size=5, random_seed=5)
    y = simulate_jury_arrays(0.6, Q0, Q1, n=200, m0=10, m1=10, size=5, random_seed=5)
    assert all(np.array_equal(x[k], y[k]) for k in x)


# ------------------------------------------------------------------- pattern-count draws


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_arrays_have_the_law_of_the_items(design):
    reps, n = 4000, 300
    sizes = {"m0": 20, "m1": 30} if design == "stratified" else {"m": 50}
    draws = simulate_jury_arrays(
        0.3, Q0, Q1, n=n, dependence=1.5, missing=0.1, design=design, size=reps,
        random_seed=8, **sizes,
    )  # fmt: skip
    patterns, prob = jury_pattern_probabilities(Q0, Q1, dependence=1.5, missing=0.1)
    assert np.array_equal(draws["patterns"], patterns)
    mix = 0.3 * prob[1] + 0.7 * prob[0]
    n_test = n if design == "stratified" else n - 50
    assert (draws["test"].sum(axis=-1) == n_test).all()
    mean, se = draws["test"].mean(axis=0), draws["test"].std(axis=0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(mean - n_test * mix) < Z * se + 1e-9)
    lab = draws["labelled"].sum(axis=-1)
    if design == "stratified":
        assert (lab == [20, 30]).all()
    else:
        assert (lab.sum(axis=-1) == 50).all()
        assert abs(lab[:, 1].mean() - 15) < Z * np.sqrt(50 * 0.21 / reps)
    # The labelled counts of truth 1 follow P(pattern | 1).
    ones = draws["labelled"][:, 1, :]
    share = ones.sum(axis=0) / ones.sum()
    se = np.sqrt(prob[1] * (1 - prob[1]) / ones.sum())
    assert np.all(np.abs(share - prob[1]) < Z * se + 1e-9)


def test_arrays_build_jury_counts():
    draws = simulate_jury_arrays(0.5, Q0, Q1, n=100, m0=10, m1=10, random_seed=1)
    counts = JuryCounts.from_counts(
        draws["patterns"], draws["test"], draws["labelled"], judges=["a", "b", "c"]
    )
    assert int(counts.test.sum()) == 100 and int(counts.labelled.sum()) == 20


# ------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dependence": -1}, r"dependence must be a number in \[0, 5\]"),
        ({"dependence": 6.0}, r"dependence must be a number in \[0, 5\].*got 6.0"),
        ({"dependence": "high"}, r"dependence must be a number"),
        ({"missing": 1.0}, r"missing must be a number in \[0, 1\)"),
        ({"design": "cluster"}, r"design must be 'stratified'.*got 'cluster'"),
        ({"m": 10}, r"m \(labelled items drawn at random\) applies to design='random'"),
        ({"design": "random"}, r"design='random' needs m"),
        ({"design": "random", "m": 10, "m0": 5}, r"m0 and m1 are random under design='random'"),
        ({"design": "random", "m": 500}, r"m \(labelled items\) must not exceed n"),
        ({"n": 0}, r"n must"),
        ({"m0": -1}, r"m0 must"),
        ({"theta": 1.5}, r"theta must be a proportion"),
        ({"q0": [0.8, 1.2, 0.9]}, r"q0 must be a proportion"),
        ({"q1": [0.8, 0.9]}, r"q1 must have a last axis of 3 entries"),
        ({"judges": ["a", "a", "b"]}, r"judges must be distinct labels"),
        ({"theta": [0.2, 0.3]}, r"do not fit the groups"),
        ({"return_items": "yes"}, r"return_items must be True or False"),
        ({"random_seed": -3}, r"random_seed must be None, a non-negative integer"),
    ],
)
def test_bad_input_names_the_argument(kwargs, match):
    args = {"theta": 0.5, "q0": Q0, "q1": Q1, "n": 100} | kwargs
    with pytest.raises(ValueError, match=match):
        simulate_jury(**args)


def test_bad_input_of_the_array_simulator():
    with pytest.raises(ValueError, match=r"theta must be one number"):
        simulate_jury_arrays([0.5, 0.6], Q0, Q1, n=10)
    with pytest.raises(ValueError, match=r"1-D arrays of one entry per judge"):
        simulate_jury_arrays(0.5, Q0, Q1[:2], n=10)
    with pytest.raises(ValueError, match=r"q0 and q1 need a last axis"):
        simulate_jury(0.5, 0.8, 0.9, n=10)
