"""The K-category jury's pooled, hierarchical and item-effect models (models/categorical-jury.md).

The PyMC model's log density of each variant is checked against an independent numpy/scipy
computation (loops over groups, judges and patterns; ``scipy.stats`` priors; the item effect
integrated on the same trapezoid grid written out here, and against ``scipy.integrate.quad``);
at K = 2 each variant against the binary jury model's log density (models/jury.py) up to a
constant. The simulator's item effect keeps the judges' marginal confusion. SBC and the
dependence study: test_categorical_jury_model_pooled_slow.py.
"""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest
import xarray as xr
from pytensor.compile.mode import Mode
from scipy import integrate
from scipy.special import expit, logsumexp, softmax
from scipy.stats import dirichlet, halfnorm, norm

from bayesjudge.data.categorical_jury import CategoricalJuryCounts
from bayesjudge.data.jury import JuryCounts
from bayesjudge.models.categorical import CategoricalPriors
from bayesjudge.models.categorical_jury import (
    CategoricalJuryFit,
    RatioJuryLayout,
    build_categorical_jury_model,
    categorical_jury_model_config,
    fit_categorical_jury,
    kernel_layout,
    load_categorical_jury,
    log_density,
    pattern_log_probabilities,
)
from bayesjudge.models.jury import build_jury_model
from bayesjudge.simulate import simulate_categorical_jury

PY_MODE = Mode(linker="py", optimizer="fast_compile")
JUDGES = ["gpt", "claude", "llama"]
CATEGORIES = ["A", "tie", "B"]
PATTERNS = ["000", "012", "222", "111", "201", "1-1", "-20", "21-", "0-0", "--2"]
PATTERNS2 = ["000", "011", "101", "111", "1-0", "-11", "0--"]
# The trapezoid rule of models.jury.quadrature_rule, written out: step 0.25 on [−9, 9].
NODES = np.linspace(-9.0, 9.0, 73)
LOG_W = np.log(0.25) + norm.logpdf(NODES)
MU, SD, TAU = -1.5, 1.5, 1.0  # CategoricalPriors' defaults


def _counts(design: str = "stratified", k: int = 3) -> CategoricalJuryCounts:
    rng = np.random.default_rng(20261129)
    patterns = PATTERNS if k == 3 else PATTERNS2
    test = rng.integers(0, 30, size=(2, 2, len(patterns)))
    labelled = rng.integers(0, 6, size=(2, 2, k, len(patterns)))
    return CategoricalJuryCounts.from_counts(
        patterns, test, labelled, judges=JUDGES,
        categories=CATEGORIES if k == 3 else ["incorrect", "correct"], systems=["s", "t"],
        strata=["x", "y"], design=design,
    )  # fmt: skip


def _log_confusion_from_ratios(eta_off: np.ndarray, k: int) -> np.ndarray:
    """log C (..., K, K) from the off-diagonal log-ratios (..., K(K − 1)), row by row (loops)."""
    out = np.empty((*eta_off.shape[:-1], k, k))
    for index in np.ndindex(eta_off.shape[:-1]):
        cell = 0
        for t in range(k):
            row = np.zeros(k)
            for v in range(k):
                if v != t:
                    row[v] = eta_off[index][cell]
                    cell += 1
            out[index][t] = row - logsumexp(row)
    return out


def _log_pv(row, log_c, t, b=None) -> float:
    """log P(v | t) of one pattern; log_c (J, K, K) of the group; b (K,) the item effect."""
    judged = [(j, v) for j, v in enumerate(row) if v >= 0]
    if b is None:
        return sum(log_c[j, t, v] for j, v in judged)
    c = np.exp(log_c)
    terms = np.zeros(NODES.size)
    fixed = 0.0
    for j, v in judged:
        a = norm.ppf(c[j, t, t]) * np.sqrt(1 + b[t] ** 2)
        if v == t:
            terms += norm.logcdf(a + b[t] * NODES)
        else:
            terms += norm.logcdf(-(a + b[t] * NODES))
            fixed += log_c[j, t, v] - np.log1p(-c[j, t, t])
    return fixed + logsumexp(terms + LOG_W)


