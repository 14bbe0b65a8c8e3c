"""The random labelling design in the Bayesian models: the truth counts as data (fast tests).

Under the random design (humans label a random subset of the judged items) the number of
labelled items that are truly correct is m1 ~ Binomial(m0 + m1, θ). Every model adds it as the
observed ``truth``; the rest of the likelihood is the stratified design's. So the difference of
the log densities of the two designs' models at one point is exactly Σ_g log Bin(m1_g |
m0_g + m1_g, θ_g), written here with scipy.stats. The logp functions are compiled with
``mode="FAST_COMPILE"`` (no C or numba compile); no test samples by MCMC.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr
from scipy import special, stats

import bayesjudge as bj
from bayesjudge.models.build import build_from_config, model_config, paired_cells
from bayesjudge.models.fit import TEST_SET_VARS, fit, load, prior_predictive

RTOL = 1e-10
MODE = "FAST_COMPILE"
SYSTEMS = ["a", "b"]
STRATA = ["x", "y", "z"]
N = np.array([[120, 200, 0], [50, 61, 300]])
K = np.array([[40, 150, 0], [20, 30, 290]])
# One group without labelled items (m0 + m1 = 0): its truth counts contribute nothing.
M0 = np.array([[10, 20, 0], [30, 41, 5]])
TN = np.array([[7, 15, 0], [20, 30, 5]])
M1 = np.array([[12, 25, 0], [33, 40, 60]])
TP = np.array([[9, 18, 0], [25, 35, 59]])
PRIORS = bj.Priors(theta=(2.1, 4.9), q0=(6.2, 2.1), q1=(2.9, 1.3))


def _counts(design, **extra):
    return bj.JudgeCounts.from_counts(
        n=N, k=K, m0=M0, tn=TN, m1=M1, tp=TP, system=SYSTEMS, stratum=STRATA, design=design,
        **extra,
    )  # fmt: skip


def _logp_pair(options, counts_random, counts_stratified, seed):
    """logp of the random and the stratified design's model at one random point; the point."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bj.warnings.BayesJudgeWarning)
        random = bj.build_model(counts_random, **options)
        stratified = bj.build_model(counts_stratified, **options)
    assert "truth" in random.named_vars and "truth" not in stratified.named_vars
    point = random.initial_point()
    rng = np.random.default_rng(seed)
    point = {name: value + rng.normal(0, 0.7, np.shape(value)) for name, value in point.items()}
    values = [m.compile_logp(jacobian=False, mode=MODE)(point) for m in (random, stratified)]
    return values, _evaluate(random, "theta", point), random, point


def _evaluate(model, name, point):
    """The value of a model variable at a point of the value space."""
    (graph,) = model.replace_rvs_by_values([model[name]])
    fn = model.compile_fn(
        graph, inputs=model.value_vars, mode=MODE, point_fn=True, on_unused_input="ignore"
    )
    return np.asarray(fn(point))


# ----------------------------------------------------------------------------- likelihood


@pytest.mark.parametrize(
    "options",
    [
        {"priors": PRIORS},
        {"calibration": "shared", "pool_over": "system", "priors": PRIORS},
        {"calibration": "hierarchical"},
        {"aggregate": {"x": 0.2, "y": 0.3, "z": 0.5}, "priors": PRIORS},
        {"aggregate": "dirichlet", "priors": PRIORS},
    ],
    ids=["separate", "shared", "hierarchical", "stratified-weights", "stratified-dirichlet"],
)
def test_truth_counts_add_a_binomial_per_group(options):
    (lp_random, lp_stratified), theta, _, _ = _logp_pair(
        options, _counts("random"), _counts("stratified"), seed=1
    )
    # Group (a, z) has m0 + m1 = 0: logpmf(0 | 0, θ) = 0.
    expected = stats.binom.logpmf(M1, M0 + M1, theta).sum()
    assert np.isfinite(expected) and expected < -10
    np.testing.assert_allclose(lp_random - lp_stratified, expected, rtol=RTOL)


