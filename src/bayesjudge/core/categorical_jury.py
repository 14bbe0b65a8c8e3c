"""Several judges with K-category verdicts: the K-class Dawid–Skene model and the plurality vote.

A test item's data is its *verdict pattern* across J judges: the category index 0..K-1 each
judge gave, or -1 where a judge gave none. Given the true category k, the judges are
conditionally independent with confusion matrices ``confusion[j, k, c]`` = P(judge j says c |
truth k) (rows = truth, columns = verdict, rows summing to 1), and ``pi[k]`` = θ_k, the share
of test items truly in category k (Dawid & Skene 1979). Human-labelled items add patterns of
known truth, which anchor the latent classes.

The data arrive as distinct patterns with counts: ``patterns`` (P, J), ``test`` (P,) and
``labelled`` (K, P) (row k: items humans put in category k). With K = 2 every function here
reduces to its binary counterpart in :mod:`bayesjudge.core.jury` (θ = ``pi[1]``,
q0 = ``confusion[:, 0, 0]``, q1 = ``confusion[:, 1, 1]``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import expit, logit

from bayesjudge.core._validation import (
    MAX_COUNT,
    as_count,
    check_alpha,
    check_design,
    check_em_options,
    check_resamples,
    check_seed,
    format_values,
    is_real_number,
    two_sided_z,
)
from bayesjudge.core.jury import planned_inverse
from bayesjudge.core.kernels import wilson_limits

__all__ = [
    "MAX_PLANNED_PATTERNS",
    "CategoricalDawidSkeneResult",
    "CategoricalJuryInterval",
    "CategoricalJuryPlan",
    "categorical_dawid_skene",
    "categorical_dawid_skene_information",
    "categorical_dawid_skene_interval",
    "categorical_dawid_skene_plan",
    "categorical_dawid_skene_unit_information",
    "categorical_jury_log_likelihood",
    "categorical_pattern_log_likelihood",
    "plurality_verdicts",
    "plurality_vote",
]

#: Floor used only where a pattern has probability 0 under every truth (a pattern no item
#: shows, beside perfect judges): its posterior is then taken at parameters clipped to
#: [_EPS, 1 - _EPS] (crowd-kit's clip), the limit of a nearly perfect judge.
_EPS = 1e-10
#: A share or confusion entry this close to 0 is on the boundary: held fixed by the Wald
#: interval (its log-odds is infinite), as core.jury does for q within 1e-8 of 0 or 1.
_EDGE = 1e-8
_INTERVALS = ("wald", "bootstrap")
_MAX_K = 36


class CategoricalDawidSkeneResult(NamedTuple):
    """EM estimate of the K-class Dawid–Skene model (see :func:`categorical_dawid_skene`)."""

    pi: np.ndarray
    confusion: np.ndarray
    posterior: np.ndarray
    log_likelihood: float
    n_iter: int
    converged: bool


class CategoricalJuryInterval(NamedTuple):
    """Per-category estimates with intervals and, given scores, the mean score's.

    ``estimate``, ``lower``, ``upper`` have shape (K,); ``score``, ``score_lower`` and
    ``score_upper`` are floats, NaN when no scores were given.
    """

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    score: float
    score_lower: float
    score_upper: float


class CategoricalJuryPlan(NamedTuple):
    """Planned precision of the K-class Dawid–Skene π̂ (see :func:`categorical_dawid_skene_plan`).

    ``sd``, ``width``, ``lower``, ``upper`` have shape (..., K); the ``score_`` fields shape
    (...), NaN without scores.
    """

    sd: np.ndarray
    width: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    score_sd: np.ndarray
    score_width: np.ndarray
    score_lower: np.ndarray
    score_upper: np.ndarray


# ----------------------------------------------------------------------------- validation


def _check_patterns(patterns, n_categories: int) -> np.ndarray:
    arr = np.asarray(patterns)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(
            f"patterns must be a 2-D array (P patterns, J judges) with P >= 1 and J >= 1; got "
            f"shape {arr.shape}. Pass one row per distinct verdict pattern."
        )
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(
            f"patterns must hold integer category codes 0..K-1 (or -1); got dtype {arr.dtype}."
        )
    bad = ~np.isin(arr, np.arange(-1, n_categories))
    if bad.any():
        raise ValueError(
            f"patterns must hold category codes 0..{n_categories - 1} (K = {n_categories}) or "
            f"-1 for no verdict; got {format_values(arr[bad])}. Check the number of categories "
            f"(the rows of labelled) and the coding of the verdicts."
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


def _check_k(n_categories) -> int:
    ok = isinstance(n_categories, int | np.integer) and not isinstance(n_categories, bool)
    if not ok or not 2 <= n_categories <= _MAX_K:
        raise ValueError(
            f"n_categories must be a whole number in 2..{_MAX_K}; got {n_categories!r}."
        )
    return int(n_categories)


def _check_counts(patterns, test, labelled, n_categories=None):
    """Validate patterns (P, J), test (P,) and labelled (K, P); return v, x, lab, K."""
    if labelled is None:
        if n_categories is None:
            raise ValueError(
                "labelled is None, so the number of categories is unknown: pass n_categories=K "
                "(or labelled counts of shape (K, P), zeros where no item was labelled)."
            )
        k = _check_k(n_categories)
    else:
        lab = as_count("labelled", labelled)
        if lab.ndim != 2:
            raise ValueError(
                f"labelled must have shape (K, P): one row per true category, one column per "
                f"pattern; got shape {lab.shape}."
            )
        k = _check_k(lab.shape[0]) if n_categories is None else _check_k(n_categories)
    v = _check_patterns(patterns, k)
    n_pat = v.shape[0]
    x = as_count("test", test)
    if x.shape != (n_pat,):
        raise ValueError(f"test must have shape ({n_pat},), one count per pattern; got {x.shape}.")
    if x.sum() < 1:
        raise ValueError("test must hold at least one item: θ is the share of the test items.")
    lab = np.zeros((k, n_pat)) if labelled is None else lab
    if lab.shape != (k, n_pat):
        raise ValueError(
            f"labelled must have shape ({k}, {n_pat}) (row k: items humans put in category k; "
            f"one column per pattern); got {lab.shape}."
        )
    seen = (v >= 0).T @ (x + lab.sum(axis=0))
    unseen = np.flatnonzero(seen == 0)
    if unseen.size:
        raise ValueError(
            f"judge(s) {unseen.tolist()} (columns of patterns) graded no item: every item with a "
            f"count has -1 there. Drop these columns (their confusion matrices are not "
            f"identified)."
        )
    return v, x, lab, k


def _check_pi(pi, k: int) -> np.ndarray:
    arr = np.asarray(pi, dtype=float)
    if arr.shape[-1:] != (k,):
        raise ValueError(f"pi must have shape (..., {k}), one share per category; got {arr.shape}.")
    if not ((arr >= 0) & (arr <= 1)).all() or not np.allclose(arr.sum(axis=-1), 1.0, atol=1e-9):
        raise ValueError(f"pi must hold shares in [0, 1] that sum to 1; got {arr.tolist()!r}.")
    return arr


def _check_confusion(confusion, n_judges: int, k: int) -> np.ndarray:
    arr = np.asarray(confusion, dtype=float)
    if arr.shape[-3:] != (n_judges, k, k):
        raise ValueError(
            f"confusion must have shape (..., {n_judges}, {k}, {k}) (judge, truth, verdict); "
            f"got {arr.shape}."
        )
    if not ((arr >= 0) & (arr <= 1)).all() or not np.allclose(arr.sum(axis=-1), 1.0, atol=1e-9):
        raise ValueError(
            "confusion must hold probabilities in [0, 1] whose rows (truth) sum to 1 over the "
            "verdicts (last axis)."
        )
    return arr


# ---------------------------------------------------------------------------- likelihood


def _onehot(v: np.ndarray, k: int) -> np.ndarray:
    """(P, J, K) indicator of each judge's verdict (all zero where not judged)."""
    return (v[..., None] == np.arange(k)).astype(float)


