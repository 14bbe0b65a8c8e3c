"""Tests of the seeded simulator of the misclassification model."""

import numpy as np
import pytest

from bayesjudge.simulate import demo_design, simulate_counts


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
