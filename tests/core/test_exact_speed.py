"""The exact engine's fast paths equal the computations they replace (issue 13, item 18).

Each speed-up of ``bayesjudge.core.exact`` is checked against an independent computation of
the same quantity:

* threads: ``exact_marginals(mapper=ThreadPoolExecutor(2).map)`` against one thread, bit
  for bit (each block of groups is computed as it would be alone);
* the θ density's node sum in linear space with scaled values (``_log_node_sum``) against
  the log-space sum (``_log_node_sum_slow``, the former method), to 1e-12 — on random nodes
  including values outside [0, 1], a zero exponent (Beta(1, b)) and pairs far in the tail;
* the q marginals' linear-space sum of M (``_log_m_flat_sum``) against the log-space
  ``_log_m_flat`` and a log-sum-exp, to 1e-12 (relative to the density);
* the survival function as I_{1−x}(b, a) (``_cdf_sf``) against scipy's ``betaincc``, to
  1e-12 relative (measured ≤ 1.3e-13);
* the HDI by Newton's method on f(Q(α + p)) = f(Q(α)) against the scan over α
  (``_hdi_scan``, the former method) with 14 rounds, to 2e-8 [measured 5e-9: the scan's own
  limit, see the test], never wider (to rounding), with ends of equal density and
  probability p;
* the closed-form moments of the cubic Hermite CDF against Gauss-Legendre integrals of
  the cubic (``_hermite_eval``, its own evaluation code) per grid cell, to 1e-12.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy import integrate, special

import bayesjudge as bj
from bayesjudge.core import exact as ex
from bayesjudge.core.exact import exact_marginals, hdi
from bayesjudge.models import fit as fit_module

SEED = 20261128


def _groups(size: int = 40, seed: int = SEED):
    """Counts of ``size`` groups over several regimes (n ≫ m, m ≫ n, tp = m1, small n)."""
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.05, 0.95, size)
    q0, q1 = rng.uniform(0.6, 0.97, size), rng.uniform(0.6, 0.97, size)
    n = rng.choice([40, 300, 1000, 5000, 20000], size)
    m0, m1 = rng.choice([20, 60, 100, 400], size), rng.choice([20, 60, 100, 400], size)
    k = rng.binomial(n, theta * q1 + (1 - theta) * (1 - q0))
    tn, tp = rng.binomial(m0, q0), rng.binomial(m1, q1)
    tp[:3] = m1[:3]  # q1's Beta cut off at 1: its HDI ends at the grid's end
    return k, n, tn, m0, tp, m1


VARIABLES = ("theta", "q0", "q1", "youden")


def test_threads_give_the_same_marginals_bit_for_bit(monkeypatch):
    """Two threads over blocks of 16 groups (so that there are several blocks) equal one."""
    monkeypatch.setattr(ex, "_CHUNK", 16)
    monkeypatch.setattr(ex, "_YOUDEN_CHUNK", 16)
    data = _groups(50)
    one = exact_marginals(*data, variables=VARIABLES)
    with ThreadPoolExecutor(max_workers=2) as pool:
        two = exact_marginals(*data, variables=VARIABLES, mapper=pool.map)
    for v in VARIABLES:
        for f in ("grid", "density", "cdf_values"):
            np.testing.assert_array_equal(getattr(two[v], f), getattr(one[v], f))


def test_exact_fit_runs_the_engine_on_a_thread_pool(monkeypatch):
    """bj.fit(method="exact") hands the engine a pool's map, and its summary equals that of
    the engine run on one thread."""
    seen = []
    real = fit_module.exact_marginals

    def spy(*args, **kwargs):
        seen.append(kwargs.get("mapper"))
        return real(*args, **kwargs)

    monkeypatch.setattr(fit_module, "exact_marginals", spy)
    counts = bj.simulate_counts([0.2, 0.5, 0.8], 0.8, 0.85, n=600, m0=70, m1=90,
                                system=["a", "b", "c"], random_seed=4)  # fmt: skip
    table = bj.fit(counts, method="exact", random_seed=1).summary(as_xarray=True)
    assert callable(seen[0])
    data = [counts.dataset[v].values for v in ("k", "n", "tn", "m0", "tp", "m1")]
    direct = exact_marginals(*data, variables=VARIABLES)
    for name in VARIABLES:
        np.testing.assert_array_equal(table[name].dataset["mean"].values, direct[name].mean())


@pytest.mark.parametrize("mapper", [2, "map"])
def test_mapper_must_be_callable(mapper):
    with pytest.raises(ValueError, match=r"mapper must be a map-like callable"):
        exact_marginals(400, 1000, 70, 100, 90, 100, mapper=mapper)


def _node_inputs(rng, pairs: int = 300, nodes: int = 7):
    row = rng.uniform(-0.2, 1.1, (pairs, 1)) + rng.normal(0, 0.05, (pairs, nodes))
    col = rng.normal(0, 0.03, (pairs, nodes))
    row[:60] = np.clip(row[:60], 0.3, 0.6)  # wholly inside (0, 1)
    lwi, lwj = rng.normal(-2, 3, (pairs, nodes)), rng.normal(-2, 3, (pairs, nodes))
    return row, 1 - row, col, lwi, lwj


@pytest.mark.parametrize("ab", [(401.0, 601.0), (1.0, 30.0), (25.0, 1.0), (3.0, 2.0)])
def test_theta_node_sum_equals_the_log_space_sum(ab):
    """_log_node_sum (linear, scaled) equals _log_node_sum_slow (log-sum-exp) to 1e-12 on
    random node values: inside, across and outside [0, 1], for densities with a zero
    exponent (Beta(1, 30), Beta(25, 1)) and a narrow one (Beta(401, 601), where most
    pairs lie hundreds of nats in its tail)."""
    rng = np.random.default_rng(SEED)
    row, row1, col, lwi, lwj = _node_inputs(rng)
    beta = ex._Beta(np.array([ab[0]]), np.array([ab[1]]))
    g = np.zeros(row.shape[0], int)
    fast = ex._log_node_sum(beta, g, row, row1, col, lwi, lwj)
    slow = ex._log_node_sum_slow(beta, g, row, row1, col, lwi, lwj)
    finite = np.isfinite(slow)
    assert finite.sum() > 150  # most pairs have mass: the comparison is not vacuous
    np.testing.assert_array_equal(np.isfinite(fast), finite)
    np.testing.assert_allclose(fast[finite], slow[finite], rtol=0, atol=1e-12)
    # Independently of both: scipy's Beta density summed in plain floating point (pairs
    # whose terms do not underflow).
    v = row[:, :, None] + col[:, None, :]
    dens = np.where(
        (v >= 0) & (v <= 1),
        np.exp(special.xlogy(ab[0] - 1, v) + special.xlog1py(ab[1] - 1, -v) - special.betaln(*ab)),
        0.0,
    )
    with np.errstate(divide="ignore"):
        plain = np.log(np.einsum("kij,ki,kj->k", dens, np.exp(lwi), np.exp(lwj)))
    ok = finite & (plain > -600)
    np.testing.assert_allclose(fast[ok], plain[ok], rtol=0, atol=1e-9)


@pytest.mark.parametrize("which", ["q0", "q1"])
def test_q_node_sum_equals_the_log_space_sum(which):
    """_log_m_flat_sum equals the log-space _log_m_flat with a log-sum-exp, to 1e-12
    relative to the density (the same quantity, log Σ_j w_j M(x_t, y_j)), a group with a
    pair at J = 0 included."""
    rng = np.random.default_rng(SEED)
    size = 30
    a = rng.uniform(2, 900, size)
    P = ex._Beta(a, rng.uniform(2, 900, size))
    x = np.sort(rng.uniform(0.02, 0.98, (size, 41)), axis=1)
    y = np.sort(rng.uniform(0.02, 0.98, (size, 13)), axis=1)
    logw = rng.normal(-3, 2, (size, 13))
    # A node pair with J = 0 exactly (q1 = 1 − q0): that group is summed in log space,
    # where the limit f_P is taken.
    y[0, 6] = 1 - x[0, 20]
    fast = ex._log_m_flat_sum(P, x, y, logw, which)
    slow = ex._logsumexp_w(ex._log_m_flat(P, x, y, which), logw[:, None, :], (2,))
    finite = np.isfinite(slow)
    assert finite.mean() > 0.9
    np.testing.assert_array_equal(np.isfinite(fast), finite)
    np.testing.assert_allclose(fast[finite], slow[finite], rtol=0, atol=1e-12)


def test_survival_function_by_the_swapped_incomplete_beta():
    """_cdf_sf's survival function I_{1−x}(b, a) equals betaincc(a, b, x) to 1e-12
    relative, to 8.5 sd into the upper tail (CDF below the median as before)."""
    rng = np.random.default_rng(SEED)
    for a, b in ((401.0, 601.0), (51.0, 951.0), (19701.0, 301.0), (2.0, 999.0)):
        mean, sd = a / (a + b), np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
        x = np.clip(mean + sd * rng.uniform(-8.5, 8.5, (1, 4000)), 0.0, 1.0)
        cdf, sf = ex._cdf_sf(np.array([[a]]), np.array([[b]]), x, np.array([[mean]]))
        upper = x > mean
        ref = special.betaincc(a, b, x[upper])
        np.testing.assert_allclose(sf[upper], ref, rtol=1e-12, atol=0)
        np.testing.assert_array_equal(cdf[~upper], special.betainc(a, b, x[~upper]))


@pytest.fixture(scope="module")
def marginals():
    return exact_marginals(*_groups(40), variables=VARIABLES)


@pytest.mark.parametrize("name", VARIABLES)
@pytest.mark.parametrize("prob", [0.5, 0.9, 0.95])
def test_hdi_equals_the_scan_and_has_ends_of_equal_density(marginals, name, prob):
    """Newton's HDI equals the scan over α (14 rounds) to 2e-8, is never wider (to 1e-12),
    holds probability ``prob`` and, where the grid density is unimodal, has ends of equal
    density (to 1e-9 of the peak) unless it ends at the grid's end (a density monotone
    there). The scan minimises the width, which is flat in α at its minimum, so rounding
    leaves its α uncertain by ~sqrt(1e-16 W / W'') (measured: ends 5e-9 from Newton's at
    prob 0.5); Newton solves the first-order condition f(lower) = f(upper) itself."""
    m = marginals[name]
    lo, hi = hdi(m, prob)
    alpha = ex._hdi_scan(m, prob, 17, 14)
    slo, shi = m.quantile(alpha), m.quantile(np.minimum(alpha + prob, 1.0))
    np.testing.assert_allclose(lo, slo, rtol=0, atol=2e-8)
    np.testing.assert_allclose(hi, shi, rtol=0, atol=2e-8)
    assert np.all(hi - lo <= shi - slo + 1e-12)
    np.testing.assert_allclose(m.cdf(hi) - m.cdf(lo), prob, rtol=0, atol=1e-9)
    # Groups whose grid density has several peaks take the scan (tp = m1 here: its θ
    # density oscillates on the grid), the others Newton: ends of equal density.
    f_lo, f_hi = ex._pdf(m, lo), ex._pdf(m, hi)
    at_end = (np.abs(lo - m.grid[:, 0]) < 1e-12) | (np.abs(hi - m.grid[:, -1]) < 1e-12)
    peak = m.density.max(axis=1)
    one = ex._unimodal(m)
    assert one.sum() >= 35
    assert np.all(~one | at_end | (np.abs(f_lo - f_hi) <= 1e-9 * peak))


def test_hdi_of_a_monotone_density_ends_at_the_grid_end(marginals):
    """tp = m1 (the first groups): q1's density rises to the grid's end, where the HDI ends."""
    m = marginals["q1"]
    _, hi = hdi(m, 0.95)
    assert np.all(hi[:3] == m.grid[:3, -1])


def test_hdi_of_a_two_peaked_density_takes_the_scan():
    """A density with two peaks (not unimodal) goes to the scan, which finds the narrower
    interval around the higher peak."""
    x = np.linspace(0.0, 1.0, 201)
    dens = np.exp(-0.5 * ((x - 0.3) / 0.03) ** 2) + 0.5 * np.exp(-0.5 * ((x - 0.7) / 0.03) ** 2)
    cdf = integrate.cumulative_simpson(dens, x=x, initial=0.0)
    m = ex.Marginal(x[None, :], (dens / cdf[-1])[None, :], (cdf / cdf[-1])[None, :])
    assert not ex._unimodal(m)[0]
    lo, hi = hdi(m, 0.5)
    alpha = ex._hdi_scan(m, 0.5, 17, 8)
    np.testing.assert_allclose([lo[0], hi[0]], [m.quantile(alpha)[0],
                               m.quantile(alpha + 0.5)[0]], atol=1e-12)  # fmt: skip
    assert 0.25 < lo[0] < hi[0] < 0.4


@pytest.mark.parametrize("name", VARIABLES)
def test_closed_form_moments_equal_an_integral_of_the_cdf(marginals, name):
    """Mean and sd from the closed-form cell integrals equal E X = b − ∫ F and
    E X² = b² − ∫ 2 x F with F = Marginal.cdf (its own evaluation code) integrated by
    5-point Gauss-Legendre per grid cell (exact for the cubic pieces), to 1e-12 (sd 1e-10).
    F is the cubic itself (``_hermite_eval``, which Marginal.cdf evaluates before clipping
    to [0, 1]; the moments integrate the unclipped cubic, whose overshoot, where the grid
    density oscillates (tp = m1), moves the mean by up to 1.4e-7)."""
    m = marginals[name]
    s, w = np.polynomial.legendre.leggauss(5)
    s, w = (s + 1) / 2, w / 2
    for g in range(0, m.grid.shape[0], 3):
        sub = ex.Marginal(m.grid[g : g + 1], m.density[g : g + 1], m.cdf_values[g : g + 1])
        edges = sub.grid[0]
        h = np.diff(edges)
        x = (edges[:-1, None] + h[:, None] * s).ravel()
        j = np.repeat(np.arange(h.size), s.size)
        tables = (np.broadcast_to(v[0], (x.size, v.shape[1]))
                  for v in (sub.grid, sub.cdf_values, sub.density))  # fmt: skip
        f = ex._hermite_eval(*tables, j, x)
        f = f.reshape(h.size, s.size)
        b = edges[-1]
        mean = b - np.sum(h[:, None] * w * f)
        second = b**2 - np.sum(h[:, None] * w * 2 * x.reshape(f.shape) * f)
        assert float(sub.mean()[0]) == pytest.approx(mean, abs=1e-12)
        assert float(sub.sd()[0]) == pytest.approx(np.sqrt(second - mean**2), abs=1e-10)
