"""JuryCounts: verdict patterns of several judges, from counts and from item tables."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from bayesjudge.data import JudgeCounts
from bayesjudge.data.jury import JuryCounts, pattern_strings
from bayesjudge.warnings import DesignWarning, MissingLabelWarning


def _long_table(seed: int = 0, n_items: int = 60, judges=("a", "b", "c"), missing=0.1):
    """A long (item, judge) table with some missing verdicts and a human column."""
    rng = np.random.default_rng(seed)
    rows = []
    for system in ("s1", "s2"):
        for i in range(n_items):
            truth = int(rng.random() < 0.6)
            stratum = "x" if i % 3 else "y"
            labelled = i < 20
            for j in judges:
                verdict = truth if rng.random() < 0.8 else 1 - truth
                rows.append(
                    {
                        "system": system,
                        "stratum": stratum,
                        "item": f"{i:03d}",
                        "grader": j,
                        "verdict": None if rng.random() < missing else verdict,
                        "human": truth if labelled else None,
                    }
                )
    return pd.DataFrame(rows)


def test_from_counts_canonical_order_and_repeats_refused():
    counts = JuryCounts.from_counts(["0-", "11", "10"], test=[4, 2, 4], judges=["a", "b"])
    assert counts.patterns == ["11", "10", "0-"]
    assert counts.test.values.ravel().tolist() == [2, 4, 4]
    assert counts.verdicts.tolist() == [[1, 1], [1, 0], [0, -1]]
    # A repeated pattern is refused, not added up (tests/data/test_jury_counts_hostile_s9.py).
    with pytest.raises(ValueError, match=r"repeated pattern\(s\) '0-' \(positions 0, 2\)"):
        JuryCounts.from_counts(["0-", "11", "0-", "10"], test=[1, 2, 3, 4], judges=["a", "b"])


def test_marginal_matches_hand_counts():
    counts = JuryCounts.from_counts(
        ["111", "110", "000", "0-0"],
        test=[50, 10, 30, 5],
        labelled=[[0, 1, 12, 1], [15, 3, 0, 0]],
        judges=["gpt", "claude", "llama"],
    )
    m = counts.marginal()
    # judge "claude" (position 1) graded 50 + 10 + 30 test items; said correct on 60.
    assert m["n"].sel(judge="claude").item() == 90
    assert m["k"].sel(judge="claude").item() == 60
    # llama: truth-0 items graded 1 + 12 + 1 = 14, all with verdict 0 ("110", "000", "0-0").
    assert m["m0"].sel(judge="llama").item() == 14
    assert m["tn"].sel(judge="llama").item() == 14
    assert m["tn"].sel(judge="gpt").item() == 13  # "110" is a false positive of gpt
    assert m["m1"].sel(judge="llama").item() == 18
    assert m["tp"].sel(judge="llama").item() == 15


def test_for_judge_and_pair_table():
    counts = JuryCounts.from_counts(
        ["11", "10", "01", "0-"],
        test=[40, 5, 3, 20],
        labelled=[[1, 0, 0, 0], [0, 2, 0, 0]],
        judges=["a", "b"],
    )
    single = counts.for_judge("a")
    assert isinstance(single, JudgeCounts)
    assert (single.n.item(), single.k.item()) == (68, 45)
    assert (single.m0.item(), single.tn.item(), single.m1.item(), single.tp.item()) == (1, 0, 2, 2)
    table = counts.pair_table("a", "b").values[0, 0]
    assert table.tolist() == [[0, 3], [5, 40]]  # the 20 items b did not grade are left out
    with pytest.raises(ValueError, match="'z' is not one of the judges"):
        counts.pair_table("a", "z")


def test_sel_judges_marginalises_patterns():
    counts = JuryCounts.from_counts(
        ["111", "110", "-10", "--1"], test=[5, 6, 7, 8], judges=["a", "b", "c"]
    )
    two = counts.sel(judge=["a", "c"])
    assert two.judges == ["a", "c"]
    # "111" -> "11", "110" -> "10", "-10" -> "-0"; "--1" -> "-1"
    assert dict(zip(two.patterns, two.test.values.ravel().tolist(), strict=True)) == {
        "11": 5,
        "10": 6,
        "-1": 8,
        "-0": 7,
    }
    one = counts.sel(judge="b")
    assert dict(zip(one.patterns, one.test.values.ravel().tolist(), strict=True)) == {"1": 18}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"patterns": ["1x"]}, "one character per judge"),
        ({"patterns": ["11", "1"]}, "lengths"),
        ({"patterns": ["--"]}, "no verdict at all"),
        ({"test": [1, -2]}, r"non-negative whole-number count; got \[-2\]"),
        ({"test": [1.5, 2]}, r"non-negative whole-number count; got \[1.5\]"),
        ({"test": [1, 2, 3]}, "shape"),
        ({"judges": ["a", "a"]}, "unique"),
        ({"design": "clustered"}, "design"),
    ],
)
def test_from_counts_refuses_bad_input(kwargs, match):
    args = {"patterns": ["11", "10"], "test": [1, 2], "judges": ["a", "b"]} | kwargs
    with pytest.raises(ValueError, match=match):
        JuryCounts.from_counts(args.pop("patterns"), args.pop("test"), **args)


def test_pattern_strings_round_trip():
    m = np.array([[1, 0, -1], [-1, -1, 1]])
    assert pattern_strings(m) == ["10-", "--1"]


def test_from_frames_one_table_random_design_counts_every_row():
    frame = _long_table()
    with pytest.warns(MissingLabelWarning, match="by judge"):
        counts = JuryCounts.from_frames(
            frame,
            judges="grader",
            item="item",
            judge="verdict",
            system="system",
            stratum="stratum",
        )
    assert counts.design == "random"
    assert counts.judges == ["a", "b", "c"]
    # Every item is counted exactly once (as labelled or test), none with all verdicts missing.
    items = frame.groupby(["system", "item"])["verdict"].apply(lambda v: v.notna().any()).sum()
    assert int(counts.test.sum() + counts.labelled.sum()) == items
    # Each judge's marginal counts equal a direct count of its rows.
    m = counts.marginal()
    for (system, stratum, grader), rows in frame.dropna(subset=["verdict"]).groupby(
        ["system", "stratum", "grader"]
    ):
        unl = rows[rows.human.isna()]
        lab = rows[rows.human.notna()]
        sel = {"system": system, "stratum": stratum, "judge": grader}
        assert m["n"].sel(sel).item() == len(unl)
        assert m["k"].sel(sel).item() == int(unl.verdict.sum())
        assert m["m1"].sel(sel).item() == int((lab.human == 1).sum())
        assert m["tp"].sel(sel).item() == int(((lab.human == 1) & (lab.verdict == 1)).sum())
        assert m["tn"].sel(sel).item() == int(((lab.human == 0) & (lab.verdict == 0)).sum())


def test_from_frames_marginal_equals_the_single_judge_reader():
    """Separate calibration set: each judge's counts equal JudgeCounts.from_frames on its rows."""
    frame = _long_table(seed=3, missing=0.0)
    test = frame[frame.human.isna()].drop(columns="human")
    calib = frame[frame.human.notna()].assign(item=lambda d: "c" + d.item)
    counts = JuryCounts.from_frames(
        test,
        calib,
        judges="grader",
        item="item",
        judge="verdict",
        system="system",
        stratum="stratum",
    )
    assert counts.design == "stratified"
    for j in counts.judges:
        single = JudgeCounts.from_frames(
            test[test.grader == j],
            calib[calib.grader == j],
            judge="verdict",
            system="system",
            stratum="stratum",
        )
        mine = counts.for_judge(j)
        for field in ("n", "k", "m0", "tn", "m1", "tp"):
            np.testing.assert_array_equal(mine[field].values, single[field].values, err_msg=field)