@pytest.mark.filterwarnings("ignore::bayesjudge.warnings.SmallSampleWarning")
def test_random_design_logp_equals_scipy():
    """The whole log density of the separate model, random design, written with scipy."""
    model = bj.build_model(_counts("random"), priors=PRIORS)
    rng = np.random.default_rng(3)
    theta, q0, q1 = (rng.uniform(0.05, 0.95, N.shape) for _ in range(3))
    point = {
        f"{name}_logodds__": special.logit(value)
        for name, value in (("theta", theta), ("q0", q0), ("q1", q1))
    }
    p = theta * q1 + (1 - theta) * (1 - q0)
    expected = (
        stats.binom.logpmf(K, N, p).sum()
        + stats.binom.logpmf(TN, M0, q0).sum()
        + stats.binom.logpmf(TP, M1, q1).sum()
        + stats.binom.logpmf(M1, M0 + M1, theta).sum()
        + stats.beta.logpdf(theta, *PRIORS.theta).sum()
        + stats.beta.logpdf(q0, *PRIORS.q0).sum()
        + stats.beta.logpdf(q1, *PRIORS.q1).sum()
    )
    logp = model.compile_logp(jacobian=False, mode=MODE)(point)
    np.testing.assert_allclose(logp, expected, rtol=RTOL)


def test_shared_calibration_set_informs_the_n_weighted_mean_of_theta():
    """One labelled set attached to every system is taken once: m1 ~ Bin(L, Σ_g w_g θ_g)."""
    n = np.array([[100, 40], [300, 10]])
    k = np.array([[70, 20], [150, 5]])
    tests = bj.JudgeCounts.from_counts(n=n, k=k, system=SYSTEMS, stratum=["x", "y"])
    cal_m0, cal_tn, cal_m1, cal_tp = [30, 12], [24, 10], [50, 7], [45, 6]
    calibration = {"m0": cal_m0, "tn": cal_tn, "m1": cal_m1, "tp": cal_tp}
    random, stratified = (
        tests.with_calibration_from(
            bj.JudgeCounts.from_counts(**calibration, stratum=["x", "y"], design=design)
        )
        for design in ("random", "stratified")
    )
    assert random.calibration_shared_over == ("system",)
    options = {"calibration": "shared", "pool_over": "system", "priors": PRIORS}
    (lp_random, lp_stratified), theta, model, _ = _logp_pair(options, random, stratified, 5)
    assert model.named_vars_to_dims["truth"] == ("stratum",)
    weights = n / n.sum(0, keepdims=True)
    theta_bar = (weights * theta).sum(0)
    expected = stats.binom.logpmf(cal_m1, np.add(cal_m0, cal_m1), theta_bar).sum()
    np.testing.assert_allclose(lp_random - lp_stratified, expected, rtol=RTOL)


def test_paired_model_truth_counts_use_the_dirichlet_theta():
    systems, strata = ["a", "b"], ["x", "y"]
    labels, matrix = paired_cells(2)
    joint = np.array([[30, 5, 8, 40], [12, 3, 4, 20]])
    unshared_n, unshared_k = np.array([[5, 0], [2, 3]]), np.array([[3, 0], [1, 2]])
    n, k = joint.sum(1)[None, :] + unshared_n, (joint @ matrix).T + unshared_k
    cal = {
        "m0": [[20, 10], [15, 12]], "tn": [[16, 8], [12, 9]],
        "m1": [[25, 30], [18, 20]], "tp": [[22, 27], [15, 17]],
    }  # fmt: skip
    table = xr.DataArray(joint, dims=("stratum", "pattern"),
                         coords={"stratum": strata, "pattern": labels})  # fmt: skip
    random, stratified = (
        bj.JudgeCounts.from_counts(
            n=n, k=k, **cal, system=systems, stratum=strata, joint=table, design=design
        )
        for design in ("random", "stratified")
    )
    (lp_random, lp_stratified), theta, model, point = _logp_pair(
        {"paired": True, "priors": PRIORS}, random, stratified, 7
    )
    # θ_s = Σ_t π_t t_s from the Dirichlet cells at this point.
    pi = _evaluate(model, "joint_theta", point)
    np.testing.assert_allclose(theta, (pi @ matrix).T, rtol=RTOL)
    expected = stats.binom.logpmf(cal["m1"], np.add(cal["m0"], cal["m1"]), theta).sum()
    np.testing.assert_allclose(lp_random - lp_stratified, expected, rtol=RTOL)


# ----------------------------------------------------------------------------- configuration