def _reference_log_likelihood(counts, theta, log_conf, design, b=None) -> float:
    """Σ_groups Σ_p n_p log Σ_t θ_t P(v | t) + the labelled terms; log_conf (J, S, R, K, K)."""
    v = counts.verdicts
    test = counts.test.transpose("system", "stratum", "pattern").values
    lab = counts.labelled.transpose("system", "stratum", "truth", "pattern").values
    k = theta.shape[-1]
    total = 0.0
    for s, r in product(range(2), range(2)):
        for p, row in enumerate(v):
            lp = np.array([_log_pv(row, log_conf[:, s, r], t, b) for t in range(k)])
            total += test[s, r, p] * logsumexp(np.log(theta[s, r]) + lp)
            total += lab[s, r, :, p] @ lp
            if design == "random":
                total += lab[s, r, :, p] @ np.log(theta[s, r])
    return total


def _simplex_forward(x: np.ndarray) -> np.ndarray:
    z = np.log(x) - np.log(x).mean(-1, keepdims=True)
    return z[..., :-1]


def _model_logp(model, values: dict) -> float:
    """model.logp without Jacobians at constrained values (log, log-odds, simplex)."""
    point = {}
    for rv in model.free_RVs:
        name = model.rvs_to_values[rv].name
        value = values[rv.name]
        if name.endswith("_log__"):
            value = np.log(value)
        elif name.endswith("_logodds__"):
            value = np.log(value) - np.log1p(-value)
        elif name.endswith("_simplex__"):
            value = _simplex_forward(value)
        point[name] = value
    return float(model.compile_logp(jacobian=False, mode=PY_MODE)(point))


def _shape(model, name) -> tuple[int, ...]:
    return tuple(int(d) for d in model[name].shape.eval())


def _draw(model, rng) -> dict:
    """Random values of every free variable of the model."""
    out = {}
    for rv in model.free_RVs:
        shape = _shape(model, rv.name)
        if rv.name in ("theta", "confusion"):
            out[rv.name] = rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])
        elif rv.name.endswith("_scale") or rv.name == "item_effect":
            out[rv.name] = rng.uniform(0.2, 2.0, size=shape)
        elif rv.name.endswith("_mean"):
            out[rv.name] = rng.normal(-1.5, 1.0, size=shape)
        else:
            out[rv.name] = rng.normal(size=shape)
    return out


def _reference_priors(values: dict, k: int) -> float:
    """The priors by scipy.stats: Dirichlet, Normal, HalfNormal (defaults of the priors)."""
    total = sum(dirichlet.logpdf(th, np.ones(k)) for th in values["theta"].reshape(-1, k))
    if "confusion" in values:
        total += sum(dirichlet.logpdf(row, np.full(k, 1 / k))
                     for row in values["confusion"].reshape(-1, k))  # fmt: skip
    for name, value in values.items():
        if name.endswith("_mean"):
            total += norm.logpdf(value, MU, SD).sum()
        elif name.endswith("_scale"):
            total += halfnorm.logpdf(value, scale=TAU).sum()
        elif name.endswith("_z"):
            total += norm.logpdf(value).sum()
        elif name == "item_effect":
            total += halfnorm.logpdf(value, scale=1.0).sum()
    return total


def _ratios_per_group(values: dict, calibration: str, pool: bool) -> np.ndarray:
    """The off-diagonal log-ratios (J, S, R, E), composed by hand from the model's draws."""
    if pool:
        mean = values["error_judges_mean"]  # ([S,] R, E)
        scale = values["error_judges_scale"]  # ([S,] R, K)
        z = values["error_judges_z"]  # (J, [S,] R, E)
        k = scale.shape[-1]
        rows = np.repeat(np.arange(k), k - 1)
        level = mean[None] + scale[None][..., rows] * z
    else:
        level = values["error_logit_mean"] if calibration == "hierarchical" else None
    if calibration == "hierarchical":
        k = values["error_logit_scale"].shape[-1]
        rows = np.repeat(np.arange(k), k - 1)
        sigma = values["error_logit_scale"][..., rows]  # (J, R, E)
        return level[:, None] + sigma[:, None] * values["error_z"]
    if calibration == "shared":
        return np.broadcast_to(level[:, None], (level.shape[0], 2, *level.shape[1:]))
    return level


