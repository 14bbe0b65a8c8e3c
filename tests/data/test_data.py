"""Tests for bayesjudge.data.JudgeCounts (the data layer)."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesjudge.data.reading as data_module
from bayesjudge.data import FIELDS, JudgeCounts
from bayesjudge.warnings import MissingLabelWarning

# ----------------------------------------------------------------------------- helpers

SEED = 20240611


def make_items(seed: int = SEED, n_test: int = 3000, n_cal: int = 800) -> dict[str, pd.DataFrame]:
    """Synthetic item tables with group gaps on purpose.

    Test systems a, b, c; calibration systems a, b, d: so c has no calibration of its own
    and d is calibration-only. Judge verdicts in the test table are "yes"/"no" strings, in
    the calibration table booleans; human labels are 0/1 integers.
    """
    rng = np.random.default_rng(seed)
    human = rng.random(n_cal) < 0.55
    # q1 = 0.9, q0 = 0.7: judge says correct w.p. 0.9 if truly correct, 0.3 if not.
    cal_judge = np.where(human, rng.random(n_cal) < 0.9, rng.random(n_cal) < 0.3)
    test = pd.DataFrame(
        {
            "model": rng.choice(["a", "b", "c"], n_test),
            "topic": rng.choice(["x", "y"], n_test),
            "judge": np.where(rng.random(n_test) < 0.6, "yes", "no"),
        }
    )
    calibration = pd.DataFrame(
        {
            "model": rng.choice(["a", "b", "d"], n_cal),
            "topic": rng.choice(["x", "y"], n_cal),
            "judge": cal_judge,
            "human": human.astype(np.int64),
        }
    )
    return {"test": test, "calibration": calibration}


def reference_counts(test: pd.DataFrame, calibration: pd.DataFrame) -> dict[str, np.ndarray]:
    """Count the synthetic tables with plain numpy boolean masks (independent of data.py)."""
    systems = sorted(set(test["model"]) | set(calibration["model"]))
    strata = sorted(set(test["topic"]) | set(calibration["topic"]))
    t_sys, t_str = test["model"].to_numpy(), test["topic"].to_numpy()
    t_judge = test["judge"].to_numpy() == "yes"
    c_sys, c_str = calibration["model"].to_numpy(), calibration["topic"].to_numpy()
    c_judge = calibration["judge"].to_numpy().astype(bool)
    c_human = calibration["human"].to_numpy() == 1
    out = {f: np.zeros((len(systems), len(strata)), dtype=np.int64) for f in FIELDS}
    for i, s in enumerate(systems):
        for j, t in enumerate(strata):
            tm = (t_sys == s) & (t_str == t)
            cm = (c_sys == s) & (c_str == t)
            out["n"][i, j] = tm.sum()
            out["k"][i, j] = (tm & t_judge).sum()
            out["m0"][i, j] = (cm & ~c_human).sum()
            out["tn"][i, j] = (cm & ~c_human & ~c_judge).sum()
            out["m1"][i, j] = (cm & c_human).sum()
            out["tp"][i, j] = (cm & c_human & c_judge).sum()
    return {"systems": systems, "strata": strata, **out}


def to_engine(df: pd.DataFrame, engine: str, tmp_path, name: str):
    """Return ``df`` in the form of one engine (or as a file path)."""
    if engine == "pandas":
        return df
    if engine == "polars":
        return pl.from_pandas(df)
    if engine == "polars-lazy":
        return pl.from_pandas(df).lazy()
    if engine == "pyarrow":
        return pa.Table.from_pandas(df, preserve_index=False)
    if engine == "csv":
        path = tmp_path / f"{name}.csv"
        df.to_csv(path, index=False)
        return path
    if engine == "csv-str":
        path = tmp_path / f"{name}.csv"
        df.to_csv(path, index=False)
        return str(path)
    if engine == "parquet":
        path = tmp_path / f"{name}.parquet"
        df.to_parquet(path, index=False)
        return path
    raise AssertionError(engine)


ENGINES = ["pandas", "polars", "polars-lazy", "pyarrow", "csv", "csv-str", "parquet"]


def assert_counts(counts: JudgeCounts, expected: dict) -> None:
    assert counts.systems == expected["systems"]
    assert counts.strata == expected["strata"]
    for f in FIELDS:
        np.testing.assert_array_equal(counts.dataset[f].values, expected[f], err_msg=f)
        assert counts.dataset[f].dtype == np.int64


# ------------------------------------------------------------------------ from_counts


def test_from_counts_scalars():
    c = JudgeCounts.from_counts(n=100, k=70, m0=40, tn=30, m1=60, tp=54)
    assert c.sizes == {"system": 1, "stratum": 1}
    assert c.systems == ["all"] and c.strata == ["all"]
    assert c.dataset["n"].dims == ("system", "stratum")
    assert [int(getattr(c, f).item()) for f in FIELDS] == [100, 70, 40, 30, 60, 54]
    assert all(c.dataset[f].dtype == np.int64 for f in FIELDS)


def test_from_counts_1d_system_and_scalar_broadcast():
    c = JudgeCounts.from_counts(
        n=[10, 20, 30], k=[1, 2, 3], m0=5, tn=4, m1=[6, 7, 8], tp=6, system=["a", "b", "c"]
    )
    assert c.sizes == {"system": 3, "stratum": 1}
    assert c.systems == ["a", "b", "c"]
    assert c.n.values.ravel().tolist() == [10, 20, 30]
    assert c.m0.values.ravel().tolist() == [5, 5, 5]
    assert c.tp.values.ravel().tolist() == [6, 6, 6]


def test_from_counts_1d_stratum_only():
    c = JudgeCounts.from_counts(n=[10, 20], k=[1, 2], stratum=["easy", "hard"])
    assert c.sizes == {"system": 1, "stratum": 2}
    assert c.systems == ["all"] and c.strata == ["easy", "hard"]
    assert c.k.values.tolist() == [[1, 2]]


def test_from_counts_2d():
    n = np.array([[10, 20], [30, 40], [50, 60]])
    c = JudgeCounts.from_counts(n=n, k=n // 2, system=["a", "b", "c"], stratum=[1, 2])
    assert c.sizes == {"system": 3, "stratum": 2}
    np.testing.assert_array_equal(c.n.values, n)
    np.testing.assert_array_equal(c.k.values, n // 2)
    assert c.strata == [1, 2]
    assert c.dataset.indexes["stratum"].dtype == np.int64  # int labels stay ints


def test_from_counts_single_string_label_and_omitted_pairs():
    c = JudgeCounts.from_counts(m0=10, tn=7, m1=20, tp=18, system="judge-set")
    assert c.systems == ["judge-set"]
    assert int(c.n.item()) == 0 and int(c.k.item()) == 0
    t = JudgeCounts.from_counts(n=np.int64(5), k=np.float64(2.0))
    assert int(t.k.item()) == 2 and int(t.m1.item()) == 0


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        (dict(n=-1, k=0), r"n \(test items\).*-1.*system='all', stratum='all'"),
        (dict(n=2.5, k=0), r"n \(test items\).*non-negative whole number.*2\.5"),
        (dict(n=np.nan, k=0), r"n \(test items\).*nan"),
        (dict(n=np.inf, k=0), r"n \(test items\).*inf"),
        (dict(n=10, k=[1, -2], system=["a", "b"]), r"k .*-2 in \(system='b'"),
        (dict(n=[5, 3], k=[5, 4], system=["a", "b"]), r"cannot exceed n.*k=4 > n=3.*system='b'"),
        (dict(m0=[3, 3], tn=[4, 1], m1=1, tp=0, system=["s1", "s2"]), r"tn=4 > m0=3.*'s1'"),
        (
            dict(m0=1, tn=0, m1=[[2, 2]], tp=[[1, 3]], system="s", stratum=["u", "v"]),
            r"tp=3 > m1=2.*stratum='v'",
        ),
        (dict(n=True, k=0), r"n \(test items\).*type bool"),
        (dict(n="5", k=0), r"n \(test items\).*type <U1.*'5'"),
        (dict(n=[1, None], k=0, system=["a", "b"]), r"n \(test items\).*type object"),
    ],
)
def test_from_counts_invalid_values(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        JudgeCounts.from_counts(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        (dict(n=[1, 2], k=[0, 1]), r"n has shape \(2,\).*need system="),
        (dict(n=[1, 2, 3], k=0, system=["a", "b"]), r"n has shape \(3,\).*labels give shape"),
        (dict(n=[1, 2], k=0, system=["a", "b"], stratum=["x", "y"]), r"n has shape \(2,\)"),
        (dict(n=[1, 2], k=0, system=["a", "a"]), r"system labels must be unique.*'a'"),
        (dict(n=[1, 2], k=0, stratum=["x", None]), r"stratum labels must not be missing"),
        (dict(n=1, k=0, system=[]), r"system needs at least one label"),
        (dict(n=5), r"k \(test items the judge called correct\) is missing while n"),
        (dict(m0=5, tn=3, tp=2), r"m1 .* is missing while tp"),
        (dict(), r"No counts given"),
    ],
)
def test_from_counts_invalid_shapes_and_labels(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        JudgeCounts.from_counts(**kwargs)


# ------------------------------------------------------------------ the constructor


def test_wrap_dataset_adds_missing_dims_and_converts_whole_floats():
    ds = xr.Dataset(
        {
            "n": ("system", [10.0, 20.0]),
            "k": ("system", [5, 6]),
            "m0": 4,
            "tn": 3,
            "m1": 5,
            "tp": 5,
        },
        coords={"system": ["a", "b"]},
        attrs={"source": "unit test"},
    )
    c = JudgeCounts(ds)
    assert c.dataset["n"].dims == ("system", "stratum")
    assert c.strata == ["all"]
    assert c.m0.values.ravel().tolist() == [4, 4]  # broadcast along system
    assert c.n.dtype == np.int64
    assert c.dataset.attrs == {"source": "unit test", "design": "stratified"}
    # Wrapping a JudgeCounts again is a no-op.
    xr.testing.assert_identical(JudgeCounts(c).dataset, c.dataset)


def test_wrap_dataset_errors():
    base = JudgeCounts.from_counts(n=3, k=1).dataset
    with pytest.raises(TypeError, match=r"wraps an xarray\.Dataset; got dict"):
        JudgeCounts({"n": 1})
    with pytest.raises(ValueError, match=r"missing \['k'\]"):
        JudgeCounts(base.drop_vars("k"))
    with pytest.raises(ValueError, match=r"unexpected \['extra'\]"):
        JudgeCounts(base.assign(extra=base["n"]))
    with pytest.raises(ValueError, match=r"dimensions \['judge'\]"):
        JudgeCounts(base.expand_dims(judge=["j1", "j2"]))
    with pytest.raises(ValueError, match="'system' dimension has no coordinate labels"):
        JudgeCounts(base.drop_vars("system"))
    with pytest.raises(ValueError, match="'stratum' dimension is empty"):
        JudgeCounts(base.isel(stratum=slice(0, 0)))
    with pytest.raises(ValueError, match=r"k .*cannot exceed n.*k=4 > n=3"):
        JudgeCounts(base.assign(k=base["k"] + 3))
    dup = xr.concat([base, base], dim="system")
    with pytest.raises(ValueError, match=r"system labels must be unique.*'all'"):
        JudgeCounts(dup)


# ---------------------------------------------------------------- derived quantities


def test_derived_quantities_match_hand_computation_and_mask_empty_groups():
    c = JudgeCounts.from_counts(
        n=[100, 0, 50],
        k=[70, 0, 10],
        m0=[40, 10, 0],
        tn=[30, 9, 0],
        m1=[60, 0, 5],
        tp=[54, 0, 4],
        system=["full", "no-test-no-m1", "no-m0"],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from 0/0
        p, q0, q1, j = c.p_hat(), c.q0_hat(), c.q1_hat(), c.youden_hat()
    # Hand computed: 70/100, 10/50; 30/40, 9/10; 54/60, 4/5; 0.75 + 0.9 - 1.
    np.testing.assert_allclose(p.values.ravel(), [0.7, np.nan, 0.2], rtol=0, atol=1e-15)
    np.testing.assert_allclose(q0.values.ravel(), [0.75, 0.9, np.nan], rtol=0, atol=1e-15)
    np.testing.assert_allclose(q1.values.ravel(), [0.9, np.nan, 0.8], rtol=0, atol=1e-15)
    np.testing.assert_allclose(j.values.ravel(), [0.65, np.nan, np.nan], rtol=0, atol=1e-15)
    assert c.has_test().values.ravel().tolist() == [True, False, True]
    assert c.has_calibration().values.ravel().tolist() == [True, False, False]
    # NaN exactly where the masks say "no data", nowhere else.
    np.testing.assert_array_equal(np.isnan(p.values), ~c.has_test().values)
    np.testing.assert_array_equal(np.isnan(j.values), ~c.has_calibration().values)
    assert p.name == "p_hat" and j.dims == ("system", "stratum")


def test_calibration_rates_recover_true_q0_q1_by_simulation():
    # Large calibration sets drawn with known q0 = 0.7, q1 = 0.9 (fixed seed): the counted
    # rates must lie within 3 Monte Carlo standard errors sqrt(q(1-q)/m) of the truth.
    # A swapped tn/tp definition would be off by 0.2+ (far beyond 3 MC-SE ~ 0.01).
    rng = np.random.default_rng(SEED)
    m = 20_000
    human = np.repeat([0, 1], m)
    judge = np.where(human == 1, rng.random(2 * m) < 0.9, rng.random(2 * m) < 0.3)
    c = JudgeCounts.from_frames(calibration=pd.DataFrame({"judge": judge, "human": human}))
    assert int(c.m0.item()) == m and int(c.m1.item()) == m
    for est, q in ((c.q0_hat().item(), 0.7), (c.q1_hat().item(), 0.9)):
        assert abs(est - q) < 3 * np.sqrt(q * (1 - q) / m)


# ------------------------------------------------------------------------- reshaping


@pytest.fixture
def grid() -> JudgeCounts:
    return JudgeCounts.from_counts(
        n=[[10, 20], [30, 40]],
        k=[[1, 2], [3, 4]],
        m0=[[5, 6], [7, 8]],
        tn=[[4, 5], [6, 7]],
        m1=[[9, 10], [11, 12]],
        tp=[[8, 9], [10, 11]],
        system=["a", "b"],
        stratum=["x", "y"],
    )


def test_sel_keeps_dims(grid):
    one = grid.sel(system="b")
    assert one.sizes == {"system": 1, "stratum": 2}
    assert one.n.values.tolist() == [[30, 40]]
    both = grid.sel(system=["b", "a"], stratum="y")
    assert both.systems == ["b", "a"] and both.strata == ["y"]
    assert both.k.values.ravel().tolist() == [4, 2]
    with pytest.raises(ValueError, match=r"system labels \['z'\] do not exist.*\['a', 'b'\]"):
        grid.sel(system=["a", "z"])


def test_pool_sums_and_keeps_dim_with_pooled_label(grid):
    by_system = grid.pool("system")
    assert by_system.systems == ["pooled"] and by_system.strata == ["x", "y"]
    assert by_system.n.values.tolist() == [[40, 60]]
    assert by_system.tp.values.tolist() == [[18, 20]]
    everything = grid.pool(["system", "stratum"])
    assert everything.sizes == {"system": 1, "stratum": 1}
    assert int(everything.m1.item()) == 9 + 10 + 11 + 12
    assert everything.n.dims == ("system", "stratum")
    with pytest.raises(ValueError, match="dim must be 'system' and/or 'stratum'; got 'model'"):
        grid.pool("model")


def test_pooled_calibration_replaces_only_calibration(grid):
    shared = grid.pooled_calibration("system")
    xr.testing.assert_equal(shared.n, grid.n)
    xr.testing.assert_equal(shared.k, grid.k)
    # Pool over systems per stratum: m0 = 5 + 7 in x and 6 + 8 in y, for every system.
    assert shared.m0.values.tolist() == [[12, 14], [12, 14]]
    assert shared.tn.values.tolist() == [[10, 12], [10, 12]]
    # Same as attaching the pooled counts explicitly.
    xr.testing.assert_identical(
        shared.dataset, grid.with_calibration_from(grid.pool("system")).dataset
    )
    everything = grid.pooled_calibration(["system", "stratum"])
    assert np.all(everything.m1.values == 42)


def test_with_calibration_from_broadcasts_single_group_and_aligns_labels(grid):
    shared = JudgeCounts.from_counts(m0=40, tn=30, m1=60, tp=54)
    out = grid.with_calibration_from(shared)
    assert out.m0.values.tolist() == [[40, 40], [40, 40]]
    xr.testing.assert_equal(out.n, grid.n)
    # Label-aligned: the other object lists systems in a different order.
    other = JudgeCounts.from_counts(m0=[1, 2], tn=[0, 1], m1=[3, 4], tp=[3, 3], system=["b", "a"])
    out = grid.with_calibration_from(other)
    assert out.m0.values.tolist() == [[2, 2], [1, 1]]
    partial = JudgeCounts.from_counts(m0=1, tn=0, m1=1, tp=1, system="a")
    with pytest.raises(ValueError, match=r"lack the system labels \['b'\]"):
        grid.with_calibration_from(partial)


def test_to_frame_and_repr(grid):
    frame = grid.to_frame()
    assert list(frame.columns) == ["system", "stratum", *FIELDS]
    assert frame[["system", "stratum"]].values.tolist() == [
        ["a", "x"],
        ["a", "y"],
        ["b", "x"],
        ["b", "y"],
    ]
    assert frame["n"].tolist() == [10, 20, 30, 40]
    assert frame["m1"].dtype == np.int64
    # 100 = 10+20+30+40 test items; 68 = (5+6+7+8) + (9+10+11+12) calibration items.
    header = (
        "JudgeCounts: 2 systems × 2 strata, 100 test items, 68 calibration items (stratified "
        "calibration design)"
    )
    assert repr(grid).splitlines()[0] == header
    assert "xarray.Dataset" in repr(grid)
    assert header in grid._repr_html_() and "<div" in grid._repr_html_()


# ------------------------------------------------------------------------ from_frames


@pytest.mark.parametrize("engine", ENGINES)
def test_from_frames_engines_agree_with_numpy_reference(engine, tmp_path):
    items = make_items()
    expected = reference_counts(items["test"], items["calibration"])
    counts = JudgeCounts.from_frames(
        to_engine(items["test"], engine, tmp_path, "test"),
        to_engine(items["calibration"], engine, tmp_path, "calibration"),
        system="model",
        stratum="topic",
    )
    assert_counts(counts, expected)
    # Row totals: nothing lost or double counted.
    assert int(counts.n.sum()) == len(items["test"])
    assert int((counts.m0 + counts.m1).sum()) == len(items["calibration"])


def test_from_frames_empty_set_groups():
    items = make_items()
    counts = JudgeCounts.from_frames(
        items["test"], items["calibration"], system="model", stratum="topic"
    )
    assert counts.systems == ["a", "b", "c", "d"]
    has_cal = counts.has_calibration().sel(system=["c", "d"]).values
    assert has_cal.tolist() == [[False, False], [True, True]]
    assert counts.has_test().sel(system="d").values.tolist() == [False, False]
    assert counts.sel(system="c").m1.values.tolist() == [[0, 0]]


def test_from_frames_row_order_does_not_matter():
    items = make_items()
    a = JudgeCounts.from_frames(items["test"], items["calibration"], system="model")
    shuffled = items["test"].sample(frac=1, random_state=1)
    b = JudgeCounts.from_frames(shuffled, items["calibration"], system="model")
    xr.testing.assert_identical(a.dataset, b.dataset)


def test_csv_falls_back_to_pandas_and_reads_tsv(tmp_path, monkeypatch):
    items = make_items(n_test=200, n_cal=100)
    expected = reference_counts(items["test"], items["calibration"])
    items["test"].to_csv(tmp_path / "test.tsv", sep="\t", index=False)
    items["calibration"].to_csv(tmp_path / "cal.csv", index=False)
    polars_counts = JudgeCounts.from_frames(
        tmp_path / "test.tsv", tmp_path / "cal.csv", system="model", stratum="topic"
    )
    assert_counts(polars_counts, expected)
    monkeypatch.setattr(data_module, "_installed", lambda name: name != "polars")
    pandas_counts = JudgeCounts.from_frames(
        tmp_path / "test.tsv", tmp_path / "cal.csv", system="model", stratum="topic"
    )
    assert_counts(pandas_counts, expected)


def test_parquet_needs_polars_or_pyarrow(tmp_path, monkeypatch):
    items = make_items(n_test=200, n_cal=100)
    expected = reference_counts(items["test"], items["calibration"])
    items["test"].to_parquet(tmp_path / "test.pq", index=False)
    items["calibration"].to_parquet(tmp_path / "cal.parquet", index=False)
    monkeypatch.setattr(data_module, "_installed", lambda name: name == "pyarrow")
    counts = JudgeCounts.from_frames(
        tmp_path / "test.pq", tmp_path / "cal.parquet", system="model", stratum="topic"
    )
    assert_counts(counts, expected)
    monkeypatch.setattr(data_module, "_installed", lambda name: False)
    with pytest.raises(ValueError, match=r"Parquet file .*test\.pq.*needs pyarrow or polars"):
        JudgeCounts.from_frames(tmp_path / "test.pq")


def test_bad_table_inputs(tmp_path):
    with pytest.raises(ValueError, match="Pass a test table, a calibration table, or both"):
        JudgeCounts.from_frames()
    with pytest.raises(FileNotFoundError, match=r"test file .*nope\.csv"):
        JudgeCounts.from_frames(tmp_path / "nope.csv")
    (tmp_path / "t.xlsx").write_text("x")
    with pytest.raises(ValueError, match=r"only \.csv, \.tsv, \.parquet and \.pq"):
        JudgeCounts.from_frames(tmp_path / "t.xlsx")
    with pytest.raises(TypeError, match=r"calibration must be a pandas, polars .*got list"):
        JudgeCounts.from_frames(calibration=[1, 0])


def test_missing_column_names_column_table_and_existing_columns():
    test = pd.DataFrame({"verdict": ["yes"], "model": ["a"]})
    with pytest.raises(
        ValueError,
        match=r"Column 'judge' \(judge\) is not in the test table; its columns are "
        r"\['verdict', 'model'\]",
    ):
        JudgeCounts.from_frames(test)
    cal = pd.DataFrame({"judge": [1], "label": [0]})
    with pytest.raises(ValueError, match=r"Column 'human' \(human\) is not in the calibration"):
        JudgeCounts.from_frames(calibration=cal)
    with pytest.raises(
        ValueError, match=r"Column 'model' \(system\) is not in the calibration.*with_calibration"
    ):
        JudgeCounts.from_frames(
            test, pd.DataFrame({"verdict": [1], "human": [1]}), judge="verdict", system="model"
        )
    with pytest.raises(ValueError, match="Column 'verdict' is used for more than one role"):
        JudgeCounts.from_frames(test, judge="verdict", system="verdict")


def test_test_only_and_calibration_only():
    test = pl.DataFrame({"judge": [1, 1, 0]})
    t = JudgeCounts.from_frames(test)
    assert [int(getattr(t, f).item()) for f in FIELDS] == [3, 2, 0, 0, 0, 0]
    cal = pl.DataFrame({"judge": [1, 0, 0, 1], "human": [1, 0, 1, 0]})
    c = JudgeCounts.from_frames(calibration=cal)
    assert [int(getattr(c, f).item()) for f in FIELDS] == [0, 0, 2, 1, 2, 1]


def test_shared_calibration_counted_separately_then_attached():
    test = pd.DataFrame({"model": ["a", "a", "b"], "judge": [1, 0, 1]})
    cal = pd.DataFrame({"judge": [1, 0, 0], "human": [1, 0, 1]})
    counts = JudgeCounts.from_frames(test, system="model").with_calibration_from(
        JudgeCounts.from_frames(calibration=cal)
    )
    assert counts.m1.values.ravel().tolist() == [2, 2]
    assert counts.tp.values.ravel().tolist() == [1, 1]
    assert counts.n.values.ravel().tolist() == [2, 1]


def test_empty_tables():
    empty = pd.DataFrame({"model": pd.Series([], dtype=str), "judge": pd.Series([], dtype=int)})
    with pytest.raises(ValueError, match="no rows"):
        JudgeCounts.from_frames(empty, system="model")
    c = JudgeCounts.from_frames(empty)
    assert c.systems == ["all"] and int(c.n.item()) == 0


def test_int_and_mixed_group_labels():
    test = pl.DataFrame({"model": [2, 1, 2], "judge": [True, False, True]})
    c = JudgeCounts.from_frames(test, system="model")
    assert c.systems == [1, 2]
    assert c.k.values.ravel().tolist() == [0, 2]
    cal = pd.DataFrame({"model": ["z"], "judge": [1], "human": [1]})
    mixed = JudgeCounts.from_frames(test.to_pandas(), cal, system="model")
    assert mixed.systems == [1, 2, "z"]  # ints before strings: sorted by type name, then text


# --------------------------------------------------------------------------- labels


LABEL_VARIANTS = [
    pytest.param([True, True, True], [False, False], None, id="bool"),
    pytest.param([1, 1, 1], [0, 0], None, id="int01"),
    pytest.param([1.0, 1.0, 1.0], [0.0, 0.0], None, id="float01"),
    pytest.param(["yes", "Yes ", " YES"], ["no", "NO"], None, id="yes-no"),
    pytest.param(
        [" CORRECT ", "correct", "Correct"],
        ["incorrect ", " Incorrect"],
        None,
        id="correct-incorrect-spaces",
    ),
    pytest.param(["pass", "PASS", "Pass"], ["FAIL", "fail"], None, id="pass-fail"),
    pytest.param(["true", "True", "TRUE"], ["false", "False"], None, id="true-false-strings"),
    pytest.param(["1", " 1", "1 "], ["0", "0"], None, id="string01"),
    pytest.param(["yes", "pass", "correct"], ["fail", "no"], None, id="mixed-vocabulary"),
    pytest.param(["good", "good", "good"], ["bad", "bad"], "good", id="custom"),
    pytest.param([" Good", "GOOD", "good"], ["bad", "BAD"], " good ", id="custom-normalised"),
    pytest.param([2, 2, 2], [5, 5], 2, id="custom-numeric"),
    pytest.param(["no", "no", "no"], ["yes", "yes"], "no", id="custom-overrides-vocabulary"),
]


@pytest.mark.parametrize("engine", ["pandas", "polars", "pyarrow"])
@pytest.mark.parametrize(("pos", "neg", "positive"), LABEL_VARIANTS)
def test_label_variants(pos, neg, positive, engine, tmp_path):
    verdicts = [pos[0], neg[0], pos[1], neg[1], pos[2]]
    frame = to_engine(pd.DataFrame({"judge": verdicts}), engine, tmp_path, "t")
    c = JudgeCounts.from_frames(frame, positive=positive)
    assert int(c.n.item()) == 5 and int(c.k.item()) == 3


def test_categorical_label_columns():
    values = [" Yes", "no", "yes", "NO", "yes"]
    pd_cat = pd.DataFrame({"judge": pd.Categorical(values)})
    pl_cat = pl.DataFrame({"judge": pl.Series(values, dtype=pl.Categorical)})
    pl_enum = pl.DataFrame({"judge": pl.Series(values, dtype=pl.Enum(sorted(set(values))))})
    for frame in (pd_cat, pl_cat, pl_enum):
        c = JudgeCounts.from_frames(frame)
        assert (int(c.n.item()), int(c.k.item())) == (5, 3)


def test_positive_mapping_applies_per_column():
    cal = pd.DataFrame({"judge": ["good", "bad", "good", "bad"], "human": [1, 0, 0, 1]})
    c = JudgeCounts.from_frames(calibration=cal, positive={"judge": "good"})
    # human 1 rows: judge good, bad -> m1=2, tp=1; human 0 rows: bad, good -> m0=2, tn=1.
    assert [int(getattr(c, f).item()) for f in FIELDS] == [0, 0, 2, 1, 2, 1]
    with pytest.raises(ValueError, match=r"positive= names columns \['verdict'\]"):
        JudgeCounts.from_frames(calibration=cal, positive={"verdict": "good"})


def test_unknown_labels_error_lists_values_and_row_counts():
    test = pd.DataFrame({"judge": ["yes", "maybe", "no", "Maybe ", "unsure", "maybe"]})
    with pytest.raises(
        ValueError,
        match=r"Column 'judge' in the test table has labels that are not recognised: "
        r"'maybe' \(3 rows\), 'unsure' \(1 row\)\. .*positive=",
    ):
        JudgeCounts.from_frames(test)
    cal = pl.DataFrame({"judge": [0, 1, 1], "human": [0, 1, 2]})
    with pytest.raises(ValueError, match=r"Column 'human' in the calibration table.*2 \(1 row\)"):
        JudgeCounts.from_frames(calibration=cal)


def test_positive_with_more_than_one_other_value_errors():
    test = pd.DataFrame({"judge": ["good", "bad", "awful", "bad"]})
    with pytest.raises(
        ValueError,
        match=r"positive='good', column 'judge' in the test table must hold 'good' and at "
        r"most one other value.*'bad' \(2 rows\), 'awful' \(1 row\)",
    ):
        JudgeCounts.from_frames(test, positive="good")


def test_missing_labels_are_dropped_with_a_warning():
    cal = pd.DataFrame(
        {
            "model": ["a", "a", "a", "b", "b", "b", "b", "a", "b", "a"],
            "judge": ["yes", None, "no", "", "yes", "no", None, "yes", "no", "yes"],
            "human": [1.0, 1.0, np.nan, 0.0, np.nan, 0.0, np.nan, 1.0, 1.0, 0.0],
        }
    )
    with pytest.warns(MissingLabelWarning) as record:
        c = JudgeCounts.from_frames(calibration=cal, system="model")
    (warning,) = record
    message = str(warning.message)
    # Rows 1, 2 (system a) and 3, 4, 6 (system b) lack a label; row 6 lacks both.
    assert "Dropped 5 of 10 rows of the calibration table" in message
    assert "'judge': 3 rows" in message and "'human': 3 rows" in message
    assert "system='a', stratum='all': 2 rows" in message
    assert "system='b', stratum='all': 3 rows" in message
    assert warning.filename == __file__  # points at the caller, not into bayesjudge
    # Kept rows: a: (yes,1), (yes,1), (yes,0) -> m1=2, tp=2, m0=1, tn=0.
    #            b: (no,0), (no,1)            -> m0=1, tn=1, m1=1, tp=0.
    assert c.m1.values.ravel().tolist() == [2, 1]
    assert c.tp.values.ravel().tolist() == [2, 0]
    assert c.m0.values.ravel().tolist() == [1, 1]
    assert c.tn.values.ravel().tolist() == [0, 1]


def test_missing_labels_nan_in_polars_float_and_pandas_object_bools():
    test = pl.DataFrame({"judge": [1.0, float("nan"), 0.0, None]})
    with pytest.warns(MissingLabelWarning, match=r"Dropped 2 of 4 rows of the test table"):
        c = JudgeCounts.from_frames(test)
    assert (int(c.n.item()), int(c.k.item())) == (2, 1)
    obj = pd.DataFrame({"judge": pd.Series([True, None, False, True], dtype=object)})
    with pytest.warns(MissingLabelWarning, match=r"'judge': 1 row;"):
        c = JudgeCounts.from_frames(obj)
    assert (int(c.n.item()), int(c.k.item())) == (3, 2)


def test_group_with_only_missing_labels_is_kept_with_zero_counts():
    test = pd.DataFrame({"model": ["a", "b"], "judge": ["yes", None]})
    with pytest.warns(MissingLabelWarning):
        c = JudgeCounts.from_frames(test, system="model")
    assert c.systems == ["a", "b"] and c.n.values.ravel().tolist() == [1, 0]


def test_missing_group_label_errors():
    test = pd.DataFrame({"model": ["a", None, "b"], "judge": [1, 0, 1]})
    with pytest.raises(
        ValueError, match=r"Column 'model' \(system\) in the test table has 1 row with a missing"
    ):
        JudgeCounts.from_frames(test, system="model")


# ------------------------------------------------------------------ laziness (polars)


def test_lazy_polars_only_collects_the_small_count_table(monkeypatch):
    items = make_items(n_test=20_000, n_cal=5_000)
    expected = reference_counts(items["test"], items["calibration"])
    heights = []
    original = pl.LazyFrame.collect

    def spy(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        heights.append(out.height)
        return out

    monkeypatch.setattr(pl.LazyFrame, "collect", spy)
    counts = JudgeCounts.from_frames(
        pl.from_pandas(items["test"]).lazy(),
        pl.from_pandas(items["calibration"]).lazy(),
        system="model",
        stratum="topic",
    )
    assert_counts(counts, expected)
    # One collect per table; each returns at most groups x label combinations rows
    # (3 systems x 2 strata x 2 verdicts x 2 human labels = 24), never the 20,000 items.
    assert len(heights) == 2
    assert max(heights) <= 24


# -------------------------------------------------------------------------- hypothesis

VERDICTS = [True, False]
SPELLINGS = {True: ["yes", " Correct", "PASS", "true", "1"], False: ["no", "incorrect ", "Fail"]}


@st.composite
def item_tables(draw):
    n_test = draw(st.integers(1, 40))
    n_cal = draw(st.integers(0, 40))
    systems = st.sampled_from(["s1", "s2", "s3"])
    strata = st.sampled_from(["x", "y"])
    test_rows = [
        (draw(systems), draw(strata), draw(st.sampled_from(VERDICTS))) for _ in range(n_test)
    ]
    cal_rows = [
        (
            draw(systems),
            draw(strata),
            draw(st.sampled_from(VERDICTS)),
            draw(st.sampled_from(VERDICTS)),
        )
        for _ in range(n_cal)
    ]
    spell = draw(st.booleans())
    engine = draw(st.sampled_from(["pandas", "polars"]))
    return test_rows, cal_rows, spell, engine


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(item_tables(), st.randoms(use_true_random=False))
def test_property_counts_match_rows(tables, rnd):
    test_rows, cal_rows, spell, engine = tables

    def label(v):
        return rnd.choice(SPELLINGS[v]) if spell else v

    test = pd.DataFrame(
        {
            "sys": [r[0] for r in test_rows],
            "str": [r[1] for r in test_rows],
            "judge": [label(r[2]) for r in test_rows],
        }
    )
    cal = pd.DataFrame(
        {
            "sys": pd.Series([r[0] for r in cal_rows], dtype=str),
            "str": pd.Series([r[1] for r in cal_rows], dtype=str),
            "judge": pd.Series([label(r[2]) for r in cal_rows], dtype=object if spell else bool),
            "human": pd.Series([int(r[3]) for r in cal_rows], dtype=np.int64),
        }
    )
    if engine == "polars":
        test, cal = pl.from_pandas(test), pl.from_pandas(cal)
    c = JudgeCounts.from_frames(test, cal, system="sys", stratum="str")
    assert int(c.n.sum()) == len(test_rows)
    assert int((c.m0 + c.m1).sum()) == len(cal_rows)
    assert bool((c.k <= c.n).all() & (c.tn <= c.m0).all() & (c.tp <= c.m1).all())
    groups = {(r[0], r[1]) for r in test_rows} | {(r[0], r[1]) for r in cal_rows}
    assert c.systems == sorted({g[0] for g in groups})
    assert c.strata == sorted({g[1] for g in groups})
    # Independent tally per group with collections.Counter.
    tally = Counter()
    for s, t, j in test_rows:
        tally[s, t, "n"] += 1
        tally[s, t, "k"] += j
    for s, t, j, h in cal_rows:
        tally[s, t, "m1" if h else "m0"] += 1
        tally[s, t, "tp"] += j and h
        tally[s, t, "tn"] += (not j) and (not h)
    for s in c.systems:
        for t in c.strata:
            got = c.dataset.sel(system=s, stratum=t)
            for f in FIELDS:
                assert int(got[f]) == tally[s, t, f], (s, t, f)
