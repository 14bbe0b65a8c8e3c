"""Slow validation of the exact engine under the random labelling design (issue 15).

* the θ density against scipy's dblquad of the full likelihood (~2 min);
* SBC with 2000 simulated data sets (item by item, ``random_design_sbc``) of a small design and
  400 of the issue's design, for θ, q0, q1 and the test-set θ;
* the issue's setting (1,800 unlabelled + 200 labelled items, q0 = 0.8, q1 = 0.9, θ = 0.3 and
  0.08, flat priors; 1000 simulated data sets each): coverage and mean width of the 95 %
  interval with ``design="random"`` and with ``design="stratified"`` on the same counts.

Measured (seed below; 2-core machine): mean width 0.0998 (θ = 0.3) and 0.0685 (θ = 0.08) with
the random design — the issue quotes 0.100 and 0.068 for the full likelihood — against 0.176
and 0.172 with the stratified analysis of the same counts (ratios 0.567 and 0.399; the issue
quotes 0.201 and 0.246 for bayesjudge before, from a setup not recorded there).
Coverage 0.946 and 0.951 (random), 0.958 and 0.969 (stratified: valid, conservative — it
conditions on m1, but is not exactly calibrated in small samples: SBC of 2000 data sets of
N = 120, L = 40 gave rank p-values 0.007 for θ and 0.0009 for the test-set θ).
"""

from __future__ import annotations

import numpy as np
import pytest
from random_design_quadrature import log_likelihood
from random_design_sbc import rank_pvalue, sbc_ranks, simulate_random_design
from scipy import integrate

from bayesjudge.core import exact as ex
from bayesjudge.core.exact import exact_draws, exact_theta_interval, test_set_theta_draws

pytestmark = pytest.mark.slow

VARS = ("theta", "q0", "q1")
SEED = 20261127


def test_theta_density_matches_scipy_integral():
    """log π(θ | data) differences of the engine (random design, 24 nodes) against scipy's
    dblquad of the full likelihood (binomials and the labelled items' Bin(m1; m0 + m1, θ))
    over q0, q1, at two θ points 0.05 apart; tolerance 1e-7 in log density. Counts: the
    issue's setting, θ = 0.3, q0 = 0.8, q1 = 0.9, N = 2000, L = 200 (expected counts)."""
    counts = (738, 1800, 112, 140, 54, 60)
    prob = ex._problem(*counts, (1.0, 1.0), (1.0, 1.0), (1.0, 1.0), "random")
    nodes = ex._shifted_nodes(prob, ex._hermite(24))
    thetas = np.array([0.27, 0.32])
    got = ex._log_theta_density(prob, nodes, thetas[None, :])[0]

    def density(theta):
        def f(q1, q0):
            return np.exp(log_likelihood(theta, q0, q1, counts, "random") + 250.0)

        return integrate.dblquad(f, 0.6, 0.98, 0.6, 1.0, epsabs=0, epsrel=1e-10)[0]

    want = np.log([density(t) for t in thetas])
    assert got[1] - got[0] == pytest.approx(want[1] - want[0], abs=1e-7)


def _sbc(reps, n_items, n_labelled, seed, design="random"):
    rng = np.random.default_rng(seed)
    draws = 99
    truth = {v: rng.uniform(size=reps) for v in VARS}
    data = simulate_random_design(truth["theta"], truth["q0"], truth["q1"], n_items,
                                  n_labelled, rng)  # fmt: skip
    counts = [data[v] for v in ("k", "n", "tn", "m0", "tp", "m1")]
    post = exact_draws(*counts, size=draws, rng=rng, design=design)
    post["theta_test"] = test_set_theta_draws(
        post["theta"], post["q0"], post["q1"], data["k"], data["n"], data["m0"], data["m1"], rng=rng
    )
    truth["theta_test"] = data["theta_test"]
    return {v: rank_pvalue(sbc_ranks(post[v], truth[v]), draws, 10) for v in post}


@pytest.mark.parametrize(("reps", "n_items", "n_labelled"), [(2000, 120, 40), (400, 2000, 200)])
def test_sbc_random_design(reps, n_items, n_labelled):
    """Ranks of θ, q0, q1 and of the test-set θ uniform (10-bin chi-square, p > 0.001)."""
    pvalues = _sbc(reps, n_items, n_labelled, SEED)
    for v, p in pvalues.items():
        assert p > 1e-3, (v, p, pvalues)


@pytest.mark.parametrize(("theta", "issue_width"), [(0.3, 0.100), (0.08, 0.068)])
def test_issue_setting_width_and_coverage(theta, issue_width):
    """1000 data sets of the issue's design. Random design: coverage within 0.95 ± 3 MC-SE,
    mean width within 0.002 of the issue's full-likelihood figure (3 decimals, its own MC
    error unknown; ours ≤ 2e-4). Stratified analysis of the same counts: coverage at least
    0.95 − 3 MC-SE (valid), and the random design's mean width at most 0.7 times its
    (the issue's goal)."""
    reps = 1000
    rng = np.random.default_rng(15)
    full = np.full(reps, 1.0)
    data = simulate_random_design(theta * full, 0.8 * full, 0.9 * full, 2000, 200, rng)
    counts = [data[v] for v in ("k", "n", "tn", "m0", "tp", "m1")]
    assert np.all((data["m0"] > 0) & (data["m1"] > 0))  # the stratified engine needs both
    se = np.sqrt(0.95 * 0.05 / reps)
    widths = {}
    for design in ("random", "stratified"):
        s = exact_theta_interval(*counts, design=design)
        cover = float(np.mean((s.lower <= theta) & (theta <= s.upper)))
        widths[design] = float(np.mean(s.upper - s.lower))
        if design == "random":
            assert abs(cover - 0.95) < 3 * se, (design, cover)
        else:
            assert cover > 0.95 - 3 * se, (design, cover)
    assert widths["random"] == pytest.approx(issue_width, abs=0.002)
    assert widths["random"] < 0.7 * widths["stratified"], widths