SLOW = pytest.mark.slow  # the same checks on more variants: this file stays under 40 s
VARIANTS = [
    pytest.param({"pool_judges": True}, "stratified", marks=SLOW),
    pytest.param({"pool_judges": True, "calibration": "separate"}, "random", marks=SLOW),
    pytest.param({"calibration": "hierarchical"}, "random", marks=SLOW),
    pytest.param({"calibration": "hierarchical", "pool_judges": True}, "stratified", marks=SLOW),
    ({"dependence": "item"}, "stratified"),
    pytest.param({"dependence": "item", "calibration": "separate"}, "random", marks=SLOW),
    pytest.param({"dependence": "item", "pool_judges": True}, "random", marks=SLOW),
    pytest.param({"dependence": "item", "calibration": "hierarchical"}, "stratified", marks=SLOW),
]


@pytest.mark.parametrize(("options", "design"), VARIANTS)
def test_log_density_matches_an_independent_computation(options, design):
    counts = _counts(design)
    model = build_categorical_jury_model(counts, **options)
    calibration = options.get("calibration", "shared")
    pool = options.get("pool_judges", False)
    rng = np.random.default_rng(17)
    for _ in range(2):
        values = _draw(model, rng)
        if "confusion" in values:
            conf = values["confusion"]
            conf = conf[:, None] if calibration == "shared" else conf
            log_conf = np.log(np.broadcast_to(conf, (3, 2, 2, 3, 3)))
        else:
            log_conf = _log_confusion_from_ratios(_ratios_per_group(values, calibration, pool), 3)
        b = values.get("item_effect")
        expected = _reference_log_likelihood(counts, values["theta"], log_conf, design, b)
        expected += _reference_priors(values, 3)
        np.testing.assert_allclose(_model_logp(model, values), expected, rtol=1e-10)


def test_item_effect_quadrature_against_scipy_quad():
    # The trapezoid grid's log P(v | t) against adaptive quadrature of the same integral
    # (measured difference < 1e-9 at b <= 2 for these rates; the binary model's < 5e-6 at b <= 3).
    conf = np.array([[[0.8, 0.15, 0.05], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7]],
                     [[0.6, 0.3, 0.1], [0.1, 0.85, 0.05], [0.3, 0.1, 0.6]],
                     [[0.9, 0.05, 0.05], [0.25, 0.5, 0.25], [0.05, 0.05, 0.9]]])  # fmt: skip
    b = np.array([0.5, 1.2, 2.0])
    verdicts = np.array([[0, 0, 0], [0, 1, 2], [1, 1, -1], [2, 0, 2], [-1, 2, 1]])
    got = pattern_log_probabilities(verdicts, conf, item_effect=b)
    for t in range(3):
        a = norm.ppf(np.diagonal(conf, axis1=1, axis2=2)[:, t]) * np.sqrt(1 + b[t] ** 2)
        for p, row in enumerate(verdicts):

            def f(u, row=row, a=a, t=t):
                out = norm.pdf(u)
                for j, v in enumerate(row):
                    if v == t:
                        out *= norm.cdf(a[j] + b[t] * u)
                    elif v >= 0:
                        out *= norm.sf(a[j] + b[t] * u) * conf[j, t, v] / (1 - conf[j, t, t])
                return out

            value = integrate.quad(f, -12, 12, epsabs=1e-14, epsrel=1e-12)[0]
            np.testing.assert_allclose(got[t, p], np.log(value), rtol=1e-8)
    # Complete patterns of 3 judges: P(· | t) sums to 1; one judge keeps its marginal row.
    full = np.array(list(product(range(3), repeat=3)))
    total = np.exp(pattern_log_probabilities(full, conf, item_effect=b)).sum(-1)
    np.testing.assert_allclose(total, 1.0, rtol=1e-10)
    one = np.exp(pattern_log_probabilities([[v, -1, -1] for v in range(3)], conf, item_effect=b))
    np.testing.assert_allclose(one, conf[0], rtol=1e-10)


