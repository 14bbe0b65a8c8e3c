"""CategoricalJuryCounts: K-category verdict patterns of several judges (issue 17).

References are hand counts of small tables, the single-judge reader
(``CategoricalCounts.from_frames`` on one judge's rows) and the binary reader
(``JuryCounts.from_frames``) on K = 2 data; engines are checked against pandas.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from bayesjudge.data import CategoricalCounts, CategoricalJuryCounts
from bayesjudge.data.categorical_jury import (
    categorical_pattern_strings,
    categorical_verdict_matrix,
)
from bayesjudge.data.jury import JuryCounts
from bayesjudge.simulate import preference_confusion, simulate_categorical_jury_items
from bayesjudge.warnings import DesignWarning, MissingLabelWarning

CATS = ["A", "tie", "B"]
KW = {"judges": "grader", "item": "item", "judge": "verdict"}


def _items(seed=0, n=40, m=(6, 4, 6), missing=0.15, design="stratified", drop=0.05):
    """Long table of three judges on two systems × two strata; some verdicts blanked."""
    confusion = np.stack([preference_confusion(a, tie_rate=0.1) for a in (0.8, 0.7, 0.75)])
    items = simulate_categorical_jury_items(
        [0.4, 0.2, 0.4], confusion, n=n, m=list(m) if design == "stratified" else m,
        design=design, missing=missing, system=["s1", "s2"], stratum=["x", "y"],
        categories=CATS, judges=["a", "b", "c"], random_seed=seed,
    )  # fmt: skip
    frame = items.rename(columns={"judge_name": "grader"}).drop(columns="truth")
    frame["item"] = frame["stratum"] + "/" + frame["item"].astype(str)
    rng = np.random.default_rng(seed)
    blank = rng.random(len(frame)) < drop
    frame["verdict"] = frame["verdict"].where(~blank, None)
    return frame


# ------------------------------------------------------------------ from_counts, views


def test_from_counts_canonical_order_and_repeats_refused():
    counts = CategoricalJuryCounts.from_counts(
        ["2-", "01", "20", "00"],
        [1, 6, 3, 0],
        [[0, 2, 0, 0], [0, 0, 0, 0], [5, 0, 0, 0]],
        judges=["a", "b"],
        categories=CATS,
    )
    # "00" has no item anywhere: dropped
    assert counts.patterns == ["01", "20", "2-"]
    assert counts.test.values.ravel().tolist() == [6, 3, 1]
    assert counts.labelled.sel(truth="A").values.ravel().tolist() == [2, 0, 0]
    assert counts.labelled.sel(truth="B").values.ravel().tolist() == [0, 0, 5]
    assert counts.verdicts.tolist() == [[0, 1], [2, 0], [2, -1]]
    assert counts.verdicts.dtype == np.int8
    assert (counts.K, counts.categories, counts.design, counts.ordered) == (
        3,
        CATS,
        "stratified",
        False,
    )
    assert counts.sizes == {"system": 1, "stratum": 1, "judge": 2, "pattern": 3, "category": 3}
    assert counts.dataset.attrs["categories_source"] == "given"
    # the wrapper accepts its own dataset unchanged
    assert CategoricalJuryCounts(counts.dataset).dataset.identical(counts.dataset)
    # A repeated pattern is refused, not added up (tests/data/test_jury_counts_hostile_s9.py).
    with pytest.raises(ValueError, match=r"repeated pattern\(s\) '01' \(positions 1, 3\)"):
        CategoricalJuryCounts.from_counts(
            ["2-", "01", "20", "01", "00"], [1, 2, 3, 4, 0], judges=["a", "b"], categories=CATS
        )


def test_for_judge_pair_table_and_sel_by_hand():
    counts = CategoricalJuryCounts.from_counts(
        ["00", "12", "1-", "-2"],
        [[[40, 5, 20, 7]], [[1, 2, 3, 4]]],
        [[[[3, 0, 0, 0], [0, 2, 1, 0], [0, 0, 0, 6]]]] * 2,
        judges=["a", "b"],
        categories=CATS,
        systems=["s", "t"],
        design="random",
    )
    a = counts.for_judge("a")
    assert isinstance(a, CategoricalCounts)
    # judge a: "00" -> A, "12" and "1-" -> tie; "-2" not graded by a
    assert a.test.sel(system="s").values.ravel().tolist() == [40, 25, 0]
    assert a.calibration.sel(system="s").values.reshape(3, 3).tolist() == [
        [3, 0, 0], [0, 3, 0], [0, 0, 0],
    ]  # fmt: skip
    assert a.design == "random" and a.categories == CATS
    b = counts.for_judge("b")
    assert b.test.sel(system="t").values.ravel().tolist() == [1, 0, 6]
    assert b.calibration.sel(system="t").values.reshape(3, 3).tolist() == [
        [3, 0, 0], [0, 0, 2], [0, 0, 6],
    ]  # fmt: skip
    table = counts.pair_table("a", "b")
    assert table.dims == ("system", "stratum", "verdict_a", "verdict_b")
    assert table.sel(system="s").values.reshape(3, 3).tolist() == [
        [40, 0, 0], [0, 0, 5], [0, 0, 0],
    ]  # fmt: skip
    both = counts.pair_table("a", "b", items="all").sel(system="s").values.reshape(3, 3)
    assert both.tolist() == [[43, 0, 0], [0, 0, 7], [0, 0, 0]]
    only_a = counts.sel(judge="a", system="t")
    assert only_a.patterns == ["0", "1"] and only_a.systems == ["t"]
    assert only_a.test.values.ravel().tolist() == [1, 5]
    assert only_a.labelled.values.reshape(3, 2).tolist() == [[3, 0], [0, 3], [0, 0]]
    swapped = counts.sel(judge=["b", "a"])
    assert swapped.judges == ["b", "a"] and "21" in swapped.patterns
    with pytest.raises(ValueError, match="not one of the judges"):
        counts.for_judge("z")
    with pytest.raises(ValueError, match="items must be"):
        counts.pair_table("a", "b", items="every")


def test_to_frame_is_tidy_and_adds_up():
    counts = CategoricalJuryCounts.from_counts(
        ["01", "2-"], [4, 1], [[1, 0], [0, 0], [0, 2]], judges=["a", "b"], categories=CATS
    )
    frame = counts.to_frame()
    assert list(frame.columns) == ["system", "stratum", "pattern", "table", "truth", "count"]
    assert frame[frame.table == "test"]["count"].sum() == 5
    lab = frame[frame.table == "labelled"].set_index(["pattern", "truth"])["count"]
    assert lab[("01", "A")] == 1 and lab[("2-", "B")] == 2 and lab.sum() == 3


def test_pattern_helpers_round_trip_beyond_ten_categories():
    matrix = np.array([[0, 35, -1], [10, 9, 1]])
    strings = categorical_pattern_strings(matrix)
    assert strings == ["0z-", "a91"]
    np.testing.assert_array_equal(categorical_verdict_matrix(strings, 3, 36), matrix)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"patterns": ["03"]}, r"'0' to '2' for K = 3"),
        ({"patterns": ["01", "1"]}, "lengths"),
        ({"patterns": ["0"]}, "2 judges"),
        ({"patterns": ["--"]}, "no verdict at all"),
        ({"patterns": np.array([[0, 3]])}, "0 to 2"),
        ({"categories": ["A"]}, "at least two categories"),
        ({"categories": [str(i) for i in range(37)]}, "At most 36 categories"),
        ({"categories": ["A", "A", "B"]}, "unique"),
        ({"test": [-1]}, "non-negative"),
        ({"test": [1.5]}, "whole"),
        ({"test": [2**60]}, "2\\*\\*53"),
        ({"test": [1, 2]}, "shape"),
        ({"labelled": [[1], [2]]}, "shape"),
        ({"design": "cluster"}, "design"),
        ({"ordered": "yes"}, "ordered"),
        ({"judges": ["a", "a"]}, "unique"),
    ],
)
def test_from_counts_refuses_bad_input(kwargs, match):
    args = {"patterns": ["01"], "test": [3], "judges": ["a", "b"], "categories": CATS}
    with pytest.raises(ValueError, match=match):
        CategoricalJuryCounts.from_counts(**{**args, **kwargs})


def test_wrapper_refuses_bad_datasets():
    counts = CategoricalJuryCounts.from_counts(["01"], [3], judges=["a", "b"], categories=CATS)
    with pytest.raises(TypeError, match=r"wraps an xarray\.Dataset"):
        CategoricalJuryCounts({"test": 1})
    with pytest.raises(ValueError, match="'test' and 'labelled'"):
        CategoricalJuryCounts(counts.dataset.drop_vars("test"))
    with pytest.raises(ValueError, match="'verdict'"):
        CategoricalJuryCounts(counts.dataset.drop_vars("verdict"))


# --------------------------------------------------------------------- from_frames


def test_one_table_random_design_matches_the_single_judge_reader():
    frame = _items(seed=1, design="random", m=12)
    with pytest.warns(MissingLabelWarning, match="by judge") as caught:
        counts = CategoricalJuryCounts.from_frames(
            frame, **KW, system="system", stratum="stratum", categories=CATS
        )
    dropped = frame[frame.verdict.isna()].grader.value_counts()
    message = str(caught[0].message)
    for judge, c in dropped.items():
        assert f"'{judge}': {c}" in message
    assert counts.design == "random" and counts.judges == ["a", "b", "c"]
    assert counts.categories == CATS and counts.dataset.attrs["categories_source"] == "given"
    graded = frame.dropna(subset=["verdict"]).groupby(["system", "item"]).ngroups
    assert int(counts.test.sum() + counts.labelled.sum()) == graded
    for j in counts.judges:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingLabelWarning)
            single = CategoricalCounts.from_frames(
                frame[frame.grader == j], judge="verdict", human="human", categories=CATS,
                system="system", stratum="stratum",
            )  # fmt: skip
        mine = counts.for_judge(j)
        np.testing.assert_array_equal(mine.test.values, single.test.values, err_msg=j)
        np.testing.assert_array_equal(mine.calibration.values, single.calibration.values)
        assert mine.design == single.design == "random"


def test_separate_calibration_is_stratified_and_matches_the_single_judge_reader():
    frame = _items(seed=2, drop=0.0)
    test = frame[frame.human.isna()].drop(columns="human")
    calib = frame[frame.human.notna()].assign(item=lambda d: "c" + d["item"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing dropped, nothing inferred
        counts = CategoricalJuryCounts.from_frames(
            test, calib, **KW, system="system", stratum="stratum"
        )
    assert counts.design == "stratified"
    assert counts.categories == ["A", "B", "tie"]  # inferred: sorted as text
    assert counts.dataset.attrs["categories_source"] == "inferred"
    assert counts.labelled.sum(["system", "stratum", "pattern"]).values.tolist() == [
        24, 24, 16,
    ]  # 6, 6, 4 per group × 4 groups  # fmt: skip
    for j in counts.judges:
        single = CategoricalCounts.from_frames(
            test[test.grader == j], calib[calib.grader == j], judge="verdict",
            system="system", stratum="stratum",
        )  # fmt: skip
        assert single.categories == counts.categories
        mine = counts.for_judge(j)
        np.testing.assert_array_equal(mine.test.values, single.test.values)
        np.testing.assert_array_equal(mine.calibration.values, single.calibration.values)


def test_matching_ids_is_the_random_design_and_mixed_designs_are_refused():
    frame = _items(seed=4, drop=0.0, missing=0.0)
    test = frame.drop(columns="human")
    calib = frame[frame.human.notna()]
    with pytest.warns(DesignWarning, match="random"):
        counts = CategoricalJuryCounts.from_frames(test, calib, **KW, system="system")
    assert counts.design == "random"
    assert int(counts.labelled.sum()) == calib.groupby(["system", "item"]).ngroups
    assert (
        int(counts.test.sum() + counts.labelled.sum()) == test.groupby(["system", "item"]).ngroups
    )
    one = CategoricalJuryCounts.from_frames(frame, **KW, system="system")
    assert one.patterns == counts.patterns
    np.testing.assert_array_equal(one.labelled.values, counts.labelled.values)
    with pytest.raises(ValueError, match="that is the random design"):
        CategoricalJuryCounts.from_frames(test, calib, **KW, system="system", design="stratified")
    mixed = pd.concat([calib, calib.iloc[:3].assign(item="new")])
    with pytest.raises(ValueError, match="a mix of designs"):
        CategoricalJuryCounts.from_frames(test, mixed, **KW, system="system")
    with pytest.raises(ValueError, match="design='stratified' was passed for one table"):
        CategoricalJuryCounts.from_frames(frame, **KW, system="system", design="stratified")


def test_refuses_repeats_strata_clashes_two_human_labels_and_missing_ids():
    base = pd.DataFrame(
        {"item": [1, 1, 2], "grader": ["a", "b", "a"], "verdict": ["A", "tie", "B"],
         "s": ["x", "x", "x"]}
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"more than one row for the same \(item, judge\)"):
        CategoricalJuryCounts.from_frames(pd.concat([base, base.iloc[:1]]), **KW)
    with pytest.raises(ValueError, match="more than one stratum"):
        CategoricalJuryCounts.from_frames(base.assign(s=["x", "y", "x"]), **KW, stratum="s")
    with pytest.raises(ValueError, match="different human labels"):
        CategoricalJuryCounts.from_frames(base.assign(human=["A", "B", None]), **KW)
    with pytest.raises(ValueError, match="missing or empty"):
        CategoricalJuryCounts.from_frames(base.assign(item=[1, None, 2]), **KW)
    with pytest.raises(ValueError, match="every row of the calibration table needs a human"):
        CategoricalJuryCounts.from_frames(
            base, base.assign(item=[7, 7, 8], human=["A", None, "B"]), **KW
        )


def test_labels_outside_the_categories_name_column_values_and_fix():
    base = pd.DataFrame(
        {"item": [1, 1, 2, 2], "grader": ["a", "b", "a", "b"],
         "verdict": ["A", "Tie", "B", "Tie"], "human": ["A", "A", None, None]}
    )  # fmt: skip
    with pytest.raises(ValueError) as err:
        CategoricalJuryCounts.from_frames(base, **KW, categories=CATS)
    text = str(err.value)
    assert "Column 'verdict' (judge=)" in text and "'Tie' (str, 2 rows)" in text
    assert "Add them to categories=" in text and "'tie' matches only ignoring case" in text
    with pytest.raises(ValueError, match=r"use CategoricalJuryCounts\.from_frames"):
        JuryCounts.from_frames(base.drop(columns="human"), **KW)
    with pytest.raises(ValueError, match=r"Column 'human' \(human=\).*'C'"):
        CategoricalJuryCounts.from_frames(
            base.assign(verdict="A", human=["C", "C", None, None]), **KW, categories=CATS
        )
    numbers = base.assign(verdict=[1, 2, 3, 2], human=[1, 1, None, None])
    with pytest.raises(ValueError, match="matches only as text"):
        CategoricalJuryCounts.from_frames(numbers, **KW, categories=["1", "2", "3"])


def test_categories_inferred_from_every_label_column_and_refused_when_odd():
    # "3" occurs only as a human label; numeric text sorts by value ("10" after "3")
    frame = pd.DataFrame(
        {"item": [1, 1, 2, 2], "grader": ["a", "b", "a", "b"],
         "verdict": ["1", "10", "2", "1"], "human": ["3", "3", None, None]}
    )  # fmt: skip
    counts = CategoricalJuryCounts.from_frames(frame, **KW)
    assert counts.categories == ["1", "2", "3", "10"]
    # item 1: a "1" (index 0), b "10" (index 3), labelled "3"; item 2: a "2", b "1"
    assert counts.patterns == ["03", "10"]
    assert counts.labelled.sel(truth="3").values.ravel().tolist() == [1, 0]
    assert counts.test.values.ravel().tolist() == [0, 1]
    with pytest.raises(ValueError, match="at least two categories"):
        CategoricalJuryCounts.from_frames(frame.assign(verdict="1", human="1"), **KW)
    with pytest.raises(ValueError, match=r"at least two categories; got \['1'\]"):
        CategoricalJuryCounts.from_frames(frame, **KW, categories=["1"])
    many = pd.DataFrame(
        {"item": range(37), "grader": "a", "verdict": [f"g{i:02d}" for i in range(37)]}
    )
    with pytest.raises(ValueError, match="At most 36 categories"):
        CategoricalJuryCounts.from_frames(many, **KW, human=None)
    mixed = frame.assign(verdict=pd.Series([1, "1", 2, 1], dtype=object))
    with pytest.raises(ValueError, match="print alike"):
        CategoricalJuryCounts.from_frames(mixed, **KW)


def test_binary_data_gives_the_binary_counts_and_round_trips():
    rng = np.random.default_rng(5)
    rows = pd.DataFrame(
        {"item": np.repeat(np.arange(30), 3), "grader": np.tile(["a", "b", "c"], 30),
         "verdict": rng.choice(["correct", "incorrect"], 90)}
    )  # fmt: skip
    rows["human"] = np.where(
        rows["item"] < 8, np.repeat(rng.choice(["correct", "incorrect"], 30), 3), None
    )
    rows.loc[[4, 50], "verdict"] = None
    with pytest.warns(MissingLabelWarning):
        binary = JuryCounts.from_frames(rows, **KW)
    with pytest.warns(MissingLabelWarning):
        cat = CategoricalJuryCounts.from_frames(rows, **KW, categories=["incorrect", "correct"])
    assert sorted(cat.patterns) == sorted(binary.patterns)
    order = [binary.patterns.index(p) for p in cat.patterns]
    np.testing.assert_array_equal(cat.test.values, binary.test.values[..., order])
    np.testing.assert_array_equal(cat.labelled.values, binary.labelled.values[..., order])
    assert cat.design == binary.design == "random"
    back = cat.to_jury_counts()
    assert back.dataset.equals(binary.dataset) and back.patterns == binary.patterns
    via = CategoricalJuryCounts.from_jury_counts(binary)
    assert via.dataset.equals(cat.dataset) and via.categories == ["incorrect", "correct"]
    assert via.to_jury_counts().dataset.equals(binary.dataset)
    # 0/1 data: inferred categories [0, 1] are (incorrect, correct); to_jury_counts needs no
    # positive=, other labels do
    zero_one = rows.replace({"correct": 1, "incorrect": 0})
    with pytest.warns(MissingLabelWarning):
        numeric = CategoricalJuryCounts.from_frames(zero_one, **KW)
    assert numeric.categories == [0, 1]
    assert numeric.to_jury_counts().dataset.equals(binary.dataset)
    with pytest.raises(ValueError, match="Pass positive="):
        CategoricalJuryCounts.from_jury_counts(binary, ["f", "p"]).to_jury_counts()
    flipped = CategoricalJuryCounts.from_jury_counts(binary, ["f", "p"]).to_jury_counts("p")
    assert flipped.dataset.equals(binary.dataset)
    three = CategoricalJuryCounts.from_counts(["0"], [1], judges=["a"], categories=CATS)
    with pytest.raises(ValueError, match="K = 2"):
        three.to_jury_counts()


@pytest.mark.parametrize("engine", ["polars-lazy", "pyarrow", "duckdb"])
def test_engines_agree_with_pandas(engine):
    frame = _items(seed=7, n=12)
    kwargs = {**KW, "system": "system", "stratum": "stratum", "categories": CATS}
    with pytest.warns(MissingLabelWarning):
        expected = CategoricalJuryCounts.from_frames(frame, **kwargs)
    if engine == "polars-lazy":
        pl = pytest.importorskip("polars")
        native = pl.from_pandas(frame).lazy()
    elif engine == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        native = duckdb.from_df(frame)
    else:
        pa = pytest.importorskip("pyarrow")
        native = pa.Table.from_pandas(frame, preserve_index=False)
    with pytest.warns(MissingLabelWarning):
        got = CategoricalJuryCounts.from_frames(native, **kwargs)
    assert got.dataset.identical(expected.dataset)
    test = frame[frame.human.isna()].drop(columns="human")
    calib = frame[frame.human.notna()].assign(item=lambda d: "c" + d["item"])
    natives = {
        "polars-lazy": lambda f: pytest.importorskip("polars").from_pandas(f).lazy(),
        "pyarrow": lambda f: pytest.importorskip("pyarrow").Table.from_pandas(
            f, preserve_index=False
        ),
        "duckdb": lambda f: pytest.importorskip("duckdb").from_df(f),
    }[engine]
    with pytest.warns(MissingLabelWarning):
        separate = CategoricalJuryCounts.from_frames(natives(test), natives(calib), **kwargs)
    with pytest.warns(MissingLabelWarning):
        reference = CategoricalJuryCounts.from_frames(test, calib, **kwargs)
    assert separate.dataset.identical(reference.dataset)
    assert separate.design == "stratified"


# ------------------------------------------------------------------------ hostile input


def test_hostile_ids_names_and_labels(tmp_path):
    frame = pd.DataFrame(
        {
            "item": ["007", "7", "007", "7"],
            "grader": ["<b>gpt</b>", "<b>gpt</b>", "$x\nnew", "$x\nnew"],
            "verdict": ["<i>A</i>", "tie\nx", "tie\nx", "$B"],
        }
    )
    counts = CategoricalJuryCounts.from_frames(frame, **KW, human=None)
    assert counts.judges == ["$x\nnew", "<b>gpt</b>"]
    assert counts.categories == ["$B", "<i>A</i>", "tie\nx"]
    # "007" and "7" are two items: ("tie\nx", "<i>A</i>") -> "21", ("$B", "tie\nx") -> "02"
    assert counts.patterns == ["02", "21"]
    text = repr(counts)
    assert len(text.splitlines()) == 3 and "\\n" in text  # names cannot start a new line
    path = tmp_path / "jury.csv"
    frame.to_csv(path, index=False)
    from_file = CategoricalJuryCounts.from_frames(path, **KW, human=None)
    assert from_file.dataset["test"].equals(counts.dataset["test"])
    # ints and their text are different items: 7 and "7" do not merge
    typed = frame.assign(item=pd.Series([7, "7", 7, "7"], dtype=object))
    assert int(CategoricalJuryCounts.from_frames(typed, **KW, human=None).test.sum()) == 2
    with pytest.raises(ValueError, match="2\\*\\*53"):
        CategoricalJuryCounts.from_counts(
            ["0"], np.array([2**53 + 1], dtype=np.int64), judges=["a"], categories=CATS
        )
