"""Validation of the Bayesian models by simulation.

1. Simulation-based calibration (SBC, Talts et al. 2018, Algorithm 1; helpers in ``sbc.py``)
   of the separate model under a flat and an informative prior, and of the hierarchical model
   (θ, q0, q1, the population means and scales of logit q). Slow.
2. Parameter recovery of the hierarchical model on an 8 × 4 design with known truths. Slow.
3. A system without calibration of its own borrows it in the hierarchical model, with a wider
   θ interval than calibrated systems; under ``calibration="shared"`` it does not widen. Fast.

Rank-uniformity level: every chi-square test must have p > 0.001 (fixed seeds below). With 16
such tests, the chance that at least one fails for a correct sampler is about 1.6 %.
"""

from __future__ import annotations

import numpy as np
import pytest
from sbc import draw_hierarchical_prior, draw_separate_prior, run_sbc
from scipy.special import expit, logit
from scipy.stats import binom, chi2, norm

import bayesjudge as bj

SBC_LEVEL = 0.001

# --------------------------------------------------------------------------- SBC, separate

# Each fit holds SEP_SETS independent data sets as systems (separate model: own θ, q0, q1 and
# own calibration counts per system, so the systems' posteriors are independent).
SEP_SETS, SEP_FITS = 50, 20  # 1000 ranks per parameter
N_TEST, M0, M1 = 200, 50, 50
SBC_DRAWS, SBC_TUNE, SBC_CHAINS, SBC_THIN = 500, 500, 2, 10  # L = 2 * 50 = 100 draws per rank
SEP_LABELS = [f"set{i:02d}" for i in range(SEP_SETS)]
INFORMATIVE = bj.Priors(theta=(3, 2), q0=(6, 2), q1=(8, 2))


def _separate_simulator(priors):
    def simulate(rng):
        truth = draw_separate_prior(priors, (SEP_SETS, 1), rng)
        counts = bj.simulate_counts(
            truth["theta"],
            truth["q0"],
            truth["q1"],
            N_TEST,
            M0,
            M1,
            system=SEP_LABELS,
            stratum=["all"],
            random_seed=rng,
        )
        return counts, truth

    return simulate


def _observed_youden(counts) -> np.ndarray:
    ds = counts.dataset
    return (ds["tn"] / ds["m0"] + ds["tp"] / ds["m1"] - 1).values


def _sbc_separate(data_priors, fit_priors, n_fits, seed):
    return run_sbc(
        _separate_simulator(data_priors),
        {"calibration": "separate", "priors": fit_priors},
        ("theta", "q0", "q1"),
        n_fits=n_fits,
        seed=seed,
        draws=SBC_DRAWS,
        tune=SBC_TUNE,
        chains=SBC_CHAINS,
        thin=SBC_THIN,
        feature=_observed_youden,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("priors", "seed", "check_weak"),
    [(bj.Priors(), 101, True), (INFORMATIVE, 102, False)],
    ids=["flat", "informative"],
)
def test_sbc_separate(priors, seed, check_weak):
    result = _sbc_separate(priors, priors, SEP_FITS, seed)
    report = {name: result.uniformity(name, bins=20) for name in ("theta", "q0", "q1")}
    # Near J = 0 the test counts barely inform θ and the flat prior allows the mirror solution
    # (1 - θ, 1 - q1, 1 - q0). Ranks are uniform given the data, so the data sets with an
    # observed |J| < 0.2 must pass on their own (about a third of them under the flat prior;
    # the informative prior puts J near 0.55, so too few sets for a test there).
    weak = np.abs(result.feature_array()) < 0.2
    if check_weak:
        assert weak.sum() >= 200, weak.sum()  # >= 20 expected per bin
        for name in ("theta", "q0", "q1"):
            report[f"{name} | |J_obs| < 0.2"] = result.uniformity(name, bins=10, mask=weak)
    print(f"\nSBC separate {priors}: {result.health()}; {int(weak.sum())} sets with |J_obs| < 0.2")
    for name, (stat, p) in report.items():
        print(f"  {name}: chi2 = {stat:.1f}, p = {p:.3f}")
    for name, (_, p) in report.items():
        assert p > SBC_LEVEL, (name, report)
    # Sampler health: measured 0 divergences in these fits; the separate model's posterior is
    # smooth (product of Beta-Binomial pieces), so any divergence points at a problem.
    assert result.divergences == 0, result.health()


