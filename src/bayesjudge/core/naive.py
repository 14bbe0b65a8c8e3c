"""Naive (uncorrected) judge score: the share of items the judge calls correct, with an interval.

This estimates p = P(judge says correct), not the true accuracy θ. It is biased for θ unless
the judge is perfect; see :mod:`bayesjudge.core.correction` for the corrected estimate.
"""

from __future__ import annotations

import numpy as np

from bayesjudge.core._results import EstimateInterval, scalar_or_array
from bayesjudge.core._validation import as_subcount, check_alpha, two_sided_z
from bayesjudge.core.kernels import wilson_limits

__all__ = ["naive"]

_METHODS = ("wilson", "wald")


def naive(k, n, alpha: float = 0.05, method: str = "wilson") -> EstimateInterval:
    """Share ``k / n`` of items the judge calls correct, with a binomial confidence interval.

    Parameters
    ----------
    k : array_like
        Number of test items the judge calls correct (whole number, ``0 <= k <= n``).
    n : array_like
        Number of test items (whole number ``>= 1``). Broadcasts with ``k``.
    alpha : float, default 0.05
        Miscoverage level in (0, 1); 0.05 gives a 95% interval.
    method : {"wilson", "wald"}, default "wilson"
        ``"wilson"``: the Wilson score interval (recommended). ``"wald"``: the normal
        approximation ``k/n -/+ z * sqrt(p (1 - p) / n)``, truncated to [0, 1].

    Returns
    -------
    EstimateInterval
        NamedTuple ``(estimate, lower, upper)``: ``estimate = k / n`` and an interval inside
        [0, 1], broadcast over ``k`` and ``n`` (numpy scalars for scalar input).

    Raises
    ------
    ValueError
        If ``k`` or ``n`` is not a whole non-negative number, ``n < 1``, ``k > n``, ``alpha`` is
        not in (0, 1), or ``method`` is unknown.

    Notes
    -----
    The interval covers p = θ·q1 + (1 - θ)(1 - q0), the probability that the judge says
    "correct", not the true accuracy θ. Unless the judge is perfect it misses θ almost always for
    large ``n`` (Lee et al., Fig. 5b), so report it only next to a corrected estimate.

    The Wilson interval has coverage close to 1 - alpha (oscillating around it with n and p)
    even for small ``n`` and for ``k`` = 0 or ``n``, where it gives ``[0, upper]`` and
    ``[lower, 1]``. The Wald interval undercovers badly for small ``n`` or p near 0 or 1 and
    collapses to the single point 0 or 1 when ``k`` is 0 or ``n``; it is offered for comparison
    only. Both are computed with z = Φ⁻¹(1 - alpha/2) and agree with
    ``statsmodels.stats.proportion.proportion_confint`` (methods ``"wilson"`` and ``"normal"``).

    References
    ----------
    Wilson (1927), J. Am. Stat. Assoc. 22:209-212; Brown, Cai & DasGupta (2001), Stat. Sci.
    16(2):101-133; Lee et al., *How to Correctly Report LLM-as-a-Judge Evaluations*, eq. (2)
    (the naive estimator p̂) and Fig. 5b.

    Examples
    --------
    >>> from bayesjudge.core.naive import naive
    >>> est, lo, hi = naive(400, 1000)
    >>> print(f"{est:.3f} ({lo:.4f}, {hi:.4f})")
    0.400 (0.3701, 0.4307)
    >>> naive(0, 20).upper.round(4)
    np.float64(0.1611)
    >>> naive([0, 20], 20, method="wald").lower
    array([0., 1.])
    """
    if method not in _METHODS:
        raise ValueError(
            f"method must be one of {', '.join(repr(m) for m in _METHODS)}; got {method!r}."
        )
    alpha = check_alpha(alpha)
    k, n = as_subcount("k", k, "n", n, positive_total=True)
    z = two_sided_z(alpha)
    p = k / n
    if method == "wilson":
        lower, upper = wilson_limits(k, n, z)
        # At k = 0 or n the bound is exactly 0 or 1; rounding would leave about 1e-17.
        lower = np.where(k == 0, 0.0, np.clip(lower, 0.0, 1.0))
        upper = np.where(k == n, 1.0, np.clip(upper, 0.0, 1.0))
    else:
        half = z * np.sqrt(p * (1 - p) / n)
        lower = np.clip(p - half, 0.0, 1.0)
        upper = np.clip(p + half, 0.0, 1.0)
    # Copies, so that callers get writeable arrays of the common shape.
    p, lower, upper = (np.array(a) for a in np.broadcast_arrays(p, lower, upper))
    return EstimateInterval(scalar_or_array(p), scalar_or_array(lower), scalar_or_array(upper))
