"""JudgeCounts.from_frames counts on the user's dataframe engine: every engine agrees.

The same item-level tables go through pandas, polars (eager and lazy), DuckDB relations (over
Parquet), Dask DataFrames and PySpark DataFrames; the counts (and the joint verdict table with
``item=``), the missing-label warning and the errors naming bad values must be identical. The
laziness tests spy on each engine's own materialising methods and check that only the small
grouped tables are ever collected. The Python examples of docs/scaling.md run here too.

Spark needs a JVM: one local session per module (``local[1]``, no UI, one shuffle partition).
Its start alone takes 5-20 s on the 2-core development machine, so the Spark tests are
``@pytest.mark.slow`` (``make test-slow``).
"""

from __future__ import annotations

import re
import signal
import warnings
from collections import Counter
from pathlib import Path

import dask.dataframe as dd
import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesjudge.data.patterns as data_module
from bayesjudge.data import FIELDS, JudgeCounts
from bayesjudge.warnings import MissingLabelWarning

REPO = Path(__file__).resolve().parents[2]
SEED = 20261126
SYSTEMS = ["a", "b", "c"]
STRATA = ["x", "y"]
GROUP = {"system": "system", "stratum": "stratum"}
# narwhals (2.29 here) warns that its built-in Dask support moves to the `narwhals-dask` plugin;
# that notice is about narwhals' packaging, not about the counts, so it alone is filtered.
DASK_NOTICE = r"Dask support is moving out of Narwhals"


# ----------------------------------------------------------------------------- tables


def make_tables(seed: int = SEED, n_items: int = 300, n_cal: int = 400):
    """Item-level test and calibration tables with spelling variants and unshared items.

    Every item has one stratum; each system judges it with probability 0.9 (so some items are
    not shared by all systems). Test verdicts are spelled "yes", " YES", "no", "No "; the
    calibration judge column is boolean and the human column 0/1.
    """
    rng = np.random.default_rng(seed)
    item_stratum = rng.choice(STRATA, n_items)
    rows = [
        (
            s,
            item_stratum[i],
            i,
            rng.choice(["yes", " YES"] if rng.random() < 0.6 else ["no", "No "]),
        )
        for i in range(n_items)
        for s in SYSTEMS
        if rng.random() < 0.9
    ]
    order = rng.permutation(len(rows))
    test = pd.DataFrame(
        [rows[i] for i in order], columns=["system", "stratum", "item", "judge"]
    ).astype({"item": "int64"})
    human = rng.random(n_cal) < 0.55
    calibration = pd.DataFrame(
        {
            "system": rng.choice(SYSTEMS, n_cal),
            "stratum": rng.choice(STRATA, n_cal),
            "judge": np.where(human, rng.random(n_cal) < 0.9, rng.random(n_cal) < 0.3),
            "human": human.astype(np.int64),
        }
    )
    return test, calibration


def tally(test: pd.DataFrame, calibration: pd.DataFrame) -> dict:
    """Independent count of the tables with collections.Counter (not data.py)."""
    out = Counter()
    for s, t, j in test[["system", "stratum", "judge"]].itertuples(index=False):
        out[s, t, "n"] += 1
        out[s, t, "k"] += j.strip().lower() == "yes"
    for s, t, j, h in calibration[["system", "stratum", "judge", "human"]].itertuples(index=False):
        out[s, t, "m1" if h else "m0"] += 1
        out[s, t, "tp"] += bool(j and h)
        out[s, t, "tn"] += bool(not j and not h)
    verdicts: dict = {}
    for s, t, i, j in test.itertuples(index=False):
        verdicts.setdefault((t, i), {})[s] = "1" if j.strip().lower() == "yes" else "0"
    joint = Counter(
        (t, "".join(v[s] for s in SYSTEMS)) for (t, _), v in verdicts.items() if len(v) == 3
    )
    return {"counts": out, "joint": joint}


def assert_matches_tally(counts: JudgeCounts, expected: dict) -> None:
    assert counts.systems == SYSTEMS and counts.strata == STRATA
    for s in SYSTEMS:
        for t in STRATA:
            for f in FIELDS:
                got = int(counts.dataset[f].sel(system=s, stratum=t))
                assert got == expected["counts"][s, t, f], (s, t, f)
    if counts.has_joint:
        joint = counts.joint
        got = {
            (t, p): int(joint.sel(stratum=t, pattern=p))
            for t in joint.stratum.values.tolist()
            for p in joint.pattern.values.tolist()
            if joint.sel(stratum=t, pattern=p) > 0
        }
        assert got == dict(expected["joint"])


