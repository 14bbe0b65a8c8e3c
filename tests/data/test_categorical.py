"""CategoricalCounts: the K-category container, its constructors and the K = 2 round trip.

Reference counts are tallied directly from the item tables with ``collections.Counter`` (an
independent count of the same rows), never hard-coded.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayesjudge.data import CategoricalCounts, JudgeCounts
from bayesjudge.data.categorical import category_array, infer_categories
from bayesjudge.simulate import (
    preference_confusion,
    simulate_categorical_items,
    simulate_counts,
    simulate_items,
)
from bayesjudge.warnings import DesignWarning, MissingLabelWarning

PREF = ["A", "tie", "B"]


def tally(test: pd.DataFrame | None, cal: pd.DataFrame | None, categories, systems, strata):
    """Count the tables row by row (the independent reference)."""
    k = len(categories)
    index = {c: i for i, c in enumerate(categories)}
    t = np.zeros((len(systems), len(strata), k), dtype=np.int64)
    c = np.zeros((len(systems), len(strata), k, k), dtype=np.int64)

    def group(row, i):
        s = systems.index(row["system"]) if "system" in row else 0
        j = strata.index(row["stratum"]) if "stratum" in row else 0
        return s, j

    if test is not None:
        for i, row in test.iterrows():
            s, j = group(row, i)
            t[s, j, index[row["judge"]]] += 1
    if cal is not None:
        for i, row in cal.iterrows():
            s, j = group(row, i)
            c[s, j, index[row["human"]], index[row["judge"]]] += 1
    return t, c


@pytest.fixture(scope="module")
def pref_tables():
    return simulate_categorical_items(
        [0.4, 0.2, 0.4],
        preference_confusion(0.75, 0.1),
        n=[[30, 20], [25, 10]],
        m=[[[3, 2, 3], [1, 1, 1]], [[2, 2, 2], [0, 1, 0]]],
        system=["a", "b"],
        stratum=["x", "y"],
        categories=PREF,
        random_seed=11,
    )


# ------------------------------------------------------------------------- from_counts


def test_from_counts_shapes_coords_and_attrs():
    counts = CategoricalCounts.from_counts(
        test=[[30, 10, 60], [50, 20, 30]],
        calibration=[[18, 1, 1], [2, 6, 2], [1, 1, 18]],
        categories=PREF,
        system=["x", "y"],
        design="random",
        ordered=False,
    )
    assert counts.test.dims == ("system", "stratum", "category")
    assert counts.calibration.dims == ("system", "stratum", "truth", "verdict")
    assert counts.test.dtype == np.int64 and counts.calibration.dtype == np.int64
    for dim in ("category", "truth", "verdict"):
        assert counts.ds.indexes[dim].tolist() == PREF
    assert counts.categories == PREF and counts.K == 3 and counts.design == "random"
    assert counts.ordered is False and counts.strata == ["all"]
    assert counts.ds.attrs["categories_source"] == "given"
    # calibration broadcast to both systems; rows = truth
    assert counts.calibration.sel(system="y", truth="tie").values.ravel().tolist() == [2, 6, 2]
    assert counts.calibration.sel(system="x", truth="A", verdict="B").item() == 1
    assert counts.n().values.ravel().tolist() == [100, 100]
    assert counts.m().sel(system="x").values.ravel().tolist() == [20, 10, 20]


def test_from_counts_system_and_stratum_axes():
    rng = np.random.default_rng(0)
    test = rng.integers(0, 9, (2, 3, 4))
    cal = rng.integers(0, 9, (2, 3, 4, 4))
    counts = CategoricalCounts.from_counts(
        test, cal, categories=[1, 2, 3, 4], ordered=True, system=["s", "t"], stratum=[7, 8, 9]
    )
    np.testing.assert_array_equal(counts.test.values, test)
    np.testing.assert_array_equal(counts.calibration.values, cal)
    assert counts.ordered is True and counts.strata == [7, 8, 9]
    assert counts.ds.indexes["category"].dtype == np.int64


def test_from_counts_default_categories_and_calibration_only():
    counts = CategoricalCounts.from_counts(calibration=np.eye(3, dtype=int) * 5)
    assert counts.categories == [0, 1, 2]
    assert counts.ds.attrs["categories_source"] == "default"
    assert int(counts.test.sum()) == 0
    assert np.isnan(counts.p_hat().values).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"test": [1, 2]}, r"last 1 axes must be \(3,\)"),
        ({"calibration": [[1, 2, 3], [1, 2, 3]]}, r"\(3, 3\)"),
        ({"test": [1, -2, 3]}, r"test \(test items per judge category\).*-2.*category='tie'"),
        ({"test": [1, 2.5, 3]}, r"non-negative whole numbers; got \[2\.5\]"),
        ({"test": [1, np.nan, 3]}, r"got \[nan\]"),
        ({"test": [1, True, 3]}, r"whole-number counts"),
        ({"test": ["1", "2", "3"]}, r"whole-number counts"),
        ({"test": [[1, 2, 3]] * 2}, r"pass system= \(or stratum=\) labels"),
        ({"test": [1, 2**53 + 2, 3]}, r"exceeds 2\*\*53"),
        ({}, r"No counts given"),
    ],
)
def test_from_counts_refuses_bad_counts(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CategoricalCounts.from_counts(**kwargs, categories=PREF)


@pytest.mark.parametrize(
    ("categories", "message"),
    [
        (["A"], "at least two"),
        (["A", "A", "B"], r"unique; \['A'\] repeat"),
        ([1, "1"], r"1 \(int\) and '1' \(str\)"),
        (["1", "01"], r"'1' \(str\) and '01' \(str\)"),
        ([1, True], "compare equal"),
        (["A", None], "missing"),
        (["A", " "], "missing"),
        (["A", " B"], "surrounding spaces"),
        ("AB", "sequence of at least two"),
        # Regression: mixed types failed later with "labels [True, False, 'x'] differ from the
        # categories ['True', 'False', 'x']" (numpy made the coordinates text).
        ([True, False, "x"], r"mixes boolean and text labels.*'True', 'False', 'x'"),
        ([1, 2.5, "x"], "mixes number and text labels"),
        ([True, 2, 3], "mixes boolean and number labels"),
    ],
)
def test_categories_are_checked(categories, message):
    with pytest.raises(ValueError, match=message):
        category_array(categories)
    with pytest.raises(ValueError, match=message):
        CategoricalCounts.from_counts(test=[1] * max(len(categories), 2), categories=categories)


def test_infer_categories_orders_numbers_by_value():
    assert infer_categories(["10", "2", "1"]) == ["1", "2", "10"]
    assert infer_categories([3, 1, 2]) == [1, 2, 3]
    assert infer_categories(["tie", "B", "A"]) == ["A", "B", "tie"]


def test_wrapping_a_dataset_reorders_by_the_categories_attr_and_adds_group_dims():
    ds = xr.Dataset(
        {
            "test": ("category", [1, 2, 3]),
            "calibration": (("truth", "verdict"), np.arange(9).reshape(3, 3)),
        },
        coords={"category": ["c", "b", "a"], "truth": ["a", "b", "c"], "verdict": ["c", "a", "b"]},
        attrs={"categories": ["a", "b", "c"]},
    )
    counts = CategoricalCounts(ds)
    assert counts.systems == ["all"] and counts.strata == ["all"]
    assert counts.test.values.ravel().tolist() == [3, 2, 1]
    # verdict coordinate ["c", "a", "b"] → columns reordered to a, b, c
    assert counts.calibration.values.reshape(3, 3)[0].tolist() == [1, 2, 0]
    assert CategoricalCounts(counts).ds.identical(counts.ds)
    # netCDF has no boolean attributes: 0/1 is read as False/True
    assert CategoricalCounts(ds.assign_attrs(ordered=np.int8(1))).ordered is True
    with pytest.raises(ValueError, match="must be True or False"):
        CategoricalCounts(ds.assign_attrs(ordered="yes"))


@pytest.mark.parametrize(
    ("ds", "message"),
    [
        (xr.Dataset({"test": ("category", [1, 2])}, coords={"category": [0, 1]}), "missing"),
        (
            xr.Dataset(
                {"test": ("category", [1, 2]), "calibration": 0, "x": 1},
                coords={"category": [0, 1]},
            ),
            "unexpected",
        ),
        (
            xr.Dataset(
                {"test": (("judge", "category"), [[1, 2]]), "calibration": 0},
                coords={"category": [0, 1]},
            ),
            "besides",
        ),
        (
            xr.Dataset(
                {"test": ("category", [1, 2]), "calibration": (("truth",), [1, 1])},
                coords={"category": [0, 1], "truth": [0, 2]},
            ),
            "differ from the categories",
        ),
        (xr.Dataset({"test": 1, "calibration": 0}), "no category labels"),
    ],
)
def test_wrapping_refuses_bad_datasets(ds, message):
    with pytest.raises(ValueError, match=message):
        CategoricalCounts(ds)


def test_wrapping_refuses_non_dataset():
    with pytest.raises(TypeError, match=r"wraps an xarray\.Dataset"):
        CategoricalCounts({"test": [1, 2]})


# ------------------------------------------------------------------------- from_frames


def test_from_frames_agrees_with_a_direct_tally(pref_tables):
    test, cal = pref_tables
    counts = CategoricalCounts.from_frames(
        test, cal, categories=PREF, system="system", stratum="stratum"
    )
    t, c = tally(test, cal, PREF, ["a", "b"], ["x", "y"])
    np.testing.assert_array_equal(counts.test.values, t)
    np.testing.assert_array_equal(counts.calibration.values, c)
    assert counts.design == "stratified" and counts.ds.attrs["categories_source"] == "given"


def test_from_frames_infers_sorted_categories_and_says_so(pref_tables):
    test, cal = pref_tables
    counts = CategoricalCounts.from_frames(test, cal, system="system", stratum="stratum")
    assert counts.categories == ["A", "B", "tie"]
    assert counts.ds.attrs["categories_source"] == "inferred"
    assert "(inferred from the tables)" in repr(counts)
    given = CategoricalCounts.from_frames(
        test, cal, categories=PREF, system="system", stratum="stratum"
    )
    # the same counts, in another order
    assert counts.test.sel(category=PREF).values.tolist() == given.test.values.tolist()


def test_random_design_one_table_and_matching_ids_agree():
    theta, conf = [0.5, 0.2, 0.3], preference_confusion(0.8, 0.1)
    kwargs = dict(n=[15, 12], m=[5, 4], design="random", system=["a", "b"], random_seed=5)
    one = simulate_categorical_items(theta, conf, one_table=True, **kwargs)
    test, cal = simulate_categorical_items(theta, conf, **kwargs)
    from_one = CategoricalCounts.from_frames(one, system="system")
    from_one_items = CategoricalCounts.from_frames(one, system="system", item="item")
    with pytest.warns(DesignWarning, match="taken to be 'random'"):
        inferred = CategoricalCounts.from_frames(test, cal, system="system", item="item")
    declared = CategoricalCounts.from_frames(
        test, cal, system="system", item="item", design="random"
    )
    unlabelled = one[one["human"].isna()]
    labelled = one[one["human"].notna()]
    t, c = tally(unlabelled, labelled, [0, 1, 2], ["a", "b"], ["all"])
    for counts in (from_one, from_one_items, inferred, declared):
        assert counts.design == "random"
        np.testing.assert_array_equal(counts.test.values, t)
        np.testing.assert_array_equal(counts.calibration.values, c)
    assert counts.n().values.ravel().tolist() == [15, 12]
    assert counts.calibration.sum(["stratum", "truth", "verdict"]).values.tolist() == [5, 4]


def test_random_design_errors_as_for_judge_counts():
    theta, conf = [0.5, 0.2, 0.3], preference_confusion(0.8, 0.1)
    test, cal = simulate_categorical_items(theta, conf, n=10, m=4, design="random", random_seed=1)
    with pytest.raises(ValueError, match="would be counted twice"):
        CategoricalCounts.from_frames(test, cal, item="item", design="stratified")
    extra = pd.concat([cal, pd.DataFrame({"item": [999], "judge": [0], "human": [0]})])
    with pytest.raises(ValueError, match="mixes two designs"):
        CategoricalCounts.from_frames(test, extra, item="item")
    moved = cal.copy()
    moved.loc[0, "judge"] = (moved.loc[0, "judge"] + 1) % 3
    with pytest.raises(ValueError, match="different judge verdict") as err:
        CategoricalCounts.from_frames(test, moved, item="item", design="random")
    # the verdicts are named by their category labels
    row = moved.iloc[0]
    assert f"calibration {row['judge']}, test {(row['judge'] + 2) % 3}" in str(err.value)
    one = simulate_categorical_items(
        theta, conf, n=10, m=4, design="random", one_table=True, random_seed=1
    )
    with pytest.raises(ValueError, match="design='stratified' was passed with one table"):
        CategoricalCounts.from_frames(one, design="stratified")
    twice = pd.concat([one, one[one["human"].notna()].assign(human=None)])
    with pytest.raises(ValueError, match="have a row with a human label and another without"):
        CategoricalCounts.from_frames(twice, item="item")
    text_ids = cal.assign(item=cal["item"].astype(str))
    with pytest.raises(ValueError, match="match only as text"):
        CategoricalCounts.from_frames(test, text_ids, item="item")


def test_stratified_ids_that_do_not_overlap_stay_stratified():
    test, cal = simulate_categorical_items(
        [0.5, 0.5], np.eye(2), n=6, m=[2, 2], categories=["x", "y"], random_seed=2
    )
    counts = CategoricalCounts.from_frames(test, cal, item="item")
    assert counts.design == "stratified"
    assert counts.n().item() == 6 and int(counts.calibration.sum()) == 4


# ----------------------------------------------------------------- hostile labels, names


def test_label_outside_the_categories_is_named_with_counts():
    test = pd.DataFrame({"judge": ["A", "B", "C", "C", "tie", "a"]})
    with pytest.raises(ValueError) as err:
        CategoricalCounts.from_frames(test, human=None, categories=PREF)
    message = str(err.value)
    assert "'C' (str, 2 rows)" in message and "'a' (str, 1 row)" in message
    assert "'a' matches 'A' only ignoring case" in message
    assert "column 'judge' (judge) of the test table" in message


def test_numbers_and_text_never_merge():
    # "1" (text) is not the category 1 (a number): an error with a hint, not a silent match.
    test = pd.DataFrame({"judge": ["1", "2", "3"]})
    with pytest.raises(ValueError, match=r"'1' \(str\) matches the category 1 \(int\) only as"):
        CategoricalCounts.from_frames(test, human=None, categories=[1, 2, 3])
    # "01" and "1" in one column are refused (they would be one grade or two look-alikes)
    test = pd.DataFrame({"judge": ["1", "01", "2"]})
    with pytest.raises(ValueError, match=r"'01' \(str\) and '1' \(str\)"):
        CategoricalCounts.from_frames(test, human=None)
    # with categories given as text, "01" is simply not a category
    with pytest.raises(ValueError, match=r"'01' \(str, 1 row\)"):
        CategoricalCounts.from_frames(
            pd.DataFrame({"judge": ["01", "2"]}), human=None, categories=["1", "2"]
        )
    # 1 and "1" in one pandas object column
    test = pd.DataFrame({"judge": pd.Series([1, "1", 2], dtype=object)})
    with pytest.raises(ValueError, match="print alike"):
        CategoricalCounts.from_frames(test, human=None)
    # 1 and True in one object column (pandas would group them as one value)
    test = pd.DataFrame({"judge": pd.Series([1, True, 2], dtype=object)})
    with pytest.raises(ValueError, match="compare equal"):
        CategoricalCounts.from_frames(test, human=None)
    # int judge column, text human column: inferred categories would look alike
    cal = pd.DataFrame({"judge": [1, 2], "human": ["1", "2"]})
    with pytest.raises(ValueError, match="across the judge and human columns"):
        CategoricalCounts.from_frames(calibration=cal)


def test_whole_floats_match_int_categories():
    # pandas turns an int column with a missing value into float: 1.0 is the grade 1.
    table = pd.DataFrame({"judge": [1, 2, 3, 3], "human": [1.0, np.nan, 3.0, np.nan]})
    counts = CategoricalCounts.from_frames(table, categories=[1, 2, 3], ordered=True)
    assert counts.test.values.ravel().tolist() == [0, 1, 1]
    assert counts.calibration.values.reshape(3, 3).tolist() == [[1, 0, 0], [0, 0, 0], [0, 0, 1]]


def test_empty_category_is_kept_and_stated():
    test = pd.DataFrame({"judge": [1, 1, 3]})
    counts = CategoricalCounts.from_frames(test, human=None, categories=[1, 2, 3])
    assert counts.empty_categories == [2]
    assert "no items in [2]" in repr(counts)
    assert counts.test.values.ravel().tolist() == [2, 0, 1]


def test_missing_labels_are_dropped_with_a_warning():
    test = pd.DataFrame({"judge": ["A", None, "B", " "]})
    cal = pd.DataFrame({"judge": ["A", "B", None], "human": ["A", None, "B"]})
    with pytest.warns(MissingLabelWarning) as record:
        counts = CategoricalCounts.from_frames(test, cal, categories=PREF)
    messages = [str(w.message) for w in record]
    assert any("Dropped 2 of 4 rows of the test table" in m for m in messages)
    assert any("Dropped 2 of 3 rows of the calibration table" in m for m in messages)
    assert {Path(w.filename).name for w in record} == {"test_categorical.py"}  # the caller
    assert counts.test.values.ravel().tolist() == [1, 0, 1]
    assert int(counts.calibration.sum()) == 1


def test_labels_are_stripped_but_case_is_kept():
    test = pd.DataFrame({"judge": [" A", "A ", "tie", "B"]})
    counts = CategoricalCounts.from_frames(test, human=None, categories=PREF)
    assert counts.test.values.ravel().tolist() == [2, 1, 1]


def test_hostile_group_labels_and_column_names():
    test = pd.DataFrame({"the model ü": [1, 1], "verdict!": ["A", "B"]})
    cal = pd.DataFrame({"the model ü": ["1", "1"], "verdict!": ["A", "B"], "h": ["A", "B"]})
    with pytest.raises(ValueError, match="print alike or compare equal"):
        CategoricalCounts.from_frames(
            test, cal, judge="verdict!", human="h", system="the model ü", categories=PREF
        )
    with pytest.raises(ValueError, match=r"Column 'judge' \(judge\) is not in the test table"):
        CategoricalCounts.from_frames(test, human=None, categories=PREF)
    test = pd.DataFrame({"s": ["x", None], "judge": ["A", "B"]})
    with pytest.raises(ValueError, match=r"Column 's' \(system\).*1 row.*missing label"):
        CategoricalCounts.from_frames(test, human=None, system="s", categories=PREF)
    with pytest.raises(ValueError, match="more than one role"):
        CategoricalCounts.from_frames(test, human=None, system="judge", categories=PREF)
    with pytest.raises(ValueError, match="at least two categories"):
        CategoricalCounts.from_frames(pd.DataFrame({"judge": ["A", "A"]}), human=None)


def test_csv_labels_are_text(tmp_path):
    path = tmp_path / "t.csv"
    pd.DataFrame({"judge": [1, 2, 10, 2], "human": [1, "", 10, ""]}).to_csv(path, index=False)
    counts = CategoricalCounts.from_frames(path, ordered=True)
    assert counts.categories == ["1", "2", "10"]  # numeric text in numeric order
    assert counts.design == "random" and counts.test.values.ravel().tolist() == [0, 2, 0]
    with pytest.raises(ValueError, match="only as text or as a number"):
        CategoricalCounts.from_frames(path, categories=[1, 2, 10])


# --------------------------------------------------------------------- K = 2 round trip


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_k2_from_frames_equals_judge_counts(design):
    if design == "stratified":
        test, cal = simulate_items(
            [[0.6, 0.3], [0.5, 0.8]], 0.8, 0.9, 40, 15, 25,
            system=["a", "b"], stratum=["x", "y"], random_seed=3,
        )  # fmt: skip
        kwargs = dict(system="system", stratum="stratum")
    else:
        test, cal = simulate_items(
            [[0.6, 0.3], [0.5, 0.8]], 0.8, 0.9, 40, calibration="random", m=30,
            system=["a", "b"], stratum=["x", "y"], random_seed=3,
        )  # fmt: skip
        kwargs = dict(system="system", stratum="stratum", design="random")
    binary = JudgeCounts.from_frames(test, cal, **kwargs)
    cat = CategoricalCounts.from_frames(test, cal, categories=[0, 1], **kwargs)
    back = cat.to_judge_counts(positive=1)
    assert back.dataset.identical(binary.dataset)
    assert back.design == binary.design == design
    again = CategoricalCounts.from_judge_counts(binary, categories=[0, 1])
    np.testing.assert_array_equal(again.test.values, cat.test.values)
    np.testing.assert_array_equal(again.calibration.values, cat.calibration.values)
    assert again.design == cat.design and again.systems == cat.systems


def test_k2_round_trip_keeps_shared_calibration_and_exact_counts():
    counts = simulate_counts(
        [0.3, 0.6, 0.9], [0.7, 0.8, 0.9], 0.85, 500, 40, 60, system=["a", "b", "c"],
        random_seed=4,
    ).pooled_calibration()  # fmt: skip
    cat = CategoricalCounts.from_judge_counts(counts)
    assert cat.categories == ["incorrect", "correct"]
    assert cat.calibration_shared_over == ("system",)
    assert cat.to_judge_counts().dataset.identical(counts.dataset)
    assert (cat.test.sel(category="correct") == counts.k).all()
    assert (cat.calibration.sel(truth="incorrect", verdict="incorrect") == counts.tn).all()
    assert (cat.calibration.sel(truth="correct").sum("verdict") == counts.m1).all()


def test_to_judge_counts_refuses_k3_and_unknown_positive():
    cat = CategoricalCounts.from_counts([1, 2, 3], categories=PREF)
    with pytest.raises(ValueError, match="K = 2"):
        cat.to_judge_counts(positive="A")
    two = CategoricalCounts.from_counts([1, 2], categories=["fail", "pass"])
    with pytest.raises(ValueError, match="Pass positive="):
        two.to_judge_counts()
    with pytest.raises(ValueError, match=re.escape("positive='PASS' is not one of")):
        two.to_judge_counts(positive="PASS")
    assert two.to_judge_counts(positive="fail").k.item() == 1


# ------------------------------------------------------------------------ reshaping


def test_sel_pool_and_shared_calibration():
    rng = np.random.default_rng(7)
    test = rng.integers(0, 20, (3, 2, 3))
    cal = rng.integers(0, 20, (3, 2, 3, 3))
    counts = CategoricalCounts.from_counts(
        test, cal, categories=PREF, system=["a", "b", "c"], stratum=["x", "y"]
    )
    assert counts.sel(system=["c", "a"]).systems == ["c", "a"]
    np.testing.assert_array_equal(counts.sel(stratum="y").test.values, test[:, 1:2])
    with pytest.raises(ValueError, match=r"system labels \['z'\] do not exist"):
        counts.sel(system="z")
    pooled = counts.pool("system")
    np.testing.assert_array_equal(pooled.test.values[0], test.sum(0))
    np.testing.assert_array_equal(pooled.calibration.values[0], cal.sum(0))
    assert pooled.systems == ["pooled"]
    shared = counts.pooled_calibration("system")
    assert shared.calibration_shared_over == ("system",)
    np.testing.assert_array_equal(shared.calibration.values[1], cal.sum(0))
    # copies of one shared set count once when pooled again
    np.testing.assert_array_equal(shared.pool("system").calibration.values[0], cal.sum(0))
    one_set = CategoricalCounts.from_counts(calibration=cal[0, 0], categories=PREF)
    attached = counts.with_calibration_from(one_set)
    assert attached.calibration_shared_over == ("system", "stratum")
    np.testing.assert_array_equal(attached.calibration.values[2, 1], cal[0, 0])
    other = CategoricalCounts.from_counts(calibration=cal[0, 0], categories=["A", "B", "tie"])
    with pytest.raises(ValueError, match="same, in the same order"):
        counts.with_calibration_from(other)


def test_to_frame_lists_every_cell():
    counts = CategoricalCounts.from_counts([3, 1], [[2, 0], [1, 1]], categories=["a", "b"])
    frame = counts.to_frame()
    assert len(frame) == 2 + 4 and frame["count"].sum() == 4 + 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counts._repr_html_()


def test_docs_page_examples_run_and_print_what_they_say(capsys):
    """Every block of docs/categorical.md runs; each print shows its trailing comment."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "categorical.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) >= 2
    for block in blocks:
        said = [
            line.rsplit("  # ", 1)[1].strip()
            for line in block.splitlines()
            if line.startswith("print(") and "  # " in line
        ]
        assert said and len(said) == block.count("\nprint(") + block.startswith("print(")
        exec(compile(block, "docs/categorical.md", "exec"), {})
        printed = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
        assert printed == [" ".join(s.split()) for s in said]