@pytest.mark.slow
def test_sbc_detects_wrong_prior():
    # Power check of the SBC machinery: data drawn under the flat prior but fitted with the
    # informative prior (q0 ~ Beta(6, 2), q1 ~ Beta(8, 2)) must give non-uniform ranks of q0
    # and q1 (the prior pulls q < 0.5 upwards, so true values rank low).
    result = _sbc_separate(bj.Priors(), INFORMATIVE, n_fits=10, seed=103)
    report = {name: result.uniformity(name, bins=20) for name in ("q0", "q1")}
    print(f"\nSBC wrong prior: {result.health()}; {report}")
    for name, (_, p) in report.items():
        assert p < SBC_LEVEL, (name, report)


# --------------------------------------------------------------------------- SBC, hierarchical

# Each fit holds HIER_SETS independent hierarchies as systems: pool_over="stratum" gives every
# system its own population (mu, sigma) of logit q over its HIER_GROUPS strata.
HIER_SETS, HIER_GROUPS, HIER_FITS = 20, 4, 20  # 400 ranks per hyperparameter, 1600 per group
HIER_TUNE = 1000
HIER_LABELS = ([f"set{i:02d}" for i in range(HIER_SETS)], [f"g{j}" for j in range(HIER_GROUPS)])
HYPER = ("q0_logit_mean", "q0_logit_scale", "q1_logit_mean", "q1_logit_scale")


def _hierarchical_simulator(priors):
    def simulate(rng):
        truth = draw_hierarchical_prior(priors, HIER_SETS, HIER_GROUPS, rng)
        counts = bj.simulate_counts(
            truth["theta"],
            truth["q0"],
            truth["q1"],
            N_TEST,
            M0,
            M1,
            system=HIER_LABELS[0],
            stratum=HIER_LABELS[1],
            random_seed=rng,
        )
        return counts, truth

    return simulate


@pytest.mark.slow
def test_sbc_hierarchical():
    priors = bj.Priors()
    result = run_sbc(
        _hierarchical_simulator(priors),
        {"calibration": "hierarchical", "pool_over": "stratum", "aggregate": None},
        ("theta", "q0", "q1", *HYPER),
        n_fits=HIER_FITS,
        seed=201,
        draws=SBC_DRAWS,
        tune=HIER_TUNE,
        chains=SBC_CHAINS,
        thin=SBC_THIN,
    )
    report = {
        name: result.uniformity(name, bins=10 if name in HYPER else 20)
        for name in ("theta", "q0", "q1", *HYPER)
    }
    print(f"\nSBC hierarchical: {result.health()}")
    for name, (stat, p) in report.items():
        print(f"  {name}: chi2 = {stat:.1f}, p = {p:.3f}")
    for name, (_, p) in report.items():
        assert p > SBC_LEVEL, (name, report)
    # The non-centered model diverges now and then (funnel in the logit scale); a handful of
    # divergent transitions per thousand cannot bias the ranks visibly, more would.
    assert result.divergences <= 0.002 * result.transitions, result.health()


# --------------------------------------------------------------------------- recovery

# 8 systems x 4 strata, one judge population pooled over both dims (the default pool_over):
# logit q0 ~ Normal(logit 0.8, 0.4), logit q1 ~ Normal(logit 0.9, 0.4), z drawn once (seed 7).
REC_SYSTEMS = [f"sys{i}" for i in range(8)]
REC_STRATA = [f"str{j}" for j in range(4)]
REC_TRUTH_SEED = 7
REC_HYPER = {
    "q0_logit_mean": float(logit(0.8)),
    "q0_logit_scale": 0.4,
    "q1_logit_mean": float(logit(0.9)),
    "q1_logit_scale": 0.4,
}
REC_N, REC_M0, REC_M1 = 300, 60, 60
REC_REPLICATES = 4  # data sets drawn from the same truths (same labels: one compiled model)


