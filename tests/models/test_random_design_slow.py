"""The random labelling design in the Bayesian models: MCMC against quadrature, simulation.

Slow tier (``make test-slow``): MCMC fits of the random design's models and a small coverage
simulation of the test-set θ. The oracle is ``tests/references/random_design_quadrature.py``,
a brute-force tensor quadrature of the full likelihood written with scipy (nothing shared with
bayesjudge). Tolerances are Monte Carlo standard errors of the draws (ESS from ArviZ) or of
the simulation (binomial), with fixed seeds.
"""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest
from random_design_quadrature import RandomDesignPosterior

import bayesjudge as bj
from bayesjudge.models.fit import fit

pytestmark = pytest.mark.slow

# One group of the example: 1,800 unlabelled + 200 labelled items, θ = 0.3,
# q0 = 0.8, q1 = 0.9. p = 0.3 · 0.9 + 0.7 · 0.2 = 0.41, so k ≈ 0.41 · 1800 = 738;
# m1 ≈ 0.3 · 200 = 60, tn ≈ 0.8 · 140 = 112, tp ≈ 0.9 · 60 = 54.
ONE = {"k": 738, "n": 1800, "tn": 112, "m0": 140, "tp": 54, "m1": 60}


@pytest.fixture(scope="module")
def reference():
    # RandomDesignPosterior(738, 1800, 112, 140, 54, 60) (flat priors, design="random")
    return RandomDesignPosterior(*ONE.values())


def test_mcmc_random_design_posterior_matches_quadrature(reference):
    counts = bj.JudgeCounts.from_counts(**ONE, design="random")
    result = fit(counts, draws=2000, tune=1000, chains=4, random_seed=11)
    theta = result.posterior["theta"].isel(system=0, stratum=0, drop=True)
    ds = theta.to_dataset(name="theta")
    ess_bulk = float(az.ess(ds, method="bulk")["theta"])
    ess_tail = float(az.ess(ds, method="tail")["theta"])
    sd = float(theta.std())
    assert abs(float(theta.mean()) - reference.mean("theta")) < 4 * sd / np.sqrt(ess_bulk)
    assert sd == pytest.approx(reference.sd("theta"), rel=4 / np.sqrt(ess_bulk))
    # The reference CDF at the MCMC quantiles: within 4 binomial SEs of the probability.
    for prob in (0.025, 0.5, 0.975):
        q = float(theta.quantile(prob))
        se = np.sqrt(prob * (1 - prob) / ess_tail)
        assert abs(float(reference.cdf("theta", q)) - prob) < 4 * se, prob
    # The stratified design's posterior of the same counts is at least 1.4 times wider here.
    stratified = RandomDesignPosterior(*ONE.values(), design="stratified")
    assert stratified.sd("theta") > 1.4 * reference.sd("theta")


def test_exact_random_design_matches_quadrature(reference):
    counts = bj.JudgeCounts.from_counts(**ONE, design="random")
    result = fit(counts, method="exact", random_seed=1)
    table = result.summary(var_names=["theta", "q0", "q1"])
    for _, row in table.iterrows():
        name = row["variable"]
        lower, median, upper = reference.quantile(name, [0.025, 0.5, 0.975])
        # The engine's quantile error is < 1e-4 (bayesjudge.fit, method="exact").
        assert row["eti_lower"] == pytest.approx(lower, abs=2e-4), name
        assert row["median"] == pytest.approx(median, abs=2e-4), name
        assert row["eti_upper"] == pytest.approx(upper, abs=2e-4), name
        assert row["mean"] == pytest.approx(reference.mean(name), abs=2e-4), name


def _simulate(rng, theta, q0, q1, total, labelled):
    """One random-design evaluation: counts and the test-set θ (share truly correct)."""
    truth = rng.random(total) < theta
    verdict = np.where(truth, rng.random(total) < q1, rng.random(total) >= q0)
    is_labelled = np.zeros(total, dtype=bool)
    is_labelled[rng.choice(total, labelled, replace=False)] = True
    lab_t, lab_v = truth[is_labelled], verdict[is_labelled]
    counts = bj.JudgeCounts.from_counts(
        n=int((~is_labelled).sum()),
        k=int(verdict[~is_labelled].sum()),
        m0=int((~lab_t).sum()),
        tn=int((~lab_t & ~lab_v).sum()),
        m1=int(lab_t.sum()),
        tp=int((lab_t & lab_v).sum()),
        design="random",
    )
    return counts, float(truth.mean())


