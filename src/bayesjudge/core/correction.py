"""Bias correction of judge scores: Rogan-Gladen, Lang-Reiczigel interval, delta variance.

Notation (Lee et al.): the judge has specificity ``q0`` = P(judge says incorrect | truly
incorrect) and sensitivity ``q1`` = P(judge says correct | truly correct); ``p`` is the share of
the ``n`` test items the judge calls correct; ``m0`` / ``m1`` are the numbers of calibration items
humans labelled incorrect / correct; ``J = q0 + q1 - 1`` is Youden's index.

Every function takes numpy arrays or scalars, broadcasts them against each other and returns
numpy arrays (numpy scalars for scalar input). Only numpy and scipy are used here.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bayesjudge.core._results import Interval, scalar_or_array
from bayesjudge.core._validation import (
    LR_MIN_ALPHA,
    as_count,
    as_probability,
    broadcast,
    check_lr_alpha,
    format_values,
    two_sided_z,
)
from bayesjudge.core.kernels import rogan_gladen_ratio

__all__ = [
    "LR_MIN_ALPHA",
    "AdjustedEstimates",
    "adjusted_estimates",
    "delta_method_variance",
    "lang_reiczigel_interval",
    "lang_reiczigel_length",
    "rogan_gladen",
]


class AdjustedEstimates(NamedTuple):
    """The smoothed ("tilde") quantities of eqs. (6)-(8) of Lee et al.

    Attributes
    ----------
    p, q0, q1 : numpy.ndarray
        Smoothed proportions p̃ = (n·p + z²/2)/(n + z²), q̃0 = (m0·q0 + 1)/(m0 + 2),
        q̃1 = (m1·q1 + 1)/(m1 + 2).
    n, m0, m1 : numpy.ndarray
        Smoothed sizes ñ = n + z², m̃0 = m0 + 2, m̃1 = m1 + 2.
    theta : numpy.ndarray
        θ̃ = (p̃ + q̃0 - 1)/(q̃0 + q̃1 - 1), the centre of the interval before the shift.
    dtheta : numpy.ndarray
        The centre shift dθ̃ of eq. (8).
    se : numpy.ndarray
        The standard error of eq. (6), the square root divided by ``|q̃0 + q̃1 - 1|`` (always
        ≥ 0; the reference code divides by the signed value).
    z : float
        The normal quantile z = Φ⁻¹(1 - alpha/2).
    """

    p: np.ndarray
    q0: np.ndarray
    q1: np.ndarray
    n: np.ndarray
    m0: np.ndarray
    m1: np.ndarray
    theta: np.ndarray
    dtheta: np.ndarray
    se: np.ndarray
    z: float


def _positions(mask: np.ndarray) -> str:
    """Describe where ``mask`` is true: empty for scalars, a few index tuples otherwise."""
    if mask.ndim == 0:
        return ""
    idx = [tuple(int(i) for i in row) for row in np.argwhere(mask)]
    shown = ", ".join(str(i[0] if len(i) == 1 else i) for i in idx[:5])
    more = f", … ({len(idx) - 5} more)" if len(idx) > 5 else ""
    return f" at positions [{shown}{more}]"


def _pairs(names: str, a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> str:
    """Show up to five offending ``(a, b)`` pairs, aligned (unlike two separate value lists)."""
    a, b, mask = np.broadcast_arrays(a, b, mask)
    pairs = list(dict.fromkeys(zip(a[mask].tolist(), b[mask].tolist(), strict=True)))
    shown = ", ".join(f"({x!r}, {y!r})" for x, y in pairs[:5])
    more = f", … ({len(pairs) - 5} more)" if len(pairs) > 5 else ""
    return f"{names} = [{shown}{more}]"


def _require_identified(bad: np.ndarray, q0: np.ndarray, q1: np.ndarray) -> None:
    """Raise where ``bad`` (``q0 + q1 == 1`` exactly): θ is not identified by eq. (5)."""
    if bad.any():
        raise ValueError(
            f"q0 + q1 == 1{_positions(bad)} ({_pairs('(q0, q1)', q0, q1, bad)}): the judge is "
            "no better than chance there, so its verdicts carry no information about the true "
            "accuracy and the Rogan-Gladen "
            "estimate (which divides by q0 + q1 - 1) is undefined. Use lang_reiczigel_interval, "
            "whose smoothed q0 + q1 - 1 gives an honest (wide) interval, or a better judge."
        )


def _as_test_size(n) -> np.ndarray:
    """Return ``n`` as a float array of whole counts, allowing ``np.inf`` (n → ∞)."""
    arr = np.asarray(n)
    if arr.dtype != bool and np.issubdtype(arr.dtype, np.floating):
        is_inf = np.isposinf(arr)
        checked = as_count("n", np.where(is_inf, 0.0, arr))
        return np.where(is_inf, np.inf, checked)
    return as_count("n", arr)


def _z(alpha: float) -> float:
    # The reference code's call for alpha >= 1e-3 (z matches to the last bit), finite below.
    return two_sided_z(alpha)


def _smooth(p, q0, q1, n, m0, m1, z):
    """Eqs. (7)-(8) in the reference code's order of operations; also returns q̃0 + q̃1 - 1.

    Division by a zero smoothed Youden index gives ±inf/NaN here; callers handle it.
    """
    z2 = z**2
    with np.errstate(invalid="ignore"):
        # n = inf means no test-set uncertainty: p̃ = p and the p-term vanishes.
        p_t = np.where(np.isinf(n), p, (n * p + z2 / 2) / (n + z2))
    q0_t = (m0 * q0 + 1) / (m0 + 2)
    q1_t = (m1 * q1 + 1) / (m1 + 2)
    n_t, m0_t, m1_t = n + z2, m0 + 2, m1 + 2
    j_t = q0_t + q1_t - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        th = (p_t + q0_t - 1) / j_t
        dth = 2 * z2 * (-(1 - th) * q0_t * (1 - q0_t) / m0_t + th * q1_t * (1 - q1_t) / m1_t)
        root = np.sqrt(
            p_t * (1 - p_t) / n_t
            + (1 - th) ** 2 * q0_t * (1 - q0_t) / m0_t
            + th**2 * q1_t * (1 - q1_t) / m1_t
        )
        se_signed = root / j_t
    return p_t, q0_t, q1_t, n_t, m0_t, m1_t, th, dth, se_signed, j_t


def _validated(p, q0, q1, n, m0, m1):
    return broadcast(
        ("p", "q0", "q1", "n", "m0", "m1"),
        as_probability("p", p),
        as_probability("q0", q0),
        as_probability("q1", q1),
        _as_test_size(n),
        as_count("m0", m0),
        as_count("m1", m1),
    )


def rogan_gladen(p, q0, q1, clip: bool = True):
    """Bias-corrected accuracy θ̂ = (p + q0 - 1) / (q0 + q1 - 1) (Rogan-Gladen).

    Parameters
    ----------
    p : array_like
        Share of test items the judge calls correct, in [0, 1].
    q0 : array_like
        Judge specificity P(says incorrect | truly incorrect), in [0, 1] (estimated ``tn / m0``).
    q1 : array_like
        Judge sensitivity P(says correct | truly correct), in [0, 1] (estimated ``tp / m1``).
    clip : bool, default True
        Truncate the estimate to [0, 1] as the reference code does. ``clip=False`` returns the
        raw ratio, which can leave [0, 1] when ``p`` falls outside ``[1 - q0, q1]``.

    Returns
    -------
    numpy.ndarray or numpy.float64
        θ̂, broadcast over the inputs (a numpy scalar for scalar input).

    Raises
    ------
    ValueError
        If any input is not a proportion, or where ``q0 + q1 == 1`` exactly: there the judge is no
        better than chance and θ is not identified.

    Notes
    -----
    With known ``q0, q1`` the estimator is unbiased; with estimated ones it has an O(1/m) bias
    (Prop. 5.1). It is a point estimate only: report it with :func:`lang_reiczigel_interval`.

    Edge cases. Where ``J = q0 + q1 - 1 == 0`` exactly the formula divides by zero and θ is not
    identified, so a ``ValueError`` names the positions instead of returning NaN; the smoothed
    J̃ of :func:`lang_reiczigel_interval` is never exactly zero unless the calibration data are
    exactly at chance, and that function then returns the honest interval [0, 1]. Where
    ``J < 0`` (the judge is worse than chance, i.e. systematically inverted) the same formula is
    still the consistent estimator and is kept. Near ``J = 0`` the estimate is very unstable
    (its error is amplified by 1/J).

    References
    ----------
    Lee et al., *How to Correctly Report LLM-as-a-Judge Evaluations*, eq. (5) and the
    ``point_estimator`` of Appendix C; Rogan & Gladen (1978), Am. J. Epidemiol. 107(1):71-76.

    Examples
    --------
    >>> from bayesjudge.core.correction import rogan_gladen
    >>> print(f"{rogan_gladen(0.4, 0.7, 0.9):.4f}")
    0.1667
    >>> rogan_gladen([0.05, 0.4, 0.95], 0.7, 0.9).round(4)
    array([0.    , 0.1667, 1.    ])
    >>> rogan_gladen([0.05, 0.95], 0.7, 0.9, clip=False).round(4)
    array([-0.4167,  1.0833])
    """
    p, q0, q1 = broadcast(
        ("p", "q0", "q1"),
        as_probability("p", p),
        as_probability("q0", q0),
        as_probability("q1", q1),
    )
    th, identified = rogan_gladen_ratio(p, q0, q1, clip=clip)
    _require_identified(~identified, q0, q1)  # J = 0 policy: raise
    return scalar_or_array(th)


def adjusted_estimates(p, q0, q1, n, m0, m1, alpha: float = 0.05) -> AdjustedEstimates:
    """Smoothed quantities p̃, q̃0, q̃1, θ̃, dθ̃ and the standard error of eqs. (6)-(8).

    Parameters
    ----------
    p, q0, q1 : array_like
        Observed proportions in [0, 1]: judged-correct share on the test set, specificity and
        sensitivity on the calibration set.
    n : array_like
        Test-set size, a non-negative whole number; ``np.inf`` means an unlimited test set
        (p̃ = p and no test-set variance, as in Fig. 3 of Lee et al.).
    m0, m1 : array_like
        Calibration counts of truly incorrect / truly correct items (non-negative whole numbers).
    alpha : float, default 0.05
        Miscoverage level in [1e-6, 1) (``LR_MIN_ALPHA``; see :func:`lang_reiczigel_interval`);
        only z = Φ⁻¹(1 - alpha/2) depends on it.

    Returns
    -------
    AdjustedEstimates
        NamedTuple ``(p, q0, q1, n, m0, m1, theta, dtheta, se, z)`` of broadcast arrays (numpy
        scalars for scalar input); ``z`` is a float.

    Raises
    ------
    ValueError
        On invalid input, or where the smoothed Youden index q̃0 + q̃1 - 1 is exactly 0 (then θ̃
        is undefined; :func:`lang_reiczigel_interval` returns [0, 1] there).

    Notes
    -----
    These are the building blocks of :func:`lang_reiczigel_interval`, whose interval is
    ``theta + dtheta ∓ z * se`` truncated to [0, 1]. ``se`` is reported as a non-negative
    number (the reference code divides by the signed q̃0 + q̃1 - 1, so its ``se`` is negative
    when that is negative). Because every smoothed proportion lies strictly inside (0, 1), the
    quantities are finite for all valid input with q̃0 + q̃1 ≠ 1, including ``n = 0`` or
    ``m0 = 0`` (the empty group then contributes a prior-like ½ with weight z² or 2).

    References
    ----------
    Lee et al., eqs. (6)-(8) and ``confidence_interval`` of Appendix C; Lang & Reiczigel (2014),
    Prev. Vet. Med. 113(1):13-22.

    Examples
    --------
    >>> from bayesjudge.core.correction import adjusted_estimates
    >>> a = adjusted_estimates(0.4, 0.7, 0.9, 1000, 200, 200)
    >>> print(f"q0~={a.q0:.4f} q1~={a.q1:.4f} theta~={a.theta:.4f} se={a.se:.4f}")
    q0~=0.6980 q1~=0.8960 theta~=0.1656 se=0.0526
    """
    alpha = check_lr_alpha(alpha)
    p, q0, q1, n, m0, m1 = _validated(p, q0, q1, n, m0, m1)
    z = _z(alpha)
    p_t, q0_t, q1_t, n_t, m0_t, m1_t, th, dth, se_signed, j_t = _smooth(p, q0, q1, n, m0, m1, z)
    zero = j_t == 0
    if zero.any():
        raise ValueError(
            f"The smoothed Youden index q0~ + q1~ - 1 is exactly 0{_positions(zero)} "
            f"({_pairs('(q0~, q1~)', q0_t, q1_t, zero)}): the calibration "
            "data show a judge no better than chance, so theta~ is undefined. "
            "lang_reiczigel_interval returns the whole [0, 1] there; collect more calibration "
            "labels or use a better judge."
        )
    # Copies of the common shape, so that every field is a writeable array.
    out = np.broadcast_arrays(p_t, q0_t, q1_t, n_t, m0_t, m1_t, th, dth, np.abs(se_signed))
    return AdjustedEstimates(*(scalar_or_array(np.array(a)) for a in out), z=z)


def lang_reiczigel_interval(p, q0, q1, n, m0, m1, alpha: float = 0.05) -> Interval:
    """Lang-Reiczigel (1 - alpha) confidence interval for the true accuracy θ.

    Parameters
    ----------
    p : array_like
        Share of the ``n`` test items the judge calls correct, in [0, 1].
    q0, q1 : array_like
        Estimated specificity (``tn / m0``) and sensitivity (``tp / m1``), in [0, 1].
    n : array_like
        Test-set size (non-negative whole number, or ``np.inf`` for an unlimited test set).
    m0, m1 : array_like
        Calibration counts of truly incorrect / truly correct items (non-negative whole numbers).
    alpha : float, default 0.05
        Miscoverage level in [1e-6, 1) (``LR_MIN_ALPHA``, see Notes); 0.05 gives a 95%
        interval.

    Returns
    -------
    Interval
        NamedTuple ``(lower, upper)`` with ``0 ≤ lower ≤ upper ≤ 1``, broadcast over the inputs.

    Raises
    ------
    ValueError
        If a proportion is outside [0, 1] or NaN, a count is negative, fractional, NaN or
        above 2**53, or alpha is not in [1e-6, 1).

    Notes
    -----
    The interval is ``θ̃ + dθ̃ ∓ z·SE`` (eqs. 6-8) built from "add z²/2 successes and failures"
    (test set) and "add one success and one failure" (calibration) smoothed proportions, then
    truncated to [0, 1]. It accounts for sampling error in both the test and the calibration
    set. The centre is θ̃ + dθ̃ as in the authors' code; eq. (6) as printed writes θ̂ + dθ̃, which
    differs from it by O(1/m). ``alpha`` is a scalar; the other arguments broadcast.

    Coverage. It is an approximate (adjusted Wald) interval. In the paper's design
    ((q0, q1) = (0.7, 0.9), n = 1000, m0 = m1 = 100, θ = 0.05, ..., 0.95) its exact coverage
    (enumerating all outcomes) is 95.2%-95.7%: slightly conservative, because the smoothing
    inflates the calibration variance; the excess disappears as m grows (95.0%-95.1% at
    m0 = m1 = 1000). Over the paper's other designs (n ∈ {200, 1000}, m ∈ {200, 500},
    q ∈ {0.7, 0.9}²) it stays within 95.0%-96.1%. The unsmoothed Wald interval built on
    :func:`delta_method_variance` undercovers instead (93.9% at θ = 0.95). Because the centre
    is shifted, the interval need not contain θ̂ for near-chance judges (J ≈ 0), calibration
    groups of one or two items, or large alpha; and for small samples a smaller alpha can give
    a higher lower bound (the shift grows like z², the half-width like z). For that reason
    alpha below ``LR_MIN_ALPHA`` = 1e-6 (z² ≈ 24 pseudo-items) is refused: there the shift
    swamps calibration sets of tens or hundreds of items and the interval shrinks as alpha
    falls (at alpha = 1e-300 the example below would give [0, 0]).

    Reproduces the reference ``confidence_interval`` (Appendix C) to floating-point rounding,
    vectorised, except where the reference misbehaves:

    * smoothed J̃ = q̃0 + q̃1 - 1 < 0: the reference's SE is negative and it returns
      ``(upper, lower)``; we return the same two numbers in order.
    * J̃ == 0: the reference raises ``ZeroDivisionError``; θ is not identified by the data and
      we return the whole [0, 1].

    ``n = 0`` or ``m0 = 0`` / ``m1 = 0`` are allowed (the smoothing keeps everything finite) and
    give wide intervals.

    Where the *observed* q0 + q1 == 1 (Ĵ = 0) but the smoothed J̃ is not 0, this function
    returns the formula's interval, as the reference does; it then rests on the +1 smoothing
    alone (for a judge that calls every item correct, ``p = 1, q0 = 0, q1 = 1, m0 = 2,
    m1 = 100``, it is [0.944, 1]). ``bj.estimate`` reports such groups as NaN
    with the interval [0, 1] and a ``LowJudgeQualityWarning``; :func:`rogan_gladen` raises.

    References
    ----------
    Lee et al., *How to Correctly Report LLM-as-a-Judge Evaluations*, eqs. (6)-(8) and
    ``confidence_interval`` of Appendix C; Lang & Reiczigel (2014), Prev. Vet. Med.
    113(1):13-22.

    Examples
    --------
    >>> from bayesjudge.core.correction import lang_reiczigel_interval
    >>> lo, hi = lang_reiczigel_interval(0.4, 0.7, 0.9, n=1000, m0=200, m1=200)
    >>> print(f"({lo:.6f}, {hi:.6f})")
    (0.056351, 0.262733)
    >>> ci = lang_reiczigel_interval(0.4, 0.7, 0.9, 1000, [100, 200, 400], [100, 200, 400])
    >>> ci.upper - ci.lower
    array([0.2758978, 0.2063823, 0.1620449])
    >>> lang_reiczigel_interval(0.5, 0.5, 0.5, 1000, 50, 50)  # chance-level judge
    Interval(lower=np.float64(0.0), upper=np.float64(1.0))
    """
    alpha = check_lr_alpha(alpha)
    p, q0, q1, n, m0, m1 = _validated(p, q0, q1, n, m0, m1)
    z = _z(alpha)
    *_, th, dth, se_signed, j_t = _smooth(p, q0, q1, n, m0, m1, z)
    with np.errstate(invalid="ignore"):
        a = th + dth - z * se_signed
        b = th + dth + z * se_signed
    # Sorting fixes the reference's swapped order when J̃ < 0; J̃ == 0 gives no information.
    zero = j_t == 0
    lower = np.where(zero, 0.0, np.clip(np.minimum(a, b), 0.0, 1.0))
    upper = np.where(zero, 1.0, np.clip(np.maximum(a, b), 0.0, 1.0))
    return Interval(scalar_or_array(lower), scalar_or_array(upper))


def lang_reiczigel_length(p, q0, q1, n, m0, m1, alpha: float = 0.05, clip: bool = False):
    """Length of the Lang-Reiczigel interval, computed in closed form (no resampling).

    Parameters
    ----------
    p, q0, q1 : array_like
        Proportions in [0, 1] (plug-in or planned values), as for
        :func:`lang_reiczigel_interval`.
    n : array_like
        Test-set size (whole number ≥ 0, or ``np.inf`` to ignore test-set uncertainty).
    m0, m1 : array_like
        Calibration counts of truly incorrect / truly correct items.
    alpha : float, default 0.05
        Miscoverage level in [1e-6, 1) (see :func:`lang_reiczigel_interval`).
    clip : bool, default False
        ``False`` returns the untruncated length ``2·z·SE`` of eq. (6), the smooth quantity that
        calibration allocation (Prop. 5.2, Algorithm 1) minimises; ``True`` returns
        ``upper - lower`` of the interval after truncation to [0, 1].

    Returns
    -------
    numpy.ndarray or numpy.float64
        The length, broadcast over the inputs.

    Raises
    ------
    ValueError
        On invalid input (see :func:`lang_reiczigel_interval`).

    Notes
    -----
    Where the smoothed Youden index q̃0 + q̃1 - 1 is exactly 0 the untruncated length is
    ``inf`` (no information about θ) and the truncated length is 1. The untruncated length can
    exceed 1 for poor judges or tiny calibration sets. It need not shrink monotonically as one
    calibration count grows when the observed specificity or sensitivity is below ½ (then the
    smoothing pulls q̃ away from chance less as m grows, so J̃ falls).

    References
    ----------
    Lee et al., eq. (6) and Prop. 5.2 / Fig. 3 (interval length vs calibration size).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesjudge.core.correction import lang_reiczigel_length
    >>> print(f"{lang_reiczigel_length(0.3, 0.7, 0.9, np.inf, 100, 100):.4f}")
    0.3055
    >>> lang_reiczigel_length(0.4, 0.7, 0.9, 1000, [100, 200], [100, 200], clip=True).round(4)
    array([0.2759, 0.2064])
    """
    alpha = check_lr_alpha(alpha)
    if clip:
        lower, upper = lang_reiczigel_interval(p, q0, q1, n, m0, m1, alpha)
        return scalar_or_array(np.asarray(upper) - np.asarray(lower))
    p, q0, q1, n, m0, m1 = _validated(p, q0, q1, n, m0, m1)
    z = _z(alpha)
    *_, se_signed, j_t = _smooth(p, q0, q1, n, m0, m1, z)
    length = np.where(j_t == 0, np.inf, 2 * z * np.abs(se_signed))
    return scalar_or_array(length)


def delta_method_variance(p, q0, q1, n, m0, m1):
    """Delta-method variance of the (unclipped) Rogan-Gladen estimator, eq. (10).

    Parameters
    ----------
    p, q0, q1 : array_like
        Estimated proportions in [0, 1].
    n : array_like
        Test-set size, a whole number ≥ 1 (``np.inf`` drops the test-set term).
    m0, m1 : array_like
        Calibration counts of truly incorrect / truly correct items, whole numbers ≥ 1.

    Returns
    -------
    numpy.ndarray or numpy.float64
        ``[p(1-p)/n + (1-θ̂)² q0(1-q0)/m0 + θ̂² q1(1-q1)/m1] / (q0 + q1 - 1)²`` with the unclipped
        θ̂ of eq. (5), broadcast over the inputs.

    Raises
    ------
    ValueError
        On invalid input, a zero count (a group with no items gives no estimate of its
        proportion, and 0/0 would follow), or where ``q0 + q1 == 1`` (θ not identified).

    Notes
    -----
    First-order (delta method) variance treating p̂, q̂0, q̂1 as independent binomial
    proportions. It is a large-sample approximation: it is 0 when all three proportions are 0 or
    1, and it understates the spread when J is small relative to the calibration error. A Wald
    interval θ̂ ± z·√Var undercovers for small m; prefer :func:`lang_reiczigel_interval`.

    References
    ----------
    Lee et al., eq. (10) and its derivation in Appendix B.1.

    Examples
    --------
    >>> from bayesjudge.core.correction import delta_method_variance
    >>> v = delta_method_variance(0.4, 0.7, 0.9, 1000, 200, 200)
    >>> print(f"var={v:.6f} sd={v**0.5:.4f}")
    var=0.002727 sd=0.0522
    """
    p = as_probability("p", p)
    q0 = as_probability("q0", q0)
    q1 = as_probability("q1", q1)
    n = _as_test_size(n)
    if (n <= 0).any():
        raise ValueError(
            f"n must be at least 1 for the delta-method variance; got {format_values(n[n <= 0])}."
        )
    m0 = as_count("m0", m0, positive=True)
    m1 = as_count("m1", m1, positive=True)
    p, q0, q1, n, m0, m1 = broadcast(("p", "q0", "q1", "n", "m0", "m1"), p, q0, q1, n, m0, m1)
    th, identified = rogan_gladen_ratio(p, q0, q1)
    _require_identified(~identified, q0, q1)  # J = 0 policy: raise
    j = q0 + q1 - 1
    var = (p * (1 - p) / n + (1 - th) ** 2 * q0 * (1 - q0) / m0 + th**2 * q1 * (1 - q1) / m1) / j**2
    return scalar_or_array(var)
