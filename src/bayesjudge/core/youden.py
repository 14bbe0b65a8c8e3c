"""Youden's J = q0 + q1 - 1 of a judge, and the difference ΔJ between two calibration sets.

J is the denominator of every bias correction (Lee et al., eq. 5), so a small J inflates the
error of the corrected estimate by 1/J; ΔJ measures how differently the judge behaves on two
models' responses, which decides whether one calibration set may be shared between them
(Fiedler, Sec. 4.4). Both are sums of independent binomial proportions, so their intervals
are closed-form intervals for linear combinations of proportions; ``method="bootstrap"``
gives Fiedler's percentile bootstrap over the calibration items instead.
"""

from __future__ import annotations

import numpy as np

from bayesjudge.core._results import EstimateInterval, scalar_or_array
from bayesjudge.core._validation import (
    as_count,
    check_alpha,
    check_design,
    check_not_greater,
    check_resample_count,
    check_seed,
    format_values,
)
from bayesjudge.core.kernels import linear_combination_interval
from bayesjudge.core.resampling import percentile_interval, resample_calibration

__all__ = ["simultaneous_differences", "youden", "youden_difference"]

_METHODS = ("wald", "agresti-caffo", "newcombe", "bootstrap")


def _check_method(method: str) -> str:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}; got {method!r}.")
    return method


def _group(correct_name: str, correct, size_name: str, size, label: str):
    """Validate one calibration group (e.g. ``tn`` of ``m0``) and return float arrays."""
    correct = as_count(correct_name, correct)
    size = as_count(size_name, size)
    if (size <= 0).any():
        raise ValueError(
            f"{size_name} must be at least 1; got {format_values(size[size <= 0])}. J = q0 + q1 "
            f"- 1 is not estimable without both label types: label some {label} items."
        )
    check_not_greater(correct_name, correct, size_name, size)
    return correct, size


def _broadcast(props):
    try:
        return np.broadcast_arrays(*(a for pair in props for a in pair))
    except ValueError:
        shapes = ", ".join(str(np.shape(x)) for pair in props for x in pair)
        raise ValueError(
            f"The counts must broadcast to a common shape; got shapes {shapes}. Pass scalars "
            f"or arrays of matching shape."
        ) from None


def _bootstrap_youden(rng, tn, m0, tp, m1, n_resamples, calibration_design):
    """Replicates of Ĵ* (trailing resample axis) and where they are undefined (m0* or m1* = 0)."""
    tn_s, m0_s, tp_s, m1_s = resample_calibration(
        rng, tn, m0, tp, m1, n_resamples, calibration_design
    )
    undefined = (m0_s == 0) | (m1_s == 0)
    j = tn_s / np.where(m0_s == 0, 1, m0_s) + tp_s / np.where(m1_s == 0, 1, m1_s) - 1.0
    return np.where(undefined, 0.0, j), undefined


def _bootstrap_interval(groups, alpha, n_resamples, random_seed, calibration_design):
    """Percentile bootstrap of J (one calibration set) or ΔJ (two sets, a then b)."""
    n_resamples = check_resample_count(n_resamples)
    calibration_design = check_design(calibration_design)
    arrays = _broadcast(groups)
    sets = [arrays[i : i + 4] for i in range(0, len(arrays), 4)]
    rng = np.random.default_rng(check_seed(random_seed))
    signs = (1, -1)[: len(sets)]
    est = sum(s * (tn / m0 + tp / m1 - 1) for s, (tn, m0, tp, m1) in zip(signs, sets, strict=True))
    reps, undefined = None, None
    for sign, (tn, m0, tp, m1) in zip(signs, sets, strict=True):
        j_s, und = _bootstrap_youden(rng, tn, m0, tp, m1, n_resamples, calibration_design)
        reps = sign * j_s if reps is None else reps + sign * j_s
        undefined = und if undefined is None else undefined | und
    bound = float(len(sets))
    lower, upper = percentile_interval(reps, undefined, alpha, -bound, bound)
    return EstimateInterval(
        scalar_or_array(np.asarray(est, dtype=float)),
        scalar_or_array(lower),
        scalar_or_array(upper),
    )


def _linear_interval(props, signs, offset, alpha, method, bound):
    """Check that the counts broadcast, then compute the interval with the kernel.

    :func:`~bayesjudge.core.kernels.linear_combination_interval`.
    """
    _broadcast(props)
    return linear_combination_interval(props, signs, offset, alpha, method, bound)


