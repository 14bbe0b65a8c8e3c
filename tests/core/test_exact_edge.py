"""θ marginals of ``exact_marginals`` on weak calibration at large n (issue 13: one answer).

A calibration Beta whose mass piles at 0 or 1 (tp = m1, tn = m0, tp = 0, tn = 0) put a step
into the θ density's quadrature: at (14996, 20000, 95, 100, 100, 100) the 2.5 % quantile was
0.72315 by ``exact_marginals`` and 0.72166 by ``exact_theta_interval`` (the exact mixture).
An independent computation settles it: with the flat θ prior, θ | q0, q1 is integrated in
closed form, θ's CDF at t being ∫∫ f0 f1 (F_P(1 − q0 + t J) − F_P(1 − q0)) / J dq0 dq1
(normalised), the double integral by nested ``scipy.integrate.quad`` (epsrel 1e-11) —
2.5 %, 50 %, 97.5 % quantiles [0.721660527, 0.741108708, 0.765959632] (4 minutes), and
``tests/references/reference_posterior.theta_posterior`` (adaptive Gauss-Legendre, nothing
from bayesjudge) gives the same to 1e-8: the mixture was right. Such groups now take θ from
their exact mixture in ``exact_marginals`` too (``exact._weak_mixture_groups``).

Tolerances: the documented accuracy of the engine, 1e-4 on quantiles (measured after the fix:
≤ 1.8e-5 against the reference — the tn = 0 case, where the exact mixture itself is 1.8e-5 from
``reference_posterior`` — ≤ 2.1e-6 on the others); before the fix the marginals were 1.8e-3,
4.0e-4, 5.8e-5 and 1.6e-4 off on the tp = m1, tn = m0, tp = m1 − 3 and m1 = 200 cases.
"""

from __future__ import annotations

import numpy as np
import pytest
from reference_posterior import theta_posterior
from scipy import stats

from bayesjudge.core import exact as ex
from bayesjudge.core.exact import exact_marginals, exact_theta_interval

PROBS = np.array([0.005, 0.025, 0.5, 0.975, 0.995])
ATOL = 1e-4  # the engine's documented quantile accuracy (models/exact.md)

# (k, n, tn, m0, tp, m1): quantiles at PROBS from
# ``theta_posterior(n, k, m0, tn, m1, tp).quantile(PROBS)`` (tests/references/
# reference_posterior.py, flat priors), pasted.
REFERENCE = {
    "tp=m1": (
        (14996, 20000, 95, 100, 100, 100),
        [0.71406344, 0.72166053, 0.74110871, 0.76595962, 0.77902885],
    ),
    "tn=m0": (
        (6000, 20000, 100, 100, 90, 100),
        [0.28925196, 0.30160694, 0.32907001, 0.35962254, 0.37167921],
    ),
    "tp=0": (
        (3000, 20000, 80, 100, 0, 100),
        [0.00572718, 0.02674749, 0.26779408, 0.4925019, 0.54590654],
    ),
    "tn=0": (
        (14400, 20000, 0, 100, 30, 100),
        [0.33094587, 0.34602863, 0.3949733, 0.46000551, 0.48560293],
    ),
    "tp=m1-3": (
        (7000, 10000, 90, 100, 97, 100),
        [0.64375774, 0.65652902, 0.69300705, 0.73802684, 0.75708954],
    ),
    "tp=m1,n=5000": (
        (3500, 5000, 95, 100, 100, 100),
        [0.65302365, 0.66264217, 0.68801601, 0.71442101, 0.72657206],
    ),
    "tp=m1,m1=200": (
        (14996, 20000, 95, 100, 200, 200),
        [0.7122828, 0.71979283, 0.73816882, 0.75340326, 0.75973739],
    ),
    "tn=m0,m0=50": (
        (9000, 20000, 50, 50, 95, 100),
        [0.41106461, 0.43065064, 0.46767015, 0.50082566, 0.51427137],
    ),
}


def test_weak_groups_match_reference_in_one_call():
    """All cases in one call (the routing is per group) against the independent reference."""
    counts = np.array([c for c, _ in REFERENCE.values()]).T
    ref = np.array([r for _, r in REFERENCE.values()]).T  # (probs, groups)
    m = exact_marginals(*counts, variables=("theta",))["theta"]
    got = m.quantile(PROBS[:, None])
    np.testing.assert_allclose(got, ref, rtol=0, atol=ATOL)


@pytest.mark.parametrize("name", ["tp=m1", "tn=m0", "tn=0"])
def test_marginals_and_interval_agree(name):
    """One answer from both entry points: 95 % limits and median within 1e-5."""
    counts, _ = REFERENCE[name]
    m = exact_marginals(*counts, variables=("theta",))["theta"]
    s = exact_theta_interval(*counts, ci_prob=0.95)
    got = m.quantile(np.array([0.025, 0.5, 0.975]))
    np.testing.assert_allclose(got, [s.lower, s.median, s.upper], rtol=0, atol=1e-5)


def test_the_cases_are_weak_and_beyond_the_full_mixture():
    """The cases exercise the new route: weak calibration, too many states for ``_latent``."""
    counts = np.array([c for c, _ in REFERENCE.values()]).T
    prob = ex._problem(*counts, (1.0, 1.0), (1.0, 1.0), (1.0, 1.0))
    assert ex._weak_mixture_groups(prob).all()
    assert not ex._route(prob).any()


def test_mixture_density_matches_scipy_components():
    """The route's density is Σ_X W_X Beta(1 + X, 1 + n − X).pdf (scipy.stats), normalised."""
    counts = (3500, 5000, 95, 100, 100, 100)
    prob = ex._problem(*counts, (1.0, 1.0), (1.0, 1.0), (1.0, 1.0))
    lo, w = ex._latent_theta_weights(prob, 0)
    m = ex._mixture_theta_marginal(prob, 0, 65)
    x = lo + np.arange(w.size)
    want = w @ stats.beta.pdf(m.grid[0], 1 + x[:, None], 1 + 5000 - x[:, None])
    np.testing.assert_allclose(m.density[0], want, rtol=1e-9, atol=1e-12)
    cdf = w @ stats.beta.cdf(m.grid[0], 1 + x[:, None], 1 + 5000 - x[:, None])
    np.testing.assert_allclose(m.cdf_values[0], cdf, rtol=0, atol=1e-10)


def test_reference_values_reproduce():
    """The pasted references are what their generating call gives (0.1 s a case)."""
    for name, ((k, n, tn, m0, tp, m1), ref) in REFERENCE.items():
        got = theta_posterior(n, k, m0, tn, m1, tp).quantile(PROBS)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-8, err_msg=name)
