"""Exact joint draws (bayesjudge.core.exact.exact_draws) and the exact Fit's summary.

The sampler is a rejection sampler with a two-part envelope (a box of the calibration Betas
where J ≥ J_c > 0, and its complement); the draws must follow the joint posterior, not only
the θ marginal, since compare() and ppc() use (θ, q0, q1) together. Oracles:

* the engine's marginal CDFs (``exact_marginals``; quantile error < 1e-4, validated in
  test_exact.py) for one-dimensional KS tests;
* ``brute_grid.LatentMixture`` — the posterior as a finite mixture of independent Betas over
  the latent counts, exact to rounding — for joint moments E[θ q1], E[θ q0], E[q0 q1];
* closed forms for the restricted Beta proposals.

Tolerances come from the Monte Carlo error at a fixed seed: KS statistic D < 1.95 / √N (the
0.1 % point of Kolmogorov's distribution), moments within 4.5 standard errors of the mean of
N draws (a correct sampler fails one of the ~60 comparisons with probability < 1e-3; a fixed
seed makes the outcome permanent).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import xarray as xr
from brute_grid import LatentMixture
from scipy import stats

import bayesjudge as bj
from bayesjudge.core import exact as ex
from bayesjudge.core.exact import exact_draws, exact_marginals

SEED = 20261126
N = 20_000
KS_BOUND = 1.95 / np.sqrt(N)
SIGMAS = 4.5

# (n, k, m0, tn, m1, tp), priors — chosen to exercise every path of the sampler.
CASES = {
    "moderate": ((1000, 400, 100, 70, 100, 90), {}),
    "n>>m": ((20000, 9000, 30, 20, 30, 27), {}),
    # J can reach 0: most proposals come from outside the box (the M(q) bound).
    "weak-calibration": ((500, 300, 4, 3, 5, 4), {}),
    # An informative θ prior away from the likelihood: prior thinning, and the posterior's
    # q1 sits 2.7 sd below its calibration Beta (outside the box).
    "informative-far": ((20000, 9000, 30, 20, 30, 27), {"theta_prior": (20.0, 20.0)}),
    "informative": (
        (200, 120, 30, 24, 40, 33),
        {"theta_prior": (2.0, 5.0), "q0_prior": (8.0, 2.0), "q1_prior": (6.0, 2.0)},
    ),
    "tp=m1": ((1000, 400, 100, 70, 100, 100), {}),
    "tn=m0": ((1000, 400, 100, 100, 100, 90), {}),
    "k=0": ((1000, 0, 100, 70, 100, 90), {}),  # conflicting: the exact mixture
    "k=n": ((1000, 1000, 100, 70, 100, 90), {}),  # conflicting: the exact mixture
    "k=n-tn=m0": ((1000, 1000, 200, 200, 200, 200), {}),
    "small": ((20, 8, 5, 3, 5, 4), {}),
    "known-q1": ((300, 100, 40, 30, 0, 0), {"q1_prior": 0.9}),
    "known-both": ((800, 250, 0, 0, 0, 0), {"q0_prior": 0.85, "q1_prior": 0.75}),
}

# Cases small enough for the exact latent mixture (joint moments), incl. the boundaries.
MIXTURE_CASES = {
    "n=300": ((300, 120, 40, 30, 40, 36), {}),
    "n=150": ((150, 70, 10, 7, 12, 10), {}),
    "tp=m1": ((300, 120, 40, 30, 40, 40), {}),
    "tn=m0": ((300, 120, 40, 40, 40, 35), {}),
    "k=0": ((400, 0, 100, 70, 100, 90), {}),
    "k=n": ((300, 300, 40, 30, 40, 36), {}),
    "weak": ((200, 120, 4, 3, 5, 4), {}),
    "informative": (
        (200, 120, 30, 24, 40, 33),
        {"theta_prior": (2.0, 5.0), "q0_prior": (8.0, 2.0), "q1_prior": (6.0, 2.0)},
    ),
    "prior-far": ((300, 60, 40, 36, 40, 36), {"theta_prior": (20.0, 20.0)}),
}


def _args(data):
    n, k, m0, tn, m1, tp = data
    return k, n, tn, m0, tp, m1


@functools.cache
def _draws(table: str, name: str, size: int = N, seed: int = SEED):
    data, priors = (CASES if table == "cases" else MIXTURE_CASES)[name]
    return exact_draws(*_args(data), **priors, size=size, rng=seed)


@pytest.mark.parametrize("name", list(CASES))
def test_marginals_of_the_draws_match_the_exact_cdfs(name):
    """KS statistic of N draws of θ, q0 and q1 against the engine's marginal CDFs."""
    data, priors = CASES[name]
    draws = _draws("cases", name)
    m = exact_marginals(*_args(data), **priors)
    for var in ("theta", "q0", "q1"):
        x = draws[var]
        assert np.all(np.isfinite(x)) and np.all((x >= 0) & (x <= 1)), var
        if m[var].known:
            assert np.all(x == x[0]), var
            continue
        d = stats.kstest(x, lambda t, v=var: m[v].cdf(t)).statistic
        assert d < KS_BOUND, (var, d, KS_BOUND)