def _log_pattern(v: np.ndarray, conf: np.ndarray) -> np.ndarray:
    """Log P(v | k) of shape (..., P, K) for conf (..., J, K, K); missing entries add 0."""
    n_judges, k = conf.shape[-3], conf.shape[-1]
    hot = _onehot(v, k).reshape(v.shape[0], n_judges * k)  # (P, J·C)

    def by_cell(a):  # (..., J, K, C) -> (..., J·C, K): a matrix product with hot sums over j
        return np.swapaxes(a, -1, -2).reshape(*a.shape[:-3], n_judges * k, k)

    zero = conf <= 0
    with np.errstate(divide="ignore"):
        ll = hot @ by_cell(np.log(np.where(zero, 1.0, conf)))
    if zero.any():
        # A verdict a judge never gives for truth k (probability 0) makes k impossible: -inf,
        # kept out of the product so that 0 * log 0 never turns into NaN.
        ll = np.where(hot @ by_cell(zero.astype(float)) > 0, -np.inf, ll)
    return ll


def _weighted(count, value):
    """Count * value with 0 * (-inf) = 0 (a zero count of an impossible pattern)."""
    with np.errstate(invalid="ignore"):
        return np.where(count > 0, count * value, 0.0)


def _log_pi(pi):
    with np.errstate(divide="ignore"):
        return np.log(pi)


def _logsumexp(a):
    """Log Σ exp over the last axis; -inf where every term is -inf."""
    top = a.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(a - top).sum(axis=-1)) + top[..., 0]


def _objective(ll, log_pi, x, lab, random: bool):
    """Log-likelihood from log P(v|k) (..., P, K), log π (..., K), x (..., P), lab (..., K, P)."""
    joint = ll + log_pi[..., None, :]
    total = _weighted(x, _logsumexp(joint)).sum(axis=-1)
    lab_t = np.swapaxes(lab, -1, -2)
    return total + _weighted(lab_t, joint if random else ll).sum(axis=(-2, -1))


def categorical_pattern_log_likelihood(patterns, confusion) -> np.ndarray:
    """Log-probability of each verdict pattern given each true category, log P(v | k).

    Parameters
    ----------
    patterns : array_like of int, shape (P, J)
        Category codes 0..K-1 of each judge's verdict; -1 where the judge gave none (it
        contributes nothing).
    confusion : array_like, shape (J, K, K)
        ``confusion[j, k, c]`` = P(judge j says c | truth k); rows sum to 1.

    Returns
    -------
    numpy.ndarray, shape (P, K)
        Column k holds Σ_j log confusion[j, k, v_j] over the judges who graded the item;
        ``-inf`` where a judge's verdict has probability 0 under truth k.

    Raises
    ------
    ValueError
        For codes outside -1..K-1, a row with no verdict, repeated rows, or a confusion array
        of the wrong shape or with rows not summing to 1.

    Examples
    --------
    >>> from bayesjudge.core.categorical_jury import categorical_pattern_log_likelihood
    >>> conf = [[[0.8, 0.2], [0.3, 0.7]], [[0.9, 0.1], [0.4, 0.6]]]
    >>> np.exp(categorical_pattern_log_likelihood([[1, 1], [0, -1]], conf)).round(3).tolist()
    [[0.02, 0.42], [0.8, 0.3]]
    """
    conf = np.asarray(confusion, dtype=float)
    k = _check_k(conf.shape[-1]) if conf.ndim == 3 else None
    if k is None:
        raise ValueError(
            f"confusion must have shape (J, K, K) (judge, truth, verdict); got {conf.shape}."
        )
    v = _check_patterns(patterns, k)
    conf = _check_confusion(conf, v.shape[1], k)
    return _log_pattern(v, conf)


def categorical_jury_log_likelihood(
    patterns, test, labelled, pi, confusion, *, design="stratified"
) -> float:
    """Log-likelihood of the K-class Dawid–Skene model for pattern counts, without constants.

    ``Σ_p test_p log Σ_k π_k P(v_p | k) + Σ_{k,p} labelled_kp log P(v_p | k)``, plus
    ``Σ_{k,p} labelled_kp log π_k`` when ``design="random"``. The multinomial coefficients
    are left out (they do not depend on the parameters), as in
    :func:`bayesjudge.core.jury.jury_log_likelihood`.

    Parameters
    ----------
    patterns : array_like of int, shape (P, J)
        Distinct verdict patterns (codes 0..K-1, -1 for no verdict).
    test : array_like, shape (P,)
        Unlabelled test items per pattern.
    labelled : array_like, shape (K, P) or None
        Human-labelled items per (human category, pattern); None for none (K is then taken
        from ``pi``).
    pi : array_like, shape (K,)
        True category shares, summing to 1.
    confusion : array_like, shape (J, K, K)
        Each judge's confusion matrix (row truth, column verdict).
    design : {"stratified", "random"}, default "stratified"
        ``"random"``: the labelled items are a random subset of the test population, so their
        truths carry information on π. ``"stratified"``: they do not.

    Returns
    -------
    float
        The log-likelihood (``-inf`` where a zero probability meets an observed pattern).

    Examples
    --------
    >>> from bayesjudge.core.categorical_jury import categorical_jury_log_likelihood
    >>> pats = [[1, 1], [1, 0], [0, 1], [0, 0]]
    >>> conf = [[[0.8, 0.2], [0.3, 0.7]], [[0.9, 0.1], [0.2, 0.8]]]
    >>> round(categorical_jury_log_likelihood(pats, [40, 10, 8, 42], None, [0.5, 0.5], conf), 4)
    -122.049
    """
    design = check_design(design, "design")
    pi_arr = np.asarray(pi, dtype=float)
    if pi_arr.ndim != 1:
        raise ValueError(f"pi must have shape (K,), one share per category; got {pi_arr.shape}.")
    v, x, lab, k = _check_counts(
        patterns, test, labelled, n_categories=pi_arr.shape[-1] if labelled is None else None
    )
    pi_arr = _check_pi(pi_arr, k)
    conf = _check_confusion(confusion, v.shape[1], k)
    if conf.ndim != 3:
        raise ValueError(f"confusion must have shape (J, K, K); got {conf.shape}.")
    ll = _log_pattern(v, conf)
    return float(_objective(ll, _log_pi(pi_arr), x, lab, design == "random"))


