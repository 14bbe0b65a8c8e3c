"""Benchmark: reading 10^6 judge verdicts from harness logs against reading them from Parquet.

Run from the repository root::

    python benchmarks/bench_readers.py [--rows 1000000] [--inspect-samples 2000] [--repeat 3]

Writes, in a temporary folder, the same verdicts (``--rows`` samples: 1000 systems' worth of
items is not needed; one system, items ``"000001"``..., verdicts 0/1, 3 epochs per item) as

* generic JSON Lines (``{"item", "system", "judge", "epoch"}`` per line, ``json.dumps``);
* an lm-eval sample file, written by lm-eval's own ``EvaluationTracker.save_results_samples``
  from samples shaped as lm-eval's ``simple_evaluate`` returns them (document, arguments,
  responses, hashes, the ``acc`` metric): the lines are as long as real ones;
* an Inspect AI log of ``--inspect-samples`` samples, written by Inspect's own
  ``write_eval_log`` (copies of the samples of a mock-model ``eval()``): Inspect's writer takes
  tens of milliseconds per sample here, so a 10^6-sample log is not practical to write;
* Parquet (``pyarrow``), the reference,

then times ``bayesjudge.data.harness.read_table`` on each (best of ``--repeat``, wall clock,
in this process) and reports each time per 10^6 samples and as a ratio to Parquet. Results go
to ``benchmarks/results/readers.json`` (written atomically) with the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "references"))

from bayesjudge._io import atomic_write  # noqa: E402
from bayesjudge.data.harness import read_table  # noqa: E402

EPOCHS = 3


def verdict_table(rows: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    items = np.repeat(np.arange(rows // EPOCHS + 1), EPOCHS)[:rows]
    epoch = np.tile(np.arange(1, EPOCHS + 1), rows // EPOCHS + 1)[:rows]
    return pd.DataFrame(
        {
            "item": [f"{i:06d}" for i in items],
            "system": "model-a",
            "judge": (rng.random(rows) < 0.7).astype(np.int64),
            "epoch": epoch,
        }
    )


def write_jsonl(table: pd.DataFrame, path: Path) -> None:
    with path.open("w") as handle:
        for item, system, judge, epoch in table.itertuples(index=False):
            handle.write(
                json.dumps({"item": item, "system": system, "judge": judge, "epoch": epoch}) + "\n"
            )


def write_lm_eval(rows: int, folder: Path, seed: int = 1) -> Path:
    """One lm-eval sample file of ``rows`` documents, by lm-eval's own writer."""
    from lm_eval.loggers import EvaluationTracker

    rng = np.random.default_rng(seed)
    acc = (rng.random(rows) < 0.7).astype(float)
    samples = []
    for doc_id in range(rows):
        question = f"Question {doc_id}: which answer is right?"
        samples.append(
            {
                "doc_id": doc_id,
                "doc": {"question": question, "choices": ["a", "b", "c"], "label": doc_id % 3},
                "target": doc_id % 3,
                "arguments": [(question, " a"), (question, " b"), (question, " c")],
                "resps": [[(-1.5, False)], [(-0.7, False)], [(-2.1, False)]],
                "filtered_resps": [(-1.5, False), (-0.7, False), (-2.1, False)],
                "filter": "none",
                "metrics": ["acc"],
                "doc_hash": f"{doc_id:064x}",
                "prompt_hash": f"{doc_id + 1:064x}",
                "target_hash": f"{doc_id % 3:064x}",
                "acc": acc[doc_id],
            }
        )
    tracker = EvaluationTracker(output_path=str(folder))
    tracker.general_config_tracker.model_name_sanitized = "model-a"
    tracker.date_id = "2026-11-27T00-00-00"
    tracker.save_results_samples(task_name="bench", samples=samples)
    (path,) = folder.glob("model-a/samples_bench_*.jsonl")
    (path.parent / "results_2026-11-27T00-00-00.json").write_text(
        json.dumps({"model_name": "model-a"})
    )
    return path


def write_inspect(samples: int, folder: Path) -> Path:
    from harness_logs import write_inspect_log
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(write_inspect_log(folder / "seed")))
    base = [s for s in log.samples if s.scores]
    copies = []
    for i in range(samples):
        sample = base[i % len(base)].model_copy()
        sample.id, sample.epoch = f"{i // EPOCHS:06d}", i % EPOCHS + 1
        copies.append(sample)
    log.samples = copies
    path = folder / "big.eval"
    write_eval_log(log, str(path))
    return path


def best_of(repeat: int, call) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--inspect-samples", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    record = {
        "rows": args.rows,
        "inspect_samples": args.inspect_samples,
        "repeat": args.repeat,
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average_before": list(os.getloadavg()),
        "results": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        table = verdict_table(args.rows)
        parquet = folder / "verdicts.parquet"
        table.to_parquet(parquet, index=False)
        jsonl = folder / "verdicts.jsonl"
        write_jsonl(table, jsonl)
        lm_eval = write_lm_eval(args.rows, folder / "lm")
        inspect = write_inspect(args.inspect_samples, folder / "inspect")
        files = {
            "parquet": (parquet, {}, args.rows),
            "jsonl": (jsonl, {"system": "system", "epoch": "epoch"}, args.rows),
            "lm-eval": (lm_eval, {"metric": "acc"}, args.rows),
            "inspect": (inspect, {"scorer": "model_graded_qa"}, args.inspect_samples),
        }
        for name, (path, options, rows) in files.items():
            frame = read_table(path, **options)
            assert len(frame) == rows, (name, len(frame))
            seconds = best_of(args.repeat, lambda p=path, o=options: read_table(p, **o))
            record["results"][name] = {
                "samples": rows,
                "bytes": path.stat().st_size,
                "seconds": round(seconds, 4),
                "seconds_per_million": round(seconds * 1e6 / rows, 3),
            }
            print(f"{name:8s} {rows:>9,} samples {seconds:8.3f} s", flush=True)
    base = record["results"]["parquet"]["seconds_per_million"]
    for result in record["results"].values():
        result["ratio_to_parquet"] = round(result["seconds_per_million"] / base, 2)
    record["load_average_after"] = list(os.getloadavg())
    out = ROOT / "benchmarks" / "results" / "readers.json"
    atomic_write(out, json.dumps(record, indent=2) + "\n")
    print(json.dumps(record["results"], indent=2))


if __name__ == "__main__":
    main()
