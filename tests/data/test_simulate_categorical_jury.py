"""The K-category jury simulator: pattern probabilities and draws (issue 17).

References: a brute-force enumeration (itertools) of every full verdict vector and every set
of lost verdicts, the binary ``jury_pattern_probabilities`` for K = 2, and chi-square
goodness-of-fit tests of the draws against the pattern probabilities. Criterion of every
goodness-of-fit check: ``scipy.stats.chisquare`` p > 1e-3 (fixed seeds; under the law a draw
fails with probability 1e-3), cells with an expected count below 5 pooled; each check is shown
able to fail by the same draws against a wrong confusion (p < 1e-3).
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy import stats

from bayesjudge.data import CategoricalJuryCounts
from bayesjudge.simulate import (
    categorical_jury_pattern_probabilities,
    jury_pattern_probabilities,
    preference_confusion,
    rubric_confusion,
    simulate_categorical_jury,
    simulate_categorical_jury_arrays,
    simulate_categorical_jury_items,
)

PI = np.array([0.4, 0.2, 0.4])
CONFUSION = np.stack(
    [
        preference_confusion(0.8, tie_rate=0.1),
        preference_confusion(0.7, tie_rate=0.15, bias=0.05),
        rubric_confusion(3, 0.8),
    ]
)
P_VALUE = 1e-3


def _brute_force(confusion, missing):
    """P(pattern | truth) by enumerating verdict vectors and lost-verdict sets."""
    confusion = np.asarray(confusion)
    n_judges, k = confusion.shape[0], confusion.shape[-1]
    out: dict[tuple, np.ndarray] = {}
    for full in itertools.product(range(k), repeat=n_judges):
        p_full = np.prod([confusion[j][:, v] for j, v in enumerate(full)], axis=0)
        for lost in itertools.product((False, True), repeat=n_judges):
            p_lost = np.prod([missing if x else 1 - missing for x in lost])
            if all(lost):  # one judge's verdict is kept, each with chance 1 / J
                kept = [(j, p_lost / n_judges) for j in range(n_judges)]
            else:
                kept = [(None, p_lost)]
            for j_kept, weight in kept:
                pattern = tuple(
                    v if (not x or j == j_kept) else -1
                    for j, (v, x) in enumerate(zip(full, lost, strict=True))
                )
                out[pattern] = out.get(pattern, 0) + weight * p_full
    return out


def _chisquare(observed, expected_prob):
    """Chi-square GOF p-value, cells with expected < 5 pooled into one."""
    observed = np.asarray(observed, dtype=float)
    expected = expected_prob / expected_prob.sum() * observed.sum()
    small = expected < 5
    obs = np.append(observed[~small], observed[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp).pvalue


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_pattern_probabilities_equal_brute_force(missing):
    patterns, prob = categorical_jury_pattern_probabilities(CONFUSION, missing=missing)
    reference = {
        k: v for k, v in _brute_force(CONFUSION, missing).items() if missing > 0 or -1 not in k
    }
    assert len(patterns) == len(reference) == (27 if missing == 0 else 63)
    for row, p in zip(patterns.tolist(), prob.T, strict=True):
        np.testing.assert_allclose(p, reference[tuple(row)], rtol=0, atol=1e-12)
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # canonical order: lexicographic by category index, missing last
    keys = [tuple(v if v >= 0 else 3 for v in row) for row in patterns.tolist()]
    assert keys == sorted(keys)


@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_two_categories_equal_the_binary_probabilities(missing):
    q0, q1 = np.array([0.8, 0.9, 0.65]), np.array([0.7, 0.6, 0.95])
    confusion = np.stack([[[a, 1 - a], [1 - b, b]] for a, b in zip(q0, q1, strict=True)])
    patterns, prob = categorical_jury_pattern_probabilities(confusion, missing=missing)
    bin_patterns, bin_prob = jury_pattern_probabilities(q0, q1, missing=missing)
    index = {tuple(r): i for i, r in enumerate(bin_patterns.tolist())}
    order = [index[tuple(r)] for r in patterns.tolist()]
    assert sorted(order) == list(range(len(bin_patterns)))
    np.testing.assert_allclose(prob, bin_prob[:, order], rtol=0, atol=1e-12)


def test_arrays_match_the_pattern_probabilities_by_chi_square():
    patterns, prob = categorical_jury_pattern_probabilities(CONFUSION, missing=0.1)
    draws = simulate_categorical_jury_arrays(
        PI, CONFUSION, n=20_000, m=[4000, 2000, 4000], missing=0.1, random_seed=11
    )
    np.testing.assert_array_equal(draws["patterns"], patterns)
    assert _chisquare(draws["test"], PI @ prob) > P_VALUE
    for t in range(3):
        assert draws["labelled"][t].sum() == [4000, 2000, 4000][t]
        assert _chisquare(draws["labelled"][t], prob[t]) > P_VALUE
    # the same check rejects a wrong confusion (judge 1 more accurate than simulated)
    wrong = CONFUSION.copy()
    wrong[1] = preference_confusion(0.8, tie_rate=0.15, bias=0.05)
    _, wrong_prob = categorical_jury_pattern_probabilities(wrong, missing=0.1)
    assert _chisquare(draws["test"], PI @ wrong_prob) < P_VALUE
    assert _chisquare(draws["labelled"][0], wrong_prob[0]) < P_VALUE


def test_item_draws_match_the_pattern_probabilities_by_chi_square():
    """simulate_categorical_jury (item by item) has the law of the pattern probabilities."""
    patterns, prob = categorical_jury_pattern_probabilities(CONFUSION, missing=0.25)
    counts = simulate_categorical_jury(
        PI, CONFUSION, n=20_000, m=[3000, 3000, 3000], missing=0.25, random_seed=12
    )
    strings = counts.patterns
    full = {p: i for i, p in enumerate(strings)}
    observed_test = np.zeros(len(patterns))
    observed_lab = np.zeros((3, len(patterns)))
    codes = ["".join("-" if v < 0 else str(v) for v in row) for row in patterns.tolist()]
    for i, code in enumerate(codes):
        if code in full:
            observed_test[i] = counts.test.values.ravel()[full[code]]
            observed_lab[:, i] = counts.labelled.values[0, 0, :, full[code]]
    assert observed_test.sum() == 20_000 and set(strings) <= set(codes)
    assert _chisquare(observed_test, PI @ prob) > P_VALUE
    for t in range(3):
        assert _chisquare(observed_lab[t], prob[t]) > P_VALUE
    _, no_missing = categorical_jury_pattern_probabilities(CONFUSION, missing=0.1)
    assert _chisquare(observed_test, PI @ no_missing) < P_VALUE  # wrong missing rate
    wrong = CONFUSION.copy()
    wrong[2] = rubric_confusion(3, 0.5)
    _, wrong_prob = categorical_jury_pattern_probabilities(wrong, missing=0.25)
    assert _chisquare(observed_lab[1], wrong_prob[1]) < P_VALUE


def test_random_design_labelled_truths_follow_pi():
    draws = simulate_categorical_jury_arrays(
        PI, CONFUSION, n=50, m=100, design="random", size=4000, random_seed=13
    )
    rows = draws["labelled"].sum(axis=-1)  # (4000, K) human categories of the 100 labelled
    assert (rows.sum(axis=-1) == 100).all() and (draws["test"].sum(axis=-1) == 50).all()
    # E[rows] = 100 π; the mean of 4000 replications has sd sqrt(100 π (1 − π) / 4000)
    se = np.sqrt(100 * PI * (1 - PI) / 4000)
    assert np.all(np.abs(rows.mean(axis=0) - 100 * PI) < 4 * se)
    counts = simulate_categorical_jury(PI, CONFUSION, n=10, m=9000, design="random", random_seed=14)
    assert counts.design == "random" and int(counts.test.sum()) == 10
    observed = counts.labelled.sum("pattern").values.ravel()
    assert _chisquare(observed, PI) > P_VALUE
    assert _chisquare(observed, np.array([0.3, 0.3, 0.4])) < P_VALUE


def test_groups_labels_seeds_and_items_agree_with_the_counts():
    kwargs = dict(
        n=[[30, 20]], m=[[[3, 2, 3], [1, 1, 1]]], missing=0.2, system=["s"], stratum=["x", "y"],
        categories=["A", "tie", "B"], judges=["gpt", "claude", "llama"], random_seed=5,
    )  # fmt: skip
    counts = simulate_categorical_jury(PI, CONFUSION, **kwargs)
    assert counts.systems == ["s"] and counts.strata == ["x", "y"]
    assert counts.test.sum("pattern").values.tolist() == [[30, 20]]
    assert counts.labelled.sum("pattern").values.tolist() == [[[3, 2, 3], [1, 1, 1]]]
    settings = json.loads(counts.dataset.attrs["simulation"])
    assert settings["random_seed"] == 5 and settings["missing"] == 0.2
    again = simulate_categorical_jury(PI, CONFUSION, **kwargs)
    assert again.dataset.identical(counts.dataset)
    generator = simulate_categorical_jury(
        PI, CONFUSION, **{**kwargs, "random_seed": np.random.default_rng(5)}
    )
    assert generator.dataset["test"].equals(counts.dataset["test"])
    items = simulate_categorical_jury_items(PI, CONFUSION, **kwargs)
    test = items[items.human.isna()].drop(columns="human")
    calib = items[items.human.notna()].assign(item=lambda d: "c" + d["item"].astype(str))
    read = CategoricalJuryCounts.from_frames(
        test, calib, judges="judge_name", item="item", judge="verdict", system="system",
        stratum="stratum", categories=["A", "tie", "B"],
    ).sel(judge=counts.judges)  # fmt: skip
    assert read.patterns == counts.patterns
    np.testing.assert_array_equal(read.test.values, counts.test.values)
    np.testing.assert_array_equal(read.labelled.values, counts.labelled.values)
    assert (items.groupby(["stratum", "item"]).size() >= 1).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"confusion": CONFUSION[0]}, r"\(\.\.\., J, K, K\)"),
        ({"confusion": np.stack([[[0.8, 0.2], [0.3, 0.7]]] * 3)}, "K = 3"),
        ({"confusion": CONFUSION * 1.1}, "sum to 1"),
        ({"confusion": CONFUSION - 0.5}, "probabilities in"),
        ({"pi": [0.5, 0.6, 0.1]}, "sum to 1"),
        ({"m": 10}, "per truth category"),
        ({"missing": 1.0}, r"\[0, 1\)"),
        ({"missing": True}, r"\[0, 1\)"),
        ({"n": -1}, "non-negative"),
        ({"n": 2**60}, "2\\*\\*53"),
        ({"judges": ["a", "b"]}, "J = 3"),
        ({"categories": ["a", "b"]}, "K = 3"),
        ({"n": [10, 20]}, "labels give"),
        ({"random_seed": -1}, "random_seed"),
    ],
)
def test_simulator_refuses_bad_input(kwargs, match):
    args = {"pi": PI, "confusion": CONFUSION, "n": 10, "m": [1, 1, 1], "random_seed": 0}
    with pytest.raises(ValueError, match=match):
        simulate_categorical_jury(**{**args, **kwargs})


def test_pattern_probabilities_refuse_bad_input():
    with pytest.raises(ValueError, match="too many"):
        categorical_jury_pattern_probabilities(np.stack([rubric_confusion(5, 0.5)] * 9))
    with pytest.raises(ValueError, match=r"\(J, K, K\) \(one group\)"):
        categorical_jury_pattern_probabilities(CONFUSION[None])
    with pytest.raises(ValueError, match="one group"):
        simulate_categorical_jury_arrays([PI, PI], CONFUSION, n=5, m=[1, 1, 1])
