"""Exact posterior of the separate-calibration K-category model by importance sampling.

The model (``bj.fit(counts, calibration="separate")``, :mod:`bayesjudge.models.categorical`)
is, per group::

    θ ~ Dirichlet(α),  C[t, :] ~ Dirichlet(β[t, :]),  x ~ Multinomial(n, Cᵀθ),
    c[t, :] ~ Multinomial(m_t, C[t, :])   (stratified design: m_t fixed),
    m ~ Multinomial(Σ m_t, θ)             (random design only).

Its posterior can be sampled without MCMC. Draw each confusion row from its calibration
posterior ``C[t] ~ Dirichlet(β[t] + c[t])`` and the verdict shares ``p ~ Dirichlet(1 + x)``,
independently, and map ``θ = (Cᵀ)⁻¹ p``. Given C, ``θ ↦ p = Cᵀθ`` is an affine bijection of
the plane ``Σ θ = 1`` onto ``Σ p = 1`` whose linear part (Cᵀ on the sum-zero subspace) has
determinant ``det C``; so the proposal's density of (C, θ) is ``q(C) · Dir(Cᵀθ; 1 + x) ·
|det C|``, with ``Dir(p; 1 + x) ∝ Π p_j^{x_j}``, the test likelihood. The posterior is
``q(C) · Π p_j^{x_j} · Π θ_k^{α_k − 1} · 1[θ ∈ simplex]`` (times ``Π θ_k^{m_k}`` under the
random design), so the importance weight is::

    w ∝ 1[θ ≥ 0] · Π θ_k^{α_k − 1 (+ m_k)} / |det C|

(``1[θ ≥ 0] / |det C|`` for flat priors, stratified). The draws are exact in
the limit; their effective sample size ``(Σ w)² / Σ w²`` is reported and a warning says when
it is low. Low ESS arises where many proposals leave the simplex (a true share near 0 with
a noisy judge) or where |det C| varies a lot across the calibration posterior (a judge near
chance, few labelled items); more draws, or the MCMC fit, are the remedies.

Default priors (shared with ``bj.fit``'s ``CategoricalPriors`` and the coverage study):
θ ~ Dirichlet(:data:`THETA_PRIOR` = 1), flat, and each confusion row ~ Dirichlet(1/K, …, 1/K),
Perks's prior (:func:`default_confusion_prior`): one pseudo-item per row whatever K
(:data:`~bayesjudge.core.categorical.ROW_PSEUDO_ITEMS`). A flat Dirichlet(1) row adds K
pseudo-items, spread evenly: it pulls the diagonal of an accurate judge towards 1/K by
``K / (m_t + K)`` of the way, which at K = 5, m_t = 40 takes a diagonal of 0.8 to (32 + 1)/45
= 0.73 and made the 95 % interval of a mean grade cover 0.824 (``bayesjudge.studies.categorical``);
Jeffreys's Dirichlet(1/2) still adds K/2. θ keeps the flat prior: it is informed by the n test
items, and Dirichlet(1/K) on θ (tried) pulls the shares to the simplex's boundary and the same
interval's coverage down to 0.86. At K = 2 Perks's prior is Beta(1/2, 1/2) on q0 and q1, so
the binary model's posterior (flat Beta(1, 1) by default) is matched with
``confusion_prior=1``.

Only numpy is used here.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from bayesjudge.core._results import EstimateInterval, scalar_or_array
from bayesjudge.core._validation import (
    check_alpha,
    check_categorical_counts,
    check_design,
    check_seed,
)
from bayesjudge.core.categorical import ROW_PSEUDO_ITEMS
from bayesjudge.warnings import SmallSampleWarning

__all__ = [
    "THETA_PRIOR",
    "CategoricalPosteriorDraws",
    "PosteriorSummary",
    "default_confusion_prior",
    "posterior_categorical",
    "posterior_draws",
    "posterior_linear",
    "posterior_summary",
    "weighted_quantile",
]


#: Default Dirichlet concentration of θ (every category): flat on the simplex.
THETA_PRIOR = 1.0


def default_confusion_prior(k: int) -> float:
    """Default Dirichlet concentration of every confusion-row cell: Perks's 1/K.

    One pseudo-item per truth row whatever K (:data:`~bayesjudge.core.categorical.
    ROW_PSEUDO_ITEMS` / K), the amount the score-type interval and the bootstrap also add
    to a calibration row; see the module docstring for why not the flat Dirichlet(1).

    Parameters
    ----------
    k : int
        Number of categories (at least 2).

    Returns
    -------
    float

    Examples
    --------
    >>> default_confusion_prior(5), default_confusion_prior(2)
    (0.2, 0.5)
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 2:
        raise ValueError(f"k must be a whole number of categories >= 2; got {k!r}.")
    return ROW_PSEUDO_ITEMS / int(k)