# ----------------------------------------------------------------------- K = 2: the binary


def _binary_pair():
    binary = JuryCounts(_counts("random", k=2).to_jury_counts().dataset)
    return binary, CategoricalJuryCounts.from_jury_counts(binary)


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"pool_judges": True}, marks=SLOW),
        pytest.param({"calibration": "hierarchical"}, marks=SLOW),
        {"calibration": "hierarchical", "pool_judges": True},
        pytest.param({"pool_judges": True, "dependence": "item"}, marks=SLOW),
    ],
)
def test_two_categories_give_the_binary_jury_log_density(options):
    # At K = 2 the error cell of row t is −logit q_t: mean ↔ −mean, z ↔ −z, scales equal,
    # θ ↔ (1 − θ, θ); the item effect's u ↔ −u on truth 0 (a symmetric grid). The two log
    # densities (without Jacobians) differ by a constant: compared at two points, to 1e-10.
    binary, counts = _binary_pair()
    model = build_categorical_jury_model(counts, **options)
    binary_model = build_jury_model(binary, **options)
    rng = np.random.default_rng(23)
    diffs = []
    for _ in range(2):
        values = _draw(binary_model, rng)
        mapped = {"theta": np.stack([1 - values["theta"], values["theta"]], -1)}
        for name in ("judges_mean", "judges_z", "logit_mean", "z"):
            pair = [values.get(f"q{t}_{name}") for t in (0, 1)]
            if pair[0] is not None and not (name == "logit_mean" and options.get("pool_judges")):
                target = f"error_{name}"
                mapped[target] = -np.stack(pair, -1)
        for name in ("judges_scale", "logit_scale"):
            pair = [values.get(f"q{t}_{name}") for t in (0, 1)]
            if pair[0] is not None:
                mapped[f"error_{name}"] = np.stack(pair, -1)
        if "item_effect" in values:
            mapped["item_effect"] = values["item_effect"]
        diffs.append(_model_logp(model, mapped) - _model_logp(binary_model, values))
    np.testing.assert_allclose(diffs[0], diffs[1], rtol=0, atol=1e-10)


def test_two_categories_item_effect_gives_the_binary_likelihood():
    # Dirichlet(1, 1) rows are the binary model's Beta(1, 1) q's: equal log densities.
    binary, counts = _binary_pair()
    model = build_categorical_jury_model(
        counts, dependence="item", priors=CategoricalPriors(confusion=1.0)
    )
    binary_model = build_jury_model(binary, dependence="item")
    rng = np.random.default_rng(29)
    q0, q1 = rng.uniform(0.55, 0.95, size=(2, 3, 2))
    theta = rng.uniform(0.2, 0.8, size=(2, 2))
    b = np.array([0.7, 1.6])
    got = _model_logp(model, {
        "theta": np.stack([1 - theta, theta], -1),
        "confusion": np.stack([np.stack([q0, 1 - q0], -1), np.stack([1 - q1, q1], -1)], -2),
        "item_effect": b,
    })  # fmt: skip
    expected = _model_logp(binary_model, {"theta": theta, "q0": q0, "q1": q1, "item_effect": b})
    np.testing.assert_allclose(got, expected, rtol=1e-10)


# ---------------------------------------------------------------------- options and dims


