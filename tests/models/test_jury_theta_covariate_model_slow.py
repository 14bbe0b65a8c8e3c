"""SBC of the Bayesian covariate model whose truth depends on an item covariate (slow).

Simulation-based calibration (Talts et al. 2018; helpers in tests/references/sbc.py):
parameters drawn from the model's default prior (α ~ N(0, 1.5), δ ~ N(0, 1), logit q0, logit
q1 ~ N(1.5, 1.5) per judge, verdict slopes ~ N(0, 1)), data from its generative story (100
items, 3 judges, 20 labelled under the random design, one standardised item covariate w for
the truth and one standardised verdict covariate x), one fit each; the ranks of the true δ
and of the true θ (the mean of expit(α + δ w_i) over the items) among the posterior draws
must be uniform (χ² test, fixed seed).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from bayesjudge.data.jury_items import JuryItems
from bayesjudge.models.jury_covariates import fit_jury_covariates, load_jury_covariates
from bayesjudge.warnings import ConvergenceWarning

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "references"))
from sbc import rank_uniformity, ranks

pytestmark = pytest.mark.slow

JUDGES = np.array(["a", "b", "c"])
N_ITEMS, LABELLED, N_FITS = 100, 20, 120
DRAWS, TUNE, CHAINS, THIN, BINS = 200, 300, 2, 4, 10


def draw_and_simulate(rng) -> tuple[dict, JuryItems]:
    """Parameters from the prior and one data set (covariates standardised exactly)."""
    alpha, delta = rng.normal(0.0, 1.5), rng.normal(0.0, 1.0)
    q0l, q1l = rng.normal(1.5, 1.5, size=(2, 3))
    slope = rng.normal(0.0, 1.0, size=(3, 2))
    w = rng.normal(size=N_ITEMS)
    w = (w - w.mean()) / w.std()
    prob = expit(alpha + delta * w)
    truth = (rng.random(N_ITEMS) < prob).astype(int)
    item, judge = np.repeat(np.arange(N_ITEMS), 3), np.tile(np.arange(3), N_ITEMS)
    x = rng.normal(size=item.size)
    x = (x - x.mean()) / x.std()
    intercept = np.stack([-q0l, q1l], axis=1)[judge, truth[item]]
    verdict = rng.random(item.size) < expit(intercept + slope[judge, truth[item]] * x)
    frame = pd.DataFrame({
        "item": item, "grader": JUDGES[judge], "judge": verdict.astype(int), "x": x,
        "w": w[item], "human": np.where(item < LABELLED, truth[item], np.nan),
    })  # fmt: skip
    items = JuryItems.from_frames(frame, judges="grader", item="item", covariates="x",
                                  theta_covariates="w")  # fmt: skip
    return {"delta": delta, "theta": prob.mean()}, items


def test_simulation_based_calibration_of_delta_and_theta():
    rng = np.random.default_rng(20261128)
    delta_ranks, theta_ranks = [], []
    divergences = transitions = warned = 0
    start = time.perf_counter()
    for i in range(N_FITS):
        params, items = draw_and_simulate(rng)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            fit = fit_jury_covariates(
                items, draws=DRAWS, tune=TUNE, chains=CHAINS, random_seed=2000 + i
            )
        warned += sum(issubclass(w.category, ConvergenceWarning) for w in caught)
        delta = fit.posterior["theta_slope"].sel(theta_covariate="w")
        delta_ranks.append(ranks(delta, params["delta"], THIN))
        theta_ranks.append(ranks(fit.posterior["theta"].squeeze(), params["theta"], THIN))
        diag = fit.diagnostics()
        divergences += diag["divergences"]
        transitions += diag["draws"]
    n_draws = CHAINS * len(range(0, DRAWS, THIN))
    _, p_delta = rank_uniformity(np.concatenate(delta_ranks), n_draws, BINS)
    _, p_theta = rank_uniformity(np.concatenate(theta_ranks), n_draws, BINS)
    print(
        f"SBC: {N_FITS} fits in {time.perf_counter() - start:.0f} s; p(delta) = {p_delta:.3f}, "
        f"p(theta) = {p_theta:.3f}; divergences {divergences} of {transitions}; {warned} fits "
        f"warned"
    )
    # Two χ² tests at 0.005 each (family-wise 1 %); the seed is fixed.
    assert p_delta > 0.005 and p_theta > 0.005
    assert divergences <= 0.002 * transitions


def test_fit_summary_save_and_load(tmp_path):
    """One fit (100 items, δ = 1): summary has δ; a saved fit loads and rebuilds its model."""
    rng = np.random.default_rng(5)
    _, items = draw_and_simulate(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = fit_jury_covariates(items, draws=200, tune=300, chains=2, random_seed=3)
    s = fit.summary()
    assert s["theta_slope"].dims == ("theta_covariate",) and s.attrs["theta_covariates"] == ["w"]
    assert s["theta_slope_ci"].sel(ci_bound="lower") < s["theta_slope"]
    assert 0 < float(s["theta"].squeeze()) < 1
    loaded = load_jury_covariates(fit.save(tmp_path / "fit.nc"))
    assert loaded.items.theta_covariate_names == ["w"]
    assert {v.name for v in loaded.model.free_RVs} >= {"theta_intercept", "theta_slope"}
    np.testing.assert_array_equal(loaded.posterior["theta"].values, fit.posterior["theta"].values)
