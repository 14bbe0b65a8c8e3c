"""The K-category Bayesian models against independent references (slow tier: MCMC fits).

* K = 3, one group: the posterior matches importance sampling written in plain numpy
  (:func:`importance_reference`, 10⁶ draws), both labelling designs, within Monte Carlo error.
* K = 2: the posterior of θ equals the binary exact engine's
  (:func:`bayesjudge.core.exact.exact_marginals`, matching flat priors) within Monte Carlo
  error, both designs.
* Simulation-based calibration (Talts et al. 2018) of the separate and hierarchical models.
* Recovery: 90 % intervals of θ in an 8 × 3 hierarchical fit cover at the nominal rate.

Tolerances are derived from the Monte Carlo standard errors (ESS of the chains and of the
importance weights), at 4 standard errors, seeds fixed.
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest
from sbc import rank_uniformity, ranks
from scipy import special, stats

import bayesjudge as bj
from bayesjudge.core.exact import exact_marginals
from bayesjudge.data import CategoricalCounts
from bayesjudge.models import categorical as cm
from bayesjudge.simulate import simulate_categorical_counts
from bayesjudge.warnings import ConvergenceWarning

pytestmark = pytest.mark.slow

CATS = ["A", "tie", "B"]


# ----------------------------------------------------------------------------- reference


def importance_reference(test, cal, *, design, row_alpha, draws=10**6, seed=0):
    """Posterior draws and weights of θ and C for one group, flat θ, Dirichlet(row_alpha) rows.

    Written from the model's definition, not from the package: C[t] is drawn from its
    posterior given the calibration counts alone, Dirichlet(row_alpha + cal[t]); θ from its prior
    Dirichlet(1) (stratified design) or Dirichlet(1 + m) with m the truth totals (random
    design: the truth counts are a Multinomial(Σm, θ) sample, conjugate); the weight is the
    multinomial likelihood of the test counts, Π_v (Cᵀθ)_v^{test_v}. Returns (θ, C, w).
    """
    rng = np.random.default_rng(seed)
    k = len(test)
    conf = np.stack([rng.dirichlet(row_alpha + cal[t], size=draws) for t in range(k)], axis=1)
    alpha = 1.0 + (cal.sum(-1) if design == "random" else np.zeros(k))
    theta = rng.dirichlet(alpha, size=draws)
    p = np.einsum("dt,dtv->dv", theta, conf)
    logw = (test * np.log(p)).sum(-1)
    w = np.exp(logw - logw.max())
    return theta, conf, w / w.sum()


def _weighted_cdf(x, w, at):
    return float(w[x <= at].sum())


def _check_against_reference(fit, test, cal, design, row_alpha):
    theta_ref, conf_ref, w = importance_reference(
        test, cal, design=design, row_alpha=row_alpha, seed=11
    )
    ess_is = 1.0 / (w**2).sum()
    assert ess_is > 2e4, ess_is  # enough effective reference draws for the tolerance below
    post = fit.posterior
    checks = {
        f"theta[{c}]": (post["theta"].isel(system=0, stratum=0, category=i), theta_ref[:, i])
        for i, c in enumerate(CATS)
    }
    checks |= {
        f"confusion[{c},{c}]": (
            post["confusion"].isel(system=0, stratum=0, truth=i, verdict=i),
            conf_ref[:, i, i],
        )
        for i, c in enumerate(CATS)
    }
    for name, (draws, ref) in checks.items():
        single = draws.rename("x").to_dataset()
        ess_bulk = float(az.ess(single, method="bulk")["x"])
        ess_tail = float(az.ess(single, method="tail")["x"])
        mean_ref = float((w * ref).sum())
        sd_ref = float(np.sqrt((w * (ref - mean_ref) ** 2).sum()))
        se = sd_ref * np.sqrt(1 / ess_bulk + 1 / ess_is)
        assert abs(float(draws.mean()) - mean_ref) < 4 * se, (name, float(draws.mean()), mean_ref)
        for q in (0.05, 0.5, 0.95):
            at = float(draws.quantile(q))
            tol = 4 * np.sqrt(q * (1 - q) * (1 / ess_tail + 1 / ess_is))
            assert abs(_weighted_cdf(ref, w, at) - q) < tol, (name, q)


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_k3_posterior_matches_importance_sampling(design):
    test = np.array([31, 12, 17])
    cal = np.array([[14, 3, 1], [2, 9, 3], [1, 2, 12]])
    counts = CategoricalCounts.from_counts(test, cal, categories=CATS, design=design)
    # The default priors: flat θ, Perks's Dirichlet(1/3) rows (written here, not read).
    fit = cm.fit_categorical(counts, draws=2000, chains=4, random_seed=3)
    _check_against_reference(fit, test, cal, design, row_alpha=1 / 3)


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_k2_posterior_equals_the_binary_exact_engine(design):
    # k of n judged correct, tn of m0 and tp of m1 calibration items; flat priors both sides
    # (the K-category default rows are Perks's Dirichlet(1/2): ask for flat ones).
    k, n, tn, m0, tp, m1 = 420, 1000, 70, 100, 88, 100
    binary = bj.JudgeCounts.from_counts(n=n, k=k, m0=m0, tn=tn, m1=m1, tp=tp, design=design)
    flat = cm.CategoricalPriors(confusion=1.0)
    fit = cm.fit_categorical(binary, priors=flat, draws=2000, chains=4, random_seed=5)
    exact = exact_marginals(k, n, tn, m0, tp, m1, design=design)
    for name, draws in (
        ("theta", fit.posterior["theta"].sel(category="correct")),
        ("q0", fit.posterior["confusion"].sel(truth="incorrect", verdict="incorrect")),
        ("q1", fit.posterior["confusion"].sel(truth="correct", verdict="correct")),
    ):
        marginal = exact[name]
        single = draws.squeeze(drop=True).rename("x").to_dataset()
        ess_bulk = float(az.ess(single, method="bulk")["x"])
        ess_tail = float(az.ess(single, method="tail")["x"])
        se = float(marginal.sd()) / np.sqrt(ess_bulk)
        assert abs(float(draws.mean()) - float(marginal.mean())) < 4 * se, name
        for q in (0.025, 0.5, 0.975):
            cdf = float(marginal.cdf(float(draws.quantile(q))))
            assert abs(cdf - q) < 4 * np.sqrt(q * (1 - q) / ess_tail), (name, q, cdf)


# ----------------------------------------------------------------------------- SBC


def _sbc(simulate, fit_kwargs, names, *, n_fits, seed):
    """Ranks of the true values among 4 × 250 thinned draws (Talts et al., Algorithm 1)."""
    rng = np.random.default_rng(seed)
    collected = {name: [] for name in names}
    divergences = 0
    for i in range(n_fits):
        counts, truth = simulate(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # judged by the ranks
            fit = cm.fit_categorical(
                counts, draws=1000, tune=1000, chains=4, random_seed=seed * 100 + i, **fit_kwargs
            )
        divergences += fit.diagnostics()["divergences"]
        for name, select in names.items():
            collected[name].append(ranks(select(fit.posterior), select(truth), thin=4))
    return {name: np.concatenate(v) for name, v in collected.items()}, divergences


def _separate_simulation(rng):
    shape = (4, 2)  # 8 independent data sets per fit
    # From the model's default priors: flat θ, Perks's Dirichlet(1/3) confusion rows.
    theta = rng.dirichlet(np.ones(3), size=shape)
    conf = rng.dirichlet(np.full(3, 1 / 3), size=(*shape, 3))
    counts = simulate_categorical_counts(
        theta, conf, n=60, m=np.full((*shape, 3), 12), categories=CATS,
        system=list("abcd"), stratum=["x", "y"], random_seed=rng,
    )  # fmt: skip
    return counts, {"theta": theta, "confusion": conf}


def _hierarchical_simulation(rng):
    # pool_over="stratum": every system its own population (μ, σ), so 4 data sets per fit.
    priors = cm.CategoricalPriors()
    mean, sd = priors.error_logit_mean
    mu = rng.normal(mean, sd, size=(4, 6))
    sigma = np.abs(rng.normal(0, priors.error_logit_scale, size=(4, 3)))
    z = rng.normal(size=(4, 3, 6))
    _, rows, cols = cm.error_cells(CATS)
    eta = np.zeros((4, 3, 3, 3))
    eta[..., rows, cols] = mu[:, None, :] + sigma[:, None, rows] * z
    conf = special.softmax(eta, axis=-1)
    theta = rng.dirichlet(np.ones(3), size=(4, 3))
    counts = simulate_categorical_counts(
        theta, conf, n=60, m=np.full((4, 3, 3), 10), categories=CATS,
        system=list("abcd"), stratum=["x", "y", "z"], random_seed=rng,
    )  # fmt: skip
    return counts, {"theta": theta, "confusion": conf, "error_logit_mean": mu}


def _sel_theta(x):
    return x["theta"][..., 0] if isinstance(x, dict) else x["theta"].isel(category=0)


def _sel_diag(x):
    if isinstance(x, dict):
        return x["confusion"][..., 1, 1]
    return x["confusion"].isel(truth=1, verdict=1)


def _sel_mu(x):
    return (
        x["error_logit_mean"][..., 0]
        if isinstance(x, dict)
        else x["error_logit_mean"].isel(error=0)
    )


@pytest.mark.parametrize(
    ("simulate", "fit_kwargs", "names"),
    [
        (_separate_simulation, {}, {"theta": _sel_theta, "confusion": _sel_diag}),
        (
            _hierarchical_simulation,
            {"calibration": "hierarchical", "pool_over": "stratum"},
            {"theta": _sel_theta, "confusion": _sel_diag, "mu": _sel_mu},
        ),
    ],
    ids=["separate", "hierarchical"],
)
def test_simulation_based_calibration(simulate, fit_kwargs, names):
    rank_values, divergences = _sbc(simulate, fit_kwargs, names, n_fits=20, seed=4)
    n_draws = 4 * 250
    for name, values in rank_values.items():
        _, p = rank_uniformity(values, n_draws, bins=10)
        # Three or two quantities per model: Bonferroni over them at 0.01 overall.
        assert p > 0.01 / len(names), (name, p, np.bincount(values * 10 // (n_draws + 1)))
    assert divergences <= 20 * 4 * 1000 * 0.001  # at most 0.1 % of transitions


# ----------------------------------------------------------------------------- recovery


def test_hierarchical_recovery_covers_at_the_nominal_rate():
    # The data of benchmarks/bench_categorical_fit.py (8 × 3 groups, seed 2026).
    rng = np.random.default_rng(2026)
    shape = (8, 3)
    theta = rng.dirichlet([4.0, 2.0, 4.0], size=shape)
    eta = np.zeros((*shape, 3, 3))
    eta[..., ~np.eye(3, dtype=bool)] = -2.0 + 0.3 * rng.standard_normal((*shape, 6))
    data = simulate_categorical_counts(
        theta, special.softmax(eta, axis=-1), n=200, m=np.full((*shape, 3), 20),
        system=[f"system{i}" for i in range(8)], stratum=[f"stratum{j}" for j in range(3)],
        categories=CATS, random_seed=rng,
    )  # fmt: skip
    # 4 × 2000 draws: at 1000 the tail ESS of θ was 283 and r_hat of the scales 1.012.
    fit = cm.fit_categorical(data, calibration="hierarchical", draws=2000, random_seed=9)
    ci = fit.summary(ci_prob=0.9)["theta_ci"].transpose("system", "stratum", "category", "ci_bound")
    inside = int(((ci.values[..., 0] <= theta) & (theta <= ci.values[..., 1])).sum())
    # 72 cells; the 99.9 % binomial band of Bin(72, 0.9) (cells of a group are correlated,
    # which widens the true band a little: the band is a check for gross miscalibration).
    low, high = stats.binom(72, 0.9).ppf([0.0005, 0.9995])
    assert low <= inside <= high, inside
    assert fit.diagnostics()["divergences"] == 0


def test_posterior_intervals_hook_covers():
    # The studies' hook: 60 replications of one K = 3 preference design in one fit.
    rng = np.random.default_rng(31)
    theta = np.array([0.5, 0.2, 0.3])
    conf = np.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]])
    reps = 60
    test = rng.multinomial(300, theta @ conf, size=reps)
    cal = np.stack([rng.multinomial(40, conf[t], size=reps) for t in range(3)], axis=1)
    weights = np.array([1.0, 0.5, 0.0])
    lower, upper = cm.posterior_intervals(
        test, cal, weights, alpha=0.1, categories=CATS, draws=500, random_seed=2
    )
    assert lower.shape == upper.shape == (reps, 4)
    truth = np.append(theta, theta @ weights)
    inside = ((lower <= truth) & (truth <= upper)).sum(0)
    low, high = stats.binom(reps, 0.9).ppf([0.001, 0.999])
    assert ((low <= inside) & (inside <= high)).all(), inside
