"""Jury containers refuse what they used to guess (huntapi findings F3, F7.1, F7.5).

- F3: ``from_counts`` of :class:`JuryCounts` and :class:`CategoricalJuryCounts` added up a
  repeated verdict pattern silently (a row pasted twice, two exports one after the other);
  it is refused now, as repeated judge and system labels are. Merging stays where patterns
  become alike by design: a judge selection (``sel``), a wrapped Dataset, and the item
  readers (``from_frames``), which count items per pattern.
- F7.1: the label check wrote "judgess" and "Give each judges one label".
- F7.5: a pattern of the wrong length was reported without the number of judges or the
  pattern.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayesjudge.data import CategoricalJuryCounts, JudgeCounts
from bayesjudge.data import jury as jury_module
from bayesjudge.data.jury import JuryCounts

CATS = ["x", "y", "z"]


# ------------------------------------------------------------------ F3: repeated patterns


def test_jury_from_counts_refuses_a_repeated_pattern_and_names_it():
    # The reproduction of F3: "11" twice used to come back as one pattern with 3 + 4 = 7 items.
    with pytest.raises(ValueError, match=r"repeated pattern\(s\) '11' \(positions 0, 1\)"):
        JuryCounts.from_counts(["11", "11"], [3, 4], judges=["a", "b"])
    with pytest.raises(ValueError, match=r"Give each pattern once, with its counts added up"):
        JuryCounts.from_counts(["11", "10", "11"], [3, 1, 4], judges=["a", "b"])


def test_jury_from_counts_refuses_repeats_given_as_a_matrix_and_in_labelled_rows_only():
    matrix = np.array([[1, 0], [0, -1], [1, 0]])
    with pytest.raises(ValueError, match=r"'10' \(positions 0, 2\)"):
        JuryCounts.from_counts(matrix, [1, 2, 3], judges=["a", "b"])
    # No test item at all: the repeat is in the labelled rows and still refused.
    with pytest.raises(ValueError, match=r"'0-' \(positions 0, 1\)"):
        JuryCounts.from_counts(["0-", "0-"], [0, 0], labelled=[[1, 2], [0, 0]], judges=["a", "b"])


def test_jury_from_counts_names_every_repeated_pattern():
    patterns = ["11", "10", "11", "00", "10", "11"]
    with pytest.raises(ValueError) as info:
        JuryCounts.from_counts(patterns, [1] * 6, judges=["a", "b"])
    text = str(info.value)
    assert "'11' (positions 0, 2, 5)" in text and "'10' (positions 1, 4)" in text
    assert "'00'" not in text  # given once: not a repeat


def test_categorical_from_counts_refuses_a_repeated_pattern_and_names_it():
    # The reproduction of F3: "01" twice came back as [7] test, [[1], [2]] labelled.
    with pytest.raises(ValueError, match=r"repeated pattern\(s\) '01' \(positions 0, 1\)"):
        CategoricalJuryCounts.from_counts(
            ["01", "01"],
            [3, 4],
            labelled=[[1, 0], [0, 2]],
            judges=["a", "b"],
            categories=["x", "y"],
        )
    with pytest.raises(ValueError, match=r"'2-' \(positions 0, 2\)"):
        CategoricalJuryCounts.from_counts(
            np.array([[2, -1], [0, 0], [2, -1]]), [1, 2, 3], judges=["a", "b"], categories=CATS
        )


def test_counts_added_up_by_hand_give_the_pattern_once():
    # The way out the message names: one row per pattern with its counts added up.
    binary = JuryCounts.from_counts(
        ["11", "10"], [3 + 4, 1], labelled=[[0, 1], [2 + 5, 0]], judges=["a", "b"]
    )
    assert binary.patterns == ["11", "10"]
    assert binary.test.values.ravel().tolist() == [7, 1]
    assert binary.labelled.values.reshape(2, -1).tolist() == [[0, 1], [7, 0]]
    cat = CategoricalJuryCounts.from_counts(
        ["01"], [7], labelled=[[1], [2]], judges=["a", "b"], categories=["x", "y"]
    )
    assert cat.test.values.ravel().tolist() == [7]
    assert cat.labelled.values.reshape(2, -1).tolist() == [[1], [2]]


def test_patterns_made_alike_by_a_selection_or_a_recoding_are_still_merged():
    counts = JuryCounts.from_counts(["111", "110", "011"], [5, 6, 7], judges=["a", "b", "c"])
    # Judges a and b: "111" and "110" both become "11" (5 + 6), "011" becomes "01".
    two = counts.sel(judge=["a", "b"])
    assert dict(zip(two.patterns, two.test.values.ravel().tolist(), strict=True)) == {
        "11": 11,
        "01": 7,
    }
    cat = CategoricalJuryCounts.from_counts(
        ["01", "02", "12"], [3, 4, 5], judges=["a", "b"], categories=CATS
    )
    # Judge a alone: "01" and "02" both become "0" (3 + 4), "12" becomes "1".
    one = cat.sel(judge="a")
    assert dict(zip(one.patterns, one.test.values.ravel().tolist(), strict=True)) == {
        "0": 7,
        "1": 5,
    }
    # A wrapped Dataset with a repeated verdict row keeps being canonicalised (merged).
    ds = xr.Dataset(
        {
            "test": (("system", "stratum", "pattern"), np.array([[[3, 4]]])),
            "labelled": (("system", "stratum", "truth", "pattern"), np.zeros((1, 1, 2, 2), int)),
        },
        coords={
            "system": ["all"],
            "stratum": ["all"],
            "judge": ["a", "b"],
            "truth": [0, 1],
            "verdict": (("pattern", "judge"), np.array([[1, 1], [1, 1]], dtype=np.int8)),
        },
    )
    assert JuryCounts(ds).test.values.ravel().tolist() == [7]


def test_from_frames_counts_items_with_one_pattern_into_one_row():
    # Three items share the pattern "10"; the reader counts them, nothing is refused.
    frame = pd.DataFrame(
        {
            "item": np.repeat(["i1", "i2", "i3", "i4"], 2),
            "grader": ["a", "b"] * 4,
            "verdict": [1, 0, 1, 0, 1, 0, 0, 0],
        }
    )
    counts = JuryCounts.from_frames(frame, judges="grader", item="item", judge="verdict")
    assert dict(zip(counts.patterns, counts.test.values.ravel().tolist(), strict=True)) == {
        "10": 3,
        "00": 1,
    }
    frame["verdict"] = ["x", "y", "x", "y", "x", "y", "y", "y"]
    cat = CategoricalJuryCounts.from_frames(
        frame, judges="grader", item="item", judge="verdict", categories=["x", "y"]
    )
    assert dict(zip(cat.patterns, cat.test.values.ravel().tolist(), strict=True)) == {
        "01": 3,
        "11": 1,
    }


# ------------------------------------------------------------------ F7.5: pattern lengths


@pytest.mark.parametrize(
    ("patterns", "lengths", "wrong"),
    [
        (["000", "11"], r"\[2, 3\]", r"'000' \(position 0, length 3\)"),
        (["11", "1"], r"\[1, 2\]", r"'1' \(position 1, length 1\)"),
        (["000", "111"], r"\[3\]", r"'000' \(position 0, length 3\), '111' \(position 1"),
    ],
)
def test_a_pattern_of_the_wrong_length_is_named_with_the_number_of_judges(patterns, lengths, wrong):
    message = (
        rf"There are 2 judges, so every verdict pattern needs 2 characters.*{lengths}.*{wrong}"
    )
    with pytest.raises(ValueError, match=message):
        JuryCounts.from_counts(patterns, [1] * len(patterns), judges=["a", "b"])
    with pytest.raises(ValueError, match=message):
        CategoricalJuryCounts.from_counts(
            patterns, [1] * len(patterns), judges=["a", "b"], categories=["x", "y"]
        )


def test_pattern_lengths_without_a_number_of_judges():
    check = jury_module.check_pattern_lengths
    assert check(["10", "0-"], None) == 2
    assert check([], None) == 0
    with pytest.raises(ValueError, match=r"most have 2\).*'1' \(position 2, length 1\)"):
        check(["10", "0-", "1"], None)
    many = ["1" * 3] * 7 + ["11"]
    with pytest.raises(ValueError, match=r"position 4, length 3\) and 2 more\."):
        check(many, 2)


# ------------------------------------------------------------------ F7.1: label messages


@pytest.mark.parametrize(
    ("argument", "one", "many"),
    [
        ("judges", "judge", "judges"),
        ("systems", "system", "systems"),
        ("strata", "stratum", "strata"),
    ],
)
@pytest.mark.parametrize("container", ["binary", "categorical"])
def test_labels_that_print_alike_are_refused_in_plain_words(argument, one, many, container):
    # The reproduction of F7.1: judges=[1, "1"] said "separate judgess" and "each judges".
    kwargs = {"judges": ["a"], argument: [1, "1"]}
    size = {"judges": 1, "systems": 1, "strata": 1, argument: 2}
    test = np.ones((size["systems"], size["strata"], 1), dtype=int)
    pattern = ["0" * size["judges"]]
    message = (
        rf"The {one} labels include different values that print alike or compare equal: "
        rf"1 \(int\) and '1' \(str\)\. They would become separate {many} that look the same, "
        rf"so they are refused\. Give each {one} one label of one type"
    )
    with pytest.raises(ValueError, match=message):
        if container == "binary":
            JuryCounts.from_counts(pattern, test, **kwargs)
        else:
            CategoricalJuryCounts.from_counts(pattern, test, categories=["x", "y"], **kwargs)


def test_single_judge_labels_and_columns_say_strata_not_stratums():
    with pytest.raises(ValueError, match=r"separate strata that look the same.*each stratum one"):
        JudgeCounts.from_counts(n=[1, 2], k=[0, 1], stratum=[1, "1"])
    frame = pd.DataFrame({"s": ["e\u0301", "\u00e9"], "judge": [1, 0]})  # both print "é"
    with pytest.raises(ValueError, match=r"\(stratum\) holds stratum labels.*separate strata "):
        JudgeCounts.from_frames(frame, stratum="s")
