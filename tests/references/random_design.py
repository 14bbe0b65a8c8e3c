"""Brute-force references for the random labelling design (tests of core.likelihood).

The full log-likelihood as a sum of ``scipy.stats.binom.logpmf``, its maximisation over
(θ, q0, q1) and its profile over (q0, q1) by ``scipy.optimize`` (L-BFGS-B, several starts),
and a simulator of random-design counts.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

from bayesjudge.core.likelihood import random_design_loglik

CHI2 = stats.chi2.isf(0.05, 1)
# Bounds of the brute-force search: at 0 or 1 itself the log-pmf can be -inf and L-BFGS-B's
# finite differences fail; an MLE on the boundary is then found within 1e-10.
EDGE = 1e-10


def full_loglik(theta, q0, q1, k, n, tn, m0, tp, m1):
    """The full random-design log-likelihood, as a sum of scipy binomial log-pmfs."""
    p = theta * q1 + (1 - theta) * (1 - q0)
    return (
        stats.binom.logpmf(k, n, p)
        + stats.binom.logpmf(tn, m0, q0)
        + stats.binom.logpmf(tp, m1, q1)
        + stats.binom.logpmf(m1, m0 + m1, theta)
    )


def brute_mle(c):
    """(θ, max log-likelihood) by L-BFGS-B over [EDGE, 1 - EDGE]^3 from several starts.

    The objective is :func:`random_design_loglik`, checked against ``full_loglik`` (scipy)
    above; it is used here because scipy's log-pmf is some 50 times slower.
    """
    best = (None, -np.inf)
    for start in [(0.5, 0.5, 0.5), (0.2, 0.8, 0.9), (0.8, 0.9, 0.8), (0.05, 0.95, 0.6)]:
        res = optimize.minimize(
            lambda x: -random_design_loglik(*x, *c),
            start,
            bounds=[(EDGE, 1 - EDGE)] * 3,
            method="L-BFGS-B",
            options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 10_000},
        )
        if np.isfinite(res.fun) and -res.fun > best[1]:
            best = (res.x[0], -res.fun)
    return best


def brute_profile(theta, c):
    """max over (q0, q1) of the full log-likelihood at fixed θ (L-BFGS-B, several starts)."""
    best = -np.inf
    # Concave in (q0, q1) for fixed θ: two starts only guard against a stalled search.
    for start in [(0.5, 0.5), (0.9, 0.9)]:
        res = optimize.minimize(
            lambda q: -random_design_loglik(theta, q[0], q[1], *c),
            start,
            bounds=[(EDGE, 1 - EDGE)] * 2,
            method="L-BFGS-B",
            options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 10_000},
        )
        best = max(best, -res.fun)
    return best


def simulate(theta, reps, rng, q0=0.8, q1=0.9, n=1800, labelled=200):
    """Random-design counts of ``reps`` evaluations, and each one's test-set theta."""
    m1 = rng.binomial(labelled, theta, reps)
    m0 = labelled - m1
    tp, tn = rng.binomial(m1, q1), rng.binomial(m0, q0)
    truly = rng.binomial(n, theta, reps)  # truly correct among the unlabelled items
    k = rng.binomial(truly, q1) + rng.binomial(n - truly, 1 - q0)
    return (k, np.full(reps, n), tn, m0, tp, m1), (m1 + truly) / (n + labelled)
