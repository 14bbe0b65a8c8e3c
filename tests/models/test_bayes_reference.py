"""NUTS posteriors of θ against an independent quadrature, and against the closed forms.

* The quadrature ``reference_posterior.theta_posterior`` is itself validated here: against a
  Monte Carlo that shares none of its numerics, against the closed form with known q, and by
  refining its nodes and grid.
* ``bj.fit`` (nutpie) must reproduce the reference's median and 2.5 / 97.5 % quantiles of θ to
  within 4 Monte Carlo standard errors (MCSE) of each quantile.
* With flat priors and n = 1000, m0 = m1 = 250, the 95 % equal-tailed credible interval lies
  within 0.015 of the Lang-Reiczigel interval and the posterior median within 0.01 of
  Rogan-Gladen.

One fit per prior covers many data sets: each data set is a *system* of one JudgeCounts, and
with ``calibration="separate"`` the systems' posteriors are independent, so one compile and one
sampling run serve them all.
"""

from __future__ import annotations

import functools

import arviz as az
import numpy as np
import pytest
from reference_posterior import theta_posterior
from scipy import integrate, stats

import bayesjudge as bj
from bayesjudge.core.correction import lang_reiczigel_interval, rogan_gladen

PROBS = (0.025, 0.5, 0.975)
SEED = 20261126
# 4 chains x 2000 draws: ESS ~3000 (bulk) / ~2500 (tail), so the MCSE of a 2.5 % quantile is
# ~0.05 posterior sd and 4 MCSE detects a shift of ~0.2 sd (~0.09 sd at the median).
DRAWS = 2000

# (n, k, m0, tn, m1, tp) of single groups.
FLAT_DATASETS = {
    # 50 of 3330 test items judged correct; specificity study 399 of 401, sensitivity 103 of 122.
    "rare-positive": (3330, 50, 401, 399, 122, 103),
    "moderate": (1000, 400, 100, 70, 100, 90),
    "small-calibration": (500, 300, 12, 10, 15, 13),
    "high-accuracy": (200, 170, 50, 45, 150, 140),
}
WEAK = (500, 300, 4, 3, 5, 4)
INFORMATIVE = {"theta_prior": (2.0, 5.0), "q0_prior": (8.0, 2.0), "q1_prior": (6.0, 2.0)}
INFORMATIVE_DATASETS = {
    "informative": (200, 120, 30, 24, 40, 33),
    "informative-small-calibration": (300, 90, 8, 6, 9, 8),
}

# Closed-form comparison: flat priors, n = 1000, m0 = m1 = 250, θ = 0.1, ..., 0.9, counts at
# their expected values (rounded to whole numbers).
CF_N, CF_M = 1000, 250
CF_THETAS = np.round(np.arange(0.1, 0.91, 0.1), 1)
CF_QS_FIT = ((0.7, 0.9), (0.9, 0.9))  # in the NUTS fit
# The exact posterior (quadrature) is checked on more designs: every (q0, q1) with J >= 0.6.
# At (0.7, 0.7), J = 0.4, the requirement does NOT hold: the exact ETI differs from the LR
# interval by up to 0.016 (θ = 0.3: lower 0.1473 vs 0.1633; θ = 0.7: upper 0.8527 vs 0.8367),
# a real difference between the methods (the ratio (p + q0 − 1)/J is skewed when J is
# uncertain; LR is a shifted symmetric Wald interval), not Monte Carlo error.
CF_QS_EXACT = ((0.7, 0.9), (0.9, 0.7), (0.9, 0.9), (0.8, 0.8))
LR_TOL, RG_TOL = 0.015, 0.01


def _cf_counts(theta, q0, q1):
    p = theta * q1 + (1 - theta) * (1 - q0)
    return (
        CF_N,
        int(np.rint(CF_N * p)),
        CF_M,
        int(np.rint(CF_M * q0)),
        CF_M,
        int(np.rint(CF_M * q1)),
    )