def test_from_frames_matching_ids_is_the_random_design():
    frame = _long_table(seed=4, missing=0.0)
    test = frame.drop(columns="human")
    calib = frame[frame.human.notna()]
    with pytest.warns(DesignWarning, match="random"):
        counts = JuryCounts.from_frames(
            test, calib, judges="grader", item="item", judge="verdict", system="system"
        )
    assert counts.design == "random"
    assert int(counts.labelled.sum()) == calib.groupby(["system", "item"]).ngroups
    assert (
        int(counts.test.sum() + counts.labelled.sum()) == test.groupby(["system", "item"]).ngroups
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        JuryCounts.from_frames(
            test,
            calib,
            judges="grader",
            item="item",
            judge="verdict",
            system="system",
            design="random",
        )
    with pytest.raises(ValueError, match="that is the random design"):
        JuryCounts.from_frames(
            test,
            calib,
            judges="grader",
            item="item",
            judge="verdict",
            system="system",
            design="stratified",
        )
    mixed = pd.concat([calib, calib.iloc[:3].assign(item="new")])
    with pytest.raises(ValueError, match="a mix of designs"):
        JuryCounts.from_frames(
            test, mixed, judges="grader", item="item", judge="verdict", system="system"
        )


def test_from_frames_refuses_repeats_strata_and_label_clashes():
    base = pd.DataFrame(
        {"item": [1, 1, 2], "grader": ["a", "b", "a"], "judge": [1, 0, 1], "s": ["x", "x", "x"]}
    )
    with pytest.raises(ValueError, match=r"more than one row for the same \(item, judge\)"):
        JuryCounts.from_frames(pd.concat([base, base.iloc[:1]]), judges="grader", item="item")
    clash = base.assign(s=["x", "y", "x"])
    with pytest.raises(ValueError, match="more than one stratum"):
        JuryCounts.from_frames(clash, judges="grader", item="item", stratum="s")
    two_labels = base.assign(human=[1, 0, None])
    with pytest.raises(ValueError, match="different human labels"):
        JuryCounts.from_frames(two_labels, judges="grader", item="item")
    with pytest.raises(ValueError, match="'rater'"):
        JuryCounts.from_frames(base, judges="rater", item="item")
    with pytest.raises(ValueError, match="missing or empty"):
        JuryCounts.from_frames(base.assign(item=[1, None, 2]), judges="grader", item="item")
    with pytest.raises(ValueError, match="K-category verdicts of several judges"):
        JuryCounts.from_frames(base.assign(judge=["A", "tie", "B"]), judges="grader", item="item")
    with pytest.raises(ValueError, match="not recognised"):
        JuryCounts.from_frames(
            base.assign(judge=["yes", "maybe", "yes"]), judges="grader", item="item"
        )


def test_from_frames_ids_by_value_and_type_and_hostile_names(tmp_path):
    frame = pd.DataFrame(
        {
            "item": ["007", "7", "007", "7"],
            "grader": ["<b>gpt</b>", "<b>gpt</b>", "$x\nnew", "$x\nnew"],
            "judge": ["yes", "no", "no", "no"],
        }
    )
    counts = JuryCounts.from_frames(frame, judges="grader", item="item")
    assert counts.judges == ["$x\nnew", "<b>gpt</b>"]
    assert sorted(counts.patterns) == ["00", "01"]  # "007" and "7" are two items
    path = tmp_path / "jury.csv"
    frame.to_csv(path, index=False)
    from_file = JuryCounts.from_frames(path, judges="grader", item="item")
    assert from_file.test.values.tolist() == counts.test.values.tolist()


@pytest.mark.parametrize("engine", ["polars", "duckdb", "pyarrow"])
def test_from_frames_engines_agree(engine):
    frame = _long_table(seed=7, n_items=15)
    kwargs = {"judges": "grader", "item": "item", "judge": "verdict", "system": "system"}
    with pytest.warns(MissingLabelWarning):
        expected = JuryCounts.from_frames(frame, **kwargs)
    if engine == "polars":
        pl = pytest.importorskip("polars")
        native = pl.from_pandas(frame).lazy()
    elif engine == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        native = duckdb.from_df(frame)
    else:
        pa = pytest.importorskip("pyarrow")
        native = pa.Table.from_pandas(frame, preserve_index=False)
    with pytest.warns(MissingLabelWarning):
        got = JuryCounts.from_frames(native, **kwargs)
    assert got.patterns == expected.patterns
    np.testing.assert_array_equal(got.test.values, expected.test.values)
    np.testing.assert_array_equal(got.labelled.values, expected.labelled.values)