# -------------------------------------------------------------------------------------- EM


def _m_step(hot, x, lab, post, prev_conf, smoothing: float, random: bool):
    """π (B, K) and confusion (B, J, K, K) from posteriors P(k | v) of shape (B, P, K)."""
    k = lab.shape[-2]
    n_pat, n_judges = hot.shape[:2]
    w = x[:, None, :] * np.swapaxes(post, -1, -2) + lab  # (B, K, P)
    num = (w @ hot.reshape(n_pat, n_judges * k)).reshape(-1, k, n_judges, k)
    num = np.swapaxes(num, 1, 2) + smoothing  # (B, J, K, C)
    den = np.swapaxes(w @ hot.sum(axis=-1), 1, 2) + k * smoothing  # (B, J, K)
    # A row with no weight (e.g. a category no resampled item falls in) keeps its previous
    # value: it does not enter the likelihood of any observed item then.
    ok = den > 0
    conf = np.where(ok[..., None], num / np.where(ok, den, 1.0)[..., None], prev_conf)
    known = lab.sum(axis=-1) if random else 0.0
    size = x.sum(axis=-1) + (lab.sum(axis=(-2, -1)) if random else 0.0)
    pi = ((x[:, :, None] * post).sum(axis=-2) + known) / size[:, None]
    return pi, conf


def _e_step(v, pi, conf):
    """Posterior P(k | v) (B, P, K) and log P(v | k) (B, P, K)."""
    ll = _log_pattern(v, conf)
    joint = ll + _log_pi(pi)[..., None, :]
    with np.errstate(invalid="ignore"):
        post = np.exp(joint - _logsumexp(joint)[..., None])
    lost = np.isnan(post)  # impossible under every truth: only patterns without items
    if lost.any():
        clipped = np.clip(pi, _EPS, 1 - _EPS), np.clip(conf, _EPS, 1 - _EPS)
        post = np.where(lost, _e_step(v, *clipped)[0], post)
    return post, ll


def _em(v, x, lab, post, *, random, smoothing, max_iter, tol):
    """Batched EM from posteriors ``post`` (B, P, K); returns the fit per batch element."""
    batch, n_pat, k = post.shape
    hot = _onehot(v, k)
    x = np.broadcast_to(x, (batch, n_pat))
    lab = np.broadcast_to(lab, (batch, k, n_pat))
    uniform = np.full((batch, v.shape[1], k, k), 1.0 / k)
    params = list(_m_step(hot, x, lab, post, uniform, smoothing, random))
    n_iter = np.full(batch, max_iter)
    active = np.arange(batch)  # elements still iterating; converged ones are left alone
    for it in range(1, max_iter + 1):
        pi, conf = params[0][active], params[1][active]
        post, _ = _e_step(v, pi, conf)
        new_pi, new_conf = _m_step(hot, x[active], lab[active], post, conf, smoothing, random)
        change = np.maximum(
            np.abs(new_pi - pi).max(axis=-1), np.abs(new_conf - conf).max(axis=(-3, -2, -1))
        )
        params[0][active], params[1][active] = new_pi, new_conf
        done = change < tol
        n_iter[active[done]] = it
        active = active[~done]
        if active.size == 0:
            break
    post, ll = _e_step(v, *params)
    loglik = _objective(ll, _log_pi(params[0]), x, lab, random)
    converged = np.ones(batch, dtype=bool)
    converged[active] = False
    return params, post, loglik, n_iter, converged


def _vote_share(v: np.ndarray, k: int) -> np.ndarray:
    """Share of the judges who graded the pattern giving each category (crowd-kit's start)."""
    hot = _onehot(v, k)
    return hot.sum(axis=1) / (v >= 0).sum(axis=1)[:, None]


def categorical_dawid_skene(
    patterns,
    test,
    labelled=None,
    *,
    design="stratified",
    n_categories=None,
    smoothing=0.0,
    max_iter=10_000,
    tol=1e-10,
) -> CategoricalDawidSkeneResult:
    """K-class Dawid–Skene estimate of the category shares π and each judge's confusion matrix.

    Parameters
    ----------
    patterns : array_like of int, shape (P, J)
        Distinct verdict patterns: category codes 0..K-1, -1 where a judge gave no verdict.
    test : array_like, shape (P,)
        Unlabelled test items per pattern (at least one item in all).
    labelled : array_like, shape (K, P), optional
        Human-labelled items per (human category, pattern). Their posterior is fixed at their
        truth. None (no labelled item) needs ``n_categories``.
    design : {"stratified", "random"}, default "stratified"
        ``"random"``: the labelled items are a random subset of the test population, so their
        truths count toward π. ``"stratified"``: they were chosen per truth (or are a separate
        calibration set), so they inform the confusion matrices only and π̂ is the mean
        posterior of the test items.
    n_categories : int, optional
        K, where ``labelled`` is None (else the rows of ``labelled``).
    smoothing : float, default 0.0
        Pseudo-items ``s`` added to each verdict of each judge in each class: the posterior
        mode under independent Dirichlet(1 + s, …, 1 + s) priors on every confusion row (π has
        a flat prior). The default 0 gives the maximum-likelihood estimate.
    max_iter : int, default 10_000
        Most EM iterations.
    tol : float, default 1e-10
        Stop when no parameter (π_k, confusion entry) moves by ``tol`` or more in one step.

    Returns
    -------
    CategoricalDawidSkeneResult
        ``pi`` (K,), ``confusion`` (J, K, K) (row truth, column verdict), ``posterior``
        (P, K) = P(k | v) of a test item with each pattern, ``log_likelihood``
        (:func:`categorical_jury_log_likelihood` at the estimate, without the smoothing
        prior), ``n_iter`` and ``converged``.

    Raises
    ------
    ValueError
        For malformed counts (codes ≥ K, shapes, negative counts), a judge who graded no item,
        fewer than 3 judges without labelled items, or bad options.

    Notes
    -----
    EM starts like crowd-kit's ``DawidSkene``: the posterior of each pattern is the share of
    its judges giving each category, then alternates M-steps (weighted shares) and E-steps
    (Bayes' rule); the likelihood never decreases. Without labelled items the model is
    identified (with J ≥ 3 judges better than chance) only up to a relabelling of the latent
    classes; starting from the vote selects the mode where the judges mostly agree with the
    truth. A verdict a judge never gives for a class puts a confusion entry at 0: handled in
    log space (0 · log 0 = 0). With K = 2 this is :func:`bayesjudge.core.jury.dawid_skene`
    (θ = ``pi[1]``, q0 = ``confusion[:, 0, 0]``, q1 = ``confusion[:, 1, 1]``).

    References
    ----------
    Dawid & Skene (1979), Appl. Statist. 28:20-28.

    Examples
    --------
    >>> from bayesjudge.core.categorical_jury import categorical_dawid_skene
    >>> pats = [[0, 0, 0], [1, 1, 1], [2, 2, 2], [0, 0, 1], [1, 2, 1], [2, 2, 0], [0, 1, 0]]
    >>> fit = categorical_dawid_skene(pats, [120, 60, 150, 30, 20, 25, 15], n_categories=3)
    >>> fit.pi.round(3).tolist(), bool(fit.converged)
    ([0.393, 0.19, 0.417], True)
    """
    design = check_design(design, "design")
    v, x, lab, k = _check_counts(patterns, test, labelled, n_categories)
    check_em_options(v, lab, smoothing, max_iter, tol)
    share = _vote_share(v, k)
    # π_k = 0 is a fixed point of EM: a category that has labelled items but that no judge
    # gives on a test item would start, and stay, at 0 (θ_k = 0, a 0-wide interval, where the
    # labelled items say otherwise); it starts with a small share instead.
    dead = (x @ share == 0) & (lab.sum(axis=1) > 0)
    if dead.any():
        share = np.where(dead, 1e-3, share)
        share /= share.sum(axis=1, keepdims=True)
    post = share[None]
    (pi, conf), post, loglik, n_iter, conv = _em(
        v, x, lab, post, random=design == "random", smoothing=float(smoothing),
        max_iter=int(max_iter), tol=float(tol),
    )  # fmt: skip
    return CategoricalDawidSkeneResult(
        pi[0], conf[0], post[0], float(loglik[0]), int(n_iter[0]), bool(conv[0])
    )