class CategoricalPosteriorDraws(NamedTuple):
    """Weighted posterior draws of θ (:func:`posterior_draws`).

    Attributes
    ----------
    theta : numpy.ndarray
        (S, …, K) draws of θ, draw axis first; draws outside the simplex carry weight 0.
    weights : numpy.ndarray
        (S, …) importance weights, normalised to sum to 1 over the draws of each group.
    ess : numpy.ndarray
        (…) effective sample size ``1 / Σ w²`` of the normalised weights.
    acceptance : numpy.ndarray
        (…) share of the draws inside the simplex (weight > 0).
    """

    theta: np.ndarray
    weights: np.ndarray
    ess: np.ndarray
    acceptance: np.ndarray


def _concentration(name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    try:
        out = np.broadcast_to(arr, shape)
    except ValueError:
        raise ValueError(
            f"{name} of shape {arr.shape} does not broadcast to {shape} (one Dirichlet "
            "concentration per category; for the confusion rows per (truth, verdict) cell)."
        ) from None
    if not (np.isfinite(out).all() and (out > 0).all()):
        raise ValueError(f"{name} must be finite and > 0 (1 is the flat prior); got {value!r}.")
    return out


def _dirichlet(rng, alpha: np.ndarray, draws: int) -> np.ndarray:
    """(draws, *alpha.shape) Dirichlet draws over the last axis (normalised gammas)."""
    g = rng.standard_gamma(np.broadcast_to(alpha, (draws, *alpha.shape)))
    # A tiny concentration can underflow every gamma of a row to 0: put it at one vertex
    # (its limit) rather than dividing by 0.
    total = g.sum(-1, keepdims=True)
    empty = total == 0
    if empty.any():
        g = np.where(empty, np.eye(alpha.shape[-1])[0], g)
        total = g.sum(-1, keepdims=True)
    return g / total


def posterior_draws(
    test,
    calibration,
    *,
    theta_prior=THETA_PRIOR,
    confusion_prior=None,
    calibration_design: str = "stratified",
    draws: int = 4000,
    random_seed=None,
    min_ess: float = 200.0,
    warn: bool = True,
) -> CategoricalPosteriorDraws:
    """Importance-weighted exact posterior draws of θ for the separate-calibration model.

    Parameters
    ----------
    test : array_like
        (…, K) verdict counts of the test items.
    calibration : array_like
        (…, K, K) calibration counts, rows = truth, columns = verdict.
    theta_prior : float or array_like, default :data:`THETA_PRIOR` (1, flat)
        Dirichlet concentration of θ, (K,) or a number (``CategoricalPriors.theta``).
    confusion_prior : float or array_like, optional
        Dirichlet concentration of the confusion rows, (K, K) or a number
        (``CategoricalPriors.confusion_alpha(K)``). Default 1/K in every cell, Perks's prior
        (:func:`default_confusion_prior`); 1 is the flat prior.
    calibration_design : {"stratified", "random"}, default "stratified"
        ``"random"`` adds the truth counts' likelihood ``Π θ_t^{m_t}`` to the weight.
    draws : int, default 4000
        Proposals per group (at least 100).
    random_seed : int, numpy.random.Generator or None
        Seed.
    min_ess : float, default 200
        Warn (SmallSampleWarning) where a group's effective sample size is below this.
    warn : bool, default True
        Emit that warning.

    Returns
    -------
    CategoricalPosteriorDraws
        ``(theta, weights, ess, acceptance)``.

    Notes
    -----
    The weight is derived in the module docstring. Unlike the closed forms, the posterior
    needs no invertible Ĉ: an empty calibration cell or row is covered by its prior.

    Examples
    --------
    >>> post = posterior_draws([30, 20, 50], [[80, 15, 5], [10, 80, 10], [5, 15, 80]],
    ...                        random_seed=1)
    >>> post.theta.shape, bool(post.ess > 1000)
    ((4000, 3), True)
    """
    x, c = check_categorical_counts(test, calibration)
    k = x.shape[-1]
    alpha = _concentration("theta_prior", theta_prior, (k,))
    if confusion_prior is None:
        confusion_prior = default_confusion_prior(k)
    beta = _concentration("confusion_prior", confusion_prior, (k, k))
    calibration_design = check_design(calibration_design)
    if isinstance(draws, bool) or not isinstance(draws, int | np.integer) or draws < 100:
        raise ValueError(f"draws must be a whole number >= 100; got {draws!r}.")
    rng = np.random.default_rng(check_seed(random_seed))
    conf = _dirichlet(rng, beta + c, draws)  # (S, …, K, K)
    p = _dirichlet(rng, 1.0 + x, draws)  # (S, …, K)
    det = np.linalg.det(conf)
    singular = np.abs(det) < 1e-300
    safe = np.where(singular[..., None, None], np.eye(k), conf)
    theta = np.linalg.solve(np.swapaxes(safe, -1, -2), p[..., None])[..., 0]
    inside = (theta >= 0).all(-1) & ~singular
    power = np.broadcast_to(alpha - 1.0, x.shape)
    if calibration_design == "random":
        power = power + c.sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_w = -np.log(np.abs(np.where(singular, 1.0, det)))
        terms = np.where(power != 0, power * np.log(np.where(inside[..., None], theta, 1.0)), 0)
        log_w = np.where(inside, log_w + terms.sum(-1), -np.inf)
    top = log_w.max(0)
    none = ~np.isfinite(top)
    w = np.exp(log_w - np.where(none, 0.0, top))
    total = w.sum(0)
    w = w / np.where(total > 0, total, 1.0)
    ess = np.where(none, 0.0, 1.0 / np.maximum((w**2).sum(0), 1e-300))
    acceptance = inside.mean(0)
    theta = np.where(inside[..., None], theta, np.nan)
    if warn and (ess < min_ess).any():
        low = ess < min_ess
        warnings.warn(
            f"posterior_draws: the effective sample size is {float(ess.min()):.0f} (below "
            f"{min_ess:g}) in {int(low.sum())} of {low.size} groups (acceptance down to "
            f"{float(acceptance.min()):.3f}): many proposals left the simplex (a true share "
            "near 0 with a noisy judge) or |det C| varies widely (a judge near chance, few "
            "labelled items). Increase draws (the ESS grows in proportion) or fit the model "
            "by MCMC (bj.fit).",
            SmallSampleWarning,
            stacklevel=2,
        )
    return CategoricalPosteriorDraws(theta, w, scalar_or_array(ess), scalar_or_array(acceptance))


def weighted_quantile(values, weights, q) -> np.ndarray:
    """Quantiles over axis 0 of weighted draws (weights normalised per column).

    The weighted empirical CDF is interpolated between the midpoints of the sorted draws'
    weights (``numpy.quantile``'s ``"hazen"`` rule when the weights are equal). NaN draws
    must carry weight 0.

    Parameters
    ----------
    values : array_like
        (S, …) draws.
    weights : array_like
        (S, …) non-negative weights, summing to 1 over axis 0.
    q : float
        The probability level.

    Returns
    -------
    numpy.ndarray
        (…).

    Examples
    --------
    >>> import numpy as np
    >>> v = np.arange(1.0, 5.0)
    >>> float(weighted_quantile(v, np.full(4, 0.25), 0.5)), float(np.median(v))
    (2.5, 2.5)
    """
    v = np.asarray(values, dtype=float)
    w = np.broadcast_to(np.asarray(weights, dtype=float), v.shape)
    key = np.where(w > 0, v, np.inf)
    order = np.argsort(key, axis=0)
    vs = np.take_along_axis(key, order, axis=0)
    ws = np.take_along_axis(w, order, axis=0)
    mid = np.cumsum(ws, axis=0) - 0.5 * ws
    mid = np.where(ws > 0, mid, np.inf)  # weightless (and infinite) draws sit past the end
    idx = (mid < q).sum(0)
    hi = np.minimum(idx, v.shape[0] - 1)[None]
    lo = np.maximum(idx - 1, 0)[None]
    v_lo, v_hi = np.take_along_axis(vs, lo, 0)[0], np.take_along_axis(vs, hi, 0)[0]
    m_lo, m_hi = np.take_along_axis(mid, lo, 0)[0], np.take_along_axis(mid, hi, 0)[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(m_hi > m_lo, np.clip((q - m_lo) / (m_hi - m_lo), 0.0, 1.0), 0.0)
        step = np.where(np.isfinite(v_hi), v_lo + frac * (v_hi - v_lo), v_lo)
    out = np.where(idx == 0, v_hi, step)
    return scalar_or_array(out)


class PosteriorSummary(NamedTuple):
    """Posterior means and credible limits with the sampler's diagnostics.

    Returned by :func:`posterior_summary`.

    Attributes
    ----------
    estimate, lower, upper : numpy.ndarray
        (…, S) posterior mean and the ``alpha/2``, ``1 - alpha/2`` posterior quantiles.
    ess : numpy.ndarray
        (…) effective sample size of the draws the summary used.
    draws : numpy.ndarray
        (…) proposals drawn for each group (more than ``draws`` where the ESS was low).
    """

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    ess: np.ndarray
    draws: np.ndarray


def _summarise(post: CategoricalPosteriorDraws, v: np.ndarray, alpha: float):
    theta = np.nan_to_num(post.theta)  # weight-0 draws
    values = np.einsum("r...i,...si->r...s", theta, v)
    w = post.weights[..., None]
    est = (w * values).sum(0)
    lower = weighted_quantile(values, w, alpha / 2)
    upper = weighted_quantile(values, w, 1 - alpha / 2)
    # No proposal inside the simplex: nothing to summarise (posterior_summary warns).
    empty = (post.weights.sum(0) == 0)[..., None]
    return tuple(np.where(empty, np.nan, np.asarray(a)) for a in (est, lower, upper))


def posterior_summary(
    test,
    calibration,
    weights,
    *,
    alpha: float = 0.05,
    theta_prior=THETA_PRIOR,
    confusion_prior=None,
    calibration_design: str = "stratified",
    draws: int = 4000,
    max_draws: int | None = None,
    random_seed=None,
    min_ess: float = 200.0,
    warn: bool = True,
) -> PosteriorSummary:
    """Posterior means and equal-tailed credible intervals of linear functionals ``W θ``.

    Parameters
    ----------
    test, calibration : array_like
        (…, K) and (…, K, K) counts (rows = truth).
    weights : array_like
        (S, K) or (…, S, K): one row per functional (``numpy.eye(K)`` gives every θ_k; a row
        of category values gives a score).
    alpha : float, default 0.05
        One minus the credible level.
    theta_prior, confusion_prior, calibration_design, draws, random_seed, min_ess
        As for :func:`posterior_draws`.
    max_draws : int, optional
        Where a group's effective sample size is below ``min_ess``, draw it again with
        ``draws · 1.25 · min_ess / ESS`` proposals, at most ``max_draws`` (default
        ``25 · draws``); the ESS grows in proportion to the draws.
    warn : bool, default True
        Warn (SmallSampleWarning) where the ESS is still below ``min_ess``.

    Returns
    -------
    PosteriorSummary
        ``(estimate, lower, upper, ess, draws)``.

    Examples
    --------
    >>> import numpy as np
    >>> w = np.vstack([np.eye(3), [1.0, 0.5, 0.0]])
    >>> res = posterior_summary([30, 20, 50], [[80, 15, 5], [10, 80, 10], [5, 15, 80]], w,
    ...                         random_seed=1)
    >>> res.estimate.shape, bool((res.lower < res.estimate).all()), int(res.draws)
    ((4,), True, 4000)
    """
    alpha = check_alpha(alpha)
    max_draws = 25 * int(draws) if max_draws is None else max_draws
    if isinstance(max_draws, bool) or not isinstance(max_draws, int | np.integer):
        raise ValueError(f"max_draws must be a whole number; got {max_draws!r}.")
    rng = np.random.default_rng(check_seed(random_seed))
    x, c = check_categorical_counts(test, calibration)
    lead, k = x.shape[:-1], x.shape[-1]
    v = np.asarray(weights, dtype=float)
    if v.ndim < 2 or v.shape[-1] != k or not np.isfinite(v).all():
        raise ValueError(f"weights must have shape (S, K = {k}) or (..., S, K); got {v.shape}.")
    v = np.broadcast_to(v, (*lead, *v.shape[-2:])).reshape(-1, *v.shape[-2:])
    x, c = x.reshape(-1, k), c.reshape(-1, k, k)
    options = {
        "theta_prior": theta_prior,
        "confusion_prior": confusion_prior,
        "calibration_design": calibration_design,
        "random_seed": rng,
        "warn": False,
    }
    post = posterior_draws(x, c, draws=draws, **options)
    est, lower, upper = _summarise(post, v, alpha)
    ess = np.array(post.ess, dtype=float)
    used = np.full(ess.shape, int(draws))
    # Groups with too few effective draws are drawn again, each with as many as it needs.
    for g in np.flatnonzero(ess < min_ess):
        need = min(max_draws, int(np.ceil(draws * 1.25 * min_ess / max(ess[g], 1.0))))
        if need <= draws:
            continue
        again = posterior_draws(x[g], c[g], draws=need, **options)
        est[g], lower[g], upper[g] = _summarise(again, v[g], alpha)
        ess[g], used[g] = again.ess, need
    est, lower, upper = (a.reshape(*lead, -1) for a in (est, lower, upper))
    ess, used = ess.reshape(lead), used.reshape(lead)
    if warn and (ess < min_ess).any():
        warnings.warn(
            f"posterior_summary: the importance sampler's effective sample size is "
            f"{float(ess.min()):.0f} (below {min_ess:g}) in {int((ess < min_ess).sum())} of "
            f"{ess.size} groups even with {max_draws} draws, so the credible limits are noisy "
            "there (NaN where no proposal fell inside the simplex): the judge is close to "
            "chance on these data or a true share is near 0. Raise max_draws or fit the model "
            "by MCMC (bj.fit).",
            SmallSampleWarning,
            stacklevel=2,
        )
    return PosteriorSummary(*(scalar_or_array(a) for a in (est, lower, upper, ess, used)))


def posterior_linear(test, calibration, weights, **options) -> EstimateInterval:
    """Posterior means and equal-tailed credible intervals of ``W θ`` (no diagnostics).

    Parameters
    ----------
    test, calibration, weights
        As for :func:`posterior_summary`.
    **options
        Those of :func:`posterior_summary`.

    Returns
    -------
    EstimateInterval
        Posterior mean, lower and upper limits, each (…, S).

    Examples
    --------
    >>> import numpy as np
    >>> ci = posterior_linear([30, 20, 50], [[80, 15, 5], [10, 80, 10], [5, 15, 80]],
    ...                       np.eye(3), random_seed=1)
    >>> ci.estimate.shape
    (3,)
    """
    return EstimateInterval(*posterior_summary(test, calibration, weights, **options)[:3])


def posterior_categorical(test, calibration, scores=None, **options) -> EstimateInterval:
    """Posterior mean and credible interval of every θ_k, or of a score Σ v_k θ_k.

    Parameters
    ----------
    test, calibration : array_like
        (…, K) and (…, K, K) counts (rows = truth).
    scores : array_like, optional
        (K,) or (…, K) category values; None gives every θ_k.
    **options
        Those of :func:`posterior_summary` (``alpha``, priors, ``draws``, ``random_seed``…).

    Returns
    -------
    EstimateInterval
        Each (…, K), or (…) with ``scores``.

    Examples
    --------
    >>> ci = posterior_categorical([30, 20, 50], [[80, 15, 5], [10, 80, 10], [5, 15, 80]],
    ...                            scores=[1, 0.5, 0], random_seed=1)
    >>> bool(ci.lower < ci.estimate < ci.upper)
    True
    """
    x, _c = check_categorical_counts(test, calibration)
    k = x.shape[-1]
    if scores is None:
        return posterior_linear(test, calibration, np.eye(k), **options)
    v = np.asarray(scores, dtype=float)
    if v.ndim < 1 or v.shape[-1] != k:
        raise ValueError(f"scores must hold one value per category (K = {k}); got {v.shape}.")
    res = posterior_linear(test, calibration, v[..., None, :], **options)
    return EstimateInterval(*(scalar_or_array(np.asarray(a)[..., 0]) for a in res))
