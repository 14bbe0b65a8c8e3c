"""Benchmark: reading 10^6 judge verdicts from harness logs against reading them from Parquet.

Run from the repository root::

    python benchmarks/bench_readers.py [--rows 1000000] [--inspect-samples 4000] [--repeat 3]
        [--out benchmarks/results/readers.json]

Writes, in a temporary folder, the same verdicts (``--rows`` samples: 1000 systems' worth of
items is not needed; one system, items ``"000001"``..., verdicts 0/1, 3 epochs per item) as

* generic JSON Lines (``{"item", "system", "judge", "epoch"}`` per line, ``json.dumps``);
* an lm-eval sample file, written by lm-eval's own ``EvaluationTracker.save_results_samples``
  from samples shaped as lm-eval's ``simple_evaluate`` returns them (document, arguments,
  responses, hashes, the ``acc`` metric): the lines are as long as real ones;
* an Inspect AI log of ``--inspect-samples`` samples, written by Inspect's own
  ``write_eval_log`` (copies of the scored samples of a mock-model ``eval()``, their events and
  all but the first two messages left out: the reader reads the sample summaries, which are the
  same, and the writer is 3x faster). Inspect's writer buffers every sample and de-duplicates
  the buffer on each one it adds, so its time grows with the square of the count (about 4 CPU
  s for 2000 samples, 18 for 4000 on the 2-core machine): a 10^5- or 10^6-sample log is out of
  reach, and the reading time per sample is what this measures;
* Parquet (``pyarrow``), the reference,

then times ``bayesjudge.data.harness.read_table`` on each (best of ``--repeat``, in this
process): wall-clock seconds and CPU seconds (``time.process_time``: every thread of the
process, far less sensitive than wall time to other work on the machine), per 10^6 samples and
as a ratio to Parquet, with the load average before and after each format. A format
``meets_few_seconds`` when its CPU seconds per 10^6 samples are at most ``FEW_SECONDS`` (5 s):
the goal "reading a 10^6-sample log costs at most a few seconds", stated in CPU time so that it
holds on one core and under load. Results go to ``--out`` (written atomically) with the machine.
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
#: "A few seconds": CPU seconds per 10^6 samples a format may take.
FEW_SECONDS = 5.0


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
    light = [
        s.model_copy(update={"events": [], "messages": s.messages[:2], "attachments": {}})
        for s in log.samples
        if s.scores
    ]
    log.samples = [
        light[i % len(light)].model_copy(
            update={"id": f"{i // EPOCHS:06d}", "epoch": i % EPOCHS + 1}
        )
        for i in range(samples)
    ]
    path = folder / "big.eval"
    write_eval_log(log, str(path))
    return path


def best_of(repeat: int, call) -> tuple[float, float]:
    """The least wall-clock and the least CPU seconds of ``repeat`` calls."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        call()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(wall), min(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--inspect-samples", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "readers.json"
    )
    args = parser.parse_args()
    record = {
        "rows": args.rows,
        "inspect_samples": args.inspect_samples,
        "repeat": args.repeat,
        "few_seconds": {
            "cpu_seconds_per_million": FEW_SECONDS,
            "meaning": "a format meets the goal when reading 10^6 samples takes at most this "
            "many CPU seconds (time.process_time, all threads)",
        },
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
            load = list(os.getloadavg())
            wall, cpu = best_of(args.repeat, lambda p=path, o=options: read_table(p, **o))
            record["results"][name] = {
                "samples": rows,
                "bytes": path.stat().st_size,
                "seconds": round(wall, 4),
                "cpu_seconds": round(cpu, 4),
                "seconds_per_million": round(wall * 1e6 / rows, 3),
                "cpu_seconds_per_million": round(cpu * 1e6 / rows, 3),
                "load_average_before": load,
                "load_average_after": list(os.getloadavg()),
            }
            print(f"{name:8s} {rows:>9,} samples {wall:8.3f} s wall {cpu:8.3f} s CPU", flush=True)
    base = record["results"]["parquet"]
    for result in record["results"].values():
        for kind in ("seconds", "cpu_seconds"):
            ratio = result[f"{kind}_per_million"] / base[f"{kind}_per_million"]
            result[f"{kind}_ratio_to_parquet"] = round(ratio, 2)
        result["meets_few_seconds"] = result["cpu_seconds_per_million"] <= FEW_SECONDS
    record["load_average_after"] = list(os.getloadavg())
    atomic_write(args.out, json.dumps(record, indent=2) + "\n")
    print(json.dumps(record["results"], indent=2))


if __name__ == "__main__":
    main()
