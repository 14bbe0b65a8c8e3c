"""Time the same public calls in two checkouts of bayesjudge, side by side: no slowdown.

Usage::

    git archive <old-commit> | tar -x -C /tmp/old      # the baseline checkout
    python benchmarks/bench_versions.py --baseline /tmp/old/src [--repeat 5]

Each operation runs in a fresh subprocess per checkout, the two checkouts alternating
(baseline, this, baseline, this, …) so that a change of machine load hits both alike; the
result per operation is the median over ``--repeat`` subprocesses of the best of three calls
inside each, and the ratio this / baseline (below 1: faster now). Only calls that exist with
the same meaning in both checkouts are timed (``bayesjudge.core.*``, ``estimate``, ``compare``,
``judge_diagnostics``, ``JudgeCounts.from_frames``, ``build_report``, ``fit(method="exact")``),
plus the import of the package and of the command line. Results go to
``benchmarks/results/versions.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

SETUP = """
import time, warnings
import numpy as np
import bayesjudge as bj
import bayesjudge.core as core
warnings.simplefilter("ignore")
rng = np.random.default_rng(7)

def best(func, calls=3):
    out = []
    for _ in range(calls):
        start = time.perf_counter(); func(); out.append(time.perf_counter() - start)
    return min(out)

def counts(systems, strata=1, n=500, m=60):
    theta = rng.uniform(0.3, 0.9, (systems, strata))
    return bj.simulate_counts(theta, 0.8, 0.85, n=n, m0=m, m1=m,
                              system=[f"s{i}" for i in range(systems)],
                              stratum=[f"t{j}" for j in range(strata)], random_seed=1)
"""

OPERATIONS = {
    "import bayesjudge": "import subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "subprocess.run([sys.executable, '-c', 'import bayesjudge'], check=True)\n"
    "result = time.perf_counter() - start",
    "bayesjudge --help (CLI import)": "import subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "subprocess.run([sys.executable, '-m', 'bayesjudge.cli', '--help'], check=True,\n"
    "               capture_output=True)\n"
    "result = time.perf_counter() - start",
    "core.lang_reiczigel_interval, 1e5 sets": (
        "p, q0, q1 = (rng.integers(1, 200, 100000) / 200 for _ in range(3))\n"
        "result = best(lambda: core.lang_reiczigel_interval(p, q0, q1, 1000, 200, 200))"
    ),
    "core.bootstrap_rogan_gladen, 20000 resamples": (
        "result = best(lambda: core.bootstrap_rogan_gladen("
        "400, 1000, 70, 100, 90, 100, n_resamples=20000, random_seed=1))"
    ),
    "estimate, 300 systems x 4 strata, 3 methods": "c = counts(300, 4)\n"
    "def run():\n"
    "    for m in ('lang-reiczigel', 'ppi++', 'naive'):\n"
    "        bj.estimate(c, method=m)\n"
    "result = best(run)",
    "estimate bootstrap, 30 systems": "c = counts(30)\n"
    "result = best(lambda: bj.estimate(c, method='bootstrap', random_seed=1))",
    "compare delta + bootstrap, 30 systems": "c = counts(30)\n"
    "def run():\n"
    "    bj.compare(c, method='delta')\n"
    "    bj.compare(c, method='bootstrap', random_seed=1, n_resamples=2000)\n"
    "result = best(run)",
    "judge_diagnostics + check_comparison, 30 systems": "c = counts(30)\n"
    "def run():\n"
    "    bj.judge_diagnostics(c, random_seed=1)\n"
    "    bj.check_comparison(c, random_seed=1)\n"
    "result = best(run)",
    "JudgeCounts.from_frames, 10^6 rows (pandas)": "import pandas as pd\n"
    "size = 1_000_000\n"
    "test = pd.DataFrame({'system': rng.choice(['a', 'b', 'c'], size),\n"
    "                     'stratum': rng.choice(['x', 'y'], size),\n"
    "                     'judge': rng.random(size) < 0.6})\n"
    "cal = pd.DataFrame({'system': rng.choice(['a', 'b', 'c'], 3000),\n"
    "                    'stratum': rng.choice(['x', 'y'], 3000),\n"
    "                    'judge': rng.random(3000) < 0.6, 'human': rng.random(3000) < 0.5})\n"
    "result = best(lambda: bj.JudgeCounts.from_frames(test, cal, judge='judge', human='human',\n"
    "                                                system='system', stratum='stratum'))",
    "build_report closed forms, 30 systems": "c = counts(30)\n"
    "result = best(lambda: bj.build_report(c, random_seed=1), calls=1)",
    "fit(method='exact'), 200 groups": "c = counts(200)\n"
    "result = best(lambda: bj.fit(c, method='exact', random_seed=1).summary())",
}


def run_one(src: Path, name: str) -> float:
    code = SETUP + "\n" + OPERATIONS[name] + "\nprint(repr(result))\n"
    env = {**os.environ, "PYTHONPATH": str(src), "MPLBACKEND": "Agg"}
    env.pop("BAYESJUDGE_DATA", None)
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env, capture_output=True, text=True, check=False, cwd=str(src.parent),
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{name} failed with {src}:\n{out.stderr[-2000:]}")
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="src/ of the old checkout")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="*", help="operation names (default: all)")
    parser.add_argument("--out", type=Path, default=RESULTS / "versions.json")
    args = parser.parse_args(argv)
    this = ROOT / "src"
    names = args.only or list(OPERATIONS)
    load_before = os.getloadavg()
    rows = []
    for name in names:
        old, new = [], []
        for _ in range(args.repeat):
            old.append(run_one(args.baseline.resolve(), name))
            new.append(run_one(this, name))
        row = {
            "operation": name,
            "baseline_s": statistics.median(old),
            "this_s": statistics.median(new),
            "baseline_runs": old,
            "this_runs": new,
        }
        row["ratio_this_over_baseline"] = row["this_s"] / row["baseline_s"]
        rows.append(row)
        print(f"{name:<52} {row['baseline_s']:8.3f} s {row['this_s']:8.3f} s "
              f"ratio {row['ratio_this_over_baseline']:5.2f}", flush=True)  # fmt: skip
    out = {
        "benchmark": "the same public calls in two checkouts, alternating subprocesses",
        "baseline": str(args.baseline),
        "repeat": args.repeat,
        "machine": {
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
        },
        "operations": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")
    return out


if __name__ == "__main__":
    main()
