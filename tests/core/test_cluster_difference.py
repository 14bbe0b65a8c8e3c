"""Tests of the cluster-aware Δθ between systems (repeated verdicts of an item).

References, each independent of ``bayesjudge.core.cluster``'s difference functions:

* with one verdict per item the cluster-robust Δθ is the unpaired
  :func:`bayesjudge.core.kernels.rg_difference_delta` (the independent-item Δθ of
  ``compare(method="delta")``) with the test term times N/(N−1) (the CR1 factor);
* the delta-method variance written as an infinitesimal jackknife: Δθ̂ as a function of one
  weight per item (test and labelled), its derivative with respect to each weight by the
  complex step (exact to round-off), ``N/(N−1) Σᵢ (∂Δ/∂wᵢ)²`` over each system's test items
  plus ``Σⱼ (∂Δ/∂wⱼ)²`` over labelled items; shared calibration enters both θ̂ through the
  same weights, so no formula of the module is reused;
* the exact bootstrap distributions of Δθ* for tiny designs, enumerated with scipy
  (multinomial item draws; binomial calibration draws of one shared set);
* by simulation (``simulate_cluster_tables``, fixed seeds, 3 Monte Carlo SE bands): the
  cluster Δθ covers at the nominal rate where counting verdicts as items does not;
* ``cluster_wilson``'s limits solve Wilson's score equation at the effective size computed
  item by item; the effective counts fed to the binomial kernel ``rg_difference_delta`` give
  the cluster-robust Δθ.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from bayesjudge.core.cluster import (
    calibration_effective_counts,
    cluster_bootstrap_difference,
    cluster_delta,
    cluster_difference_delta,
    cluster_wilson,
    effective_counts,
)
from bayesjudge.core.kernels import rg_difference_delta
from bayesjudge.simulate import simulate_cluster_tables, simulate_labelled_cluster_tables


def table_of(items, size):
    """Cluster table (size, size + 1) of a list of (r, k) items, tallied here by hand."""
    out = np.zeros((size, size + 1), dtype=np.int64)
    for r, k in items:
        out[r - 1, k] += 1
    return out


def items_of(table):
    """The (r, k) items of a cluster table, one entry per item (the inverse of table_of)."""
    return [
        (r + 1, k) for r in range(table.shape[0]) for k in range(table.shape[1])
        for _ in range(int(table[r, k]))
    ]  # fmt: skip


# ---------------------------------------------------------- one verdict per item: the kernel


@pytest.mark.parametrize("shared", [False, True])
def test_one_verdict_per_item_is_the_independent_item_delta_with_factor(shared):
    n, k = 400, np.array([250, 210])  # equal n: one factor n/(n-1) for both test terms
    tables = np.stack([np.array([[n - kk, kk]]) for kk in k])
    if shared:
        cal = (160, 200, 180, 200)
        res = cluster_difference_delta(tables, *cal, shared_calibration=True, alpha=0.1)
        ref = rg_difference_delta((0, 0, 0, 0), (k[0], n, k[1], n), cal)
    else:
        cal = (np.array([160, 150]), np.array([200, 190]), np.array([180, 170]), 200)
        res = cluster_difference_delta(tables, *cal, alpha=0.1)
        ref = rg_difference_delta(
            (0, 0, 0, 0), (k[0], n, k[1], n), (160, 200, 180, 200), (150, 190, 170, 200)
        )
    assert res.estimate[0] == pytest.approx(ref.estimate, rel=1e-12)
    assert res.var_calibration[0] == pytest.approx(ref.var_calibration, rel=1e-12)
    assert res.var_test[0] == pytest.approx(n / (n - 1) * ref.var_test, rel=1e-12)
    z = stats.norm.ppf(0.95)
    assert res.lower[0] == pytest.approx(res.estimate[0] - z * res.se[0], rel=1e-12)


def test_separate_calibration_is_the_sum_of_the_two_cluster_delta_variances():
    rng = np.random.default_rng(3)
    tables = np.stack([table_of([(3, int(x)) for x in rng.integers(0, 4, 80)], 3)
                       for _ in range(2)])  # fmt: skip
    cal = ([60, 55], [80, 70], [70, 60], [80, 75])
    res = cluster_difference_delta(tables, *cal)
    z = stats.norm.ppf(0.975)
    var = 0.0
    for s in range(2):
        one = cluster_delta(tables[s], *(c[s] for c in cal))
        var += ((one.upper - one.lower) / (2 * z)) ** 2  # neither end is clipped here
    assert res.se[0] ** 2 == pytest.approx(var, rel=1e-12)


# ------------------------------------------------- the variance as an infinitesimal jackknife


def _delta_of_weights(test_items, cal_items, shared, weights):
    """Δθ (unclipped Rogan–Gladen) of weighted items; complex weights welcome."""
    it = iter(weights)
    p = []
    for items in test_items:
        w = np.array([next(it) for _ in items])
        r = np.array([ri for ri, _ in items], dtype=float)
        k = np.array([ki for _, ki in items], dtype=float)
        p.append((w * k).sum() / (w * r).sum())
    q = []
    for truth0, truth1 in cal_items:
        w0 = np.array([next(it) for _ in truth0])
        w1 = np.array([next(it) for _ in truth1])
        r0, k0 = (np.array(v, dtype=float) for v in zip(*truth0, strict=True))
        r1, k1 = (np.array(v, dtype=float) for v in zip(*truth1, strict=True))
        q.append(((w0 * (r0 - k0)).sum() / (w0 * r0).sum(), (w1 * k1).sum() / (w1 * r1).sum()))
    if shared:
        q = [q[0], q[0]]
    theta = [(pp + q0 - 1) / (q0 + q1 - 1) for pp, (q0, q1) in zip(p, q, strict=True)]
    return theta[0] - theta[1]


def _jackknife_variance(test_items, cal_items, shared):
    sizes = [len(i) for i in test_items] + [len(t) for pair in cal_items for t in pair]
    total, h = sum(sizes), 1e-30
    grad = np.empty(total)
    for i in range(total):
        w = np.ones(total, dtype=complex)
        w[i] += 1j * h
        grad[i] = _delta_of_weights(test_items, cal_items, shared, w).imag / h
    var, start = 0.0, 0
    for s, size in enumerate(sizes):
        part = (grad[start : start + size] ** 2).sum()
        var += part * (size / (size - 1) if s < len(test_items) else 1.0)
        start += size
    return var


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("labelled_repeats", [False, True])
def test_variance_is_the_infinitesimal_jackknife(shared, labelled_repeats):
    rng = np.random.default_rng(20261127)
    size = 4
    test_items = [
        [(int(r), int(rng.binomial(r, pi))) for r, pi in
         zip(rng.integers(1, size + 1, n), rng.beta(a, 1.5, n), strict=True)]
        for n, a in ((37, 3.0), (29, 1.2))
    ]  # fmt: skip
    tables = np.stack([table_of(items, size) for items in test_items])
    n_sets = 1 if shared else 2
    cal_items = []
    for _ in range(n_sets):
        reps = (lambda: int(rng.integers(1, size + 1))) if labelled_repeats else (lambda: 1)
        truth0 = [(r, int(rng.binomial(r, 0.25))) for r in (reps() for _ in range(23))]
        truth1 = [(r, int(rng.binomial(r, 0.85))) for r in (reps() for _ in range(31))]
        cal_items.append((truth0, truth1))
    cal_tables = np.stack(
        [np.stack([table_of(t0, size), table_of(t1, size)]) for t0, t1 in cal_items]
    )
    tn = np.array([sum(r - k for r, k in t0) for t0, _ in cal_items])
    m0 = np.array([sum(r for r, _ in t0) for t0, _ in cal_items])
    tp = np.array([sum(k for _, k in t1) for _, t1 in cal_items])
    m1 = np.array([sum(r for r, _ in t1) for _, t1 in cal_items])
    if shared:
        tn, m0, tp, m1, cal_tables = tn[0], m0[0], tp[0], m1[0], cal_tables[0]
    res = cluster_difference_delta(
        tables, tn, m0, tp, m1, shared_calibration=shared,
        calibration_tables=cal_tables if labelled_repeats else None,
    )  # fmt: skip
    w = np.ones(sum(len(i) for i in test_items) + sum(len(t) for p in cal_items for t in p))
    assert res.estimate[0] == pytest.approx(
        _delta_of_weights(test_items, cal_items, shared, w), rel=1e-12
    )
    assert res.se[0] ** 2 == pytest.approx(
        _jackknife_variance(test_items, cal_items, shared), rel=1e-10
    )


# --------------------------------------------------------- the bootstrap: exact distributions


def _bracketed(values, cdf, limit, level, n_resamples):
    """The exact CDF around a reported percentile brackets its level (binomial SE tolerance)."""
    tol = 4 * np.sqrt(level * (1 - level) / n_resamples)
    # np.quantile interpolates between two neighbouring order statistics: the support points
    # at or just below (i) and at or just above (j) the limit.
    i = int(np.flatnonzero(values <= limit + 1e-12)[-1])
    j = int(np.flatnonzero(values >= limit - 1e-12)[0])
    return cdf[j] >= level - tol and (i == 0 or cdf[i - 1] <= level + tol)


def test_bootstrap_resamples_each_systems_items_with_their_verdicts():
    # Perfect calibration (tn = m0, tp = m1: every draw is perfect), so Δθ* = p*_a − p*_b.
    items = ([(1, 0), (2, 2), (3, 1)], [(2, 1), (3, 3), (1, 0)])
    tables = np.stack([table_of(i, 3) for i in items])
    outcomes = []
    for side in items:
        dist = {}
        for c in itertools.product(range(4), repeat=3):
            if sum(c) == 3:
                prob = stats.multinomial.pmf(c, 3, [1 / 3] * 3)
                p = sum(ci * k for ci, (_, k) in zip(c, side, strict=True)) / sum(
                    ci * r for ci, (r, _) in zip(c, side, strict=True)
                )
                dist[p] = dist.get(p, 0.0) + prob
        outcomes.append(dist)
    support = {}
    for (pa, wa), (pb, wb) in itertools.product(outcomes[0].items(), outcomes[1].items()):
        key = round(pa - pb, 12)
        support[key] = support.get(key, 0.0) + wa * wb
    values = np.array(sorted(support))
    cdf = np.cumsum([support[v] for v in values])
    alpha, b = 0.2, 40_000
    res = cluster_bootstrap_difference(
        tables, 10, 10, 10, 10, shared_calibration=True, alpha=alpha, n_resamples=b,
        random_seed=1,
    )  # fmt: skip
    assert _bracketed(values, cdf, res.lower[0], alpha / 2, b)
    assert _bracketed(values, cdf, res.upper[0], 1 - alpha / 2, b)
    assert res.estimate[0] == pytest.approx(3 / 6 - 4 / 6)


def test_bootstrap_draws_one_shared_calibration_per_replicate():
    # Every test item alike within a system: p* is fixed, only the one calibration set
    # varies, so Δθ* = clip(θ_a*) − clip(θ_b*) with the same (tn*, tp*) in both θ*.
    m0, m1, tn, tp = 20, 20, 16, 17
    tables = np.stack([table_of([(4, 3)] * 60, 4), table_of([(4, 1)] * 60, 4)])
    pa, pb = 0.75, 0.25
    support = {}
    for tn_s, tp_s in itertools.product(range(m0 + 1), range(m1 + 1)):
        prob = stats.binom.pmf(tn_s, m0, tn / m0) * stats.binom.pmf(tp_s, m1, tp / m1)
        j = tn_s / m0 + tp_s / m1 - 1
        if abs(j) < 1e-12:
            key = np.nan
        else:
            ta = np.clip((pa + tn_s / m0 - 1) / j, 0, 1)
            tb = np.clip((pb + tn_s / m0 - 1) / j, 0, 1)
            key = round(float(ta - tb), 12)
        support[key] = support.get(key, 0.0) + prob
    nan_mass = sum(v for k, v in support.items() if np.isnan(k))
    # Not identified draws (J* = 0) count at the ends: their mass (2e-6 here) is far below
    # the bracketing tolerance (4 binomial SE of a quantile of 40,000 draws, 6e-3).
    assert nan_mass < 1e-5
    values = np.array(sorted(k for k in support if not np.isnan(k)))
    cdf = np.cumsum([support[v] for v in values])
    alpha, b = 0.2, 40_000
    res = cluster_bootstrap_difference(
        tables, tn, m0, tp, m1, shared_calibration=True, alpha=alpha, n_resamples=b,
        random_seed=2,
    )  # fmt: skip
    assert _bracketed(values, cdf, res.lower[0], alpha / 2, b)
    assert _bracketed(values, cdf, res.upper[0], 1 - alpha / 2, b)
    # Separate sets (each system its own copy) vary independently: a wider interval.
    sep = cluster_bootstrap_difference(
        tables, tn, m0, tp, m1, alpha=alpha, n_resamples=4000, random_seed=2
    )
    assert sep.upper[0] - sep.lower[0] > 1.1 * (res.upper[0] - res.lower[0])


def test_bootstrap_with_one_verdict_per_labelled_item_ignores_the_tables():
    tables = np.stack([table_of([(3, 1)] * 20 + [(3, 3)] * 30, 3),
                       table_of([(3, 0)] * 25 + [(3, 2)] * 25, 3)])  # fmt: skip
    cal_tables = np.stack([table_of([(1, 0)] * 40 + [(1, 1)] * 10, 3),
                           table_of([(1, 1)] * 45 + [(1, 0)] * 5, 3)])  # fmt: skip
    kw = {"shared_calibration": True, "n_resamples": 1000, "random_seed": 9}
    a = cluster_bootstrap_difference(tables, 40, 50, 45, 50, calibration_tables=cal_tables, **kw)
    b = cluster_bootstrap_difference(tables, 40, 50, 45, 50, **kw)
    assert (a.lower, a.upper) == (b.lower, b.upper)


def test_bootstrap_agrees_with_the_delta_method_on_a_large_design():
    draws = [simulate_cluster_tables(t, 0.8, 0.9, 600, 300, 300, epochs=3, icc=0.3,
                                     random_seed=s) for t, s in ((0.6, 1), (0.45, 2))]  # fmt: skip
    tables = np.concatenate([d["table"] for d in draws])
    cal = tuple(np.concatenate([d[v] for d in draws]) for v in ("tn", "m0", "tp", "m1"))
    delta = cluster_difference_delta(tables, *cal)
    boot = cluster_bootstrap_difference(tables, *cal, n_resamples=4000, random_seed=3)
    # The SD of 4000 replicates carries ~1.1 % Monte Carlo error; the delta method's
    # linearisation error at these sizes is of the same order.
    assert boot.se[0] == pytest.approx(delta.se[0], rel=0.06)
    assert boot.estimate[0] == pytest.approx(delta.estimate[0], abs=1e-12)


# ------------------------------------------------------------------- coverage by simulation


def _two_systems(theta_a, theta_b, reps, seed, labelled=False):
    """Simulated clustered data of two systems (reps, 2, ...), separate calibration sets."""
    make = simulate_labelled_cluster_tables if labelled else simulate_cluster_tables
    m = 30 if labelled else 100
    draws = [make(t, 0.8, 0.9, 200, m, m, epochs=5, icc=0.5, size=reps, random_seed=seed + i)
             for i, t in enumerate((theta_a, theta_b))]  # fmt: skip
    out = {v: np.stack([d[v] for d in draws], axis=1) for v in ("table", "tn", "tp")}
    for v in ("m0", "m1"):
        out[v] = np.stack([np.broadcast_to(d[v], (reps,)) for d in draws], axis=1)
    if labelled:
        out["calibration_tables"] = np.stack([d["calibration_tables"] for d in draws], axis=1)
    return out


def _as_verdicts(table):
    """Every verdict an item: the one-row cluster table of the verdict totals."""
    r = np.arange(1, table.shape[-2] + 1)[:, None]
    k = np.arange(table.shape[-1])[None, :]
    pos, n = (table * k).sum(axis=(-2, -1)), (table * r).sum(axis=(-2, -1))
    return np.stack([n - pos, pos], axis=-1)[..., None, :]


@pytest.mark.parametrize("shared", [False, True])
def test_cluster_difference_covers_where_verdicts_as_items_do_not(shared):
    reps, truth = 2000, 0.6 - 0.5
    d = _two_systems(0.6, 0.5, reps, seed=40 if shared else 50)
    cal = [d[v] for v in ("tn", "m0", "tp", "m1")]
    if shared:  # system a's calibration set, shared by both
        cal = [c[:, 0] for c in cal]
    band = 3 * np.sqrt(0.95 * 0.05 / reps)
    res = cluster_difference_delta(d["table"], *cal, shared_calibration=shared)
    cover = np.mean((res.lower[:, 0] <= truth) & (truth <= res.upper[:, 0]))
    naive = cluster_difference_delta(_as_verdicts(d["table"]), *cal, shared_calibration=shared)
    naive_cover = np.mean((naive.lower[:, 0] <= truth) & (truth <= naive.upper[:, 0]))
    assert abs(cover - 0.95) <= band, cover
    assert naive_cover < 0.95 - band, naive_cover


def test_labelled_repeats_need_the_calibration_tables_to_cover():
    reps, truth = 2000, 0.1
    d = _two_systems(0.6, 0.5, reps, seed=60, labelled=True)
    cal = [d[v] for v in ("tn", "m0", "tp", "m1")]
    band = 3 * np.sqrt(0.95 * 0.05 / reps)
    res = cluster_difference_delta(d["table"], *cal, calibration_tables=d["calibration_tables"])
    cover = np.mean((res.lower[:, 0] <= truth) & (truth <= res.upper[:, 0]))
    naive = cluster_difference_delta(d["table"], *cal)  # labelled verdicts as labelled items
    naive_cover = np.mean((naive.lower[:, 0] <= truth) & (truth <= naive.upper[:, 0]))
    assert abs(cover - 0.95) <= band, cover
    assert naive_cover < 0.95 - band, naive_cover


@pytest.mark.slow
@pytest.mark.parametrize("shared", [False, True])
def test_cluster_bootstrap_difference_covers(shared):
    reps, truth = 400, 0.1
    d = _two_systems(0.6, 0.5, reps, seed=70 if shared else 80)
    cal = [d[v] for v in ("tn", "m0", "tp", "m1")]
    if shared:
        cal = [c[:, 0] for c in cal]
    res = cluster_bootstrap_difference(
        d["table"], *cal, shared_calibration=shared, n_resamples=1000, random_seed=1
    )
    naive = cluster_bootstrap_difference(
        _as_verdicts(d["table"]), *cal, shared_calibration=shared, n_resamples=1000,
        random_seed=1,
    )  # fmt: skip
    band = 3 * np.sqrt(0.95 * 0.05 / reps)
    cover = np.mean((res.lower[:, 0] <= truth) & (truth <= res.upper[:, 0]))
    naive_cover = np.mean((naive.lower[:, 0] <= truth) & (truth <= naive.upper[:, 0]))
    assert abs(cover - 0.95) <= band, cover
    assert naive_cover < 0.95 - band, naive_cover


# ------------------------------------------------------------------------------ bad input


def test_bad_input_is_refused():
    tables = np.stack([table_of([(2, 1)] * 5, 2), table_of([(2, 2)] * 5, 2)])
    with pytest.raises(ValueError, match="one cluster table per system"):
        cluster_difference_delta(tables[0], 5, 10, 5, 10)
    with pytest.raises(ValueError, match="must broadcast to"):
        cluster_difference_delta(tables, [5, 5, 5], 10, 5, 10)
    with pytest.raises(ValueError, match="for system 1 is not identified"):
        cluster_difference_delta(tables, [8, 5], 10, [8, 5], 10)
    with pytest.raises(ValueError, match="pairs must be positions"):
        cluster_difference_delta(tables, 8, 10, 8, 10, pairs=[(0, 2)])
    with pytest.raises(ValueError, match="do not add up to m0"):
        cal_tables = [table_of([(1, 0)] * 8 + [(1, 1)] * 2, 2),
                      table_of([(1, 1)] * 8 + [(1, 0)] * 2, 2)]  # fmt: skip
        cluster_difference_delta(
            tables, 8, 11, 8, 10, shared_calibration=True, calibration_tables=cal_tables
        )


# ------------------------------------------- the naive column and the effective counts


def test_cluster_wilson_solves_the_score_equation_at_the_effective_size():
    items = [(3, 3)] * 20 + [(3, 0)] * 15 + [(2, 1)] * 10 + [(1, 1)] * 5
    table = table_of(items, 3)
    r = np.array([ri for ri, _ in items], dtype=float)
    k = np.array([ki for _, ki in items], dtype=float)
    p = k.sum() / r.sum()
    var = len(items) / (len(items) - 1) * np.sum((k - p * r) ** 2) / r.sum() ** 2
    size = p * (1 - p) / var
    res = cluster_wilson(table, alpha=0.1)
    z = stats.norm.ppf(0.95)
    assert res.estimate == pytest.approx(p, rel=1e-14)
    for limit in (res.lower, res.upper):  # Wilson: (p − π)² = z² π(1 − π) / n
        assert (p - limit) ** 2 == pytest.approx(z**2 * limit * (1 - limit) / size, rel=1e-10)
    assert res.lower < p < res.upper


def test_effective_counts_turn_the_binomial_delta_method_into_the_cluster_one():
    rng = np.random.default_rng(8)
    tables = np.stack([table_of([(3, int(x)) for x in rng.integers(0, 4, 90)], 3)
                       for _ in range(2)])  # fmt: skip
    cal_tables = np.stack(
        [np.stack([table_of([(2, int(x)) for x in rng.binomial(2, 0.2, 40)], 3),
                   table_of([(2, int(x)) for x in rng.binomial(2, 0.9, 45)], 3)])
         for _ in range(2)]
    )  # fmt: skip
    cal = [np.array(v) for v in zip(*(
        (int((2 - np.arange(4)) @ t[0, 1]), int(2 * t[0].sum()), int(np.arange(4) @ t[1, 1]),
         int(2 * t[1].sum())) for t in cal_tables), strict=True)]  # fmt: skip
    res = cluster_difference_delta(tables, *cal, calibration_tables=cal_tables)
    k_eff, n_eff = effective_counts(tables)
    eff = calibration_effective_counts(cal_tables)
    ref = rg_difference_delta(
        (0, 0, 0, 0), (k_eff[0], n_eff[0], k_eff[1], n_eff[1]),
        tuple(e[0] for e in eff), tuple(e[1] for e in eff),
    )  # fmt: skip
    assert res.se[0] == pytest.approx(ref.se, rel=1e-12)
    assert res.estimate[0] == pytest.approx(ref.estimate, rel=1e-12)
    one = np.stack([table_of([(1, 0)] * 30 + [(1, 1)] * 10, 1),
                    table_of([(1, 1)] * 25 + [(1, 0)] * 5, 1)])  # fmt: skip
    np.testing.assert_allclose(calibration_effective_counts(one), (30, 40, 25, 30), rtol=1e-12)