@pytest.mark.parametrize("name", list(MIXTURE_CASES))
def test_joint_moments_match_the_exact_mixture(name):
    """Means of θ, q0, q1 and of the products θ q1, θ q0, q0 q1 against the exact latent
    mixture (given the latent state the three are independent Betas, so the product moments
    are sums over the states); the draws' own sd sets the tolerance."""
    data, priors = MIXTURE_CASES[name]
    draws = _draws("mixture", name)
    mix = LatentMixture(*data, **priors)
    w = mix.weights

    def first(var):
        p = mix.params[var]
        return np.full(w.size, p) if isinstance(p, float) else p[0] / (p[0] + p[1])

    mean = {v: first(v) for v in ("theta", "q0", "q1")}
    exact = {v: float(w @ mean[v]) for v in mean}
    for a, b in (("theta", "q1"), ("theta", "q0"), ("q0", "q1")):
        exact[f"{a}*{b}"] = float(w @ (mean[a] * mean[b]))
        draws[f"{a}*{b}"] = draws[a] * draws[b]
    for key, value in exact.items():
        x = draws[key]
        se = x.std(ddof=1) / np.sqrt(x.size)
        assert abs(x.mean() - value) < SIGMAS * se + 1e-12, (key, x.mean(), value, se)


def test_the_box_part_has_its_full_envelope_weight():
    """Regression: the box part draws q from the unrestricted Betas (rejecting those outside
    the box), so its envelope mass is 1 / J_c; it was weighted P(box) / J_c, which for weak
    calibration (small m, the box at a low normal score, P(box) ≈ 0.9) under-sampled the box:
    q1's mean came out 15 standard errors low at 2·10⁵ draws (0.75054 against 0.75449; the
    old test seed happened to pass at N = 2·10⁴). Means against the exact latent mixture,
    which a 300³ midpoint grid of the likelihood confirms to 5e-8 (θ 0.350540, q0 0.681485,
    q1 0.754491)."""
    data = MIXTURE_CASES["n=150"][0]
    draws = exact_draws(*_args(data), size=200_000, rng=SEED)
    mix = LatentMixture(*data)
    for v in ("theta", "q0", "q1"):
        a, b = mix.params[v]
        exact = float(mix.weights @ (a / (a + b)))
        x = draws[v]
        se = x.std(ddof=1) / np.sqrt(x.size)
        assert abs(x.mean() - exact) < SIGMAS * se, (v, x.mean(), exact, se)


def test_the_draws_are_reproducible_and_independent_across_groups():
    """The same seed gives the same draws; another seed others; two identical groups in one
    call get uncorrelated draws, each following the single-group posterior."""
    data = CASES["moderate"][0]
    a = exact_draws(*_args(data), size=4000, rng=7)
    b = exact_draws(*_args(data), size=4000, rng=7)
    c = exact_draws(*_args(data), size=4000, rng=8)
    for v in ("theta", "q0", "q1"):
        np.testing.assert_array_equal(a[v], b[v])
        assert not np.array_equal(a[v], c[v])
    cols = np.array([_args(data), _args(data)]).T
    two = exact_draws(*cols, size=N, rng=SEED)
    m = exact_marginals(*_args(data))
    for v in ("theta", "q0", "q1"):
        r = np.corrcoef(two[v][:, 0], two[v][:, 1])[0, 1]
        assert abs(r) < SIGMAS / np.sqrt(N), (v, r)
        for g in (0, 1):
            d = stats.kstest(two[v][:, g], lambda t, v=v: m[v].cdf(t)).statistic
            assert d < KS_BOUND, (v, g, d)
    # Draws are i.i.d. in order: no trend along the draw axis (first half vs second half).
    x = two["theta"][:, 0]
    half = x.size // 2
    se = x.std() * np.sqrt(2 / half)
    assert abs(x[:half].mean() - x[half:].mean()) < SIGMAS * se