def test_variables_and_dims():
    counts = _counts()
    model = build_categorical_jury_model(counts, calibration="hierarchical", pool_judges=True,
                                         dependence="item")  # fmt: skip
    dims = model.named_vars_to_dims
    assert [v.name for v in model.free_RVs] == [
        "theta", "error_judges_mean", "error_judges_scale", "error_judges_z",
        "error_logit_scale", "error_z", "item_effect",
    ]  # fmt: skip
    assert dims["error_judges_mean"] == ("stratum", "error")
    assert dims["error_judges_scale"] == ("stratum", "truth")
    assert dims["error_logit_mean"] == ("judge", "stratum", "error")
    assert dims["error_z"] == ("judge", "system", "stratum", "error")
    assert dims["confusion"] == ("judge", "system", "stratum", "truth", "verdict")
    assert dims["item_effect"] == ("truth",)
    assert model.coords["error"][:2] == ("A->tie", "A->B")
    unnamed = [v.name for v in model.free_RVs + model.deterministics if v.name not in dims]
    assert not unnamed
    config = categorical_jury_model_config(counts, "shared", None, None, True, None)
    assert (config["pool_judges"], config["dependence"], config["quadrature_step"]) == (
        True, None, None,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"dependence": "items"}, r"dependence must be one of \[None, 'item'\]"),
        ({"pool_judges": "yes"}, "pool_judges must be True or False"),
        ({"calibration": "pooled"}, "'shared', 'separate', 'hierarchical'"),
    ],
)
def test_bad_options_are_refused(options, match):
    with pytest.raises(ValueError, match=match):
        categorical_jury_model_config(_counts(), **options)


def test_item_effect_needs_labels_or_four_judges():
    counts = CategoricalJuryCounts.from_counts(
        ["000", "111", "012"], [30, 20, 5], judges=JUDGES, categories=CATEGORIES
    )
    with pytest.raises(ValueError, match="a fourth judge"):
        categorical_jury_model_config(counts, dependence="item")
    categorical_jury_model_config(counts)  # 3 judges, no item effect: identified
    four = CategoricalJuryCounts.from_counts(
        ["0000", "1111", "0122"], [30, 20, 5], judges=[*JUDGES, "x"], categories=CATEGORIES
    )
    assert categorical_jury_model_config(four, dependence="item")["dependence"] == "item"


# ---------------------------------------------------------------------- the simulator


def test_simulated_item_effect_keeps_the_marginal_confusion():
    # 30000 labelled items per truth: each judge's row within 4.5 binomial SE of C[t, :]
    # (SE <= 0.0029); two judges both right on truth t beyond independence, as E over u of
    # expit(a_1 + σu) expit(a_2 + σu) (Gauss–Hermite, 200 nodes) within 4.5 SE.
    conf = np.array([[[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.3, 0.6]]] * 3)
    m = 30000
    counts = simulate_categorical_jury([0.4, 0.2, 0.4], conf, n=10, m=[m] * 3, dependence=2.0,
                                       random_seed=8)  # fmt: skip
    lab = counts.labelled.isel(system=0, stratum=0).values
    v = counts.verdicts
    se = np.sqrt(conf * (1 - conf) / m)
    for j in range(3):
        table = np.array([[lab[t, v[:, j] == w].sum() for w in range(3)] for t in range(3)]) / m
        assert (np.abs(table - conf[j]) < 4.5 * se).all(), (j, table)
    nodes, weights = np.polynomial.hermite_e.hermegauss(200)
    weights = weights / np.sqrt(2 * np.pi)
    # a with E[expit(a + 2u)] = 0.8, solved on the same rule.
    from scipy.optimize import brentq

    a = brentq(lambda x: weights @ expit(x + 2.0 * nodes) - 0.8, -10, 10, xtol=1e-14)
    both = weights @ expit(a + 2.0 * nodes) ** 2
    observed = lab[0, (v[:, 0] == 0) & (v[:, 1] == 0)].sum() / m
    assert abs(observed - both) < 4.5 * np.sqrt(both * (1 - both) / m), (observed, both)
    assert both > 0.8**2 + 0.05
    attrs = counts.dataset.attrs["simulation"]
    assert '"dependence": 2.0' in attrs


