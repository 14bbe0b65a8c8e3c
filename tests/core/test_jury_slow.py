"""Coverage of dawid_skene_interval by simulation (slow; run by ``make test-slow``).

Design (the issue's): three judges with q0 = (0.80, 0.85, 0.90), q1 = (0.70, 0.90, 0.90)
(J = 0.50, 0.75, 0.80), 500 test items, 40 + 40 labelled items chosen per truth (stratified),
θ ∈ {0.3, 0.7}. Each check: |coverage − 0.95| <= 3 MC-SE, MC-SE = sqrt(0.95 · 0.05 / R).
Measured (seed 20251127): Wald, R = 1000: 0.938 (θ = 0.3), 0.950 (θ = 0.7); bootstrap with
2000 resamples on the first R = 200 of those data sets: 0.950, 0.965. About 20-30 s per Wald
and 110-135 s per bootstrap case on a loaded two-core machine.
"""

from __future__ import annotations

import numpy as np
import pytest

from bayesjudge.core.jury import dawid_skene_interval

pytestmark = pytest.mark.slow

PATS3 = np.array([[a, b, c] for a in (1, 0) for b in (1, 0) for c in (1, 0)])
Q0 = np.array([0.80, 0.85, 0.90])
Q1 = np.array([0.70, 0.90, 0.90])


def draw(rng, theta, n=500, m0=40, m1=40):
    """Test counts (P,) and stratified labelled counts (2, P) of the 8 complete patterns."""
    p1 = np.prod(np.where(PATS3 == 1, Q1, 1 - Q1), axis=1)
    p0 = np.prod(np.where(PATS3 == 0, Q0, 1 - Q0), axis=1)
    test = rng.multinomial(n, theta * p1 + (1 - theta) * p0)
    lab = np.stack([rng.multinomial(m0, p0), rng.multinomial(m1, p1)])
    return test, lab


def coverage(theta, reps, **kwargs):
    """Share of ``reps`` intervals covering θ; the data sets do not depend on the method."""
    rng = np.random.default_rng(20251127)
    hits = 0
    for rep in range(reps):
        test, lab = draw(rng, theta)
        _, lo, hi = dawid_skene_interval(PATS3, test, lab, random_seed=rep, **kwargs)
        hits += lo <= theta <= hi
    print(f"coverage θ={theta} {kwargs or 'wald'}: {hits / reps:.3f} ({reps} replications)")
    return hits / reps


@pytest.mark.parametrize("theta", [0.3, 0.7])
def test_wald_coverage(theta):
    reps = 1000
    cov = coverage(theta, reps)
    assert abs(cov - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / reps), cov


@pytest.mark.parametrize("theta", [0.3, 0.7])
def test_bootstrap_coverage(theta):
    # 200 replications (the first 200 data sets of the Wald check) keep each case under 3 min.
    reps = 200
    cov = coverage(theta, reps, method="bootstrap", n_resamples=2000)
    assert abs(cov - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / reps), cov
