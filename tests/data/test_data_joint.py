"""Tests for the joint verdict tables of JudgeCounts (paired systems on shared items)."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pandas as pd
import polars as pl
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesjudge as bj
from bayesjudge.data import JudgeCounts, all_patterns
from bayesjudge.warnings import BayesJudgeWarning, MissingLabelWarning

# Hand-built test table: items 1..5, systems a, b, c, strata x/y.
#   item 1 (x): a=1 b=0 c=1  -> "101"
#   item 2 (x): a=1 b=1 c=1  -> "111"
#   item 3 (y): a=0 b=0 c=1  -> "001"
#   item 4 (y): a=1 b=1 c=1  -> "111"
#   item 5 (x): a=0 b=1      -> c missing: not shared
#   item 6 (y): a=1 b=1 c=None (missing verdict, row dropped with a warning): not shared
ROWS = [
    (1, "a", "x", "yes"),
    (1, "b", "x", "no"),
    (1, "c", "x", "yes"),
    (2, "c", "x", "yes"),  # rows in any order
    (2, "a", "x", "yes"),
    (2, "b", "x", "yes"),
    (3, "a", "y", "no"),
    (3, "b", "y", "no"),
    (3, "c", "y", "yes"),
    (4, "a", "y", "yes"),
    (4, "b", "y", "yes"),
    (4, "c", "y", "yes"),
    (5, "a", "x", "no"),
    (5, "b", "x", "yes"),
    (6, "a", "y", "yes"),
    (6, "b", "y", "yes"),
    (6, "c", "y", None),
]
# Expected joint table, counted by hand from the comment above.
EXPECTED = {("x", "101"): 1, ("x", "111"): 1, ("y", "001"): 1, ("y", "111"): 1}


def hand_frame() -> pd.DataFrame:
    return pd.DataFrame(ROWS, columns=["item", "model", "split", "verdict"])


def hand_counts() -> JudgeCounts:
    with pytest.warns(MissingLabelWarning, match="Dropped 1 of 17 rows"):
        return JudgeCounts.from_frames(
            hand_frame(), judge="verdict", system="model", stratum="split", item="item"
        )


def as_dict(joint: xr.DataArray) -> dict:
    return {
        (t, p): int(joint.sel(stratum=t, pattern=p))
        for t in joint.stratum.values.tolist()
        for p in joint.pattern.values.tolist()
        if joint.sel(stratum=t, pattern=p) > 0
    }


# ------------------------------------------------------------------------ from_frames


def test_joint_from_frames_matches_hand_count():
    counts = hand_counts()
    assert counts.has_joint
    joint = counts.joint
    assert joint.dims == ("stratum", "pattern")
    assert as_dict(joint) == EXPECTED
    # Only observed patterns, "1…1" first (descending).
    assert joint.pattern.values.tolist() == ["111", "101", "001"]
    assert counts.joint_verdicts.dims == ("pattern", "system")
    assert counts.joint_verdicts.values.tolist() == [[1, 1, 1], [1, 0, 1], [0, 0, 1]]
    # n, k still count every item of each system (item 5 and item 6 included).
    assert counts.n.sum("stratum").values.tolist() == [6, 6, 4]
    assert counts.k.sum("stratum").values.tolist() == [4, 4, 4]
    assert joint.attrs["shared_items"] == 4
    assert joint.attrs["unshared_items"] == {"a": 2, "b": 2, "c": 0}
    assert joint.attrs["systems"] == ["a", "b", "c"]
    text = repr(counts)
    assert "4 test items judged for all 3 systems" in text
    assert "a: 2, b: 2, c: 0" in text
    assert "Joint verdict table" in counts._repr_html_()


def test_joint_from_frames_is_engine_and_order_independent():
    frame = hand_frame()
    shuffled = frame.sample(frac=1.0, random_state=3)
    with pytest.warns(MissingLabelWarning):
        a = JudgeCounts.from_frames(
            shuffled, judge="verdict", system="model", stratum="split", item="item"
        )
    with pytest.warns(MissingLabelWarning):
        b = JudgeCounts.from_frames(
            pl.from_pandas(frame).lazy(),
            judge="verdict",
            system="model",
            stratum="split",
            item="item",
        )
    reference = hand_counts()
    assert a.dataset.identical(reference.dataset)
    assert b.dataset.identical(reference.dataset)


def test_joint_from_frames_without_item_has_none():
    with pytest.warns(MissingLabelWarning):
        counts = JudgeCounts.from_frames(
            hand_frame(), judge="verdict", system="model", stratum="split"
        )
    assert not counts.has_joint
    assert counts.joint is None and counts.joint_verdicts is None
    with pytest.raises(ValueError, match="needs a joint verdict table"):
        counts.joint_table()
    with pytest.raises(ValueError, match="needs a joint verdict table"):
        counts.pair_table("a", "b")


def test_joint_calibration_table_unaffected():
    cal = pd.DataFrame(
        {"model": ["a", "b", "c"], "split": "x", "verdict": [1, 0, 1], "human": [1, 1, 0]}
    )
    with pytest.warns(MissingLabelWarning):
        counts = JudgeCounts.from_frames(
            hand_frame(), cal, judge="verdict", system="model", stratum="split", item="item"
        )
    assert as_dict(counts.joint) == EXPECTED
    assert counts.m1.sum().item() == 2


def test_duplicate_item_raises_naming_ids():
    frame = pd.concat([hand_frame(), hand_frame().iloc[[0, 3]]])
    with pytest.raises(ValueError, match=r"unique within each system; 2 repeat: 1 \(system 'a'"):
        with pytest.warns(MissingLabelWarning):
            JudgeCounts.from_frames(
                frame, judge="verdict", system="model", stratum="split", item="item"
            )


def test_stratum_must_be_constant_per_item():
    frame = hand_frame()
    frame.loc[1, "split"] = "y"  # item 1, system b
    with pytest.raises(ValueError, match=r"one stratum for every system; 1 item ids .* 1 \("):
        with pytest.warns(MissingLabelWarning):
            JudgeCounts.from_frames(
                frame, judge="verdict", system="model", stratum="split", item="item"
            )


def test_item_errors():
    frame = hand_frame().dropna()
    with pytest.raises(ValueError, match=r"Column 'id' \(item\) is not in the test table"):
        JudgeCounts.from_frames(frame, judge="verdict", system="model", item="id")
    with pytest.raises(ValueError, match="more than one role"):
        JudgeCounts.from_frames(frame, judge="verdict", system="model", item="model")
    missing = frame.astype({"item": float})
    missing.loc[0, "item"] = np.nan
    with pytest.raises(ValueError, match="1 row with a missing item id"):
        JudgeCounts.from_frames(missing, judge="verdict", system="model", item="item")
    # Systems that judged different items: nothing to pair, unpaired counts and a warning.
    disjoint = frame.assign(item=frame["item"].astype(str) + frame["model"])
    with pytest.warns(BayesJudgeWarning, match="was judged for two systems"):
        apart = JudgeCounts.from_frames(disjoint, judge="verdict", system="model", item="item")
    assert not apart.has_joint
    # One system sharing none while the others share items: still refused.
    own = frame["model"].where(frame["model"] == "c", "")
    part = frame.assign(item=frame["item"].astype(str) + own)
    with pytest.raises(ValueError, match=r"Systems \['c'\] share no item id"):
        JudgeCounts.from_frames(part, judge="verdict", system="model", item="item")
    with pytest.raises(ValueError, match="pass a test table"):
        JudgeCounts.from_frames(calibration=frame.assign(human=1), judge="verdict", item="item")


def test_item_without_system_column_is_one_system():
    frame = pd.DataFrame({"item": [1, 2, 3], "judge": [1, 0, 1]})
    counts = JudgeCounts.from_frames(frame, item="item")
    assert counts.joint.values.tolist() == [[2, 1]]
    assert counts.joint.pattern.values.tolist() == ["1", "0"]


# ------------------------------------------------------------------------- from_counts


def test_from_counts_full_array_and_dataarray_agree():
    # Two systems, one stratum: "11": 2, "10": 1, "01": 0, "00": 1.
    a = JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"], joint=[2, 1, 0, 1])
    da = xr.DataArray(
        [[1, 2, 1]], dims=("stratum", "pattern"), coords={"pattern": ["00", "11", "10"]}
    )
    b = JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"], joint=da)
    assert a.dataset.identical(b.dataset)
    assert a.joint.pattern.values.tolist() == ["11", "10", "00"]  # "01" unobserved: not stored
    assert a.joint_table().pattern.values.tolist() == ["11", "10", "01", "00"]
    assert a.joint_table().values.tolist() == [[2, 1, 0, 1]]
    assert a.joint_table(full=False).identical(a.joint)


def test_from_counts_two_strata():
    joint = np.array([[3, 0, 1, 2], [0, 4, 0, 1]])
    c = JudgeCounts.from_counts(
        n=[[6, 5], [6, 6]], k=[[3, 4], [4, 0]], system=["a", "b"], stratum=["s", "t"], joint=joint
    )
    assert c.joint_table().values.tolist() == joint.tolist()
    assert c.joint_table().stratum.values.tolist() == ["s", "t"]


def test_all_patterns_order():
    assert all_patterns(1) == ["1", "0"]
    assert all_patterns(3) == ["".join(p) for p in itertools.product("10", repeat=3)]
    assert all_patterns(3)[1] == "110"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"joint": [2, 1, 0]}, r"shape \(stratum, 2\*\*K\) = \(1, 4\)"),
        ({"joint": [2, -1, 0, 1]}, r"joint must be a non-negative whole-number count; got \[-1\]"),
        (
            {"joint": [2, 0.5, 0, 1]},
            r"joint must be a non-negative whole-number count; got \[0.5\]",
        ),
        ({"joint": ["a", "b", "c", "d"]}, "joint must be a whole-number count; got values of type"),
        # a's k = 3 but 4 shared items judge a correct ("11" + "10").
        ({"joint": [3, 1, 0, 0]}, r"judged correct .* joint verdict-1 count=4 > k=3"),
        # b has n - k = 3 judged incorrect but 4 shared items judge b incorrect.
        ({"joint": [0, 3, 0, 1]}, r"judged incorrect .* joint verdict-0 count=4 > n - k=3"),
    ],
)
def test_from_counts_joint_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"], **kwargs)


def test_from_counts_bad_pattern_labels():
    da = xr.DataArray([[1, 1]], dims=("stratum", "pattern"), coords={"pattern": ["1", "10"]})
    with pytest.raises(ValueError, match=r"strings of 2 characters '1'/'0'.*got \['1'\]"):
        JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"], joint=da)
    da = xr.DataArray([[1, 1]], dims=("stratum", "pattern"), coords={"pattern": ["12", "10"]})
    with pytest.raises(ValueError, match="got \\['12'\\]"):
        JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"], joint=da)
    wrong_strata = xr.DataArray(
        [[1, 1]], dims=("stratum", "pattern"), coords={"stratum": ["z"], "pattern": ["11", "10"]}
    )
    with pytest.raises(ValueError, match="must be the counts' strata"):
        JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"], joint=wrong_strata)


# ------------------------------------------------------------ reshaping and round trips


def test_sel_remarginalises_over_systems():
    counts = hand_counts()
    # Systems (c, a): item patterns 101 -> "11", 111 -> "11", 001 -> "10", 111 -> "11".
    sub = counts.sel(system=["c", "a"])
    assert as_dict(sub.joint) == {("x", "11"): 2, ("y", "10"): 1, ("y", "11"): 1}
    one = counts.sel(system="b")
    assert as_dict(one.joint) == {("x", "0"): 1, ("x", "1"): 1, ("y", "0"): 1, ("y", "1"): 1}
    strat = counts.sel(stratum="y")
    assert as_dict(strat.joint) == {("y", "001"): 1, ("y", "111"): 1}
    assert strat.joint.pattern.values.tolist() == ["111", "001"]  # "101" unobserved in y


def test_pair_table_cells():
    counts = hand_counts()
    table = counts.pair_table("a", "b")
    assert table.dims == ("stratum", "cell")
    assert table.cell.values.tolist() == ["11", "10", "01", "00"]
    # x: items 1 (a=1,b=0), 2 (1,1); y: items 3 (0,0), 4 (1,1).
    assert table.sel(stratum="x").values.tolist() == [1, 1, 0, 0]
    assert table.sel(stratum="y").values.tolist() == [1, 0, 0, 1]
    flipped = counts.pair_table("b", "a")
    assert flipped.sel(stratum="x").values.tolist() == [1, 0, 1, 0]
    with pytest.raises(ValueError, match="two different systems"):
        counts.pair_table("a", "a")
    with pytest.raises(ValueError, match="do not exist"):
        counts.pair_table("a", "z")


def test_pool_sums_strata_and_drops_systems():
    counts = hand_counts()
    pooled = counts.pool("stratum")
    assert as_dict(pooled.joint) == {
        ("pooled", "111"): 2,
        ("pooled", "101"): 1,
        ("pooled", "001"): 1,
    }
    assert not counts.pool("system").has_joint
    assert not counts.pool(["system", "stratum"]).has_joint


def test_calibration_methods_keep_joint():
    counts = hand_counts()
    calib = JudgeCounts.from_counts(m0=40, tn=30, m1=60, tp=54)
    shared = counts.with_calibration_from(calib)
    assert shared.joint.identical(counts.joint)
    separate = counts.with_calibration_from(
        JudgeCounts.from_counts(
            m0=[10, 10, 10], tn=[8, 7, 6], m1=[9, 9, 9], tp=[8, 8, 8], system=["a", "b", "c"]
        )
    )
    pooled = separate.pooled_calibration()
    assert pooled.joint.identical(counts.joint)
    assert pooled.m0.values.ravel().tolist() == [30] * 6


def test_to_frame_has_only_count_columns():
    frame = hand_counts().to_frame()
    assert list(frame.columns) == ["system", "stratum", "n", "k", "m0", "tn", "m1", "tp"]
    assert len(frame) == 6


def test_dataset_and_netcdf_round_trip(tmp_path):
    counts = hand_counts()
    again = JudgeCounts(counts.dataset)
    assert again.dataset.identical(counts.dataset)
    path = tmp_path / "counts.nc"
    counts.dataset.to_netcdf(path, engine="h5netcdf")
    with xr.open_dataset(path, engine="h5netcdf") as opened:
        loaded = JudgeCounts(opened.load())
    assert loaded.joint.identical(counts.joint)
    assert loaded.joint_verdicts.identical(counts.joint_verdicts)
    assert loaded.dataset.equals(counts.dataset)


def test_dataset_without_verdict_coord_parses_patterns():
    ds = hand_counts().dataset.drop_vars("verdict")
    assert JudgeCounts(ds).joint_verdicts.identical(hand_counts().joint_verdicts)


def test_dataset_reordered_systems_follow_verdict_coord():
    # Selecting on the raw dataset reorders the verdict coordinate with the systems; the
    # pattern strings are rebuilt from it.
    counts = hand_counts()
    ds = counts.dataset.sel(system=["c", "b", "a"])
    reordered = JudgeCounts(ds)
    assert reordered.joint.pattern.values.tolist() == ["111", "101", "100"]
    assert as_dict(reordered.joint) == {
        ("x", "111"): 1,
        ("x", "101"): 1,
        ("y", "111"): 1,
        ("y", "100"): 1,
    }


def test_dataset_validation_errors():
    ds = hand_counts().dataset
    with pytest.raises(ValueError, match="unexpected \\['other'\\]"):
        JudgeCounts(ds.assign(other=ds["joint"]))
    with pytest.raises(ValueError, match="verdict-1 count"):
        JudgeCounts(ds.assign(k=ds["k"] * 0))
    bad = ds.assign(joint=ds["joint"].expand_dims(system=ds.system.values))
    with pytest.raises(ValueError, match="must have dims \\('stratum', 'pattern'\\)"):
        JudgeCounts(bad)


# ----------------------------------------------------- simulated frames and properties


def test_simulate_paired_items_joint_matches_item_level_counts():
    frame = bj.simulate.simulate_paired_items(
        [0.5, 0.6, 0.7], 0.8, 0.9, n=300, correlation=0.5, system=["a", "b", "c"], random_seed=4
    )
    counts = JudgeCounts.from_frames(frame, system="system", item="item")
    wide = frame.pivot(index="item", columns="system", values="judge")[["a", "b", "c"]]
    patterns = Counter("".join(str(v) for v in row) for row in wide.to_numpy())
    table = counts.joint_table()
    assert {p: int(table.sel(pattern=p).item()) for p in all_patterns(3)} == {
        p: patterns.get(p, 0) for p in all_patterns(3)
    }
    assert counts.joint.attrs["unshared_items"] == {"a": 0, "b": 0, "c": 0}
    ones = (counts.joint @ counts.joint_verdicts).sel(stratum="all")
    assert ones.values.tolist() == counts.k.sel(stratum="all").values.tolist()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_systems=st.integers(1, 4),
    n_strata=st.integers(1, 3),
    data=st.data(),
)
def test_joint_marginals_equal_k_when_all_items_shared(n_systems, n_strata, data):
    n_items = data.draw(st.integers(1, 25))
    verdicts = data.draw(
        st.lists(
            st.lists(st.integers(0, 1), min_size=n_systems, max_size=n_systems),
            min_size=n_items,
            max_size=n_items,
        )
    )
    item_stratum = data.draw(
        st.lists(st.integers(0, n_strata - 1), min_size=n_items, max_size=n_items)
    )
    systems = [f"s{j}" for j in range(n_systems)]
    rows = [
        (i, systems[j], f"t{item_stratum[i]}", verdicts[i][j])
        for i in range(n_items)
        for j in range(n_systems)
    ]
    frame = pd.DataFrame(rows, columns=["item", "system", "stratum", "judge"])
    counts = JudgeCounts.from_frames(frame, system="system", stratum="stratum", item="item")
    ones = (counts.joint @ counts.joint_verdicts).transpose("system", "stratum")
    np.testing.assert_array_equal(ones.values, counts.k.values)
    np.testing.assert_array_equal(
        counts.joint.sum("pattern").values, counts.n.isel(system=0).values
    )
    assert counts.joint.attrs["unshared_items"] == dict.fromkeys(systems, 0)
    # Every pair table's margins are the pair's k counts.
    if n_systems >= 2:
        pair = counts.pair_table(systems[0], systems[-1])
        np.testing.assert_array_equal(
            pair.sel(cell=["11", "10"]).sum("cell").values, counts.k.isel(system=0).values
        )
        np.testing.assert_array_equal(
            pair.sel(cell=["11", "01"]).sum("cell").values, counts.k.isel(system=-1).values
        )


def test_datatree_round_trip_as_fit_save(tmp_path):
    # bj.Fit.save stores counts.dataset as the "counts" node of a DataTree (h5netcdf) and
    # bj.load rebuilds JudgeCounts(tree["counts"].dataset): the joint table must survive.
    counts = hand_counts()
    tree = xr.DataTree.from_dict({"counts": counts.dataset})
    path = tmp_path / "tree.nc"
    tree.to_netcdf(path, engine="h5netcdf")
    with xr.open_datatree(path, engine="h5netcdf") as opened:
        loaded = JudgeCounts(opened["counts"].dataset.load())
    assert loaded.joint.identical(counts.joint)
    assert loaded.joint_verdicts.identical(counts.joint_verdicts)


def test_nothing_shared_errors_name_the_cause():
    # Review: the error names the system that shares no item, and ids equal only as text.
    frame = hand_frame().dropna()
    alone = pd.concat(
        [frame, pd.DataFrame({"item": [90, 91], "model": "d", "split": "x", "verdict": "no"})]
    )
    with pytest.raises(ValueError, match=r"Systems \['d'\] share no item id with any other"):
        JudgeCounts.from_frames(alone, judge="verdict", system="model", item="item")
    mixed = frame.astype({"item": object})
    mixed.loc[mixed["model"] == "b", "item"] = mixed.loc[mixed["model"] == "b", "item"].map(str)
    with pytest.raises(ValueError, match=r"mixes types \['int', 'str'\]"):
        JudgeCounts.from_frames(mixed, judge="verdict", system="model", item="item")
    # Ids 1 (int) and 1.0 (float) are the same item (1 == 1.0): no error, 4 shared items.
    floats = frame.astype({"item": object})
    floats.loc[floats["model"] == "b", "item"] = floats.loc[floats["model"] == "b", "item"] + 0.0
    counts = JudgeCounts.from_frames(floats, judge="verdict", system="model", item="item")
    assert int(counts.joint.sum()) == 4