def test_theta_test_interval_is_narrower_and_covers():
    """100 evaluations of 600 items, 100 labelled at random (θ = 0.3, q0 = 0.8, q1 = 0.9).

    The 95 % interval of the test-set θ covers the share truly correct among the 600 items in
    at least 95 % − 3 SE (SE = √(0.95 · 0.05 / 100) = 0.022): 0.885; the population
    interval covers θ likewise; every test-set interval is narrower than the population one
    (the labelled items' truth is known, and the rest is the predictive of one sample).
    """
    rng = np.random.default_rng(2024)
    reps, theta, covered_test, covered_pop, narrower = 100, 0.3, 0, 0, 0
    for rep in range(reps):
        counts, share = _simulate(rng, theta, 0.8, 0.9, total=600, labelled=100)
        result = fit(counts, method="exact", estimand="test-set", draws=2000, chains=1,
                     random_seed=rep)  # fmt: skip
        table = result.summary(var_names=["theta_test", "theta"]).set_index("variable")
        lo_t, hi_t = table.loc["theta_test", ["eti_lower", "eti_upper"]]
        lo_p, hi_p = table.loc["theta", ["eti_lower", "eti_upper"]]
        covered_test += lo_t <= share <= hi_t
        covered_pop += lo_p <= theta <= hi_p
        narrower += (hi_t - lo_t) < (hi_p - lo_p)
    assert covered_test / reps >= 0.885
    assert covered_pop / reps >= 0.885
    assert narrower == reps


# Four systems, each with its own labelled items (a population of four for the hierarchy).
SYSTEMS = {
    "n": [900, 700, 800, 600], "k": [420, 380, 450, 300], "m0": [60, 45, 50, 55],
    "tn": [49, 37, 41, 45], "m1": [40, 55, 50, 45], "tp": [36, 49, 45, 40],
    "system": ["a", "b", "c", "d"],
}  # fmt: skip


@pytest.mark.parametrize(
    "options",
    [
        {"calibration": "shared", "pool_over": "system"},
        # 0.995: the logit-scale funnel with few groups (fit's advice after a divergence).
        {"calibration": "hierarchical", "target_accept": 0.995},
    ],
    ids=["shared", "hierarchical"],
)
def test_pooled_models_use_the_truth_counts(options):
    """Each system's own labelled items: the random design narrows every θ, and the PPC
    checks the truth counts."""
    sds = {}
    for design in ("random", "stratified"):
        counts = bj.JudgeCounts.from_counts(**SYSTEMS, design=design)
        result = fit(counts, draws=1000, tune=1000, chains=4, random_seed=3, **options)
        sds[design] = result.posterior["theta"].std(("chain", "draw")).values
        if design == "random":
            check = result.ppc(random_seed=4)
            p = check.p_value["truth"].values
            assert check.replicated["truth"].dims[-2:] == ("system", "stratum")
            assert np.all((p > 0.01) & (p < 0.99))  # the model reproduces its own data
    assert np.all(sds["random"] < sds["stratified"])


def test_shared_random_calibration_set_runs_and_informs_the_mean_theta():
    tests = bj.JudgeCounts.from_counts(n=[900, 700], k=[420, 380], system=["a", "b"])
    cal = bj.JudgeCounts.from_counts(m0=105, tn=86, m1=95, tp=85, design="random")
    counts = tests.with_calibration_from(cal)
    result = fit(counts, calibration="shared", draws=1000, tune=1000, chains=2, random_seed=5)
    assert result.model.named_vars_to_dims["truth"] == ("stratum",)
    w = np.array([900, 700]) / 1600
    mean_theta = (result.posterior["theta"].isel(stratum=0) * w).sum("system")
    stratified = fit(
        tests.with_calibration_from(
            bj.JudgeCounts.from_counts(m0=105, tn=86, m1=95, tp=85, design="stratified")
        ),
        calibration="shared", draws=1000, tune=1000, chains=2, random_seed=5,
    )  # fmt: skip
    mean_stratified = (stratified.posterior["theta"].isel(stratum=0) * w).sum("system")
    assert float(mean_theta.std()) < float(mean_stratified.std())
    with pytest.raises(ValueError, match="estimand='test-set' is not defined"):
        fit(counts, calibration="shared", estimand="test-set")