CF_DATASETS = {
    f"cf-q{q0}-{q1}-theta{theta}": _cf_counts(theta, q0, q1)
    for q0, q1 in CF_QS_FIT
    for theta in CF_THETAS
}


def _as_counts(datasets: dict) -> bj.JudgeCounts:
    cols = np.array(list(datasets.values())).T
    return bj.JudgeCounts.from_counts(
        **dict(zip(("n", "k", "m0", "tn", "m1", "tp"), cols, strict=True)),
        system=list(datasets),
    )


@functools.cache
def _reference(data: tuple, priors: tuple = ()) -> np.ndarray:
    """The reference quantiles PROBS of θ (cached: each data set is used by several tests)."""
    return theta_posterior(*data, **dict(priors)).quantile(PROBS)


def _closed_form(n, k, m0, tn, m1, tp):
    lr = lang_reiczigel_interval(k / n, tn / m0, tp / m1, n, m0, m1, alpha=0.05)
    return float(lr.lower), float(rogan_gladen(k / n, tn / m0, tp / m1)), float(lr.upper)


# ----------------------------------------------------------------------------- the reference


def _monte_carlo(
    n, k, m0, tn, m1, tp, theta_prior, q0_prior, q1_prior, judge_better_than_chance, size, seed
):
    """Weighted draws of θ from the posterior, by exact conditional sampling.

    q0, q1 are drawn from their conjugate Beta posteriors (or fixed when known). Given q,
    p = 1 − q0 + J θ is linear in θ, so under a flat prior p | q, data is Beta(k + 1, n − k + 1)
    restricted to the segment between 1 − q0 (θ = 0) and q1 (θ = 1); it is drawn by inverting
    the CDF, and (q0, q1) gets the weight |F(q1) − F(1 − q0)| / |J| (the integral of
    Bin(k | n, p(θ)) over θ, up to a constant). A Beta(a, b) prior on θ multiplies the weight by
    its density at the drawn θ; ``judge_better_than_chance`` zeroes the weight where J <= 0.
    """
    rng = np.random.default_rng(seed)

    def draw(prior, successes, trials):
        if isinstance(prior, float):
            return np.full(size, prior)
        return rng.beta(prior[0] + successes, prior[1] + trials - successes, size)

    q0, q1 = draw(q0_prior, tn, m0), draw(q1_prior, tp, m1)
    pdist = stats.beta(k + 1, n - k + 1)
    f0, f1 = pdist.cdf(1 - q0), pdist.cdf(q1)
    j = q0 + q1 - 1
    p = pdist.ppf(f0 + rng.uniform(size=size) * (f1 - f0))
    theta = (p - (1 - q0)) / j
    w = np.abs(f1 - f0) / np.abs(j) * stats.beta.pdf(theta, *theta_prior)
    if judge_better_than_chance:
        w = w * (j > 0)
    return theta, w / w.sum()


