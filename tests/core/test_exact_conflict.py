"""Exact engine on data that contradict the calibration (issue 13, a hostile-input hunt).

Groups whose test counts no θ in [0, 1] reconciles with their calibration counts have
posteriors piled against 0 or 1, or with two separated modes. Before: the latent mixture's
grid, located on an even grid of [0, 1], missed a mode narrower than its cells or spread one
grid over two modes far apart (θ mean −0.0068 with sd 0 for k = 0 of 786; q0's median 0.25
where its mass lies at 0.009); the quadrature of a group at n = 10⁷ missed the mass and
summary() printed a mean outside its own interval; an unordered mapper gave groups each
other's marginals.
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_grid import LatentMixture

import bayesjudge.core.exact as ex
from bayesjudge.core.exact import data_conflict, exact_marginals, exact_theta_interval

PROBS = np.array([0.005, 0.025, 0.5, 0.975, 0.995])

# (k, n, tn, m0, tp, m1): k = 0 against a specificity of 36/48 (θ piled at 0 with a bump of
# ~1e-10 mass at 1), k = n = 5000 against 36/48 and 11/48 (q0's mass at 0.009 with a plateau
# of 0.2 % mass up to 0.98), and a smaller k = 0 group.
CASES = [(0, 786, 36, 48, 11, 11), (5000, 5000, 36, 48, 11, 48), (0, 300, 36, 48, 11, 11)]


@pytest.mark.parametrize("counts", CASES)
def test_conflicting_groups_match_the_latent_mixture(counts):
    """θ, q0, q1 quantiles within 5e-5 and means within 1e-4 of ``LatentMixture`` (an
    independent evaluation of the exact mixture, 3e-11 from the reference; measured ≤ 1.3e-5
    and ≤ 3.3e-5, on the second case; ≤ 1.6e-7 and 1e-8 on the others)."""
    k, n, tn, m0, tp, m1 = counts
    assert data_conflict(*counts) > 3  # the cases are conflicting ones
    got = exact_marginals(*counts)
    ref = LatentMixture(n, k, m0, tn, m1, tp)
    for v in ("theta", "q0", "q1"):
        q = np.array([float(got[v].quantile(p)) for p in PROBS])
        np.testing.assert_allclose(q, ref.quantile(v, PROBS), rtol=0, atol=5e-5, err_msg=v)
        assert float(got[v].mean()) == pytest.approx(ref.mean(v), abs=1e-4), v
        assert float(got[v].sd()) > 0, v


def test_interval_function_agrees_on_conflicting_groups():
    """exact_theta_interval (its θ mixture) and exact_marginals give one answer (to 5e-5)."""
    counts = np.array(CASES).T
    s = exact_theta_interval(*counts, ci_prob=0.95)
    m = exact_marginals(*counts, variables=("theta",))["theta"]
    for p, want in ((0.025, s.lower), (0.5, s.median), (0.975, s.upper)):
        np.testing.assert_allclose(m.quantile(p), want, rtol=0, atol=5e-5)
    np.testing.assert_allclose(m.mean(), s.mean, rtol=0, atol=1e-4)


@pytest.mark.parametrize("counts", [(10**7, 10**7, 70, 100, 90, 100), (0, 10**7, 90, 100, 70, 100)])
def test_unresolved_quadrature_beyond_the_mixture_is_refused(counts):
    """k = n = 10⁷ against a sensitivity of 90/100 (q1 must lie within ~1e-6 of 1): the
    quadrature misses the mass and the mixture has 10⁷ states. Before: a summary with θ's
    mean outside its own interval and sd 0, q0 = 0.017 instead of 0.69."""
    for func in (exact_marginals, exact_theta_interval):
        with pytest.raises(ValueError, match="does not resolve this posterior"):
            func(*counts)


def test_the_resolution_check_passes_resolved_marginals():
    """On the benchmark's kind of groups every marginal is resolved (largest cell mass
    measured ≤ 0.15 of _MAX_CELL_MASS = 0.3), so the check reroutes nothing."""
    rng = np.random.default_rng(5)
    G = 200
    theta = rng.uniform(0.05, 0.95, G)
    k = rng.binomial(1000, theta * 0.9 + (1 - theta) * 0.3)
    tn, tp = rng.binomial(100, 0.7, G), rng.binomial(100, 0.9, G)
    m = exact_marginals(k, 1000, tn, 100, tp, 100)
    for v, marginal in m.items():
        assert not ex._unresolved(marginal).any(), v
        assert np.max(np.diff(marginal.cdf_values, axis=-1)) < 0.2, v


def test_unordered_mapper_keeps_each_group_its_marginal():
    """Blocks come back tagged with their index: a mapper that returns them in reverse (as
    ``imap_unordered`` may) gives the same marginals; one that drops a block is an error.
    Before: the 600 groups' medians came back as [0.8931, 0.8931] instead of [0.1627, 0.3651]."""
    k = np.arange(600) + 2000  # two blocks of groups

    def reverse(func, blocks):
        return list(map(func, list(blocks)))[::-1]

    plain = exact_marginals(k, 5000, 70, 100, 90, 100, variables=("theta",))["theta"]
    other = exact_marginals(k, 5000, 70, 100, 90, 100, variables=("theta",), mapper=reverse)
    np.testing.assert_array_equal(plain.quantile(0.5), other["theta"].quantile(0.5))
    for bad in (lambda f, b: [], lambda f, b: list(map(f, list(b)))[:1], lambda f, b: 3):
        with pytest.raises(ValueError, match="mapper must"):
            exact_marginals(k, 5000, 70, 100, 90, 100, variables=("theta",), mapper=bad)


def test_data_conflict_against_its_definition():
    """data_conflict is |(1 − θ̂)(1 − q̄0) + θ̂ q̄1 − p̄| / sd at the Beta posterior means, θ̂
    clipped to [0, 1] (a hand computation of the k = 0 case) and 0 inside."""
    k, n, tn, m0, tp, m1 = 0, 786, 36, 48, 11, 11
    p, q0, q1 = (k + 1) / (n + 2), (tn + 1) / (m0 + 2), (tp + 1) / (m1 + 2)

    def var(a, b):
        return a * b / ((a + b) ** 2 * (a + b + 1))

    resid = (1 - 0.0) * (1 - q0) + 0.0 * q1 - p  # θ̂ = (p + q0 − 1)/J < 0: clipped to 0
    sd = np.sqrt(var(k + 1, n - k + 1) + var(tn + 1, m0 - tn + 1))
    assert float(data_conflict(k, n, tn, m0, tp, m1)) == pytest.approx(resid / sd, rel=1e-12)
    assert float(data_conflict(400, 1000, 70, 100, 90, 100)) == 0.0