# ------------------------------------------------------------------------------ intervals


class _Layout(NamedTuple):
    """Free coordinates of the log-odds parametrisation (see :func:`_layout`)."""

    pi_free: np.ndarray  # categories m whose log-odds log(π_m / π_ref) is free
    cells: list  # (j, k, free verdicts c, first column) per confusion row with free ones
    size: int


def _layout(pi, conf, weight) -> _Layout:
    """Free log-odds coordinates: every positive entry but the row's largest (its reference).

    Any reference gives the same variance of a function of π (the reparametrisation is linear
    and invertible); the largest entry is never on the boundary. Entries within _EDGE of 0 and
    rows without weight (no item could inform them) are held fixed.
    """
    ref = np.argmax(pi)
    pi_free = np.flatnonzero((pi >= _EDGE) & (np.arange(pi.size) != ref))
    cells, size = [], pi_free.size
    n_judges, k = conf.shape[:2]
    for j in range(n_judges):
        for t in range(k):
            row = conf[j, t]
            free = np.flatnonzero((row >= _EDGE) & (np.arange(k) != np.argmax(row)))
            if free.size and weight[j, t] > _EDGE:
                cells.append((j, t, free, size))
                size += free.size
    return _Layout(pi_free, cells, size)


def _softmax_curvature(p):
    """Hessian of log p_c in the free log-odds of p: -(diag p - p pᵀ), the same for every c."""
    return -(np.diag(p) - np.outer(p, p))


def _information(v, x, lab, pi, conf, *, random: bool, smoothing: float, lay=None):
    """Observed information in the free log-odds coordinates (Louis 1982), and its layout.

    ``lay`` fixes the coordinates (planning sums the information of several kinds of items,
    so they must share them); by default they follow the data (:func:`_layout`).
    """
    n_pat, k = v.shape[0], pi.size
    hot = _onehot(v, k)
    seen = (v >= 0).astype(float)
    post, _ = _e_step(v, pi[None], conf[None])
    post = post[0]  # (P, K)
    w = x[None, :] * post.T + lab  # (K, P) weight of each truth
    weight = np.einsum("kp,pj->jk", w, seen)
    lay = _layout(pi, conf, weight) if lay is None else lay
    grad = np.zeros((n_pat, k, lay.size))  # score of log π_k + log P(v | k), per truth k
    npi = lay.pi_free.size
    grad[:, :, :npi] = (np.eye(k)[:, lay.pi_free] - pi[lay.pi_free])[None]
    hess = np.zeros((lay.size, lay.size))
    n_pi = x.sum() + (lab.sum() if random else 0.0)
    hess[:npi, :npi] = n_pi * _softmax_curvature(pi[lay.pi_free])
    for j, t, free, start in lay.cells:
        cols = slice(start, start + free.size)
        grad[:, t, cols] = seen[:, j, None] * (hot[:, j, free] - conf[j, t, free])
        curv = _softmax_curvature(conf[j, t, free])
        hess[cols, cols] = (weight[j, t] + k * smoothing) * curv
    mean = np.einsum("pk,pkd->pd", post, grad)
    flat = grad.reshape(n_pat * k, lay.size)
    outer = (flat * (x[:, None] * post).reshape(-1, 1)).T @ flat - (mean * x[:, None]).T @ mean
    return -(hess + outer), lay


def _logit_interval(centre, grad, cov, z):
    """expit(logit ± z·SE) with SE² = gᵀ Σ g; [0, 1] where the variance is not finite."""
    with np.errstate(all="ignore"):
        var = float(grad @ cov @ grad)
    if not (np.isfinite(var) and var > 0):
        return 0.0, 1.0
    half = z * np.sqrt(var)
    return float(expit(logit(centre) - half)), float(expit(logit(centre) + half))


def _edge_interval(value, size, alpha):
    """Exact binomial limit for 0 (or n) of n items, where the logit is infinite."""
    edge = (alpha / 2.0) ** (1.0 / size)
    return (0.0, 1.0 - edge) if value < 0.5 else (edge, 1.0)


def _wald(v, x, lab, fit, centre, alpha, u, *, random, smoothing):
    """Wald intervals of every π_k (and of the rescaled score u·π) on the logit scale.

    ``centre`` is the (smoothed) fit the intervals are built around; ``fit`` the estimate,
    which decides the boundary cases and which every interval is widened to contain.
    """
    pi, k = centre.pi, centre.pi.size
    z = two_sided_z(alpha)
    size = x.sum() + (lab.sum() if random else 0.0)
    info, lay = _information(v, x, lab, pi, centre.confusion, random=random, smoothing=smoothing)
    npi = lay.pi_free.size
    try:
        with np.errstate(all="ignore"):
            cov = np.linalg.inv(info)[:npi, :npi]
    except np.linalg.LinAlgError:
        cov = np.full((npi, npi), np.inf)
    pf = pi[lay.pi_free]
    est = fit.pi if u is None else np.append(fit.pi, u @ fit.pi)
    bounds = np.zeros((k + 1, 2))
    for c in range(k):
        if min(fit.pi[c], 1.0 - fit.pi[c], pi[c], 1.0 - pi[c]) < _EDGE:
            bounds[c] = _edge_interval(fit.pi[c], size, alpha)
        else:
            grad = ((lay.pi_free == c) - pf) / (1.0 - pi[c])
            bounds[c] = _logit_interval(pi[c], grad, cov, z)
    if u is not None:
        mean = float(u @ pi)
        if min(est[k], 1.0 - est[k], mean, 1.0 - mean) < _EDGE:
            bounds[k] = _edge_interval(est[k], size, alpha)
        else:
            grad = pf * (u[lay.pi_free] - mean) / (mean * (1.0 - mean))
            bounds[k] = _logit_interval(mean, grad, cov, z)
    # The pseudo-items pull the centre by a small fraction of the width (this never binds in
    # the slow test's 1000 data sets at π = (0.2, 0.2, 0.6)), but an interval that left out
    # its own estimate would read as an error.
    n = est.size
    bounds[:n, 0] = np.minimum(bounds[:n, 0], est)
    bounds[:n, 1] = np.maximum(bounds[:n, 1], est)
    return bounds


