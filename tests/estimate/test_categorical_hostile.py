"""Hostile inputs to the K-category path: each test failed before the fix it guards.

Category labels (unordered containers, infinite numbers, invisible look-alikes, ints a float
label would round), ``scores=`` (values that are not numbers, keys matched by value and type,
values large enough to overflow the variance) and the warning of an unlabelled true category.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.categorical_estimate import compare_categorical, estimate_categorical
from bayesjudge.data import CategoricalCounts
from bayesjudge.data.category_labels import category_array
from bayesjudge.warnings import SmallSampleWarning

CATS = ["A", "tie", "B"]
CAL = [[80, 15, 5], [10, 80, 10], [5, 15, 80]]
TWO = CategoricalCounts.from_counts(
    test=[[400, 200, 400], [300, 200, 500]], calibration=CAL, categories=CATS, system=["x", "y"]
)
WIN = {"A": 1.0, "tie": 0.5, "B": 0.0}


# --------------------------------------------------------------------------- category labels


@pytest.mark.parametrize("given", [{"tie", "A", "B"}, frozenset(CATS), dict.fromkeys(CATS, 1)])
def test_categories_must_be_ordered(given):
    # A set's order is the hash order (it changes between runs for text): the count axes
    # would be labelled in an arbitrary order. A dict is usually scores= in the wrong place.
    with pytest.raises(ValueError, match="categories must be an ordered sequence"):
        CategoricalCounts.from_counts([30, 10, 60], CAL, categories=given)
    # a dict's keys keep their order: taken (e.g. categories=scores.keys())
    keys = CategoricalCounts.from_counts([30, 10, 60], CAL, categories=dict.fromkeys(CATS).keys())
    assert keys.categories == CATS


def test_categories_refuse_infinite_numbers():
    with pytest.raises(ValueError, match=r"must not hold infinite numbers; got \[inf\]|infinite"):
        CategoricalCounts.from_counts([30, 10, 60], CAL, categories=[1.0, np.inf, 3.0])


@pytest.mark.parametrize("invisible", ["\u200b", "\u200d", "\u2060", "\ufeff", "\u200e"])
def test_categories_refuse_labels_differing_by_an_invisible_character(invisible):
    with pytest.raises(ValueError, match="print alike"):
        category_array(["tie", "tie" + invisible, "B"])
    # and in a table's label column, where it would split one category in two
    test = pd.DataFrame({"judge": ["tie", "tie" + invisible, "B", "A"]})
    with pytest.raises(ValueError, match="print alike"):
        CategoricalCounts.from_frames(test, human=None)


def test_categories_refuse_big_ints_beside_fractions():
    # Before: a ValueError saying the 'category' labels differ from [9007199254740992.0, 0.5]
    # (the float coordinate had rounded 2**53 + 1), which names neither the cause nor a fix.
    with pytest.raises(ValueError, match=r"beyond 2\*\*53 \(\[9007199254740993\]\).*as text"):
        CategoricalCounts.from_counts([1, 2], [[1, 0], [0, 1]], categories=[2**53 + 1, 0.5])


# -------------------------------------------------------------------------------- scores


@pytest.mark.parametrize(
    ("value", "kind"), [("0.5", "str"), (True, "bool"), (None, "NoneType"), (0.5j, "complex")]
)
def test_score_values_must_be_real_numbers(value, kind):
    # Before: "0.5" and True were silently read as 0.5 and 1; 0.5j raised numpy's message.
    scores = {**WIN, "tie": value}
    with pytest.raises(TypeError, match=rf"scores values must be real numbers; got 'tie'.*{kind}"):
        estimate_categorical(TWO, scores=scores)


def test_score_keys_are_matched_by_value_and_type():
    rubric = CategoricalCounts.from_counts([30, 10, 60], CAL, categories=[1, 2, 3])
    # True == 1 in a dict: before, {True: ...} silently scored the category 1.
    with pytest.raises(ValueError, match=r"missing \[1\], not a category \[True\]"):
        estimate_categorical(rubric, scores={True: 1, 2: 2, 3: 3})
    with pytest.raises(ValueError, match="write the keys as numbers"):
        estimate_categorical(rubric, scores={"1": 1, "2": 2, "3": 3})
    # a whole float names the int category, as a float label column does
    by_float = estimate_categorical(rubric, scores={1.0: 1, 2.0: 2, 3.0: 3})
    by_int = estimate_categorical(rubric, scores={1: 1, 2: 2, 3: 3})
    assert by_float["score"].item() == by_int["score"].item()
    with pytest.raises(ValueError, match="names one category more than once"):
        estimate_categorical(TWO, scores={**WIN, " A": 1.0})


@pytest.mark.parametrize("method", ["delta", "wald", "bootstrap"])
def test_huge_scores_are_the_scaled_small_ones(method):
    # The mean score and its interval are affine in the values (Σ v θ): values 1e300 times
    # larger give 1e300 times the score and interval. Before, the delta variance (v**2)
    # overflowed to inf and the interval was the whole range [0, 1e300].
    big = 1e300
    kwargs = {"method": method, "random_seed": 5, "n_resamples": 1000}
    small = estimate_categorical(TWO, scores=WIN, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        large = estimate_categorical(TWO, scores={c: v * big for c, v in WIN.items()}, **kwargs)
    np.testing.assert_allclose(large["score"] / big, small["score"], rtol=1e-12)
    np.testing.assert_allclose(large["score_ci"] / big, small["score_ci"], rtol=1e-12)
    assert (large["score_ci"].sel(ci_bound="upper") < 0.7 * big).all()  # not the whole range


@pytest.mark.parametrize("method", ["delta", "bootstrap"])
def test_huge_score_differences_are_the_scaled_small_ones(method):
    kwargs = {"method": method, "random_seed": 5, "n_resamples": 1000}
    small = compare_categorical(TWO, scores=WIN, **kwargs)
    # opposite signs near the float maximum: max - min itself overflows
    big = {"A": 1e308, "tie": 0.0, "B": -1e308}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        large = compare_categorical(TWO, scores=big, **kwargs)
    # v_big = 2e308 * (v - 0.5): the difference scales by 2e308 (checked at 1/1e308 scale)
    np.testing.assert_allclose(large["estimate"] / 1e308, 2 * small["estimate"], rtol=1e-12)
    np.testing.assert_allclose(large["ci"] / 1e308, 2 * small["ci"], rtol=1e-12)


def test_one_score_for_every_category_is_that_score():
    out = estimate_categorical(TWO, scores=dict.fromkeys(CATS, 7.25))
    np.testing.assert_allclose(out["score"], 7.25, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out["score_ci"], 7.25, rtol=0, atol=1e-12)


def test_cli_json_with_huge_scores_is_strict_and_narrow(run_cli, tmp_path):
    rng = np.random.default_rng(1)
    truth = rng.choice(CATS, 400)
    verdict = np.where(rng.random(400) < 0.85, truth, rng.choice(CATS, 400))
    pd.DataFrame({"judge": verdict[:300]}).to_csv(tmp_path / "test.csv", index=False)
    pd.DataFrame({"judge": verdict[300:], "human": truth[300:]}).to_csv(
        tmp_path / "cal.csv", index=False
    )
    code, out, err = run_cli([
        "estimate", "--test", str(tmp_path / "test.csv"), "--calibration",
        str(tmp_path / "cal.csv"), "--scores", "A=1e308,tie=0,B=-1e308", "--json",
    ])  # fmt: skip
    assert code == 0, err

    def refuse(token):
        raise AssertionError(f"non-JSON token {token}")

    group = json.loads(out, parse_constant=refuse)["groups"][0]
    assert -1e308 < group["score_lower"] < group["score"] < group["score_upper"] < 1e308


# ----------------------------------------------------------------------------- warnings


def test_unlabelled_truth_warning_names_the_category():
    counts = CategoricalCounts.from_counts(
        [30, 10, 60, 0], [[18, 1, 1, 0], [2, 6, 2, 0], [1, 1, 18, 0], [0, 0, 0, 0]],
        categories=["A", "tie", "B", "never used"],
    )  # fmt: skip
    with pytest.warns(SmallSampleWarning, match=r"\(truth \['never used'\]\)"):
        out = estimate_categorical(counts)
    assert np.isnan(out["estimate"]).all()


def test_look_alike_pair_of_a_pandas_object_column_is_named_once():
    # Before: "'1' (str) and 1 (int); '1' (str) and 1 (int)": found by the grouping and again
    # among the column's typed objects.
    with pytest.raises(ValueError, match="print alike") as caught:
        CategoricalCounts.from_frames(pd.DataFrame({"judge": [1, "1", "B"]}), human=None)
    assert str(caught.value).count("(int)") == 1


def test_to_judge_counts_positive_is_matched_by_value_and_type():
    # Before: positive=1 was refused for the categories [0.0, 1.0] (and 1.0 for [0, 1]),
    # though a whole float names the int category everywhere else (tables, scores=).
    floats = CategoricalCounts.from_counts([30, 70], [[30, 10], [6, 54]], categories=[0.0, 1.0])
    ints = CategoricalCounts.from_counts([30, 70], [[30, 10], [6, 54]], categories=[0, 1])
    expected = {"n": 100, "k": 70, "m0": 40, "tn": 30, "m1": 60, "tp": 54}
    for counts, positive in [(floats, 1), (floats, 1.0), (ints, 1.0), (ints, np.int64(1))]:
        binary = counts.to_judge_counts(positive=positive)
        assert {f: binary[f].item() for f in binary} == expected
    with pytest.raises(ValueError, match="positive=True is not one of the categories"):
        floats.to_judge_counts(positive=True)
    with pytest.raises(ValueError, match="positive='1' is not one of the categories"):
        ints.to_judge_counts(positive="1")


def test_compare_pairs_are_checked():
    # Before: a system paired with itself gave Δ = 0 with the interval [0, 0], and one pair
    # written without its list, ("x", "y"), was "not pairs of the systems ['x', 'y']".
    with pytest.raises(ValueError, match="compare a system with itself"):
        compare_categorical(TWO, scores=WIN, pairs=[("x", "x")])
    with pytest.raises(ValueError, match=r"one pair is written \[\(a, b\)\]"):
        compare_categorical(TWO, scores=WIN, pairs=("x", "y"))
    by_array = compare_categorical(TWO, scores=WIN, pairs=np.array([["y", "x"]]))
    by_list = compare_categorical(TWO, scores=WIN, pairs=[("y", "x")])
    assert by_array["estimate"].item() == by_list["estimate"].item() < 0


def test_an_id_column_taken_for_the_verdicts_is_refused():
    # Before: every distinct value became a category (K = 300 here: a 300 x 300 confusion
    # matrix per group; 50 000 free-text answers would ask for 20 GB) without a word.
    ids = pd.DataFrame({"judge": [f"answer {i}" for i in range(300)]})
    with pytest.raises(ValueError, match=r"300 distinct values \('answer 0'.*name them with"):
        CategoricalCounts.from_frames(ids, human=None)
    labels = [f"answer {i}" for i in range(300)]
    named = CategoricalCounts.from_frames(ids, human=None, categories=labels)
    assert named.K == 300 and int(named.test.sum()) == 300
    rubric = pd.DataFrame({"judge": list(range(101))})  # a 0-100 score is still read
    assert CategoricalCounts.from_frames(rubric, human=None).K == 101


def test_bayesian_fit_matches_score_keys_as_estimate_does():
    # models.categorical matched score keys by str(): the text "1" scored the category 1 and
    # {1: 0, "1": 5} collapsed silently (the later value won). Now bj.fit refuses both, as
    # bj.estimate does, before any sampling.
    counts = CategoricalCounts.from_counts(
        [[30, 20, 50], [20, 30, 50]], [[40, 5, 5], [5, 40, 5], [5, 5, 40]],
        categories=[1, 2, 3], system=["a", "b"],
    )  # fmt: skip
    for scores in ({"1": 1, 2: 2, 3: 3}, {1: 0, "1": 5, 2: 2, 3: 3}):
        with pytest.raises(ValueError, match=r"not a category \['1'\]"):
            bj.fit(counts, scores=scores, draws=100, tune=100, chains=1)
    with pytest.raises(TypeError, match="real numbers"):
        bj.fit(counts, scores={1: "0.5", 2: 2, 3: 3}, draws=100, tune=100, chains=1)


def test_conflicting_verdict_message_has_no_binary_legend_for_categories():
    # data/design.py said "(1 = correct)" of verdicts A and B.
    test = pd.DataFrame({"judge": ["A", "B", "A", "B"], "id": [1, 2, 3, 4]})
    cal = pd.DataFrame({"judge": ["B", "B"], "human": ["A", "A"], "id": [1, 2]})
    with pytest.raises(ValueError, match=r"in the two tables: 1 \(system 'all': calibration B"):
        CategoricalCounts.from_frames(test, cal, item="id")


def test_compare_refuses_separate_calibration_on_one_shared_set():
    # compare_categorical took the one shared set as each system's own, independent set (its
    # error counted twice in Δ); bj.compare refuses that for correct/incorrect counts.
    tests = CategoricalCounts.from_counts(
        [[30, 20, 50], [20, 30, 50]], categories=["A", "tie", "B"], system=["x", "y"]
    )
    labelled = CategoricalCounts.from_counts(
        calibration=[[40, 5, 5], [5, 40, 5], [5, 5, 40]], categories=["A", "tie", "B"]
    )
    counts = tests.with_calibration_from(labelled)
    scores = {"A": 1, "tie": 0.5, "B": 0}
    with pytest.raises(ValueError, match="use calibration='shared'"):
        compare_categorical(counts, scores=scores)
    shared = compare_categorical(counts, scores=scores, calibration="shared")
    assert np.isfinite(shared["estimate"]).all()
