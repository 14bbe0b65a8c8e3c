"""Simulation-based calibration (SBC) helpers for the Bayesian models (Talts et al. 2018).

SBC draws parameters from the prior, simulates data from the model's generative process, fits
the model and records the rank of each true value among L (thinned) posterior draws. If the
sampler returns the exact posterior, every rank is uniform on {0, ..., L}; a sampler or model
bug shows as a non-uniform rank histogram.

Many simulated data sets share one fit: each is a *system* (separate model: every group has
its own θ, q0, q1 and calibration counts, so the systems' posteriors are independent) or a
*system* with its own strata (hierarchical model with ``pool_over="stratum"``: each system has
its own population mean and scale). The labels and model configuration stay fixed across fits,
so the compiled nutpie model is reused and every refit only swaps the data.

Reference: S. Talts, M. Betancourt, D. Simpson, A. Vehtari, A. Gelman, "Validating Bayesian
Inference Algorithms with Simulation-Based Calibration", arXiv:1804.06788 (2018), Algorithm 1.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit
from scipy.stats import chisquare

import bayesjudge as bj
from bayesjudge.warnings import ConvergenceWarning


def draw_separate_prior(priors: bj.Priors, shape, rng) -> dict[str, np.ndarray]:
    """θ, q0, q1 drawn from the Beta priors of the separate model, one per group."""
    return {name: rng.beta(*getattr(priors, name), size=shape) for name in ("theta", "q0", "q1")}


def draw_hierarchical_prior(priors: bj.Priors, n_sets: int, n_groups: int, rng) -> dict:
    """One hierarchy per data set (system): θ ~ Beta, logit q ~ Normal(mu, sigma) over groups.

    Mirrors ``build._hierarchical_q``: mu ~ Normal(mean, sd), sigma ~ HalfNormal(tau),
    z ~ Normal(0, 1) per group, q = invlogit(mu + sigma z); mu and sigma have dim system
    (``pool_over="stratum"``), z has dims (system, stratum).
    """
    out = {"theta": rng.beta(*priors.theta, size=(n_sets, n_groups))}
    for name in ("q0", "q1"):
        mean, sd = getattr(priors, f"{name}_logit_mean")
        mu = rng.normal(mean, sd, size=n_sets)
        sigma = np.abs(rng.normal(0.0, getattr(priors, f"{name}_logit_scale"), size=n_sets))
        z = rng.normal(size=(n_sets, n_groups))
        out[f"{name}_logit_mean"] = mu
        out[f"{name}_logit_scale"] = sigma
        out[name] = expit(mu[:, None] + sigma[:, None] * z)
    return out


def ranks(draws, truth: np.ndarray, thin: int) -> np.ndarray:
    """Rank of ``truth`` among the thinned posterior draws: #{draws < truth} in {0, ..., L}.

    ``draws`` is a DataArray with leading dims (chain, draw) and the parameter's dims after;
    every chain is thinned to every ``thin``-th draw, so L = chains * ceil(draws / thin).
    """
    values = draws.transpose("chain", "draw", ...).values[:, ::thin]
    values = values.reshape(-1, *values.shape[2:])
    truth = np.broadcast_to(truth, values.shape[1:])
    return (values < truth[None]).sum(0).ravel()


def rank_uniformity(rank_values: np.ndarray, n_draws: int, bins: int) -> tuple[float, float]:
    """Chi-square test that ranks are uniform on {0, ..., n_draws}, in ``bins`` groups.

    Bin b holds the ranks r with floor(r * bins / (n_draws + 1)) = b; its expected share is
    the number of rank values it holds divided by n_draws + 1 (exact even when n_draws + 1 is
    not a multiple of ``bins``). Returns (statistic, p-value) with bins - 1 degrees of freedom.
    """
    support = np.arange(n_draws + 1)
    which = support * bins // (n_draws + 1)
    expected_share = np.bincount(which, minlength=bins) / (n_draws + 1)
    observed = np.bincount(rank_values * bins // (n_draws + 1), minlength=bins)
    assert observed.sum() == rank_values.size
    res = chisquare(observed, expected_share * rank_values.size)
    return float(res.statistic), float(res.pvalue)


@dataclass
class SBCResult:
    """Ranks per parameter and the sampler's health over all fits of one SBC study."""

    n_draws: int  # L, the number of thinned posterior draws each rank is taken among
    ranks: dict[str, list[np.ndarray]] = field(default_factory=dict)
    features: list[np.ndarray] = field(default_factory=list)  # per group, from the data only
    divergences: int = 0
    transitions: int = 0
    convergence_warnings: int = 0
    r_hat_max: float = 0.0
    ess_bulk_min: float = np.inf
    fits: int = 0
    seconds: float = 0.0

    def rank_array(self, name: str, mask: np.ndarray | None = None) -> np.ndarray:
        values = np.concatenate(self.ranks[name])
        return values if mask is None else values[mask]

    def feature_array(self) -> np.ndarray:
        return np.concatenate(self.features)

    def uniformity(self, name: str, bins: int, mask=None) -> tuple[float, float]:
        return rank_uniformity(self.rank_array(name, mask), self.n_draws, bins)

    def health(self) -> str:
        return (
            f"{self.fits} fits in {self.seconds:.1f} s; divergences {self.divergences} of "
            f"{self.transitions} transitions; {self.convergence_warnings} fits with a "
            f"ConvergenceWarning; max r_hat {self.r_hat_max:.3f}; min bulk ESS "
            f"{self.ess_bulk_min:.0f}"
        )


