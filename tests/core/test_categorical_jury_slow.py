"""Coverage of categorical_dawid_skene_interval by simulation (slow; run by ``make test-slow``).

Design: three judges grading A / tie / B who lean towards A (a true tie is called A 25-35% of
the time; CONF below), 500 test items, 30 labelled items per true category (stratified),
π ∈ {(0.45, 0.15, 0.40), (0.30, 0.30, 0.40), (0.20, 0.20, 0.60)}, data drawn with
``simulate_categorical_jury_arrays(pi, CONF, n=500, m=[30, 30, 30], size=R,
random_seed=20261128)``. Each check: |coverage − 0.95| <= 3 MC-SE for every θ_k, MC-SE =
sqrt(0.95 · 0.05 / R).

MEASURED (seed 20261128, 2026-11-28, loaded two-core machine): Wald (default: built around
the fit with 1/K pseudo-items per cell, estimate unsmoothed), R = 1000, coverage of
(θ_A, θ_tie, θ_B) and of the score θ_A + θ_tie/2, 92-111 s per case:
π = (0.45, 0.15, 0.40): 0.949, 0.955, 0.947; score 0.946; mean width 0.131, 0.133, 0.121;
π = (0.30, 0.30, 0.40): 0.940, 0.948, 0.958; score 0.950; widths 0.138, 0.165, 0.132;
π = (0.20, 0.20, 0.60): 0.949, 0.948, 0.950; score 0.945; widths 0.114, 0.143, 0.131.
Mean estimates within 0.003 of π. Plurality vote means (0.501, 0.126, 0.373),
(0.398, 0.211, 0.390), (0.293, 0.158, 0.550): A over-called by 0.05-0.10.
Before (Wald at the unsmoothed fit, interval_smoothing=0): 0.942, 0.943, 0.940; 0.936 /
0.929, 0.928, 0.954; 0.944 / 0.926, 0.935, 0.941; 0.939 — below the band for shares of
0.2-0.3 (a rare verdict never seen puts a confusion entry at 0 in about a quarter of the
data sets). ½ pseudo-item per cell at π = (0.2, 0.2, 0.6): 0.940, 0.951, 0.950; 0.945.
Percentile bootstrap (1000 resamples), R = 200, π = (0.45, 0.15, 0.40): 0.915, 0.950, 0.950;
score 0.940; 318 s.
"""

from __future__ import annotations

import numpy as np
import pytest

from bayesjudge.core.categorical_jury import categorical_dawid_skene_interval, plurality_vote
from bayesjudge.simulate import simulate_categorical_jury_arrays

pytestmark = pytest.mark.slow

CONF = np.array([
    [[0.85, 0.10, 0.05], [0.30, 0.55, 0.15], [0.15, 0.10, 0.75]],
    [[0.80, 0.15, 0.05], [0.25, 0.60, 0.15], [0.10, 0.15, 0.75]],
    [[0.90, 0.05, 0.05], [0.35, 0.45, 0.20], [0.20, 0.05, 0.75]],
])  # fmt: skip
PIS = [(0.45, 0.15, 0.40), (0.30, 0.30, 0.40), (0.20, 0.20, 0.60)]
SCORES = np.array([1.0, 0.5, 0.0])  # A's win rate, ties counted half


def draws(pi, reps):
    return simulate_categorical_jury_arrays(
        pi, CONF, n=500, m=[30, 30, 30], size=reps, random_seed=20261128
    )


def coverage(pi, reps, **kwargs):
    """Coverage of every θ_k and of the score, mean estimates, mean widths, plurality means."""
    pi = np.asarray(pi)
    d = draws(pi, reps)
    hits, score_hits = np.zeros(3), 0
    est, width, naive = np.zeros(3), np.zeros(3), np.zeros(3)
    for r in range(reps):
        seen = (d["test"][r] + d["labelled"][r].sum(axis=0)) > 0
        args = d["patterns"][seen], d["test"][r][seen], d["labelled"][r][:, seen]
        res = categorical_dawid_skene_interval(*args, scores=SCORES, random_seed=r, **kwargs)
        hits += (res.lower <= pi) & (pi <= res.upper)
        score_hits += res.score_lower <= SCORES @ pi <= res.score_upper
        est += res.estimate
        width += res.upper - res.lower
        naive += plurality_vote(args[0], args[1], 3).estimate
    return hits / reps, score_hits / reps, est / reps, width / reps, naive / reps


@pytest.mark.parametrize("pi", PIS)
def test_wald_coverage(pi):
    reps = 1000
    cov, score_cov, est, width, naive = coverage(pi, reps)
    band = 3 * np.sqrt(0.95 * 0.05 / reps)  # 0.0207
    print(f"wald pi={pi}: coverage {cov.round(3)}, score {score_cov:.3f}, mean {est.round(4)}, "
          f"width {width.round(3)}, plurality mean {naive.round(4)}")  # fmt: skip
    assert np.all(np.abs(cov - 0.95) <= band), cov
    assert abs(score_cov - 0.95) <= band, score_cov
    # Dawid–Skene is nearly unbiased: mean within 4 MC-SE (SE of a share <= 0.03) + 0.005.
    assert np.all(np.abs(est - pi) <= 4 * 0.03 / np.sqrt(reps) + 0.005), est
    # The plurality vote is not: it over-calls A, the judges' favourite, by 0.05-0.10.
    assert naive[0] - pi[0] > 0.04, naive


def test_bootstrap_coverage():
    reps = 200
    pi = PIS[0]
    cov, score_cov, *_ = coverage(pi, reps, method="bootstrap", n_resamples=1000)
    band = 3 * np.sqrt(0.95 * 0.05 / reps)  # 0.046
    print(f"bootstrap pi={pi}: coverage {cov.round(3)}, score {score_cov:.3f}")
    assert np.all(np.abs(cov - 0.95) <= band), cov
    assert abs(score_cov - 0.95) <= band, score_cov
