"""Coverage of the frequentist paired comparisons (``bj.compare``) by simulation (slow).

Two systems answer the same items with correlated correctness (Gaussian copula, ρ = 0.5), one
judge grades both, and each system has its own stratified calibration set. Over R simulated
evaluations the 95 % intervals of Δθ = θ_a − θ_b from the paired bootstrap and the delta method
(Fiedler App. B) must cover the true Δθ at 0.95 within 3 Monte Carlo standard errors
(sqrt(0.95 · 0.05 / R)), and pairing must make them shorter than the unpaired intervals of the
same data (item ids dropped), which cover too.
"""

import numpy as np
import pytest

import bayesjudge as bj

THETA = (0.70, 0.75)
Q0, Q1 = 0.85, 0.90
N, M = 500, 150
REPS = 400
SEED = 20261126


def _one(rng):
    test = bj.simulate.simulate_paired_items(
        THETA, Q0, Q1, n=N, correlation=0.5, system=["a", "b"], random_seed=rng
    )
    _, calibration = bj.simulate_items(
        THETA, Q0, Q1, n=1, m0=M, m1=M, system=["a", "b"], random_seed=rng
    )
    paired = bj.JudgeCounts.from_frames(test, calibration, system="system", item="item")
    unpaired = bj.JudgeCounts.from_frames(test, calibration, system="system")
    return paired, unpaired


@pytest.mark.slow
def test_paired_bootstrap_and_delta_cover_and_are_shorter_than_unpaired():
    rng = np.random.default_rng(SEED)
    truth = THETA[0] - THETA[1]
    covered = {}
    length = {}
    for _ in range(REPS):
        paired, unpaired = _one(rng)
        seed = int(rng.integers(2**31))
        for name, counts in (("paired", paired), ("unpaired", unpaired)):
            for method in ("bootstrap", "delta"):
                result = bj.compare(counts, method=method, n_resamples=2000, random_seed=seed)
                assert result.attrs["paired"] == (name == "paired")
                lo = result["ci"].sel(ci_bound="lower").item()
                hi = result["ci"].sel(ci_bound="upper").item()
                key = (name, method)
                covered.setdefault(key, []).append(lo <= truth <= hi)
                length.setdefault(key, []).append(hi - lo)
    mcse = np.sqrt(0.95 * 0.05 / REPS)
    for key, hits in covered.items():
        rate = np.mean(hits)
        assert abs(rate - 0.95) <= 3 * mcse, (key, rate, mcse)
    # With ρ = 0.5 the test-set part of Var(Δθ̂) loses the covariance term; the calibration part
    # does not. The delta-method SE is a formula of the counts, so the paired interval is shorter
    # in every replication; the bootstrap's endpoints carry resampling noise, so its ratio is
    # shorter on average, by more than 4 standard errors of the mean ratio.
    delta = np.array(length[("paired", "delta")]) / np.array(length[("unpaired", "delta")])
    assert (delta < 1).all(), delta.max()
    boot = np.array(length[("paired", "bootstrap")]) / np.array(length[("unpaired", "bootstrap")])
    assert boot.mean() + 4 * boot.std(ddof=1) / np.sqrt(REPS) < 1, (boot.mean(), boot.std())