@pytest.mark.parametrize(
    ("data", "priors"),
    [
        (FLAT_DATASETS["rare-positive"], {}),
        (FLAT_DATASETS["moderate"], {}),
        (FLAT_DATASETS["small-calibration"], {}),
        (INFORMATIVE_DATASETS["informative"], INFORMATIVE),
        ((300, 100, 40, 30, 0, 0), {"q1_prior": 0.9}),
        # Weak calibration: P(J <= 0 | data) = 0.09 (a second mode); and the same data with
        # the J > 0 restriction.
        (WEAK, {}),
        (WEAK, {"judge_better_than_chance": True}),
        ((300, 100, 40, 30, 0, 0), {"q1_prior": 0.6, "judge_better_than_chance": True}),
    ],
    ids=[
        "rare-positive",
        "moderate",
        "small-calibration",
        "informative",
        "known-q1",
        "weak-calibration",
        "weak-calibration-J>0",
        "known-q1-J>0",
    ],
)
def test_reference_matches_monte_carlo(data, priors):
    """The reference CDF at its own quantiles equals the Monte Carlo CDF within 4 SE.

    F̂(t) = Σ w_i 1{θ_i ≤ t} (self-normalised weights); its delta-method standard error is
    sqrt(Σ w_i² (1{θ_i ≤ t} − F̂(t))²). With 200,000 draws (weight ESS > 100,000), SE ≈ 2e-4 to
    3.5e-4 at the 2.5 % quantiles and ~1e-3 at the median, so 4 SE catch a quantile that is off
    by more than ~0.01-0.03 posterior sd. The quadrature error (< 1e-8, test_reference_converged)
    is negligible against that.
    """
    probs = np.array([0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975])
    full = {
        "theta_prior": (1.0, 1.0),
        "q0_prior": (1.0, 1.0),
        "q1_prior": (1.0, 1.0),
        "judge_better_than_chance": False,
        **priors,
    }
    ref = theta_posterior(*data, **full)
    theta, w = _monte_carlo(*data, **full, size=200_000, seed=SEED)
    below = theta[:, None] <= ref.quantile(probs)[None, :]
    cdf = w @ below
    se = np.sqrt(((w[:, None] * (below - cdf)) ** 2).sum(0))
    assert (1 / (w**2).sum()) > 100_000  # the weights are not degenerate
    np.testing.assert_array_less(np.abs(cdf - probs), 4 * se)


def test_reference_known_q_closed_form():
    """Known q0, q1 and a flat prior: p = 1 − q0 + J θ has the truncated Beta(k + 1, n − k + 1)
    posterior, so P(θ ≤ t) = [F(1 − q0 + J t) − F(1 − q0)] / [F(q1) − F(1 − q0)].

    The reference's θ discretisation (Simpson CDF, Hermite interpolation) is 4th order: its CDF
    error here is 4e-9 with the default 801 grid points and 2e-11 with 3201 (measured), so the
    tolerances are 1e-8 and 1e-10.
    """
    n, k, q0, q1 = 800, 250, 0.85, 0.75
    fp = stats.beta(k + 1, n - k + 1)
    t = np.linspace(0.05, 0.5, 46)
    exact = (fp.cdf(1 - q0 + (q0 + q1 - 1) * t) - fp.cdf(1 - q0)) / (fp.cdf(q1) - fp.cdf(1 - q0))
    quantiles = [
        (fp.ppf(fp.cdf(1 - q0) + prob * (fp.cdf(q1) - fp.cdf(1 - q0))) - 1 + q0) / (q0 + q1 - 1)
        for prob in PROBS
    ]
    for grid, tol in ((801, 1e-8), (3201, 1e-10)):
        ref = theta_posterior(n, k, 0, 0, 0, 0, q0_prior=q0, q1_prior=q1, grid=grid)
        np.testing.assert_allclose(ref.cdf(t), exact, rtol=0, atol=tol)
        np.testing.assert_allclose(ref.quantile(PROBS), quantiles, rtol=0, atol=tol)


def test_reference_known_q_informative_prior():
    """Known q with a Beta(3, 2) prior on θ: the CDF by scipy.integrate.quad of the 1-D density.

    Tolerance 1e-8: the reference's θ discretisation error (see the test above).
    """
    n, k, q0, q1, a, b = 150, 60, 0.8, 0.9, 3.0, 2.0
    ref = theta_posterior(n, k, 0, 0, 0, 0, theta_prior=(a, b), q0_prior=q0, q1_prior=q1)

    def density(t):
        return stats.beta.pdf(t, a, b) * stats.binom.pmf(k, n, t * q1 + (1 - t) * (1 - q0))

    total = integrate.quad(density, 0, 1, epsabs=0, epsrel=1e-13)[0]
    for t in (0.2, 0.4, 0.5, 0.6):
        cdf = integrate.quad(density, 0, t, epsabs=0, epsrel=1e-13)[0] / total
        assert ref.cdf(t) == pytest.approx(cdf, abs=1e-8)


