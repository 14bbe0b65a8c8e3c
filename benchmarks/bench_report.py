"""Benchmark: the evaluation report of 30 and of 300 systems, side by side in one run.

Run from the repository root::

    python benchmarks/bench_report.py [--sizes 30 300] [--repeats 1]

For each size K, simulated counts (``bj.simulate_counts``: θ ~ U(0.4, 0.9) with seed 0,
q0 = 0.85, q1 = 0.9, n = 500, m0 = m1 = 100, seed 1) and each source:

* ``closed forms``: ``write_report(counts, folder)`` with the report's defaults (bootstrap
  comparison, 10 000 resamples);
* ``exact``: ``write_report(bj.fit(counts, method="exact"), folder)`` (the fit is timed
  apart, outside the report time).

Each (K, source) runs in a fresh subprocess, so that its peak memory (``ru_maxrss``) is its
own; the wall time of ``write_report`` is measured there with ``time.perf_counter``. The
warnings are captured and counted as the lines Python would print
(``warnings.formatwarning``). Results, with the ratio 300/30 of each source (goal ≤ 15, and
a 300-system report well under two minutes), go to ``benchmarks/results/report.json`` with
the load average (the machine is shared; wall time is inflated when other processes run).

Before issue 13's fix the closed-form report took 5.5 s for 30 systems, 75 s and 869 MB for
100, and did not finish in 300 s for 300 (all pairs: 44 850 bootstrap comparisons and their
figures). Measured side by side on this 2-core machine (2026-11-26, load ≈ 3.5): the code
before the fix took 19.3 s and printed 486 warning lines for 30 systems (and did not finish
100 in 400 s at load ≈ 8); after it, 5.6 s and 2 lines for 30, 10.8 s for 300 (ratio 1.9).
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

RESULTS = Path(__file__).parent / "results" / "report.json"


def one(size: int, source: str) -> dict:
    """Time one report in this process; return its numbers."""
    import numpy as np

    import bayesjudge as bj
    from bayesjudge.report import write_report

    rng = np.random.default_rng(0)
    counts = bj.simulate_counts(rng.uniform(0.4, 0.9, size), 0.85, 0.9, n=500, m0=100, m1=100,
                                system=[f"system-{i:03d}" for i in range(size)],
                                random_seed=1)  # fmt: skip
    fit_s = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if source == "exact":
            start = time.perf_counter()
            subject = bj.fit(counts, method="exact", random_seed=1)
            fit_s = time.perf_counter() - start
            caught.clear()
        else:
            subject = counts
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            report = write_report(subject, folder, random_seed=1)
            seconds = time.perf_counter() - start
            sizes = {p.name: p.stat().st_size for p in report.paths.values()}
    lines = sum(
        warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line).count("\n")
        for w in caught
    )
    return {
        "systems": size,
        "source": source,
        "report_s": round(seconds, 2),
        "fit_s": None if fit_s is None else round(fit_s, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "warnings": len(caught),
        "warning_lines": lines,
        "html_bytes": sizes.get("report.html"),
        "markdown_bytes": sizes.get("report.md"),
        "files": sorted(sizes),
        "compared_pairs": int(report.tables["theta_difference"]["pair"].nunique()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[30, 300])
    parser.add_argument("--sources", nargs="+", default=["closed forms", "exact"])
    parser.add_argument("--one", nargs=2, metavar=("SIZE", "SOURCE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(int(args.one[0]), args.one[1])))
        return
    runs = []
    for source in args.sources:
        for size in args.sizes:
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(size), source],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(json.dumps(runs[-1]))
    ratios = {}
    small, large = min(args.sizes), max(args.sizes)
    for source in args.sources:
        times = {r["systems"]: r["report_s"] for r in runs if r["source"] == source}
        ratios[source] = round(times[large] / times[small], 2)
    result = {
        "benchmark": "write_report of simulated counts, closed forms and exact posterior",
        "sizes": args.sizes,
        "runs": runs,
        f"ratio_{large}_over_{small}": ratios,
        "goal": f"ratio <= 15 and the {large}-system report well under 120 s",
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"ratios": ratios, "written": str(RESULTS)}))


if __name__ == "__main__":
    main()