def _check_interval_smoothing(value, k: int) -> float:
    if value is None:
        return 1.0 / k
    if not (is_real_number(value) and np.isfinite(value) and value >= 0):
        raise ValueError(
            f"interval_smoothing must be None (1/K pseudo-items per cell) or a number >= 0; "
            f"got {value!r}. Use 0 for the Wald interval at the maximum-likelihood estimate."
        )
    return float(value)


def _resample(rng, x, lab, n_resamples, random: bool):
    """Multinomial resamples of the test counts and (per truth, or jointly) labelled counts."""
    xs = rng.multinomial(int(x.sum()), x / x.sum(), size=n_resamples).astype(float)
    labs = np.zeros((n_resamples, *lab.shape))
    if random and lab.sum() > 0:
        cells = rng.multinomial(int(lab.sum()), lab.ravel() / lab.sum(), size=n_resamples)
        labs = cells.reshape(n_resamples, *lab.shape).astype(float)
    elif not random:
        for t in range(lab.shape[0]):
            if lab[t].sum() > 0:
                labs[:, t] = rng.multinomial(int(lab[t].sum()), lab[t] / lab[t].sum(), n_resamples)
    return xs, labs


def _score_scale(scores, k: int):
    """(low, range, u) with u the scores mapped to [0, 1]; None without scores."""
    if scores is None:
        return None
    s = np.asarray(scores, dtype=float)
    if s.shape != (k,) or not np.isfinite(s).all():
        raise ValueError(
            f"scores must be {k} finite numbers, one value per category in order; got {scores!r}."
        )
    low, span = float(s.min()), float(s.max() - s.min())
    return low, span, (s - low) / span if span > 0 else np.zeros(k)


def categorical_dawid_skene_interval(
    patterns,
    test,
    labelled=None,
    *,
    design="stratified",
    n_categories=None,
    alpha=0.05,
    method="wald",
    scores=None,
    n_resamples=2_000,
    random_seed=None,
    smoothing=0.0,
    interval_smoothing=None,
    max_iter=10_000,
    tol=1e-10,
    fit=None,
) -> CategoricalJuryInterval:
    """K-class Dawid–Skene π̂ with Wald (logit scale) or percentile-bootstrap intervals.

    Parameters
    ----------
    patterns, test, labelled, design, n_categories, smoothing, max_iter, tol
        As in :func:`categorical_dawid_skene`.
    alpha : float, default 0.05
        Miscoverage level of each interval, in (0, 1) (intervals per category, not joint).
    method : {"wald", "bootstrap"}, default "wald"
        ``"wald"``: logit π̂_k ± z·SE, SE from the inverse observed information of the full
        marginal likelihood in the multinomial-logit parametrisation of π and of every
        confusion row (analytic, Louis' identity). ``"bootstrap"``: resample items
        (multinomial on the test counts, and on the labelled counts, per truth for
        ``"stratified"``, jointly for ``"random"``), refit by EM started from the estimate's
        posteriors, and take percentile intervals.
    scores : array_like, shape (K,), optional
        A value per category: also estimate the mean score ``Σ_k s_k π_k``. Its Wald
        interval is taken on the logit of the score rescaled to [0, 1] by the lowest and
        highest value (so with scores (0, 1) at K = 2 it is θ's interval).
    n_resamples : int, default 2_000
        Bootstrap resamples (at least 100; ``method="bootstrap"`` only), each refitted with
        tolerance ``max(tol, 1e-6)``.
    random_seed : int, numpy.random.Generator or None
        Seed of the bootstrap.
    interval_smoothing : float or None, default None
        ``method="wald"`` only: pseudo-items per verdict and class of the fit (as
        ``smoothing``) that the Wald interval is built around and whose information it uses;
        None takes 1/K (one pseudo-item per confusion row, spread over its K cells). The
        estimate stays that of ``smoothing``; see Notes. 0 (with ``smoothing=0``) gives the
        Wald interval at the maximum-likelihood estimate.
    fit : CategoricalDawidSkeneResult, optional
        :func:`categorical_dawid_skene` of these same counts, design and ``smoothing``,
        reused instead of fitting again (a caller that also needs the confusion matrices fits
        once).

    Returns
    -------
    CategoricalJuryInterval
        ``estimate``, ``lower``, ``upper`` (K,) and ``score``, ``score_lower``,
        ``score_upper`` (NaN without scores).

    Raises
    ------
    ValueError
        As :func:`categorical_dawid_skene`, and for a bad ``alpha``, ``method``, ``scores``,
        ``n_resamples`` or seed.

    Notes
    -----
    Boundary rules of the Wald interval, as :func:`bayesjudge.core.jury.dawid_skene_interval`:
    a confusion entry or share within 1e-8 of 0 is held fixed (its log-odds is infinite), so
    its coordinate leaves the information matrix, and so does a confusion row no item informs.
    Where π̂_k is within 1e-8 of 0 (or 1) the interval is the exact binomial one for 0 of n
    (n of n) items, [0, 1 − (α/2)^(1/n)] (or [(α/2)^(1/n), 1]), n the items informing π. A
    singular information matrix (a model not identified) gives [0, 1]. The boundary cases
    are judged on both the estimate and the centre (below).

    The Wald interval is built around the fit with ``interval_smoothing`` pseudo-items per
    verdict and class (default 1/K: one pseudo-item per confusion row, the amount of
    :data:`bayesjudge.core.categorical.ROW_PSEUDO_ITEMS`), with that fit's information
    (prior curvature included); the reported estimate stays the one of ``smoothing``, and an
    interval is widened to contain it where the centre's pull leaves it out. At the
    maximum-likelihood fit the interval was up to 2.5 points liberal (below): in about a
    quarter of the data sets a rare verdict of a class is never seen, its confusion entry is
    estimated at exactly 0 and held fixed, and the shares are off-centre there (coverage
    0.87-0.91 in those data sets, 0.95-0.98 in the others); pseudo-counts in the variance
    alone did not help, as the centre itself is off. The estimate is not smoothed because the
    smoothed one is biased (mean 0.206 for θ_A = 0.2 with 1/K per cell, 0.209 with ½; the
    maximum-likelihood one 0.198). With K = 2 the estimate is that of
    :func:`~bayesjudge.core.jury.dawid_skene_interval` and the interval of ``pi[1]`` is its
    interval with ``smoothing=0.5`` (with ``interval_smoothing=0``, its default).

    Coverage of the 95% intervals, measured (``tests/core/test_categorical_jury_slow.py``,
    seed 20261128): three judges grading A / tie / B who lean towards A, 500 test items, 30
    labelled items per category, 1000 replications per π (MC-SE 0.007), coverage of
    (θ_A, θ_tie, θ_B; score θ_A + θ_tie/2):

    =====================  ==============================  ==============================
    π                      Wald, 1/K per cell (default)    Wald at the MLE (0 per cell)
    =====================  ==============================  ==============================
    (0.45, 0.15, 0.40)     0.949, 0.955, 0.947; 0.946      0.942, 0.943, 0.940; 0.936
    (0.30, 0.30, 0.40)     0.940, 0.948, 0.958; 0.950      0.929, 0.928, 0.954; 0.944
    (0.20, 0.20, 0.60)     0.949, 0.948, 0.950; 0.945      0.926, 0.935, 0.941; 0.939
    =====================  ==============================  ==============================

    All of the default's within 0.95 ± 3 MC-SE; mean widths 0.114-0.165, as at the MLE. With
    ½ pseudo-item per cell, π = (0.2, 0.2, 0.6): 0.940, 0.951, 0.950; 0.945. Percentile
    bootstrap (1000 resamples, unsmoothed), 200 replications at π = (0.45, 0.15, 0.40):
    0.915, 0.950, 0.950; 0.940 (MC-SE 0.015).

    Examples
    --------
    >>> from bayesjudge.core.categorical_jury import categorical_dawid_skene_interval
    >>> pats = [[0, 0, 0], [1, 1, 1], [2, 2, 2], [0, 0, 1], [1, 2, 1], [2, 2, 0], [0, 1, 0]]
    >>> res = categorical_dawid_skene_interval(pats, [120, 60, 150, 30, 20, 25, 15],
    ...                                        n_categories=3, scores=[1, 0.5, 0])
    >>> res.lower.round(3).tolist(), round(res.score, 3)
    ([0.347, 0.156, 0.37], 0.488)
    """
    alpha = check_alpha(alpha)
    if method not in _INTERVALS:
        raise ValueError(f"method must be 'wald' or 'bootstrap'; got {method!r}.")
    if fit is None:
        fit = categorical_dawid_skene(
            patterns, test, labelled, design=design, n_categories=n_categories,
            smoothing=smoothing, max_iter=max_iter, tol=tol,
        )  # fmt: skip
    v, x, lab, k = _check_counts(patterns, test, labelled, n_categories)
    if not isinstance(fit, CategoricalDawidSkeneResult) or np.shape(fit.posterior) != (
        v.shape[0],
        k,
    ):
        raise ValueError(
            "fit must be the CategoricalDawidSkeneResult of categorical_dawid_skene on these "
            f"same patterns; got {type(fit).__name__}."
        )
    scale = _score_scale(scores, k)
    u = None if scale is None else scale[2]
    random = design == "random"
    if method == "wald":
        s_int = _check_interval_smoothing(interval_smoothing, k)
        centre = fit
        if s_int != float(smoothing):
            centre = categorical_dawid_skene(
                patterns, test, labelled, design=design, n_categories=n_categories,
                smoothing=s_int, max_iter=max_iter, tol=tol,
            )  # fmt: skip
        bounds = _wald(v, x, lab, fit, centre, alpha, u, random=random, smoothing=s_int)
    else:
        n_resamples = check_resamples(n_resamples, "categorical_dawid_skene_interval", alpha)
        rng = np.random.default_rng(check_seed(random_seed))
        xs, labs = _resample(rng, x, lab, n_resamples, random)
        start = np.broadcast_to(fit.posterior, (n_resamples, *fit.posterior.shape))
        # Replicates need no more digits than their Monte Carlo error (about 1e-3) shows.
        (pis, _), *_ = _em(
            v, xs, labs, start, random=random, smoothing=float(smoothing),
            max_iter=int(max_iter), tol=max(float(tol), 1e-6),
        )  # fmt: skip
        reps = pis if u is None else np.column_stack([pis, pis @ u])
        bounds = np.quantile(reps, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0).T
        bounds = np.vstack([bounds, np.zeros((1, 2))]) if u is None else bounds
    score, lo, hi = np.nan, np.nan, np.nan
    if scale is not None:
        low, span, _ = scale
        score = low + span * float(u @ fit.pi) if span > 0 else low
        lo, hi = (low + span * bounds[k]) if span > 0 else (low, low)
    return CategoricalJuryInterval(
        fit.pi, bounds[:k, 0], bounds[:k, 1], float(score), float(lo), float(hi)
    )


