"""Joint verdict tables of many systems, and systems that judged different items (session 10).

huntB F2: ``from_frames(pandas, item=...)`` of 240+ systems raised RecursionError (an
expression nested once per system). huntA F7 / huntC F2: systems that share no item id (each
judged its own items; or one system whose items are all labelled) were refused with "no joint
verdict table ... omit item=", which a harness log cannot do; they are now counted unpaired.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import polars as pl
import pytest

from bayesjudge.data import JudgeCounts
from bayesjudge.warnings import BayesJudgeWarning

ENGINES = {"pandas": lambda f: f, "polars": pl.from_pandas}


def joint_reference(frame: pd.DataFrame) -> dict[str, int]:
    """Count the verdict patterns of the items judged for every system, by hand (pandas)."""
    wide = frame.pivot(index="item", columns="system", values="judge").dropna()
    systems = sorted(frame["system"].unique())
    patterns = ["".join(str(int(v)) for v in row) for row in wide[systems].to_numpy()]
    return dict(Counter(patterns))


def joint_of(counts: JudgeCounts) -> dict[str, int]:
    table = counts.joint.squeeze("stratum")
    return {str(p): int(v) for p, v in zip(table["pattern"].values, table.values, strict=True)}


def many_systems(n_systems: int, n_items: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    systems = [f"s{j:03d}" for j in range(n_systems)]
    return pd.DataFrame(
        {
            "system": np.repeat(systems, n_items),
            "item": np.tile([f"i{i}" for i in range(n_items)], n_systems),
            "judge": rng.integers(0, 2, n_systems * n_items),
        }
    )


@pytest.mark.parametrize("engine", list(ENGINES))
def test_300_systems_count_their_joint_table(engine):
    # Before: RecursionError on pandas from 240 systems (polars worked).
    frame = many_systems(300, 4, seed=10)  # many_systems(300, 4, seed=10)
    counts = JudgeCounts.from_frames(ENGINES[engine](frame), system="system", item="item")
    expected = joint_reference(frame)
    assert sum(expected.values()) == 4  # every item judged for every system
    assert joint_of(counts) == expected
    np.testing.assert_array_equal(
        counts.k.squeeze("stratum").values, frame.groupby("system")["judge"].sum().to_numpy()
    )


def test_300_systems_with_strata_and_missing_items():
    # Strata and an item not judged for every system: only the shared items are counted.
    frame = many_systems(300, 6, seed=11)  # many_systems(300, 6, seed=11)
    frame["split"] = np.where(frame["item"].isin(["i0", "i1", "i2"]), "x", "y")
    frame = frame.drop(index=frame.index[(frame["item"] == "i5") & (frame["system"] == "s007")])
    counts = JudgeCounts.from_frames(frame, system="system", stratum="split", item="item")
    for stratum in ("x", "y"):
        part = frame[frame["split"] == stratum].drop(columns="split")
        table = counts.joint.sel(stratum=stratum)
        got = {str(p): int(v) for p, v in zip(table["pattern"].values, table.values, strict=True)}
        assert {p: c for p, c in got.items() if c} == joint_reference(part)
    assert int(counts.joint.sum()) == 5  # i5 lacks s007's verdict


def apart_frame() -> pd.DataFrame:
    """Systems A and B judged different items (ids 'A0'.. and 'B0'..): nothing to pair."""
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "system": ["A"] * 12 + ["B"] * 9,
            "item": [f"A{i}" for i in range(12)] + [f"B{i}" for i in range(9)],
            "judge": rng.integers(0, 2, 21),
        }
    )


def lazy_engine(engine: str, frame: pd.DataFrame):
    if engine == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        return duckdb.connect().from_df(frame)
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(frame, npartitions=2)


@pytest.mark.parametrize("engine", [*ENGINES, "pandas-object", "duckdb", "dask"])
@pytest.mark.filterwarnings("ignore:Dask support is moving out of Narwhals")
def test_systems_judged_apart_are_counted_unpaired(engine):
    frame = apart_frame()
    if engine == "pandas-object":  # ids of mixed Python types: the row-by-row path
        frame = frame.astype({"item": object})
        frame.loc[frame["system"] == "B", "item"] = range(9)
    if engine in ("duckdb", "dask"):
        table = lazy_engine(engine, frame)
    else:
        table = ENGINES.get(engine, lambda f: f)(frame)
    with pytest.warns(BayesJudgeWarning, match="was judged for two systems: the systems judged"):
        counts = JudgeCounts.from_frames(table, system="system", item="item")
    assert not counts.has_joint
    # The counts are those without item= (unpaired): n and k per system, by hand.
    assert counts.n.squeeze("stratum").values.tolist() == [12, 9]
    expected_k = [int(frame["judge"][:12].sum()), int(frame["judge"][12:].sum())]
    assert counts.k.squeeze("stratum").values.tolist() == expected_k
    plain = JudgeCounts.from_frames(frame, system="system")
    assert counts.dataset.drop_attrs().identical(plain.dataset.drop_attrs())


def test_partly_shared_systems_are_refused_in_command_line_words():
    # A and B share items, C none: pairing would silently drop A-B; the error says what to do.
    frame = pd.concat(
        [
            pd.DataFrame({"system": "A", "item": ["x0", "x1"], "judge": [1, 0]}),
            pd.DataFrame({"system": "B", "item": ["x0", "x1"], "judge": [1, 1]}),
            pd.DataFrame({"system": "C", "item": ["c0", "c1"], "judge": [0, 1]}),
        ]
    )
    with pytest.raises(ValueError, match=r"Systems \['C'\] share no item id") as err:
        JudgeCounts.from_frames(frame, system="system", item="item")
    assert "one log per group of systems" in str(err.value)
    assert "without --item" in str(err.value)


def test_ids_equal_only_as_text_are_still_refused():
    # A's ids are ints, B's the same numbers as text: a type slip, not different items.
    frame = pd.DataFrame(
        {"system": ["A"] * 3 + ["B"] * 3, "item": [1, 2, 3, "1", "2", "3"], "judge": [1] * 6}
    )
    with pytest.raises(ValueError, match=r"mixes types \['int', 'str'\]"):
        JudgeCounts.from_frames(frame, system="system", item="item")


@pytest.mark.parametrize("engine", list(ENGINES))
def test_one_system_with_every_item_labelled_is_counted(engine):
    # huntC F2: the random design with n = 0 and item=: the human-only counts, no error.
    rng = np.random.default_rng(3)
    human = rng.integers(0, 2, 40)
    judge = np.where(rng.random(40) < 0.85, human, 1 - human)
    frame = pd.DataFrame({"item": [f"i{i:02d}" for i in range(40)], "judge": judge, "human": human})
    counts = JudgeCounts.from_frames(ENGINES[engine](frame), item="item")
    assert not counts.has_joint
    assert int(counts.n.sum()) == 0
    m0, m1 = int((human == 0).sum()), int((human == 1).sum())
    assert (int(counts.m0.sum()), int(counts.m1.sum())) == (m0, m1)
    tn = int(((human == 0) & (judge == 0)).sum())
    tp = int(((human == 1) & (judge == 1)).sum())
    assert (int(counts.tn.sum()), int(counts.tp.sum())) == (tn, tp)


def test_two_systems_with_every_item_labelled_count_without_warning():
    # Nothing unlabelled is left to pair (n = 0 for both): no joint table and no warning
    # (the suite turns any BayesJudgeWarning into an error).
    frame = pd.DataFrame(
        {
            "system": ["A"] * 6 + ["B"] * 6,
            "item": [f"i{i}" for i in range(6)] * 2,
            "judge": [1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0, 1],
            "human": [1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1],
        }
    )
    counts = JudgeCounts.from_frames(frame, system="system", item="item")
    assert not counts.has_joint
    assert counts.n.sum().item() == 0
    assert counts.m1.squeeze("stratum").values.tolist() == [3, 3]
    assert counts.tp.squeeze("stratum").values.tolist() == [2, 3]
