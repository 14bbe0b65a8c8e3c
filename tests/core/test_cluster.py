"""Tests of the cluster-aware Rogan–Gladen intervals (repeated verdicts of an item).

References, each independent of ``bayesjudge.core.cluster``:

* with one verdict per item the cluster-robust variance is N/(N−1) times the binomial one,
  so ``cluster_delta`` is Lee et al.'s delta method
  (``bayesjudge.core.correction.delta_method_variance``) with that factor on the test term;
* the ratio-estimator variance written out item by item (a list of (r_i, k_i), not a table);
* the exact bootstrap distribution of p* = Σk*/Σr* for a tiny table, enumerated over all
  multinomial outcomes with ``scipy.stats.multinomial`` (calibration fixed by q0 = q1 = 1, so
  θ* = p*);
* by simulation under the beta-binomial item effect (``simulate_cluster_tables``): the mean
  of the variance estimate against the Monte Carlo variance of p̂, and the coverage of
  ``cluster_delta``; tolerances from the Monte Carlo SE, fixed seeds.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

import bayesjudge as bj
from bayesjudge.core.cluster import (
    as_cluster_table,
    cluster_bootstrap,
    cluster_delta,
    cluster_proportion,
)
from bayesjudge.core.correction import delta_method_variance
from bayesjudge.simulate import simulate_cluster_tables, simulate_repeated_items


def table_of(items, size=None):
    """Cluster table of a list of (r, k) items, tallied here by hand."""
    size = size or max(r for r, _ in items)
    out = np.zeros((size, size + 1), dtype=np.int64)
    for r, k in items:
        out[r - 1, k] += 1
    return out


def test_variance_matches_the_ratio_estimator_written_item_by_item():
    items = [(3, 0), (3, 3), (1, 1), (2, 1), (3, 2), (1, 0), (2, 2), (3, 3)]
    r = np.array([i[0] for i in items], dtype=float)
    k = np.array([i[1] for i in items], dtype=float)
    p = k.sum() / r.sum()
    n_items = len(items)
    # Cochran (1977) §6.11 ratio estimator, with the N/(N-1) small-sample factor.
    expected = n_items / (n_items - 1) * np.sum((k - p * r) ** 2) / r.sum() ** 2
    res = cluster_proportion(table_of(items))
    assert res.p == pytest.approx(p, rel=1e-14)
    assert res.variance == pytest.approx(expected, rel=1e-12)
    assert res.items == n_items and res.verdicts == r.sum()
    assert res.design_effect == pytest.approx(expected / (p * (1 - p) / r.sum()), rel=1e-12)


def test_one_verdict_per_item_is_the_delta_method_with_factor():
    n, k, tn, m0, tp, m1 = 500, 210, 160, 200, 180, 200
    table = np.array([[n - k, k]])
    res = cluster_delta(table, tn, m0, tp, m1, alpha=0.1)
    p, q0, q1 = k / n, tn / m0, tp / m1
    theta = (p + q0 - 1) / (q0 + q1 - 1)
    j = q0 + q1 - 1
    # delta_method_variance with n' = n - 1 turns p(1-p)/n into n/(n-1) * p(1-p)/n.
    var = delta_method_variance(p, q0, q1, n - 1, m0, m1)
    z = stats.norm.ppf(0.95)
    assert res.estimate == pytest.approx(theta, rel=1e-13)
    assert res.lower == pytest.approx(theta - z * np.sqrt(var), rel=1e-12)
    assert res.upper == pytest.approx(theta + z * np.sqrt(var), rel=1e-12)
    assert j > 0


def test_groups_broadcast_and_agree_with_one_by_one():
    tables = np.stack([table_of([(2, 1), (2, 2), (2, 0)] * 20), table_of([(2, 2), (2, 1)] * 30)])
    res = cluster_delta(tables, [40, 35], 50, [45, 44], 50)
    for g in range(2):
        one = cluster_delta(tables[g], [40, 35][g], 50, [45, 44][g], 50)
        assert res.estimate[g] == one.estimate and res.lower[g] == one.lower


def test_bootstrap_matches_the_exact_bootstrap_distribution():
    # Tiny table: 4 items; calibration q0 = q1 = 1 (tn = m0, tp = m1), so theta* = p*.
    items = [(1, 0), (2, 2), (3, 1), (3, 3)]
    table = table_of(items)
    cells = [(r, k) for r, k in items]
    n_items = len(items)
    support = {}
    for counts in itertools.product(range(n_items + 1), repeat=n_items):
        if sum(counts) != n_items:
            continue
        prob = stats.multinomial.pmf(counts, n_items, [1 / n_items] * n_items)
        k_s = sum(c * k for c, (_, k) in zip(counts, cells, strict=True))
        r_s = sum(c * r for c, (r, _) in zip(counts, cells, strict=True))
        support[k_s / r_s] = support.get(k_s / r_s, 0.0) + prob
    values = np.array(sorted(support))
    cdf = np.cumsum([support[v] for v in values])
    alpha, b = 0.2, 40_000
    res = cluster_bootstrap(table, 10, 10, 10, 10, alpha=alpha, n_resamples=b, random_seed=3)
    # The sample quantile at alpha/2 of B draws has CDF within a few binomial SEs of alpha/2:
    # the exact CDF just below and at the reported lower limit brackets alpha/2.
    tol = 4 * np.sqrt(alpha / 2 * (1 - alpha / 2) / b)
    i_lo = int(np.flatnonzero(np.isclose(values, res.lower))[0])
    i_hi = int(np.flatnonzero(np.isclose(values, res.upper))[0])
    assert cdf[i_lo] >= alpha / 2 - tol and (i_lo == 0 or cdf[i_lo - 1] <= alpha / 2 + tol)
    assert cdf[i_hi] >= 1 - alpha / 2 - tol and cdf[i_hi - 1] <= 1 - alpha / 2 + tol
    assert res.estimate == pytest.approx(6 / 9)  # (0 + 2 + 1 + 3) / (1 + 2 + 3 + 3)


def test_variance_estimate_is_unbiased_for_the_variance_of_p_hat():
    reps = 4000
    draws = simulate_cluster_tables(
        0.4, 0.8, 0.9, 150, 10, 10, epochs=4, icc=0.4, size=reps, random_seed=11
    )
    res = cluster_proportion(draws["table"])
    empirical = np.var(res.p, ddof=1)
    # SE of a sample variance ~ var * sqrt(2 / (reps - 1)) (near-normal p-hat); of the mean
    # of the estimates: their sd / sqrt(reps).
    tol = 4 * np.hypot(empirical * np.sqrt(2 / (reps - 1)), np.std(res.variance) / np.sqrt(reps))
    assert np.mean(res.variance) == pytest.approx(empirical, abs=tol)
    assert np.mean(res.design_effect) > 2  # the correlation is there to be found


def test_cluster_delta_covers_where_the_verdict_count_interval_does_not():
    reps, theta = 2000, 0.6
    draws = simulate_cluster_tables(
        theta, 0.8, 0.9, 200, 100, 100, epochs=5, icc=0.5, size=reps, random_seed=5
    )
    cal = [draws[v] for v in ("tn", "m0", "tp", "m1")]
    res = cluster_delta(draws["table"], *cal)
    cover = np.mean((res.lower <= theta) & (theta <= res.upper))
    band = 3 * np.sqrt(0.95 * 0.05 / reps)
    assert abs(cover - 0.95) <= band
    # The same data with every verdict as an item (one verdict per "item"): too narrow.
    k, n = res_totals(draws["table"])
    naive = cluster_delta(np.stack([n - k, k], axis=-1)[:, None, :], *cal)
    naive_cover = np.mean((naive.lower <= theta) & (theta <= naive.upper))
    assert naive_cover < 0.95 - band


def res_totals(table):
    r = np.arange(1, table.shape[-2] + 1)[:, None]
    k = np.arange(table.shape[-1])[None, :]
    return (table * k).sum(axis=(-2, -1)), (table * r).sum(axis=(-2, -1))


@pytest.mark.parametrize(
    ("table", "match"),
    [
        ([1, 2, 3], "last axes"),
        ([[1, 2], [3, 4]], "last axes"),
        ([[1, 2, 1], [0, 1, 0]], "k > r"),
        (
            [
                [-1, 2],
            ],
            "whole numbers >= 0",
        ),
        ([[0.5, 2]], "whole numbers >= 0"),
        ([[0, 0]], "at least one item"),
    ],
)
def test_bad_tables_are_refused(table, match):
    with pytest.raises(ValueError, match=match):
        as_cluster_table(table)


def test_not_identified_raises():
    with pytest.raises(ValueError, match="not identified"):
        cluster_delta([[3, 4]], 5, 10, 5, 10)
    with pytest.raises(ValueError, match="not identified"):
        cluster_bootstrap([[3, 4]], 5, 10, 5, 10, n_resamples=200, random_seed=0)


# --------------------------------------------------------------------- estimate() wiring


@pytest.fixture(scope="module")
def clustered_counts():
    test, calib = simulate_repeated_items(
        0.6, 0.8, 0.9, n=120, m0=60, m1=60, epochs=3, icc=0.4, random_seed=7
    )
    return bj.JudgeCounts.from_frames(test, calib, item="item", repeats="epoch")


def test_estimate_defaults_to_cluster_delta_and_matches_the_core(clustered_counts):
    c = clustered_counts
    res = bj.estimate(c)
    assert res.attrs["method"] == "cluster-delta" and res.attrs["clusters"] == 1
    table = c.clusters.squeeze(("system", "stratum")).values
    core = cluster_delta(table, *(int(c[v].item()) for v in ("tn", "m0", "tp", "m1")))
    assert float(res["estimate"].squeeze()) == core.estimate
    assert res["ci"].squeeze().values.tolist() == [core.lower, core.upper]


def test_estimate_cluster_bootstrap_is_seeded(clustered_counts):
    a = bj.estimate(clustered_counts, "cluster-bootstrap", random_seed=1, n_resamples=1000)
    b = bj.estimate(clustered_counts, "cluster-bootstrap", random_seed=1, n_resamples=1000)
    assert a["ci"].equals(b["ci"]) and a.attrs["n_resamples"] == 1000


def test_estimate_refuses_methods_that_ignore_clusters(clustered_counts):
    for method in ("lang-reiczigel", "bootstrap", "naive"):
        with pytest.raises(ValueError, match="without_clusters"):
            bj.estimate(clustered_counts, method)
    plain = bj.estimate(clustered_counts.without_clusters())
    assert plain.attrs["method"] == "lang-reiczigel"
    clustered = bj.estimate(clustered_counts)
    width = float(np.ptp(clustered["ci"].values))
    assert width > float(np.ptp(plain["ci"].values))


def test_cluster_methods_on_counts_without_clusters_use_one_verdict_per_item():
    c = bj.JudgeCounts.from_counts(n=300, k=140, m0=80, tn=64, m1=80, tp=72)
    res = bj.estimate(c, "cluster-delta")
    core = cluster_delta([[160, 140]], 64, 80, 72, 80)
    assert float(res["estimate"].squeeze()) == core.estimate
    assert res["ci"].squeeze().values.tolist() == [core.lower, core.upper]