# ------------------------------------------------------------------------------ planning

#: Planning enumerates the K**J complete verdict patterns to take expectations exactly.
MAX_PLANNED_PATTERNS = 2**16


def _complete_patterns(n_judges: int, k: int) -> np.ndarray:
    """Every complete pattern of ``n_judges`` judges over K categories, (K**J, J)."""
    grid = np.arange(k**n_judges)[:, None] // k ** np.arange(n_judges)[::-1]
    return (grid % k).astype(np.int64)


def _check_interior(pi, conf) -> None:
    """Planning needs finite log-odds: every share and confusion entry strictly inside (0, 1)."""
    bad = [
        name for name, a in (("pi", pi), ("confusion", conf)) if (a <= 0).any() or (a >= 1).any()
    ]
    if bad:
        raise ValueError(
            f"Planning needs every share and confusion entry strictly between 0 and 1 (each "
            f"log-odds must be finite); {' and '.join(bad)} hold 0 or 1. Plan with smoothed "
            f"estimates, e.g. categorical_dawid_skene(..., smoothing=0.5)."
        )


def _full_layout(pi, conf) -> _Layout:
    """Every log-odds coordinate free (reference: each row's largest entry), as planned."""
    return _layout(pi, conf, np.ones(conf.shape[:2]))


def categorical_dawid_skene_information(
    patterns, test, labelled, pi, confusion, *, design="stratified"
) -> np.ndarray:
    """Observed information of the K-class Dawid–Skene likelihood at given parameters.

    The coordinates are log-odds: ``log(π_m / π_r)`` for every category m but the largest
    share's r, then for each judge j and truth k (judge-major) ``log(confusion[j, k, c] /
    confusion[j, k, r_jk])`` for every verdict c but the row's largest entry r_jk. The Wald
    interval of :func:`categorical_dawid_skene_interval` inverts this matrix (at its estimate;
    it also holds boundary entries fixed). The information is linear in the counts, so at the
    expected counts it is the expected (Fisher) information
    (:func:`categorical_dawid_skene_unit_information`).

    Parameters
    ----------
    patterns, test, labelled, design
        As in :func:`categorical_jury_log_likelihood` (``labelled`` None: no labelled item).
    pi : array_like, shape (K,)
        Category shares, each strictly between 0 and 1.
    confusion : array_like, shape (J, K, K)
        Confusion matrices (row truth, column verdict), every entry strictly between 0 and 1.

    Returns
    -------
    numpy.ndarray, shape (D, D)
        Minus the Hessian of the log-likelihood, D = (K - 1)(1 + J·K).

    Examples
    --------
    >>> from bayesjudge.core.categorical_jury import categorical_dawid_skene_information
    >>> conf = [[[0.8, 0.2], [0.3, 0.7]]] * 3
    >>> info = categorical_dawid_skene_information(
    ...     [[0, 0, 0], [1, 1, 1], [0, 1, 1]], [50, 40, 10], None, [0.5, 0.5], conf)
    >>> info.shape
    (7, 7)
    """
    design = check_design(design, "design")
    pi_arr = np.asarray(pi, dtype=float)
    if pi_arr.ndim != 1:
        raise ValueError(f"pi must have shape (K,), one share per category; got {pi_arr.shape}.")
    v, x, lab, k = _check_counts(
        patterns, test, labelled, n_categories=pi_arr.size if labelled is None else None
    )
    pi_arr = _check_pi(pi_arr, k)
    conf = _check_confusion(confusion, v.shape[1], k)
    if conf.ndim != 3:
        raise ValueError(f"confusion must have shape (J, K, K); got {conf.shape}.")
    _check_interior(pi_arr, conf)
    lay = _full_layout(pi_arr, conf)
    return _information(v, x, lab, pi_arr, conf, random=design == "random", smoothing=0.0,
                        lay=lay)[0]  # fmt: skip


