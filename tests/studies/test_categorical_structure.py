"""The categorical-structure study and its sampler (studies/categorical_structure.py).

The sampler is checked against independent posteriors: the exact binary engine
(:mod:`bayesjudge.core.exact`) for the free model at K = 2, and grid quadratures of the
symmetric and ordinal models at K = 2, written here from the model cards' densities. The
priors are the models' defaults, written out here (θ ~ Dirichlet(1), rows ~ Dirichlet(1/K):
Beta(1/2, 1/2) on each binary accuracy) and checked against their definitions; the flat rows
of the first recording (``confusion_prior=1``) and a non-flat θ prior are checked too.
Tolerances are 4 Monte Carlo standard errors, estimated from independent chains run on copies
of the same data set (fixed seeds).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import special, stats

from bayesjudge._lazy import bayesian
from bayesjudge.core.categorical_posterior import THETA_PRIOR, default_confusion_prior
from bayesjudge.core.exact import exact_theta_interval
from bayesjudge.studies.categorical_structure import posterior_draws, run, scenario_confusion

ORDINAL_PRIOR = {"cutpoint": (1.5, 1.5), "log_gap": (np.log(3.0), 0.75),
                 "log_step": (np.log(3.0), 0.75)}  # fmt: skip
# One binary data set: k of n test items called "1"; tn of m0, tp of m1 calibration items.
N, K1, M0, TN, M1, TP = 200, 118, 15, 12, 15, 13
# The models' default priors at K = 2, written out: θ ~ Beta(1, 1); each row Dirichlet(1/2,
# 1/2), so q0 = C[0, 0] and q1 = C[1, 1] ~ Beta(1/2, 1/2) (Jeffreys).
THETA_BETA, ROW_BETA = (1.0, 1.0), (0.5, 0.5)


def test_the_priors_written_here_are_the_models_defaults():
    assert THETA_BETA == (THETA_PRIOR, THETA_PRIOR)
    assert ROW_BETA == (default_confusion_prior(2), default_confusion_prior(2))
    _, info = posterior_draws([[3, 2]], [[[4, 1], [1, 4]]], confusion="free", iterations=8,
                              rng=np.random.default_rng(0))  # fmt: skip
    assert (info["theta_prior"], info["confusion_prior"]) == (1.0, 0.5)
    _, info = posterior_draws([[3, 2, 1]], [np.eye(3, dtype=int) * 4], confusion="symmetric",
                              iterations=8, rng=np.random.default_rng(0))  # fmt: skip
    assert info["confusion_prior"] == pytest.approx(1 / 3, rel=1e-15)


def _chains(confusion, copies=24, iterations=2000, seed=0, prior=None, **priors):
    """Posterior means and 2.5 % quantiles of θ_1 from independent chains on one data set."""
    test = np.tile([N - K1, K1], (copies, 1))
    cal = np.tile([[TN, M0 - TN], [M1 - TP, TP]], (copies, 1, 1))
    draws, info = posterior_draws(
        test, cal, confusion=confusion, iterations=iterations,
        rng=np.random.default_rng(seed), ordinal_prior=prior, **priors,
    )  # fmt: skip
    theta = draws[..., 1]
    return theta.mean(0), np.quantile(theta, 0.025, axis=0), info


def _agrees(per_chain, reference, teeth=0.01):
    mcse = per_chain.std(ddof=1) / np.sqrt(per_chain.size)
    assert abs(per_chain.mean() - reference) < 4 * mcse + 1e-4, (per_chain.mean(), reference)
    # Teeth: the chains are precise enough to see an error of ``teeth`` (0.03 for a 2.5 %
    # quantile, whose estimate from 1,500 correlated draws is noisier than a mean's).
    assert 4 * mcse < teeth


def test_free_gibbs_matches_the_exact_binary_posterior():
    # bayesjudge.core.exact: θ ~ Beta(1, 1), q0, q1 ~ Beta(1/2, 1/2) = Dirichlet(1/2, 1/2) rows.
    exact = exact_theta_interval(
        K1, N, TN, M0, TP, M1, theta_prior=THETA_BETA, q0_prior=ROW_BETA, q1_prior=ROW_BETA,
        ci_prob=0.95,
    )  # fmt: skip
    mean, lower, _ = _chains("free")
    _agrees(mean, float(exact.mean))
    _agrees(lower, float(exact.lower), teeth=0.03)


@pytest.mark.parametrize(
    ("priors", "beta"),
    [
        # The flat rows of the first recording: q0, q1 ~ Beta(1, 1).
        ({"confusion_prior": 1.0}, {"q0_prior": (1.0, 1.0), "q1_prior": (1.0, 1.0)}),
        # A non-flat θ prior: exercises the θ-prior term of the confusion move's ratio.
        ({"theta_prior": 3.0}, {"theta_prior": (3.0, 3.0), "q0_prior": ROW_BETA,
                                "q1_prior": ROW_BETA}),
    ],
)  # fmt: skip
def test_free_gibbs_follows_its_prior_options(priors, beta):
    exact = exact_theta_interval(K1, N, TN, M0, TP, M1, ci_prob=0.95, **beta)
    mean, lower, _ = _chains("free", seed=3, **priors)
    _agrees(mean, float(exact.mean))
    _agrees(lower, float(exact.lower), teeth=0.03)
    # Teeth: the option moves the exact posterior mean by more than the tolerance.
    default = exact_theta_interval(
        K1, N, TN, M0, TP, M1, q0_prior=ROW_BETA, q1_prior=ROW_BETA, ci_prob=0.95
    )
    assert abs(float(exact.mean) - float(default.mean)) > 0.005


def _grid_posterior(log_density, axes):
    """Posterior mean and 2.5 % quantile of θ (axis 0) on a product grid."""
    log_p = log_density(*np.meshgrid(*axes, indexing="ij"))
    p = np.exp(log_p - log_p.max())
    marginal = p.reshape(len(axes[0]), -1).sum(1)
    marginal /= marginal.sum()
    cdf = np.cumsum(marginal)
    return float((axes[0] * marginal).sum()), float(np.interp(0.025, cdf, axes[0]))


def _log_lik(theta, c00, c11):
    p1 = theta * c11 + (1 - theta) * (1 - c00)  # P(verdict 1)
    return (
        stats.binom.logpmf(K1, N, p1)
        + stats.binom.logpmf(TN, M0, c00)
        + stats.binom.logpmf(TP, M1, c11)
    )


def test_symmetric_gibbs_matches_a_grid_quadrature():
    # K = 2 symmetric: C = [[q, 1 − q], [1 − q, q]], q ~ Dirichlet(1/2, 1/2) = Beta(1/2, 1/2)
    # (the free A row's default), θ ~ U(0, 1). Midpoint grid: the prior's integrable poles at
    # q = 0, 1 sit where the likelihood (12 and 13 of 15 right) is below e^-20 of its peak.
    theta = (np.arange(800) + 0.5) / 800
    q = (np.arange(800) + 0.5) / 800

    def log_density(t, s):
        return (
            _log_lik(t, s, s) + stats.beta.logpdf(s, *ROW_BETA) + stats.beta.logpdf(t, *THETA_BETA)
        )

    ref_mean, ref_lower = _grid_posterior(log_density, (theta, q))
    mean, lower, _ = _chains("symmetric", seed=1)
    _agrees(mean, ref_mean)
    _agrees(lower, ref_lower, teeth=0.03)
    # Teeth: the symmetric posterior differs from the free one here.
    free = exact_theta_interval(K1, N, TN, M0, TP, M1, q0_prior=ROW_BETA, q1_prior=ROW_BETA)
    assert abs(ref_mean - float(free.mean)) > 0.01


@pytest.mark.slow
def test_ordinal_gibbs_matches_a_grid_quadrature():
    # K = 2 ordinal: C[0, 0] = σ(κ), C[1, 1] = 1 − σ(κ − e^s); κ ~ N(1.5, 1.5),
    # s ~ N(log 3, 0.75) (ORDINAL_PRIOR of models/confusion_structures.py), θ ~ U(0, 1).
    theta = (np.arange(300) + 0.5) / 300
    kappa = np.linspace(-3.5, 6.5, 200)
    s = np.linspace(-1.5, 3.5, 200)

    def log_density(t, k, ls):
        c00, c11 = special.expit(k), 1 - special.expit(k - np.exp(ls))
        prior = stats.norm.logpdf(k, 1.5, 1.5) + stats.norm.logpdf(ls, np.log(3.0), 0.75)
        return _log_lik(t, c00, c11) + prior + stats.beta.logpdf(t, *THETA_BETA)

    # The prior written here is the model's (bayesjudge.models.confusion_structures).
    model_prior = bayesian("confusion_structures").ORDINAL_PRIOR
    assert {k: tuple(v) for k, v in model_prior.items()} == ORDINAL_PRIOR
    ref_mean, ref_lower = _grid_posterior(log_density, (theta, kappa, s))
    mean, lower, info = _chains("ordinal", seed=2, prior=ORDINAL_PRIOR)
    _agrees(mean, ref_mean)
    _agrees(lower, ref_lower, teeth=0.03)
    assert 0.1 < info["acceptance"] < 0.9


def test_scenario_judges_hold_or_break_their_structure():
    sym, biased = (
        scenario_confusion("symmetric", "holds"),
        scenario_confusion("symmetric", "violated"),
    )
    np.testing.assert_array_equal(sym, sym[::-1, ::-1])
    assert biased[0, 2] != biased[2, 0] and biased[1, 0] > biased[1, 2]
    ordinal, jumpy = (
        scenario_confusion("ordinal", "holds"),
        scenario_confusion("ordinal", "violated"),
    )
    for c in (sym, biased, ordinal, jumpy):
        np.testing.assert_allclose(c.sum(-1), 1.0, atol=1e-12)
    # The ordinal judge is a cumulative-logit judge: proportional odds, η_c = c / spread.
    cum = np.cumsum(ordinal, -1)[:, :-1]
    gaps = special.logit(cum[0]) - special.logit(cum[1:])
    np.testing.assert_allclose(gaps, np.arange(1, 5)[:, None] / 0.35 + 0 * gaps, atol=1e-8)
    # The violated judge: 80 % that judge, 20 % two grades down (up from grades 1 and 2).
    jump = np.zeros((5, 5))
    jump[[0, 1, 2, 3, 4], [2, 3, 0, 1, 2]] = 1.0
    np.testing.assert_allclose(jumpy, 0.8 * ordinal + 0.2 * jump, atol=1e-15)


def test_run_smoke(tmp_path):
    res = run(reps=3, m=10, n=100, iterations=60, random_seed=5)
    table = res.table
    assert dict(table.sizes) == {"structure": 2, "scenario": 2, "m": 1, "model": 2, "estimand": 6}
    cov = table["coverage"].sel(estimand=["score", "theta[0]", "theta[1]", "theta[2]"])
    assert ((cov >= 0) & (cov <= 1)).all()
    assert table["width"].sel(structure="symmetric", estimand="theta[3]").isnull().all()
    assert table["acceptance"].sel(model="structured", structure="ordinal").notnull().all()
    assert res.settings["reps"] == 3 and table.attrs["ci_prob"] == 0.95
    # Same seed, same numbers; the structured and free fits share the data sets.
    again = run(reps=3, m=10, n=100, iterations=60, random_seed=5, structure="symmetric")
    np.testing.assert_array_equal(
        again.table["bias"].values, table["bias"].sel(structure=["symmetric"]).values
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # matplotlib's tight_layout
        files = res.save(tmp_path)
    assert all(path.exists() for path in files.values())


def test_run_bad_input():
    with pytest.raises(ValueError, match="structure must be among"):
        run(reps=2, structure="banded")
    with pytest.raises(ValueError, match="reps"):
        run(reps=1)
    with pytest.raises(ValueError, match="m"):
        run(reps=2, m=0)
    with pytest.raises(ValueError, match="confusion_prior"):
        run(reps=2, confusion_prior=0)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="'free', 'symmetric' or 'ordinal'; got 'banded'"):
        posterior_draws([[3, 2]], [[[4, 1], [1, 4]]], confusion="banded", rng=rng)
    with pytest.raises(ValueError, match="needs ordinal_prior"):
        posterior_draws([[3, 2]], [[[4, 1], [1, 4]]], confusion="ordinal", rng=rng)
    with pytest.raises(ValueError, match="theta_prior"):
        posterior_draws([[3, 2]], [[[4, 1], [1, 4]]], confusion="free", rng=rng, theta_prior=-1)


@pytest.mark.slow
def test_full_study_shows_what_each_structure_buys_and_costs():
    # The default run (100 data sets per point, 2000 iterations, the models' default priors:
    # Perks's Dirichlet(1/K) rows): 86 s wall, 39 s CPU on a shared 2-core machine at load 2.1
    # (benchmarks/studies/results/categorical-structure/timing.json). Coverage is tested
    # against the nominal level with the MC-SE of a proportion at that level,
    # sqrt(0.95 · 0.05 / 100) = 0.022.
    table = run().table
    level = 0.95
    tol = 3 * np.sqrt(level * (1 - level) / table.attrs["reps"])
    score = table.sel(estimand="score")
    holds, violated = score.sel(scenario="holds"), score.sel(scenario="violated")
    # Holds: the structured interval covers within nominal ± 3 MC-SE and is narrower.
    structured = holds.sel(model="structured")
    assert (abs(structured["coverage"] - level) <= tol).all()
    assert (structured["width"] < holds["width"].sel(model="free")).all()
    # At m = 10 the symmetric structure about halves the score interval (measured 0.265 vs
    # 0.479 with the default Perks rows; 0.289 vs 0.538 with the flat rows first recorded).
    sym = holds.sel(structure="symmetric", m=10)
    assert sym["width"].sel(model="structured") < 0.6 * sym["width"].sel(model="free")
    # The ordinal gain is smaller against the Perks free rows: 20 % at m = 10 (0.507 vs 0.630;
    # 0.507 vs 0.906, 44 %, against the flat rows first recorded) and 6 % at m = 40.
    ordinal = holds.sel(structure="ordinal", m=10)
    assert ordinal["width"].sel(model="structured") < 0.9 * ordinal["width"].sel(model="free")
    # Violated: a position bias of 0.10 breaks the symmetric model (its score is biased).
    biased = violated.sel(structure="symmetric", model="structured")
    assert (biased["coverage"] < level - 0.3).all()
    assert (abs(biased["bias"]) > 4 * biased["bias_mcse"]).all()
    # The free model stays valid (never below nominal − 3 MC-SE; measured 0.94–1.00).
    assert (score.sel(model="free")["coverage"] >= level - tol).all()
