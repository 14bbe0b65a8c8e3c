"""Is one calibration set fit to serve several groups? Homogeneity tests and the implied bias.

Pooling the calibration of several groups (systems, strata) assumes that the judge has the
same specificity q0 and sensitivity q1 on every group. When it does not, the Rogan–Gladen
estimate of a group corrected with the pooled q̂0, q̂1 is biased by about

    θ(q̂_pooled) − θ(q̂_own) ≈ [(1 − θ)(q0_pooled − q0_g) − θ (q1_pooled − q1_g)] / J,

amplified 1/J, while the pooled interval is narrow (it counts every group's labels): a
narrow interval around a wrong value. This module gives the two numbers a caller needs to
see it, with no policy:

* :func:`homogeneity_test`: Pearson's chi-square (or the likelihood-ratio G) test that a
  binomial proportion (``tn/m0`` for q0, ``tp/m1`` for q1) is the same in every group;
* :func:`pooling_bias`: per group, Rogan–Gladen with the pooled calibration minus with the
  group's own, its first-order version with standard errors for a test, and where the
  group's own calibration identifies θ at all;
* :func:`pooled_half_width`: the half-width of a group's pooled interval, the yardstick of
  a bias that matters.

Everything here is numpy/scipy and vectorised; :func:`bayesjudge.diagnostics.
check_pooled_calibration` applies it to a :class:`~bayesjudge.JudgeCounts` and decides when
to warn.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import special, stats

from bayesjudge.core._results import scalar_or_array
from bayesjudge.core._validation import as_subcount
from bayesjudge.core.correction import delta_method_variance
from bayesjudge.core.kernels import rogan_gladen_counts

__all__ = [
    "HOMOGENEITY_METHODS",
    "Homogeneity",
    "PoolingBias",
    "homogeneity_test",
    "pooled_half_width",
    "pooling_bias",
]

#: The tests :func:`homogeneity_test` computes.
HOMOGENEITY_METHODS = ("pearson", "likelihood-ratio")


class Homogeneity(NamedTuple):
    """A test that a binomial proportion is the same in every group.

    ``statistic`` (Pearson's X² or the likelihood-ratio G²), ``df`` (groups with at least one
    item, minus 1), ``pvalue`` (the chi-square tail with ``df`` degrees of freedom) and
    ``pooled`` (the pooled proportion). ``statistic`` and ``pvalue`` are NaN where fewer than
    two groups have items (nothing to compare).
    """

    statistic: np.ndarray
    df: np.ndarray
    pvalue: np.ndarray
    pooled: np.ndarray


class PoolingBias(NamedTuple):
    """Per group: Rogan–Gladen θ̂ with the pooled and with the own calibration, and their gap.

    ``bias = theta_pooled - theta_own`` (the error that pooling adds if the own calibration
    is right; NaN where the own calibration does not identify θ), ``linear`` its first-order
    version (defined wherever the group has test items and labels of both kinds), ``se`` the
    standard error of ``linear`` that a test of it uses, ``se_null`` its standard error when
    the judge is the same on every group, and ``identified`` where ``bias`` exists (own and
    pooled Ĵ ≠ 0, both labels present, test items present).
    """

    bias: np.ndarray
    linear: np.ndarray
    se: np.ndarray
    se_null: np.ndarray
    theta_pooled: np.ndarray
    theta_own: np.ndarray
    identified: np.ndarray


def homogeneity_test(successes, totals, axis: int = 0, method: str = "pearson") -> Homogeneity:
    """Test that ``successes / totals`` has one value in every group along ``axis``.

    The groups × {success, failure} contingency table is tested for homogeneity (equal
    proportions), one table per position of the other axes.

    Parameters
    ----------
    successes, totals : array_like
        Counts per group, e.g. ``tn`` and ``m0`` (q0) or ``tp`` and ``m1`` (q1); whole
        numbers with ``0 <= successes <= totals``. They broadcast against each other.
    axis : int, default 0
        The axis of the groups.
    method : {"pearson", "likelihood-ratio"}, default "pearson"
        Pearson's X² = Σ (x_g − m_g π̂)² / (m_g π̂ (1 − π̂)) or the likelihood-ratio (G)
        statistic 2 Σ [x_g log(x_g / (m_g π̂)) + (m_g − x_g) log((m_g − x_g)/(m_g (1 − π̂)))],
        with π̂ = Σ x_g / Σ m_g.

    Returns
    -------
    Homogeneity
        ``(statistic, df, pvalue, pooled)`` with ``axis`` removed.

    Notes
    -----
    Groups with ``totals = 0`` carry no information about the proportion and are left out
    (``df`` counts the others). Where every item of every group is a success (or every one a
    failure), the groups agree exactly: statistic 0, p-value 1. The p-value is the
    large-sample chi-square tail with ``df`` degrees of freedom; with expected failure
    counts of a few per group it is approximate, and Pearson's X² keeps close to its level
    there while G² rejects too often (Agresti, *Categorical Data Analysis*, Sec. 3.2; the
    false-alarm rate of the rule built on it is checked by simulation in
    ``tests/estimate/test_pooled_calibration.py``). Without Yates' correction, this is
    ``scipy.stats.chi2_contingency(table, correction=False)`` (``lambda_="log-likelihood"``
    for G) on the table of the groups with items, which raises on an all-success table
    where this returns 0.

    References
    ----------
    Agresti, *Categorical Data Analysis* (3rd ed.), Sec. 3.2 (chi-square tests of
    independence / homogeneity); Fiedler, Sec. 4.4 (when a shared calibration set is biased).

    Examples
    --------
    q0 = 0.9, 0.9 and 0.5 in three systems of 50 truly-incorrect labels each:

    >>> from bayesjudge.core.pooling import homogeneity_test
    >>> h = homogeneity_test([45, 45, 25], [50, 50, 50])
    >>> print(f"X2 = {h.statistic:.2f}, df = {h.df}, p = {h.pvalue:.2g}")
    X2 = 29.81, df = 2, p = 3.4e-07

    One test per column (stratum) with ``axis=0``:

    >>> homogeneity_test([[45, 10], [44, 10]], [[50, 20], [50, 20]]).pvalue.round(3)
    array([0.749, 1.   ])
    """
    if method not in HOMOGENEITY_METHODS:
        raise ValueError(
            f"method must be one of {HOMOGENEITY_METHODS}; got {method!r}. Use 'pearson' "
            f"(the default) unless you need the likelihood-ratio (G) statistic."
        )
    x, m = as_subcount("successes", successes, "totals", totals)
    x, m = (np.moveaxis(a.astype(float), axis, 0) for a in np.broadcast_arrays(x, m))
    present = m > 0
    groups = present.sum(axis=0)
    xs, ms = x.sum(axis=0), m.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = xs / ms
        expected_x = m * pooled
        expected_y = m * (1 - pooled)
        if method == "pearson":
            terms = (x - expected_x) ** 2 / (m * pooled * (1 - pooled))
        else:
            terms = 2 * (special.xlogy(x, x / expected_x) +
                         special.xlogy(m - x, (m - x) / expected_y))  # fmt: skip
    # All successes or all failures: every group has the pooled proportion exactly.
    degenerate = (xs == 0) | (xs == ms)
    statistic = np.where(present, np.where(degenerate, 0.0, terms), 0.0).sum(axis=0)
    df = np.maximum(groups - 1, 0)
    testable = groups >= 2
    statistic = np.where(testable, statistic, np.nan)
    pvalue = np.where(testable, stats.chi2.sf(statistic, np.maximum(df, 1)), np.nan)
    return Homogeneity(
        scalar_or_array(statistic),
        scalar_or_array(df.astype(np.int64)),
        scalar_or_array(pvalue),
        scalar_or_array(np.where(ms > 0, pooled, np.nan)),
    )


def _diff_variance(x, m, axis):
    """Var(q̂_g − q̂_pooled) per group, unrestricted, at q̃ = (x + 1)/(m + 2) (never 0)."""
    big = m.sum(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (x + 1) / (m + 2)
        var_x = m * q * (1 - q)  # Var of each group's count
        total = var_x.sum(axis=axis, keepdims=True)
        own = var_x / m**2 * (1 - m / big) ** 2
        return own + (total - var_x) / big**2


def pooling_bias(k, n, tn, m0, tp, m1, axis: int = 0) -> PoolingBias:
    """Per group: how far pooling the calibration over ``axis`` moves the Rogan–Gladen estimate.

    Parameters
    ----------
    k, n : array_like
        Each group's test items judged correct and test items.
    tn, m0, tp, m1 : array_like
        Each group's own calibration counts; the pooled calibration is their sum over
        ``axis``.
    axis : int, default 0
        The axis of the groups that share the pooled calibration.

    Returns
    -------
    PoolingBias
        ``(bias, linear, se, se_null, theta_pooled, theta_own, identified)``, each of the
        broadcast shape of the inputs; θ̂ are unclipped
        (:func:`~bayesjudge.core.kernels.rogan_gladen_counts`).

    Notes
    -----
    ``bias = θ̂(p̂, q̂_pooled) − θ̂(p̂, q̂_own)``: if the judge differs between the groups and
    the group's own calibration is right, the pooled estimate is off by this much (Fiedler,
    App. C evaluated at the estimates). It divides by the group's own Ĵ, so it is
    heavy-tailed where that is small; a test uses its first-order version

        linear = [(1 − θ̂)(q̂0_pooled − q̂0_own) − θ̂ (q̂1_pooled − q̂1_own)] / Ĵ_pooled,

    (θ̂, Ĵ at the pooled calibration, θ̂ clipped to [0, 1]), linear in the proportions and
    defined even where the own Ĵ is 0. ``se_null`` is its delta-method standard error when
    the judge is the same on every group: the group's labels are part of the pool, so
    ``Var(q̂0_own − q̂0_pooled) = q0 (1 − q0)(1/m0 − 1/M0)`` (likewise q1), at the pooled
    q̂. ``se`` is the larger of ``se_null`` and the unrestricted standard error,
    ``Var(q̂_own − q̂_pooled) = v_g (1 − m_g/M)² + Σ_{h≠g} v_h m_h²/M²`` with
    ``v_h = q̃_h (1 − q̃_h)/m_h`` at q̃_h = (x_h + 1)/(m_h + 2), θ̂ and Ĵ held fixed: valid
    whether or not the judge differs, and never 0. With a few labels per group the normal
    approximation of ``linear``/``se_null`` is liberal (skewed binomial tails); the larger
    ``se`` keeps a test at its level (checked by simulation in the tests).

    J = 0 policy: ``bias``, ``theta_own`` NaN and ``identified`` False where the group's own
    calibration or the pooled one gives Ĵ = 0 exactly or lacks a label, or the group has no
    test items; ``linear`` and the SEs are NaN only where the group lacks test items or a
    label kind, or the pooled Ĵ ≤ 0.

    Examples
    --------
    Two systems, the second judged much worse (q̂0 0.5 instead of 0.9); the pooled q̂0 = 0.7
    moves the first system's estimate (0.625 with its own labels) down and the second's
    (0.25) up, both to 0.5:

    >>> from bayesjudge.core.pooling import pooling_bias
    >>> r = pooling_bias([600, 600], [1000, 1000], [90, 50], [100, 100], [90, 90],
    ...                  [100, 100])
    >>> r.bias.round(3), r.linear.round(3), r.se.round(3)
    (array([-0.125,  0.25 ]), array([-0.167,  0.167]), array([0.032, 0.032]))
    """
    k, n, tn, m0, tp, m1 = np.broadcast_arrays(
        *(np.asarray(a, dtype=float) for a in (k, n, tn, m0, tp, m1))
    )
    tnc, m0c, tpc, m1c = (a.sum(axis=axis, keepdims=True) for a in (tn, m0, tp, m1))
    own = rogan_gladen_counts(k, n, tn, m0, tp, m1)
    pooled = rogan_gladen_counts(k, n, tnc, m0c, tpc, m1c)
    ok = own.identified & pooled.identified & (n > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        q0c, q1c = tnc / m0c, tpc / m1c
        jc = q0c + q1c - 1
        theta = np.clip(pooled.theta, 0.0, 1.0)
        usable = (n > 0) & (m0 > 0) & (m1 > 0) & (jc > 0)
        linear = ((1 - theta) * (q0c - tn / m0) - theta * (q1c - tp / m1)) / jc
        var0 = (1 - theta) ** 2 * q0c * (1 - q0c) * (1 / m0 - 1 / m0c)
        var1 = theta**2 * q1c * (1 - q1c) * (1 / m1 - 1 / m1c)
        var_null = (var0 + var1) / jc**2
        var_free = ((1 - theta) ** 2 * _diff_variance(tn, m0, axis)
                    + theta**2 * _diff_variance(tp, m1, axis)) / jc**2  # fmt: skip
    nan = np.full(ok.shape, np.nan)
    se_null = np.sqrt(np.maximum(var_null, 0.0))
    return PoolingBias(
        scalar_or_array(np.where(ok, pooled.theta - own.theta, nan)),
        scalar_or_array(np.where(usable, linear, nan)),
        scalar_or_array(np.where(usable, np.sqrt(np.maximum(var_null, var_free)), nan)),
        scalar_or_array(np.where(usable, se_null, nan)),
        scalar_or_array(np.where(pooled.identified & (n > 0), pooled.theta, nan)),
        scalar_or_array(np.where(ok, own.theta, nan)),
        scalar_or_array(ok),
    )


def pooled_half_width(k, n, tn_pooled, m0_pooled, tp_pooled, m1_pooled, alpha: float = 0.05):
    """Half-width ``z·SE`` of a group's delta-method interval with the pooled calibration.

    The yardstick of "a bias that matters": a pooled interval misses the truth when the
    bias pooling adds is comparable to its half-width.

    Parameters
    ----------
    k, n : array_like
        Each group's test counts.
    tn_pooled, m0_pooled, tp_pooled, m1_pooled : array_like
        The pooled calibration counts (broadcast against ``k``, ``n``).
    alpha : float, default 0.05
        Interval level ``1 - alpha``.

    Returns
    -------
    numpy.ndarray
        ``z_{1−α/2} · sqrt(eq. 10)`` (:func:`~bayesjudge.core.correction.
        delta_method_variance` at the unclipped estimates); NaN where the group has no test
        items or the pooled calibration lacks a label or has Ĵ ≤ 0 (J = 0 policy: NaN).

    Examples
    --------
    >>> from bayesjudge.core.pooling import pooled_half_width
    >>> print(f"{pooled_half_width(400, 1000, 70, 100, 90, 100):.4f}")
    0.1356
    """
    k, n, tnc, m0c, tpc, m1c = (
        np.asarray(a, dtype=float) for a in (k, n, tn_pooled, m0_pooled, tp_pooled, m1_pooled)
    )
    k, n, tnc, m0c, tpc, m1c = np.broadcast_arrays(k, n, tnc, m0c, tpc, m1c)
    with np.errstate(divide="ignore", invalid="ignore"):
        q0, q1 = tnc / m0c, tpc / m1c
        ok = (n > 0) & (m0c > 0) & (m1c > 0) & (q0 + q1 > 1)
    safe = (
        np.where(ok, k / np.where(ok, n, 1.0), 0.5),
        np.where(ok, q0, 0.9),
        np.where(ok, q1, 0.9),
        np.where(ok, n, 1.0),
        np.where(ok, m0c, 1.0),
        np.where(ok, m1c, 1.0),
    )
    z = float(stats.norm.isf(alpha / 2))
    half = z * np.sqrt(delta_method_variance(*safe))
    return scalar_or_array(np.where(ok, half, np.nan))