@pytest.mark.parametrize(
    ("data", "jbtc"),
    [
        (FLAT_DATASETS["rare-positive"], False),
        (FLAT_DATASETS["small-calibration"], False),
        (_cf_counts(0.3, 0.7, 0.9), False),
        (WEAK, True),
    ],
    ids=["rare-positive", "small-calibration", "closed-form-design", "weak-calibration-J>0"],
)
def test_reference_converged(data, jbtc):
    """Doubling the θ grid and the q nodes moves the quantiles by < 1e-8 (measured: < 1e-9)."""
    coarse = theta_posterior(*data, judge_better_than_chance=jbtc)
    fine = theta_posterior(*data, judge_better_than_chance=jbtc, nodes=64, grid=1601, coarse=400)
    np.testing.assert_allclose(coarse.quantile(PROBS), fine.quantile(PROBS), rtol=0, atol=1e-8)


# ----------------------------------------------------------------------------- NUTS


@pytest.fixture(scope="module")
def flat_fit():
    counts = _as_counts(FLAT_DATASETS | CF_DATASETS)
    return bj.fit(counts, aggregate=None, draws=DRAWS, random_seed=SEED)


@pytest.fixture(scope="module")
def informative_fit():
    priors = bj.Priors(
        theta=INFORMATIVE["theta_prior"], q0=INFORMATIVE["q0_prior"], q1=INFORMATIVE["q1_prior"]
    )
    return bj.fit(
        _as_counts(INFORMATIVE_DATASETS),
        priors=priors,
        aggregate=None,
        draws=DRAWS,
        random_seed=SEED,
    )


def _nuts_quantiles(fit, prob):
    theta = fit.posterior["theta"].isel(stratum=0)
    value = theta.quantile(prob, dim=("chain", "draw"))
    mcse = az.mcse(theta.to_dataset(), method="quantile", prob=prob)["theta"]
    return value, mcse


def _check_against_reference(fit, datasets, priors):
    failures = []
    for i, prob in enumerate(PROBS):
        value, mcse = _nuts_quantiles(fit, prob)
        for system, data in datasets.items():
            ref = float(_reference(data, tuple(priors.items()))[i])
            got, se = float(value.sel(system=system)), float(mcse.sel(system=system))
            # 4 MCSE: a fixed-seed run fails by chance with probability ~6e-5 per comparison.
            if not abs(got - ref) <= 4 * se:
                failures.append(f"{system} q{prob}: NUTS {got:.5f} ref {ref:.5f} mcse {se:.5f}")
    assert not failures, failures


def test_nuts_matches_reference_flat_priors(flat_fit):
    _check_against_reference(flat_fit, FLAT_DATASETS, {})


def test_nuts_matches_reference_informative_priors(informative_fit):
    _check_against_reference(informative_fit, INFORMATIVE_DATASETS, INFORMATIVE)


def test_nuts_close_to_closed_form(flat_fit):
    """95 % ETI within 0.015 of Lang-Reiczigel, median within 0.01 of Rogan-Gladen (NUTS).

    Exact posterior values and their distance to the closed forms are in
    test_exact_posterior_close_to_closed_form. In this design the exact distances are at most
    0.0135 (θ = 0.1, (0.7, 0.9): LR's lower end is clipped at 0, the ETI's is 0.0135), 0.007
    elsewhere, and 0.003 for the median; the MCSE of an ETI end is ~0.001 (median ~0.0005).
    Measured with SEED: 0.0118 at θ = 0.1, ≤ 0.0074 elsewhere, medians ≤ 0.0026.
    """
    eti = flat_fit.posterior["theta"].isel(stratum=0).quantile(PROBS, dim=("chain", "draw"))
    failures = []
    for system, data in CF_DATASETS.items():
        lower, rg, upper = _closed_form(*data)
        got = eti.sel(system=system).values
        for name, value, target, tol in (
            ("lower", got[0], lower, LR_TOL),
            ("median", got[1], rg, RG_TOL),
            ("upper", got[2], upper, LR_TOL),
        ):
            if not abs(value - target) <= tol:
                failures.append(f"{system} {name}: posterior {value:.4f} closed form {target:.4f}")
    assert not failures, failures