def categorical_dawid_skene_unit_information(pi, confusion, *, design="stratified") -> np.ndarray:
    """Return the expected Fisher information of a test item and of a labelled item per truth.

    In the coordinates of :func:`categorical_dawid_skene_information`. A data set of ``n``
    test items and ``m[k]`` labelled items of each truth k carries ``n·I[0] + Σ_k m[k]·I[1 +
    k]``; its inverse is the asymptotic covariance of the maximum-likelihood estimate.

    Parameters
    ----------
    pi : array_like, shape (K,)
        True category shares, each strictly between 0 and 1.
    confusion : array_like, shape (J, K, K)
        The judges' confusion matrices (row truth, column verdict), entries strictly between 0
        and 1.
    design : {"stratified", "random"}, default "stratified"
        ``"random"``: a labelled item's truth also informs π.

    Returns
    -------
    numpy.ndarray, shape (1 + K, D, D)
        The information of a test item, then of a labelled item of truth 0, 1, …, K - 1.

    Notes
    -----
    The expectation runs over all K**J complete patterns (every judge grades every item; at
    most 2**16 patterns). It is the observed information evaluated at the expected counts,
    which for a multinomial is the Fisher information: the probabilities of all patterns sum
    to one at every parameter value, so the curvature term has expectation zero. With K = 2
    it is :func:`bayesjudge.core.jury.dawid_skene_unit_information` up to the sign of each
    coordinate (log-odds against the larger entry, not logit θ, q0, q1).

    Examples
    --------
    >>> from bayesjudge.core.categorical_jury import categorical_dawid_skene_unit_information
    >>> conf = [[[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]]] * 3
    >>> categorical_dawid_skene_unit_information([0.4, 0.2, 0.4], conf).shape
    (4, 20, 20)
    """
    design = check_design(design, "design")
    conf = np.asarray(confusion, dtype=float)
    if conf.ndim != 3:
        raise ValueError(
            f"confusion must have shape (J, K, K) (judge, truth, verdict); got {conf.shape}."
        )
    k = _check_k(conf.shape[-1])
    n_judges = conf.shape[0]
    pi_arr = _check_pi(pi, k)
    conf = _check_confusion(conf, n_judges, k)
    if pi_arr.ndim != 1:
        raise ValueError(f"pi must have shape (K,), one share per category; got {pi_arr.shape}.")
    if float(k) ** n_judges > MAX_PLANNED_PATTERNS:
        raise ValueError(
            f"Planning enumerates the K**J = {k}**{n_judges} complete verdict patterns; it takes "
            f"at most {MAX_PLANNED_PATTERNS}. Plan smaller juries (or fewer categories)."
        )
    _check_interior(pi_arr, conf)
    lay = _full_layout(pi_arr, conf)
    v = _complete_patterns(n_judges, k)
    prob = np.exp(_log_pattern(v, conf))  # (P, K)
    random = design == "random"
    out = np.empty((1 + k, lay.size, lay.size))
    zero = np.zeros((k, v.shape[0]))
    out[0] = _information(v, prob @ pi_arr, zero, pi_arr, conf, random=random, smoothing=0.0,
                          lay=lay)[0]  # fmt: skip
    for t in range(k):
        lab = zero.copy()
        lab[t] = prob[:, t]
        out[1 + t] = _information(v, np.zeros(v.shape[0]), lab, pi_arr, conf, random=random,
                                  smoothing=0.0, lay=lay)[0]  # fmt: skip
    return out


def _planned_limits(centre, var, z):
    """Wald limits expit(logit c ± z·√var); 0 and 1 where the variance is not finite."""
    half = z * np.sqrt(var)
    with np.errstate(all="ignore"):
        lower = np.where(np.isfinite(half), expit(logit(centre) - half), 0.0)
        upper = np.where(np.isfinite(half), expit(logit(centre) + half), 1.0)
    return lower, upper


