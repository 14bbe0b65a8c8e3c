"""Rogan–Gladen intervals for repeated verdicts of an item (clusters), from (r, k) tables.

When the judge grades each test item several times (Inspect epochs, several samples per
prompt), the verdicts of one item are correlated: the item has its own propensity to be
called correct. Counting the verdicts as independent items then understates the spread of
``p̂``. The estimand is unchanged — θ, the share of *items* truly correct — and ``p̂ = Σk/Σr``
(verdicts called correct over all verdicts) still estimates ``θ·q1 + (1−θ)(1−q0)`` where the
calibration estimates per-verdict error rates, so the Rogan–Gladen correction applies. What
changes is the variance of ``p̂``: the items, not the verdicts, are the independent units.

A group's test data is its *cluster table* ``table[..., r-1, k]``: the number of items judged
``r`` times of which ``k`` verdicts said correct (``0 <= k <= r``; entries with ``k > r``
are zero). Everything here is numpy; the container is
:attr:`bayesjudge.JudgeCounts.clusters`.

Labelled items judged several times are clusters too. Their *calibration tables*
``calibration_tables[..., truth, r-1, k]`` (truth 0: the humans call the item incorrect, 1:
correct) count the labelled items judged ``r`` times of which ``k`` verdicts said *correct*;
``tn, m0, tp, m1`` are then verdict totals (``m0 = Σ r``, ``tn = Σ (r − k)`` over truth 0;
``m1 = Σ r``, ``tp = Σ k`` over truth 1), so that ``q̂0 = tn/m0`` and ``q̂1 = tp/m1`` are ratio
estimators of the per-verdict rates, and their variances are cluster-robust too.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

from bayesjudge.core._results import EstimateInterval, scalar_or_array
from bayesjudge.core._validation import (
    as_calibration_counts,
    broadcast,
    check_alpha,
    check_design,
    check_resamples,
    check_seed,
    raise_if_not_identified,
    two_sided_z,
)
from bayesjudge.core.bootstrap import rg_replicates
from bayesjudge.core.resampling import (
    percentile_interval,
    resample_calibration,
    warn_undefined_replicates,
)

__all__ = [
    "ClusterDifference",
    "ClusterProportion",
    "as_calibration_tables",
    "as_cluster_table",
    "calibration_effective_counts",
    "cluster_bootstrap",
    "cluster_bootstrap_difference",
    "cluster_delta",
    "cluster_difference_delta",
    "cluster_proportion",
    "cluster_wilson",
    "effective_counts",
    "effective_size",
]


class ClusterProportion(NamedTuple):
    """``p̂ = Σk/Σr`` with its cluster-robust variance: see :func:`cluster_proportion`."""

    p: Any
    variance: Any
    items: Any
    verdicts: Any
    design_effect: Any


def as_cluster_table(table) -> np.ndarray:
    """Validate a cluster table ``(..., R, R + 1)`` of item counts and return it as int64.

    ``table[..., r-1, k]`` counts the items with ``r`` verdicts of which ``k`` said correct.

    Raises
    ------
    ValueError
        If the last two axes are not ``(R, R + 1)``, a count is negative or fractional, an
        entry with ``k > r`` is not zero, or a group has no item.

    Examples
    --------
    >>> from bayesjudge.core.cluster import as_cluster_table
    >>> as_cluster_table([[3, 1, 0], [2, 0, 4]]).sum()
    np.int64(10)
    """
    arr = np.asarray(table)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2] + 1:
        raise ValueError(
            f"A cluster table has last axes (repeats, positives) of sizes (R, R + 1): entry "
            f"[r-1, k] counts the items judged r times with k verdicts 'correct'; got shape "
            f"{arr.shape}."
        )
    if arr.dtype.kind not in "biuf" or not np.isfinite(arr).all():
        raise ValueError(f"A cluster table holds finite whole numbers; got dtype {arr.dtype}.")
    if (arr < 0).any() or (arr != np.round(arr)).any():
        bad = arr[(arr < 0) | (arr != np.round(arr))]
        raise ValueError(
            f"A cluster table holds item counts, whole numbers >= 0; got {bad[:5].tolist()}."
        )
    r = np.arange(1, arr.shape[-2] + 1)[:, None]
    k = np.arange(arr.shape[-1])[None, :]
    if (arr[..., k > r] != 0).any():
        raise ValueError(
            "A cluster table entry [r-1, k] with k > r (more 'correct' verdicts than "
            "verdicts) must be 0."
        )
    if (arr.sum(axis=(-2, -1)) == 0).any():
        raise ValueError("Every group of a cluster table needs at least one item.")
    return arr.astype(np.int64)


def _moments(table: np.ndarray):
    """Return (items N, verdicts Σr, positives Σk, Σ c·(k − p̂ r)², p̂) per group."""
    r = np.arange(1, table.shape[-2] + 1, dtype=float)[:, None]
    k = np.arange(table.shape[-1], dtype=float)[None, :]
    items = table.sum(axis=(-2, -1)).astype(float)
    verdicts = (table * r).sum(axis=(-2, -1))
    positives = (table * k).sum(axis=(-2, -1))
    p = positives / verdicts
    resid = k - p[..., None, None] * r
    return items, verdicts, positives, (table * resid**2).sum(axis=(-2, -1)), p


def as_calibration_tables(tables) -> np.ndarray:
    """Validate calibration cluster tables ``(..., 2, R, R + 1)``; return them as int64.

    ``tables[..., t, r-1, k]`` counts the labelled items of truth ``t`` (0: incorrect, 1:
    correct, by the human label) judged ``r`` times, of which ``k`` verdicts said *correct*.
    Each truth needs at least one item (as :func:`as_cluster_table` checks per table).

    Examples
    --------
    >>> from bayesjudge.core.cluster import as_calibration_tables
    >>> as_calibration_tables([[[1, 0, 0], [0, 2, 1]], [[0, 1, 0], [0, 0, 3]]]).shape
    (2, 2, 3)
    """
    arr = np.asarray(tables)
    if arr.ndim < 3 or arr.shape[-3] != 2:
        raise ValueError(
            f"Calibration cluster tables have axes (..., truth, repeats, positives) with truth "
            f"of size 2 (0: labelled incorrect, 1: labelled correct); got shape {arr.shape}."
        )
    return as_cluster_table(arr)


def calibration_totals(tables: np.ndarray):
    """Return ``(tn, m0, tp, m1, items0, items1)`` of calibration tables (verdict totals)."""
    r = np.arange(1, tables.shape[-2] + 1)[:, None]
    k = np.arange(tables.shape[-1])[None, :]
    items = tables.sum(axis=(-2, -1))
    verdicts = (tables * r).sum(axis=(-2, -1))
    positives = (tables * k).sum(axis=(-2, -1))
    return (
        verdicts[..., 0] - positives[..., 0],
        verdicts[..., 0],
        positives[..., 1],
        verdicts[..., 1],
        items[..., 0],
        items[..., 1],
    )


def _calibration_variances(tables: np.ndarray):
    """Return the variances of q̂0 and q̂1 over labelled items, ``Σᵢ (xᵢ − q̂ rᵢ)² / (Σr)²``.

    The ratio-estimator variance without the small-sample factor N/(N−1): with one verdict
    per labelled item it is exactly the binomial ``q̂(1−q̂)/m`` of Lee et al.'s delta method,
    so counts without repeated labelled verdicts give the same interval as before. (q̂0 is
    one minus the share of 'correct' verdicts of truth 0, with the same variance.)
    """
    _, verdicts, _, ss, _ = _moments(tables)
    var = ss / verdicts**2
    return var[..., 0], var[..., 1]


def cluster_proportion(table) -> ClusterProportion:
    """``p̂ = Σk/Σr`` with its cluster-robust (ratio-estimator) variance.

    Parameters
    ----------
    table : array_like of int, shape (..., R, R + 1)
        Cluster tables (see :func:`as_cluster_table`).

    Returns
    -------
    ClusterProportion
        ``p`` (p̂), ``variance`` (``N/(N−1) · Σᵢ (kᵢ − p̂ rᵢ)² / (Σr)²``, 0 for N = 1 item),
        ``items`` (N), ``verdicts`` (Σr) and ``design_effect``: the variance over the
        binomial ``p̂(1−p̂)/Σr`` of independent verdicts (1 when p̂ is 0 or 1).

    Notes
    -----
    The linearisation (delta-method) variance of a ratio of totals over independently
    sampled clusters, with the small-sample factor N/(N−1) (Cochran 1977, Sampling
    Techniques, §6.11; the CR1 "sandwich" of a mean with clustered errors). With one verdict
    per item it is ``N/(N−1)`` times the binomial variance ``p̂(1−p̂)/N``.

    Examples
    --------
    >>> from bayesjudge.core.cluster import cluster_proportion
    >>> # 50 items judged 3 times: 20 always 'correct', 20 never, 10 once.
    >>> res = cluster_proportion([[0, 0, 0, 0], [0, 0, 0, 0], [20, 10, 0, 20]])
    >>> round(float(res.p), 4), round(float(res.design_effect), 3)
    (0.4667, 2.515)
    """
    table = as_cluster_table(table)
    items, verdicts, _, ss, p = _moments(table)
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = np.where(items > 1, items / (items - 1) * ss / verdicts**2, 0.0)
        binomial = p * (1 - p) / verdicts
        deff = np.where(binomial > 0, variance / binomial, 1.0)
    return ClusterProportion(
        scalar_or_array(p),
        scalar_or_array(variance),
        scalar_or_array(items),
        scalar_or_array(verdicts),
        scalar_or_array(deff),
    )


def _wilson(p, size, z):
    """Wilson score limits of a share ``p`` at a (possibly fractional) sample ``size``."""
    z2 = z**2
    centre = (p + z2 / (2 * size)) / (1 + z2 / size)
    half = z / (1 + z2 / size) * np.sqrt(p * (1 - p) / size + z2 / (4 * size**2))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def effective_size(p, variance, items):
    """Kish's effective sample size ``p(1−p)/V`` of a ratio estimate; ``items`` where V = 0.

    The number of independent Bernoulli draws whose binomial variance equals ``V``. Where
    ``V`` is 0 (``p`` is 0 or 1, or every item has the same share) there is no spread to
    scale, and the items count as independent draws.

    Examples
    --------
    >>> from bayesjudge.core.cluster import effective_size
    >>> float(effective_size(0.5, 0.25 / 40, 100))
    40.0
    """
    p, variance, items = np.broadcast_arrays(
        *(np.asarray(a, dtype=float) for a in (p, variance, items))
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        size = p * (1 - p) / variance
    return np.where((variance > 0) & np.isfinite(size) & (size > 0), size, items)


def cluster_wilson(table, alpha=0.05) -> EstimateInterval:
    """``p̂ = Σk/Σr`` (the share of verdicts called correct) with a cluster-robust Wilson interval.

    The naive answer for repeated verdicts of an item: the Wilson score interval at the
    effective sample size ``p̂(1−p̂)/V_cl`` (:func:`effective_size`), with ``V_cl`` the
    cluster-robust variance of :func:`cluster_proportion`, so that the interval is as wide as
    the items, not the verdicts, warrant. With one verdict per item the effective size is
    ``N − 1`` (the N/(N−1) factor of ``V_cl``).

    Parameters
    ----------
    table : array_like of int, shape (..., R, R + 1)
        Cluster tables (:func:`as_cluster_table`).
    alpha : float, default 0.05
        One minus the nominal coverage.

    Returns
    -------
    EstimateInterval
        ``p̂`` and the Wilson limits, clipped to [0, 1].

    Examples
    --------
    >>> from bayesjudge.core.cluster import cluster_wilson
    >>> res = cluster_wilson([[0, 0, 0, 0], [0, 0, 0, 0], [20, 10, 0, 20]])
    >>> print(f"{res.estimate:.4f} [{res.lower:.4f}, {res.upper:.4f}]")
    0.4667 [0.3460, 0.5914]
    """
    alpha = check_alpha(alpha)
    res = cluster_proportion(table)
    size = effective_size(res.p, res.variance, res.items)
    lower, upper = _wilson(np.asarray(res.p, dtype=float), size, two_sided_z(alpha))
    return EstimateInterval(res.p, scalar_or_array(lower), scalar_or_array(upper))


def _nonempty(table: np.ndarray):
    """Validate the groups that have items; return (int64 table, mask of those groups)."""
    arr = np.asarray(table)
    if arr.ndim < 2:
        return as_cluster_table(arr), None  # raises with the shape message
    has = arr.sum(axis=(-2, -1)) > 0
    checked = np.zeros(arr.shape, dtype=np.int64)
    if has.any():
        checked[has] = as_cluster_table(arr[has])
    return checked, has


def effective_counts(table):
    """Effective test counts ``(k_eff, n_eff)`` of cluster tables (Kish's effective size).

    Binomial formulas on these counts are cluster-robust.
    ``n_eff = p̂(1−p̂)/V_cl`` (:func:`effective_size` of :func:`cluster_proportion`) and
    ``k_eff = p̂·n_eff``, so that ``k_eff/n_eff = p̂`` and the binomial variance
    ``p̂(1−p̂)/n_eff`` is the cluster-robust ``V_cl``. A delta method, Wilson or Newcombe
    interval fed these counts is the cluster-robust one (e.g.
    :func:`~bayesjudge.core.kernels.rg_difference_delta` of unpaired systems gives
    :func:`cluster_difference_delta`'s test term). Groups without items give ``(0, 0)``.

    Parameters
    ----------
    table : array_like of int, shape (..., R, R + 1)
        Cluster tables; a group may be empty.

    Returns
    -------
    tuple of numpy.ndarray
        ``(k_eff, n_eff)`` as floats, shape ``(...)``.

    Examples
    --------
    >>> from bayesjudge.core.cluster import effective_counts
    >>> k, n = effective_counts([[[0, 0, 0], [10, 0, 10]], [[0, 0, 0], [0, 0, 0]]])
    >>> [round(float(v), 3) for v in n], [round(float(v), 3) for v in k]
    ([19.0, 0.0], [9.5, 0.0])
    """
    table, has = _nonempty(table)
    k_eff = np.zeros(table.shape[:-2])
    n_eff = np.zeros(table.shape[:-2])
    if has.any():
        res = cluster_proportion(table[has])
        size = effective_size(res.p, res.variance, res.items)
        n_eff[has] = size
        k_eff[has] = np.asarray(res.p, dtype=float) * size
    return k_eff, n_eff


def calibration_effective_counts(tables):
    """Effective calibration counts ``(tn, m0, tp, m1)`` of labelled items judged several times.

    ``m0_eff = q̂0(1−q̂0)/V(q̂0)`` (:func:`effective_size`, the ratio-estimator variance over
    labelled items of :func:`cluster_delta`) and ``tn_eff = q̂0·m0_eff``; likewise for truth 1.
    Binomial intervals (Wilson, Newcombe's J) computed from these fractional counts are
    cluster-robust; with one verdict per labelled item they are the verdict counts exactly.
    A truth without labelled items gives ``(0, 0)``.

    Parameters
    ----------
    tables : array_like of int, shape (..., 2, R, R + 1)
        Calibration cluster tables (:func:`as_calibration_tables`); a truth may be empty.

    Returns
    -------
    tuple of numpy.ndarray
        ``(tn_eff, m0_eff, tp_eff, m1_eff)`` as floats.

    Examples
    --------
    >>> from bayesjudge.core.cluster import calibration_effective_counts
    >>> one = [[[8, 2]], [[1, 9]]]  # one verdict per labelled item: R = 1
    >>> [round(float(v), 9) for v in calibration_effective_counts(one)]
    [8.0, 10.0, 9.0, 10.0]
    """
    arr = np.asarray(tables)
    if arr.ndim < 3 or arr.shape[-3] != 2:
        as_calibration_tables(arr)  # raises with the shape message
    table, has = _nonempty(arr)  # (..., truth, R, R + 1): k counts 'correct' verdicts
    k_eff, n_eff = np.zeros(has.shape), np.zeros(has.shape)
    if has.any():
        # The ratio-estimator variance without the small-sample factor, as cluster_delta.
        items, verdicts, _, ss, p = _moments(table[has])
        size = effective_size(p, ss / verdicts**2, items)
        n_eff[has], k_eff[has] = size, p * size
    return n_eff[..., 0] - k_eff[..., 0], n_eff[..., 0], k_eff[..., 1], n_eff[..., 1]


def _checked(table, tn, m0, tp, m1, alpha, calibration_tables=None):
    alpha = check_alpha(alpha)
    table = as_cluster_table(table)
    tn, m0, tp, m1 = as_calibration_counts("", tn, m0, tp, m1)
    if calibration_tables is not None:
        cal = as_calibration_tables(calibration_tables)
        totals = calibration_totals(cal)
        for name, given, got in zip(
            ("tn", "m0", "tp", "m1"), (tn, m0, tp, m1), totals[:4], strict=True
        ):
            if not np.array_equal(*np.broadcast_arrays(given, got)):
                raise ValueError(
                    f"calibration_tables do not add up to {name} (a verdict total): {name}="
                    f"{np.asarray(given).tolist()} but the tables give {got.tolist()}. With "
                    f"repeated labelled verdicts, m0 = Σ r and tn = Σ (r − k) over truth 0, "
                    f"m1 = Σ r and tp = Σ k over truth 1."
                )
    lead = table.shape[:-2]
    tn, m0, tp, m1 = broadcast(("tn", "m0", "tp", "m1"), tn, m0, tp, m1)
    shape = np.broadcast_shapes(lead, tn.shape)
    table = np.broadcast_to(table, (*shape, *table.shape[-2:]))
    tn, m0, tp, m1 = (np.broadcast_to(a, shape) for a in (tn, m0, tp, m1))
    if calibration_tables is not None:
        cal = np.broadcast_to(cal, (*shape, *cal.shape[-3:]))
        return table, tn, m0, tp, m1, alpha, cal
    return table, tn, m0, tp, m1, alpha, None


def cluster_delta(table, tn, m0, tp, m1, alpha=0.05, calibration_tables=None) -> EstimateInterval:
    """Rogan–Gladen θ̂ with a Wald interval whose test-set term is cluster-robust.

    Parameters
    ----------
    table : array_like of int, shape (..., R, R + 1)
        The test items' cluster tables (:func:`as_cluster_table`).
    tn, m0, tp, m1 : array_like of int
        Calibration counts of *verdicts* (one verdict per labelled item in the usual case),
        broadcast against the table's leading axes; ``m0, m1 >= 1``.
    alpha : float, default 0.05
        One minus the nominal coverage.
    calibration_tables : array_like of int, shape (..., 2, R', R' + 1), optional
        The labelled items' cluster tables per truth (:func:`as_calibration_tables`), when
        labelled items have several verdicts; ``tn, m0, tp, m1`` must be their verdict
        totals. The calibration terms ``q̂(1−q̂)/m`` are then replaced by the ratio-estimator
        variances ``Σᵢ (xᵢ − q̂ rᵢ)² / (Σr)²`` over labelled items (``xᵢ`` the item's verdicts
        that agree with its label), which equal them with one verdict per labelled item.

    Returns
    -------
    EstimateInterval
        θ̂ = (p̂ + q̂0 − 1)/(q̂0 + q̂1 − 1) clipped to [0, 1] with p̂ = Σk/Σr, and
        ``θ̂ ± z·√V`` clipped to [0, 1], where
        ``V = [V_cl(p̂) + (1−θ̂)² q̂0(1−q̂0)/m0 + θ̂² q̂1(1−q̂1)/m1] / Ĵ²`` (θ̂ unclipped in V)
        and ``V_cl`` is :func:`cluster_proportion`'s variance.

    Raises
    ------
    ValueError
        On invalid input, or where Ĵ = q̂0 + q̂1 − 1 = 0 (θ not identified).

    Notes
    -----
    Lee et al.'s delta method (eq. 10) with the binomial ``p̂(1−p̂)/n`` replaced by the
    cluster-robust variance; with one verdict per item the two differ by the factor N/(N−1).

    Examples
    --------
    >>> from bayesjudge.core.cluster import cluster_delta
    >>> table = [[0, 0, 0, 0], [0, 0, 0, 0], [200, 100, 0, 200]]
    >>> res = cluster_delta(table, tn=70, m0=100, tp=90, m1=100)
    >>> print(f"{res.estimate:.4f} [{res.lower:.4f}, {res.upper:.4f}]")
    0.2778 [0.1482, 0.4074]
    """
    table, tn, m0, tp, m1, alpha, cal = _checked(table, tn, m0, tp, m1, alpha, calibration_tables)
    items, verdicts, positives, ss, p = _moments(table)
    theta, undefined = rg_replicates(positives, verdicts, tn, m0, tp, m1)
    q0, q1 = tn / m0, tp / m1
    raise_if_not_identified(undefined, q0, q1)
    j = q0 + q1 - 1
    raw = (p + q0 - 1) / j
    var_p = np.where(items > 1, items / np.maximum(items - 1, 1) * ss / verdicts**2, 0.0)
    if cal is None:
        var_q0, var_q1 = q0 * (1 - q0) / m0, q1 * (1 - q1) / m1
    else:
        var_q0, var_q1 = _calibration_variances(cal)
    var = (var_p + (1 - raw) ** 2 * var_q0 + raw**2 * var_q1) / j**2
    half = two_sided_z(alpha) * np.sqrt(var)
    lower = np.clip(raw - half, 0.0, 1.0)
    upper = np.clip(raw + half, 0.0, 1.0)
    return EstimateInterval(scalar_or_array(theta), scalar_or_array(lower), scalar_or_array(upper))


def _resample_items(rng, table: np.ndarray, n_resamples: int):
    """Resample each group's items with replacement: (Σk*, Σr*) with a trailing resample axis.

    Items are exchangeable within a cell of the table, so drawing N items with replacement
    is one multinomial over the cells with the observed shares.
    """
    cells = table.reshape(*table.shape[:-2], -1)
    items = cells.sum(axis=-1)
    shares = cells / items[..., None]
    draws = rng.multinomial(
        items[..., None], shares[..., None, :], size=(*items.shape, n_resamples)
    )
    r = np.repeat(np.arange(1, table.shape[-2] + 1), table.shape[-1])
    k = np.tile(np.arange(table.shape[-1]), table.shape[-2])
    return draws @ k, draws @ r


def _resample_labelled_items(rng, tables: np.ndarray, n_resamples: int, design: str):
    """Draw (tn*, m0*, tp*, m1*) by resampling labelled items with all their verdicts.

    ``"stratified"``: N0 items from truth 0's table and N1 from truth 1's, each one
    multinomial over the cells; ``"random"``: N0 + N1 items from both tables' cells at once.
    """
    if design == "stratified":
        k_s, n_s = _resample_items(rng, tables, n_resamples)  # (..., truth, resample)
        return n_s[..., 0, :] - k_s[..., 0, :], n_s[..., 0, :], k_s[..., 1, :], n_s[..., 1, :]
    cells = tables.reshape(*tables.shape[:-3], -1)  # truth 0's cells, then truth 1's
    items = cells.sum(axis=-1)
    draws = rng.multinomial(
        items[..., None], (cells / items[..., None])[..., None, :], size=(*items.shape, n_resamples)
    )
    size = tables.shape[-2]
    r = np.repeat(np.arange(1, size + 1), size + 1)
    k = np.tile(np.arange(size + 1), size)
    half = r.size
    n0, k0 = draws[..., :half] @ r, draws[..., :half] @ k
    n1, k1 = draws[..., half:] @ r, draws[..., half:] @ k
    return n0 - k0, n0, k1, n1


def cluster_bootstrap(
    table,
    tn,
    m0,
    tp,
    m1,
    alpha=0.05,
    n_resamples=10_000,
    calibration_design="stratified",
    random_seed=None,
    calibration_tables=None,
) -> EstimateInterval:
    """Rogan–Gladen θ̂ with a percentile interval from a cluster (item) bootstrap.

    Each replicate resamples the test *items* with replacement, each with all its verdicts
    (so Σr* varies when items have different numbers of verdicts), and the calibration set
    as :func:`~bayesjudge.core.bootstrap.bootstrap_rogan_gladen` does. With
    ``calibration_tables`` (labelled items judged several times), the labelled *items* are
    resampled with all their verdicts: within each truth (``"stratified"``: N0 and N1 items
    fixed) or jointly (``"random"``: N0 + N1 items over both truths, so the split varies).

    Parameters
    ----------
    table : array_like of int, shape (..., R, R + 1)
        The test items' cluster tables (:func:`as_cluster_table`).
    tn, m0, tp, m1 : array_like of int
        Calibration counts, broadcast against the table's leading axes.
    alpha : float, default 0.05
        One minus the nominal coverage.
    n_resamples : int, default 10_000
        Replicates per group (at least 100 and ``2 / alpha``).
    calibration_design : {"stratified", "random"}, default "stratified"
        How the calibration set is resampled (see ``bootstrap_rogan_gladen``).
    random_seed : int, numpy.random.Generator or None
        Seed for :func:`numpy.random.default_rng`.
    calibration_tables : array_like of int, shape (..., 2, R', R' + 1), optional
        The labelled items' cluster tables per truth (see :func:`cluster_delta`). When every
        labelled item has one verdict the replicates are those drawn without them (the same
        stream for the same seed).

    Returns
    -------
    EstimateInterval
        The clipped plug-in θ̂ and the percentile interval; replicates with θ* not
        identified count at the ends, as in ``bootstrap_rogan_gladen``.

    Raises
    ------
    ValueError
        On invalid input, or where the plug-in Ĵ = 0.

    Warns
    -----
    LowJudgeQualityWarning
        When some replicates have no identified θ.
    SmallSampleWarning
        When ``n_resamples`` is below 1000.

    References
    ----------
    .. [1] Field & Welsh (2007), "Bootstrapping clustered data", JRSS B 69(3): resampling
       clusters with replacement is consistent for the variance of a mean over clusters.

    Examples
    --------
    >>> from bayesjudge.core.cluster import cluster_bootstrap
    >>> table = [[0, 0, 0, 0], [0, 0, 0, 0], [200, 100, 0, 200]]
    >>> res = cluster_bootstrap(table, 70, 100, 90, 100, n_resamples=2000, random_seed=0)
    >>> print(f"{res.estimate:.4f} [{res.lower:.3f}, {res.upper:.3f}]")
    0.2778 [0.134, 0.394]
    """
    table, tn, m0, tp, m1, alpha, cal = _checked(table, tn, m0, tp, m1, alpha, calibration_tables)
    calibration_design = check_design(calibration_design)
    random_seed = check_seed(random_seed)
    _, verdicts, positives, _, _ = _moments(table)
    estimate, undefined = rg_replicates(positives, verdicts, tn, m0, tp, m1)
    raise_if_not_identified(undefined, tn / m0, tp / m1)
    n_resamples = check_resamples(n_resamples, "cluster_bootstrap", alpha)
    rng = np.random.default_rng(random_seed)
    k_s, n_s = _resample_items(rng, table, n_resamples)
    if cal is None or not cal[..., 1:, :].any():  # one verdict per labelled item
        cal = resample_calibration(rng, tn, m0, tp, m1, n_resamples, calibration_design)
    else:
        cal = _resample_labelled_items(rng, cal, n_resamples, calibration_design)
    replicates, undefined_s = rg_replicates(k_s, n_s, *cal)
    lower, upper = percentile_interval(replicates, undefined_s, alpha, 0.0, 1.0)
    warn_undefined_replicates(undefined_s, alpha, "θ")
    return EstimateInterval(
        scalar_or_array(estimate), scalar_or_array(lower), scalar_or_array(upper)
    )


# ------------------------------------------------------------- differences between systems


class ClusterDifference(NamedTuple):
    """Cluster-robust delta-method Δθ of pairs of systems: see :func:`cluster_difference_delta`."""

    theta: Any
    first: np.ndarray
    second: np.ndarray
    estimate: Any
    se: Any
    lower: Any
    upper: Any
    var_test: Any
    var_calibration: Any


def _difference_inputs(tables, tn, m0, tp, m1, shared_calibration, calibration_tables, alpha):
    """Validate and broadcast the inputs of the difference functions.

    Returns ``(tables (..., K, R, R+1), cal (4 arrays (..., K) or (...)), cal_tables or None,
    alpha)``; the calibration keeps its own shape (one set per group when shared).
    """
    alpha = check_alpha(alpha)
    tables = as_cluster_table(tables)
    if tables.ndim < 3:
        raise ValueError(
            f"tables holds one cluster table per system, shape (..., K, R, R + 1); got shape "
            f"{tables.shape}."
        )
    lead = tables.shape[:-3]
    n_systems = tables.shape[-3]
    cal_shape = lead if shared_calibration else (*lead, n_systems)
    tn, m0, tp, m1 = as_calibration_counts("", tn, m0, tp, m1)
    try:
        tn, m0, tp, m1 = (np.broadcast_to(a, cal_shape) for a in (tn, m0, tp, m1))
    except ValueError:
        raise ValueError(
            f"tn, m0, tp, m1 must broadcast to {cal_shape} (one calibration table "
            f"{'per group, shared by the systems' if shared_calibration else 'per system'}); "
            f"got shapes {[np.shape(a) for a in (tn, m0, tp, m1)]}."
        ) from None
    cal = None
    if calibration_tables is not None:
        cal = as_calibration_tables(calibration_tables)
        cal = np.broadcast_to(cal, (*cal_shape, *cal.shape[-3:]))
        totals = calibration_totals(cal)
        for name, given, got in zip(("tn", "m0", "tp", "m1"), (tn, m0, tp, m1), totals[:4],
                                    strict=True):  # fmt: skip
            if not np.array_equal(given, got):
                raise ValueError(
                    f"calibration_tables do not add up to {name} (a verdict total): "
                    f"{name}={np.asarray(given).tolist()} but the tables give {got.tolist()}."
                )
    return tables, (tn, m0, tp, m1), cal, alpha


def _pairs_arrays(n_systems: int, pairs):
    if pairs is None:
        first, second = np.triu_indices(n_systems, k=1)
        return first.astype(np.intp), second.astype(np.intp)
    first = np.array([a for a, _ in pairs], dtype=np.intp)
    second = np.array([b for _, b in pairs], dtype=np.intp)
    if first.size and (min(first.min(), second.min()) < 0 or max(first.max(), second.max())
                       >= n_systems):  # fmt: skip
        raise ValueError(f"pairs must be positions 0 … {n_systems - 1}; got {list(pairs)[:5]!r}.")
    return first, second


def _plug_in(tables, cal, cal_tables, shared_calibration):
    """Per system: p̂, V_cl(p̂), and q̂0, q̂1, Var q̂0, Var q̂1 (per set), clipped θ̂, flags."""
    items, verdicts, positives, ss, p = _moments(tables)
    var_p = np.where(items > 1, items / np.maximum(items - 1, 1) * ss / verdicts**2, 0.0)
    tn, m0, tp, m1 = (np.asarray(a, dtype=float) for a in cal)
    if cal_tables is None:
        q0, q1 = tn / m0, tp / m1
        var_q0, var_q1 = q0 * (1 - q0) / m0, q1 * (1 - q1) / m1
    else:
        var_q0, var_q1 = _calibration_variances(cal_tables)
        q0, q1 = tn / m0, tp / m1
    per_system = (lambda a: a[..., None]) if shared_calibration else (lambda a: a)
    theta, undefined = rg_replicates(positives, verdicts, *(per_system(np.asarray(a)) for a in cal))
    theta, undefined = np.broadcast_arrays(theta, undefined)
    return p, var_p, (q0, q1, var_q0, var_q1), per_system, theta, undefined


def _raise_if_any_not_identified(undefined, q0, q1) -> None:
    """Raise naming the first system whose plug-in θ̂ is not identified (Ĵ = 0)."""
    q0, q1 = np.broadcast_arrays(q0, q1, undefined)[:2]
    for s in range(undefined.shape[-1]):
        raise_if_not_identified(undefined[..., s], q0[..., s], q1[..., s], f" for system {s}")


def cluster_difference_delta(
    tables,
    tn,
    m0,
    tp,
    m1,
    *,
    shared_calibration=False,
    calibration_tables=None,
    alpha=0.05,
    pairs=None,
) -> ClusterDifference:
    """Δθ̂ = θ̂_a − θ̂_b between systems with a cluster-robust delta-method interval.

    The systems' test items are independent samples (repeated verdicts of an item carry no
    joint verdict table, so nothing is paired); each system's ``p̂ = Σk/Σr`` has the
    ratio-of-cluster-sums variance of :func:`cluster_proportion`, and the calibration terms
    are those of :func:`cluster_delta` (cluster-robust when ``calibration_tables`` is given).

    Parameters
    ----------
    tables : array_like of int, shape (..., K, R, R + 1)
        Each system's cluster table of test items (:func:`as_cluster_table`); leading axes
        are groups (e.g. strata).
    tn, m0, tp, m1 : array_like of int
        Calibration counts (of verdicts), shape (..., K): one table per system; with
        ``shared_calibration``, shape (...): one set for every system.
    shared_calibration : bool, default False
        One calibration set for all systems: the same ``q̂0, q̂1`` in every θ̂, so their
        errors cancel to first order in Δθ̂ (Fiedler App. B).
    calibration_tables : array_like of int, shape (..., K, 2, R', R' + 1), optional
        The labelled items' cluster tables per truth (shape (..., 2, R', R' + 1) when
        shared); ``tn, m0, tp, m1`` must be their verdict totals.
    alpha : float, default 0.05
        One minus the nominal coverage.
    pairs : sequence of (int, int), optional
        Positions ``(a, b)`` of the pairs (Δθ = θ_a − θ_b); every ``a < b`` when None.

    Returns
    -------
    ClusterDifference
        ``theta`` (..., K): clipped plug-in θ̂ per system; ``first``, ``second``: the pairs;
        ``estimate`` (..., P): the *unclipped* Rogan–Gladen difference; ``se``; ``lower``,
        ``upper``: ``estimate ± z·se`` clipped to [−1, 1]; ``var_test``,
        ``var_calibration``: the two parts of ``se²``.

    Raises
    ------
    ValueError
        On invalid input, or where a system's plug-in Ĵ = 0 (θ not identified).

    Notes
    -----
    With ``V_cl`` the cluster-robust variance of each ``p̂`` and ``V(q̂)`` the calibration
    variances (binomial, or ratio-estimator over labelled items), separate calibration
    gives ``se² = Σ_{s∈{a,b}} [V_cl(p̂_s) + (1−θ̃_s)² V(q̂0_s) + θ̃_s² V(q̂1_s)] / Ĵ_s²`` (θ̃
    unclipped) — the sum of the two :func:`cluster_delta` variances — and one shared set
    gives ``se² = [V_cl(p̂_a) + V_cl(p̂_b)] / Ĵ² + (p̂_a − p̂_b)² [V(q̂0) + V(q̂1)] / Ĵ⁴``,
    since ``∂Δθ/∂q0 = ∂Δθ/∂q1 = −Δθ/Ĵ``. With one verdict per item and per labelled item
    this is :func:`~bayesjudge.core.kernels.rg_difference_delta` of unpaired systems with
    each test term multiplied by N/(N−1).

    Examples
    --------
    >>> from bayesjudge.core.cluster import cluster_difference_delta
    >>> tables = [[[0, 0, 0], [60, 50, 90]], [[0, 0, 0], [90, 40, 70]]]  # 2 systems, r = 2
    >>> res = cluster_difference_delta(tables, 70, 100, 90, 100, shared_calibration=True)
    >>> print(f"{res.estimate[0]:.4f} ± {res.se[0]:.4f}")
    0.2083 ± 0.0752
    """
    tables, cal, cal_tables, alpha = _difference_inputs(
        tables, tn, m0, tp, m1, shared_calibration, calibration_tables, alpha
    )
    first, second = _pairs_arrays(tables.shape[-3], pairs)
    p, var_p, (q0, q1, var_q0, var_q1), per_system, theta, undefined = _plug_in(
        tables, cal, cal_tables, shared_calibration
    )
    q0_s, q1_s = per_system(q0), per_system(q1)
    _raise_if_any_not_identified(undefined, q0_s, q1_s)
    j = q0_s + q1_s - 1
    raw = (p + q0_s - 1) / j
    estimate = raw[..., first] - raw[..., second]
    if shared_calibration:
        var_test = (var_p[..., first] + var_p[..., second]) / j**2
        var_cal = estimate**2 * (var_q0 + var_q1)[..., None] / j**2
    else:
        var_test = var_p[..., first] / j[..., first] ** 2 + var_p[..., second] / j[..., second] ** 2
        part = ((1 - raw) ** 2 * var_q0 + raw**2 * var_q1) / j**2
        var_cal = part[..., first] + part[..., second]
    se = np.sqrt(var_test + var_cal)
    half = two_sided_z(alpha) * se
    return ClusterDifference(
        theta=theta,
        first=first,
        second=second,
        estimate=estimate,
        se=se,
        lower=np.clip(estimate - half, -1.0, 1.0),
        upper=np.clip(estimate + half, -1.0, 1.0),
        var_test=var_test,
        var_calibration=var_cal,
    )


def cluster_bootstrap_difference(
    tables,
    tn,
    m0,
    tp,
    m1,
    *,
    shared_calibration=False,
    calibration_tables=None,
    alpha=0.05,
    n_resamples=10_000,
    calibration_design="stratified",
    random_seed=None,
    pairs=None,
) -> ClusterDifference:
    """Δθ̂ = θ̂_a − θ̂_b between systems with a percentile interval from a cluster bootstrap.

    Each replicate resamples every system's test *items* with replacement, each with all
    its verdicts (as :func:`cluster_bootstrap`), and the calibration: each system's own set,
    or — with ``shared_calibration`` — the one set *once*, so that every system of the
    replicate sees the same ``q0*, q1*``. With ``calibration_tables`` the labelled items
    are resampled with all their verdicts (``calibration_design`` as in
    :func:`cluster_bootstrap`).

    Parameters
    ----------
    tables, tn, m0, tp, m1, shared_calibration, calibration_tables, alpha, pairs
        As in :func:`cluster_difference_delta`.
    n_resamples : int, default 10_000
        Replicates per group (at least 100 and ``2 / alpha``).
    calibration_design : {"stratified", "random"}, default "stratified"
        How the calibration set is resampled.
    random_seed : int, numpy.random.Generator or None
        Seed for :func:`numpy.random.default_rng`.

    Returns
    -------
    ClusterDifference
        ``theta`` (..., K) clipped plug-in θ̂; ``estimate`` (..., P) the clipped difference
        ``θ̂_a − θ̂_b``; ``lower``, ``upper`` the percentile interval of ``θ*_a − θ*_b``
        (replicates with a θ* not identified count at the ends, −1 and 1); ``se`` the
        replicates' standard deviation (identified ones); ``var_test``,
        ``var_calibration`` None.

    Raises
    ------
    ValueError
        On invalid input, or where a system's plug-in Ĵ = 0.

    Warns
    -----
    LowJudgeQualityWarning
        When some replicates have a θ* that is not identified.
    SmallSampleWarning
        When ``n_resamples`` is below 1000.

    Notes
    -----
    Draw order: the test items of every system (one multinomial per system), then the
    calibration (system by system, or the one shared set).

    Examples
    --------
    >>> from bayesjudge.core.cluster import cluster_bootstrap_difference
    >>> tables = [[[0, 0, 0], [60, 50, 90]], [[0, 0, 0], [90, 40, 70]]]
    >>> res = cluster_bootstrap_difference(tables, 70, 100, 90, 100, shared_calibration=True,
    ...                                    n_resamples=2000, random_seed=0)
    >>> print(f"{res.estimate[0]:.4f} [{res.lower[0]:.3f}, {res.upper[0]:.3f}]")
    0.2083 [0.062, 0.358]
    """
    tables, cal, cal_tables, alpha = _difference_inputs(
        tables, tn, m0, tp, m1, shared_calibration, calibration_tables, alpha
    )
    calibration_design = check_design(calibration_design)
    random_seed = check_seed(random_seed)
    first, second = _pairs_arrays(tables.shape[-3], pairs)
    _, _, (q0, q1, _, _), per_system, theta, undefined = _plug_in(
        tables, cal, cal_tables, shared_calibration
    )
    _raise_if_any_not_identified(undefined, per_system(q0), per_system(q1))
    n_resamples = check_resamples(n_resamples, "cluster_bootstrap_difference", alpha)
    rng = np.random.default_rng(random_seed)
    k_s, n_s = _resample_items(rng, tables, n_resamples)  # (..., K, B)
    if cal_tables is None or not cal_tables[..., 1:, :].any():  # one verdict per labelled item
        cal_s = resample_calibration(
            rng, *(np.asarray(c) for c in cal), n_resamples, calibration_design
        )
    else:
        cal_s = _resample_labelled_items(rng, cal_tables, n_resamples, calibration_design)
    if shared_calibration:  # the same draw for every system of a replicate
        cal_s = tuple(c[..., None, :] for c in cal_s)
    theta_s, undefined_s = np.broadcast_arrays(*rg_replicates(k_s, n_s, *cal_s))
    replicates = theta_s[..., first, :] - theta_s[..., second, :]
    undefined_pairs = undefined_s[..., first, :] | undefined_s[..., second, :]
    lower, upper = percentile_interval(replicates, undefined_pairs, alpha, -1.0, 1.0)
    warn_undefined_replicates(undefined_pairs, alpha, "a pairwise θ_a - θ_b")
    kept = np.where(undefined_pairs, np.nan, replicates)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all replicates undefined: NaN
        se = np.nanstd(kept, axis=-1, ddof=1)
    return ClusterDifference(
        theta=theta,
        first=first,
        second=second,
        estimate=theta[..., first] - theta[..., second],
        se=se,
        lower=lower,
        upper=upper,
        var_test=None,
        var_calibration=None,
    )