def test_boolean_labels_are_two_categories():
    # xarray's .sel with a list of booleans would be a mask: categories [False, True] must
    # select by label (a bug caught here).
    table = pd.DataFrame({"judge": [True, False, True, True], "human": [True, None, False, None]})
    counts = CategoricalCounts.from_frames(table)
    assert counts.categories == [False, True] and counts.design == "random"
    assert counts.to_judge_counts().dataset.identical(JudgeCounts.from_frames(table).dataset)
    ds = counts.ds.isel(category=[1, 0], truth=[1, 0])  # stored out of order
    assert CategoricalCounts(ds).ds.identical(counts.ds)


@st.composite
def _one_tables(draw):
    """Small one-table frames: spelled-with-spaces preference labels, some rows unlabelled."""
    size = draw(st.integers(1, 25))
    spelled = st.sampled_from(["A", " A", "tie", "tie ", "B", " B "])
    judge = draw(st.lists(spelled, min_size=size, max_size=size))
    human = draw(st.lists(st.one_of(st.none(), spelled), min_size=size, max_size=size))
    system = draw(st.lists(st.sampled_from(["s1", "s2"]), min_size=size, max_size=size))
    return pd.DataFrame({"system": system, "judge": judge, "human": human})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_one_tables())
def test_property_one_table_counts_equal_a_direct_tally(table):
    counts = CategoricalCounts.from_frames(table, system="system", categories=PREF)
    polars = CategoricalCounts.from_frames(pl.from_pandas(table), system="system", categories=PREF)
    assert polars.ds.identical(counts.ds)
    stripped = table.assign(
        judge=table["judge"].str.strip(),
        human=[None if pd.isna(h) else h.strip() for h in table["human"]],
    )
    systems = sorted(set(table["system"]))
    unlabelled = stripped[stripped["human"].isna()]
    labelled = stripped[stripped["human"].notna()]
    t, c = tally(unlabelled, labelled, PREF, systems, ["all"])
    np.testing.assert_array_equal(counts.test.values, t)
    np.testing.assert_array_equal(counts.calibration.values, c)
    assert counts.design == ("random" if len(labelled) else "stratified")


