"""Several judges grading the same items: the Dawid–Skene latent-class model and agreement.

A test item's data is its *verdict pattern* across J judges (1 = judged correct, 0 = judged
incorrect, -1 = not judged). Given the truth t, the judges are conditionally independent with
q0_j = P(judge j says incorrect | t = 0) and q1_j = P(judge j says correct | t = 1), and
θ = P(t = 1) (Dawid & Skene 1979; Hui & Walter 1980). Human-labelled items add patterns of
known truth, which anchor the latent classes.

The data arrive as distinct patterns with counts: ``patterns`` (P, J), ``test`` (P,) and
``labelled`` (2, P) (row 0 truth incorrect, row 1 truth correct).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import expit, logit

from bayesjudge.core._results import EstimateInterval
from bayesjudge.core._validation import (
    MAX_COUNT,
    as_count,
    as_probability,
    check_alpha,
    check_design,
    check_em_options,
    check_resamples,
    check_seed,
    format_values,
    two_sided_z,
)
from bayesjudge.core.kernels import wilson_limits

__all__ = [
    "Agreement",
    "DawidSkeneResult",
    "JuryPlan",
    "cohen_kappa",
    "dawid_skene",
    "dawid_skene_interval",
    "dawid_skene_plan",
    "dawid_skene_unit_information",
    "gwet_ac1",
    "jury_log_likelihood",
    "majority_verdicts",
    "majority_vote",
    "pair_table",
    "pattern_log_likelihood",
    "planned_inverse",
]

#: Floor used only where a pattern has probability 0 under both truths (a pattern no item
#: shows, beside perfect judges): its posterior is then taken at parameters clipped to
#: [_EPS, 1 - _EPS] (crowd-kit's clip), the limit of a nearly perfect judge.
_EPS = 1e-10
_TIES = ("half", "incorrect", "correct")
_INTERVALS = ("wald", "bootstrap")


class DawidSkeneResult(NamedTuple):
    """EM estimate of the Dawid–Skene model (see :func:`dawid_skene`)."""

    theta: float
    q0: np.ndarray
    q1: np.ndarray
    posterior: np.ndarray
    log_likelihood: float
    n_iter: int
    converged: bool


class JuryPlan(NamedTuple):
    """Planned precision of the Dawid–Skene θ̂ (see :func:`dawid_skene_plan`)."""

    sd: np.ndarray
    width: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


class Agreement(NamedTuple):
    """A chance-corrected agreement coefficient with its standard error and Wald interval."""

    estimate: float
    se: float
    lower: float
    upper: float


# ----------------------------------------------------------------------------- validation


def _check_patterns(patterns) -> np.ndarray:
    arr = np.asarray(patterns)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(
            f"patterns must be a 2-D array (P patterns, J judges) with P >= 1 and J >= 1; got "
            f"shape {arr.shape}. Pass one row per distinct verdict pattern."
        )
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"patterns must hold the integers -1, 0, 1; got dtype {arr.dtype}.")
    bad = ~np.isin(arr, (-1, 0, 1))
    if bad.any():
        raise ValueError(
            f"patterns must hold 1 (judged correct), 0 (judged incorrect) or -1 (not judged); "
            f"got {format_values(arr[bad])}."
        )
    arr = arr.astype(np.int64)
    empty = np.flatnonzero((arr < 0).all(axis=1))
    if empty.size:
        raise ValueError(
            f"patterns rows {empty[:5].tolist()} have no verdict (all -1); drop them: an item no "
            f"judge graded carries no information."
        )
    if np.unique(arr, axis=0).shape[0] != arr.shape[0]:
        raise ValueError("patterns must have distinct rows; add up the counts of equal rows.")
    return arr


def _check_counts(patterns, test, labelled):
    """Validate patterns, test (P,) and labelled (2, P) counts; return int/float arrays."""
    v = _check_patterns(patterns)
    n_pat = v.shape[0]
    x = as_count("test", test)
    if x.shape != (n_pat,):
        raise ValueError(f"test must have shape ({n_pat},), one count per pattern; got {x.shape}.")
    if x.sum() < 1:
        raise ValueError("test must hold at least one item: θ is the share of the test items.")
    lab = np.zeros((2, n_pat)) if labelled is None else as_count("labelled", labelled)
    if lab.shape != (2, n_pat):
        raise ValueError(
            f"labelled must have shape (2, {n_pat}) (row 0: truth incorrect, row 1: truth "
            f"correct; one column per pattern); got {lab.shape}."
        )
    seen = (v >= 0).T @ (x + lab.sum(axis=0))
    unseen = np.flatnonzero(seen == 0)
    if unseen.size:
        raise ValueError(
            f"judge(s) {unseen.tolist()} (columns of patterns) graded no item: every item with a "
            f"count has -1 there. Drop these columns (their q0, q1 are not identified)."
        )
    return v, x, lab


def _check_q(name: str, q, n_judges: int) -> np.ndarray:
    q = as_probability(name, q)
    if q.shape != (n_judges,):
        raise ValueError(f"{name} must have shape ({n_judges},), one per judge; got {q.shape}.")
    return q


# ---------------------------------------------------------------------------- likelihood


def _log_pattern(v: np.ndarray, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """Log P(v | t) of shape (..., 2, P) for q0, q1 of shape (..., J); missing entries add 0."""
    q0, q1 = q0[..., None, :], q1[..., None, :]
    with np.errstate(divide="ignore"):
        ll0 = np.where(v == 0, np.log(q0), 0.0) + np.where(v == 1, np.log1p(-q0), 0.0)
        ll1 = np.where(v == 1, np.log(q1), 0.0) + np.where(v == 0, np.log1p(-q1), 0.0)
    return np.stack([ll0.sum(axis=-1), ll1.sum(axis=-1)], axis=-2)


def _weighted(count, value):
    """Count * value with 0 * (-inf) = 0 (a zero count of an impossible pattern)."""
    with np.errstate(invalid="ignore"):
        return np.where(count > 0, count * value, 0.0)


def _log_theta(theta):
    with np.errstate(divide="ignore"):
        return np.stack([np.log1p(-theta), np.log(theta)], axis=-1)


def _objective(ll, log_th, x, lab, random: bool):
    """Log-likelihood (no multinomial constants) from log P(v|t) (..., 2, P), log θ (..., 2)."""
    joint = ll + log_th[..., :, None]
    total = _weighted(x, np.logaddexp(joint[..., 0, :], joint[..., 1, :])).sum(axis=-1)
    return total + _weighted(lab, joint if random else ll).sum(axis=(-2, -1))


def pattern_log_likelihood(patterns, q0, q1) -> np.ndarray:
    """Log-probability of each verdict pattern given the truth, log P(v | t).

    Parameters
    ----------
    patterns : array_like of int, shape (P, J)
        Verdicts: 1 judged correct, 0 judged incorrect, -1 not judged (contributes nothing).
    q0, q1 : array_like, shape (J,)
        Each judge's P(says incorrect | truly incorrect) and P(says correct | truly correct).

    Returns
    -------
    numpy.ndarray, shape (2, P)
        Row t holds log P(v | t) = Σ_j log P(v_j | t) over the judges who graded the item;
        ``-inf`` where a perfect judge (q = 0 or 1) contradicts the pattern.

    Raises
    ------
    ValueError
        For patterns outside {-1, 0, 1}, a row with no verdict, or q0, q1 not proportions of
        shape (J,).

    Examples
    --------
    >>> from bayesjudge.core.jury import pattern_log_likelihood
    >>> ll = pattern_log_likelihood([[1, 1], [0, -1]], [0.8, 0.9], [0.7, 0.6])
    >>> np.exp(ll).round(3).tolist()
    [[0.02, 0.8], [0.42, 0.3]]
    """
    v = _check_patterns(patterns)
    q0 = _check_q("q0", q0, v.shape[1])
    q1 = _check_q("q1", q1, v.shape[1])
    return _log_pattern(v, q0, q1)


def jury_log_likelihood(patterns, test, labelled, theta, q0, q1, *, design="stratified") -> float:
    """Log-likelihood of the Dawid–Skene model for pattern counts, without multinomial constants.

    ``Σ_p test_p log(θ P(v_p|1) + (1-θ) P(v_p|0)) + Σ_{t,p} labelled_tp log P(v_p|t)``, plus
    ``Σ_{t,p} labelled_tp log P(t)`` (θ for t = 1, 1 - θ for t = 0) when ``design="random"``.
    The multinomial coefficients of the counts are left out: they do not depend on the
    parameters, so the value is the log-likelihood up to a constant.

    Parameters
    ----------
    patterns : array_like of int, shape (P, J)
        Distinct verdict patterns (1, 0, -1 for not judged).
    test : array_like, shape (P,)
        Unlabelled test items per pattern.
    labelled : array_like, shape (2, P) or None
        Human-labelled items per pattern, row 0 truth incorrect, row 1 truth correct.
    theta : float
        Share of truly correct items, in [0, 1].
    q0, q1 : array_like, shape (J,)
        The judges' specificities and sensitivities.
    design : {"stratified", "random"}, default "stratified"
        ``"random"``: the labelled items are a random subset of the test population, so their
        truths carry information on θ. ``"stratified"``: they do not.

    Returns
    -------
    float
        The log-likelihood (``-inf`` where a perfect judge contradicts an observed pattern).

    Examples
    --------
    >>> from bayesjudge.core.jury import jury_log_likelihood
    >>> pats = [[1, 1], [1, 0], [0, 1], [0, 0]]
    >>> round(jury_log_likelihood(pats, [40, 10, 8, 42], None, 0.5, [0.8, 0.9], [0.7, 0.8]), 4)
    -122.049
    """
    design = check_design(design, "design")
    v, x, lab = _check_counts(patterns, test, labelled)
    theta = float(as_probability("theta", theta))
    q0 = _check_q("q0", q0, v.shape[1])
    q1 = _check_q("q1", q1, v.shape[1])
    ll = _log_pattern(v, q0, q1)
    return float(_objective(ll, _log_theta(np.float64(theta)), x, lab, design == "random"))


# -------------------------------------------------------------------------------------- EM


def _m_step(v, x, lab, post, prev, smoothing: float, random: bool):
    """θ, q0, q1 (batched over the leading axis) from posteriors P(t=1 | v) of shape (B, P)."""
    w1 = x * post + lab[..., 1, :]
    w0 = x * (1.0 - post) + lab[..., 0, :]
    seen = (v >= 0).astype(float)
    num1 = w1 @ (v == 1).astype(float) + smoothing
    num0 = w0 @ (v == 0).astype(float) + smoothing
    den1 = w1 @ seen + 2 * smoothing
    den0 = w0 @ seen + 2 * smoothing
    # A judge with no weight in a class (e.g. θ* = 0 in a resample) keeps its previous value:
    # it does not enter the likelihood of any observed item then.
    q1 = np.where(den1 > 0, num1 / np.where(den1 > 0, den1, 1.0), prev[2])
    q0 = np.where(den0 > 0, num0 / np.where(den0 > 0, den0, 1.0), prev[1])
    known = lab[..., 1, :].sum(axis=-1) if random else 0.0
    size = x.sum(axis=-1) + (lab.sum(axis=(-2, -1)) if random else 0.0)
    theta = ((x * post).sum(axis=-1) + known) / size
    return theta, q0, q1


def _e_step(v, theta, q0, q1):
    """Posterior P(t = 1 | v) (B, P) and log P(v | t) (B, 2, P)."""
    ll = _log_pattern(v, q0, q1)
    joint = ll + _log_theta(theta)[..., :, None]
    with np.errstate(invalid="ignore"):
        post = np.exp(joint[..., 1, :] - np.logaddexp(joint[..., 0, :], joint[..., 1, :]))
    lost = np.isnan(post)  # impossible under both truths: only patterns without items
    if lost.any():
        clip = (np.clip(a, _EPS, 1 - _EPS) for a in (theta, q0, q1))
        post = np.where(lost, _e_step(v, *clip)[0], post)
    return post, ll


def _em(v, x, lab, post, *, random, smoothing, max_iter, tol):
    """Batched EM from posteriors ``post`` (B, P); returns the fit per batch element."""
    batch = post.shape[0]
    x = np.broadcast_to(x, (batch, v.shape[0]))
    lab = np.broadcast_to(lab, (batch, 2, v.shape[0]))
    half = np.full((batch, v.shape[1]), 0.5)
    params = _m_step(v, x, lab, post, (None, half, half), smoothing, random)
    n_iter = np.full(batch, max_iter)
    active = np.arange(batch)  # elements still iterating; converged ones are left alone
    for it in range(1, max_iter + 1):
        cur = tuple(a[active] for a in params)
        post, _ = _e_step(v, *cur)
        new = _m_step(v, x[active], lab[active], post, cur, smoothing, random)
        change = np.abs(new[0] - cur[0])
        for a, b in zip(new[1:], cur[1:], strict=True):
            change = np.maximum(change, np.abs(a - b).max(axis=-1))
        for a, b in zip(params, new, strict=True):
            a[active] = b
        done = change < tol
        n_iter[active[done]] = it
        active = active[~done]
        if active.size == 0:
            break
    post, ll = _e_step(v, *params)
    loglik = _objective(ll, _log_theta(params[0]), x, lab, random)
    converged = np.ones(batch, dtype=bool)
    converged[active] = False
    return params, post, loglik, n_iter, converged


def _vote_share(v: np.ndarray) -> np.ndarray:
    """Share of the judges who graded the pattern that call it correct (crowd-kit's init)."""
    return (v == 1).sum(axis=1) / (v >= 0).sum(axis=1)


def dawid_skene(
    patterns,
    test,
    labelled=None,
    *,
    design="stratified",
    max_iter=10_000,
    tol=1e-10,
    smoothing=0.0,
) -> DawidSkeneResult:
    """Dawid–Skene estimate of θ and of each judge's q0, q1 by EM, anchored by labelled items.

    Parameters
    ----------
    patterns : array_like of int, shape (P, J)
        Distinct verdict patterns: 1 judged correct, 0 judged incorrect, -1 not judged.
    test : array_like, shape (P,)
        Unlabelled test items per pattern (at least one item in all).
    labelled : array_like, shape (2, P), optional
        Human-labelled items per pattern; row 0 truth incorrect, row 1 truth correct. Their
        posterior is fixed at their truth.
    design : {"stratified", "random"}, default "stratified"
        ``"random"``: the labelled items are a random subset of the test population, so their
        truths count toward θ (θ̂ pools them with the test items' posteriors).
        ``"stratified"``: they were chosen per truth (or are a separate calibration set), so
        they inform q0, q1 only and θ̂ is the mean posterior of the test items.
    max_iter : int, default 10_000
        Most EM iterations.
    tol : float, default 1e-10
        Stop when no parameter (θ, q0_j, q1_j) moves by ``tol`` or more in one iteration.
    smoothing : float, default 0.0
        Pseudo-items ``s`` added to each verdict of each judge in each class: the posterior
        mode under independent Beta(1 + s, 1 + s) priors on every q0_j, q1_j (θ has a flat
        prior). The default 0 gives the maximum-likelihood estimate, which the Wald interval
        of :func:`dawid_skene_interval` and crowd-kit's ``DawidSkene`` assume.

    Returns
    -------
    DawidSkeneResult
        ``theta``, ``q0`` (J,), ``q1`` (J,), ``posterior`` (P,) = P(t = 1 | v) of a test item
        with each pattern, ``log_likelihood`` (:func:`jury_log_likelihood` at the estimate,
        without the smoothing prior), ``n_iter`` and ``converged``.

    Raises
    ------
    ValueError
        For malformed counts, a judge who graded no item (named by its column), fewer than 3
        judges without labelled items, or bad options.

    Notes
    -----
    EM starts like crowd-kit's ``DawidSkene``: the posterior of each pattern is the share of its
    judges calling it correct (so ties count ½), then alternates M-steps (weighted shares)
    and E-steps (Bayes' rule). The likelihood never decreases. Without labelled items the model
    is identified (with J >= 3 judges) only up to label switching: (θ, q0, q1) and
    (1 - θ, 1 - q1, 1 - q0) fit equally well; starting from the majority vote selects the mode
    where the judges are better than chance. With J = 1 and the stratified design the estimate
    is the Rogan–Gladen θ̂ = (p̂ + q̂0 − 1)/(q̂0 + q̂1 − 1) where that lies in (0, 1).

    Perfect judges put q on the boundary (q = 0 or 1): probabilities of 0 are handled in log
    space (0 · log 0 = 0), so no NaN arises; θ̂ may be 0 or 1.

    References
    ----------
    Dawid & Skene (1979), Appl. Statist. 28:20-28; Hui & Walter (1980), Biometrics 36:167-171.

    Examples
    --------
    >>> from bayesjudge.core.jury import dawid_skene
    >>> pats = [[1, 1, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1], [0, 0, 1], [0, 1, 0], [1, 0, 0],
    ...         [0, 0, 0]]
    >>> fit = dawid_skene(pats, [260, 30, 40, 45, 20, 25, 30, 150])
    >>> round(float(fit.theta), 3), fit.q1.round(2).tolist(), bool(fit.converged)
    (0.636, [0.86, 0.87, 0.91], True)
    """
    design = check_design(design, "design")
    v, x, lab = _check_counts(patterns, test, labelled)
    check_em_options(v, lab, smoothing, max_iter, tol)
    post = np.broadcast_to(_vote_share(v), (1, v.shape[0]))
    (theta, q0, q1), post, loglik, n_iter, conv = _em(
        v, x, lab, post, random=design == "random", smoothing=float(smoothing),
        max_iter=int(max_iter), tol=float(tol),
    )  # fmt: skip
    return DawidSkeneResult(
        theta[0], q0[0], q1[0], post[0], float(loglik[0]), int(n_iter[0]), bool(conv[0])
    )


# ------------------------------------------------------------------------------ intervals


def _information(v, x, lab, theta, q0, q1, *, random: bool, smoothing: float):
    """Observed information of (logit θ, logit q0_j, logit q1_j), order [θ, q0…, q1…]."""
    n_pat, n_judges = v.shape
    seen = (v >= 0).astype(float)
    post, _ = _e_step(v, theta, q0, q1)
    r = np.stack([1.0 - post, post])  # (2, P)
    # Scores G_t and Hessians H_t of log θ_t + log P(v | t) for each truth t (Louis 1982).
    grad = np.zeros((2, n_pat, 1 + 2 * n_judges))
    grad[0, :, 0], grad[1, :, 0] = -theta, 1.0 - theta
    grad[0, :, 1 : 1 + n_judges] = seen * ((v == 0) - q0)
    grad[1, :, 1 + n_judges :] = seen * ((v == 1) - q1)
    curv = np.zeros((2, n_pat, 1 + 2 * n_judges))  # diagonal Hessians
    curv[:, :, 0] = -theta * (1.0 - theta)
    curv[0, :, 1 : 1 + n_judges] = -seen * q0 * (1.0 - q0)
    curv[1, :, 1 + n_judges :] = -seen * q1 * (1.0 - q1)
    mean = np.einsum("tp,tpd->pd", r, grad)
    outer = np.einsum("tp,tpd,tpe->pde", r, grad, grad) - np.einsum("pd,pe->pde", mean, mean)
    hess = np.einsum("p,pde->de", x, outer) + np.diag(np.einsum("p,tpd->d", x, r[..., None] * curv))
    if not random:  # labelled truths carry no information on θ
        curv[:, :, 0] = 0.0
    hess += np.diag(np.einsum("tp,tpd->d", lab, curv))
    q = np.concatenate([q0, q1])
    hess[1:, 1:] -= np.diag(2.0 * smoothing * q * (1.0 - q))
    return -hess


def _wald(v, x, lab, fit, alpha, *, random, smoothing):
    """Wald interval of θ on the logit scale; boundary rules as in dawid_skene_interval."""
    theta = float(fit.theta)
    z = two_sided_z(alpha)
    if min(theta, 1.0 - theta) < 1e-8:
        # Logit θ̂ is infinite: use the exact binomial limit for 0 (or n) of n items.
        size = x.sum() + (lab.sum() if random else 0.0)
        edge = (alpha / 2.0) ** (1.0 / size)
        return (0.0, 1.0 - edge) if theta < 0.5 else (edge, 1.0)
    info = _information(v, x, lab, theta, fit.q0, fit.q1, random=random, smoothing=smoothing)
    q = np.concatenate([fit.q0, fit.q1])
    free = np.concatenate([[True], np.minimum(q, 1.0 - q) >= 1e-8])  # boundary q held fixed
    info = info[np.ix_(free, free)]
    with np.errstate(all="ignore"):
        try:
            var = np.linalg.inv(info)[0, 0]
        except np.linalg.LinAlgError:
            var = np.inf
    if not (np.isfinite(var) and var > 0):
        return 0.0, 1.0
    centre, half = logit(theta), z * np.sqrt(var)
    return float(expit(centre - half)), float(expit(centre + half))


def _resample(rng, x, lab, n_resamples, random: bool):
    """Multinomial resamples of the test counts and (per truth, or jointly) labelled counts."""
    xs = rng.multinomial(int(x.sum()), x / x.sum(), size=n_resamples).astype(float)
    labs = np.zeros((n_resamples, *lab.shape))
    if random and lab.sum() > 0:
        cells = rng.multinomial(int(lab.sum()), lab.ravel() / lab.sum(), size=n_resamples)
        labs = cells.reshape(n_resamples, *lab.shape).astype(float)
    elif not random:
        for t in (0, 1):
            if lab[t].sum() > 0:
                labs[:, t] = rng.multinomial(int(lab[t].sum()), lab[t] / lab[t].sum(), n_resamples)
    return xs, labs


def dawid_skene_interval(
    patterns,
    test,
    labelled=None,
    *,
    design="stratified",
    alpha=0.05,
    method="wald",
    n_resamples=2_000,
    random_seed=None,
    smoothing=0.0,
    max_iter=10_000,
    tol=1e-10,
    fit=None,
) -> EstimateInterval:
    """Dawid–Skene θ̂ with a Wald (logit scale) or percentile-bootstrap interval.

    Parameters
    ----------
    patterns, test, labelled, design, smoothing, max_iter, tol
        As in :func:`dawid_skene`.
    alpha : float, default 0.05
        Miscoverage level in (0, 1).
    method : {"wald", "bootstrap"}, default "wald"
        ``"wald"``: logit θ̂ ± z·SE, SE from the inverse observed information of the full
        marginal likelihood over (logit θ, logit q0_j, logit q1_j) (analytic, Louis' identity).
        ``"bootstrap"``: resample items (multinomial on the test counts, and on the labelled
        counts, per truth for ``"stratified"``, jointly for ``"random"``), refit by EM
        started from the estimate's posteriors, and take the percentile interval.
    n_resamples : int, default 2_000
        Bootstrap resamples (at least 100; ``method="bootstrap"`` only). Each is refitted
        from the estimate's posteriors with tolerance ``max(tol, 1e-6)``.
    random_seed : int, numpy.random.Generator or None
        Seed of the bootstrap.
    fit : DawidSkeneResult, optional
        :func:`dawid_skene` of these same counts, design and smoothing, reused instead of
        fitting again (a caller that also needs q0, q1 fits once).

    Returns
    -------
    EstimateInterval
        ``(estimate, lower, upper)`` of θ.

    Raises
    ------
    ValueError
        As :func:`dawid_skene`, and for a bad ``alpha``, ``method``, ``n_resamples`` or seed.

    Notes
    -----
    Boundary rules of the Wald interval: a q̂ within 1e-8 of 0 or 1 (a judge without errors in
    a class) is held fixed (its logit is infinite and its score zero), so its row and column
    leave the information matrix. When θ̂ is within 1e-8 of 0 (or 1) logit θ̂ is infinite;
    the interval is then the exact binomial one for 0 of n (n of n) items,
    [0, 1 − (α/2)^(1/n)] (or [(α/2)^(1/n), 1]), n the items informing θ. A singular
    information matrix (a not identified model) gives [0, 1].

    Coverage of the 95% intervals, measured (``tests/core/test_jury_slow.py``): three judges
    with q0 = (0.80, 0.85, 0.90), q1 = (0.70, 0.90, 0.90) (J = 0.50, 0.75, 0.80), 500 test
    items, 40 + 40 stratified labelled items, seed 20251127. Wald, 1000 replications per θ:
    0.938 (θ = 0.3) and 0.950 (θ = 0.7), MC-SE 0.007. Percentile bootstrap (2000 resamples),
    the first 200 of those data sets: 0.950 and 0.965 (MC-SE 0.015); two other runs of 300
    replications gave 0.943 and 0.950, and (1000 resamples) 0.917 and 0.937. Mean widths
    0.109-0.111 for both methods.

    Examples
    --------
    >>> from bayesjudge.core.jury import dawid_skene_interval
    >>> pats = [[1, 1, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1], [0, 0, 1], [0, 1, 0], [1, 0, 0],
    ...         [0, 0, 0]]
    >>> est, lo, hi = dawid_skene_interval(pats, [260, 30, 40, 45, 20, 25, 30, 150])
    >>> print(f"{est:.3f} ({lo:.3f}, {hi:.3f})")
    0.636 (0.588, 0.683)
    """
    alpha = check_alpha(alpha)
    if method not in _INTERVALS:
        raise ValueError(f"method must be 'wald' or 'bootstrap'; got {method!r}.")
    if fit is None:
        fit = dawid_skene(
            patterns, test, labelled, design=design, max_iter=max_iter, tol=tol,
            smoothing=smoothing,
        )  # fmt: skip
    v, x, lab = _check_counts(patterns, test, labelled)
    if not isinstance(fit, DawidSkeneResult) or np.shape(fit.posterior) != (v.shape[0],):
        raise ValueError(
            "fit must be the DawidSkeneResult of dawid_skene on these same patterns; got "
            f"{type(fit).__name__}."
        )
    random = design == "random"
    if method == "wald":
        lower, upper = _wald(v, x, lab, fit, alpha, random=random, smoothing=float(smoothing))
        return EstimateInterval(fit.theta, np.float64(lower), np.float64(upper))
    n_resamples = check_resamples(n_resamples, "dawid_skene_interval", alpha)
    rng = np.random.default_rng(check_seed(random_seed))
    xs, labs = _resample(rng, x, lab, n_resamples, random)
    start = np.broadcast_to(fit.posterior, (n_resamples, v.shape[0]))
    # Replicates need no more digits than their Monte Carlo error (about 1e-3) can show, and
    # a few resamples near a boundary converge slowly: 1e-6 makes the bootstrap 3-4x faster.
    (thetas, _, _), *_ = _em(
        v, xs, labs, start, random=random, smoothing=float(smoothing), max_iter=int(max_iter),
        tol=max(float(tol), 1e-6),
    )  # fmt: skip
    lower, upper = np.quantile(thetas, [alpha / 2.0, 1.0 - alpha / 2.0])
    return EstimateInterval(fit.theta, np.float64(lower), np.float64(upper))


# ------------------------------------------------------------------------------ planning

#: Complete patterns are enumerated (2**J of them) to take expectations exactly.
MAX_PLANNED_JUDGES = 16


def _complete_patterns(n_judges: int) -> np.ndarray:
    """Every complete verdict pattern of ``n_judges`` judges, (2**J, J) of 1 and 0."""
    grid = (np.arange(2**n_judges)[:, None] >> np.arange(n_judges)[::-1]) & 1
    return (1 - grid).astype(np.int64)


def dawid_skene_unit_information(theta, q0, q1, *, design="stratified") -> np.ndarray:
    """Return the expected Fisher information of a test item and of a labelled item per truth.

    The parameters are ordered ``[logit θ, logit q0_1 … logit q0_J, logit q1_1 … logit
    q1_J]``, as in the Wald interval of :func:`dawid_skene_interval`. The information of a
    data set with ``n`` test items and ``m0``, ``m1`` labelled items of each truth is
    ``n·I[0] + m0·I[1] + m1·I[2]``; its inverse is the asymptotic covariance of the
    maximum-likelihood estimate.

    Parameters
    ----------
    theta : float
        Share truly correct, in (0, 1).
    q0, q1 : array_like, shape (J,)
        The judges' specificities and sensitivities, each in (0, 1).
    design : {"stratified", "random"}, default "stratified"
        ``"random"``: a labelled item's truth also informs θ.

    Returns
    -------
    numpy.ndarray, shape (3, 1 + 2J, 1 + 2J)
        The information of a test item, a labelled truly incorrect and a labelled truly
        correct item.

    Notes
    -----
    The expectation runs over all ``2**J`` complete patterns (every judge grades every item).
    It is the observed information of :func:`dawid_skene_interval` evaluated at the expected
    counts: for a multinomial the two agree there, because the probabilities of all patterns
    sum to one at every parameter value, so the curvature term of the observed information
    has expectation zero.

    Examples
    --------
    >>> from bayesjudge.core.jury import dawid_skene_unit_information
    >>> info = dawid_skene_unit_information(0.4, [0.8], [0.9])
    >>> info.shape
    (3, 3, 3)
    """
    design = check_design(design, "design")
    theta = float(as_probability("theta", theta))
    q0 = np.atleast_1d(np.asarray(q0, dtype=float))
    n_judges = q0.size
    if not 1 <= n_judges <= MAX_PLANNED_JUDGES:
        raise ValueError(
            f"Planning enumerates the 2**J verdict patterns: it takes 1 to "
            f"{MAX_PLANNED_JUDGES} judges; got {n_judges}."
        )
    q0 = _check_q("q0", q0, n_judges)
    q1 = _check_q("q1", q1, n_judges)
    interior = [
        name
        for name, value in (("theta", np.array([theta])), ("q0", q0), ("q1", q1))
        if (np.minimum(value, 1.0 - value) <= 0).any()
    ]
    if interior:
        raise ValueError(
            f"Planning needs every parameter strictly between 0 and 1 (a logit must be "
            f"finite); {interior} hold 0 or 1. Plan with smoothed estimates, e.g. "
            f"dawid_skene(..., smoothing=0.5)."
        )
    v = _complete_patterns(n_judges)
    prob = np.exp(_log_pattern(v, q0, q1))  # (2, P)
    marginal = theta * prob[1] + (1.0 - theta) * prob[0]
    zero_lab = np.zeros((2, v.shape[0]))
    random = design == "random"
    out = np.empty((3, 1 + 2 * n_judges, 1 + 2 * n_judges))
    out[0] = _information(v, marginal, zero_lab, theta, q0, q1, random=random, smoothing=0.0)
    for t in (0, 1):
        lab = zero_lab.copy()
        lab[t] = prob[t]
        out[1 + t] = _information(
            v, np.zeros(v.shape[0]), lab, theta, q0, q1, random=random, smoothing=0.0
        )
    return out


def planned_inverse(n, unit, m, size):
    """Leading block of the inverse of ``n·unit[0] + Σ_t m_t·unit[1 + t]``, stable for any n.

    The information of a planned data set is a sum whose parts differ in scale by the ratio of
    test items to labels: with ``n`` far above the labels (10^15 test items beside 30 labels)
    its condition number passes any fixed bound although it is invertible, and a plain inverse
    loses the labels' part in rounding. The sum is therefore inverted in the eigenbasis of
    ``unit[0]``, where the test items' part is diagonal: a direction the test items do not
    inform (an eigenvalue at rounding level, ``D·eps`` of the largest, set to 0: the model
    leaves it unidentified from test items alone) keeps only the labels' information. The
    rotated sum is scaled to unit diagonal (Jacobi) and called singular where the smallest
    eigenvalue of the scaled matrix is below 1e-12 of the largest, a test of identification
    that does not depend on the scale of n.

    Parameters
    ----------
    n : float
        Test items (non-negative).
    unit : numpy.ndarray, shape (1 + T, D, D)
        The expected information of one test item, then of one labelled item of each of the
        T truths (symmetric, positive semi-definite).
    m : numpy.ndarray, shape (..., T)
        Labelled items of each truth, per planned budget and split.
    size : int
        How many leading parameters' block of the inverse is wanted.

    Returns
    -------
    cov : numpy.ndarray, shape (..., size, size)
        The leading block of the inverse (the identity where singular: use ``ok``).
    ok : numpy.ndarray of bool, shape (...)
        Whether the sum is invertible (the parameters identified).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesjudge.core.jury import planned_inverse
    >>> unit = np.stack([np.ones((2, 2)), np.eye(2)])  # a test item informs only the sum
    >>> cov, ok = planned_inverse(1e15, unit, [1.0], 1)
    >>> print(f"{float(cov[0, 0]):.4f} {bool(ok)}")
    0.5000 True
    """
    unit = np.asarray(unit, dtype=float)
    m = np.asarray(m, dtype=float)
    dim = unit.shape[-1]
    s, u = np.linalg.eigh(unit[0])
    s = np.where(s > dim * np.finfo(float).eps * float(np.abs(s).max()), s, 0.0)
    # Rotating each truth's unit once keeps the cost per budget and split that of a sum.
    rotated = np.einsum("...t,tde->...de", m, u.T @ unit[1:] @ u) + np.diag(float(n) * s)
    diag = np.diagonal(rotated, axis1=-2, axis2=-1)
    ok = (diag > 0).all(axis=-1)
    d = 1.0 / np.sqrt(np.where(diag > 0, diag, 1.0))
    scaled = d[..., :, None] * rotated * d[..., None, :]
    with np.errstate(all="ignore"):
        eig = np.linalg.eigvalsh(scaled)
    ok = ok & (eig[..., 0] > 1e-12 * eig[..., -1])
    safe = np.where(ok[..., None, None], scaled, np.eye(dim))
    b = d[..., :, None] * u[:size, :].T  # D·Uᵀ·E: the wanted columns in the scaled basis
    cov = np.swapaxes(b, -1, -2) @ np.linalg.solve(safe, b)
    return np.where(ok[..., None, None], cov, np.eye(size)), ok


def dawid_skene_plan(theta, q0, q1, n, m0, m1, *, alpha=0.05, design="stratified") -> JuryPlan:
    """Planned standard error and Wald interval width of the Dawid–Skene θ̂ for a label budget.

    Parameters
    ----------
    theta, q0, q1, design
        As in :func:`dawid_skene_unit_information` (the values the plan assumes, e.g. the
        estimates of a pilot).
    n : float
        Unlabelled test items.
    m0, m1 : array_like
        Labelled truly incorrect and truly correct items; broadcast against each other (a grid
        of label budgets and splits in one call).
    alpha : float, default 0.05
        One minus the interval's coverage probability.

    Returns
    -------
    JuryPlan
        ``sd`` (asymptotic standard error of θ̂, delta method from the logit scale),
        ``width`` (expected width of the Wald interval of :func:`dawid_skene_interval`,
        ``upper - lower``) and its limits around θ, each of the broadcast shape of m0, m1.
        Where the information is singular (not identified, e.g. two judges and no labels),
        sd and width are ``inf`` and the limits 0 and 1.

    Notes
    -----
    The plan is asymptotic: it is what the Wald interval's width converges to. How well the
    interval covers at a given size is an empirical question, measured in the jury study
    (``docs/studies.md``: 0.933–0.960 with three judges, 500 test items and 20–80 labels per
    truth). With a single judge the planned variance equals the delta-method variance of
    the Rogan–Gladen estimate, ``[p(1-p)/n + (1-θ)² q0(1-q0)/m0 + θ² q1(1-q1)/m1] / J²``.

    Examples
    --------
    >>> from bayesjudge.core.jury import dawid_skene_plan
    >>> one = dawid_skene_plan(0.4, [0.8], [0.9], 1000, 50, 50)
    >>> three = dawid_skene_plan(0.4, [0.8, 0.8, 0.8], [0.9, 0.9, 0.9], 1000, 50, 50)
    >>> print(f"{float(one.width):.3f} {float(three.width):.3f}")
    0.226 0.085
    """
    alpha = check_alpha(alpha)
    m0, m1 = np.broadcast_arrays(np.asarray(m0, dtype=float), np.asarray(m1, dtype=float))
    for name, value in (("n", np.asarray(n, dtype=float)), ("m0", m0), ("m1", m1)):
        if not np.all(np.isfinite(value) & (value >= 0)):
            raise ValueError(f"{name} must be finite and non-negative; got {value!r}.")
    if float(n) > MAX_COUNT:
        raise ValueError(
            f"n must be at most 2**53 = {MAX_COUNT} test items (counts above it are not exact "
            f"in float64); got {n!r}."
        )
    unit = dawid_skene_unit_information(theta, q0, q1, design=design)
    cov, ok = planned_inverse(float(n), unit, np.stack([m0, m1], axis=-1), 1)
    var = np.where(ok & (cov[..., 0, 0] > 0), cov[..., 0, 0], np.inf)
    theta = float(theta)
    half = two_sided_z(alpha) * np.sqrt(var)
    centre = logit(theta)
    lower = np.where(np.isfinite(half), expit(centre - half), 0.0)
    upper = np.where(np.isfinite(half), expit(centre + half), 1.0)
    sd = theta * (1.0 - theta) * np.sqrt(var)
    return JuryPlan(sd, upper - lower, lower, upper)


# ------------------------------------------------------------------------- majority vote


def majority_verdicts(patterns, *, ties="half") -> np.ndarray:
    """Majority verdict of each pattern over the judges who graded it.

    Parameters
    ----------
    patterns : array_like of int, shape (P, J)
        Verdicts (1, 0, -1 for not judged).
    ties : {"half", "incorrect", "correct"}, default "half"
        Verdict of a tied pattern: ½, 0 or 1.

    Returns
    -------
    numpy.ndarray of float, shape (P,)
        1 where most judges call the item correct, 0 where most call it incorrect.

    Examples
    --------
    >>> from bayesjudge.core.jury import majority_verdicts
    >>> majority_verdicts([[1, 1, 0], [1, 0, -1], [0, 0, 1]]).tolist()
    [1.0, 0.5, 0.0]
    """
    if ties not in _TIES:
        raise ValueError(f"ties must be one of {_TIES}; got {ties!r}.")
    v = _check_patterns(patterns)
    margin = (v == 1).sum(axis=1) - (v == 0).sum(axis=1)
    tie = {"half": 0.5, "incorrect": 0.0, "correct": 1.0}[ties]
    return np.where(margin > 0, 1.0, np.where(margin < 0, 0.0, tie))


def majority_vote(patterns, test, *, ties="half", alpha=0.05) -> EstimateInterval:
    """Naive jury estimate: the share of test items the majority calls correct, Wilson interval.

    Like :func:`bayesjudge.core.naive.naive` for one judge, it estimates
    P(majority says correct), not θ: biased unless the majority vote is error-free.

    Parameters
    ----------
    patterns : array_like of int, shape (P, J)
        Distinct verdict patterns (1, 0, -1 for not judged).
    test : array_like, shape (P,)
        Test items per pattern (at least one in all).
    ties : {"half", "incorrect", "correct"}, default "half"
        A tied item counts ½, 0 or 1 (see :func:`majority_verdicts`).
    alpha : float, default 0.05
        Miscoverage level of the Wilson interval (with ties counting ½, k may be a half-integer).

    Returns
    -------
    EstimateInterval
        ``(estimate, lower, upper)``.

    Examples
    --------
    >>> from bayesjudge.core.jury import majority_vote
    >>> est, lo, hi = majority_vote([[1, 1, 0], [1, 0, -1], [0, 0, 1]], [50, 10, 40])
    >>> print(f"{est:.3f} ({lo:.4f}, {hi:.4f})")
    0.550 (0.4524, 0.6439)
    """
    alpha = check_alpha(alpha)
    verdicts = majority_verdicts(patterns, ties=ties)
    x = as_count("test", test)
    if x.shape != verdicts.shape or x.sum() < 1:
        raise ValueError(
            f"test must have shape {verdicts.shape} (one count per pattern) and hold at least one "
            f"item; got shape {x.shape} and {x.sum():g} items."
        )
    k, n = float(x @ verdicts), float(x.sum())
    lower, upper = wilson_limits(k, n, two_sided_z(alpha))
    lower = 0.0 if k == 0 else float(np.clip(lower, 0.0, 1.0))
    upper = 1.0 if k == n else float(np.clip(upper, 0.0, 1.0))
    return EstimateInterval(np.float64(k / n), np.float64(lower), np.float64(upper))


# ----------------------------------------------------------------------------- agreement


def pair_table(patterns, counts, a: int, b: int) -> np.ndarray:
    """2×2 table of judges ``a`` (rows) and ``b`` (columns) over the items both graded.

    Examples
    --------
    >>> from bayesjudge.core.jury import pair_table
    >>> pair_table([[1, 1, 0], [1, 0, -1], [0, 0, 1]], [50, 10, 40], 0, 2).tolist()
    [[0, 40], [50, 0]]
    """
    v = _check_patterns(patterns)
    c = as_count("counts", counts)
    if c.shape != (v.shape[0],):
        raise ValueError(f"counts must have shape ({v.shape[0]},); got {c.shape}.")
    for name, j in (("a", a), ("b", b)):
        if not isinstance(j, int | np.integer) or not 0 <= j < v.shape[1]:
            raise ValueError(f"{name} must be a judge index in 0..{v.shape[1] - 1}; got {j!r}.")
    table = np.zeros((2, 2), dtype=np.int64)
    both = (v[:, a] >= 0) & (v[:, b] >= 0)
    np.add.at(table, (v[both, a], v[both, b]), c[both].astype(np.int64))
    return table


def _check_table(table) -> np.ndarray:
    t = as_count("table", table)
    if t.ndim != 2 or t.shape[0] != t.shape[1] or t.shape[0] < 2:
        raise ValueError(f"table must be a square K×K table with K >= 2; got shape {t.shape}.")
    if t.sum() < 1:
        raise ValueError("table must hold at least one item.")
    return t


def _agreement(estimate, var, alpha) -> Agreement:
    se = float(np.sqrt(max(var, 0.0)))
    z = two_sided_z(check_alpha(alpha))
    lower, upper = max(estimate - z * se, -1.0), min(estimate + z * se, 1.0)
    return Agreement(float(estimate), se, float(lower), float(upper))


def cohen_kappa(table, *, alpha=0.05) -> Agreement:
    """Cohen's κ of two raters with the large-sample SE of Fleiss, Cohen & Everitt (1969).

    Parameters
    ----------
    table : array_like, shape (K, K)
        Counts, rows rater a's category, columns rater b's.
    alpha : float, default 0.05
        Miscoverage of the Wald interval κ̂ ± z·SE (clipped to [-1, 1]).

    Returns
    -------
    Agreement
        ``(estimate, se, lower, upper)``.

    Raises
    ------
    ValueError
        For a malformed table, or chance agreement p_e = 1 (both raters always use one and the
        same category), where κ is undefined.

    Notes
    -----
    The non-null variance that ``statsmodels.stats.inter_rater.cohens_kappa`` reports as
    ``std_kappa``::

        Var(κ̂) = [Σ_i p_ii ((1 − p_e) − (p_i· + p_·i)(1 − p_o))² + (1 − p_o)² Σ_{i≠j} p_ij
                  (p_·i + p_j·)² − (p_o p_e − 2 p_e + p_o)²] / (n (1 − p_e)⁴)

    Examples
    --------
    >>> from bayesjudge.core.jury import cohen_kappa
    >>> k = cohen_kappa([[40, 10], [5, 45]])
    >>> print(f"{k.estimate:.3f} se {k.se:.4f}")
    0.700 se 0.0711
    """
    t = _check_table(table)
    n = t.sum()
    p = t / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    po, pe = np.trace(p), float(rows @ cols)
    if pe >= 1.0:
        raise ValueError(
            "cohen_kappa is undefined when both raters put every item in the same single "
            "category (chance agreement 1); report the raw agreement instead."
        )
    kappa = (po - pe) / (1.0 - pe)
    diag = np.diag(p) @ ((1.0 - pe) - (rows + cols) * (1.0 - po)) ** 2
    off = p * (cols[:, None] + rows[None, :]) ** 2
    off = (1.0 - po) ** 2 * (off.sum() - np.trace(off))
    var = (diag + off - (po * pe - 2.0 * pe + po) ** 2) / (n * (1.0 - pe) ** 4)
    return _agreement(kappa, var, alpha)


def gwet_ac1(table, *, alpha=0.05) -> Agreement:
    """Gwet's AC1 of two raters with Gwet's (2008) variance.

    Parameters
    ----------
    table : array_like, shape (K, K)
        Counts, rows rater a's category, columns rater b's.
    alpha : float, default 0.05
        Miscoverage of the Wald interval AC1 ± z·SE (clipped to [-1, 1]).

    Returns
    -------
    Agreement
        ``(estimate, se, lower, upper)``.

    Notes
    -----
    Definitions, and the variance (Gwet 2008, eq. 26 with no finite-population correction)::

        π_k = (p_k· + p_·k)/2,  p_e = Σ_k π_k (1 − π_k)/(K − 1),  AC1 = (p_a − p_e)/(1 − p_e)
        Var = [p_a(1 − p_a) − 4(1 − AC1)(Σ_k p_kk (1 − π_k)/(K − 1) − p_a p_e)
               + 4(1 − AC1)² (Σ_kl p_kl (1 − (π_k + π_l)/2)²/(K − 1)² − p_e²)] / (n (1 − p_e)²)

    Unlike κ, AC1 stays high when both raters agree on a rare category being rare.

    References
    ----------
    Gwet (2008), Br. J. Math. Stat. Psychol. 61:29-48.

    Examples
    --------
    >>> from bayesjudge.core.jury import gwet_ac1
    >>> a = gwet_ac1([[118, 5], [2, 0]])
    >>> print(f"{a.estimate:.4f} se {a.se:.4f}")
    0.9408 se 0.0230
    """
    t = _check_table(table)
    n, k = t.sum(), t.shape[0]
    p = t / n
    pi = (p.sum(axis=1) + p.sum(axis=0)) / 2.0
    pa = np.trace(p)
    pe = float(pi @ (1.0 - pi)) / (k - 1)
    ac1 = (pa - pe) / (1.0 - pe)
    term2 = np.diag(p) @ (1.0 - pi) / (k - 1) - pa * pe
    term3 = (p * (1.0 - (pi[:, None] + pi[None, :]) / 2.0) ** 2).sum() / (k - 1) ** 2 - pe**2
    var = (pa * (1 - pa) - 4 * (1 - ac1) * term2 + 4 * (1 - ac1) ** 2 * term3) / (n * (1 - pe) ** 2)
    return _agreement(ac1, var, alpha)
