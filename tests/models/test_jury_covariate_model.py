"""The Bayesian covariate model of several judges (models/jury-covariates.md): fast checks.

The compiled log-likelihood is checked against the closed form's numpy likelihood
(``bayesjudge.core.jury_covariates.covariate_log_likelihood``) at random points, for both
designs, several groups and the pooled slopes; the better-than-chance prior against
``scipy.stats.norm``. One fit (shared by the module: the nutpie compile dominates) of a large
simulated data set checks θ against the closed form, the summary, save/load. SBC and the
recovery of a position slope: tests/models/test_jury_covariate_model_slow.py.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from pymc.model.transform.conditioning import remove_value_transforms
from pytensor.compile.mode import Mode
from scipy import stats
from scipy.special import expit, logit

import bayesjudge as bj
from bayesjudge.core.jury_covariates import covariate_log_likelihood
from bayesjudge.data.jury_items import JuryItems
from bayesjudge.jury_estimate import jury_covariate_estimate
from bayesjudge.models.jury_covariates import (
    JuryCovariateFit,
    build_jury_covariate_model,
    fit_jury_covariates,
    jury_covariate_config,
    load_jury_covariates,
    standardised_covariates,
)
from bayesjudge.models.priors import Priors
from bayesjudge.warnings import BayesJudgeWarning, ConvergenceWarning

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "references"))
from jury_covariate_simulation import simulate

JUDGES = np.array(["gpt", "claude", "llama"])
# Python linker: the logp graphs compile in well under a second (the C linker takes seconds).
PY_MODE = Mode(linker="py", optimizer="fast_compile")


def to_items(item, judge, verdict, x, seen, systems=1, extra=None, design=None) -> JuryItems:
    """JuryItems of simulated rows; item i belongs to system i % systems."""
    frame = pd.DataFrame(
        {
            "item": item,
            "grader": JUDGES[judge],
            "judge": verdict,
            "position": x,
            "system": [f"s{i % systems}" for i in item],
            "human": np.where(seen[item] >= 0, seen[item], np.nan),
        }
    )
    names = ["position"]
    if extra is not None:
        frame["length"] = extra
        names.append("length")
    items = JuryItems.from_frames(
        frame, judges="grader", item="item", covariates=names, system="system"
    )
    if design is None:
        return items
    # One table with labels reads as the random design; declare the other for the likelihood.
    return JuryItems(items.dataset.assign_attrs(design=design))


def loglik_point(model, rng, n_groups):
    """A random point of the model (value-var space) and the matching θ, coef of the core."""
    point = model.initial_point()
    theta = rng.uniform(0.1, 0.9, size=n_groups)
    q0l, q1l = rng.normal(1.0, 1.0, size=(2, 3))
    slope_shape = point["slope" if "slope" in point else "slope_z"].shape
    slope = rng.normal(size=slope_shape)
    point["theta_logodds__"] = logit(theta).reshape(point["theta_logodds__"].shape)
    point["q0_logit"], point["q1_logit"] = q0l, q1l
    if "slope" in point:
        point["slope"] = slope
    else:  # pooled: slope = mean + scale * z
        mean = rng.normal(size=slope_shape[1:])
        scale = rng.uniform(0.2, 1.5, size=slope_shape[1:])
        point["slope_mean"], point["slope_scale_log__"], point["slope_z"] = (
            mean, np.log(scale), slope,
        )  # fmt: skip
        slope = mean + scale * slope
    coef = np.concatenate([np.stack([-q0l, q1l], axis=1)[:, :, None], slope], axis=2)
    return point, theta, coef


@pytest.mark.parametrize(
    ("design", "systems", "pool_judges", "extra"),
    [("random", 1, False, False), ("stratified", 2, False, True), ("random", 3, True, True)],
)
def test_log_likelihood_matches_the_closed_form(design, systems, pool_judges, extra):
    rng = np.random.default_rng(11)
    item, judge, verdict, x, seen, _ = simulate(rng, n_items=60, labelled=15, both_orders=True)
    length = rng.normal(3.0, 2.0, size=len(item)) if extra else None
    items = to_items(item, judge, verdict, x, seen, systems, length, design=design)
    model = build_jury_covariate_model(items, pool_judges=pool_judges)
    loglik = model.compile_fn(model.logp(vars=[model["loglik"]]), mode=PY_MODE)
    ds = items.dataset
    xs, _, _ = standardised_covariates(items)
    for _ in range(3):
        point, theta, coef = loglik_point(model, rng, systems)
        expected = covariate_log_likelihood(
            ds["row_item"].values, ds["row_judge"].values, ds["verdict"].values.astype(int),
            xs, ds["truth"].values.astype(int), theta, coef, group=items.group_index(),
            design=design,
        )  # fmt: skip
        assert loglik(point) == pytest.approx(expected, abs=1e-8, rel=0)


def test_better_than_chance_prior_is_the_truncated_product_of_normals():
    # Priors: logit q0 ~ N(1.5, 1.5), logit q1 ~ N(1.5, 1.5), restricted to their sum > 0 (the
    # normalising constant of the restriction is a constant: left out, as for any prior).
    rng = np.random.default_rng(3)
    item, judge, verdict, x, seen, _ = simulate(rng, n_items=30, labelled=0, both_orders=True)
    items = to_items(item, judge, verdict, x, seen)
    model = remove_value_transforms(build_jury_covariate_model(items))  # no labels: restricted
    names = ["q0_logit", "q1_logit", "judge_better_than_chance"]
    values = [model.rvs_to_values[model[n]] for n in names[:2]]
    prior = model.compile_fn(
        model.logp(vars=[model[n] for n in names]), inputs=values, mode=PY_MODE, point_fn=False
    )
    a, b = np.array([0.4, -0.2, 2.0]), np.array([0.3, 0.5, -1.0])  # every a + b > 0
    expected = stats.norm.logpdf(a, 1.5, 1.5).sum() + stats.norm.logpdf(b, 1.5, 1.5).sum()
    # PyMC's normal log-CDF (in the truncation and its normaliser) computes √2 in float32:
    # errors ~1e-8 per judge in log Φ (measured 1e-8 at these points), so 1e-7 for 3 judges.
    assert float(prior(a, b)) == pytest.approx(expected, abs=1e-7)
    assert float(prior(np.array([0.4, -0.6, 2.0]), b)) == -np.inf  # judge 1: a + b < 0


def test_dims_and_coords():
    rng = np.random.default_rng(5)
    item, judge, verdict, x, seen, _ = simulate(rng, n_items=40, labelled=10, both_orders=True)
    items = to_items(item, judge, verdict, x, seen, 2, rng.normal(size=len(item)))
    model = build_jury_covariate_model(items, pool_judges=True)
    dims = model.named_vars_to_dims
    assert dims["theta"] == ("system", "stratum")
    assert dims["q0_logit"] == dims["q1_logit"] == ("judge",)
    assert dims["slope"] == dims["slope_z"] == ("judge", "truth", "covariate")
    assert dims["slope_mean"] == dims["slope_scale"] == ("truth", "covariate")
    assert dims["coef"] == ("judge", "truth", "term")
    assert dims["design"] == ("row", "term") and dims["item_truth"] == ("item",)
    assert list(model.coords["term"]) == ["intercept", "position", "length"]
    assert list(model.coords["judge"]) == sorted(JUDGES.tolist())
    assert list(model.coords["system"]) == ["s0", "s1"]
    assert len(model.coords["row"]) == 240 and len(model.coords["item"]) == 40
    free = {v.name for v in model.free_RVs}
    assert free == {"theta", "q0_logit", "q1_logit", "slope_mean", "slope_scale", "slope_z"}
    # The slopes' prior: Normal(0, 1) unpooled.
    plain = build_jury_covariate_model(items)
    assert {v.name for v in plain.free_RVs} == {"theta", "q0_logit", "q1_logit", "slope"}


# --------------------------------------------------------------------------------- one fit

# 400 items in 2 systems, 3 judges each grading both orders (2400 rows), 40 labelled; judge
# 0 favours the answer shown first when the truth is 0 (slope 1.2 per unit, 0.6 per SD).
COEF = np.array([[[-1.4, 1.2], [2.2, 0.0]], [[-1.1, 0.0], [1.4, 0.0]], [[-0.9, 0.0], [1.7, 0.0]]])


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(2026)
    item, judge, verdict, x, seen, _ = simulate(
        rng, n_items=400, coef=COEF, labelled=40, both_orders=True
    )
    return to_items(item, judge, verdict, x, seen, systems=2)


# The tests of one fit (a cold nutpie compile, about a minute on CI) run in the slow tier,
# which keeps `make test` within its budget; the likelihood checks above stay fast.
@pytest.fixture(scope="module")
def fitted(data):
    fit = bj.fit(data, draws=500, tune=500, chains=2, random_seed=7)  # dispatches JuryItems
    assert isinstance(fit, JuryCovariateFit)
    return fit


@pytest.mark.slow
def test_posterior_of_theta_agrees_with_the_closed_form(data, fitted):
    # Posterior mean − ML estimate is O(1/n) while the posterior sd is O(1/√n): with 200
    # items per group they differ by a small fraction of the sd (0.3 sd), plus Monte Carlo
    # error (4 MCSE). The 95 % ETI and the Wald interval agree in width to 20 %.
    closed = jury_covariate_estimate(data)
    summary = fitted.summary()
    mcse = fitted.posterior["theta"].std(("chain", "draw")) / np.sqrt(summary["theta_ess_bulk"])
    diff = np.abs(summary["theta"] - closed["estimate"])
    assert (diff < 0.3 * summary["theta_sd"] + 4 * mcse).all(), (diff.values, summary)
    width = summary["theta_ci"].diff("ci_bound").squeeze("ci_bound")
    wald = closed["ci"].diff("ci_bound").squeeze("ci_bound")
    assert ((width / wald > 0.8) & (width / wald < 1.2)).all(), (width.values, wald.values)
    # The position slope of judge 0 under truth 0 (0.6 per SD) is seen by both.
    coef = summary["coef"].sel(judge="gpt", truth=0, term="position")
    assert float(coef) == pytest.approx(
        float(closed["coef"].sel(judge="gpt", truth=0, term="position")),
        abs=0.3 * float(summary["coef_sd"].sel(judge="gpt", truth=0, term="position")) + 0.02,
    )


@pytest.mark.slow
def test_summary_shapes_and_q_at_the_covariate_levels(data, fitted):
    s = fitted.summary(ci_prob=0.9)
    assert s.attrs["ci_kind"] == "eti" and s.attrs["ci_prob"] == 0.9
    assert s["theta_ci"].sizes == {"ci_bound": 2, "system": 2, "stratum": 1}
    assert s["coef"].sizes == {"judge": 3, "truth": 2, "term": 2}
    assert s["q0"].sizes == {"judge": 3, "covariate": 1, "level": 2}
    lo, hi = s["theta_ci"].sel(ci_bound="lower"), s["theta_ci"].sel(ci_bound="upper")
    assert ((lo < s["theta"]) & (s["theta"] < hi)).all()
    assert s["covariate_low"].item() == -0.5 and s["covariate_high"].item() == 0.5
    # q0 of judge "gpt" at position +0.5 from a draw's coefficients by hand: standardised
    # x = (0.5 − 0) / 0.5 = 1.
    draw = fitted.posterior["coef"].isel(chain=0, draw=3).sel(judge="gpt", truth=0).values
    q = fitted.q_draws()["q0"].isel(chain=0, draw=3).sel(judge="gpt", level="high").item()
    assert q == pytest.approx(expit(-(draw[0] + draw[1] * 1.0)), abs=1e-12)
    # Shown first (position +0.5) the judge says correct more often on incorrect answers.
    gpt = s["q0"].sel(judge="gpt", covariate="position")
    assert float(gpt.sel(level="high")) < float(gpt.sel(level="low"))
    assert (s["theta_r_hat"] < 1.02).all() and fitted.diagnostics()["divergences"] == 0


@pytest.mark.slow
def test_save_and_load_round_trip(fitted, tmp_path):
    path = fitted.save(tmp_path / "fit.nc")
    loaded = load_jury_covariates(path)
    assert isinstance(loaded, JuryCovariateFit)
    assert isinstance(bj.load(path), JuryCovariateFit)  # bj.load dispatches on the format
    assert loaded.config == fitted.config
    xr.testing.assert_allclose(loaded.summary(), fitted.summary())
    assert loaded.items.sizes == fitted.items.sizes
    assert loaded.model.named_vars_to_dims["coef"] == ("judge", "truth", "term")
    # A changed draw is refused.
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    tree["posterior"]["theta"] = tree["posterior"]["theta"] + 0.01
    tree.to_netcdf(tmp_path / "changed.nc", engine="h5netcdf")
    with pytest.raises(ValueError, match="changed after it was saved"):
        load_jury_covariates(tmp_path / "changed.nc")
    (tmp_path / "junk.nc").write_text("not a fit")
    with pytest.raises(ValueError, match="cannot be loaded"):
        load_jury_covariates(tmp_path / "junk.nc")


@pytest.mark.slow
def test_refit_of_the_same_structure_is_reproducible(data, fitted):
    # The cached compiled model gets the data again (with_data): short runs, same seed.
    runs = []
    for seed in (3, 3, 4):
        with pytest.warns(ConvergenceWarning):
            runs.append(fit_jury_covariates(data, draws=30, tune=30, chains=1, random_seed=seed))
    theta = [r.posterior["theta"] for r in runs]
    xr.testing.assert_equal(theta[0], theta[1])
    assert not theta[0].equals(theta[2])


# ------------------------------------------------------------------------------- bad input


def test_bad_input_is_refused_with_advice(data):
    with pytest.raises(ValueError, match=r"items must be a JuryItems .*fit_jury"):
        fit_jury_covariates(pd.DataFrame({"a": [1]}))
    bare = JuryItems(data.dataset.isel(covariate=[]))
    with pytest.raises(ValueError, match=r"no covariates.*items\.counts\(\).*fit_jury"):
        fit_jury_covariates(bare)
    item, judge, verdict, x, seen, _ = simulate(np.random.default_rng(1), 30, labelled=0)
    keep = judge < 2
    two = to_items(item[keep], judge[keep], verdict[keep], x[keep], seen)
    with pytest.raises(ValueError, match="2 judge\\(s\\) and no labelled items"):
        jury_covariate_config(two)
    with pytest.raises(ValueError, match="pool_judges must be True or False; got 'yes'"):
        fit_jury_covariates(data, pool_judges="yes")
    with pytest.raises(ValueError, match=r"priors must be a bayesjudge\.Priors"):
        fit_jury_covariates(data, priors={"theta": (1, 1)})
    with pytest.raises(ValueError, match="draws must be an integer >= 1; got 0"):
        fit_jury_covariates(data, draws=0)
    with pytest.raises(ValueError, match="random_seed must be a non-negative int"):
        fit_jury_covariates(data, random_seed=-1)
    # bj.fit hands JuryItems to the covariate model and refuses the other models' options
    with pytest.raises(ValueError, match=r"calibration='separate'.*JuryItems"):
        bj.fit(data, calibration="separate")
    with pytest.raises(ValueError, match=r"dependence='item'.*JuryItems"):
        bj.fit(data, dependence="item")


def test_config_defaults_and_unlabelled_restriction(data):
    config = jury_covariate_config(data, priors=Priors(theta=(2, 2)))
    assert config["judge_better_than_chance"] is False  # 40 labelled items
    assert config["priors"]["theta"] == [2.0, 2.0]
    assert config["center"] == [0.0] and config["scale"] == [0.5]
    unlabelled = JuryItems(data.dataset.assign(truth=data.dataset["truth"] * 0 - 1))
    assert jury_covariate_config(unlabelled)["judge_better_than_chance"] is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(BayesJudgeWarning, match="No labelled items"):
            fit_jury_covariates(unlabelled, draws=10, tune=10, chains=1, random_seed=1)
