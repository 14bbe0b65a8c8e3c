"""Cluster-aware intervals when *labelled* items are judged several times too.

References, each independent of ``bayesjudge.core.cluster``:

* the calibration variances written item by item (lists of (r_i, agreeing verdicts x_i) per
  truth): ``Σ (x_i − q̂ r_i)² / (Σ r)²``, plugged into Lee et al.'s delta method;
* with one verdict per labelled item: exactly the results without calibration tables (the
  binomial terms; the same bootstrap stream for the same seed);
* the exact bootstrap distribution of θ* on tiny tables, enumerated over every multinomial
  outcome with ``scipy.stats.multinomial`` (test side constant, p* = 1/2);
* by simulation (``simulate_labelled_cluster_tables``): coverage of ``cluster_delta`` and
  ``cluster_bootstrap`` at nominal within 3 Monte Carlo SEs, and under-coverage when the
  labelled verdicts are treated as independent items; fixed seeds.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from bayesjudge.core.cluster import (
    as_calibration_tables,
    cluster_bootstrap,
    cluster_delta,
)
from bayesjudge.simulate import simulate_labelled_cluster_tables
from bayesjudge.warnings import LowJudgeQualityWarning


def table_of(items, size):
    """Cluster table (size, size + 1) of a list of (r, k) items, tallied by hand."""
    out = np.zeros((size, size + 1), dtype=np.int64)
    for r, k in items:
        out[r - 1, k] += 1
    return out


NEG = [(2, 0), (3, 1), (1, 0), (3, 0), (2, 1)]  # (verdicts, 'correct' verdicts), truth 0
POS = [(3, 3), (2, 1), (1, 1), (3, 2), (2, 2), (1, 0)]  # truth 1
TEST = [(3, 0), (3, 3), (1, 1), (2, 1), (3, 2), (1, 0), (2, 2), (3, 3)]


def totals(neg, pos):
    tn = sum(r - k for r, k in neg)
    m0 = sum(r for r, _ in neg)
    tp = sum(k for _, k in pos)
    m1 = sum(r for r, _ in pos)
    return tn, m0, tp, m1


def test_delta_variance_written_item_by_item():
    tn, m0, tp, m1 = totals(NEG, POS)
    cal = np.stack([table_of(NEG, 3), table_of(POS, 3)])
    res = cluster_delta(table_of(TEST, 3), tn, m0, tp, m1, alpha=0.1, calibration_tables=cal)
    r = np.array([i[0] for i in TEST], float)
    k = np.array([i[1] for i in TEST], float)
    p, q0, q1 = k.sum() / r.sum(), tn / m0, tp / m1
    var_p = len(TEST) / (len(TEST) - 1) * np.sum((k - p * r) ** 2) / r.sum() ** 2
    r0 = np.array([i[0] for i in NEG], float)
    x0 = np.array([i[0] - i[1] for i in NEG], float)  # verdicts agreeing with label 0
    r1 = np.array([i[0] for i in POS], float)
    x1 = np.array([i[1] for i in POS], float)
    var_q0 = np.sum((x0 - q0 * r0) ** 2) / r0.sum() ** 2
    var_q1 = np.sum((x1 - q1 * r1) ** 2) / r1.sum() ** 2
    j = q0 + q1 - 1
    theta = (p + q0 - 1) / j
    var = (var_p + (1 - theta) ** 2 * var_q0 + theta**2 * var_q1) / j**2
    half = stats.norm.ppf(0.95) * np.sqrt(var)
    assert res.estimate == pytest.approx(np.clip(theta, 0, 1), rel=1e-13)
    assert res.lower == pytest.approx(max(theta - half, 0.0), rel=1e-12, abs=1e-15)
    assert res.upper == pytest.approx(min(theta + half, 1.0), rel=1e-12)
    # Treating the labelled verdicts as items gives another (here narrower) interval.
    naive = cluster_delta(table_of(TEST, 3), tn, m0, tp, m1, alpha=0.1)
    assert naive.upper - naive.lower != pytest.approx(res.upper - res.lower, rel=1e-3)


def test_one_verdict_per_labelled_item_reduces_exactly():
    tn, m0, tp, m1 = 33, 40, 44, 50
    # Padded to R = 3 like the counts' shared repeats axis; only row r = 1 is filled.
    cal = np.zeros((2, 3, 4), dtype=np.int64)
    cal[0, 0, :2] = [tn, m0 - tn]  # truth 0: k = 'correct' verdicts = m0 - tn
    cal[1, 0, :2] = [m1 - tp, tp]
    test = table_of(TEST * 5, 3)
    plain = cluster_delta(test, tn, m0, tp, m1)
    with_tables = cluster_delta(test, tn, m0, tp, m1, calibration_tables=cal)
    for a, b in zip(plain, with_tables, strict=True):
        assert b == pytest.approx(a, rel=1e-14)
    for design in ("stratified", "random"):
        kw = {"n_resamples": 2000, "random_seed": 4, "calibration_design": design}
        assert cluster_bootstrap(test, tn, m0, tp, m1, **kw) == cluster_bootstrap(
            test, tn, m0, tp, m1, calibration_tables=cal, **kw
        )


def test_tables_must_add_up_to_the_verdict_totals():
    cal = np.stack([table_of(NEG, 3), table_of(POS, 3)])
    tn, m0, tp, m1 = totals(NEG, POS)
    with pytest.raises(ValueError, match="do not add up to m0"):
        cluster_delta(table_of(TEST, 3), tn, m0 - 1, tp, m1, calibration_tables=cal)
    with pytest.raises(ValueError, match="truth of size 2"):
        as_calibration_tables(cal[:1])
    with pytest.raises(ValueError, match="at least one item"):
        as_calibration_tables(np.stack([table_of(NEG, 3), np.zeros((3, 4), int)]))


def exact_distribution(outcomes):
    """{θ* or None (not identified): probability} over enumerated (prob, q0*, q1*) outcomes."""
    support: dict = {}
    for prob, q0, q1 in outcomes:
        if q0 is None or q1 is None or q0 + q1 == 1:
            value = None
        else:
            value = float(np.clip((q0 - 0.5) / (q0 + q1 - 1), 0, 1))
        support[value] = support.get(value, 0.0) + prob
    return support


def brackets(support, limit, q, tol, fill):
    """The exact CDF (not-identified mass at ``fill``) brackets q at the reported limit."""
    values = sorted({fill if v is None else v for v in support})
    mass = {v: 0.0 for v in values}
    for v, p in support.items():
        mass[fill if v is None else v] += p
    cdf = np.cumsum([mass[v] for v in values])
    i = int(np.flatnonzero(np.isclose(values, limit))[0])
    return cdf[i] >= q - tol and (i == 0 or cdf[i - 1] <= q + tol)


def outcomes_of(cells, n_items, split):
    """Every multinomial draw of ``n_items`` items over ``cells`` (truth, r, k), with q0*, q1*."""
    for counts in itertools.product(range(n_items + 1), repeat=len(cells)):
        if sum(counts) != n_items:
            continue
        prob = stats.multinomial.pmf(counts, n_items, [1 / len(cells)] * len(cells))
        yield prob, split(counts)


# Test side constant (every test item (2, 1): p* = 1/2 in every replicate); labelled items
# agree with their label often enough that J* >= 1/3 whenever both truths are drawn.
TINY_TEST = table_of([(2, 1)] * 3, 3)
TINY_NEG = [(2, 0), (3, 1), (2, 0)]
TINY_POS = [(2, 2), (3, 2), (2, 2)]


def q_of(cells, counts, truth):
    r = sum(c * rr for c, (t, rr, _) in zip(counts, cells, strict=True) if t == truth)
    agree = sum(
        c * (kk if t == 1 else rr - kk) for c, (t, rr, kk) in zip(counts, cells, strict=True)
        if t == truth
    )  # fmt: skip
    return None if r == 0 else agree / r


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_bootstrap_matches_the_exact_bootstrap_distribution(design):
    neg = [(0, r, k) for r, k in TINY_NEG]
    pos = [(1, r, k) for r, k in TINY_POS]
    if design == "stratified":
        q0s = list(outcomes_of(neg, 3, lambda c: q_of(neg, c, 0)))
        q1s = list(outcomes_of(pos, 3, lambda c: q_of(pos, c, 1)))
        outcomes = [(a * b, q0, q1) for (a, q0), (b, q1) in itertools.product(q0s, q1s)]
    else:
        cells = neg + pos
        outcomes = [
            (prob, q0, q1)
            for prob, (q0, q1) in outcomes_of(
                cells, 6, lambda c: (q_of(cells, c, 0), q_of(cells, c, 1))
            )
        ]
    support = exact_distribution(outcomes)
    assert sum(support.values()) == pytest.approx(1.0, rel=1e-12)
    cal = np.stack([table_of(TINY_NEG, 3), table_of(TINY_POS, 3)])
    tn, m0, tp, m1 = totals(TINY_NEG, TINY_POS)
    alpha, b = 0.2, 40_000
    kw = {"alpha": alpha, "n_resamples": b, "random_seed": 3, "calibration_design": design}
    if None in support:  # random design: a draw of labelled items of one truth only
        with pytest.warns(LowJudgeQualityWarning):
            res = cluster_bootstrap(TINY_TEST, tn, m0, tp, m1, calibration_tables=cal, **kw)
    else:
        res = cluster_bootstrap(TINY_TEST, tn, m0, tp, m1, calibration_tables=cal, **kw)
    tol = 4 * np.sqrt(alpha / 2 * (1 - alpha / 2) / b)
    assert brackets(support, res.lower, alpha / 2, tol, 0.0)
    assert brackets(support, res.upper, 1 - alpha / 2, tol, 1.0)
    q0, q1 = tn / m0, tp / m1
    assert res.estimate == pytest.approx((0.5 + q0 - 1) / (q0 + q1 - 1), rel=1e-13)


def coverage(res, theta):
    return float(np.mean((res.lower <= theta) & (theta <= res.upper)))


def test_cluster_delta_covers_where_labelled_verdicts_as_items_do_not():
    reps, theta = 2000, 0.6
    # Few test items and many verdicts per labelled item: the calibration term dominates.
    d = simulate_labelled_cluster_tables(
        theta, 0.8, 0.85, 400, 25, 25, epochs=5, icc=0.6, size=reps, random_seed=21
    )
    cal = [d[v] for v in ("tn", "m0", "tp", "m1")]
    band = 3 * np.sqrt(0.95 * 0.05 / reps)
    res = cluster_delta(d["table"], *cal, calibration_tables=d["calibration_tables"])
    assert abs(coverage(res, theta) - 0.95) <= band
    naive = cluster_delta(d["table"], *cal)  # labelled verdicts counted as items
    assert coverage(naive, theta) < 0.95 - band


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_cluster_bootstrap_covers_at_nominal(design):
    reps, theta = 400, 0.6
    d = simulate_labelled_cluster_tables(
        theta, 0.8, 0.85, 400, 40, 40, epochs=5, icc=0.6, design=design, size=reps,
        random_seed=22,
    )  # fmt: skip
    cal = [d[v] for v in ("tn", "m0", "tp", "m1")]
    res = cluster_bootstrap(
        d["table"], *cal, calibration_tables=d["calibration_tables"], n_resamples=1000,
        calibration_design=design, random_seed=5,
    )  # fmt: skip
    # 3 Monte Carlo SEs of a coverage of 0.95 over ``reps`` replications.
    band = 3 * np.sqrt(0.95 * 0.05 / reps)
    assert abs(coverage(res, theta) - 0.95) <= band
    naive = cluster_bootstrap(
        d["table"], *cal, n_resamples=1000, calibration_design=design, random_seed=5
    )
    assert coverage(naive, theta) < 0.95 - band


@pytest.mark.slow  # 300 tables counted from item rows (about 100 s on a shared core)
def test_item_tables_to_estimate_cover_at_nominal():
    import warnings

    import bayesjudge as bj
    from bayesjudge.simulate import simulate_repeated_labelled_items

    reps, theta = 300, 0.6
    rng = np.random.default_rng(31)
    hits = {"cluster": 0, "verdicts as items": 0}
    for _ in range(reps):
        table = simulate_repeated_labelled_items(
            theta, 0.8, 0.85, n=200, m=60, epochs=4, icc=0.6, random_seed=rng
        )
        counts = bj.JudgeCounts.from_frames(
            table.drop(columns="truth"), item="item", repeats="epoch"
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LowJudgeQualityWarning)
            for name, c in (("cluster", counts), ("verdicts as items", counts.without_clusters())):
                lo, hi = bj.estimate(c, "cluster-delta")["ci"].squeeze().values
                hits[name] += lo <= theta <= hi
    band = 3 * np.sqrt(0.95 * 0.05 / reps)
    assert abs(hits["cluster"] / reps - 0.95) <= band
    assert hits["verdicts as items"] / reps < 0.95 - band