def test_many_groups_match_single_calls_in_distribution():
    """A call over mixed groups (ordinary, boundary and conflicting ones, a mixture-path
    group) gives each group draws following its own posterior, with the array shape kept."""
    names = ["moderate", "k=0", "tp=m1", "small"]
    cols = np.array([_args(CASES[n][0]) for n in names]).T.reshape(6, 2, 2)
    draws = exact_draws(*cols, size=N, rng=SEED)
    assert draws["theta"].shape == (N, 2, 2)
    for i, name in enumerate(names):
        m = exact_marginals(*_args(CASES[name][0]))
        for v in ("theta", "q0", "q1"):
            x = draws[v].reshape(N, 4)[:, i]
            d = stats.kstest(x, m[v].cdf).statistic
            assert d < KS_BOUND, (name, v, d)


def test_proposals_outside_the_box_follow_the_restricted_betas():
    """The complement of the box {q0 ≥ x0, q1 ≥ x1} is sampled piece by piece by inverse CDF:
    piece 1 {q0 < x0} with probability t0, piece 2 {q0 ≥ x0, q1 < x1} with (1 − t0) t1, q0
    and q1 independent within each (a shared uniform once made them comonotone)."""
    prob = ex._problem(*_args(CASES["moderate"][0]), (1.0, 1.0), (1.0, 1.0), (1.0, 1.0))
    env = ex._envelope(prob)
    x0, x1, t0, t1 = (float(v[0]) for v in (env.x0, env.x1, env.t0, env.t1))
    assert 0 < t0 < 0.1 and 0 < t1 < 0.1 and float(env.jc[0]) > 0
    q0, q1 = ex._draw_outside(prob, env, np.zeros(N, np.intp), np.random.default_rng(SEED))
    first = q0 < x0
    share = t0 / (t0 + (1 - t0) * t1)
    assert abs(first.mean() - share) < SIGMAS * np.sqrt(share * (1 - share) / N)
    assert np.all(q1[~first] < x1)
    b0 = stats.beta(prob.Q0.a[0], prob.Q0.b[0])
    b1 = stats.beta(prob.Q1.a[0], prob.Q1.b[0])
    pieces = [
        (q0[first], lambda t: b0.cdf(t) / t0),  # q0 below x0
        (q1[first], b1.cdf),  # q1 free
        (q0[~first], lambda t: (b0.cdf(t) - t0) / (1 - t0)),  # q0 above x0
        (q1[~first], lambda t: b1.cdf(t) / t1),  # q1 below x1
    ]
    for x, cdf in pieces:
        assert stats.kstest(x, cdf).statistic < 1.95 / np.sqrt(x.size)
    for mask in (first, ~first):
        r = np.corrcoef(q0[mask], q1[mask])[0, 1]
        assert abs(r) < SIGMAS / np.sqrt(mask.sum()), r


def test_envelope_bounds_the_target():
    """Inside the box J ≥ J_c > 0 (so J_c / J ≤ 1); outside, M(q) ≤ max f_P (checked on a
    dense grid in test_exact.py); the box probability is a probability."""
    for name in ("moderate", "n>>m", "weak-calibration", "known-q1", "k=0"):
        data, priors = CASES[name]
        prob = ex._problem(*_args(data), (1.0, 1.0), priors.get("q0_prior", (1.0, 1.0)),
                           priors.get("q1_prior", (1.0, 1.0)))  # fmt: skip
        env = ex._envelope(prob)
        assert np.all((env.w_box >= 0) & (env.w_box <= 1)), name
        box = env.w_box > 0
        assert np.all(env.jc[box] > 0), name
        assert np.all(env.x0[box] + env.x1[box] - 1 == env.jc[box]), name


def test_slow_groups_take_the_exact_mixture():
    """Test counts contradicting the calibration (k = 0 against specificity 180/200): the
    rejection sampler keeps under 1 in 1000 proposals, so the exact mixture serves the
    group; its draws still match the mixture's moments."""
    data = (1000, 0, 200, 180, 200, 180)
    prob = ex._problem(*_args(data), (1.0, 1.0), (1.0, 1.0), (1.0, 1.0))
    _, slow = ex._rejection(prob, 4000, np.random.default_rng(SEED))
    assert slow.tolist() == [0]
    draws = exact_draws(*_args(data), size=N, rng=SEED)
    mix = LatentMixture(*data)
    for v in ("theta", "q0", "q1"):
        se = draws[v].std(ddof=1) / np.sqrt(N)
        assert abs(draws[v].mean() - mix.mean(v)) < SIGMAS * se, v