def test_repeated_item_ids_in_the_test_table_are_refused_not_counted_twice():
    # Before: item 1 with two rows was counted as two test items without a word.
    test = pd.DataFrame({"judge": ["A", "tie", "B", "A"], "id": [1, 1, 2, 3]})
    calib = pd.DataFrame({"judge": ["A", "B", "tie"], "human": ["A", "B", "tie"]})
    with pytest.raises(ValueError, match=r"unique within each system; 1 repeat: 1 \(system"):
        CategoricalCounts.from_frames(test, calib, judge="judge", human="human", item="id")
    # The same id under two systems is two items.
    test["system"] = ["x", "y", "x", "y"]
    counts = CategoricalCounts.from_frames(
        test, calib.assign(system="x"), judge="judge", human="human", item="id", system="system"
    )
    assert int(counts.test.sum()) == 4


def test_unknown_text_label_gets_no_false_text_or_number_hint():
    # Before: 'tie' was said to match the category 'A' "only as text or as a number" (both
    # are not numbers, and None == None matched).
    test = pd.DataFrame({"judge": ["A", "tie", "B"]})
    calib = pd.DataFrame({"judge": ["A", "B"], "human": ["A", "B"]})
    with pytest.raises(ValueError, match="Labels outside the categories") as err:
        CategoricalCounts.from_frames(
            test, calib, judge="judge", human="human", categories=["A", "B"]
        )
    assert "only as text or as a number" not in str(err.value)
    # A real look-alike keeps its hint.
    with pytest.raises(ValueError, match="only as text or as a number"):
        CategoricalCounts.from_frames(
            pd.DataFrame({"judge": ["1", "2"]}), judge="judge", human=None, categories=[1, 2]
        )
