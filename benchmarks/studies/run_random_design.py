"""Full-size random-design study (issue 15): coverage, width, goals and a markdown record.

Run as ``python benchmarks/studies/run_random_design.py [--grid issue15|fig5] [--reps R]
[--draws S] [--theta 0.05,0.3,...]``. Runs ``bayesjudge.studies.random_design.run`` with all six
estimators on both samples (random labelling; a stratified sample declared random), writes
the table, settings, figure and ``timing.json`` under ``benchmarks/studies/results/<stem>/``
and a record ``benchmarks/studies/results/<stem>.md``, ``<stem>`` being ``random-design`` for
the default grid (the folder ``run_all.py`` indexes) and ``random-design-<grid>`` for another,
with the wall and CPU time,
the load average, the goals (:func:`bayesjudge.studies.random_design.goals`) and the
coverage / width / bias tables.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from bayesjudge.studies import random_design

RESULTS = Path(__file__).parent / "results"


def _table(frame, var, digits, sample, estimand):
    part = frame[(frame["sample"] == sample) & (frame["estimand"] == estimand)]
    wide = part.pivot_table(index="theta", columns="estimator", values=var)
    wide = wide[[e for e in random_design.ESTIMATORS if e in wide.columns]]
    header = "| θ | " + " | ".join(wide.columns) + " |"
    rule = "|---:|" + "---:|" * len(wide.columns)
    lines = [header, rule]
    for theta, row in wide.iterrows():
        lines.append(f"| {theta:.2f} | " + " | ".join(f"{v:.{digits}f}" for v in row) + " |")
    return "\n".join(lines)


def _goals_table(goals):
    lines = ["| goal | estimator | estimand | value | worst θ | target | passed |",
             "|---|---|---|---:|---:|---|---|"]  # fmt: skip
    for row in goals.itertuples():
        lines.append(
            f"| {row.goal} | {row.estimator} | {row.estimand} | {row.value:.4f} | "
            f"{row.worst_theta:.2f} | {row.target} | {'yes' if row.passed else '**no**'} |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="issue15", choices=sorted(random_design.GRIDS))
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--theta", default=None, help="comma list (default: the study's)")
    args = parser.parse_args()
    theta = None if args.theta is None else [float(t) for t in args.theta.split(",")]

    load_before = os.getloadavg()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = random_design.run(
        reps=args.reps, grid=args.grid, theta=theta, draws=args.draws, progress=True
    )
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    load_after = os.getloadavg()

    stem = "random-design" if args.grid == "issue15" else f"random-design-{args.grid}"
    out = RESULTS / stem
    result.save(out)
    seconds = json.loads(result.table.attrs["seconds"])
    record = {
        "study": "random-design",
        "options": {"grid": args.grid, "draws": args.draws} | ({"theta": theta} if theta else {}),
        "grid": args.grid,
        "reps": args.reps,
        "draws": args.draws,
        "random_seed": result.settings["random_seed"],
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "seconds_per_estimator": seconds,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "date": time.strftime("%Y-%m-%d"),
    }
    (out / "timing.json").write_text(json.dumps(record, indent=2) + "\n")

    frame = result.to_frame()
    goals = random_design.goals(result.table)
    design = result.settings["design"]
    nominal = 1 - result.settings["alpha"]
    band = 3 * np.sqrt(nominal * (1 - nominal) / args.reps)
    lines = [
        f"# Random-design study, grid `{args.grid}`, {args.reps:,} replications",
        "",
        f"Design: n = {design['n']} unlabelled + m = {design['m']} labelled items per data set, "
        f"(q0, q1) = ({design['q0']}, {design['q1']}), flat priors, nominal {nominal:.0%}, "
        f"{args.draws} posterior draws per data set for the Bayesian test-set interval; seed "
        f"{result.settings['random_seed']} (`random_design.DEFAULT_SEED`).",
        "",
        f"Wall time {wall:.1f} s (CPU {cpu:.1f} s, {os.cpu_count()} cores, shared), load "
        f"average {load_before[0]:.2f} before / {load_after[0]:.2f} after. Seconds per part: "
        + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items())
        + ".",
        "",
        f"## Goals (coverage band {nominal:g} ± {band:.4f} = ± 3 MC-SE)",
        "",
        _goals_table(goals),
        "",
    ]
    for sample, estimand, title in (
        ("random", "population", "Random labelling, population θ"),
        ("random", "test-set", "Random labelling, test-set θ"),
        ("stratified", "population", "Stratified sample (m0 = m1), population θ"),
    ):
        lines += [f"## {title}", ""]
        for var, digits, name in (
            ("coverage", 3, "Coverage"),
            ("length", 4, "Mean interval width"),
            ("bias", 4, "Bias"),
        ):
            lines += [f"### {name}", "", _table(frame, var, digits, sample, estimand), ""]
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:20]))


if __name__ == "__main__":
    main()
