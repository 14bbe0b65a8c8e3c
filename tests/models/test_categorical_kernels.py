"""The hand-written kernels of the free-confusion K-category model (categorical_numba).

The PyMC model is the definition; the kernels must equal it exactly:

* log density and gradient equal PyMC's ``model.compile_logp()`` / ``compile_dlogp()`` (the
  unconstrained space, transforms and Jacobians included) at random points, for every
  calibration model and pooling, both labelling designs, K = 2, 3 and 4, non-default
  priors read from :class:`CategoricalPriors`, to rtol 1e-10 (no sampling; PyTensor in
  ``mode="FAST_COMPILE"``);
* the expanded posterior variables (θ, the confusion, p, σ, the score) equal PyMC's
  ``model.unobserved_value_vars`` at the same points;
* (the whole cross product of K × calibration × pooling × design in the slow tier)
* the free variables' names, shapes and dims are the model's; the start is PyMC's support
  point plus U(−1, 1) jitter;
* ``fit_categorical`` samples the free confusion through the kernels, reproducibly by seed.

The posterior of the kernel path against PyTensor's compiled graph (same model, two
samplers) is in the slow file.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bayesjudge.data import CategoricalCounts
from bayesjudge.models import categorical as cm
from bayesjudge.models import categorical_numba as cn

RTOL = 1e-10
MODE = "FAST_COMPILE"
SYSTEMS = ["s1", "s2"]
STRATA = ["x", "y", "z"]


def _data(k: int, seed: int = 20261127):
    rng = np.random.default_rng(seed)
    test = rng.integers(0, 60, size=(2, 3, k))
    test[0, 2] = 0  # a group without test items
    cal = rng.integers(0, 8, size=(2, 3, k, k)) + 12 * np.eye(k, dtype=np.int64)
    return test, cal


def _priors(k: int) -> cm.CategoricalPriors:
    rng = np.random.default_rng(k)
    return cm.CategoricalPriors(
        theta=tuple(rng.uniform(0.5, 2.5, k)),
        confusion=rng.uniform(0.5, 5.0, (k, k)).tolist(),
        error_logit_mean=(-1.7, 1.3),
        error_logit_scale=0.8,
    )


def _setup(k, design, calibration, pool_over):
    test, cal = _data(k)
    cats = [f"c{i}" for i in range(k)]
    counts = CategoricalCounts.from_counts(
        test, cal, categories=cats, system=SYSTEMS, stratum=STRATA, design=design
    )
    priors = _priors(k)
    config = cm.categorical_model_config(
        counts, calibration, pool_over, priors=priors, scores={c: i for i, c in enumerate(cats)}
    )
    model = cm.build_categorical_from_config(counts, config)
    arrays = cm._arrays(counts, calibration, config["pool_over"])
    layout = cn.free_layout(
        arrays.test,
        arrays.calibration,
        design=design,
        calibration_model=calibration,
        pool_over=config["pool_over"],
        alpha_theta=priors.theta_alpha(k),
        alpha_confusion=priors.confusion_alpha(k),
        error_logit_mean=priors.error_logit_mean,
        error_logit_scale=priors.error_logit_scale,
    )
    return model, layout, np.arange(k, dtype=float)


def _point(layout, x) -> dict:
    point, pos = {}, 0
    for name, shape in zip(layout.names, layout.shapes, strict=True):
        size = math.prod(shape)
        point[name] = x[pos : pos + size].reshape(shape)
        pos += size
    return point


# Every calibration model in both designs, every pooling, K = 2, 3 and 4 (fast tier); the
# rest of the cross product (K × calibration × pooling × design) in the slow tier.
FAST = [
    (3, "separate", None, "stratified"),
    (3, "separate", None, "random"),
    (3, "shared", None, "random"),
    (3, "shared", "system", "stratified"),
    (3, "hierarchical", None, "stratified"),
    (3, "hierarchical", "stratum", "random"),
    (2, "hierarchical", "system", "random"),
    (4, "shared", "stratum", "stratified"),
    (4, "hierarchical", "system", "stratified"),
]
_MODELS = [("separate", None)] + [
    (calibration, pool) for calibration in ("shared", "hierarchical")
    for pool in (None, "system", "stratum")
]  # fmt: skip
CASES = [
    pytest.param(*case, marks=() if case in FAST else pytest.mark.slow)
    for case in [
        (k, calibration, pool, design)
        for k in (2, 3, 4)
        for calibration, pool in _MODELS
        for design in ("stratified", "random")
    ]
]


@pytest.mark.parametrize(("k", "calibration", "pool_over", "design"), CASES)
def test_log_density_and_gradient_equal_pymc(k, calibration, pool_over, design):
    model, layout, scores = _setup(k, design, calibration, pool_over)
    assert layout.names == [model.rvs_to_values[v].name for v in model.free_RVs]
    shapes = model.eval_rv_shapes()
    assert layout.shapes == [shapes[name] for name in layout.names]
    # One compiled function (one PyTensor compile): PyMC's logp, dlogp (the unconstrained
    # space, Jacobians included, as compile_logp()/compile_dlogp()) and the expanded values.
    names = [v.name for v in model.unobserved_value_vars]
    function = model.compile_fn(
        [model.logp(), model.dlogp(), *model.unobserved_value_vars], mode=MODE
    )
    rng = np.random.default_rng(3)
    for _ in range(4):
        x = rng.normal(0.0, 1.5, layout.n_dim)
        point = _point(layout, x)
        logp, reference, *values = function(point)
        value, grad = cn.logp_and_grad(layout, x)
        np.testing.assert_allclose(value, logp, rtol=RTOL)
        # Per element, relative to the gradient's scale (a few entries are near 0).
        np.testing.assert_allclose(grad, reference, rtol=RTOL, atol=RTOL * np.abs(reference).max())
        ours = cn.expand(layout, x, scores)
        theirs = dict(zip(names, values, strict=True))
        for name in cn.posterior_names(layout, has_scores=True):
            np.testing.assert_allclose(ours[name], theirs[name], rtol=RTOL, atol=1e-300)
            assert ours[name].shape == cn.posterior_shape(layout, name)


def test_the_comparison_has_teeth():
    # A prior read wrongly, or a design ignored, moves the density: the checks above can fail.
    model, layout, _ = _setup(3, "random", "hierarchical", None)
    x = np.random.default_rng(5).normal(0.0, 1.0, layout.n_dim)
    reference = model.compile_logp(mode=MODE)(_point(layout, x))
    assert np.isclose(cn.logp_and_grad(layout, x)[0], reference, rtol=RTOL)
    for change in (
        {"alpha_theta": layout.alpha_theta + 0.1},
        {"random": False},
        {"prior": layout.prior * np.array([1.0, 1.0, 1.1])},
    ):
        wrong = cn.FreeCategoricalLayout(**{**layout.__dict__, **change})
        assert not np.isclose(cn.logp_and_grad(wrong, x)[0], reference, rtol=1e-6), change


def test_the_start_is_pymcs_support_point_with_jitter():
    model, layout, _ = _setup(3, "stratified", "hierarchical", "system")
    support = model.initial_point()  # PyMC's support points, transformed
    centre = np.concatenate([np.ravel(support[name]) for name in layout.names])
    first = cn.initial_point(layout, 1)
    assert np.all(np.abs(first - centre) <= 1.0)
    assert np.abs(first - centre).max() > 0.5  # jittered, not at the centre
    np.testing.assert_array_equal(first, cn.initial_point(layout, 1))
    assert not np.array_equal(first, cn.initial_point(layout, 2))


@pytest.mark.parametrize("calibration", ["separate", "hierarchical"])
def test_fit_samples_the_free_confusion_through_the_kernels(calibration):
    test, cal = _data(3)
    counts = CategoricalCounts.from_counts(
        test[:, :1], cal[:, :1], categories=["A", "tie", "B"], system=SYSTEMS, stratum=["x"]
    )
    kwargs = {"calibration": calibration, "draws": 150, "tune": 150, "chains": 2}
    config = cm.categorical_model_config(counts, calibration)
    assert cm.uses_kernels(config)
    assert not cm.uses_kernels({**config, "confusion": "symmetric"})
    with pytest.warns(cm.ConvergenceWarning):  # 2 × 150 draws: ESS below the 400 threshold
        fit = cm.fit_categorical(counts, random_seed=4, scores={"A": 1, "tie": 0.5, "B": 0},
                                 **kwargs)  # fmt: skip
    with pytest.warns(cm.ConvergenceWarning):
        again = cm.fit_categorical(counts, random_seed=4, scores={"A": 1, "tie": 0.5, "B": 0},
                                   **kwargs)  # fmt: skip
    post = fit.posterior
    model = fit.model
    for name in post.data_vars:
        assert post[name].dims[2:] == model.named_vars_to_dims[name], name
        np.testing.assert_array_equal(post[name].values, again.posterior[name].values)
    expected = {"theta", "confusion", "p", "score"}
    if calibration == "hierarchical":
        expected |= {"error_logit_mean", "error_logit_scale", "error_z"}
    assert set(post.data_vars) == expected
    assert list(post["system"].values) == SYSTEMS
    np.testing.assert_allclose(post["theta"].sum("category"), 1.0, rtol=1e-12)
    weights = np.array([1.0, 0.5, 0.0])
    np.testing.assert_allclose(post["score"].values, post["theta"].values @ weights, rtol=1e-12)
    assert fit.tree.attrs["random_seed"] == 4
    # The posterior moved from the flat prior towards the data (the test shares).
    share = test[:, 0] / test[:, 0].sum(-1, keepdims=True)
    mean = post["p"].mean(("chain", "draw")).isel(stratum=0).values
    np.testing.assert_allclose(mean, share, atol=0.05)


@pytest.mark.parametrize("categories", [[1, 2, 3], [0.0, 0.5, 1.0]], ids=["int", "float"])
def test_numeric_categories_are_coordinates_of_the_kernels_fit(categories):
    # Regression: nutpie refused a plain list of numbers as coordinates ("List item is not a
    # string"), so a 1–5 rubric with integer grades could not be fitted through the kernels.
    test, cal = _data(3)
    counts = CategoricalCounts.from_counts(test[0, 0], cal[0, 0], categories=categories)
    with pytest.warns(cm.ConvergenceWarning):  # 2 × 100 draws
        fit = cm.fit_categorical(counts, draws=100, tune=100, chains=2, random_seed=1)
    assert fit.posterior["theta"].coords["category"].values.tolist() == categories
    assert fit.posterior["confusion"].sel(truth=categories[0]).sizes["verdict"] == 3


@pytest.mark.slow
def test_the_kernels_and_pytensors_graph_give_the_same_posterior():
    # Same model, two compiled densities (the kernels; nutpie's numba compile of PyMC's
    # graph), same sampler: posterior means and sds agree within 4 Monte Carlo standard
    # errors (az.mcse of each, combined), over every scalar of θ, the confusion, μ and σ.
    import arviz as az
    import nutpie

    test, cal = _data(3, seed=11)
    counts = CategoricalCounts.from_counts(
        test[:, :2], cal[:, :2], categories=["A", "tie", "B"], system=SYSTEMS, stratum=["x", "y"]
    )
    config = cm.categorical_model_config(counts, "hierarchical")
    arrays = cm._arrays(counts, "hierarchical", config["pool_over"])
    model = cm.build_categorical_from_config(counts, config)
    options = {"draws": 2000, "tune": 1000, "chains": 4, "target_accept": 0.99, "progress": False}
    ours = cm._sample(cm.compile_categorical(model, arrays, config), seed=1, **options)
    graph = cm._sample(nutpie.compile_pymc_model(model), seed=2, **options)
    names = ["theta", "confusion", "error_logit_mean", "error_logit_scale"]
    for tree in (ours, graph):
        assert int(tree["sample_stats"].dataset["diverging"].sum()) == 0
    a, b = (tree["posterior"].dataset[names] for tree in (ours, graph))
    assert set(ours["posterior"].dataset.data_vars) == set(graph["posterior"].dataset.data_vars)
    for name in names:
        assert a[name].dims == b[name].dims and a[name].shape == b[name].shape
    for method, stat in (("mean", lambda d: d.mean(("chain", "draw"))),
                         ("sd", lambda d: d.std(("chain", "draw")))):  # fmt: skip
        se_a, se_b = az.mcse(a, method=method), az.mcse(b, method=method)
        for name in names:
            gap = np.abs(stat(a[name]) - stat(b[name])).values
            tolerance = 4 * np.sqrt(se_a[name] ** 2 + se_b[name] ** 2).values
            assert np.all(gap <= tolerance), (method, name, gap.max(), tolerance.min())