def youden(
    tn,
    m0,
    tp,
    m1,
    alpha: float = 0.05,
    method: str = "wald",
    *,
    n_resamples: int = 10_000,
    random_seed=None,
    calibration_design: str = "stratified",
) -> EstimateInterval:
    """Youden's J = q0 + q1 − 1 of a judge, with a confidence interval.

    Parameters
    ----------
    tn : int or array_like
        Truly-incorrect calibration items the judge called incorrect.
    m0 : int or array_like
        Truly-incorrect calibration items (at least 1).
    tp : int or array_like
        Truly-correct calibration items the judge called correct.
    m1 : int or array_like
        Truly-correct calibration items (at least 1).
    alpha : float, default 0.05
        The interval has nominal level ``1 - alpha``.
    method : {"wald", "agresti-caffo", "newcombe", "bootstrap"}, default "wald"
        ``"wald"``: Ĵ ± z √(q̂0(1−q̂0)/m0 + q̂1(1−q̂1)/m1). ``"agresti-caffo"``: the same
        after adding one success and one failure to each proportion, centred at the adjusted
        Ĵ. ``"newcombe"``: Newcombe's hybrid score interval built from the two Wilson
        intervals. ``"bootstrap"``: percentile interval of Ĵ* over ``n_resamples``
        resamples of the calibration items (Fiedler, Sec. 4.3).
    n_resamples : int, default 10_000
        Bootstrap resamples (``method="bootstrap"`` only).
    random_seed : int, numpy.random.Generator or None, default None
        Seed for :func:`numpy.random.default_rng` (``method="bootstrap"`` only).
    calibration_design : {"stratified", "random"}, default "stratified"
        How the calibration items were drawn (``method="bootstrap"`` only):
        ``"stratified"`` keeps ``m0`` and ``m1`` fixed (tn* ~ Binomial(m0, q̂0), tp* ~
        Binomial(m1, q̂1)); ``"random"`` resamples the ``m0 + m1`` items as one multinomial
        over the four cells, so ``m0*`` and ``m1*`` vary, as in Fiedler's App. E.4.

    Returns
    -------
    EstimateInterval
        ``(estimate, lower, upper)``: Ĵ = tn/m0 + tp/m1 − 1 and the interval, clipped to
        [−1, 1]. Numpy scalars for scalar input; inputs broadcast.

    Raises
    ------
    ValueError
        If ``m0`` or ``m1`` is 0 (J is not estimable without both label types), a count is
        negative or not whole, ``tn > m0`` or ``tp > m1``, or ``alpha``/``method`` is invalid.

    Notes
    -----
    Ĵ = q̂0 − (1 − q̂1) is the difference between the judge's "correct" rate on truly-correct
    items and on truly-incorrect items, two independent proportions, so the classical
    intervals for a difference of proportions apply. The Wald interval collapses to a point
    when both q̂0 and q̂1 are 0 or 1 and under-covers: by exact enumeration of its coverage
    it reached 91–94% at 40–100 items per group and 78% at m0 = m1 = 15 with
    q0 = q1 = 0.95. Agresti–Caffo and Newcombe stayed within one percentage point of 95%
    at 40–100 items per group; at 15–30 items with q near 1 Agresti–Caffo becomes
    conservative (98%) and Newcombe can dip to about 93% (see also Newcombe 1998;
    Fagerland et al. 2015). Prefer ``"agresti-caffo"`` or ``"newcombe"`` for small
    calibration sets. The Agresti–Caffo interval is centred at the adjusted estimate, not
    at Ĵ. Fiedler reports
    J with bootstrap percentile intervals (calibration items resampled); these closed-form
    intervals are their large-sample counterparts.

    References
    ----------
    Youden (1950), Cancer 3:32–35. Fiedler, "Bias and Uncertainty in LLM-as-a-Judge
    Estimation", Sec. 4.4 and Tables 1, 3, 6. Agresti & Caffo (2000), Am. Stat. 54:280–288.
    Newcombe (1998), Stat. Med. 17:873–890 (method 10). Efron & Tibshirani (1993),
    *An Introduction to the Bootstrap*, ch. 13 (percentile interval).

    Examples
    --------
    >>> est, lo, hi = youden(tn=70, m0=100, tp=90, m1=100)
    >>> print(f"{est:.3f} [{lo:.3f}, {hi:.3f}]")
    0.600 [0.493, 0.707]
    >>> print("{:.3f} [{:.3f}, {:.3f}]".format(*youden(70, 100, 90, 100, method="newcombe")))
    0.600 [0.479, 0.693]

    With perfect small groups Wald degenerates; the adjusted intervals do not:

    >>> print("{:.3f} [{:.3f}, {:.3f}]".format(*youden(5, 5, 5, 5)))
    1.000 [1.000, 1.000]
    >>> print("{:.3f} [{:.3f}, {:.3f}]".format(*youden(5, 5, 5, 5, method="agresti-caffo")))
    1.000 [0.348, 1.000]

    The percentile bootstrap over the calibration items (seeded, so reproducible):

    >>> r = youden(70, 100, 90, 100, method="bootstrap", n_resamples=2000, random_seed=0)
    >>> print(f"{r.estimate:.3f} [{r.lower:.3f}, {r.upper:.3f}]")
    0.600 [0.490, 0.710]
    """
    alpha = check_alpha(alpha)
    method = _check_method(method)
    tn, m0 = _group("tn", tn, "m0", m0, "truly-incorrect")
    tp, m1 = _group("tp", tp, "m1", m1, "truly-correct")
    if method == "bootstrap":
        return _bootstrap_interval(
            [(tn, m0), (tp, m1)], alpha, n_resamples, random_seed, calibration_design
        )
    return _linear_interval([(tn, m0), (tp, m1)], (1, 1), -1.0, alpha, method, bound=1.0)


