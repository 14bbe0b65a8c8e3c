"""Vectorised numpy kernels: the formulas of the package, written once and not validated.

Every kernel takes numpy arrays (or scalars) that the caller has already validated, broadcasts
them and returns arrays; none raises on bad input, and none decides what to do where a
quantity is not defined. In particular the Rogan–Gladen kernels return the estimate together
with an ``identified`` mask, and **each caller states its own policy** for the groups where
the judge's Youden index is exactly 0 (θ not identified): raise (``bj.rogan_gladen``,
``bj.bootstrap_rogan_gladen``), NaN (``bj.estimate``, the diagnostics, the LLMBar and
comparison studies), ½ (the coverage study) or a placeholder with a flag (the bootstrap
replicates). The validated public functions of :mod:`bayesjudge.core` sit on top of them.

Notation (Lee et al.): ``k`` of ``n`` test items are judged correct; ``tn`` of the ``m0``
truly incorrect calibration items are judged incorrect and ``tp`` of the ``m1`` truly correct
ones are judged correct; q̂0 = tn/m0, q̂1 = tp/m1 and Ĵ = q̂0 + q̂1 − 1.

This module imports numpy and scipy only (it sits below :mod:`bayesjudge.core._validation`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats

from bayesjudge.core._results import EstimateInterval, scalar_or_array

__all__ = [
    "LOW_J_CATEGORIES",
    "LOW_J_METHOD",
    "LOW_J_THRESHOLD",
    "DeltaDifference",
    "LowJ",
    "RoganGladen",
    "linear_combination_interval",
    "low_j",
    "low_j_category",
    "rg_difference_delta",
    "rogan_gladen_counts",
    "rogan_gladen_ratio",
    "wilson_limits",
    "youden_from_counts",
    "youden_interval",
    "youden_is_zero",
    "youden_numerator",
]

#: Below this Youden index the 1/J amplification of the correction is at least 5×: the one
#: threshold of the low-J rule (:func:`low_j_category`), used by ``bj.estimate`` and
#: ``check_comparison`` (and quoted by the report).
LOW_J_THRESHOLD = 0.2

#: The interval of J used by the low-J rule: Newcombe's hybrid score interval (the method
#: of the report's J table and of ``judge_diagnostics``; see :func:`youden_interval`).
LOW_J_METHOD = "newcombe"

#: The classes of :func:`low_j_category`, from worst to best.
LOW_J_CATEGORIES = ("undefined", "worse", "low", "uncertain", "fine")

# m0·m1 up to this bound makes tn·m1 + tp·m0 − m0·m1 exact in float64 (see youden_is_zero).
_EXACT_PRODUCTS = 2**52


class RoganGladen(NamedTuple):
    """A Rogan–Gladen estimate and where it is identified.

    Attributes
    ----------
    theta : numpy.ndarray
        θ̂, NaN where not identified (the caller replaces those entries by its policy).
    identified : numpy.ndarray of bool
        Where Ĵ ≠ 0 (tested exactly) and, from counts, ``m0 > 0`` and ``m1 > 0``.
    """

    theta: np.ndarray
    identified: np.ndarray


class DeltaDifference(NamedTuple):
    """Delta-method result for ``Δθ = θ_A − θ_B``: estimate, SE and the two variance parts."""

    estimate: np.ndarray
    se: np.ndarray
    var_test: np.ndarray
    var_calibration: np.ndarray


class LowJ(NamedTuple):
    """Ĵ, its interval and its class under the low-J rule (:func:`low_j`)."""

    youden: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    category: np.ndarray


# ----------------------------------------------------------------------------- Youden's J


def youden_numerator(tn, m0, tp, m1):
    """Return ``tn·m1 + tp·m0 − m0·m1`` = Ĵ·m0·m1, the integer numerator of Ĵ.

    Parameters
    ----------
    tn, m0, tp, m1 : array_like
        Calibration counts (whole numbers, as integers or floats).

    Returns
    -------
    numpy.ndarray
        The numerator, broadcast over the inputs (exact in float64 while m0·m1 <= 2**52).

    Examples
    --------
    >>> from bayesjudge.core.kernels import youden_numerator
    >>> youden_numerator(70, 100, 90, 100)  # J = 0.6 = 6000 / (100 * 100)
    6000
    """
    return tn * m1 + tp * m0 - m0 * m1


def youden_is_zero(tn, m0, tp, m1) -> np.ndarray:
    """Return where ``tn/m0 + tp/m1 == 1`` exactly, i.e. ``tn·m1 + tp·m0 == m0·m1``.

    The exact J = 0 test of the package, on the integer counts (in floating point
    ``tn/m0 + tp/m1 - 1`` can be 1e-17 instead of 0). The products are exact in float64
    while ``m0·m1 <= 2**52``; larger calibration sets are tested with Python integers, so that
    rounding never hides (or invents) J = 0. ``m0 = 0`` (hence ``tn = 0``) or ``m1 = 0`` also
    counts as zero. Counts must already be validated whole numbers (as floats or integers).

    Parameters
    ----------
    tn, m0, tp, m1 : array_like
        Calibration counts.

    Returns
    -------
    numpy.ndarray of bool
        Broadcast over the inputs.

    Examples
    --------
    >>> from bayesjudge.core.kernels import youden_is_zero
    >>> youden_is_zero([5, 6], 10, 5, 10).tolist()
    [True, False]
    >>> big = 2**53  # float64 would round 2**52 * (2**53 + 1); the test stays exact
    >>> [bool(youden_is_zero(tn, big, 2**52, big)) for tn in (2**52, 2**52 + 1)]
    [True, False]
    """
    tn, m0, tp, m1 = np.broadcast_arrays(*(np.asarray(a) for a in (tn, m0, tp, m1)))
    # Below 2**52 every product and the sum of the two positive ones are exact in float64.
    if tn.size == 0 or float(np.max(m0)) * float(np.max(m1)) <= _EXACT_PRODUCTS:
        return np.asarray(youden_numerator(tn, m0, tp, m1) == 0)
    as_int = np.frompyfunc(int, 1, 1)
    a, b, c, d = (as_int(x) for x in (tn, m0, tp, m1))
    return np.asarray(a * d + c * b - b * d == 0, dtype=bool)


def youden_from_counts(tn, m0, tp, m1):
    """Return Ĵ = tn/m0 + tp/m1 − 1 (NaN where ``m0 = 0`` or ``m1 = 0``).

    Examples
    --------
    >>> from bayesjudge.core.kernels import youden_from_counts
    >>> youden_from_counts([70, 0], [100, 0], 90, 100).round(2).tolist()
    [0.6, nan]
    """
    tn, m0, tp, m1 = (np.asarray(a, dtype=float) for a in (tn, m0, tp, m1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return tn / m0 + tp / m1 - 1.0


# ----------------------------------------------------------------------------- Rogan–Gladen


def rogan_gladen_counts(k, n, tn, m0, tp, m1, *, clip: bool = False) -> RoganGladen:
    """Rogan–Gladen θ̂ = (p̂ + q̂0 − 1)/(q̂0 + q̂1 − 1) from counts, and where it is identified.

    Computed as ``(p̂·m0·m1 + tn·m1 − m0·m1) / (tn·m1 + tp·m0 − m0·m1)`` (the ratio multiplied
    through by m0·m1), whose denominator is an exact integer, so ``identified`` (Ĵ ≠ 0,
    :func:`youden_is_zero`, and ``m0 > 0``, ``m1 > 0``) is tested exactly on the counts.

    Parameters
    ----------
    k, n : array_like
        Test items judged correct and test items (``n >= 1`` where a value is wanted).
    tn, m0, tp, m1 : array_like
        Calibration counts.
    clip : bool, default False
        Truncate θ̂ to [0, 1].

    Returns
    -------
    RoganGladen
        ``(theta, identified)``: θ̂ with NaN where not identified, and the mask. The kernel
        decides no policy at J = 0: the caller raises, keeps the NaN, or fills in a value.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesjudge.core.kernels import rogan_gladen_counts
    >>> theta, ok = rogan_gladen_counts([400, 100], 1000, [70, 5], [100, 10], [90, 5], [100, 10])
    >>> theta.round(4).tolist(), ok.tolist()
    ([0.1667, nan], [True, False])
    >>> np.where(ok, theta, 0.5).round(4).tolist()  # a caller's policy: ½ where J = 0
    [0.1667, 0.5]
    """
    k, n, tn, m0, tp, m1 = (np.asarray(a) for a in (k, n, tn, m0, tp, m1))
    identified = ~youden_is_zero(tn, m0, tp, m1) & (m0 > 0) & (m1 > 0)
    mm = m0 * m1
    den = youden_numerator(tn, m0, tp, m1)
    with np.errstate(divide="ignore", invalid="ignore"):
        num = (k / n) * mm + tn * m1 - mm
        theta = num / np.where(identified, den, 1.0)
    if clip:
        theta = np.clip(theta, 0.0, 1.0)
    return RoganGladen(np.where(identified, theta, np.nan), np.asarray(identified))


def rogan_gladen_ratio(p, q0, q1, *, clip: bool = False) -> RoganGladen:
    """Rogan–Gladen θ̂ = (p + q0 − 1)/(q0 + q1 − 1) from proportions, and where ``q0 + q1 ≠ 1``.

    For proportions that are not counts (true or planned values, or p̂ of an unlimited test
    set); from counts use :func:`rogan_gladen_counts`, whose J = 0 test is exact.

    Examples
    --------
    >>> from bayesjudge.core.kernels import rogan_gladen_ratio
    >>> theta, ok = rogan_gladen_ratio([0.4, 0.4], [0.7, 0.5], [0.9, 0.5])
    >>> theta.round(4).tolist(), ok.tolist()
    ([0.1667, nan], [True, False])
    """
    p, q0, q1 = (np.asarray(a) for a in (p, q0, q1))
    j = np.asarray(q0 + q1 - 1)
    identified = j != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = (p + q0 - 1) / np.where(identified, j, 1.0)
    if clip:
        theta = np.clip(theta, 0.0, 1.0)
    return RoganGladen(np.where(identified, theta, np.nan), identified)


# ------------------------------------------------------------------------- intervals of J


def wilson_limits(k, n, z: float):
    """Unclipped Wilson score limits for ``k`` successes of ``n`` at normal quantile ``z``.

    Examples
    --------
    >>> from bayesjudge.core.kernels import wilson_limits
    >>> [round(float(x), 4) for x in wilson_limits(7, 10, 1.959963984540054)]
    [0.3968, 0.8922]
    """
    z2 = z**2
    centre = (k + z2 / 2) / (n + z2)
    half = z / (n + z2) * np.sqrt(k * (n - k) / n + z2 / 4)
    return centre - half, centre + half


def linear_combination_interval(props, signs, offset, alpha, method, bound) -> EstimateInterval:
    """Interval for ``offset + Σ sign·x/m`` over independent binomial proportions x/m.

    Parameters
    ----------
    props : list of (x, m)
        Successes and sizes of each proportion (arrays that broadcast).
    signs : sequence of {1, -1}
        The sign of each proportion.
    offset : float
        Added to the sum (−1 for J = q0 + q1 − 1).
    alpha : float
        The interval has level ``1 − alpha`` (z = Φ⁻¹(1 − alpha/2)).
    method : {"wald", "agresti-caffo", "newcombe"}
        ``"newcombe"``: Newcombe's hybrid score (MOVER) from each proportion's Wilson limits;
        ``"agresti-caffo"``: Wald after adding one success and one failure to each
        proportion, centred at the adjusted estimate; ``"wald"``: plain Wald.
    bound : float
        The interval is clipped to ``[-bound, bound]``.

    Returns
    -------
    EstimateInterval
        ``(estimate, lower, upper)`` (numpy scalars for scalar input).

    Examples
    --------
    >>> from bayesjudge.core.kernels import linear_combination_interval
    >>> r = linear_combination_interval([(70, 100), (90, 100)], (1, 1), -1.0, 0.05,
    ...                                 "newcombe", 1.0)
    >>> print(f"{r.estimate:.3f} [{r.lower:.3f}, {r.upper:.3f}]")
    0.600 [0.479, 0.693]
    """
    z = float(stats.norm.isf(alpha / 2))
    arrays = np.broadcast_arrays(*(a for pair in props for a in pair))
    xs, ms = arrays[0::2], arrays[1::2]
    est = offset + sum(s * x / m for s, x, m in zip(signs, xs, ms, strict=True))
    if method == "newcombe":
        # Newcombe's hybrid score (MOVER): combine each proportion's Wilson limits, taking the
        # lower limit of a term that enters with + and the upper limit of one entering with -.
        down = np.zeros_like(est)
        up = np.zeros_like(est)
        for s, x, m in zip(signs, xs, ms, strict=True):
            lo, hi = wilson_limits(x, m, z)
            p = x / m
            below, above = (p - lo) ** 2, (hi - p) ** 2
            down += below if s > 0 else above
            up += above if s > 0 else below
        lower, upper = est - np.sqrt(down), est + np.sqrt(up)
    else:
        add = 1.0 if method == "agresti-caffo" else 0.0
        centre = np.full_like(est, offset)
        var = np.zeros_like(est)
        for s, x, m in zip(signs, xs, ms, strict=True):
            p = (x + add) / (m + 2 * add)
            centre += s * p
            var += p * (1 - p) / (m + 2 * add)
        half = z * np.sqrt(var)
        lower, upper = centre - half, centre + half
    return EstimateInterval(
        scalar_or_array(est),
        scalar_or_array(np.clip(lower, -bound, bound)),
        scalar_or_array(np.clip(upper, -bound, bound)),
    )


def youden_interval(tn, m0, tp, m1, alpha: float, method: str = LOW_J_METHOD):
    """Ĵ and its interval, clipped to [−1, 1] (Newcombe's hybrid score interval by default).

    Needs ``m0 >= 1`` and ``m1 >= 1``. ``bj.youden`` is the validated version.

    Examples
    --------
    >>> from bayesjudge.core.kernels import youden_interval
    >>> print("{:.3f} [{:.3f}, {:.3f}]".format(*youden_interval(70, 100, 90, 100, 0.05)))
    0.600 [0.479, 0.693]
    """
    return linear_combination_interval([(tn, m0), (tp, m1)], (1, 1), -1.0, alpha, method, bound=1.0)


# ---------------------------------------------------------------------------- low-J rule


def low_j_category(j, lower, upper, identified=None, threshold: float = LOW_J_THRESHOLD):
    """Classify judges by Ĵ and its interval: the one low-J rule of the package.

    In this order (the first that applies):

    * ``"undefined"`` — not ``identified`` (Ĵ = 0 exactly: the Rogan–Gladen estimate divides
      by 0). Only where ``identified`` is given; else such a judge is ``"low"``.
    * ``"worse"`` — worse than chance: the whole interval is below 0 and ``|Ĵ| >= threshold``
      (verdicts anti-correlated with the truth; swapped labels?).
    * ``"low"`` — ``|Ĵ| < threshold``: the correction amplifies errors more than 1/threshold.
    * ``"uncertain"`` — the interval reaches 0 (``lower <= 0``): a judge no better than chance
      is not ruled out.
    * ``"fine"`` — otherwise.

    Every class but ``"fine"`` is a finding ("low judge quality"). ``bj.estimate`` and
    ``check_comparison`` apply it to the Newcombe interval of :func:`low_j` (a fit's
    posterior J and ETI in ``check_comparison`` with a fit).

    Examples
    --------
    >>> from bayesjudge.core.kernels import low_j_category
    >>> low_j_category([0.6, 0.1, -0.6, 0.3, 0.0], [0.5, -0.1, -0.7, -0.01, -0.2],
    ...                [0.7, 0.3, -0.5, 0.6, 0.2], [True, True, True, True, False]).tolist()
    ['fine', 'low', 'worse', 'uncertain', 'undefined']
    """
    j, lower, upper = (np.asarray(a, dtype=float) for a in (j, lower, upper))
    undefined = np.zeros(j.shape, bool) if identified is None else ~np.asarray(identified)
    conditions = [
        undefined,
        (upper < 0) & (np.abs(j) >= threshold),
        np.abs(j) < threshold,
        lower <= 0,
    ]
    return np.select(conditions, list(LOW_J_CATEGORIES[:4]), default="fine").astype(object)


def low_j(tn, m0, tp, m1, alpha: float, *, undefined_at_zero: bool = True) -> LowJ:
    """Ĵ, its Newcombe interval and the low-J class (:func:`low_j_category`) from counts.

    Parameters
    ----------
    tn, m0, tp, m1 : array_like
        Calibration counts, ``m0 >= 1`` and ``m1 >= 1``.
    alpha : float
        Level of the interval of J.
    undefined_at_zero : bool, default True
        Class Ĵ = 0 (exactly, on the counts) as ``"undefined"`` (methods that divide by J);
        ``False`` classes it as ``"low"`` (PPI++, which does not divide by J).

    Examples
    --------
    >>> from bayesjudge.core.kernels import low_j
    >>> r = low_j(6, 20, 19, 20, alpha=0.05)  # J = 0.25, Newcombe interval [0.008, 0.473]
    >>> print(f"{r.youden:.2f} [{r.lower:.3f}, {r.upper:.3f}] {r.category}")
    0.25 [0.008, 0.473] fine
    """
    j, lower, upper = youden_interval(tn, m0, tp, m1, alpha)
    identified = ~youden_is_zero(tn, m0, tp, m1) if undefined_at_zero else None
    category = low_j_category(j, lower, upper, identified)
    return LowJ(j, lower, upper, scalar_or_array(category))


# --------------------------------------------------------------------- delta-method Δθ


def rg_difference_delta(cells, totals, cal_a, cal_b=None) -> DeltaDifference:
    """Delta-method Δθ̂ = θ̂_A − θ̂_B (unclipped Rogan–Gladen) and its standard error.

    The one implementation behind ``bj.core.rg_difference_se``, ``bj.compare(method="delta")``
    and the closed-form Δθ table of the diagnostics and the report.

    Parameters
    ----------
    cells : tuple of array_like
        ``(n11, n10, n01, n00)``: A's and B's verdicts on their shared items (all zero for
        unpaired systems).
    totals : tuple of array_like
        ``(k_a, n_a, k_b, n_b)``: each system's test totals, shared items included.
    cal_a : tuple of array_like
        ``(tn, m0, tp, m1)`` of A's calibration, or of the one shared set.
    cal_b : tuple of array_like, optional
        B's calibration; None for one calibration set shared by both (Fiedler App. B).

    Returns
    -------
    DeltaDifference
        ``(estimate, se, var_test, var_calibration)``, NaN where a θ̂ is not identified
        (Ĵ = 0, an empty calibration class) or a system has no test items: the caller
        raises there (``rg_difference_se``) or keeps the NaN (``compare``, diagnostics).

    Notes
    -----
    See :func:`bayesjudge.core.paired.rg_difference_se` for the formulas (Lee et al. eq. 10
    per system; Fiedler App. B for the shared set; the paired covariance of the verdicts on
    the shared items in the test part).

    Examples
    --------
    >>> from bayesjudge.core.kernels import rg_difference_delta
    >>> r = rg_difference_delta((450, 100, 50, 400), (550, 1000, 500, 1000), (70, 100, 90, 100))
    >>> print(f"{r.estimate:.4f} ± {r.se:.4f}")
    0.0833 ± 0.0216
    """
    n11, n10, n01, n00 = (np.asarray(c) for c in cells)
    k_a, n_a, k_b, n_b = (np.asarray(t) for t in totals)
    cal_a = tuple(np.asarray(c) for c in cal_a)
    cal_b = None if cal_b is None else tuple(np.asarray(c) for c in cal_b)
    shared = cal_b is None
    n_s = n11 + n10 + n01 + n00
    ks_a, ks_b = n11 + n10, n11 + n01
    with np.errstate(divide="ignore", invalid="ignore"):
        p_a, p_b = k_a / n_a, k_b / n_b
        safe_s = np.where(n_s > 0, n_s, 1.0)
        pi11, pi_a, pi_b = n11 / safe_s, ks_a / safe_s, ks_b / safe_s
        cov = n_s * (pi11 - pi_a * pi_b) / (n_a * n_b)

        def test_var(k_x, n_x, ks_x, pi_x):
            u = n_x - n_s
            rho = (k_x - ks_x) / np.where(u > 0, u, 1.0)
            return (n_s * pi_x * (1 - pi_x) + u * rho * (1 - rho)) / n_x**2

        var_a, var_b = test_var(k_a, n_a, ks_a, pi_a), test_var(k_b, n_b, ks_b, pi_b)

        def plug_in(cal):
            tn, m0, tp, m1 = cal
            ok = ~youden_is_zero(tn, m0, tp, m1) & (m0 > 0) & (m1 > 0)
            q0, q1 = tn / m0, tp / m1
            j = np.where(ok, q0 + q1 - 1, np.nan)
            return q0, q1, j, m0, m1

        q0_a, q1_a, j_a, m0a, m1a = plug_in(cal_a)
        q0_b, q1_b, j_b, m0b, m1b = plug_in(cal_a if shared else cal_b)
        theta_a = (p_a + q0_a - 1) / j_a
        theta_b = (p_b + q0_b - 1) / j_b
        if shared:
            var_test = (var_a + var_b - 2 * cov) / j_a**2
            var_cal = (
                (p_a - p_b) ** 2 * (q0_a * (1 - q0_a) / m0a + q1_a * (1 - q1_a) / m1a) / j_a**4
            )
        else:
            var_test = var_a / j_a**2 + var_b / j_b**2 - 2 * cov / (j_a * j_b)
            var_cal = sum(
                ((1 - t) ** 2 * q0 * (1 - q0) / m0 + t**2 * q1 * (1 - q1) / m1) / j**2
                for t, q0, q1, m0, m1, j in (
                    (theta_a, q0_a, q1_a, m0a, m1a, j_a),
                    (theta_b, q0_b, q1_b, m0b, m1b, j_b),
                )
            )
        var_test = np.maximum(var_test, 0.0)  # round-off only: it is a variance (NaN stays)
        se = np.sqrt(var_test + var_cal)
    return DeltaDifference(
        scalar_or_array(theta_a - theta_b),
        scalar_or_array(se),
        scalar_or_array(var_test),
        scalar_or_array(var_cal),
    )
