"""Coverage of the item-effect posterior interval of θ on simulated repeated verdicts (slow).

The recorded study ``bayesjudge.studies.clustered`` (2,000 replications × 36 design points)
scores closed forms; a posterior per replication (≈ 1 s of NUTS after one compilation)
would take a day there, so the item-effect model's interval is measured here at one design
point of that study instead: θ = 0.7, q0 = 0.8, q1 = 0.9, 3 verdicts per item, icc = 0.6
(where the naive intervals cover 0.87), with fewer items (n = 100, m0 = m1 = 50) and
150 replications. The data come from ``bayesjudge.simulate.simulate_repeated_items`` (the
study's law: a Beta propensity per item).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesjudge as bj
from bayesjudge.simulate import simulate_repeated_items
from bayesjudge.warnings import ConvergenceWarning

REPS = 150
SEED = 20261127
NOMINAL = 0.95


@pytest.mark.slow
def test_item_effect_interval_covers_where_the_naive_one_does_not():
    rng = np.random.default_rng(SEED)
    covered = []
    naive = []
    for rep in range(REPS):
        test, calib = simulate_repeated_items(0.7, 0.8, 0.9, n=100, m0=50, m1=50, epochs=3,
                                              icc=0.6, random_seed=rng)  # fmt: skip
        counts = bj.JudgeCounts.from_frames(test, calib, item="item", repeats="epoch")
        with warnings.catch_warnings():
            # 2 × 500 draws: the interval's ends move by < 0.01 (ESS ≥ 300); judged as is.
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = bj.fit(counts, draws=500, tune=500, chains=2, random_seed=rep)
        lo, hi = fit.posterior["theta"].quantile([0.025, 0.975]).values
        covered.append(lo <= 0.7 <= hi)
        ci = bj.estimate(counts.without_clusters(), method="lang-reiczigel")["ci"]
        naive.append(float(ci.sel(ci_bound="lower").squeeze()) <= 0.7
                     <= float(ci.sel(ci_bound="upper").squeeze()))  # fmt: skip
    coverage = float(np.mean(covered))
    se = np.sqrt(NOMINAL * (1 - NOMINAL) / REPS)  # nominal Monte Carlo SE, 0.0178
    print(f"coverage: item-effect {coverage:.3f}, naive {np.mean(naive):.3f} ({REPS} reps)")
    assert coverage >= NOMINAL - 3 * se, coverage  # ≥ 0.897
    assert coverage <= NOMINAL + 3 * se, coverage  # not wildly conservative either
    # The naive interval (every verdict an item) on the same data covers clearly less.
    assert float(np.mean(naive)) < coverage - 0.03, (float(np.mean(naive)), coverage)