def _recovery_truth():
    rng = np.random.default_rng(REC_TRUTH_SEED)
    shape = (len(REC_SYSTEMS), len(REC_STRATA))
    theta = np.round(rng.uniform(0.2, 0.9, size=shape), 3)
    q = {
        name: expit(
            REC_HYPER[f"{name}_logit_mean"]
            + REC_HYPER[f"{name}_logit_scale"] * rng.normal(size=shape)
        )
        for name in ("q0", "q1")
    }
    # aggregate="auto" with equal test counts per stratum: theta_total = mean over strata.
    return {"theta": theta, **q, "theta_total": theta.mean(1)}


@pytest.mark.slow
def test_hierarchical_recovery():
    truth = _recovery_truth()
    names = ("theta", "theta_total", "q0", "q1")
    covered = total = 0
    z_scores, hyper_rows, health = [], [], []
    for rep in range(REC_REPLICATES):
        counts = bj.simulate_counts(
            truth["theta"],
            truth["q0"],
            truth["q1"],
            REC_N,
            REC_M0,
            REC_M1,
            system=REC_SYSTEMS,
            stratum=REC_STRATA,
            random_seed=300 + rep,
        )
        # Clean sampling is part of the claim: no ConvergenceWarning may be raised here. At
        # 1000 draws and 1000 tuning steps one replicate's q1_logit_scale reached r_hat 1.015
        # and tail ESS 340 with nutpie 0.16.11 / PyMC 6.4.0 (the same at the issue-12 commit):
        # the population scale mixes slowly, so it gets twice the tuning and draws.
        result = bj.fit(
            counts,
            calibration="hierarchical",
            draws=2000,
            tune=2000,
            chains=4,
            random_seed=310 + rep,
            target_accept=0.9,
        )
        diag = result.diagnostics()
        health.append(
            (diag["divergences"], round(diag["r_hat_max"], 4), round(diag["ess_bulk_min"]))
        )
        summary = result.summary(ci_prob=0.95, as_xarray=True)
        for name in names:
            ds = summary[name].dataset
            lower = ds["eti"].sel(ci_bound="lower").values
            upper = ds["eti"].sel(ci_bound="upper").values
            inside = (lower <= truth[name]) & (truth[name] <= upper)
            covered += int(inside.sum())
            total += inside.size
            z_scores.append(((ds["mean"].values - truth[name]) / ds["sd"].values).ravel())
        for name, value in REC_HYPER.items():
            ds = summary[name].dataset
            hyper_rows.append(
                (
                    rep,
                    name,
                    value,
                    float(ds["mean"]),
                    float(ds["eti"].sel(ci_bound="lower")),
                    float(ds["eti"].sel(ci_bound="upper")),
                )
            )
    z = np.concatenate(z_scores)
    print(f"\nrecovery: covered {covered}/{total}; health (div, r_hat, ess) {health}")
    print(f"  |z| max {np.abs(z).max():.2f}, mean z^2 {np.mean(z**2):.3f}")
    for row in hyper_rows:
        print("  rep {} {}: truth {:.3f}, mean {:.3f}, 95% [{:.3f}, {:.3f}]".format(*row))
    # Coverage: if each interval covered independently with probability 0.95, the count would
    # be Binomial(total, 0.95); reject if it is in either 0.001 tail.
    assert binom.cdf(covered, total, 0.95) > 0.001, (covered, total)
    assert binom.sf(covered - 1, total, 0.95) > 0.001, (covered, total)
    # Closeness: posterior mean within z_max posterior sd of the truth for every parameter,
    # z_max the Bonferroni bound for a family-wise 0.001 two-sided normal tail.
    # Measured: max |z| 4.27 (rep 3, q0 of sys3/str2, truth 0.683, the population's lowest:
    # that replicate's sigma posterior (mean 0.20, truth 0.40) shrinks it towards the centre).
    z_max = float(norm.isf(0.0005 / z.size))
    assert np.abs(z).max() < z_max, (np.abs(z).max(), z_max)
    # Spread: sum z^2 within the 0.001 tails of chi2(total), as for independent N(0, 1) z's.
    assert chi2.ppf(0.0005, z.size) < np.sum(z**2) < chi2.isf(0.0005, z.size), np.sum(z**2)
    # Hyperparameters: each 95 % interval covers its truth in at least 3 of the 4 replicates.
    for name in REC_HYPER:
        hits = sum(lo <= v <= hi for _, n, v, _, lo, hi in hyper_rows if n == name)
        assert hits >= REC_REPLICATES - 1, (name, hyper_rows)


