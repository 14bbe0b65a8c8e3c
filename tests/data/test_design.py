"""The labelling design read from item tables (issue 15): each item counted once, one table in.

``JudgeCounts.from_frames`` infers the random design from one table with a human column, or
from labelled items whose ids (``item=``) are among the judged items; those items leave the
test counts ``n, k`` and enter only the calibration counts. Every count here is checked
against numbers worked out by hand (the arithmetic is beside each value) or against a plain
Python tally of the rows (:func:`reference`), on pandas, polars (eager and lazy), CSV and
Parquet.
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pandas as pd
import polars as pl
import pytest

from bayesjudge.data import JudgeCounts
from bayesjudge.warnings import BayesJudgeWarning, DesignWarning, MissingLabelWarning

N_ITEMS = 2000
# Judge: item i judged correct unless i % 4 == 0 (1,500 of 2,000). Labelled: i % 10 == 0
# (200 items); human label incorrect for i % 30 == 0 (67 of the 200), correct otherwise.
# Worked out by inclusion-exclusion over the multiples of 10, 20 (judge 0), 30 (human 0), 60:
#   m0 = #{i % 30 == 0} = 67; tn = #{i % 60 == 0} = 34 (human 0 and judge 0);
#   m1 = 200 - 67 = 133; tp = 200 - #{i % 20 == 0} - #{i % 30 == 0} + #{i % 60 == 0}
#      = 200 - 100 - 67 + 34 = 67;
#   n = 2000 - 200 = 1800; k = 1500 - (judge 1 among the labelled: 200 - 100 = 100) = 1400.
EXPECTED = {"n": 1800, "k": 1400, "m0": 67, "tn": 34, "m1": 133, "tp": 67}


def two_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """2,000 judged items (test) and the 200 of them humans labelled (calibration)."""
    i = np.arange(N_ITEMS)
    test = pd.DataFrame({"item": i, "judge": (i % 4 != 0).astype(np.int64)})
    lab = i[i % 10 == 0]
    calibration = pd.DataFrame(
        {
            "item": lab,
            "judge": (lab % 4 != 0).astype(np.int64),
            "human": (lab % 30 != 0).astype(np.int64),
        }
    )
    return test, calibration


def one_table() -> pd.DataFrame:
    """The same items as one table: the human label filled for the 200 labelled rows only."""
    test, calibration = two_tables()
    human = calibration.set_index("item")["human"]
    return test.assign(human=test["item"].map(human).astype("Int64"))


def counts_of(counts: JudgeCounts) -> dict[str, int]:
    return {f: int(counts.dataset[f].sum()) for f in EXPECTED}


def reference(test: pd.DataFrame, calibration: pd.DataFrame, groups=("system",)):
    """Count by hand in Python: labelled (system, item) pairs leave the test counts."""
    labelled = {tuple(r[g] for g in (*groups, "item")) for _, r in calibration.iterrows()}
    out: dict[tuple, Counter] = {}
    for _, r in test.iterrows():
        key = tuple(r[g] for g in groups)
        if tuple(r[g] for g in (*groups, "item")) not in labelled:
            c = out.setdefault(key, Counter())
            c["n"] += 1
            c["k"] += int(r["judge"])
    for _, r in calibration.iterrows():
        key = tuple(r[g] for g in groups)
        c = out.setdefault(key, Counter())
        c["m1" if r["human"] else "m0"] += 1
        c["tp" if r["human"] else "tn"] += int(r["judge"] == r["human"])
    return out


# ------------------------------------------------------------- items counted once (item=)


def _engine(frame: pd.DataFrame, engine: str, tmp_path, name: str):
    if engine == "pandas":
        return frame
    if engine == "polars":
        return pl.from_pandas(frame)
    if engine == "polars-lazy":
        return pl.from_pandas(frame).lazy()
    if engine == "csv":
        path = tmp_path / f"{name}.csv"
        frame.to_csv(path, index=False)
        return path
    path = tmp_path / f"{name}.parquet"
    frame.to_parquet(path, index=False)
    return str(path)


ENGINES = ["pandas", "polars", "polars-lazy", "csv", "parquet"]


@pytest.mark.parametrize("engine", ENGINES)
def test_labelled_items_among_the_judged_are_counted_once(engine, tmp_path):
    # The case: 2,000 judged items of which 200 were also labelled gave n = 2000
    # and m0 + m1 = 200 (each labelled item counted twice). Now n = 1800, m0 + m1 = 200.
    test, calibration = two_tables()
    tables = (
        _engine(test, engine, tmp_path, "test"),
        _engine(calibration, engine, tmp_path, "cal"),
    )
    with pytest.warns(DesignWarning, match=r"200 labelled items .* 'random'") as record:
        counts = JudgeCounts.from_frames(*tables, item="item")
    assert counts_of(counts) == EXPECTED
    assert counts.design == "random" and counts.dataset.attrs["design"] == "random"
    assert "n, k count the 1800 unlabelled items" in str(record[0].message)
    assert record[0].filename == __file__  # points at the caller, not into bayesjudge
    assert issubclass(DesignWarning, BayesJudgeWarning)
    assert "1800 unlabelled items, 200 labelled items (random labelling design)" in repr(counts)


def test_declared_random_design_counts_the_same_without_a_warning():
    test, calibration = two_tables()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counts = JudgeCounts.from_frames(test, calibration, item="item", design="random")
    assert counts_of(counts) == EXPECTED and counts.design == "random"


def test_separate_calibration_set_stays_stratified():
    # No labelled id among the judged ids: separate sets, the default design, nothing removed.
    test, calibration = two_tables()
    calibration = calibration.assign(item=calibration["item"] + N_ITEMS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counts = JudgeCounts.from_frames(test, calibration, item="item")
    assert counts.design == "stratified"
    assert counts_of(counts) == {**EXPECTED, "n": 2000, "k": 1500}


def test_without_item_nothing_is_matched_and_design_is_declared():
    # Without item= overlap cannot be seen: the tables are counted as given (the labelled
    # items twice, as before), design "stratified" unless declared.
    test, calibration = two_tables()
    counts = JudgeCounts.from_frames(test, calibration)
    assert counts_of(counts) == {**EXPECTED, "n": 2000, "k": 1500}
    assert counts.design == "stratified"
    # design="random" without item=: the caller removed the labelled items from test.
    unlabelled = test[test["item"] % 10 != 0]
    counts = JudgeCounts.from_frames(unlabelled, calibration, design="random")
    assert counts_of(counts) == EXPECTED and counts.design == "random"


def test_calibration_without_the_item_column_is_not_matched():
    test, calibration = two_tables()
    counts = JudgeCounts.from_frames(test, calibration.drop(columns="item"), item="item")
    assert counts.design == "stratified" and counts_of(counts)["n"] == 2000


def paired_tables():
    """Two systems judge items 0..399 (strata x/y); a labels i % 8 == 0, b labels i % 8 == 4.

    System a judges i correct unless i % 3 == 0, b unless i % 5 == 0; human label correct
    unless i % 6 == 0.
    """
    i = np.arange(400)
    stratum = np.where(i % 2 == 1, "x", "y")
    test = pd.concat(
        [
            pd.DataFrame({"system": "a", "stratum": stratum, "item": i, "judge": i % 3 != 0}),
            pd.DataFrame({"system": "b", "stratum": stratum, "item": i, "judge": i % 5 != 0}),
        ],
        ignore_index=True,
    ).astype({"judge": np.int64})
    rows = test[
        ((test.system == "a") & (test.item % 8 == 0))
        | ((test.system == "b") & (test.item % 8 == 4))
    ]
    calibration = rows.assign(human=(rows["item"] % 6 != 0).astype(np.int64))
    return test, calibration.reset_index(drop=True)


def test_per_system_labelled_items_and_the_joint_table():
    test, calibration = paired_tables()
    counts = JudgeCounts.from_frames(
        test, calibration, system="system", stratum="stratum", item="item", design="random"
    )
    ref = reference(test, calibration, groups=("system", "stratum"))
    for (s, t), c in ref.items():
        got = counts.sel(system=s, stratum=t)
        for f in EXPECTED:
            assert int(got.dataset[f].item()) == c[f], (s, t, f)
    # Each system: 400 judged, 50 labelled (i % 8 == 0 for a, i % 8 == 4 for b) -> n = 350.
    assert counts.n.sum("stratum").values.tolist() == [350, 350]
    # The joint table counts only items unlabelled for both systems: i % 4 != 0, 300 items
    # (all even i are stratum y, so y holds the 100 of i % 4 == 2 and x the 200 odd ones).
    assert counts.joint.sum("pattern").values.tolist() == [200, 100]
    unlabelled = test[test["item"] % 4 != 0]
    wide = unlabelled.pivot(index="item", columns="system", values="judge")
    pattern = wide["a"].astype(str) + wide["b"].astype(str)
    expected = Counter(zip(np.where(wide.index % 2 == 1, "x", "y"), pattern, strict=True))
    got = {
        (t, p): int(counts.joint.sel(stratum=t, pattern=p))
        for t in counts.strata
        for p in counts.joint["pattern"].values
    }
    assert {k: v for k, v in got.items() if v} == dict(expected)


@pytest.mark.parametrize("engine", ["polars", "polars-lazy", "csv"])
def test_joint_table_agrees_across_engines(engine, tmp_path):
    test, calibration = paired_tables()
    base = JudgeCounts.from_frames(
        test, calibration, system="system", stratum="stratum", item="item", design="random"
    )
    other = JudgeCounts.from_frames(
        _engine(test, engine, tmp_path, "test"),
        _engine(calibration, engine, tmp_path, "cal"),
        system="system",
        stratum="stratum",
        item="item",
        design="random",
    )
    for f in EXPECTED:
        np.testing.assert_array_equal(base.dataset[f].values, other.dataset[f].values)
    np.testing.assert_array_equal(base.joint.values, other.joint.values)


def test_lazy_polars_collects_only_small_tables(monkeypatch):
    # 2,000 judged rows: the counting queries, the 200 labelled rows and the <= 200 test rows
    # with a labelled id are collected, never the 2,000 items.
    test, calibration = two_tables()
    heights = []
    original = pl.LazyFrame.collect

    def spy(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        heights.append(out.height)
        return out

    monkeypatch.setattr(pl.LazyFrame, "collect", spy)
    counts = JudgeCounts.from_frames(
        pl.from_pandas(test).lazy(), pl.from_pandas(calibration).lazy(), item="item",
        design="random",
    )  # fmt: skip
    assert counts_of(counts) == EXPECTED
    assert heights and max(heights) <= 200


def test_a_labelled_item_without_a_test_verdict_is_not_subtracted_twice():
    # The test row of item 0 has no verdict: it is dropped (MissingLabelWarning) and so was
    # never in n; the item still counts once, in the calibration counts.
    test, calibration = two_tables()
    test["judge"] = test["judge"].astype(object)
    test.loc[test["item"] == 0, "judge"] = None
    with pytest.warns(MissingLabelWarning, match="Dropped 1 of 2000 rows"):
        counts = JudgeCounts.from_frames(test, calibration, item="item", design="random")
    assert counts_of(counts) == EXPECTED  # item 0 was judged incorrect: k unchanged


# ----------------------------------------------------------------------- the errors


def test_stratified_declared_with_overlapping_items_is_refused():
    test, calibration = two_tables()
    with pytest.raises(ValueError, match=r"design='stratified'.*200 of the 200.*counted twice"):
        JudgeCounts.from_frames(test, calibration, item="item", design="stratified")


def test_labelled_items_partly_among_the_judged_is_a_mix_of_designs():
    test, calibration = two_tables()
    extra = calibration.head(3).assign(item=[5001, 5002, 5003])
    with pytest.raises(ValueError) as info:
        JudgeCounts.from_frames(test, pd.concat([calibration, extra]), item="item")
    message = str(info.value)
    assert "Only 200 of the 203 labelled items" in message
    assert "5001 (system 'all')" in message
    assert "add the missing ones to the test table" in message  # fix 1: random design
    assert "remove the 200 overlapping items from the test table" in message  # fix 2
    with pytest.raises(ValueError, match="Only 200 of the 203"):
        JudgeCounts.from_frames(test, pd.concat([calibration, extra]), item="item", design="random")


def test_a_labelled_item_judged_differently_in_the_two_tables_is_named():
    test, calibration = two_tables()
    calibration.loc[calibration["item"] == 30, "judge"] = 0  # test says 1 (30 % 4 != 0)
    with pytest.raises(ValueError, match=r"1 of the 200 labelled items .*30 \(system 'all': "
                       r"calibration 0, test 1\)"):  # fmt: skip
        JudgeCounts.from_frames(test, calibration, item="item")


def test_a_labelled_item_in_another_stratum_is_named():
    test, calibration = paired_tables()
    calibration.loc[0, "stratum"] = "x"  # item 0 is in stratum y in the test table
    with pytest.raises(ValueError, match=r"different stratum.*0 \(system 'a': 'x' vs 'y'\)"):
        JudgeCounts.from_frames(test, calibration, system="system", stratum="stratum",
                                item="item")  # fmt: skip


def test_ids_that_match_only_as_text_are_refused():
    # 7 (integer) and "7" (text) are different ids; silently unmatched they would count the
    # labelled items twice, so the type clash is an error naming ids.
    test, calibration = two_tables()
    with pytest.raises(ValueError, match=r"integer ids in the test table and text ids.*'0'"):
        JudgeCounts.from_frames(test, calibration.astype({"item": str}), item="item")
    # Text ids that differ from every test id as text too name other items: no overlap.
    other = calibration.assign(item="cal-" + calibration["item"].astype(str))
    counts = JudgeCounts.from_frames(test, other, item="item")
    assert counts.design == "stratified" and counts_of(counts)["n"] == 2000


def test_ids_007_and_7_are_different_items(tmp_path):
    # In CSV files ids are text: "007" labels another item than the judged "7".
    (tmp_path / "t.csv").write_text("item,judge\n7,yes\n8,no\n9,yes\n")
    (tmp_path / "c.csv").write_text("item,judge,human\n007,yes,yes\n8,no,no\n")
    with pytest.raises(ValueError, match=r"Only 1 of the 2 labelled items.*'007'"):
        JudgeCounts.from_frames(tmp_path / "t.csv", tmp_path / "c.csv", item="item")
    (tmp_path / "c.csv").write_text("item,judge,human\n7,yes,yes\n8,no,no\n")
    with pytest.warns(DesignWarning):
        counts = JudgeCounts.from_frames(tmp_path / "t.csv", tmp_path / "c.csv", item="item")
    # item 9 unlabelled (judged yes); 7 labelled correct, judged yes; 8 labelled incorrect, no.
    assert counts_of(counts) == {"n": 1, "k": 1, "m0": 1, "tn": 1, "m1": 1, "tp": 1}


def test_repeated_and_missing_labelled_ids_are_refused():
    test, calibration = two_tables()
    twice = pd.concat([calibration, calibration.head(2)])
    with pytest.raises(ValueError, match=r"unique within each system.*2 repeat: 0 \(system "
                       r"'all', 2 rows\), 10"):  # fmt: skip
        JudgeCounts.from_frames(test, twice, item="item")
    missing = calibration.astype({"item": object})
    missing.loc[0, "item"] = None
    with pytest.raises(ValueError, match=r"'item' \(item\) in the calibration table has 1 row "
                       r"with a human label but a missing item id"):  # fmt: skip
        JudgeCounts.from_frames(test, missing, item="item")
    doubled = pd.concat([test, test[test["item"] == 10]])
    with pytest.raises(ValueError, match=r"1 labelled items repeat there: 10 \(system 'all'"):
        JudgeCounts.from_frames(doubled, calibration, item="item")


def test_design_value_is_checked():
    test, calibration = two_tables()
    with pytest.raises(ValueError, match="design"):
        JudgeCounts.from_frames(test, calibration, design="Random-ish")


# ------------------------------------------------------------------------ one table in


def _one_engine(frame: pd.DataFrame, engine: str, tmp_path):
    if engine == "pandas":
        return frame
    if engine == "pandas-float":  # NaN for the missing labels, the usual pandas spelling
        return frame.astype({"human": float})
    if engine == "polars":
        return pl.from_pandas(frame)
    if engine == "polars-lazy":
        return pl.from_pandas(frame).lazy()
    if engine == "csv":  # empty cells
        path = tmp_path / "one.csv"
        frame.to_csv(path, index=False)
        return path
    path = tmp_path / "one.parquet"
    frame.to_parquet(path, index=False)
    return path


@pytest.mark.parametrize(
    "engine", ["pandas", "pandas-float", "polars", "polars-lazy", "csv", "parquet"]
)
def test_one_table_with_a_human_column_is_the_random_design(engine, tmp_path):
    table = _one_engine(one_table(), engine, tmp_path)
    with warnings.catch_warnings():
        # Empty human labels are the design, not missing data: no MissingLabelWarning (and no
        # DesignWarning: one table states the design by its form).
        warnings.simplefilter("error")
        counts = JudgeCounts.from_frames(table)
    assert counts_of(counts) == EXPECTED
    assert counts.design == "random"


def test_one_table_and_two_tables_agree_with_the_joint_table():
    test, calibration = paired_tables()
    human = calibration.set_index(["system", "item"])["human"]
    key = pd.MultiIndex.from_frame(test[["system", "item"]])
    table = test.assign(human=human.reindex(key).to_numpy())  # NaN where unlabelled
    one = JudgeCounts.from_frames(table, system="system", stratum="stratum", item="item")
    two = JudgeCounts.from_frames(
        test, calibration, system="system", stratum="stratum", item="item", design="random"
    )
    assert one.design == two.design == "random"
    for f in EXPECTED:
        np.testing.assert_array_equal(one.dataset[f].values, two.dataset[f].values)
    np.testing.assert_array_equal(one.joint.values, two.joint.values)
    assert one.joint.sum().item() == 300


def test_one_table_drops_rows_without_a_verdict_only():
    table = pd.DataFrame(
        {
            "judge": ["yes", None, "no", None, "yes", " "],
            "human": ["yes", "no", None, None, "  ", "no"],
        }
    )
    # Rows 2 and 4 have no verdict (None) and row 6 a blank one: dropped, labelled or not.
    # Row 1 labelled correct, judged correct; rows 3 and 5 unlabelled (None, blank label).
    with pytest.warns(MissingLabelWarning, match=r"Dropped 3 of 6 rows.*'judge': 3 rows") as w:
        counts = JudgeCounts.from_frames(table)
    assert "'human'" not in str(w[0].message)
    assert counts_of(counts) == {"n": 2, "k": 1, "m0": 0, "tn": 0, "m1": 1, "tp": 1}


def test_one_table_with_no_label_is_test_only():
    # No labelled row: nothing to match, the table is test-only, the design as given.
    table = one_table().assign(human=pd.array([pd.NA] * N_ITEMS, dtype="Int64"))
    counts = JudgeCounts.from_frames(table)
    assert counts_of(counts) == {"n": 2000, "k": 1500, "m0": 0, "tn": 0, "m1": 0, "tp": 0}
    assert counts.design == "stratified"
    assert JudgeCounts.from_frames(table, design="stratified").design == "stratified"
    assert JudgeCounts.from_frames(table, design="random").design == "random"


def test_one_table_with_every_row_labelled_has_no_unlabelled_item():
    _, calibration = two_tables()
    counts = JudgeCounts.from_frames(calibration)  # judge and human on every row
    assert counts_of(counts) == {**EXPECTED, "n": 0, "k": 0}
    assert counts.design == "random"


def test_one_table_declared_stratified_is_refused():
    with pytest.raises(ValueError, match=r"design='stratified' was passed with one table .*"
                       r"200 human-labelled rows.*pass design='random'"):  # fmt: skip
        JudgeCounts.from_frames(one_table(), design="stratified")


def test_human_none_counts_a_table_with_a_human_column_as_test_items():
    counts = JudgeCounts.from_frames(one_table(), human=None)
    assert counts_of(counts) == {"n": 2000, "k": 1500, "m0": 0, "tn": 0, "m1": 0, "tp": 0}
    test, calibration = two_tables()
    with pytest.raises(ValueError, match="human=None"):
        JudgeCounts.from_frames(test, calibration, human=None)


def test_a_human_column_in_the_test_table_is_not_read_beside_a_calibration_table():
    # Two tables: as before, the test table's human column plays no part.
    test, calibration = two_tables()
    with_human = test.assign(human="garbage")
    a = JudgeCounts.from_frames(with_human, calibration.assign(item=calibration.item + 5000))
    assert counts_of(a) == {**EXPECTED, "n": 2000, "k": 1500} and a.design == "stratified"


def test_one_table_with_strata_and_systems_exact_counts(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text(
        "model,topic,judge,human\n"
        "a,x,yes,\n"  # unlabelled, judged correct
        "a,x,no,no\n"  # labelled incorrect, judge agrees
        "a,y,yes,no\n"  # labelled incorrect, judge disagrees
        "b,x,no,\n"  # unlabelled, judged incorrect
        "b,x,yes,yes\n"  # labelled correct, judge agrees
        "b,y,no,\n"
    )
    counts = JudgeCounts.from_frames(path, system="model", stratum="topic")
    frame = counts.to_frame().set_index(["system", "stratum"])
    assert frame.loc[("a", "x")].tolist() == [1, 1, 1, 1, 0, 0]
    assert frame.loc[("a", "y")].tolist() == [0, 0, 1, 0, 0, 0]
    assert frame.loc[("b", "x")].tolist() == [1, 0, 0, 0, 1, 1]
    assert frame.loc[("b", "y")].tolist() == [1, 0, 0, 0, 0, 0]
    assert counts.design == "random"


def test_one_table_item_labelled_and_unlabelled_or_labelled_twice_is_refused():
    # Item 2 has a labelled and an unlabelled row: it would be counted in both sets.
    table = pd.DataFrame({"item": [1, 2, 2, 3], "judge": [1, 0, 0, 1], "human": [None, 1, None, 0]})
    message = r"have a row with a human label and another without one.*2 \(system 'all'\)"
    with pytest.raises(ValueError, match=message):
        JudgeCounts.from_frames(table, item="item")
    # Without item= rows cannot be told apart: every row counts (n = 2, m0 + m1 = 2).
    assert counts_of(JudgeCounts.from_frames(table)) == {
        "n": 2, "k": 1, "m0": 1, "tn": 0, "m1": 1, "tp": 0,
    }  # fmt: skip
    twice = table.assign(human=[None, 1, 1, 0])
    with pytest.raises(ValueError, match=r"unique within each system.*2 \(system 'all', 2 rows"):
        JudgeCounts.from_frames(twice, item="item")