@pytest.mark.filterwarnings("ignore::bayesjudge.warnings.SmallSampleWarning")
def test_design_is_part_of_the_model_configuration():
    assert model_config()["design"] == "stratified"
    assert model_config(design="random")["design"] == "random"
    with pytest.raises(ValueError, match="design must be one of"):
        model_config(design="stratifed")
    with pytest.raises(ValueError, match=r"design='random' but the counts .*'stratified'"):
        build_from_config(_counts("stratified"), model_config(design="random"))
    # A configuration saved before the design existed builds the stratified design's model.
    old = {k: v for k, v in model_config().items() if k != "design"}
    assert "truth" not in build_from_config(_counts("stratified"), old).named_vars


def test_prior_predictive_draws_the_truth_counts():
    counts = _counts("random")
    prior = prior_predictive(counts, draws=300, random_seed=4)
    truth = prior["prior_predictive"].dataset["truth"]
    assert truth.dims == ("chain", "draw", "system", "stratum")
    labelled = xr.DataArray(M0 + M1, dims=("system", "stratum"))
    assert bool((truth <= labelled).all()) and bool((truth >= 0).all())
    assert bool((truth.sel(system="a", stratum="z") == 0).all())  # no labelled items
    # Mean of Bin(L, θ), θ ~ Beta(1, 1): L / 2, within 4 standard errors of 300 draws
    # (Var[Bin(L, U)] = L E[U(1 − U)] + L² Var[U] = L / 6 + L² / 12 = L (L + 2) / 12).
    mean = truth.mean(("chain", "draw")).values
    se = np.sqrt((M0 + M1) * (M0 + M1 + 2) / 12 / 300)
    assert np.all(np.abs(mean - (M0 + M1) / 2) <= 4 * se + 1e-12)
    assert prior.attrs["design"] == "random"
    assert "truth" in prior["observed_data"].dataset
    assert (
        "truth"
        not in prior_predictive(_counts("stratified"), draws=5, random_seed=4)[
            "prior_predictive"
        ].dataset
    )


# ----------------------------------------------------------------------------- estimand


@pytest.mark.parametrize("estimand", ["sample", "test set", None, 1])
def test_estimand_must_be_named(estimand):
    with pytest.raises(ValueError, match=r"estimand must be one of \['population', 'test-set'\]"):
        fit(_counts("random"), estimand=estimand, method="exact")


def test_test_set_theta_is_undefined_with_a_shared_random_calibration_set():
    tests = bj.JudgeCounts.from_counts(n=[100, 80], k=[70, 50], system=SYSTEMS)
    cal = bj.JudgeCounts.from_counts(m0=40, tn=30, m1=60, tp=54, design="random")
    counts = tests.with_calibration_from(cal)
    with pytest.raises(ValueError, match=r"estimand='test-set' is not defined.*\['system'\]"):
        fit(counts, calibration="shared", estimand="test-set")


ONE = {"n": 900, "k": 520, "m0": 40, "tn": 33, "m1": 60, "tp": 54}


@pytest.fixture(scope="module")
def test_set_fit():
    counts = bj.JudgeCounts.from_counts(**ONE, system=SYSTEMS[:1], design="random")
    return fit(counts, method="exact", estimand="test-set", draws=1000, chains=2, random_seed=9)


def test_theta_test_is_the_known_truth_plus_the_predicted_unlabelled(test_set_fit):
    post = test_set_fit.posterior
    theta, q1, p = (post[v].values.ravel() for v in ("theta", "q1", "p"))
    n, k, m0, m1 = ONE["n"], ONE["k"], ONE["m0"], ONE["m1"]
    size = n + m0 + m1
    draws = post["theta_test"].values.ravel()
    # Every draw is (m1 + T_u) / N with a whole T_u in [0, n].
    t_u = draws * size - m1
    np.testing.assert_allclose(t_u, np.round(t_u), atol=1e-8)
    assert t_u.min() >= 0 and t_u.max() <= n
    # E[T_u | θ, q0, q1] = k θ q1 / p + (n − k) θ (1 − q1) / (1 − p); the binomial noise
    # around it has variance Σ n π (1 − π): the mean over draws within 4 standard errors.
    a, b = theta * q1 / p, theta * (1 - q1) / (1 - p)
    expected = (m1 + k * a + (n - k) * b) / size
    noise = np.sqrt((k * a * (1 - a) + (n - k) * b * (1 - b)).mean() / draws.size) / size
    assert abs(draws.mean() - expected.mean()) < 4 * noise
    # The test-set θ is narrower than θ: the labelled items' truth is known.
    assert draws.std() < theta.std()


