"""CategoricalCounts.from_frames counts on every dataframe engine, and every engine agrees.

The same item tables go through pandas, polars (eager and lazy), pyarrow, DuckDB (over
Parquet and over pandas), Dask, CSV and Parquet files and (``@pytest.mark.slow``: a JVM start
takes 5-20 s) PySpark; the counts must equal a direct tally of the rows, in both labelling
designs, and a label outside the categories must give the same error everywhere. On DuckDB,
only the grouped counts and the labelled rows are collected.
"""

from __future__ import annotations

import signal
import warnings
from pathlib import Path

import dask.dataframe as dd
import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from bayesjudge.data import CategoricalCounts
from bayesjudge.simulate import rubric_confusion, simulate_categorical_items

# narwhals warns that its Dask support moves to a plugin: packaging, not counts.
DASK_NOTICE = r"Dask support is moving out of Narwhals"
GRADES = ["1", "2", "3", "4", "5"]  # text, so that CSV files (read as text) agree
GROUP = {"system": "system", "stratum": "stratum"}


@pytest.fixture(scope="module")
def duck():
    con = duckdb.connect()
    yield con
    con.close()


@pytest.fixture(scope="module")
def spark():
    pyspark_sql = pytest.importorskip("pyspark.sql")
    handler = signal.getsignal(signal.SIGINT)
    session = (
        pyspark_sql.SparkSession.builder.master("local[1]")
        .appName("bayesjudge-categorical-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    signal.signal(signal.SIGINT, handler)


def to_engine(frame: pd.DataFrame, engine: str, path: Path, request):
    """Return ``frame`` as a table of one engine (file engines write ``path`` first)."""
    if engine == "pandas":
        return frame
    if engine == "polars":
        return pl.from_pandas(frame)
    if engine == "polars-lazy":
        return pl.from_pandas(frame).lazy()
    if engine == "pyarrow":
        return pa.Table.from_pandas(frame, preserve_index=False)
    if engine == "duckdb-pandas":
        return request.getfixturevalue("duck").from_df(frame)
    if engine == "dask":
        return dd.from_pandas(frame, npartitions=3)
    if engine == "csv":
        frame.to_csv(path.with_suffix(".csv"), index=False)
        return path.with_suffix(".csv")
    frame.to_parquet(path.with_suffix(".parquet"), index=False)
    if engine == "parquet":
        return path.with_suffix(".parquet")
    if engine == "duckdb":
        return request.getfixturevalue("duck").read_parquet(str(path.with_suffix(".parquet")))
    if engine == "spark":
        return request.getfixturevalue("spark").read.parquet(str(path.with_suffix(".parquet")))
    raise AssertionError(engine)


ENGINES = [
    "pandas",
    "polars",
    "polars-lazy",
    "pyarrow",
    "duckdb",
    "duckdb-pandas",
    "dask",
    "csv",
    "parquet",
    pytest.param("spark", marks=pytest.mark.slow),
]


def from_frames(*args, **kwargs) -> CategoricalCounts:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=DASK_NOTICE, category=FutureWarning)
        return CategoricalCounts.from_frames(*args, **kwargs)


def tally(test, cal, categories, systems, strata):
    """Count the rows one by one: the reference."""
    k = len(categories)
    index = {c: i for i, c in enumerate(categories)}
    t = np.zeros((len(systems), len(strata), k), dtype=np.int64)
    c = np.zeros((len(systems), len(strata), k, k), dtype=np.int64)
    for row in test.itertuples():
        t[systems.index(row.system), strata.index(row.stratum), index[row.judge]] += 1
    for row in cal.itertuples():
        s, j = systems.index(row.system), strata.index(row.stratum)
        c[s, j, index[row.human], index[row.judge]] += 1
    return t, c


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Grades 1..5 as text "1".."5" (the item ids stay numbers)."""
    out = frame.copy()
    for column in ("judge", "human", "truth"):
        if column in out:
            out[column] = [None if v is None else str(v + 1) for v in out[column]]
    return out


@pytest.fixture(scope="module")
def stratified():
    test, cal = simulate_categorical_items(
        [0.1, 0.2, 0.3, 0.25, 0.15],
        rubric_confusion(5, 0.6),
        n=[[40, 25], [30, 35]],
        m=[[[3, 3, 3, 3, 3], [2, 2, 2, 2, 2]], [[1, 2, 3, 2, 1], [4, 0, 4, 0, 4]]],
        system=["m1", "m2"],
        stratum=["easy", "hard"],
        random_seed=21,
    )
    return _as_text(test), _as_text(cal)


@pytest.fixture(scope="module")
def random_design():
    kwargs = dict(
        n=[[30, 20], [25, 15]],
        m=[[6, 5], [4, 7]],
        design="random",
        system=["m1", "m2"],
        stratum=["easy", "hard"],
        random_seed=22,
    )
    theta, conf = [0.1, 0.2, 0.3, 0.25, 0.15], rubric_confusion(5, 0.6)
    test, cal = simulate_categorical_items(theta, conf, **kwargs)
    one = simulate_categorical_items(theta, conf, one_table=True, **kwargs)
    return _as_text(test), _as_text(cal), _as_text(one)


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_count_the_stratified_design(engine, stratified, tmp_path, request):
    test, cal = stratified
    t = to_engine(test, engine, tmp_path / "test", request)
    c = to_engine(cal, engine, tmp_path / "cal", request)
    counts = from_frames(t, c, categories=GRADES, ordered=True, **GROUP)
    ref_t, ref_c = tally(test, cal, GRADES, ["m1", "m2"], ["easy", "hard"])
    np.testing.assert_array_equal(counts.test.values, ref_t)
    np.testing.assert_array_equal(counts.calibration.values, ref_c)
    assert counts.design == "stratified" and counts.ordered
    inferred = from_frames(t, c, **GROUP)
    assert inferred.categories == GRADES  # numeric text, in numeric order
    assert inferred.ds.identical(
        counts.ds.assign_attrs(ordered=False, categories_source="inferred")
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_count_the_random_design(engine, random_design, tmp_path, request):
    test, cal, one = random_design
    unlabelled, labelled = one[one["human"].isna()], one[one["human"].notna()]
    ref_t, ref_c = tally(unlabelled, labelled, GRADES, ["m1", "m2"], ["easy", "hard"])
    t = to_engine(test, engine, tmp_path / "test", request)
    c = to_engine(cal, engine, tmp_path / "cal", request)
    o = to_engine(one, engine, tmp_path / "one", request)
    matched = from_frames(t, c, categories=GRADES, item="item", design="random", **GROUP)
    single = from_frames(o, categories=GRADES, **GROUP)
    single_items = from_frames(o, categories=GRADES, item="item", **GROUP)
    for counts in (matched, single, single_items):
        assert counts.design == "random"
        np.testing.assert_array_equal(counts.test.values, ref_t)
        np.testing.assert_array_equal(counts.calibration.values, ref_c)


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_give_the_same_error_for_a_stray_label(engine, stratified, tmp_path, request):
    test, _ = stratified
    bad = test.copy()
    bad.loc[bad.index[:3], "judge"] = "six"
    t = to_engine(bad, engine, tmp_path / "test", request)
    with pytest.raises(ValueError) as err:
        from_frames(t, human=None, categories=GRADES, **GROUP)
    assert "column 'judge' (judge) of the test table" in str(err.value)
    assert "'six' (str, 3 rows)" in str(err.value)


def test_duckdb_collects_only_grouped_counts_and_labelled_rows(tmp_path, duck, monkeypatch):
    """Only the grouped counts and the labelled rows (with item=) leave DuckDB."""
    one = _as_text(
        simulate_categorical_items(
            [0.1, 0.2, 0.3, 0.25, 0.15], rubric_confusion(5, 0.6), n=600, m=10,
            design="random", one_table=True, system=["m1", "m2"], stratum=["easy", "hard"],
            random_seed=23,
        )
    )  # fmt: skip
    one.to_parquet(tmp_path / "one.parquet", index=False)
    collectors = [
        m
        for m in ("arrow", "to_arrow_table", "fetch_arrow_table", "df", "fetchdf", "pl",
                  "fetchall", "fetchone", "fetchmany", "fetchnumpy", "to_df")
        if hasattr(duckdb.DuckDBPyRelation, m)
    ]  # fmt: skip
    seen: list[int] = []
    for name in collectors:
        original = getattr(duckdb.DuckDBPyRelation, name)

        def wrapper(self, *args, _original=original, **kwargs):
            out = _original(self, *args, **kwargs)
            seen.append(len(out))
            return out

        monkeypatch.setattr(duckdb.DuckDBPyRelation, name, wrapper)
    relation = duck.read_parquet(str(tmp_path / "one.parquet"))
    counts = from_frames(relation, categories=GRADES, item="item", **GROUP)
    assert counts.design == "random" and int(counts.calibration.sum()) == 40
    assert len(one) == 2440 and seen
    # groups × verdict × (truth or empty) combinations, then the 40 labelled rows (twice)
    assert max(seen) <= 4 * 5 * 6 and 40 in seen, seen
