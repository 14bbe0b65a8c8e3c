"""The exact Fit draws lazily, and J = q0 + q1 − 1 has an exact marginal (issue 13, item 18).

``bj.fit(method="exact")`` computes the exact marginals at fit time and makes its i.i.d.
joint draws only when something needs them (``fit.posterior``, ``fit.tree``, compare, ppc,
save). summary() of θ, q0, q1 and — under the flat θ prior — youden comes from the exact
marginals. Oracles:

* the engine's own marginals (``exact_marginals``) and ``hdi``, computed independently of
  the Fit, for the summary (tolerance 1e-12: the same arithmetic on the same grids);
* ``brute_grid.LatentMixture`` for the youden marginal: given the latent state q0 and q1 are
  independent Betas, so P(J ≤ j) = Σ_w ∫₀¹ I_{j + 1 − F₁⁻¹(v)}(a0, b0) dv, by 64-point
  Gauss-Legendre in v (shares nothing with the engine's lattice);
* Kolmogorov-Smirnov tests of the draws against the exact CDFs: D < 1.95 / √N (the 0.1 %
  point of Kolmogorov's distribution; fixed seed, so a pass is permanent).
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_grid import LatentMixture
from scipy import special, stats

import bayesjudge as bj
from bayesjudge.core.exact import exact_draws, exact_marginals, hdi
from bayesjudge.models import fit as fit_module

SEED = 20261128
KS_N = 20_000
KS_BOUND = 1.95 / np.sqrt(KS_N)


def _counts():
    # The Fit-summary fixture of test_exact_draws.py: 3 systems × 2 strata.
    return bj.simulate_counts(
        [[0.3, 0.35], [0.6, 0.55], [0.85, 0.8]], 0.75, 0.9, n=400, m0=60, m1=80,
        system=["a", "b", "c"], stratum=["x", "y"], random_seed=3,
    )  # fmt: skip


def _data(counts):
    return [counts.dataset[v].values for v in ("k", "n", "tn", "m0", "tp", "m1")]


@pytest.fixture
def draw_calls(monkeypatch):
    calls = []
    real = fit_module.exact_draws

    def counting(*args, **kwargs):
        calls.append(kwargs.get("size"))
        return real(*args, **kwargs)

    monkeypatch.setattr(fit_module, "exact_draws", counting)
    return calls


def test_exact_fit_draws_only_when_the_posterior_is_used(draw_calls):
    """fit() and summary() make no draw; the first access to the posterior makes them once.
    (theta_total, a sum over strata, comes from the draws: one stratum here, and the
    summary of the other variables with strata below.)"""
    one = bj.simulate_counts([0.3, 0.6, 0.85], 0.75, 0.9, n=400, m0=60, m1=80,
                             system=["a", "b", "c"], random_seed=3)  # fmt: skip
    table = bj.fit(one, method="exact", random_seed=7).summary()
    assert set(table.variable) == {"theta", "q0", "q1", "youden"}
    assert draw_calls == []
    fit = bj.fit(_counts(), method="exact", random_seed=7)
    fit.summary(var_names=["theta", "q0", "q1", "youden"])
    assert draw_calls == []
    assert fit.diagnostics()["draws"] == 4000 and draw_calls == []
    assert "method='exact'" in repr(fit) and draw_calls == []
    assert fit.posterior["theta"].shape == (4, 1000, 3, 2)
    assert draw_calls == [4000]
    fit.posterior, fit.tree  # noqa: B018 — made once, then kept
    assert draw_calls == [4000]
    assert next(iter(fit.tree.children)) == "posterior"


def test_summary_equals_the_exact_marginals():
    """summary() of θ, q0, q1 and youden equals the exact marginals' mean, sd, quantiles and
    HDI computed directly with exact_marginals (same grids: to 1e-12)."""
    counts = _counts()
    fit = bj.fit(counts, method="exact", random_seed=7)
    table = fit.summary(ci_prob=0.9, as_xarray=True)
    marginals = exact_marginals(*_data(counts), variables=("theta", "q0", "q1", "youden"))
    for name, m in marginals.items():
        ds = table[name].dataset
        assert ds["mean"].dims == ("system", "stratum")
        np.testing.assert_allclose(ds["mean"], m.mean(), rtol=0, atol=1e-12)
        np.testing.assert_allclose(ds["sd"], m.sd(), rtol=0, atol=1e-12)
        np.testing.assert_allclose(ds["median"], m.quantile(0.5), rtol=0, atol=1e-12)
        np.testing.assert_allclose(ds["eti"].sel(ci_bound="lower"), m.quantile(0.05), atol=1e-12)
        np.testing.assert_allclose(ds["eti"].sel(ci_bound="upper"), m.quantile(0.95), atol=1e-12)
        lo, hi = hdi(m, 0.9)
        np.testing.assert_allclose(ds["hdi"].sel(ci_bound="lower"), lo, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ds["hdi"].sel(ci_bound="upper"), hi, rtol=0, atol=1e-12)
        assert np.all(ds["ess_bulk"] == 4000) and np.all(ds["r_hat"] == 1.0)
        assert ds.attrs == {"ci_prob": 0.9, "ci_kind": "eti and hdi"}


def test_summary_does_not_depend_on_whether_the_draws_exist():
    """The same table before and after the draws are made (layout, values, attrs)."""
    lazy = bj.fit(_counts(), method="exact", random_seed=7)
    before = lazy.summary()
    lazy.posterior  # noqa: B018
    after = lazy.summary()
    drawn_first = bj.fit(_counts(), method="exact", random_seed=7)
    drawn_first.posterior  # noqa: B018
    for other in (after, drawn_first.summary()):
        assert list(other.columns) == list(before.columns)
        assert other.attrs == before.attrs
        np.testing.assert_array_equal(other.to_numpy(), before.to_numpy())


def test_lazy_draws_are_reproducible_from_the_seed():
    """The same seed gives the same draws whether they are made before or after summary(),
    and they are exact_draws(…, rng=seed) of the counts."""
    counts = _counts()
    first = bj.fit(counts, method="exact", random_seed=11)
    first_post = first.posterior
    second = bj.fit(counts, method="exact", random_seed=11)
    second.summary()
    second_post = second.posterior
    for v in ("theta", "q0", "q1", "youden", "p", "theta_total"):
        np.testing.assert_array_equal(first_post[v].values, second_post[v].values)
    direct = exact_draws(*_data(counts), size=4000, rng=11)
    np.testing.assert_array_equal(first_post["theta"].values.reshape(4000, 3, 2), direct["theta"])
    other = bj.fit(counts, method="exact", random_seed=12).posterior
    assert not np.array_equal(other["theta"].values, first_post["theta"].values)


def test_lazy_draws_follow_the_exact_marginals():
    """KS test of the Fit's lazily made θ, q0, q1 and youden draws (N = 20,000 per group)
    against the exact marginal CDFs."""
    counts = bj.simulate_counts([0.2, 0.7], 0.8, 0.85, n=800, m0=70, m1=90,
                                system=["a", "b"], random_seed=5)  # fmt: skip
    fit = bj.fit(counts, method="exact", random_seed=SEED, draws=5000)
    post = fit.posterior
    for name in ("theta", "q0", "q1", "youden"):
        m = fit._exact_marginal(name)
        for i in range(2):
            x = post[name].isel(system=i, stratum=0).values.ravel()
            assert x.size == KS_N
            sub = type(m)(m.grid[i, 0], m.density[i, 0], m.cdf_values[i, 0])
            d = stats.kstest(x, sub.cdf).statistic
            assert d < KS_BOUND, (name, i, d)


def test_test_set_estimand_and_random_design_keep_working():
    """Draws are made where the summary needs them: the test-set θ, and youden under the
    random design (no flat θ prior: youden from the draws, as before)."""
    counts = bj.JudgeCounts.from_counts(n=900, k=500, m0=40, tn=32, m1=60, tp=54,
                                        design="random")  # fmt: skip
    fit = bj.fit(counts, method="exact", random_seed=1)
    assert "youden_grid" not in fit.tree["exact"].dataset
    table = fit.summary(var_names=["youden"], as_xarray=True)["youden"].dataset
    x = fit.posterior["youden"].values.ravel()
    assert float(table["mean"].squeeze()) == pytest.approx(x.mean(), rel=1e-12)
    test_set = bj.fit(counts, method="exact", estimand="test-set", random_seed=1)
    assert "theta_test" in test_set.summary().variable.values


# ----------------------------------------------------------------------------- youden marginal

# (n, k, m0, tn, m1, tp): small enough for the exact latent mixture, incl. the boundaries.
YOUDEN_CASES = {
    "n=150": (150, 70, 10, 7, 12, 10),
    "tp=m1": (200, 80, 30, 22, 30, 30),
    "k=0": (300, 0, 60, 42, 60, 54),  # conflicting: the survival form of F_P
    "k=n": (200, 200, 30, 22, 30, 27),
    "weak": (120, 70, 4, 3, 5, 4),
}


def _mixture_jcdf(mix: LatentMixture, j: np.ndarray, nodes: int = 64) -> np.ndarray:
    x, w = np.polynomial.legendre.leggauss(nodes)
    v, w = (x + 1) / 2, w / 2
    (a0, b0), (a1, b1) = mix.params["q0"], mix.params["q1"]
    q1 = special.betaincinv(a1[:, None], b1[:, None], v[None, :])
    return np.array([
        mix.weights @ (special.betainc(a0[:, None], b0[:, None], np.clip(t + 1 - q1, 0, 1)) @ w)
        for t in j
    ])  # fmt: skip


@pytest.mark.parametrize("name", list(YOUDEN_CASES))
def test_youden_marginal_matches_the_exact_mixture(name):
    """The exact mixture's CDF at the engine's 0.5 %, 2.5 %, 50 %, 97.5 %, 99.5 % quantiles
    of J is those probabilities to 1e-4 / density (a quantile error < 1e-4; measured ≤ 2e-5),
    and the means agree to 1e-5 (measured ≤ 1.4e-6, at tp = m1)."""
    n, k, m0, tn, m1, tp = YOUDEN_CASES[name]
    m = exact_marginals(k, n, tn, m0, tp, m1, variables=("youden",))["youden"]
    mix = LatentMixture(n, k, m0, tn, m1, tp)
    probs = np.array([0.005, 0.025, 0.5, 0.975, 0.995])
    q = m.quantile(probs)
    dens = (m.cdf(q + 1e-6) - m.cdf(q - 1e-6)) / 2e-6
    err = np.abs(_mixture_jcdf(mix, q) - probs) / dens
    assert err.max() < 1e-4, err
    mean = {v: mix.params[v][0] / (mix.params[v][0] + mix.params[v][1]) for v in ("q0", "q1")}
    assert float(m.mean()) == pytest.approx(float(mix.weights @ (mean["q0"] + mean["q1"] - 1)),
                                            abs=1e-5)  # fmt: skip


@pytest.mark.parametrize(
    "data, priors",
    [
        ((20000, 9000, 30, 20, 30, 27), {}),  # n ≫ m
        ((1000, 400, 100, 70, 100, 100), {}),  # tp = m1
        ((300, 100, 40, 30, 0, 0), {"q1_prior": 0.9}),  # known q1: q0 shifted
        ((800, 250, 0, 0, 0, 0), {"q0_prior": 0.85, "q1_prior": 0.75}),  # a point mass
    ],
)
def test_youden_marginal_matches_the_draws(data, priors):
    """KS test of J from exact_draws (N = 20,000) against the youden marginal's CDF."""
    n, k, m0, tn, m1, tp = data
    m = exact_marginals(k, n, tn, m0, tp, m1, variables=("youden",), **priors)["youden"]
    d = exact_draws(k, n, tn, m0, tp, m1, size=KS_N, rng=SEED, **priors)
    j = d["q0"] + d["q1"] - 1
    if m.known:
        np.testing.assert_allclose(j, m.grid[0], atol=1e-15)
        return
    assert stats.kstest(j, m.cdf).statistic < KS_BOUND


def test_youden_marginal_needs_the_flat_theta_prior():
    with pytest.raises(ValueError, match=r"youden.*flat"):
        exact_marginals(400, 1000, 70, 100, 90, 100, variables=("youden",), theta_prior=(2, 2))
