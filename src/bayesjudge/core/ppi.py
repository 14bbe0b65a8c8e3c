"""Prediction-powered inference (PPI / PPI++) for the mean of a binary label, from counts.

Everything here is binary, so the four calibration cells (human label × judge verdict) and
the number of "correct" verdicts on the test set are sufficient statistics: the estimator,
its power-tuning parameter λ and its standard error are closed-form functions of the counts,
which lets thousands of groups be computed at once with numpy broadcasting.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from bayesjudge.core._results import scalar_or_array
from bayesjudge.core._validation import (
    as_subcount,
    broadcast,
    check_alpha,
    format_values,
    two_sided_z,
)
from bayesjudge.core.kernels import youden_numerator
from bayesjudge.warnings import SmallSampleWarning

__all__ = ["PPIEstimate", "ppi_mean"]


class PPIEstimate(NamedTuple):
    """PPI++ estimate of θ with its Wald interval and the λ that was used.

    Each field is a numpy array (a numpy scalar for scalar input).
    """

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    lam: np.ndarray


def _as_lambda(lam) -> np.ndarray:
    arr = np.asarray(lam)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(
            f"lam must be a real number (e.g. 1.0 for classic PPI, 0.0 for human labels only) "
            f"or None to tune it; got values of type {arr.dtype}."
        )
    arr = arr.astype(float)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"lam must be finite; got {format_values(arr[bad])}. Pass None to tune λ from the data."
        )
    return arr


def _warn_one_label(one_label: np.ndarray, m0: np.ndarray) -> None:
    """Warn that groups whose labelled items all have one human label are NaN."""
    where = "" if one_label.ndim == 0 else f" at positions {np.argwhere(one_label)[:5].tolist()}"
    kinds = []
    if (one_label & (m0 == 0)).any():
        kinds.append("m0 = 0 (no labelled item that humans call incorrect)")
    if (one_label & (m0 > 0)).any():
        kinds.append("m1 = 0 (no labelled item that humans call correct)")
    warnings.warn(
        f"ppi_mean: PPI++ is undefined in {int(one_label.sum())} group(s){where} with "
        f"{' or '.join(kinds)}, so its estimate and interval are NaN there. With one human "
        f"label only, the labels have zero sample variance and PPI++ would return that label's "
        f"value (1 or 0) with a zero-width interval whatever the test set shows. PPI++ needs "
        f"labelled items drawn at random from the test set: label more of them until both "
        f"kinds occur (a labelled set chosen by human label cannot be used), or use a "
        f"Bayesian model.",
        SmallSampleWarning,
        stacklevel=3,
    )


def ppi_mean(k, n, tn, m0, tp, m1, alpha=0.05, lam=None) -> PPIEstimate:
    """PPI++ estimate and Wald interval for the true accuracy θ, from counts.

    The labelled (calibration) set has ``m1`` items that humans call correct, ``tp`` of them
    also judged correct, and ``m0`` items humans call incorrect, ``tn`` of them also judged
    incorrect. The unlabelled test set has ``n`` items, ``k`` of them judged correct. With
    ``m = m0 + m1``, ``h = tp + m0 - tn`` (judge-correct items in the labelled set) and the
    human label ``Y``, judge verdict ``Ŷ``, the estimator is

    ``θ̂(λ) = λ k / n + (m1 - λ h) / m``,

    i.e. the labelled mean of ``Y`` plus ``λ`` times the gap between the judge's rates on the
    test and labelled sets. All arguments broadcast against each other.

    Parameters
    ----------
    k : array_like of int
        Test items the judge calls correct, ``0 <= k <= n``.
    n : array_like of int
        Test (unlabelled) items, at least 1.
    tn : array_like of int
        Labelled items that humans call incorrect and the judge calls incorrect,
        ``0 <= tn <= m0``.
    m0 : array_like of int
        Labelled items that humans call incorrect.
    tp : array_like of int
        Labelled items that humans call correct and the judge calls correct, ``0 <= tp <= m1``.
    m1 : array_like of int
        Labelled items that humans call correct. Where ``m0`` or ``m1`` is 0 the result is
        NaN (see Notes); ``m0 + m1`` must be at least 1.
    alpha : float, default 0.05
        One minus the nominal coverage of the two-sided interval.
    lam : array_like of float or None, default None
        Power-tuning parameter. ``None`` estimates it as PPI++ does (clipped to [0, 1]);
        a number fixes it (``1`` is classic PPI, ``0`` uses the human labels only). Any
        finite real is accepted and broadcasts with the counts.

    Returns
    -------
    PPIEstimate
        ``(estimate, lower, upper, lam)``: the point estimate, the two-sided Wald interval
        and the λ used (numpy scalars for scalar input, arrays otherwise).

    Raises
    ------
    ValueError
        For invalid counts, ``alpha`` or ``lam``, and where ``m0 + m1 == 0``.

    Warns
    -----
    SmallSampleWarning
        Where ``m0 == 0`` or ``m1 == 0`` (the group's estimate and interval are NaN; see
        Notes), and where the interval of some group has zero width (its estimated standard
        error is 0), e.g. a judge that agrees with every labelled item, ``lam=1`` and ``k``
        equal to 0 or ``n``.

    Notes
    -----
    **Calibration design.** PPI and PPI++ need the labelled set to be a random sample from the
    *test* distribution: the labelled mean of ``Y`` is itself an unbiased estimate of θ and the
    judge only reduces its variance. Under a shift in true accuracy between the labelled and
    the test sets, or with a calibration set stratified by the human label (``m0`` and ``m1``
    chosen by design), the estimate is biased. Rogan–Gladen only needs the judge's behaviour
    given the truth (``q0``, ``q1``) to be the same on both sets, so stratified calibration and
    a shifted test set are fine there (Lee et al., Sec. 8, Table 2, estimator (iii) vs (v)).
    PPI++ calibration is therefore model-specific, while Rogan–Gladen calibration can be
    shared across models when ``q0``, ``q1`` are stable (Fiedler, Sec. 3.3 and App. A).

    **λ.** With ``lam=None``, λ is computed exactly as ``ppi_py.ppi_mean_pointestimate`` and
    ``ppi_py.ppi_mean_ci`` (version 0.2.3, ``_calc_lam_glm`` with ``clip=True``) compute it:
    ``λ = Cov(Y, Ŷ) / ((1 + m / n) Var(Ŷ))`` with the population (``ddof=0``) covariance on the
    labelled set and the sample (``ddof=1``) variance of all ``m + n`` verdicts pooled,
    clipped to [0, 1]. In counts, ``Cov(Y, Ŷ) = m0 m1 Ĵ / m²`` with
    ``Ĵ = tn / m0 + tp / m1 - 1``, so λ is 0 whenever the judge looks no better than chance
    on the labelled set. Where all ``m + n`` verdicts are equal, ``Var(Ŷ) = 0`` and ppi_py
    divides 0 by 0: depending on floating-point rounding it returns NaN or λ = 0. A constant
    verdict carries no information and every λ then gives the same estimate and interval,
    so we return λ = 0 (the human-only answer), which equals ppi_py wherever ppi_py is finite.

    **Interval.** Wald (normal) interval ``θ̂ ± z se``, ``z`` the ``1 - alpha/2`` normal
    quantile and ``se² = λ² Var(Ŷ_test) / n + Var(Y - λ Ŷ) / m``, both variances with
    ``ddof=0``, as ``ppi_py.ppi_mean_ci(..., alternative="two-sided")``. It is *not* clipped
    to [0, 1], to match ppi_py (clipping would not change its coverage). Its coverage is
    asymptotic: with q0 = 0.7, q1 = 0.9, ``m = 1000`` and ``n = 5000`` we measured
    0.946–0.950 for θ from 0.1 to 0.9, but with ``m = 100`` only about 0.92 at θ = 0.1 or 0.9
    (a skewed sampling distribution with m·θ ≈ 10, and λ estimated from the same items).
    Where the standard error is 0 the interval collapses to a point (a
    :class:`~bayesjudge.warnings.SmallSampleWarning` is raised); prefer a Rogan–Gladen or
    Bayesian interval for such small or extreme groups.

    **Labelled items of one kind only.** Where ``m0 == 0`` or ``m1 == 0`` the estimate and
    interval are NaN, with a ``SmallSampleWarning`` that says why (``ppi_py`` returns a
    number there; the other groups of a vectorised call are unaffected, and ``λ`` is still
    reported). Every human label is then the same, so
    their sample variance is 0: the tuned λ is 0 (the labels do not covary with the
    verdicts) and PPI++ returns that label's value, 1 or 0, with a zero-width interval, no
    matter what the test set shows (e.g. ``k=250, n=300, tn=0, m0=0, tp=45, m1=50`` gave
    exactly [1, 1]); with a fixed λ the interval still ignores the unseen variance of the
    human labels. A labelled set like that was selected by human label, which PPI++ cannot
    use, or is too small. ``bj.estimate`` with ``method="ppi++"`` gives the same
    answer: NaN with a warning that names the groups.

    References
    ----------
    .. [1] Angelopoulos, Duchi & Zrnic (2023), "PPI++: Efficient prediction-powered
       inference", arXiv:2311.01453; reference implementation ``ppi_py`` 0.2.3
       (``ppi_mean_pointestimate``, ``ppi_mean_ci``, ``_calc_lam_glm``).
    .. [2] Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", Sec. 8 and
       Table 2 (difference estimator vs misclassification-adjusted estimator under shift).
    .. [3] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 3.3 (PPI++)
       and App. A (model-specific vs judge-centric calibration).

    Examples
    --------
    >>> from bayesjudge.core.ppi import ppi_mean
    >>> res = ppi_mean(k=540, n=1000, tn=84, m0=120, tp=72, m1=80)
    >>> print(f"{res.estimate:.4f} [{res.lower:.4f}, {res.upper:.4f}] lam={res.lam:.4f}")
    0.4000 [0.3428, 0.4572] lam=0.4827
    >>> ppi_mean(k=540, n=1000, tn=84, m0=120, tp=72, m1=80, lam=0.0).estimate  # humans only
    np.float64(0.4)
    >>> ppi_mean(k=[540, 600], n=1000, tn=84, m0=120, tp=72, m1=80).estimate.round(4)
    array([0.4   , 0.4297])
    """
    alpha = check_alpha(alpha)
    k, n = as_subcount("k", k, "n", n, positive_total=True)
    tn, m0 = as_subcount("tn", tn, "m0", m0)
    tp, m1 = as_subcount("tp", tp, "m1", m1)
    names = ("k", "n", "tn", "m0", "tp", "m1")
    if lam is None:
        k, n, tn, m0, tp, m1 = broadcast(names, k, n, tn, m0, tp, m1)
    else:
        k, n, tn, m0, tp, m1, lam_arr = broadcast(
            (*names, "lam"), k, n, tn, m0, tp, m1, _as_lambda(lam)
        )
    one_label = (m0 == 0) | (m1 == 0)
    m = m0 + m1
    if (m == 0).any():
        raise ValueError(
            "m0 + m1 (the number of human-labelled items) must be at least 1 in every group; "
            "PPI needs labelled items drawn from the test distribution."
        )

    h = tp + m0 - tn  # labelled items the judge calls correct
    if lam is None:
        # Integer form of Cov_pop(Y, Ŷ) / ((1 + m/n) Var_s(Ŷ_all)), see Notes: exact zero test.
        total = m + n
        total_k = h + k
        num = youden_numerator(tn, m0, tp, m1) * n * (total - 1)  # Ĵ·m0·m1: exact zero
        den = m * m * total_k * (total - total_k)
        safe = den > 0
        lam_arr = np.clip(np.where(safe, num / np.where(safe, den, 1.0), 0.0), 0.0, 1.0)

    p_test = k / n
    estimate = lam_arr * p_test + (m1 - lam_arr * h) / m

    # Population variance of Y - λŶ over the four labelled cells, centred (never negative).
    mean_rect = (m1 - lam_arr * h) / m
    values = (1.0 - lam_arr, 1.0, -lam_arr, 0.0)
    weights = (tp, m1 - tp, m0 - tn, tn)
    var_rect = sum(w * (v - mean_rect) ** 2 for v, w in zip(values, weights, strict=True)) / m
    var_imputed = lam_arr**2 * p_test * (1.0 - p_test)
    se = np.sqrt(var_imputed / n + var_rect / m)

    z = two_sided_z(alpha)
    lower = estimate - z * se
    upper = estimate + z * se

    if one_label.any():
        _warn_one_label(one_label, m0)
        estimate, lower, upper, se = (
            np.where(one_label, np.nan, v) for v in (estimate, lower, upper, se)
        )
    zero = se == 0
    if zero.any():
        warnings.warn(
            f"The PPI++ Wald interval has zero width in {int(zero.sum())} group(s) "
            f"(estimates {format_values(estimate[zero])}): the estimated standard error is 0, "
            f"usually because every labelled item has the same human label. The interval is "
            f"not trustworthy there; label more items or use a Rogan-Gladen or Bayesian interval.",
            SmallSampleWarning,
            stacklevel=2,
        )
    return PPIEstimate(
        scalar_or_array(estimate),
        scalar_or_array(lower),
        scalar_or_array(upper),
        scalar_or_array(np.array(lam_arr)),
    )