# --------------------------------------------------------------------------- fast


# Six systems, one judge. Five have their own calibration set (m0 = m1 = 100); "uncal" has
# none (m0 = m1 = 0), so its q0, q1 can only come from the other systems. The judge varies a
# little between systems; "uncal" has the centre of the others' q's.
FAST_SYSTEMS = ["a", "b", "c", "d", "e", "uncal"]
FAST_THETA = np.array([0.55, 0.65, 0.45, 0.60, 0.70, 0.60])
FAST_Q0 = np.array([0.78, 0.82, 0.74, 0.80, 0.85, 0.80])
FAST_Q1 = np.array([0.90, 0.88, 0.92, 0.86, 0.91, 0.89])


def _uncalibrated_counts() -> bj.JudgeCounts:
    sim = bj.simulate_counts(
        FAST_THETA, FAST_Q0, FAST_Q1, 400, 100, 100, system=FAST_SYSTEMS, random_seed=11
    ).dataset
    cal = {v: sim[v].values.ravel().copy() for v in ("m0", "tn", "m1", "tp")}
    for values in cal.values():
        values[-1] = 0  # the last system, "uncal", has no calibration items
    return bj.JudgeCounts.from_counts(
        n=sim["n"].values.ravel(), k=sim["k"].values.ravel(), **cal, system=FAST_SYSTEMS
    )


def _theta_interval(result):
    eti = result.summary(ci_prob=0.95, var_names=["theta"], as_xarray=True)["theta"]["eti"]
    lower = eti.sel(ci_bound="lower").values.ravel()
    upper = eti.sel(ci_bound="upper").values.ravel()
    return lower, upper, upper - lower


# slow tier: kept out of `make test` (15-minute budget), run by `make test-slow` in CI
@pytest.mark.slow
def test_uncalibrated_system_borrows_calibration():
    counts = _uncalibrated_counts()
    assert counts.dataset["m0"].values.ravel().tolist() == [100] * 5 + [0]
    # target_accept=0.99: at 0.8-0.95 this 6-group non-centered model gave 0-4 divergences per
    # 3000 draws depending on the seed; at 0.99 none in 6 seeds. 2 x 2500 draws keep r_hat
    # below 1.01 (max 1.0053 over seeds 0-5; with 2 x 1500 seed 1 reached 1.011).
    with pytest.warns(bj.SmallSampleWarning, match=r"1 calibration group\(s\) lack"):
        hier = bj.fit(
            counts,
            calibration="hierarchical",
            draws=2500,
            tune=1000,
            chains=2,
            random_seed=0,
            target_accept=0.99,
        )
    # The shared set pools the five calibrated systems' items: no group lacks calibration.
    shared = bj.fit(counts, calibration="shared", draws=1500, tune=1000, chains=2, random_seed=0)
    lo_h, hi_h, width_h = _theta_interval(hier)
    lo_s, hi_s, width_s = _theta_interval(shared)
    print(f"\nhierarchical widths {np.round(width_h, 3)}; shared widths {np.round(width_s, 3)}")
    truth = FAST_THETA[-1]
    # Hierarchical: the uncalibrated system's q's are drawn from the population, which adds the
    # between-system spread to its uncertainty: a wider interval that still covers the truth.
    assert lo_h[-1] <= truth <= hi_h[-1], (lo_h[-1], hi_h[-1])
    assert width_h[-1] > width_h[:-1].max(), width_h
    # Shared: one q0, q1 for every system, so the uncalibrated system's interval is as narrow as
    # the others' (within 10 %, about 5 Monte Carlo SEs of a 95 % ETI width from ~2000
    # effective draws) and narrower than the hierarchical one; it covers here because "uncal"
    # has the centre of the other systems' q's.
    assert width_s[-1] <= 1.1 * width_s[:-1].max(), width_s
    assert width_s[-1] < width_h[-1], (width_s[-1], width_h[-1])
    assert lo_s[-1] <= truth <= hi_s[-1], (lo_s[-1], hi_s[-1])