def test_hopeless_groups_raise(monkeypatch):
    """A slow group with more latent states than the mixture may take, and an expected cost
    beyond _MAX_PROPOSALS, raises a ValueError naming MCMC (limits lowered to reach it)."""
    monkeypatch.setattr(ex, "_LATENT_STATES_MAX", 10)
    monkeypatch.setattr(ex, "_MAX_PROPOSALS", 1e5)
    with pytest.raises(ValueError, match="Use MCMC for these groups"):
        exact_draws(0, 1000, 180, 200, 180, 200, size=4000, rng=1)


# ----------------------------------------------------------------------------- Fit summary


@pytest.fixture(scope="module")
def exact_fit():
    counts = bj.simulate_counts(
        [[0.3, 0.35], [0.6, 0.55], [0.85, 0.8]], 0.75, 0.9, n=400, m0=60, m1=80,
        system=["a", "b", "c"], stratum=["x", "y"], random_seed=3,
    )  # fmt: skip
    return bj.fit(counts, method="exact", random_seed=11)


def test_summary_hdi_of_theta_q0_q1_is_the_exact_one(exact_fit):
    """The HDI of θ, q0, q1 comes from the exact marginal: its probability is ci_prob under
    the exact CDF, its ends have equal density (the narrowest interval), and it agrees with
    az.hdi of the draws to Monte Carlo error."""
    table = exact_fit.summary(var_names=["theta", "q0", "q1"])
    for name in ("theta", "q0", "q1"):
        m = exact_fit._exact_marginal(name)
        rows = table[table.variable == name]
        lo = rows.hdi_lower.to_numpy().reshape(m.grid.shape[:-1])
        hi = rows.hdi_upper.to_numpy().reshape(m.grid.shape[:-1])
        np.testing.assert_allclose(m.cdf(hi) - m.cdf(lo), 0.95, atol=1e-9)
        # Equal densities at both ends unless the interval reaches an end of the support
        # (θ piled against 1 here: then it is [Q(1 − ci_prob), 1]).
        inner = (m.cdf(lo) > 1e-9) & (m.cdf(hi) < 1 - 1e-9)
        assert inner.sum() >= 4
        f_lo, f_hi = ex._pdf(m, lo), ex._pdf(m, hi)
        np.testing.assert_allclose(f_lo[inner], f_hi[inner], rtol=1e-6)
        draws = az_hdi(exact_fit.posterior[name])
        sd = rows["sd"].to_numpy().reshape(lo.shape)
        assert np.all(np.abs(draws[..., 0] - lo) < 0.15 * sd)
        assert np.all(np.abs(draws[..., 1] - hi) < 0.15 * sd)


def az_hdi(draws: xr.DataArray) -> np.ndarray:
    import arviz as az

    out = az.hdi(draws.to_dataset(), prob=0.95)[draws.name]
    return out.transpose(..., "ci_bound").to_numpy()


def test_summary_of_derived_variables_equals_the_draw_statistics(exact_fit):
    """theta_total and p: mean, sd, median, ETI and HDI from one sort equal xarray's and
    arviz's statistics of the same draws. (youden, exact under the flat θ prior since issue
    13, is tested against its marginal in test_exact_fit_lazy.py.)"""
    import arviz as az

    table = exact_fit.summary(var_names=["theta_total", "p"], as_xarray=True)
    for name in ("theta_total", "p"):
        draws = exact_fit.posterior[name]
        ds = table[name].dataset
        dims = ("chain", "draw")
        xr.testing.assert_allclose(ds["mean"], draws.mean(dims), rtol=1e-12)
        xr.testing.assert_allclose(ds["sd"], draws.std(dims, ddof=1), rtol=1e-12)
        xr.testing.assert_allclose(ds["median"], draws.median(dims), rtol=1e-12)
        q = draws.quantile([0.025, 0.975], dim=dims)
        np.testing.assert_allclose(ds["eti"].sel(ci_bound="lower"), q.isel(quantile=0))
        np.testing.assert_allclose(ds["eti"].sel(ci_bound="upper"), q.isel(quantile=1))
        hdi = az.hdi(draws.to_dataset(), prob=0.95)[name]
        for bound in ("lower", "upper"):
            np.testing.assert_array_equal(ds["hdi"].sel(ci_bound=bound),
                                          hdi.sel(ci_bound=bound))  # fmt: skip


def test_fit_posterior_holds_consistent_joint_draws(exact_fit):
    """youden and p are computed from the same draws of θ, q0, q1."""
    post = exact_fit.posterior
    np.testing.assert_allclose(post["youden"], post["q0"] + post["q1"] - 1, atol=1e-15)
    p = post["theta"] * post["q1"] + (1 - post["theta"]) * (1 - post["q0"])
    np.testing.assert_allclose(post["p"], p, atol=1e-15)