def youden_difference(
    tn_a,
    m0_a,
    tp_a,
    m1_a,
    tn_b,
    m0_b,
    tp_b,
    m1_b,
    alpha: float = 0.05,
    method: str = "wald",
    *,
    n_resamples: int = 10_000,
    random_seed=None,
    calibration_design: str = "stratified",
) -> EstimateInterval:
    """Difference ΔJ = J_a − J_b of the judge's Youden index on two calibration sets.

    Parameters
    ----------
    tn_a, m0_a, tp_a, m1_a : int or array_like
        Calibration counts of set ``a`` (e.g. model A's responses), as in :func:`youden`.
    tn_b, m0_b, tp_b, m1_b : int or array_like
        Calibration counts of set ``b``.
    alpha : float, default 0.05
        The interval has nominal level ``1 - alpha``.
    method : {"wald", "agresti-caffo", "newcombe", "bootstrap"}, default "wald"
        As in :func:`youden`, extended to four proportions: Wald adds the four binomial
        variances; Agresti–Caffo adds one success and one failure to each of the four;
        Newcombe combines the four Wilson intervals (MOVER). ``"bootstrap"``: percentile
        interval of Ĵ_a* − Ĵ_b*, the two calibration sets resampled independently (set
        ``a``'s draws first, then ``b``'s, from one generator).
    n_resamples, random_seed, calibration_design
        As in :func:`youden` (``method="bootstrap"`` only).

    Returns
    -------
    EstimateInterval
        ``(estimate, lower, upper)``: ΔĴ = Ĵ_a − Ĵ_b and its interval, clipped to [−2, 2].

    Raises
    ------
    ValueError
        As :func:`youden`, for either set.

    Notes
    -----
    Sign convention: positive ΔJ means the judge discriminates better on set ``a``. (Fiedler
    writes ΔJ = J_B − J_A in Sec. 5 and J_Gemma − J_Qwen in Table 1; pass the sets in the
    order you want subtracted.) The two sets must be independent (different items); for the
    same items labelled under two models use a paired bootstrap instead. An interval that
    excludes 0 is a strong warning that one calibration set should not be shared between
    the two models; one that includes 0 is necessary but not sufficient (Fiedler, Sec. 4.4).
    Fiedler reports bootstrap percentile intervals; these closed-form intervals are their
    large-sample counterparts. Newcombe's MOVER construction is the method of variance
    estimates recovery of Zou & Donner (2008) applied to the Wilson limits. By exact
    enumeration with 40 items per group ((q0, q1) = (0.7, 0.9) against (0.75, 0.95)),
    coverage of the nominal 95% interval was 94.5% (Wald), 95.9% (Agresti–Caffo, slightly
    conservative because all four proportions are adjusted) and 95.7% (Newcombe).

    The bootstrap is Fiedler's interval (Tables 1 and 3). It needs no normal approximation
    but inherits the percentile method's small-sample under-coverage: a proportion observed
    at 0 or 1 is never resampled away from it, so with perfect small groups the interval
    collapses as Wald's does (see ``tests/estimate/test_diagnostics.py`` for its simulated
    coverage).
    Replicates with ``m0* = 0`` or ``m1* = 0`` (possible with ``calibration_design="random"``)
    have no J; they are counted at −2 for the lower limit and +2 for the upper one, so the
    interval is conservative rather than silently shorter.

    References
    ----------
    Fiedler, Sec. 4.4, Sec. 5, Tables 1 and 3, App. C. Agresti & Caffo (2000). Newcombe (1998).
    Zou & Donner (2008), Stat. Med. 27:1693–1702.

    Examples
    --------
    >>> d = youden_difference(51, 100, 89, 100, 57, 100, 95, 100)
    >>> print(f"{d.estimate:.2f} [{d.lower:.3f}, {d.upper:.3f}]")
    -0.12 [-0.277, 0.037]
    >>> b = youden_difference(51, 100, 89, 100, 57, 100, 95, 100, method="bootstrap",
    ...                       n_resamples=2000, random_seed=0)
    >>> print(f"{b.estimate:.2f} [{b.lower:.3f}, {b.upper:.3f}]")
    -0.12 [-0.280, 0.050]
    """
    alpha = check_alpha(alpha)
    method = _check_method(method)
    groups = [
        _group("tn_a", tn_a, "m0_a", m0_a, "truly-incorrect"),
        _group("tp_a", tp_a, "m1_a", m1_a, "truly-correct"),
        _group("tn_b", tn_b, "m0_b", m0_b, "truly-incorrect"),
        _group("tp_b", tp_b, "m1_b", m1_b, "truly-correct"),
    ]
    if method == "bootstrap":
        return _bootstrap_interval(groups, alpha, n_resamples, random_seed, calibration_design)
    return _linear_interval(groups, (1, 1, -1, -1), 0.0, alpha, method, bound=2.0)


