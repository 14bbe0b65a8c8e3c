"""Exact coverage of the Lang–Reiczigel and exact-Bayes intervals on the Fig. 5 design.

Run as ``python benchmarks/studies/exact_coverage.py``. No simulation: for every θ in
{0.05, ..., 0.95}, (q0, q1) = (0.7, 0.9), n = 1000, m0 = m1 = 100,

* Lang–Reiczigel: sum of the binomial probabilities of every (k, tn, tp) outcome whose
  interval contains θ (outcomes with probability < 1e-15 dropped);
* exact Bayes (flat priors, 95 % equal-tailed interval from bayesjudge.core.exact): for each
  (tn, tp) with probability > 1e-9 (dropped mass 6.5e-8), the covered k form one run
  k_a..k_b (the interval's limits increase with k; checked by brute force over all k on a few
  pairs), found by bisection; coverage = Σ P(tn) P(tp) P(k_a <= k <= k_b).

Writes benchmarks/studies/results/exact_coverage.json.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from scipy.stats import binom

from bayesjudge.core.correction import lang_reiczigel_interval
from bayesjudge.core.exact import exact_theta_interval

Q0, Q1, N, M0, M1 = 0.7, 0.9, 1000, 100, 100
THETAS = np.round(np.arange(0.05, 0.951, 0.05), 2)
OUT = Path(__file__).parent / "results" / "exact_coverage.json"


def _p(theta):
    return theta * Q1 + (1 - theta) * (1 - Q0)


def exact_lr_coverage(theta, eps=1e-15):
    axes = []
    for size, prob in ((N, _p(theta)), (M0, Q0), (M1, Q1)):
        x = np.arange(size + 1)
        w = binom.pmf(x, size, prob)
        axes.append((x[w > eps], w[w > eps]))
    (k, wk), (tn, w0), (tp, w1) = axes
    kk, t0, t1 = np.meshgrid(k, tn, tp, indexing="ij", sparse=True)
    lo, hi = lang_reiczigel_interval(kk / N, t0 / M0, t1 / M1, N, M0, M1)
    weight = wk[:, None, None] * w0[None, :, None] * w1[None, None, :]
    return float(np.sum(weight * ((lo <= theta) & (theta <= hi))))


def exact_bayes_coverage(theta, ci_prob=0.95, eps=1e-9):
    p = _p(theta)
    w_pair = np.outer(binom.pmf(np.arange(M0 + 1), M0, Q0), binom.pmf(np.arange(M1 + 1), M1, Q1))
    t0, t1 = np.nonzero(w_pair > eps)
    w = w_pair[t0, t1]
    pairs = len(w)
    lo_a, hi_a = np.zeros(pairs, int), np.full(pairs, N + 1)  # smallest k: upper(k) >= θ
    lo_b, hi_b = np.full(pairs, -1), np.full(pairs, N)  # largest k: lower(k) <= θ
    while (hi_a > lo_a).any() or (hi_b > lo_b).any():
        mid_a, mid_b = (lo_a + hi_a) // 2, (lo_b + hi_b + 1) // 2
        ks = np.concatenate([np.minimum(mid_a, N), np.maximum(mid_b, 0)])
        s = exact_theta_interval(
            ks, N, np.concatenate([t0, t0]), M0, np.concatenate([t1, t1]), M1, ci_prob=ci_prob
        )
        act, ok = hi_a > lo_a, s.upper[:pairs] >= theta
        hi_a, lo_a = np.where(act & ok, mid_a, hi_a), np.where(act & ~ok, mid_a + 1, lo_a)
        act, ok = hi_b > lo_b, s.lower[pairs:] <= theta
        lo_b, hi_b = np.where(act & ok, mid_b, lo_b), np.where(act & ~ok, mid_b - 1, hi_b)
    covered = np.where(lo_b >= lo_a, binom.cdf(lo_b, N, p) - binom.cdf(lo_a - 1, N, p), 0.0)
    return float(np.sum(w * covered)), float(1 - w.sum())


def main():
    rows = []
    start = time.perf_counter()
    for theta in THETAS:
        bayes, dropped = exact_bayes_coverage(theta)
        rows.append(
            {"theta": float(theta), "lang_reiczigel": exact_lr_coverage(theta),
             "bayes": bayes, "bayes_dropped_mass": dropped}
        )  # fmt: skip
        print(rows[-1], flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps({"design": {"q0": Q0, "q1": Q1, "n": N, "m0": M0, "m1": M1},
                    "seconds": round(time.perf_counter() - start, 1), "rows": rows}, indent=2)
        + "\n"
    )  # fmt: skip


if __name__ == "__main__":
    main()
