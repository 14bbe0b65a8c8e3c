"""Benchmark: counting a 10-million-row Parquet table on each dataframe engine.

Run from the repository root::

    python benchmarks/bench_engines.py [--rows 10000000] [--spark] [--keep PATH]

The script writes an item-level test table to Parquet (``--rows`` rows: 8 systems judge each
of ``rows / 8`` items, 5 strata by item, verdicts "yes"/"no"; columns system, stratum, item,
judge; about 11 MB) and then, for each engine, runs
``JudgeCounts.from_frames(table, system="system", stratum="stratum")`` and the same with
``item="item"`` (the joint verdict table) in a **fresh Python process**:

* ``pandas``: ``pd.read_parquet`` (the whole table in memory), then counting;
* ``polars-lazy``: ``pl.scan_parquet`` (the path itself gives the same polars scan);
* ``duckdb``: ``duckdb.read_parquet`` (a relation; the query runs in DuckDB);
* ``dask``: ``dask.dataframe.read_parquet``;
* ``spark`` (with ``--spark``): ``spark.read.parquet`` on ``local[*]``.

Each process imports its engine and bayesjudge, records its peak resident memory
(``ru_maxrss``) after the imports, then times each call (best of ``--repeat`` runs, wall
clock, reading the file included) and records the peak memory at the end; the difference is
the memory the counting needed on top of the imports. Spark's work happens in a JVM child
process, whose memory is not in these figures. The machine and its load average are recorded
with the results in ``benchmarks/results/engines.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = 8
STRATA = 5
ENGINES = ["pandas", "polars-lazy", "duckdb", "dask"]


def write_table(path: Path, rows: int, seed: int = 1) -> None:
    """Write the item-level test table (``rows`` rows) to Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    n_items = rows // SYSTEMS
    item = np.repeat(np.arange(n_items, dtype=np.int64), SYSTEMS)
    system = np.tile(np.arange(SYSTEMS), n_items)
    accuracy = np.linspace(0.5, 0.85, SYSTEMS)[system]
    judge = np.where(rng.random(item.size) < accuracy, "yes", "no")
    table = pa.table(
        {
            "system": pa.array(np.array([f"system_{s}" for s in range(SYSTEMS)])[system]),
            "stratum": pa.array(np.array([f"stratum_{t}" for t in range(STRATA)])[item % STRATA]),
            "item": pa.array(item),
            "judge": pa.array(judge),
        }
    )
    pq.write_table(table, path, row_group_size=1_000_000)


def spark_session():
    """A local Spark session on every core (created once per process)."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[*]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def open_table(engine: str, path: str):
    """The engine's table over the Parquet file (lazy where the engine is)."""
    if engine == "pandas":
        import pandas as pd

        return pd.read_parquet(path)
    if engine == "polars-lazy":
        import polars as pl

        return pl.scan_parquet(path)
    if engine == "duckdb":
        import duckdb

        return duckdb.read_parquet(path)
    if engine == "dask":
        import dask.dataframe as dd

        return dd.read_parquet(path)
    if engine == "spark":
        return spark_session().read.parquet(path)
    raise ValueError(engine)


def prepare(engine: str) -> None:
    """Import the engine's modules (and start Spark) without reading the table."""
    modules = {
        "pandas": ["pandas", "pyarrow.parquet"],
        "polars-lazy": ["polars"],
        "duckdb": ["duckdb"],
        "dask": ["dask.dataframe", "pyarrow.parquet"],
        "spark": ["pyspark.sql"],
    }[engine]
    for module in modules:
        __import__(module)
    if engine == "spark":
        spark_session()


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def run_engine(engine: str, path: str, repeat: int) -> dict:
    """Time the counting on one engine in this (fresh) process."""
    import bayesjudge as bj

    prepare(engine)  # import the engine (and start Spark) before the baseline
    baseline = peak_mb()
    out = {"engine": engine, "import_peak_mb": round(baseline, 1)}
    for label, kwargs in (("counts", {}), ("counts_item", {"item": "item"})):
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            with warnings.catch_warnings():  # narwhals' notice about its Dask plugin
                warnings.filterwarnings("ignore", message="Dask support is moving")
                counts = bj.JudgeCounts.from_frames(
                    open_table(engine, path), system="system", stratum="stratum", **kwargs
                )
            times.append(time.perf_counter() - start)
        out[f"{label}_s"] = round(min(times), 3)
        out[f"{label}_all_s"] = [round(t, 3) for t in times]
        out[f"{label}_n"] = int(counts.n.sum())
        if kwargs:
            out["shared_items"] = int(counts.joint.sum())
    out["peak_mb"] = round(peak_mb(), 1)
    out["counting_mb"] = round(out["peak_mb"] - baseline, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--spark", action="store_true", help="also time PySpark (local[*])")
    parser.add_argument("--keep", type=Path, help="write (or reuse) the Parquet file here")
    parser.add_argument("--engines", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--run", help=argparse.SUPPRESS)  # child process: one engine
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        print(json.dumps(run_engine(args.run, args.path, args.repeat)))
        return
    engines = args.engines or ENGINES + (["spark"] if args.spark else [])
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "test.parquet"
        if not path.exists():
            start = time.perf_counter()
            write_table(path, args.rows)
            print(f"wrote {args.rows:,} rows to {path} in {time.perf_counter() - start:.1f} s")
        size_mb = path.stat().st_size / 2**20
        results = []
        for engine in engines:
            command = [sys.executable, __file__, "--run", engine, "--path", str(path)]
            command += ["--repeat", str(args.repeat)]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            results.append(result)
            print(
                f"{engine:12s} counts {result['counts_s']:6.2f} s   with item= "
                f"{result['counts_item_s']:6.2f} s   peak {result['peak_mb']:7.0f} MB "
                f"(+{result['counting_mb']:.0f} MB over the imports)"
            )
    record = {
        "rows": args.rows,
        "parquet_mb": round(size_mb, 1),
        "systems": SYSTEMS,
        "strata": STRATA,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(),
        },
        "date": time.strftime("%Y-%m-%d"),
        "results": results,
    }
    out = ROOT / "benchmarks" / "results" / "engines.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"results in {out}")


if __name__ == "__main__":
    main()
