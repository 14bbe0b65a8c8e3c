"""Benchmark: vectorised Lang-Reiczigel interval vs the reference scalar code in a Python loop.

Run from the repository root::

    python benchmarks/bench_lang_reiczigel.py [--size 100000] [--repeats 3]

Times ``bayesjudge.core.correction.lang_reiczigel_interval`` on ``--size`` random parameter sets
(one call) against Lee et al.'s ``confidence_interval`` (Appendix C, transcribed in
``tests/references/reference_lee.py``) called once per set, checks that the results agree (the
reference's swapped order when the smoothed Youden index is negative is sorted first), prints a
table and writes ``benchmarks/results/lang_reiczigel.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from reference_lee import confidence_interval  # noqa: E402

from bayesjudge.core.correction import lang_reiczigel_interval  # noqa: E402

ALPHA = 0.05
GOAL = 100.0


def parameter_sets(size: int, seed: int = 12345):
    """Random (p, q0, q1, n, m0, m1) from counts, as real evaluations produce them."""
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 100_000, size)
    m0 = rng.integers(1, 2_000, size)
    m1 = rng.integers(1, 2_000, size)
    p = rng.binomial(n, rng.uniform(0, 1, size)) / n
    q0 = rng.binomial(m0, rng.uniform(0.5, 1, size)) / m0
    q1 = rng.binomial(m1, rng.uniform(0.3, 1, size)) / m1
    return p, q0, q1, n, m0, m1


def best_of(func, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
    return best, out


def reference_loop(rows):
    lower = np.empty(len(rows))
    upper = np.empty(len(rows))
    # The reference's z is a numpy scalar: a zero smoothed J first warns, then raises.
    with np.errstate(divide="ignore", invalid="ignore"):
        for i, row in enumerate(rows):
            try:
                a, b = confidence_interval(*row, ALPHA)
            except ZeroDivisionError:
                a, b = 0.0, 1.0  # our documented answer where theta is not identified
            lower[i], upper[i] = min(a, b), max(a, b)
    return lower, upper


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "lang_reiczigel.json"
    )
    args = parser.parse_args(argv)

    p, q0, q1, n, m0, m1 = parameter_sets(args.size)
    rows = list(
        zip(p.tolist(), q0.tolist(), q1.tolist(), n.tolist(), m0.tolist(), m1.tolist(), strict=True)
    )

    t_vec, (lo, hi) = best_of(
        lambda: lang_reiczigel_interval(p, q0, q1, n, m0, m1, ALPHA), max(args.repeats, 5)
    )
    t_ref, (ref_lo, ref_hi) = best_of(lambda: reference_loop(rows), args.repeats)
    max_diff = float(max(np.abs(lo - ref_lo).max(), np.abs(hi - ref_hi).max()))
    ratio = t_ref / t_vec

    result = {
        "benchmark": "lang_reiczigel_interval vs reference confidence_interval loop",
        "size": args.size,
        "alpha": ALPHA,
        "repeats_vectorised": max(args.repeats, 5),
        "repeats_reference": args.repeats,
        "seconds_vectorised_best": t_vec,
        "seconds_reference_best": t_ref,
        "speedup": ratio,
        "goal_speedup": GOAL,
        "max_abs_difference": max_diff,
        "agree_to_1e-12": max_diff <= 1e-12,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "machine": platform.machine(),
        "platform": platform.platform(),
    }

    width = 34
    print(f"Lang-Reiczigel interval on {args.size:,} parameter sets (alpha = {ALPHA})")
    print(f"{'method':<{width}} {'best time [s]':>14} {'per set [us]':>13}")
    for name, secs in (
        ("bayesjudge (vectorised, 1 call)", t_vec),
        ("reference (Python loop)", t_ref),
    ):
        print(f"{name:<{width}} {secs:>14.4f} {1e6 * secs / args.size:>13.3f}")
    print(f"speed-up: {ratio:,.0f}x (goal >= {GOAL:.0f}x); max |difference| = {max_diff:.2e}")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    if max_diff > 1e-12:
        raise SystemExit("results disagree with the reference by more than 1e-12")
    return result


if __name__ == "__main__":
    main()