def test_simulator_without_dependence_is_unchanged():
    conf = np.array([[[0.8, 0.2], [0.3, 0.7]]] * 3)
    one = simulate_categorical_jury([0.4, 0.6], conf, n=200, m=[10, 10], random_seed=4)
    two = simulate_categorical_jury([0.4, 0.6], conf, n=200, m=[10, 10], random_seed=4,
                                    dependence=0.0)  # fmt: skip
    assert one.patterns == two.patterns
    np.testing.assert_array_equal(one.test.values, two.test.values)
    with pytest.raises(ValueError, match="dependence must be a number"):
        simulate_categorical_jury([0.4, 0.6], conf, n=20, m=[1, 1], dependence=-1)


def test_softmax_of_ratios_reference_is_a_softmax():
    # The loop reference of the confusion from the log-ratios agrees with scipy's softmax.
    eta = np.random.default_rng(1).normal(size=(4, 6))
    full = np.zeros((4, 3, 3))
    full[:, [0, 0, 1, 1, 2, 2], [1, 2, 0, 2, 0, 1]] = eta
    np.testing.assert_allclose(np.exp(_log_confusion_from_ratios(eta, 3)),
                               softmax(full, axis=-1), rtol=1e-13)  # fmt: skip


# ---------------------------------------------------------------------- the numba kernels

KERNEL_VARIANTS = [
    pytest.param({"pool_judges": True}, "stratified", marks=SLOW),
    pytest.param({"pool_judges": True, "calibration": "separate"}, "random", marks=SLOW),
    pytest.param({"calibration": "hierarchical"}, "random", marks=SLOW),
    ({"calibration": "hierarchical", "pool_judges": True}, "stratified"),
    ({"dependence": "item", "calibration": "separate"}, "random"),
    pytest.param({"dependence": "item", "pool_judges": True}, "stratified", marks=SLOW),
    pytest.param({"dependence": "item", "calibration": "hierarchical"}, "random", marks=SLOW),
]


@pytest.mark.parametrize(("options", "design"), KERNEL_VARIANTS)
def test_sampled_log_density_is_the_pymc_model(options, design):
    # The numba kernels nutpie samples equal PyMC's log density (Jacobians and constants
    # included; measured difference ~3e-12 on values ~2000) at random unconstrained points;
    # their gradient equals PyMC's compiled gradient to 1e-8 (measured ~3e-12) and the
    # central differences (step 1e-6: truncation and rounding ~2e-6 absolute on values ~2000).
    counts = _counts(design)
    config = categorical_jury_model_config(counts, scores={"A": 1, "tie": 0.5, "B": 0},
                                           **options)  # fmt: skip
    model = build_categorical_jury_model(counts, **options)
    logp = model.compile_logp(mode=PY_MODE)
    dlogp = model.compile_dlogp(mode=PY_MODE)
    layout = kernel_layout(counts, config)
    ratios = options.get("pool_judges") or options.get("calibration") == "hierarchical"
    assert isinstance(layout, RatioJuryLayout) == bool(ratios)
    start = model.initial_point()
    names = [model.rvs_to_values[v].name for v in model.free_RVs]
    assert layout.n_dim == sum(start[n].size for n in names)
    sizes = np.cumsum([start[n].size for n in names])[:-1]
    rng = np.random.default_rng(31)
    for _ in range(2):
        x = rng.normal(size=layout.n_dim)
        point = {n: part.reshape(start[n].shape)
                 for n, part in zip(names, np.split(x, sizes), strict=True)}  # fmt: skip
        value, grad = log_density(layout, x)
        np.testing.assert_allclose(value, float(logp(point)), rtol=1e-12)
        np.testing.assert_allclose(grad, dlogp(point), rtol=1e-8, atol=1e-8)
        step = 1e-6 * np.eye(layout.n_dim)
        numeric = [(log_density(layout, x + h)[0] - log_density(layout, x - h)[0]) / 2e-6
                   for h in step]  # fmt: skip
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-4)


# ---------------------------------------------------------------------- one fit

PI = np.array([[0.5, 0.2, 0.3], [0.25, 0.25, 0.5]])
CONF = np.array(
    [
        [[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8]],
        [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]],
        [[0.85, 0.1, 0.05], [0.15, 0.6, 0.25], [0.1, 0.2, 0.7]],
    ]
)