def run_sbc(
    simulate,
    fit_kwargs: dict,
    names: tuple[str, ...],
    *,
    n_fits: int,
    seed: int,
    draws: int,
    tune: int,
    chains: int,
    thin: int,
    feature=None,
) -> SBCResult:
    """Run ``n_fits`` SBC fits; ``simulate(rng)`` returns (JudgeCounts, truths by name).

    ``feature(counts)``, optional, returns one number per (system, stratum) group computed from
    the data alone (e.g. the observed Youden's J). Ranks are uniform conditional on the data,
    so selecting groups by such a feature keeps them uniform (selecting by the true values
    would not); :meth:`SBCResult.feature_array` lines up with the group-level ranks.

    ConvergenceWarnings are recorded (not raised): SBC judges the sampler by its ranks, and the
    health numbers (divergences, r_hat, ESS, warnings) are returned for the test to check and
    report. Every other warning keeps the session's filters (an error under pytest).
    """
    rng = np.random.default_rng(seed)
    n_draws = chains * len(range(0, draws, thin))
    result = SBCResult(n_draws=n_draws, ranks={name: [] for name in names})
    start = time.perf_counter()
    for i in range(n_fits):
        counts, truth = simulate(rng)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            fit = bj.fit(
                counts,
                draws=draws,
                tune=tune,
                chains=chains,
                random_seed=seed * 1000 + i,
                **fit_kwargs,
            )
        result.convergence_warnings += sum(
            issubclass(w.category, ConvergenceWarning) for w in caught
        )
        for w in caught:  # anything else is unexpected: re-raise it under the session filters
            if not issubclass(w.category, ConvergenceWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        for name in names:
            result.ranks[name].append(ranks(fit.posterior[name], truth[name], thin))
        diag = fit.diagnostics()
        result.divergences += diag["divergences"]
        result.transitions += diag["draws"]
        result.r_hat_max = max(result.r_hat_max, diag["r_hat_max"])
        result.ess_bulk_min = min(result.ess_bulk_min, diag["ess_bulk_min"])
        if feature is not None:
            result.features.append(np.asarray(feature(counts), dtype=float).ravel())
        result.fits += 1
    result.seconds = time.perf_counter() - start
    return result
