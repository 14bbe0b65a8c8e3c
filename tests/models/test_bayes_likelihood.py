"""The PyMC models' log density equals a scipy log-likelihood + log-prior at random points.

Every test builds a model with ``bj.build_model``, picks random points in the *constrained*
space (θ, q0, q1 in (0, 1), σ > 0, simplex weights), maps them to the sampler's value space
by the transform of each free variable (``theta_logodds__`` = logit θ, ``*_log__`` = log σ,
``stratum_weight_simplex__`` = PyMC's additive-log-ratio map, ``q0_interval__`` =
log(x − a) − log(b − x), or log(x − a) without an upper bound), checks that mapping by
evaluating the model's own back-transform, and compares ``model.compile_logp(jacobian=False)``
with the same density written with scipy.stats. No sampling.

Everything is exact up to floating-point rounding: the sums are O(10³) and their rounding error
O(1e-13), so the tolerance is rtol = 1e-10. Prior parameters are chosen *not* exactly
representable in float32 (2.1, 4.9, ...), because pytensor stores a Python float that is exact in
float32 (8.0, 1.5) as a float32 constant and then computes the prior's normalising constant
(gammaln, log σ) in float32, off by up to ~1e-7; ``test_prior_constants_in_float64`` pins that
separately. The logp functions are compiled with ``mode="FAST_COMPILE"`` (the same graph,
evaluated op by op with numpy/scipy; a C or numba compile per model would cost seconds).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest
from pymc.model.transform.conditioning import remove_value_transforms
from scipy import special, stats

import bayesjudge as bj

RTOL = 1e-10
MODE = "FAST_COMPILE"
N_POINTS = 4
SYSTEMS = ["a", "b"]
STRATA = ["x", "y", "z"]
# Groups of different sizes, including an empty test set (n = 0).
N = np.array([[120, 200, 0], [50, 61, 300]])
K = np.array([[40, 150, 0], [20, 30, 290]])
M0 = np.array([[10, 20, 7], [30, 41, 5]])
TN = np.array([[7, 15, 6], [20, 30, 5]])
M1 = np.array([[12, 25, 9], [33, 40, 60]])
TP = np.array([[9, 18, 2], [25, 35, 59]])
CAL = (M0, TN, M1, TP)

INFORMATIVE = bj.Priors(theta=(2.1, 4.9), q0=(6.2, 2.1), q1=(2.9, 1.3))


@pytest.fixture(scope="module")
def counts():
    return bj.JudgeCounts.from_counts(
        n=N, k=K, m0=M0, tn=TN, m1=M1, tp=TP, system=SYSTEMS, stratum=STRATA
    )


# ----------------------------------------------------------------------------- helpers


def _interval_has_upper(model, rv) -> bool:
    _, upper = model.rvs_to_transforms[rv].args_fn(*rv.owner.inputs)
    return upper is not None


def _to_value_space(model, point: dict, lower: dict | None = None) -> dict:
    """Map constrained values {rv name: array} to the model's value variables.

    ``lower`` gives the lower bound of each Interval-transformed variable (the upper bound is 1).
    """
    out = {}
    for rv in model.free_RVs:
        x = np.asarray(point[rv.name], dtype=float)
        transform = model.rvs_to_transforms[rv]
        value = model.rvs_to_values[rv].name
        kind = type(transform).__name__
        if transform is None:
            out[value] = x
        elif kind == "LogOddsTransform":
            out[value] = special.logit(x)
        elif kind == "LogTransform":
            out[value] = np.log(x)
        elif kind == "SimplexTransform":
            logx = np.log(x)
            out[value] = logx[..., :-1] - logx.mean(-1, keepdims=True)
        elif kind == "Interval":
            a = lower[rv.name]
            upper = np.log(1.0 - x) if _interval_has_upper(model, rv) else 0.0
            out[value] = np.log(x - a) - upper
        else:  # pragma: no cover - a new transform needs a mapping here
            raise AssertionError(f"unexpected transform {kind} of {rv.name}")
    # The mapping must invert the model's own back-transform.
    names = [rv.name for rv in model.free_RVs]
    back = model.compile_fn(
        model.replace_rvs_by_values([model[name] for name in names]),
        inputs=model.value_vars,
        point_fn=False,
        mode=MODE,
    )
    for name, got in zip(names, back(*(out[v.name] for v in model.value_vars)), strict=True):
        np.testing.assert_allclose(got, point[name], rtol=1e-12, atol=1e-14, err_msg=name)
    return out


def _model_logps(model, points: list[dict], lower=None) -> np.ndarray:
    logp = model.compile_logp(jacobian=False, mode=MODE)
    return np.array(
        [
            float(logp(_to_value_space(model, pt, None if lower is None else lower(pt))))
            for pt in points
        ]
    )


def _beta(x, ab):
    return stats.beta.logpdf(x, *ab).sum()


def _binom(k, n, p):
    return stats.binom.logpmf(k, n, p).sum()


def _likelihood(theta, q0, q1, cal=CAL) -> float:
    """Σ log Bin(k | n, p) + Σ log Bin(tn | m0, q0) + Σ log Bin(tp | m1, q1).

    q0 and q1 broadcast against (system, stratum), both in p and in the calibration terms: the
    model keeps one binomial per distinct calibration set even when q is shared (the product of
    those binomials and the binomial of the summed counts differ only by the constant
    Π C(m, tn) / C(Σm, Σtn), so both give the same posterior; this pins the model's form).
    """
    m0, tn, m1, tp = cal
    q0_cal, q1_cal = np.broadcast_to(q0, np.shape(m0)), np.broadcast_to(q1, np.shape(m1))
    q0_full, q1_full = np.broadcast_to(q0, N.shape), np.broadcast_to(q1, N.shape)
    p = theta * q1_full + (1 - theta) * (1 - q0_full)
    return _binom(K, N, p) + _binom(tn, m0, q0_cal) + _binom(tp, m1, q1_cal)


def _uniform(rng, shape, low=0.02, high=0.98):
    return rng.uniform(low, high, size=shape)


def _assert_logp(got, expected):
    np.testing.assert_allclose(got, expected, rtol=RTOL)


# ----------------------------------------------------------------------------- Beta models


@pytest.mark.parametrize("priors", [bj.Priors(), INFORMATIVE], ids=["flat", "informative"])
def test_separate_calibration_logp(counts, priors):
    model = bj.build_model(counts, priors=priors, aggregate=None)
    rng = np.random.default_rng(1)
    points = [
        {name: _uniform(rng, N.shape) for name in ("theta", "q0", "q1")} for _ in range(N_POINTS)
    ]
    expected = [
        _beta(pt["theta"], priors.theta)
        + _beta(pt["q0"], priors.q0)
        + _beta(pt["q1"], priors.q1)
        + _likelihood(pt["theta"], pt["q0"], pt["q1"])
        for pt in points
    ]
    _assert_logp(_model_logps(model, points), expected)


@pytest.mark.parametrize(
    ("pool_over", "q_shape"), [(None, ()), ("system", (3,))], ids=["pool-both", "pool-system"]
)
def test_shared_calibration_logp(counts, pool_over, q_shape):
    """One q0, q1 per label of the unpooled dims, informed by every group's calibration set."""
    model = bj.build_model(
        counts, calibration="shared", pool_over=pool_over, priors=INFORMATIVE, aggregate=None
    )
    rng = np.random.default_rng(2)
    points = [
        {
            "theta": _uniform(rng, N.shape),
            "q0": _uniform(rng, q_shape),
            "q1": _uniform(rng, q_shape),
        }
        for _ in range(N_POINTS)
    ]
    expected = [
        _beta(pt["theta"], INFORMATIVE.theta)
        + _beta(pt["q0"], INFORMATIVE.q0)
        + _beta(pt["q1"], INFORMATIVE.q1)
        + _likelihood(pt["theta"], pt["q0"], pt["q1"])
        for pt in points
    ]
    _assert_logp(_model_logps(model, points), expected)


def test_shared_calibration_set_counted_once():
    """A calibration set attached with with_calibration_from enters the likelihood once."""
    tests = bj.JudgeCounts.from_counts(
        n=N, k=K, system=SYSTEMS, stratum=STRATA
    ).with_calibration_from(bj.JudgeCounts.from_counts(m0=80, tn=61, m1=120, tp=101))
    model = bj.build_model(tests, calibration="shared", aggregate=None)
    rng = np.random.default_rng(3)
    points = [
        {"theta": _uniform(rng, N.shape), "q0": _uniform(rng, ()), "q1": _uniform(rng, ())}
        for _ in range(N_POINTS)
    ]
    # Flat priors: log Beta(x | 1, 1) = 0.
    expected = [_likelihood(pt["theta"], pt["q0"], pt["q1"], (80, 61, 120, 101)) for pt in points]
    _assert_logp(_model_logps(model, points), expected)


def test_known_q_logp(counts):
    """A known q1 is a constant in the likelihood (and its calibration term is a constant)."""
    priors = bj.Priors(theta=(2.1, 3.3), q0=(4.1, 2.3), q1=0.9)
    model = bj.build_model(counts, priors=priors, aggregate=None)
    assert sorted(v.name for v in model.free_RVs) == ["q0", "theta"]
    rng = np.random.default_rng(4)
    points = [{"theta": _uniform(rng, N.shape), "q0": _uniform(rng, N.shape)} for _ in range(4)]
    expected = [
        _beta(pt["theta"], priors.theta)
        + _beta(pt["q0"], priors.q0)
        # 0.9 known: the calibration term Bin(tp | m1, 0.9) is kept as a constant.
        + _likelihood(pt["theta"], pt["q0"], 0.9)
        for pt in points
    ]
    _assert_logp(_model_logps(model, points), expected)


def test_both_q_known_logp(counts):
    priors = bj.Priors(q0=0.8, q1=0.95)
    model = bj.build_model(counts, calibration="shared", priors=priors, aggregate=None)
    rng = np.random.default_rng(5)
    points = [{"theta": _uniform(rng, N.shape)} for _ in range(2)]
    expected = [_likelihood(pt["theta"], 0.8, 0.95) for pt in points]
    _assert_logp(_model_logps(model, points), expected)


# ----------------------------------------------------------------------------- hierarchical

HIER_PRIORS = bj.Priors(
    theta=(1.3, 1.1),
    q0_logit_mean=(0.7, 2.3),
    q1_logit_mean=(2.1, 0.7),
    q0_logit_scale=0.3,
    q1_logit_scale=2.6,
)


@pytest.mark.parametrize("pool_over", [None, "system"], ids=["pool-both", "pool-system"])
def test_hierarchical_logp(counts, pool_over):
    """logit q[s, t] = mu + sigma z[s, t], with mu, sigma over the unpooled dims."""
    priors = HIER_PRIORS
    model = bj.build_model(
        counts, calibration="hierarchical", pool_over=pool_over, priors=priors, aggregate=None
    )
    hyper_shape = () if pool_over is None else (len(STRATA),)
    rng = np.random.default_rng(6)
    points, expected = [], []
    for _ in range(N_POINTS):
        point = {"theta": _uniform(rng, N.shape)}
        total = _beta(point["theta"], priors.theta)
        q = {}
        for name in ("q0", "q1"):
            mu = rng.normal(1.0, 1.5, size=hyper_shape)
            sigma = rng.uniform(0.05, 3.0, size=hyper_shape)
            z = rng.normal(size=N.shape)
            point |= {f"{name}_logit_mean": mu, f"{name}_logit_scale": sigma, f"{name}_z": z}
            q[name] = special.expit(mu + sigma * z)  # (stratum,) broadcasts over system
            total += (
                stats.norm.logpdf(mu, *getattr(priors, f"{name}_logit_mean")).sum()
                + stats.halfnorm.logpdf(sigma, scale=getattr(priors, f"{name}_logit_scale")).sum()
                + stats.norm.logpdf(z).sum()
            )
        points.append(point)
        expected.append(total + _likelihood(point["theta"], q["q0"], q["q1"]))
    _assert_logp(_model_logps(model, points), expected)


# ----------------------------------------------------------------------------- aggregate


def test_dirichlet_aggregate_logp(counts):
    """w[s] ~ Dirichlet(1, 1, 1); n[s, :] ~ Multinomial(Σ_t n[s, t], w[s])."""
    model = bj.build_model(counts, aggregate="dirichlet")
    rng = np.random.default_rng(7)
    points, expected = [], []
    for _ in range(N_POINTS):
        pt = {name: _uniform(rng, N.shape) for name in ("theta", "q0", "q1")}
        pt["stratum_weight"] = rng.dirichlet(np.ones(len(STRATA)), size=len(SYSTEMS))
        total = _likelihood(pt["theta"], pt["q0"], pt["q1"])
        for w, n_row in zip(pt["stratum_weight"], N, strict=True):
            total += stats.dirichlet.logpdf(w, np.ones(len(STRATA)))
            total += stats.multinomial.logpmf(n_row, n_row.sum(), w)
        points.append(pt)
        expected.append(total)
    _assert_logp(_model_logps(model, points), expected)


# ----------------------------------------------------------------------------- J > 0

JBTC_PRIORS = bj.Priors(theta=(1.3, 2.1), q0=(6.2, 2.1), q1=(2.6, 3.9))


def _jbtc_q(rng, valid: bool):
    """Random (q0, q1) with q0 + q1 > 1 (valid) or q0 + q1 < 1."""
    q1 = _uniform(rng, N.shape)
    frac = rng.uniform(0.02, 0.98, size=N.shape)
    q0 = 1 - q1 + frac * q1 if valid else frac * (1 - q1)
    return q0, q1


def _jbtc_expected(pt, priors=JBTC_PRIORS):
    return (
        _beta(pt["theta"], priors.theta)
        + _beta(pt["q0"], priors.q0)
        + _beta(pt["q1"], priors.q1)
        + _likelihood(pt["theta"], pt["q0"], pt["q1"])
    )


@pytest.fixture(scope="module")
def jbtc_model(counts):
    return bj.build_model(counts, priors=JBTC_PRIORS, aggregate=None, judge_better_than_chance=True)


def test_judge_better_than_chance_prior_is_truncated_product(jbtc_model):
    """Joint prior of (q0, q1) ∝ Beta(q0) Beta(q1) 1{q0 + q1 > 1}, per group.

    The model draws q1 ~ Beta, q0 ~ Beta truncated below at 1 − q1 (which divides by
    P(q0 > 1 − q1 | q1)) and adds the Potential ``judge_better_than_chance`` that multiplies it
    back. Density *differences* between random points must equal scipy's, whatever the
    normaliser Z; the scale of the sums is O(10³), so atol = 1e-10 × that scale.
    """
    model = jbtc_model
    assert [p.name for p in model.potentials] == ["judge_better_than_chance"]
    rng = np.random.default_rng(8)
    points = []
    for _ in range(N_POINTS + 2):
        q0, q1 = _jbtc_q(rng, valid=True)
        points.append({"theta": _uniform(rng, N.shape), "q0": q0, "q1": q1})
    got = _model_logps(model, points, lower=lambda pt: {"q0": 1 - pt["q1"]})
    expected = np.array([_jbtc_expected(pt) for pt in points])
    scale = np.abs(expected).max()
    np.testing.assert_allclose(np.diff(got), np.diff(expected), rtol=0, atol=RTOL * scale)


def test_judge_better_than_chance_excludes_worse_than_chance(jbtc_model):
    """In the constrained space (no transforms) points with q0 + q1 < 1 have zero density."""
    logp = remove_value_transforms(jbtc_model).compile_logp(jacobian=False, mode=MODE)
    rng = np.random.default_rng(9)
    theta = _uniform(rng, N.shape)
    q0, q1 = _jbtc_q(rng, valid=True)
    good = {"theta": theta, "q0": q0, "q1": q1}
    assert np.isfinite(logp(good))
    q0_bad, q1_bad = _jbtc_q(rng, valid=False)
    assert logp({"theta": theta, "q0": q0_bad, "q1": q1_bad}) == -np.inf
    # A single group below chance is enough.
    one_bad = {"theta": theta, "q0": q0.copy(), "q1": q1}
    one_bad["q0"][1, 2] = 0.9 * (1 - q1[1, 2])
    assert logp(one_bad) == -np.inf
    # Valid points: the untransformed model gives the same differences as scipy.
    q0_2, q1_2 = _jbtc_q(rng, valid=True)
    other = {"theta": theta, "q0": q0_2, "q1": q1_2}
    diff = float(logp(other)) - float(logp(good))
    expected = _jbtc_expected(other) - _jbtc_expected(good)
    np.testing.assert_allclose(diff, expected, rtol=0, atol=RTOL * abs(_jbtc_expected(good)))


def test_judge_better_than_chance_value_space_stays_in_support(jbtc_model):
    """Every point of the sampler's value space maps into the prior's support."""
    model = jbtc_model
    back = model.compile_fn(
        model.replace_rvs_by_values([model["q0"], model["q1"]]),
        inputs=model.value_vars,
        point_fn=False,
        mode=MODE,
        on_unused_input="ignore",
    )
    rng = np.random.default_rng(10)
    for _ in range(N_POINTS):
        values = {v.name: rng.normal(0.0, 3.0, size=N.shape) for v in model.value_vars}
        q0, q1 = back(*(values[v.name] for v in model.value_vars))
        assert np.all((q0 > 1 - q1) & (q0 < 1))
        logp = model.compile_logp(jacobian=True, mode=MODE)
        assert np.isfinite(logp(values))


def test_judge_better_than_chance_with_known_q1_is_normalised(counts):
    """With q1 = 0.9 known, q0 ~ Beta(a0, b0) truncated to (0.1, 1): density / P(q0 > 0.1)."""
    priors = bj.Priors(q0=(3.1, 2.2), q1=0.9)
    model = bj.build_model(counts, priors=priors, aggregate=None, judge_better_than_chance=True)
    assert not model.potentials
    rng = np.random.default_rng(11)
    points = [
        {"theta": _uniform(rng, N.shape), "q0": rng.uniform(0.11, 0.99, size=N.shape)}
        for _ in range(N_POINTS)
    ]
    expected = [
        _beta(pt["q0"], priors.q0)
        - N.size * stats.beta.logsf(0.1, *priors.q0)
        + _likelihood(pt["theta"], pt["q0"], 0.9)
        for pt in points
    ]
    # The truncation point 1 − 0.9 is computed in floating point, as in the model.
    got = _model_logps(model, points, lower=lambda pt: {"q0": np.full(N.shape, 1 - 0.9)})
    _assert_logp(got, expected)
    logp = remove_value_transforms(model).compile_logp(jacobian=False, mode=MODE)
    bad = {"theta": points[0]["theta"], "q0": points[0]["q0"].copy()}
    bad["q0"][0, 0] = 0.05
    assert logp(bad) == -np.inf


# ----------------------------------------------------------------------------- data, constants


def test_logp_uses_the_data_containers(counts):
    """Swapping the data (as the compiled-model cache does) changes the likelihood accordingly."""
    model = bj.build_model(counts, aggregate=None)
    k_new = K // 2
    with model:
        pm.set_data({"k_observed": k_new})
    rng = np.random.default_rng(12)
    point = {name: _uniform(rng, N.shape) for name in ("theta", "q0", "q1")}
    p = point["theta"] * point["q1"] + (1 - point["theta"]) * (1 - point["q0"])
    expected = _binom(k_new, N, p) + _binom(TN, M0, point["q0"]) + _binom(TP, M1, point["q1"])
    _assert_logp(_model_logps(model, [point]), [expected])


@pytest.mark.parametrize(
    ("calibration", "priors"),
    [
        ("separate", bj.Priors(theta=(2, 5), q0=(8, 2), q1=(3, 1.5))),
        ("hierarchical", bj.Priors()),
    ],
    ids=["beta-8-2", "hierarchical-defaults"],
)
def test_prior_constants_in_float64(calibration, priors):
    counts = bj.JudgeCounts.from_counts(n=100, k=40, m0=20, tn=15, m1=30, tp=25)
    model = bj.build_model(counts, calibration=calibration, priors=priors)
    plain = remove_value_transforms(model)
    point = plain.initial_point()
    for rv in plain.free_RVs:
        name = rv.name
        got = plain.compile_logp(vars=[rv], jacobian=False, mode=MODE)(point)
        x = point[name]
        if name in ("theta", "q0", "q1"):
            expected = _beta(x, getattr(priors, name))
        elif name.endswith("_logit_mean"):
            expected = stats.norm.logpdf(x, *getattr(priors, name)).sum()
        elif name.endswith("_logit_scale"):
            expected = stats.halfnorm.logpdf(x, scale=getattr(priors, name)).sum()
        else:
            expected = stats.norm.logpdf(x).sum()
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13, err_msg=name)
