"""Full-size coverage study (Lee et al. Fig. 5): timing and a markdown record.

Run as ``python benchmarks/studies/run_full.py [--grid fig5|appendix] [--reps R]``. Runs
``bayesjudge.studies.coverage.run`` with all five estimators (21 θ × 10,000 replications by
default), writes the table, settings and figure under
``benchmarks/studies/results/coverage_<grid>/`` and a record
``benchmarks/studies/results/coverage_<grid>.md`` with the wall and CPU time, the time per
estimator, the load average, and the coverage / bias / length tables.

The compiled bootstrap kernel is warmed up on a tiny run first (numba compiles it once per
machine and caches it on disk), so the timed run measures the study, not the compiler.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from bayesjudge.studies import coverage

RESULTS = Path(__file__).parent / "results"


def _table(frame, var, digits):
    wide = frame.pivot_table(index="theta", columns="estimator", values=var)
    wide = wide[[e for e in coverage.ESTIMATORS if e in wide.columns]]
    header = "| θ | " + " | ".join(wide.columns) + " |"
    rule = "|---:|" + "---:|" * len(wide.columns)
    lines = [header, rule]
    for theta, row in wide.iterrows():
        lines.append(f"| {theta:.2f} | " + " | ".join(f"{v:.{digits}f}" for v in row) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="fig5", choices=sorted(coverage.GRIDS))
    parser.add_argument("--reps", type=int, default=10_000)
    args = parser.parse_args()

    coverage.run(reps=20, theta=[0.5], estimators=["bootstrap", "bayes"])  # warm-up, compile
    load_before = os.getloadavg()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = coverage.run(reps=args.reps, grid=args.grid, progress=True)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    load_after = os.getloadavg()

    out = RESULTS / f"coverage_{args.grid}"
    result.save(out)
    seconds = json.loads(result.table.attrs["seconds"])
    record = {
        "grid": args.grid,
        "reps": args.reps,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "seconds_per_estimator": seconds,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    (out / "timing.json").write_text(json.dumps(record, indent=2) + "\n")

    frame = result.to_frame()
    lines = [
        f"# Coverage study, grid `{args.grid}`, {args.reps:,} replications",
        "",
        f"Wall time {wall:.1f} s (CPU {cpu:.1f} s, {os.cpu_count()} cores), load average "
        f"{load_before[0]:.2f} before / {load_after[0]:.2f} after. Seconds per part: "
        + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items())
        + ".",
        "",
    ]
    designs = frame.groupby(["n", "m", "q0", "q1"])
    for (n, m, q0, q1), part in designs:
        lines += [f"## n = {n}, m0 = m1 = {m // 2}, (q0, q1) = ({q0}, {q1})", ""]
        for var, digits in (("coverage", 4), ("bias", 4), ("length", 4)):
            lines += [f"### {var}", "", _table(part, var, digits), ""]
    (RESULTS / f"coverage_{args.grid}.md").write_text("\n".join(lines))
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
