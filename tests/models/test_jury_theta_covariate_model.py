"""The Bayesian covariate model with a truth that depends on item covariates: fast checks.

The compiled log-likelihood against the closed form's numpy likelihood
(``covariate_log_likelihood(..., theta_covariates=, theta_coef=)``, itself checked against
scipy.stats in tests/core/test_jury_theta_covariates.py) at random points, both designs and
several groups; θ (a Deterministic) against the mean of expit(α_g + δ · w_i) over the group's
test items. SBC: tests/models/test_jury_theta_covariate_model_slow.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pytensor.compile.mode import Mode
from scipy.special import expit

from bayesjudge.core.jury_covariates import covariate_log_likelihood
from bayesjudge.data.jury_items import JuryItems
from bayesjudge.models.jury_covariates import (
    build_jury_covariate_model,
    jury_covariate_config,
    standardised_covariates,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "references"))
from jury_covariate_simulation import simulate

JUDGES = np.array(["gpt", "claude", "llama"])
PY_MODE = Mode(linker="py", optimizer="fast_compile")


def theta_items(rng, systems=2, design=None, n_items=60) -> JuryItems:
    """Simulated rows with a per-verdict position and a per-item length difference."""
    item, judge, verdict, x, seen, _ = simulate(rng, n_items=n_items, labelled=15,
                                                both_orders=True)  # fmt: skip
    diff = rng.normal(50.0, 30.0, size=n_items)
    frame = pd.DataFrame({
        "item": item, "grader": JUDGES[judge], "judge": verdict, "position": x,
        "diff": diff[item], "system": [f"s{i % systems}" for i in item],
        "human": np.where(seen[item] >= 0, seen[item], np.nan),
    })  # fmt: skip
    items = JuryItems.from_frames(frame, judges="grader", item="item",
                                  covariates=["position", "diff"], system="system",
                                  theta_covariates=["diff"])  # fmt: skip
    return items if design is None else JuryItems(items.dataset.assign_attrs(design=design))


@pytest.mark.parametrize(("design", "systems"), [("random", 1), ("stratified", 2), ("random", 3)])
def test_log_likelihood_and_theta_match_the_closed_form(design, systems):
    rng = np.random.default_rng(21)
    items = theta_items(rng, systems, design)
    model = build_jury_covariate_model(items)
    assert {v.name for v in model.free_RVs} == {"theta_intercept", "theta_slope", "q0_logit",
                                                "q1_logit", "slope"}  # fmt: skip
    loglik = model.compile_fn(model.logp(vars=[model["loglik"]]), mode=PY_MODE)
    theta_fn = model.compile_fn(model.replace_rvs_by_values([model["theta"]])[0], mode=PY_MODE)
    ds = items.dataset
    xs, _, _ = standardised_covariates(items)
    config = jury_covariate_config(items)
    w = (items.theta_covariates() - config["theta_center"]) / np.asarray(config["theta_scale"])
    truth, group = ds["truth"].values.astype(int), items.group_index()
    for _ in range(3):
        point = model.initial_point()
        alpha = rng.normal(size=point["theta_intercept"].shape)
        delta = rng.normal(size=1)
        q0l, q1l = rng.normal(1.0, 1.0, size=(2, 3))
        slope = rng.normal(size=point["slope"].shape)
        point.update(theta_intercept=alpha, theta_slope=delta, q0_logit=q0l, q1_logit=q1l,
                     slope=slope)  # fmt: skip
        coef = np.concatenate([np.stack([-q0l, q1l], axis=1)[:, :, None], slope], axis=2)
        expected = covariate_log_likelihood(
            ds["row_item"].values, ds["row_judge"].values, ds["verdict"].values.astype(int),
            xs, truth, None, coef, group=group, design=design, theta_covariates=w,
            theta_coef=np.concatenate([alpha.ravel(), delta]),
        )  # fmt: skip
        assert loglik(point) == pytest.approx(expected, abs=1e-10, rel=0)
        prob = expit(alpha.ravel()[group] + w[:, 0] * delta[0])
        test = (truth < 0) | (design == "random")
        want = [prob[(group == g) & test].mean() for g in range(systems)]
        values = {k: point[k] for k in ("theta_intercept", "theta_slope")}
        np.testing.assert_allclose(theta_fn(values).ravel(), want, rtol=1e-12)


def test_config_and_dims():
    items = theta_items(np.random.default_rng(22))
    config = jury_covariate_config(items)
    diff = items.theta_covariates()[:, 0]
    assert config["theta_covariates"] == ["diff"]
    assert config["theta_center"] == pytest.approx([diff.mean()])
    assert config["theta_scale"] == pytest.approx([diff.std()])
    dims = build_jury_covariate_model(items).named_vars_to_dims
    assert dims["theta"] == dims["theta_intercept"] == ("system", "stratum")
    assert dims["theta_slope"] == ("theta_covariate",)
    assert dims["theta_weights"] == ("system", "stratum", "item")
