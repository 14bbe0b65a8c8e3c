"""Maximum likelihood under the random labelling design: the MLE, profile-likelihood intervals.

Random labelling design: the judge grades every item and humans label a random subset of them.
Each item is counted once: ``k`` of the ``n`` *unlabelled* items are judged correct; of the
labelled items, ``m1`` are truly correct (``tp`` of them judged correct) and ``m0`` truly
incorrect (``tn`` of them judged incorrect). The full likelihood is

``Bin(k; n, p) · Bin(tn; m0, q0) · Bin(tp; m1, q1) · Bin(m1; m0 + m1, θ)``,
``p = θ q1 + (1 − θ)(1 − q0)``.

Reparametrised by the verdict share φ = P(verdict = 1), a = P(true = 1 | verdict = 1) and
b = P(true = 1 | verdict = 0) it factorises (the labels are missing completely at random) into
``Bin(K; N, φ) · Bin(tp; tp + fp, a) · Bin(fn; fn + tn, b)`` with ``N = n + m0 + m1`` items,
``K = k + tp + fp`` of them judged correct, ``fp = m0 − tn`` and ``fn = m1 − tp``; and
``θ = φ a + (1 − φ) b``. The map (θ, q0, q1) ↦ (φ, a, b) is one-to-one: both describe the same
2 × 2 table of (truth, verdict) cell probabilities. So the MLE is in closed form (Tenenbein's
double-sampling estimator) and always lies in [0, 1].

In the cell probabilities π (a point of the 4-cell simplex) the log-likelihood is a sum of
logs of linear functions, hence concave, and θ = π11 + π01 is linear: the profile
log-likelihood of θ is concave, and the likelihood-ratio set is an interval.

This module imports numpy and scipy only.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import gammaln, xlogy
from scipy.stats import chi2

from bayesjudge.core._results import scalar_or_array
from bayesjudge.core._validation import as_subcount, broadcast, check_alpha, two_sided_z
from bayesjudge.core.kernels import wilson_limits

__all__ = [
    "LIKELIHOOD_METHODS",
    "HumanOnlyEstimate",
    "LikelihoodEstimate",
    "double_sampling_mle",
    "human_only",
    "likelihood_interval",
    "random_design_loglik",
    "test_set_interval",
]

#: Interval methods of :func:`likelihood_interval` and :func:`test_set_interval`.
LIKELIHOOD_METHODS = ("profile",)

# Most steps of the vectorised root finder (Illinois regula falsi with a bisection fallback):
# it stops earlier once every root is bracketed to ``xtol`` (it needs about 10 to 20 steps).
_MAX_STEPS = 200


class LikelihoodEstimate(NamedTuple):
    """Maximum-likelihood estimate of θ with a likelihood-based interval.

    Each field is a numpy array (a numpy scalar for scalar input).
    """

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


class HumanOnlyEstimate(NamedTuple):
    """The human labels alone: ``m1 / (m0 + m1)`` with its Wilson interval."""

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


# ----------------------------------------------------------------------------- validation


def _counts(k, n, tn, m0, tp, m1) -> list[np.ndarray]:
    """Validate the six counts of the random design and broadcast them (floats)."""
    k, n = as_subcount("k", k, "n", n)
    tn, m0 = as_subcount("tn", tn, "m0", m0)
    tp, m1 = as_subcount("tp", tp, "m1", m1)
    return broadcast(("k", "n", "tn", "m0", "tp", "m1"), k, n, tn, m0, tp, m1)


def _check_method(method: str) -> None:
    if method not in LIKELIHOOD_METHODS:
        raise ValueError(
            f"method must be one of {', '.join(repr(m) for m in LIKELIHOOD_METHODS)}; "
            f"got {method!r}."
        )


# ------------------------------------------------------------------------ the likelihood


def random_design_loglik(theta, q0, q1, k, n, tn, m0, tp, m1):
    """Full log-likelihood of the random labelling design, binomial coefficients included.

    ``log Bin(k; n, p) + log Bin(tn; m0, q0) + log Bin(tp; m1, q1) + log Bin(m1; m0 + m1, θ)``
    with ``p = θ q1 + (1 − θ)(1 − q0)``; unvalidated, vectorised (all arguments broadcast).
    ``0 · log 0`` is 0, so boundary parameters give finite values wherever the data allow.

    Examples
    --------
    >>> from bayesjudge.core.likelihood import random_design_loglik
    >>> round(float(random_design_loglik(0.3, 0.8, 0.9, 738, 1800, 112, 140, 54, 60)), 4)
    -10.9993
    """
    theta, q0, q1 = (np.asarray(v, dtype=float) for v in (theta, q0, q1))
    k, n, tn, m0, tp, m1 = (np.asarray(v, dtype=float) for v in (k, n, tn, m0, tp, m1))
    p = theta * q1 + (1 - theta) * (1 - q0)
    m = m0 + m1
    coef = (
        gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
        + gammaln(m0 + 1) - gammaln(tn + 1) - gammaln(m0 - tn + 1)
        + gammaln(m1 + 1) - gammaln(tp + 1) - gammaln(m1 - tp + 1)
        + gammaln(m + 1) - gammaln(m1 + 1) - gammaln(m0 + 1)
    )  # fmt: skip
    return coef + _kernel(theta, q0, q1, p, k, n, tn, m0, tp, m1)


def _kernel(theta, q0, q1, p, k, n, tn, m0, tp, m1):
    """Return the log-likelihood without its binomial coefficients (the part that varies)."""
    return (
        xlogy(k, p) + xlogy(n - k, 1 - p)
        + xlogy(tn, q0) + xlogy(m0 - tn, 1 - q0)
        + xlogy(tp, q1) + xlogy(m1 - tp, 1 - q1)
        + xlogy(m1, theta) + xlogy(m0, 1 - theta)
    )  # fmt: skip


def _max_kernel(k, n, tn, m0, tp, m1):
    """Return the kernel at its maximum, in the (φ, a, b) form (closed form; 0·log 0 = 0)."""
    fp, fn = m0 - tn, m1 - tp
    big_n, big_k = n + m0 + m1, k + tp + fp
    l1, l0 = tp + fp, fn + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = big_k / big_n
        a = np.where(l1 > 0, tp / np.where(l1 > 0, l1, 1), 0.5)
        b = np.where(l0 > 0, fn / np.where(l0 > 0, l0, 1), 0.5)
    return (
        xlogy(big_k, phi) + xlogy(big_n - big_k, 1 - phi)
        + xlogy(tp, a) + xlogy(fp, 1 - a) + xlogy(fn, b) + xlogy(tn, 1 - b)
    )  # fmt: skip


def _stationary(t, f, slope):
    """Maximiser in [0, 1] of ``t log q + f log(1 − q) + slope · q`` (closed form).

    The stationarity condition ``t/q − f/(1 − q) = −slope`` is the quadratic
    ``A q² + (s − A) q − t = 0`` with ``A = slope``, ``s = t + f``, whose root in [0, 1] is
    ``2t / (B + D)`` (``B = s − A``, ``D`` the root of the discriminant), or
    ``(D − B) / (2A)`` where ``B + D = 0`` (then ``t = 0``). Where that is not finite the
    limit is used: 1 for ``slope = +inf``, 0 for ``-inf`` and 1/2 (any q) for
    ``slope = t = f = 0`` or an undefined slope (a q that does not enter the likelihood).
    Call inside ``np.errstate(all="ignore")``.
    """
    s = t + f
    bb = s - slope
    # (s - A)^2 + 4 A t, written as a sum of non-negative terms for either sign of A.
    disc = np.where(slope >= 0, bb * bb + 4 * slope * t, (s + slope) ** 2 - 4 * slope * f)
    d = np.sqrt(disc)
    den = bb + d
    q = np.where(den > 0, 2 * t / den, (d - bb) / (2 * slope))
    q = np.where(np.isfinite(q), q, np.where(slope > 0, 1.0, np.where(slope < 0, 0.0, 0.5)))
    return np.clip(q, 0.0, 1.0)


def _profile_q(theta, k, n, tn, m0, tp, m1):
    """(q0, q1) maximising the likelihood at fixed θ (a vectorised root search on p).

    For fixed θ the log-likelihood is concave in (q0, q1). With ``g = k/p − (n − k)/(1 − p)``
    its stationarity conditions are ``tp/q1 − fn/(1 − q1) = −θ g`` and
    ``tn/q0 − fp/(1 − q0) = (1 − θ) g``, each solved in closed form by :func:`_stationary`;
    the p they imply increases with g, and g decreases with p, so the fixed point p is the
    root of an increasing function of p on [0, 1]. Call inside ``np.errstate(all="ignore")``.
    """
    fp, fn = m0 - tn, m1 - tp
    nk = n - k
    shape = np.broadcast_shapes(np.shape(theta), np.shape(k))
    has_k, has_nk = np.broadcast_to(k > 0, shape), np.broadcast_to(nk > 0, shape)

    def q_of(p):
        g = np.divide(k, p, out=np.zeros(shape), where=has_k) - np.divide(
            nk, 1 - p, out=np.zeros(shape), where=has_nk
        )
        return _stationary(tn, fp, -(1 - theta) * g), _stationary(tp, fn, theta * g)

    def h(p):
        q0, q1 = q_of(p)
        return p - (theta * q1 + (1 - theta) * (1 - q0))

    # Start from a tight bracket around k/n, where the root lies when q0 or q1 is free (no
    # labelled items of one truth: h jumps there) and near which it lies otherwise.
    share = np.broadcast_to(np.where(n > 0, k / np.where(n > 0, n, 1), 0.5), shape)
    below, above = np.clip(share - 1e-12, 0, 1), np.clip(share + 1e-12, 0, 1)
    h_below, h_above = h(below), h(above)
    right, left = h_above <= 0, h_below >= 0  # the root is above k/n, below it
    lo = np.where(right, above, np.where(left, 0.0, below))
    hi = np.where(right, 1.0, np.where(left, below, above))
    f_lo = np.where(right, h_above, np.where(left, h(np.zeros(shape)), h_below))
    f_hi = np.where(right, h(np.ones(shape)), np.where(left, h_below, h_above))
    p = _increasing_root(h, lo, hi, f_lo, f_hi, xtol=1e-11, ftol=1e-14)
    q0, q1 = q_of(p)
    # Without labelled items of one truth (m1 = 0, say) q1 is free: its stationary point
    # jumps from 0 to 1 where g = 0, and the root p sits at that jump (p = k/n). There any
    # q1 is optimal for the labelled terms, so take the one that gives exactly that p.
    q1 = np.where((m1 == 0) & (theta > 0), np.clip((p - (1 - theta) * (1 - q0)) / theta, 0, 1), q1)
    q0 = np.where((m0 == 0) & (theta < 1), np.clip(1 - (p - theta * q1) / (1 - theta), 0, 1), q0)
    return q0, q1


def _profile_kernel(theta, k, n, tn, m0, tp, m1):
    """Profile log-likelihood kernel of θ: the kernel maximised over (q0, q1)."""
    q0, q1 = _profile_q(theta, k, n, tn, m0, tp, m1)
    p = theta * q1 + (1 - theta) * (1 - q0)
    return _kernel(theta, q0, q1, p, k, n, tn, m0, tp, m1)


def _mle_parts(k, n, tn, m0, tp, m1):
    """Closed-form MLE of θ and a maximiser θ* (equal where the MLE is unique)."""
    fp, fn = m0 - tn, m1 - tp
    big_n, big_k = n + m0 + m1, k + tp + fp
    l1, l0 = tp + fp, fn + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(big_n > 0, big_k / np.where(big_n > 0, big_n, 1), np.nan)
        a = np.where(l1 > 0, tp / np.where(l1 > 0, l1, 1), np.nan)
        b = np.where(l0 > 0, fn / np.where(l0 > 0, l0, 1), np.nan)
    # Where a (or b) has no labelled item it is free, but it does not matter when no item at
    # all has that verdict (φ = 0 or 1).
    theta = np.where(phi == 0, b, np.where(phi == 1, a, phi * a + (1 - phi) * b))
    # A maximiser where the MLE is a whole segment: the free a or b set to 1/2.
    star = np.where(
        np.isnan(theta),
        phi * np.where(np.isnan(a), 0.5, a) + (1 - phi) * np.where(np.isnan(b), 0.5, b),
        theta,
    )
    return theta, star


def _increasing_root(fun, lo, hi, f_lo, f_hi, *, xtol, ftol):
    """Root of increasing ``fun`` on ``[lo, hi]`` with ``f_lo <= 0 <= f_hi``, vectorised.

    Illinois regula falsi (the retained end's value halved when the same end is kept
    twice), with a bisection step wherever the secant point is not finite or not strictly
    inside the bracket (infinite end values). Stops when every bracket is narrower than
    ``xtol`` or every ``|fun|`` is below ``ftol``; returns the last point of each problem.
    """
    lo, hi, f_lo, f_hi = (np.array(v, dtype=float) for v in (lo, hi, f_lo, f_hi))
    x = np.where(f_lo >= 0, lo, hi)
    done = (f_lo >= 0) | (f_hi <= 0)
    kept = np.zeros(lo.shape, dtype=np.int8)  # +1: lo was kept last step, -1: hi was
    widths = [hi - lo] * 4  # the bracket's width in the last four steps
    for _ in range(_MAX_STEPS):
        if done.all():
            break
        step = lo - f_lo * (hi - lo) / (f_hi - f_lo)
        # Bisect where the secant fails, or where four steps did not halve the bracket (a
        # jump in ``fun``): at worst a fifth of the speed of bisection.
        slow = (hi - lo) > 0.5 * widths[0]
        widths = [*widths[1:], hi - lo]
        bisect = slow | ~np.isfinite(step) | (step <= lo) | (step >= hi)
        step = np.where(bisect, 0.5 * (lo + hi), step)
        x = np.where(done, x, step)
        fx = fun(x)
        below = fx < 0  # the root lies above x
        f_hi = np.where(below & (kept == -1), 0.5 * f_hi, f_hi)
        f_lo = np.where(~below & (kept == 1), 0.5 * f_lo, f_lo)
        lo, f_lo = np.where(below, x, lo), np.where(below, fx, f_lo)
        hi, f_hi = np.where(below, hi, x), np.where(below, f_hi, fx)
        kept = np.where(below, -1, 1).astype(np.int8)
        done = done | (hi - lo <= xtol) | (np.abs(fx) <= ftol)
    return x


def _ends(deviance, star, c, bounds=(0.0, 1.0)):
    """Lower and upper ends of {θ : deviance(θ) <= c} around the maximiser ``star``.

    ``deviance`` decreases to its minimum 0 at ``star`` and increases after it; both ends
    are found at once (the two problems stacked on a new first axis), the lower one as the
    root of the increasing ``c − deviance`` on [bounds[0], star], the upper one of
    ``deviance − c`` on [star, bounds[1]] (the bounds broadcast with ``star``).
    """
    ends = np.stack([np.broadcast_to(b, np.shape(star)).astype(float) for b in bounds])
    sign = np.array([-1.0, 1.0]).reshape((2,) + (1,) * np.ndim(star))
    d_end = deviance(ends)

    def fun(theta):
        return sign * (deviance(theta) - c)

    inside = np.stack([star, star])
    f_in = np.broadcast_to(-c * sign, inside.shape)
    f_out = sign * (d_end - c)
    lo = np.where(sign < 0, ends, inside)
    hi = np.where(sign < 0, inside, ends)
    f_lo = np.where(sign < 0, f_out, f_in)
    f_hi = np.where(sign < 0, f_in, f_out)
    found = _increasing_root(fun, lo, hi, f_lo, f_hi, xtol=1e-11, ftol=1e-11)
    return np.where(d_end <= c, ends, found)


# ----------------------------------------------------------------------------- the MLE


def double_sampling_mle(k, n, tn, m0, tp, m1):
    """Maximum-likelihood estimate of θ under the random labelling design (closed form).

    ``θ̂ = (K/N) · tp/(tp + fp) + (1 − K/N) · fn/(fn + tn)``: the share of all ``N`` items
    judged correct times the share truly correct among the labelled items judged correct,
    plus the same for the items judged incorrect (Tenenbein's double-sampling estimator).

    Parameters
    ----------
    k, n : array_like of int
        ``k`` of the ``n`` *unlabelled* items are judged correct (``0 <= k <= n``; ``n`` may be
        0 when every item was labelled).
    tn, m0 : array_like of int
        ``m0`` labelled items are truly incorrect, ``tn`` of them judged incorrect.
    tp, m1 : array_like of int
        ``m1`` labelled items are truly correct, ``tp`` of them judged correct.

    Returns
    -------
    numpy.ndarray or numpy scalar
        θ̂, in [0, 1], broadcast over the arguments; NaN where the MLE is not unique (below).

    Raises
    ------
    ValueError
        If a count is not a whole non-negative number, or a part exceeds its total.

    Notes
    -----
    The MLE is unique, and given by the formula, unless a verdict that some item received has
    no labelled item: with ``K > 0`` judged correct but no labelled item judged correct
    (``tp + fp = 0``), a = P(true = 1 | verdict = 1) is not estimated and every θ in
    ``[(1 − K/N) b̂, K/N + (1 − K/N) b̂]`` maximises the likelihood; likewise with
    ``K < N`` and ``fn + tn = 0``. The estimate is NaN there (with no labelled items at all,
    too), while :func:`likelihood_interval` still returns the likelihood-ratio interval,
    which contains that whole segment. Where no item at all has a verdict (``K = 0`` or
    ``K = N``) the free share does not enter and θ̂ = b̂ or â. Unlike Rogan–Gladen, θ̂ never
    leaves [0, 1], and no division by J = q0 + q1 − 1 occurs.

    References
    ----------
    .. [1] A. Tenenbein, "A double sampling scheme for estimating from binomial data with
       misclassifications", J. Am. Stat. Assoc. 65 (1970) 1350-1361.

    Examples
    --------
    >>> from bayesjudge.core.likelihood import double_sampling_mle
    >>> round(float(double_sampling_mle(k=738, n=1800, tn=112, m0=140, tp=54, m1=60)), 4)
    0.3
    >>> double_sampling_mle(k=[5, 0], n=10, tn=3, m0=3, tp=0, m1=1).tolist()  # see Notes
    [nan, 0.25]
    """
    counts = _counts(k, n, tn, m0, tp, m1)
    theta, _ = _mle_parts(*counts)
    return scalar_or_array(np.array(theta))


# --------------------------------------------------------------- the profile interval of θ


def likelihood_interval(k, n, tn, m0, tp, m1, alpha=0.05, method="profile"):
    """MLE of θ with its profile-likelihood interval, random labelling design.

    The interval is ``{θ : 2 (l_max − l_p(θ)) <= χ²₁(1 − alpha)}`` where
    ``l_p(θ) = max over (q0, q1)`` of the full log-likelihood (module docstring). For fixed θ
    that maximisation is concave in (q0, q1) and is solved by a one-dimensional bisection
    with closed-form inner steps; the profile is concave in θ, so each end is found by
    bisection too, every group of a vectorised call at once.

    Parameters
    ----------
    k, n, tn, m0, tp, m1 : array_like of int
        The counts of the random design, as in :func:`double_sampling_mle` (``k``, ``n``
        count the unlabelled items only). They broadcast against each other.
    alpha : float, default 0.05
        One minus the nominal coverage.
    method : {"profile"}, default "profile"
        The profile-likelihood (likelihood-ratio) interval.

    Returns
    -------
    LikelihoodEstimate
        ``(estimate, lower, upper)``: :func:`double_sampling_mle` and the interval, inside
        [0, 1] (numpy scalars for scalar input).

    Raises
    ------
    ValueError
        For invalid counts, ``alpha`` or ``method``.

    Notes
    -----
    The interval reaches 0 only where ``m1 = 0`` (and 1 only where ``m0 = 0``): a labelled
    item of each truth rules out the ends. Where the MLE is not unique (NaN estimate, see
    :func:`double_sampling_mle`) the interval still holds every maximiser; with no labelled
    item at all it is [0, 1]. Coverage (tests/core/test_likelihood_slow.py, 2,000 data sets
    per θ, q0 = 0.8, q1 = 0.9, 1,800 unlabelled and 200 labelled items) is within 3 Monte
    Carlo SE of 0.95 on θ ∈ {0.08, 0.3, 0.5, 0.7, 0.9}; see docs/estimators.md.

    Examples
    --------
    >>> from bayesjudge.core.likelihood import likelihood_interval
    >>> est, lo, hi = likelihood_interval(k=738, n=1800, tn=112, m0=140, tp=54, m1=60)
    >>> print(f"{est:.4f} [{lo:.4f}, {hi:.4f}]")
    0.3000 [0.2503, 0.3503]
    """
    _check_method(method)
    alpha = check_alpha(alpha)
    counts = _counts(k, n, tn, m0, tp, m1)
    theta_hat, star = _mle_parts(*counts)
    c = float(chi2.isf(alpha, 1))
    lmax = _max_kernel(*counts)
    no_labels = (counts[3] + counts[5]) == 0
    star = np.where(no_labels, 0.5, star)

    def deviance(theta):
        return 2 * (lmax - _profile_kernel(theta, *counts))

    with np.errstate(all="ignore"):
        lower, upper = _ends(deviance, star, c)
    lower = np.where(no_labels, 0.0, lower)
    upper = np.where(no_labels, 1.0, upper)
    return LikelihoodEstimate(
        scalar_or_array(np.array(theta_hat)),
        scalar_or_array(np.array(lower)),
        scalar_or_array(np.array(upper)),
    )


# ------------------------------------------------------------------ the test-set estimand


def _labelled_kernel(a, tn, m0, tp, m1, b):
    """``tp log a + fp log(1 − a) + fn log b + tn log(1 − b)``; a NaN share (no item) adds 0."""
    fp, fn = m0 - tn, m1 - tp
    a, b = np.nan_to_num(a, nan=0.5), np.nan_to_num(b, nan=0.5)
    return xlogy(tp, a) + xlogy(fp, 1 - a) + xlogy(fn, b) + xlogy(tn, 1 - b)


def _test_set_profile(mu, k, n, tn, m0, tp, m1):
    """Return (a, b) maximising the labelled likelihood given ``k a + (n − k) b = N mu − m1``.

    The labelled log-likelihood ``tp log a + fp log(1 − a) + fn log b + tn log(1 − b)`` is
    concave; with a Lagrange multiplier λ its maximiser on the line is ``a =``
    :func:`_stationary` ``(tp, fp, λ k)``, ``b = _stationary(fn, tn, λ (n − k))``, and
    ``k a + (n − k) b`` increases with λ. λ = (2u − 1)/(u(1 − u)) maps u in [0, 1] onto the
    real line; u is found by the vectorised root search. Call inside
    ``np.errstate(all="ignore")``.
    """
    fp, fn = m0 - tn, m1 - tp
    target = (n + m0 + m1) * mu - m1
    shape = np.broadcast_shapes(np.shape(mu), np.shape(k))

    def ab_of(u):
        lam = (2 * u - 1) / (u * (1 - u))
        return _stationary(tp, fp, lam * k), _stationary(fn, tn, lam * (n - k))

    def fun(u):
        a, b = ab_of(u)
        return k * a + (n - k) * b - target

    zeros, ones = np.zeros(shape), np.ones(shape)
    u = _increasing_root(fun, zeros, ones, fun(zeros), fun(ones), xtol=1e-11, ftol=1e-12)
    a, b = ab_of(u)
    # A share without labelled items is free (its stationary point jumps at λ = 0): take
    # the value that meets the constraint, as in _profile_q.
    a = np.where((tp + fp == 0) & (k > 0), np.clip((target - (n - k) * b) / k, 0, 1), a)
    b = np.where((fn + tn == 0) & (n > k), np.clip((target - k * a) / (n - k), 0, 1), b)
    return a, b


def test_set_interval(k, n, tn, m0, tp, m1, alpha=0.05, method="profile"):
    """Estimate and interval of the test-set θ under the random labelling design.

    The test-set θ is the share truly correct among *this* evaluation's ``N = n + m0 + m1``
    items, ``θ_test = (m1 + T_u) / N``, where ``T_u`` counts the truly correct items among
    the ``n`` unlabelled ones (unknown). Given the verdicts, ``T_u`` is the sum of
    ``Bin(k, a)`` and ``Bin(n − k, b)``, a = P(true = 1 | verdict = 1) and
    b = P(true = 1 | verdict = 0), so ``θ_test = μ + e`` with
    ``μ = (m1 + k a + (n − k) b) / N`` and a prediction error ``e`` of variance
    ``v(a, b) = (k a (1 − a) + (n − k) b (1 − b)) / N²``.

    Parameters
    ----------
    k, n, tn, m0, tp, m1 : array_like of int
        The counts of the random design, as in :func:`double_sampling_mle`.
    alpha : float, default 0.05
        One minus the nominal coverage.
    method : {"profile"}, default "profile"
        The profile-likelihood interval of μ widened for the prediction error (Notes).

    Returns
    -------
    LikelihoodEstimate
        ``(estimate, lower, upper)``. The estimate ``(m1 + k â + (n − k) b̂) / N`` equals
        :func:`double_sampling_mle` exactly (both are ``K/N · â + (1 − K/N) · b̂``); the
        interval lies in ``[m1/N, (m1 + n)/N]``, the values θ_test can take.

    Raises
    ------
    ValueError
        For invalid counts, ``alpha`` or ``method``.

    Notes
    -----
    μ is linear in (a, b), so its profile deviance ``dev(t)`` from the labelled items
    (``Bin(tp; tp + fp, a) · Bin(fn; fn + tn, b)``) is convex, with constrained maximiser
    ``(a_t, b_t)``. Reading the deviance as ``(μ̂ − t)² / V_est(t)`` and adding the variance
    of the prediction error, the interval is ``{t : (μ̂ − t)² / (V_est(t) + v(a_t, b_t))
    <= χ²₁(1 − alpha)}``, i.e. ``dev · d² / (d² + v · dev) <= χ²₁(1 − alpha)`` with
    ``d = μ̂ − t``: the profile-likelihood interval of μ where the prediction error is
    negligible (few unlabelled items per labelled one), a Wald-type widening otherwise.
    Where every item was labelled (``n = 0``) θ_test = m1/N is known and the interval is
    that point. Coverage of θ_test (tests/core/test_likelihood_slow.py; docs/estimators.md)
    is within 3 Monte Carlo SE of nominal on the Fig. 5-like grid.

    Examples
    --------
    >>> from bayesjudge.core.likelihood import test_set_interval
    >>> est, lo, hi = test_set_interval(k=738, n=1800, tn=112, m0=140, tp=54, m1=60)
    >>> print(f"{est:.4f} [{lo:.4f}, {hi:.4f}]")
    0.3000 [0.2541, 0.3459]
    """
    _check_method(method)
    alpha = check_alpha(alpha)
    counts = _counts(k, n, tn, m0, tp, m1)
    k, n, tn, m0, tp, m1 = counts
    big_n = n + m0 + m1
    theta_hat, star = _mle_parts(*counts)
    c = float(chi2.isf(alpha, 1))
    fp, fn = m0 - tn, m1 - tp
    no_labels = (m0 + m1) == 0
    with np.errstate(all="ignore"):
        lmax = _labelled_kernel(tp / (tp + fp), tn, m0, tp, m1, fn / (fn + tn))
        lo_end = m1 / big_n
        hi_end = (m1 + n) / big_n
        star = np.clip(np.where(no_labels, 0.5 * (lo_end + hi_end), star), lo_end, hi_end)

        def statistic(t):
            a, b = _test_set_profile(t, k, n, tn, m0, tp, m1)
            dev = 2 * (lmax - _labelled_kernel(a, tn, m0, tp, m1, b))
            dev = np.maximum(dev, 0.0)
            v = (k * a * (1 - a) + (n - k) * b * (1 - b)) / big_n**2
            d2 = (star - t) ** 2
            den = d2 + v * dev
            # dev = inf (t not reachable by the labelled data): V_est = 0, the statistic d²/v.
            finite = np.where(den > 0, dev * d2 / den, 0.0)
            return np.where(np.isinf(dev), np.where(v > 0, d2 / v, np.inf), finite)

        lower, upper = _ends(statistic, star, c, bounds=(lo_end, hi_end))
    lower = np.where(no_labels, lo_end, lower)
    upper = np.where(no_labels, hi_end, upper)
    return LikelihoodEstimate(
        scalar_or_array(np.array(theta_hat)),
        scalar_or_array(np.array(lower)),
        scalar_or_array(np.array(upper)),
    )


# The name starts with "test": tell pytest that it is not a test where it is imported.
test_set_interval.__test__ = False


# ------------------------------------------------------------------- the human-only baseline


def human_only(tn, m0, tp, m1, alpha=0.05) -> HumanOnlyEstimate:
    """Estimate θ from the labelled items alone: ``m1 / (m0 + m1)``, Wilson interval.

    Under the random labelling design the labelled items are a random sample of the judged
    ones, so the share of them that humans call correct estimates θ without the judge
    (Lee et al. Sec. 6: the judge helps only if the corrected interval is narrower).

    Parameters
    ----------
    tn, m0, tp, m1 : array_like of int
        The labelled counts (``tn``, ``tp`` are checked but do not enter the estimate).
    alpha : float, default 0.05
        One minus the nominal coverage.

    Returns
    -------
    HumanOnlyEstimate
        ``(estimate, lower, upper)``, NaN where there is no labelled item (``m0 + m1 = 0``);
        the Wilson interval is ``[0, upper]`` at ``m1 = 0`` and ``[lower, 1]`` at ``m0 = 0``.

    Raises
    ------
    ValueError
        For invalid counts or ``alpha``.

    Notes
    -----
    Only meaningful under the random design: a calibration set stratified by the human label
    fixes m0 and m1 by design, so ``m1 / (m0 + m1)`` estimates nothing about θ there.

    Examples
    --------
    >>> from bayesjudge.core.likelihood import human_only
    >>> est, lo, hi = human_only(tn=112, m0=140, tp=54, m1=60)
    >>> print(f"{est:.2f} [{lo:.4f}, {hi:.4f}]")
    0.30 [0.2407, 0.3668]
    """
    alpha = check_alpha(alpha)
    tn, m0 = as_subcount("tn", tn, "m0", m0)
    tp, m1 = as_subcount("tp", tp, "m1", m1)
    tn, m0, tp, m1 = broadcast(("tn", "m0", "tp", "m1"), tn, m0, tp, m1)
    m = m0 + m1
    has = m > 0
    safe = np.where(has, m, 1.0)
    lower, upper = wilson_limits(m1, safe, two_sided_z(alpha))
    lower = np.where(m1 == 0, 0.0, np.clip(lower, 0.0, 1.0))
    upper = np.where(m0 == 0, 1.0, np.clip(upper, 0.0, 1.0))
    estimate, lower, upper = (np.where(has, v, np.nan) for v in (m1 / safe, lower, upper))
    return HumanOnlyEstimate(
        scalar_or_array(estimate), scalar_or_array(lower), scalar_or_array(upper)
    )