def simultaneous_differences(tn, m0, tp, m1, first, second, alpha: float, method: str) -> dict:
    """Δq0, Δq1, ΔJ per (pair, stratum) with Bonferroni-simultaneous intervals.

    The family is every (pair, stratum) of the call and the three contrasts of each:
    ``3 × pairs × strata`` intervals, each at level ``1 − alpha / (3 × pairs × strata)``, so
    that with the judge identical on every system all of them cover 0 with probability at
    least ``1 − alpha`` (Bonferroni; asymptotically, for the closed-form ``method``). The
    design rule of ``bayesjudge.diagnostics.judge_diagnostics`` uses them.

    Parameters
    ----------
    tn, m0, tp, m1 : numpy.ndarray, shape (K, T)
        Calibration counts per (system, stratum), ``m0, m1 >= 1``.
    first, second : sequence of int
        System positions of the pairs (differences first minus second).
    alpha : float
        Family-wise level.
    method : {"newcombe", "agresti-caffo", "wald"}
        Interval of each contrast (as :func:`youden_difference`).

    Returns
    -------
    dict
        ``delta_q0``, ``delta_q1`` (pair, T), ``delta_q0_ci``, ``delta_q1_ci`` and
        ``delta_youden_simultaneous_ci`` (pair, T, 2), and ``level`` (each interval's alpha).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesjudge.core.youden import simultaneous_differences
    >>> tn, m0 = np.array([[160], [120]]), np.full((2, 1), 200)
    >>> tp, m1 = np.array([[180], [180]]), np.full((2, 1), 200)
    >>> sim = simultaneous_differences(tn, m0, tp, m1, [0], [1], 0.05, "newcombe")
    >>> print(f"{sim['delta_q0'].item():.2f}, level {sim['level']:.4f}")
    0.20, level 0.0167
    """
    ia, ib = list(first), list(second)
    level = alpha / (3 * len(ia) * np.shape(tn)[1])
    out = {}
    for name, x, m in (("q0", tn, m0), ("q1", tp, m1)):
        r = _linear_interval([(x[ia], m[ia]), (x[ib], m[ib])], (1, -1), 0.0, level, method, 1.0)
        out[f"delta_{name}"] = np.asarray(r.estimate, dtype=float)
        out[f"delta_{name}_ci"] = np.stack([r.lower, r.upper], axis=-1)
    cal = (tn, m0, tp, m1)
    r = youden_difference(*(c[ia] for c in cal), *(c[ib] for c in cal), alpha=level, method=method)
    out["delta_youden_simultaneous_ci"] = np.stack([r.lower, r.upper], axis=-1)
    out["level"] = level
    return out