@pytest.fixture(scope="module")
def tables():
    return make_tables()


@pytest.fixture(scope="module")
def reference(tables):
    """Counts from the pandas tables (the reference the other engines must reproduce)."""
    test, calibration = tables
    plain = JudgeCounts.from_frames(test, calibration, **GROUP)
    paired = JudgeCounts.from_frames(test, calibration, **GROUP, item="item")
    expected = tally(test, calibration)
    assert_matches_tally(plain, expected)
    assert_matches_tally(paired, expected)
    # The tables are not degenerate: unshared items exist and several patterns are observed.
    assert 0 < int(paired.joint.sum()) < test["item"].nunique()
    assert paired.joint.sizes["pattern"] >= 6
    return {"plain": plain, "paired": paired}


@pytest.fixture(scope="module")
def duck():
    con = duckdb.connect()
    yield con
    con.close()


@pytest.fixture(scope="module")
def spark():
    pyspark_sql = pytest.importorskip("pyspark.sql")
    # SparkContext installs its own SIGINT handler and leaves it after stop(); restore ours so
    # that later tests (Ctrl-C handling in tests/models/test_fit_hostile.py) see Python's.
    handler = signal.getsignal(signal.SIGINT)
    session = (
        pyspark_sql.SparkSession.builder.master("local[1]")
        .appName("bayesjudge-tests")
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
    """Return ``frame`` as a table of one engine; Parquet-backed engines read ``path``."""
    if engine == "pandas":
        return frame
    if engine == "polars":
        return pl.from_pandas(frame)
    if engine == "polars-lazy":
        return pl.from_pandas(frame).lazy()
    if engine in ("duckdb", "spark"):
        frame.to_parquet(path, index=False)
        if engine == "duckdb":
            return request.getfixturevalue("duck").read_parquet(str(path))
        return request.getfixturevalue("spark").read.parquet(str(path))
    if engine == "duckdb-pandas":
        return request.getfixturevalue("duck").from_df(frame)
    if engine == "dask":
        return dd.from_pandas(frame, npartitions=3)
    raise AssertionError(engine)


FAST = ["pandas", "polars", "polars-lazy", "duckdb", "duckdb-pandas", "dask"]
ENGINES = [*FAST, pytest.param("spark", marks=pytest.mark.slow)]


def from_frames(*args, **kwargs) -> JudgeCounts:
    """JudgeCounts.from_frames with only narwhals' Dask packaging notice filtered."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=DASK_NOTICE, category=FutureWarning)
        return JudgeCounts.from_frames(*args, **kwargs)


# --------------------------------------------------------------------- engines agree


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_give_identical_counts(engine, tables, reference, tmp_path, request):
    test, calibration = tables
    t = to_engine(test, engine, tmp_path / "test.parquet", request)
    c = to_engine(calibration, engine, tmp_path / "cal.parquet", request)
    plain = from_frames(t, c, **GROUP)
    assert plain.dataset.identical(reference["plain"].dataset)
    paired = from_frames(t, c, **GROUP, item="item")
    assert paired.dataset.identical(reference["paired"].dataset)
    assert paired.joint.attrs == reference["paired"].joint.attrs


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_positive_and_one_dim(engine, tables, tmp_path, request):
    test, _ = tables
    # Labels outside the vocabulary: "good" means correct, anything else must be "bad".
    yes = test["judge"].str.strip().str.lower() == "yes"
    relabelled = test.assign(judge=np.where(yes, " Good", "bad"))
    expected = JudgeCounts.from_frames(test, system="system", item="item")
    got = from_frames(
        to_engine(relabelled, engine, tmp_path / "t.parquet", request),
        system="system",
        positive="good",
        item="item",
    )
    assert got.strata == ["all"]
    assert got.dataset.identical(expected.dataset)


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_positive_given_as_text_matches_numbers(engine, tables, tmp_path, request):
    # Regression: positive="2" (as the command line passes it) did not match the number 2.
    test, _ = tables
    yes = test["judge"].str.strip().str.lower() == "yes"
    numeric = test.assign(judge=np.where(yes, 2, 5))
    expected = JudgeCounts.from_frames(test, **GROUP, item="item")
    got = from_frames(
        to_engine(numeric, engine, tmp_path / "t.parquet", request),
        **GROUP,
        positive="2",
        item="item",
    )
    assert got.dataset.identical(expected.dataset)


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_refuse_int_and_text_system_labels_across_tables(engine, tables, tmp_path, request):
    # Regression: system 1 in one table and "1" in the other became two systems printed alike.
    test, calibration = tables
    ids = {"a": 1, "b": 2, "c": 3}
    as_int = test.assign(system=test["system"].map(ids))
    as_text = calibration.assign(system=calibration["system"].map(ids).astype(str))
    with pytest.raises(
        ValueError, match=r"1 \(int, test table\) and '1' \(str, calibration table\)"
    ):
        from_frames(
            to_engine(as_int, engine, tmp_path / "t.parquet", request),
            to_engine(as_text, engine, tmp_path / "c.parquet", request),
            **GROUP,
        )


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_same_missing_label_warning(engine, tables, tmp_path, request):
    test, _ = tables
    holes = test.copy()
    holes.loc[holes.index[:7], "judge"] = None
    holes.loc[holes.index[7:9], "judge"] = "  "  # blank after stripping: missing too
    with pytest.warns(MissingLabelWarning) as expected:
        reference = JudgeCounts.from_frames(holes, **GROUP, item="item")
    assert "Dropped 9 of" in str(expected[0].message)
    with pytest.warns(MissingLabelWarning) as record:
        got = from_frames(
            to_engine(holes, engine, tmp_path / "t.parquet", request), **GROUP, item="item"
        )
    assert [str(w.message) for w in record] == [str(w.message) for w in expected]
    assert got.dataset.identical(reference.dataset)


def bad_cases(test: pd.DataFrame) -> dict:
    """Tables whose counting fails, with the start of the expected message."""
    unknown = test.copy()
    unknown.loc[unknown.index[:3], "judge"] = "maybe"
    unknown.loc[unknown.index[3], "judge"] = "dunno"
    repeated = pd.concat([test, test.iloc[[5]]], ignore_index=True)
    mixed = test.copy()
    first = mixed.index[mixed["item"] == mixed["item"].iloc[0]]
    mixed.loc[first[0], "stratum"] = "y" if mixed.loc[first[0], "stratum"] == "x" else "x"
    missing_id = test.astype({"item": "float64"})
    missing_id.loc[missing_id.index[4], "item"] = np.nan
    # Only the last system's ids are its own: partly shared items are refused (systems that
    # share no item at all are counted unpaired, tests/data/test_patterns_hostile_s10.py).
    disjoint = test.assign(
        item=test["item"].astype(str)
        + np.where(test["system"] == sorted(test["system"].unique())[-1], "-own", "")
    )
    empty_id = test.astype({"item": str})
    empty_id.loc[empty_id.index[2], "item"] = "  "  # an all-space id is a missing id
    blank_system = test.copy()
    blank_system.loc[blank_system.index[:2], "system"] = ["", " "]
    padded = test.copy()
    padded.loc[padded["system"] == "a", "system"] = "a "  # prints like "a"...
    padded.loc[padded.index[0], "system"] = "a"  # ... which is also present
    return {
        "unknown": (unknown, {}, r"labels that are not recognised: 'maybe' \(3 rows\), 'dunno'"),
        "positive": (unknown, {"positive": "yes"}, r"also holds .*'maybe' \(3 rows\)"),
        "repeated": (repeated, {"item": "item"}, r"unique within each system; 1 repeat"),
        "mixed": (mixed, {"item": "item"}, r"one stratum for every system; 1 item ids"),
        "missing-id": (missing_id, {"item": "item"}, "1 row with a missing item id"),
        "disjoint": (disjoint, {"item": "item"}, "No item id in column 'item' has a judge"),
        "positive-typo": (test, {"positive": "yess"}, r"positive='yess' is not a value of"),
        "empty-id": (empty_id, {"item": "item"}, "1 row with a missing item id"),
        "blank-system": (blank_system, {}, r"Column 'system' \(system\) .* 2 rows with a miss"),
        "print-alike": (padded, {}, r"'a ' \(str\) and 'a' \(str\)"),
    }


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_same_error_messages(engine, tables, tmp_path, request):
    test, _ = tables
    for name, (frame, kwargs, pattern) in bad_cases(test).items():
        with pytest.raises(ValueError, match=pattern) as expected:
            JudgeCounts.from_frames(frame, **GROUP, **kwargs)
        table = to_engine(frame, engine, tmp_path / f"{name}.parquet", request)
        with pytest.raises(ValueError) as got:
            from_frames(table, **GROUP, **kwargs)
        assert str(got.value) == str(expected.value), name


# -------------------------------------------------------------------------- laziness


def spy(monkeypatch, owner, methods: list[str], rows) -> list[int]:
    """Record the row count of every result of ``owner.<methods>`` (an engine's collectors)."""
    seen: list[int] = []
    for name in methods:
        original = getattr(owner, name)

        def wrapper(self, *args, _original=original, **kwargs):
            out = _original(self, *args, **kwargs)
            seen.append(rows(out))
            return out

        monkeypatch.setattr(owner, name, wrapper)
    return seen


def _no_item_rows(*args, **kwargs):
    raise AssertionError("the item-level rows were collected")


def check_only_small_tables_collected(tables_for_engine, seen: list[int], monkeypatch):
    """Count with and without item=; assert every collected result is a small table."""
    monkeypatch.setattr(data_module, "_item_rows", _no_item_rows)
    test, calibration = tables_for_engine
    from_frames(test, calibration, **GROUP)
    # 3 systems x 2 strata x (2 verdicts; 2 verdicts x 2 human labels) = 12 and 24 rows.
    assert len(seen) == 2 and seen[0] <= 12 and seen[1] <= 24, seen
    seen.clear()
    from_frames(test, **GROUP, item="item")
    # Count query, then the per-item query's summary: at most (flags, stratum, pattern)
    # combinations = 1 unshared row + 2 strata x 2**3 patterns, never the items.
    assert len(seen) == 2 and seen[0] <= 12 and seen[1] <= 1 + 2 * 2**3, seen


def test_duckdb_collects_only_grouped_counts(tables, tmp_path, duck, monkeypatch):
    test, calibration = tables
    test.to_parquet(tmp_path / "t.parquet", index=False)
    calibration.to_parquet(tmp_path / "c.parquet", index=False)
    collectors = [
        m
        for m in (
            "arrow",
            "to_arrow_table",
            "fetch_arrow_table",
            "df",
            "fetchdf",
            "pl",
            "fetchall",
            "fetchone",
            "fetchmany",
            "fetchnumpy",
            "to_df",
        )
        if hasattr(duckdb.DuckDBPyRelation, m)
    ]
    seen = spy(monkeypatch, duckdb.DuckDBPyRelation, collectors, lambda out: len(out))
    relations = (
        duck.read_parquet(str(tmp_path / "t.parquet")),
        duck.read_parquet(str(tmp_path / "c.parquet")),
    )
    assert len(test) > 500  # the item table is far larger than any collected table
    check_only_small_tables_collected(relations, seen, monkeypatch)


def test_dask_computes_only_grouped_counts(tables, monkeypatch):
    test, calibration = tables
    frames = (dd.from_pandas(test, npartitions=3), dd.from_pandas(calibration, npartitions=2))
    owner = type(frames[0])
    seen = spy(monkeypatch, owner, ["compute", "to_dask_array", "persist"], lambda out: len(out))
    check_only_small_tables_collected(frames, seen, monkeypatch)


@pytest.mark.slow
def test_spark_collects_only_grouped_counts(tables, tmp_path, spark, monkeypatch):
    test, calibration = tables
    test.to_parquet(tmp_path / "t.parquet", index=False)
    calibration.to_parquet(tmp_path / "c.parquet", index=False)
    frames = (
        spark.read.parquet(str(tmp_path / "t.parquet")),
        spark.read.parquet(str(tmp_path / "c.parquet")),
    )
    # The concrete class (pyspark.sql.classic.dataframe.DataFrame in PySpark 4). narwhals
    # collects through its _collect_as_arrow (a list of record batches) or, depending on the
    # PySpark version, toArrow / toPandas.
    owner = type(frames[0])
    collectors = [
        m
        for m in ("_collect_as_arrow", "toArrow", "toPandas", "collect", "toLocalIterator")
        if hasattr(owner, m)
    ]

    def rows(out) -> int:
        if isinstance(out, list):
            return sum(getattr(b, "num_rows", 1) for b in out)
        return out.num_rows if hasattr(out, "num_rows") else len(out)

    seen = spy(monkeypatch, owner, collectors, rows)
    # Nested collectors (toPandas calling collect) may record one small table twice, so only
    # the size of each record is bounded.
    monkeypatch.setattr(data_module, "_item_rows", _no_item_rows)
    from_frames(*frames, **GROUP)
    assert seen and max(seen) <= 24, seen
    seen.clear()
    from_frames(frames[0], **GROUP, item="item")
    assert seen and max(seen) <= 1 + 2 * 2**3, seen


# ------------------------------------------------------------------------ hypothesis

LABELS = {True: ["yes", " Correct", "PASS", "1"], False: ["no", "incorrect ", "Fail", None]}


@st.composite
def item_table(draw):
    """A small test table: systems judge items (some missing), labels in several spellings."""
    n_items = draw(st.integers(1, 12))
    systems = draw(
        st.lists(st.sampled_from(["s1", "s2", "s3"]), min_size=1, max_size=3, unique=True)
    )
    rows = []
    for i in range(n_items):
        stratum = draw(st.sampled_from(["u", "v"]))
        for s in systems:
            if draw(st.booleans()) or i == 0:
                rows.append((s, stratum, i, draw(st.sampled_from(LABELS[draw(st.booleans())]))))
    return pd.DataFrame(rows, columns=["system", "stratum", "item", "judge"])


def counts_or_error(table, **kwargs):
    """(dataset, warnings, error message) of one from_frames call."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", message=DASK_NOTICE, category=FutureWarning)
        try:
            out = JudgeCounts.from_frames(table, **kwargs).dataset
        except ValueError as error:
            out = str(error)
    return out, [str(w.message) for w in record]


def assert_same_outcome(frame: pd.DataFrame, tables) -> None:
    """Counts and joint table, warnings, or error message agree with pandas'."""
    expected, expected_warnings = counts_or_error(frame, **GROUP, item="item")
    for table in tables:
        got, got_warnings = counts_or_error(table, **GROUP, item="item")
        if isinstance(expected, str):
            assert got == expected
        else:
            assert not isinstance(got, str), got
            assert got.identical(expected)
        assert got_warnings == expected_warnings


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(item_table())
def test_property_engines_agree(frame):
    """Any small table gives the same outcome on pandas, polars (lazy) and DuckDB."""
    con = duckdb.connect()
    try:
        assert_same_outcome(frame, [pl.from_pandas(frame).lazy(), con.from_df(frame)])
    finally:
        con.close()


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(item_table(), st.integers(1, 3))
def test_property_dask_agrees(frame, partitions):
    """The same on Dask, with an item's rows spread over partitions (about 1 s an example)."""
    assert_same_outcome(frame, [dd.from_pandas(frame, npartitions=partitions)])


# --------------------------------------------------------------------- docs/scaling.md


def scaling_blocks() -> list[str]:
    text = (REPO / "docs" / "scaling.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def run_block(block: str, tmp_path, monkeypatch, tables) -> JudgeCounts:
    test, calibration = tables
    monkeypatch.chdir(tmp_path)
    test.to_parquet("test.parquet", index=False)
    calibration.to_parquet("calibration.parquet", index=False)
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=DASK_NOTICE, category=FutureWarning)
        exec(compile(block, "docs/scaling.md", "exec"), namespace)
    return namespace


def test_scaling_page_has_every_engine():
    blocks = scaling_blocks()
    text = "\n".join(blocks)
    for needle in (
        "pd.read_parquet",
        "pl.scan_parquet",
        "duckdb",
        "dask.dataframe",
        "SparkSession",
    ):
        assert needle in text, needle


@pytest.mark.parametrize("index", range(sum("SparkSession" not in b for b in scaling_blocks())))
def test_scaling_page_examples_run(index, tmp_path, monkeypatch, tables, reference):
    block = [b for b in scaling_blocks() if "SparkSession" not in b][index]
    namespace = run_block(block, tmp_path, monkeypatch, tables)
    check_page_counts(namespace, reference)


@pytest.mark.slow
def test_scaling_page_spark_example_runs(tmp_path, monkeypatch, tables, reference, spark):
    blocks = [b for b in scaling_blocks() if "SparkSession" in b]
    assert len(blocks) == 1
    # The session's JVM resolves relative paths against its own working folder (where the
    # session started), so the page's file names are made absolute here.
    block = blocks[0]
    for name in ("test.parquet", "calibration.parquet"):
        block = block.replace(f'"{name}"', repr(str(tmp_path / name)))
    namespace = run_block(block, tmp_path, monkeypatch, tables)  # reuses the session
    check_page_counts(namespace, reference)


def check_page_counts(namespace: dict, reference: dict) -> None:
    """Every example that counts the page's tables reproduces the pandas reference."""
    counts = [v for v in namespace.values() if isinstance(v, JudgeCounts)]
    assert counts, "the example builds no JudgeCounts"
    for c in counts:
        key = "paired" if c.has_joint else "plain"
        assert c.dataset.identical(reference[key].dataset)