def categorical_dawid_skene_plan(
    pi, confusion, n, m, *, alpha=0.05, design="stratified", scores=None
) -> CategoricalJuryPlan:
    """Planned standard errors and Wald widths of the K-class Dawid–Skene π̂ (and the score).

    Parameters
    ----------
    pi, confusion, design
        As in :func:`categorical_dawid_skene_unit_information` (the values the plan assumes,
        e.g. a pilot's smoothed estimates).
    n : float
        Unlabelled test items.
    m : array_like, shape (..., K)
        Labelled items of each true category (last axis); leading axes give a grid of budgets
        and splits in one call.
    alpha : float, default 0.05
        One minus each interval's coverage probability.
    scores : array_like, shape (K,), optional
        A value per category: also plan the mean score ``Σ_k s_k π_k`` (its Wald interval on
        the logit of the score rescaled to [0, 1], as
        :func:`categorical_dawid_skene_interval`).

    Returns
    -------
    CategoricalJuryPlan
        ``sd`` (asymptotic standard error of each π̂_k, delta method from the logit scale),
        ``width`` (the width the Wald interval of :func:`categorical_dawid_skene_interval`
        converges to) and its ``lower``, ``upper`` limits around π, each of shape (..., K);
        ``score_sd``, ``score_width``, ``score_lower``, ``score_upper`` of shape (...) in the
        scores' units (NaN without scores). Where the information is singular (not
        identified, e.g. two judges and no labels of a category) sd and width are ``inf`` and
        the limits 0 and 1.

    Notes
    -----
    Asymptotic, like :func:`bayesjudge.core.jury.dawid_skene_plan`, to which it reduces at
    K = 2 (``pi = [1 - θ, θ]``, ``confusion[j] = [[q0, 1 - q0], [1 - q1, q1]]``, ``m = [m0,
    m1]``). The interval's default pseudo-items (``interval_smoothing``) are left out: they
    change the width by a small fraction at the sizes where the plan matters.

    Examples
    --------
    >>> from bayesjudge.core.categorical_jury import categorical_dawid_skene_plan
    >>> conf = [[[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]]] * 3
    >>> plan = categorical_dawid_skene_plan([0.4, 0.2, 0.4], conf, 500, [[10, 10, 10],
    ...                                     [40, 40, 40]], scores=[1, 0.5, 0])
    >>> plan.width.round(3).tolist(), plan.score_width.round(3).tolist()
    ([[0.198, 0.262, 0.198], [0.154, 0.189, 0.154]], [0.151, 0.123])
    """
    alpha = check_alpha(alpha)
    unit = categorical_dawid_skene_unit_information(pi, confusion, design=design)
    pi_arr = np.asarray(pi, dtype=float)
    k = pi_arr.size
    m_arr = np.asarray(m, dtype=float)
    n_arr = np.asarray(n, dtype=float)
    if m_arr.shape[-1:] != (k,):
        raise ValueError(
            f"m must have shape (..., {k}): labelled items of each true category on the last "
            f"axis; got shape {m_arr.shape}."
        )
    if n_arr.ndim or not np.isfinite(n_arr) or n_arr < 0:
        raise ValueError(f"n must be one finite, non-negative number of test items; got {n!r}.")
    if not np.all(np.isfinite(m_arr) & (m_arr >= 0)):
        raise ValueError(f"m must hold finite, non-negative counts; got {m_arr.tolist()!r}.")
    if float(n_arr) > MAX_COUNT:
        raise ValueError(
            f"n must be at most 2**53 = {MAX_COUNT} test items (counts above it are not exact "
            f"in float64); got {n!r}."
        )
    scale = _score_scale(scores, k)
    lay = _full_layout(pi_arr, np.asarray(confusion, dtype=float))
    npi = lay.pi_free.size
    # The binary plan's scale-aware rule and inverse (a huge n beside few labels is badly
    # scaled, not singular).
    cov, ok = planned_inverse(float(n_arr), unit, m_arr, npi)  # the π block
    pf = pi_arr[lay.pi_free]
    grads = [((lay.pi_free == c) - pf) / (1.0 - pi_arr[c]) for c in range(k)]
    var = np.stack([_quadratic(g, cov, ok) for g in grads], axis=-1)
    z = two_sided_z(alpha)
    lower, upper = _planned_limits(pi_arr, var, z)
    sd = pi_arr * (1.0 - pi_arr) * np.sqrt(var)
    shape = var.shape[:-1]
    score = [np.full(shape, np.nan) for _ in range(4)]
    if scale is not None and scale[1] == 0:  # every category scores the same: a constant
        score = [np.zeros(shape), np.zeros(shape), *(np.full(shape, scale[0]) for _ in "lu")]
    elif scale is not None:
        low, span, u = scale
        mean = float(u @ pi_arr)
        s_var = _quadratic(pf * (u[lay.pi_free] - mean) / (mean * (1.0 - mean)), cov, ok)
        s_lower, s_upper = _planned_limits(mean, s_var, z)
        s_sd = span * mean * (1.0 - mean) * np.sqrt(s_var)
        score = [s_sd, span * (s_upper - s_lower), low + span * s_lower, low + span * s_upper]
    return CategoricalJuryPlan(sd, upper - lower, lower, upper, *score)


def _quadratic(grad, cov, ok):
    """gᵀ Σ g over the batch, ``inf`` where the information was singular."""
    with np.errstate(all="ignore"):
        val = np.einsum("d,...de,e->...", grad, cov, grad)
    return np.where(ok & (val > 0), val, np.inf)


# ------------------------------------------------------------------------- plurality vote


def plurality_verdicts(patterns, n_categories, *, ties="split") -> np.ndarray:
    """Plurality verdict of each pattern over the judges who graded it, as category shares.

    Parameters
    ----------
    patterns : array_like of int, shape (P, J)
        Category codes 0..K-1 (-1 for no verdict).
    n_categories : int
        K.
    ties : {"split"}, default "split"
        A pattern whose most frequent verdict is shared by m categories counts 1/m for each.

    Returns
    -------
    numpy.ndarray of float, shape (P, K)
        Rows sum to 1: 1 in the plurality category, or equal shares over the tied ones.

    Examples
    --------
    >>> from bayesjudge.core.categorical_jury import plurality_verdicts
    >>> plurality_verdicts([[2, 2, 0], [1, 0, -1], [0, 1, 2]], 3).round(3).tolist()
    [[0.0, 0.0, 1.0], [0.5, 0.5, 0.0], [0.333, 0.333, 0.333]]
    """
    if ties != "split":
        raise ValueError(
            f"ties must be 'split' (a tie counts equally for each tied category); got {ties!r}."
        )
    k = _check_k(n_categories)
    v = _check_patterns(patterns, k)
    votes = _onehot(v, k).sum(axis=1)
    top = votes == votes.max(axis=1, keepdims=True)
    return top / top.sum(axis=1, keepdims=True)


def plurality_vote(patterns, test, n_categories, *, alpha=0.05, scores=None):
    """Naive jury estimate: the share of test items the plurality puts in each category.

    Like :func:`bayesjudge.core.jury.majority_vote` (to which it reduces at K = 2), it
    estimates P(plurality says k), not θ_k: biased unless the plurality vote is error-free.
    Each category's interval is Wilson's (with split ties the count may be fractional).

    Parameters
    ----------
    patterns : array_like of int, shape (P, J)
        Distinct verdict patterns (codes 0..K-1, -1 for no verdict).
    test : array_like, shape (P,)
        Test items per pattern (at least one in all).
    n_categories : int
        K.
    alpha : float, default 0.05
        Miscoverage level of each interval.
    scores : array_like, shape (K,), optional
        A value per category: also the mean score of the plurality verdicts, its interval
        Wilson's on the score rescaled to [0, 1] (conservative: a mean of values in [0, 1]
        varies at most as a proportion does).

    Returns
    -------
    CategoricalJuryInterval
        ``estimate``, ``lower``, ``upper`` (K,), and the score's (NaN without scores).

    Examples
    --------
    >>> from bayesjudge.core.categorical_jury import plurality_vote
    >>> res = plurality_vote([[2, 2, 0], [1, 0, -1], [0, 1, 2]], [50, 10, 40], 3)
    >>> res.estimate.round(3).tolist()
    [0.183, 0.183, 0.633]
    """
    alpha = check_alpha(alpha)
    k = _check_k(n_categories)
    verdicts = plurality_verdicts(patterns, k)
    x = as_count("test", test)
    if x.shape != verdicts.shape[:1] or x.sum() < 1:
        raise ValueError(
            f"test must have shape {verdicts.shape[:1]} (one count per pattern) and hold at "
            f"least one item; got shape {x.shape} and {x.sum():g} items."
        )
    scale = _score_scale(scores, k)
    n = float(x.sum())
    hits = x @ verdicts
    if scale is not None:
        hits = np.append(hits, x @ verdicts @ scale[2])
    lower, upper = wilson_limits(hits, n, two_sided_z(alpha))
    lower = np.where(hits == 0, 0.0, np.clip(lower, 0.0, 1.0))
    upper = np.where(hits == n, 1.0, np.clip(upper, 0.0, 1.0))
    est = hits / n
    score, lo, hi = np.nan, np.nan, np.nan
    if scale is not None:
        low, span, _ = scale
        score, lo, hi = (low + span * a[k] for a in (est, lower, upper))
    return CategoricalJuryInterval(
        est[:k], lower[:k], upper[:k], float(score), float(lo), float(hi)
    )