def test_test_set_fit_reports_theta_test(test_set_fit, tmp_path):
    result = test_set_fit
    assert result.theta_var == "theta_test"
    assert {"theta", "theta_test"} <= set(result.posterior.data_vars)
    table = result.summary()
    assert table["variable"].tolist()[0] == "theta_test" and "theta" not in set(table["variable"])
    for attrs in (table.attrs, result.tree.attrs, result.posterior.attrs):
        assert attrs["design"] == "random" and attrs["estimand"] == "test-set"
    assert result.summary(var_names="theta")["variable"].tolist() == ["theta"]
    check = result.ppc(random_seed=2)
    assert "truth" in check.replicated and "truth" in check.p_value
    truth = check.replicated["truth"]
    assert bool((truth <= ONE["m0"] + ONE["m1"]).all())
    path = result.save(tmp_path / "fit.nc")
    loaded = load(path)
    assert loaded.design == "random" and loaded.estimand == "test-set"
    assert loaded.counts.design == "random"
    assert loaded.config == result.config
    assert set(TEST_SET_VARS) & set(loaded.posterior.data_vars) == {"theta_test"}
    xr.testing.assert_equal(loaded.posterior["theta_test"], result.posterior["theta_test"])
    assert "design='random' estimand='test-set'" in repr(loaded)


def test_theta_test_is_seeded():
    counts = bj.JudgeCounts.from_counts(**ONE, design="stratified")
    first, again = (
        fit(counts, method="exact", estimand="test-set", draws=200, chains=1, random_seed=5)
        for _ in range(2)
    )
    xr.testing.assert_equal(first.posterior["theta_test"], again.posterior["theta_test"])
    # Stratified design: the share truly correct among the n test items, T / n.
    t = first.posterior["theta_test"].values * ONE["n"]
    np.testing.assert_allclose(t, np.round(t), atol=1e-8)
    assert first.summary().attrs["design"] == "stratified"


def test_compare_uses_theta_test_and_theta_total_test():
    counts = bj.JudgeCounts.from_counts(
        n=[[300, 200], [250, 100]], k=[[200, 90], [150, 60]], m0=[[30, 20], [25, 30]],
        tn=[[25, 15], [20, 26]], m1=[[40, 35], [30, 20]], tp=[[36, 30], [27, 17]],
        system=SYSTEMS, stratum=["x", "y"], design="random",
    )  # fmt: skip
    result = fit(counts, method="exact", estimand="test-set", draws=300, chains=1, random_seed=2)
    compared = result.compare()
    assert compared.attrs["var"] == "theta_test" and compared.attrs["design"] == "random"
    total = result.posterior["theta_total_test"]
    assert total.dims == ("chain", "draw", "system")
    # θ_total_test = all truly correct over all items, from the per-stratum θ_test.
    size = (counts.n + counts.m0 + counts.m1).values
    by_stratum = (result.posterior["theta_test"] * size).sum("stratum") / size.sum(1)
    xr.testing.assert_allclose(total, by_stratum.transpose(*total.dims))
    assert "theta_total_test" in set(result.summary()["variable"])


def test_ppc_plot_checks_the_truth_counts_in_a_fourth_panel():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = bj.JudgeCounts.from_counts(
        n=[300, 200], k=[150, 90], m0=[20, 30], tn=[15, 24], m1=[30, 20], tp=[27, 17],
        system=["a", "b"], design="random",
    )  # fmt: skip
    check = fit(counts, method="exact", random_seed=1).ppc(random_seed=2)
    axes = check.plot()
    assert axes[-1].get_title() == "labelled truly correct, m1 / (m0 + m1)"
    # The observed dots are m1 / (m0 + m1) per system: 30 / 50 and 20 / 50.
    dots = np.concatenate([line.get_ydata() for line in axes[-1].lines if line.get_marker() == "o"])
    np.testing.assert_allclose(np.sort(dots), [0.4, 0.6])
    _, three = plt.subplots(1, 3)
    with pytest.raises(ValueError, match=r"plot_ppc needs 4 axes \(for k, tn, tp, truth\)"):
        check.plot(ax=three)
    plt.close("all")