def test_exact_posterior_close_to_closed_form():
    """The same requirement for the quadrature posterior (no Monte Carlo error), on more designs."""
    failures = []
    for q0, q1 in CF_QS_EXACT:
        for theta in CF_THETAS:
            data = _cf_counts(theta, q0, q1)
            lower, rg, upper = _closed_form(*data)
            got = _reference(data)
            dist = np.abs(got - [lower, rg, upper])
            if not (dist[0] <= LR_TOL and dist[1] <= RG_TOL and dist[2] <= LR_TOL):
                failures.append(f"q=({q0}, {q1}) θ={theta}: {got} vs {(lower, rg, upper)}")
    assert not failures, failures


def test_closed_form_agreement_at_a_weak_judge_is_documented():
    """q0 = q1 = 0.7 (J = 0.4) is left out of CF_QS_EXACT on purpose: there the exact posterior
    departs from Lang-Reiczigel by 0.016 at θ = 0.3 (lower end) and θ = 0.7 (upper end).

    θ = (p + q0 - 1) / J is a ratio with an uncertain denominator, so its posterior is skewed
    away from 0.5 while the LR interval is symmetric about Rogan-Gladen; the medians stay within
    0.007. This pins the measured departure so that the documented bound (bayesjudge.fit Notes:
    within 0.015 for J >= 0.6) cannot silently be claimed for weaker judges.
    """
    dist = []
    for theta in CF_THETAS:
        data = _cf_counts(theta, 0.7, 0.7)
        dist.append(_reference(data) - np.array(_closed_form(*data)))
    dist = np.array(dist)
    worst = np.abs(dist[:, [0, 2]]).max()
    assert 0.015 < worst < 0.017, worst
    assert np.abs(dist[:, 1]).max() < 0.007
    # Skew: the lower end sits below LR's for θ < 0.5, the upper end above it for θ > 0.5.
    assert dist[2, 0] < -0.015 and dist[6, 2] > 0.015


# ----------------------------------------------------------------------------- slow: more models

KNOWN_Q1_DATASETS = {
    "known-q1": (300, 100, 40, 30, 10, 9),
    "known-q1-rare": (3330, 50, 401, 399, 5, 5),
}
JBTC_DATASETS = {"weak-calibration": WEAK, "moderate": FLAT_DATASETS["moderate"]}


@pytest.mark.slow
def test_nuts_matches_reference_known_q1():
    """Priors(q1=0.9): q1 is a constant; the reference integrates over q0 only."""
    fit = bj.fit(
        _as_counts(KNOWN_Q1_DATASETS),
        priors=bj.Priors(q1=0.9),
        aggregate=None,
        draws=DRAWS,
        random_seed=SEED,
    )
    _check_against_reference(fit, KNOWN_Q1_DATASETS, {"q1_prior": 0.9})


@pytest.mark.slow
def test_nuts_matches_reference_judge_better_than_chance():
    """J > 0: the posterior is the reference restricted to q0 + q1 > 1 (weak calibration, where
    P(J <= 0 | data) = 0.09 without the restriction, and a well-calibrated set)."""
    fit = bj.fit(
        _as_counts(JBTC_DATASETS),
        judge_better_than_chance=True,
        aggregate=None,
        draws=DRAWS,
        random_seed=SEED,
    )
    _check_against_reference(fit, JBTC_DATASETS, {"judge_better_than_chance": True})