@pytest.fixture(scope="module")
def pooled_fit() -> CategoricalJuryFit:
    counts = simulate_categorical_jury(
        PI, np.broadcast_to(CONF, (2, 3, 3, 3)), n=300, m=[20, 20, 20], missing=0.1,
        system=["s0", "s1"], categories=CATEGORIES, judges=JUDGES, random_seed=6,
    )  # fmt: skip
    return fit_categorical_jury(counts, calibration="hierarchical", pool_judges=True,
                                scores={"A": 1, "tie": 0.5, "B": 0}, draws=400, tune=400,
                                chains=2, random_seed=12)  # fmt: skip


def test_pooled_fit_recovers_and_summarises(pooled_fit):
    post = pooled_fit.posterior
    assert {"error_judges_mean", "error_judges_scale", "error_judges_z", "error_logit_mean",
            "error_logit_scale", "error_z", "confusion", "theta", "score"} <= set(post)  # fmt: skip
    assert post["error_z"].dims == ("chain", "draw", "judge", "system", "stratum", "error")
    # Fixed seed: θ and the confusion within 3.5 posterior sd of the simulated values.
    for name, truth in (("theta", PI[:, None]), ("confusion", CONF[:, None, None])):
        mean, sd = post[name].mean(("chain", "draw")), post[name].std(("chain", "draw"))
        z = np.abs(mean.values - truth) / sd.values
        assert (z < 3.5).all(), (name, z.max())
    s = pooled_fit.summary(ci_prob=0.9)
    assert s["confusion"].dims == ("judge", "system", "stratum", "truth", "verdict")
    assert s["theta_ci"].dims == ("ci_bound", "system", "stratum", "category")
    assert (s.attrs["calibration"], s.attrs["pool_judges"], s.attrs["dependence"]) == (
        "hierarchical", 1, "None",
    )  # fmt: skip
    c = pooled_fit.compare()
    assert c["pair"].values.tolist() == ["s0 - s1"]
    assert float(c["score_prob_greater"].item()) > 0.95  # 0.6 against 0.375
    check = pooled_fit.ppc(random_seed=2)
    assert check.flagged.dims == ("system", "stratum")
    assert "pool_judges=True" in repr(pooled_fit)


def test_pooled_fit_save_and_load(pooled_fit, tmp_path):
    import bayesjudge as bj

    path = pooled_fit.save(tmp_path / "pooled.nc")
    loaded = load_categorical_jury(path)
    assert loaded.config == pooled_fit.config
    xr.testing.assert_allclose(loaded.summary(), pooled_fit.summary())
    assert {v.name for v in loaded.model.free_RVs} >= {"error_judges_z", "error_z"}
    assert isinstance(bj.load(path), CategoricalJuryFit)


def test_fits_saved_before_the_options_still_load(pooled_fit, tmp_path):
    # A configuration without pool_judges/dependence (saved by an earlier version) is read as
    # the conditionally independent model.
    fit = CategoricalJuryFit(pooled_fit.tree.copy(), {
        k: v for k, v in pooled_fit.config.items()
        if k not in ("pool_judges", "dependence", "quadrature_step", "item_effect_scale")
    } | {"calibration": "separate"})  # fmt: skip
    assert "dependence=None pool_judges=False" in repr(fit)
    assert {v.name for v in fit.model.free_RVs} == {"theta", "confusion"}


def test_bj_fit_passes_the_options(monkeypatch):
    # bj.fit hands pool_judges and dependence to fit_categorical_jury (stubbed: the real fit is
    # the fixture above and the slow tests).
    import bayesjudge as bj
    from bayesjudge.models import fit as fit_module

    seen = {}
    monkeypatch.setattr(fit_module, "fit_categorical_jury", lambda counts, **o: seen.update(o))
    bj.fit(_counts(), calibration="hierarchical", pool_judges=True, dependence="item")
    assert (seen["calibration"], seen["pool_judges"], seen["dependence"]) == (
        "hierarchical", True, "item",
    )  # fmt: skip
