"""Simulation-based calibration of the jury model's other variants (models/jury.md). Slow.

``test_jury_model_slow.py`` calibrates the default model and the item effect; here:

1. ``pool_judges=True`` (the judges' logit q's drawn around a common mean, per system with
   ``calibration="separate"``, so each system is an independent data set);
2. ``calibration="hierarchical"`` (logit q per judge and system drawn around a per-judge mean:
   the systems of one fit share those means, as the item-effect test's systems share b);
3. no labelled items at all (three judges identify the model; the default restriction that
   every judge is better than chance, q0 + q1 > 1, is part of the prior simulated from).

3 judges and 100 test items per data set (20 + 20 labelled items in 1 and 2), parameters
drawn from the default priors. Rank-uniformity level as in test_jury_model_slow.py: every
chi-square test must have p > 0.001 (fixed seeds).
"""

from __future__ import annotations

import numpy as np
import pytest
from sbc import run_sbc
from scipy.special import expit
from test_jury_model import simulate_jury
from test_jury_model_slow import SBC_CHAINS, SBC_DRAWS, SBC_THIN, SBC_TUNE, _check_sbc

import bayesjudge as bj
from bayesjudge.warnings import BayesJudgeWarning

J, N_TEST, LABELS = 3, 100, 20
PRIORS = bj.Priors()


def _logit_normal_q(rng, mean_shape, z_shape, name: str):
    """q = expit(mean + scale * z) with the default hyperpriors; returns q, mean, scale."""
    mu, sd = getattr(PRIORS, f"{name}_logit_mean")
    mean = rng.normal(mu, sd, size=mean_shape)
    scale = np.abs(rng.normal(0.0, getattr(PRIORS, f"{name}_logit_scale"), size=mean_shape))
    return expit(mean + scale * rng.normal(size=z_shape)), mean, scale


def _pooled_simulator(n_sets: int):
    def simulate(rng):
        theta = rng.beta(*PRIORS.theta, size=(n_sets, 1))
        truth = {"theta": theta}
        for name in ("q0", "q1"):
            # Per system and stratum: a judges' mean and scale; per judge a draw around them.
            q, mean, scale = _logit_normal_q(rng, (n_sets, 1), (J, n_sets, 1), name)
            truth |= {name: q, f"{name}_judges_mean": mean, f"{name}_judges_scale": scale}
        counts = simulate_jury(rng, theta, truth["q0"], truth["q1"], N_TEST, LABELS, LABELS)
        return counts, truth

    return simulate


def _hierarchical_simulator(n_sets: int):
    def simulate(rng):
        theta = rng.beta(*PRIORS.theta, size=(n_sets, 1))
        truth = {"theta": theta}
        for name in ("q0", "q1"):
            # Per judge and stratum: a logit mean and scale; per system a draw around them.
            q, mean, scale = _logit_normal_q(rng, (J, 1, 1), (J, n_sets, 1), name)
            truth |= {name: q, f"{name}_logit_mean": mean[:, 0], f"{name}_logit_scale": scale[:, 0]}
        counts = simulate_jury(rng, theta, truth["q0"], truth["q1"], N_TEST, LABELS, LABELS)
        return counts, truth

    return simulate


def _unlabelled_simulator(n_sets: int):
    def simulate(rng):
        theta = rng.beta(*PRIORS.theta, size=(n_sets, 1))
        q0 = rng.beta(*PRIORS.q0, size=(J, n_sets, 1))
        q1 = rng.beta(*PRIORS.q1, size=(J, n_sets, 1))
        worse = q0 + q1 <= 1
        while worse.any():  # the prior restricted to q0 + q1 > 1, by rejection
            q0[worse] = rng.beta(*PRIORS.q0, size=worse.sum())
            q1[worse] = rng.beta(*PRIORS.q1, size=worse.sum())
            worse = q0 + q1 <= 1
        counts = simulate_jury(rng, theta, q0, q1, N_TEST, 0, 0)
        return counts, {"theta": theta, "q0": q0, "q1": q1}

    return simulate


@pytest.mark.slow
def test_sbc_pooled_judges():
    names = ("theta", "q0", "q1", "q0_judges_mean", "q1_judges_scale")
    result = run_sbc(
        _pooled_simulator(10), {"calibration": "separate", "pool_judges": True}, names,
        n_fits=12, seed=2028, draws=SBC_DRAWS, tune=SBC_TUNE, chains=SBC_CHAINS, thin=SBC_THIN,
    )  # fmt: skip
    bins = {"theta": 10, "q0": 20, "q1": 20, "q0_judges_mean": 10, "q1_judges_scale": 10}
    _check_sbc(result, names, bins)


@pytest.mark.slow
def test_sbc_hierarchical_calibration():
    names = ("theta", "q0", "q1", "q0_logit_mean", "q1_logit_scale")
    result = run_sbc(
        _hierarchical_simulator(5), {"calibration": "hierarchical"}, names,
        n_fits=20, seed=2029, draws=SBC_DRAWS, tune=SBC_TUNE, chains=SBC_CHAINS, thin=SBC_THIN,
    )  # fmt: skip
    bins = {"theta": 10, "q0": 20, "q1": 20, "q0_logit_mean": 6, "q1_logit_scale": 6}
    _check_sbc(result, names, bins)


@pytest.mark.slow
def test_sbc_without_labelled_items():
    names = ("theta", "q0", "q1")
    with pytest.warns(BayesJudgeWarning, match="No labelled items"):  # said once per fit
        result = run_sbc(
            _unlabelled_simulator(10), {"calibration": "separate"}, names,
            n_fits=12, seed=2030, draws=SBC_DRAWS, tune=SBC_TUNE, chains=SBC_CHAINS,
            thin=SBC_THIN,
        )  # fmt: skip
    _check_sbc(result, names, {"theta": 10, "q0": 20, "q1": 20})
