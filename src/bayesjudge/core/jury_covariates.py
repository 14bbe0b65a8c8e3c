"""Judges whose errors depend on the item: q0 and q1 as logistic functions of covariates.

Several judges grade the same items; each verdict row r (item i, judge j, covariates x_r, such
as the answer's length or the position it was shown in) says "correct" with probability

    P(v_r = 1 | Z_i = t) = expit(β_{j,t,0} + β_{j,t}ᵀ x_r),

so that q1_j(x) = expit(β_{j,1}ᵀ x̃) and q0_j(x) = 1 − expit(β_{j,0}ᵀ x̃) (x̃ = (1, x)). Given the
truth the verdicts are independent; the truth Z_i ~ Bernoulli(θ_g) in the item's group g
(system × stratum) is latent for unlabelled items and known for labelled ones. With no
covariate this is the Dawid–Skene model of :mod:`bayesjudge.core.jury`; a judge graded twice
on one item (both answer orders, a position covariate) is two rows of the same judge.

The maximum-likelihood estimate is found by EM (the M-step is one weighted logistic regression
per judge and truth, solved by Newton's method), and the Wald interval of each θ_g comes from
the observed information of the marginal likelihood (Louis 1982: the gradient is the posterior
mean of the complete-data gradient; the Hessian is its numerical derivative).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import special, stats

from bayesjudge.core._validation import check_alpha, check_design

__all__ = [
    "CovariateFit",
    "covariate_dawid_skene",
    "covariate_levels",
    "covariate_log_likelihood",
    "covariate_q",
]


class CovariateFit(NamedTuple):
    """ML estimate of the covariate model (see :func:`covariate_dawid_skene`)."""

    theta: np.ndarray  # (G,)
    theta_lower: np.ndarray  # (G,) Wald interval on the logit scale
    theta_upper: np.ndarray
    coef: np.ndarray  # (J, 2, 1 + p): truth 0 then 1; intercept first
    coef_cov: np.ndarray  # (J*2*(1+p), J*2*(1+p)) inverse observed information block
    posterior: np.ndarray  # (I,) P(Z_i = 1 | data)
    log_likelihood: float
    n_iter: int
    converged: bool


class _Rows(NamedTuple):
    item: np.ndarray
    judge: np.ndarray
    verdict: np.ndarray
    x: np.ndarray  # (R, 1 + p) with the intercept column
    truth: np.ndarray  # (I,) -1 unknown
    group: np.ndarray  # (I,)
    n_judges: int
    n_groups: int


def _check(item, judge, verdict, covariates, truth, group, n_judges=None) -> _Rows:
    item = np.asarray(item)
    judge = np.asarray(judge)
    verdict = np.asarray(verdict)
    r = item.shape[0]
    for name, arr in (("item", item), ("judge", judge), ("verdict", verdict)):
        if arr.ndim != 1 or arr.shape[0] != r or arr.dtype.kind not in "iub":
            raise ValueError(f"{name} must be a 1-D integer array of one entry per verdict row.")
    if r == 0:
        raise ValueError("There are no verdict rows.")
    if not np.isin(verdict, (0, 1)).all():
        raise ValueError("verdict must hold 1 (judged correct) or 0 (judged incorrect).")
    x = np.zeros((r, 0)) if covariates is None else np.asarray(covariates, dtype=float)
    x = x.reshape(r, -1) if x.ndim == 1 else x
    if x.shape[0] != r or not np.isfinite(x).all():
        raise ValueError(
            f"covariates must be a finite array of shape ({r}, p), one row per verdict row; "
            f"got shape {x.shape}{' with NaN/inf' if x.shape[0] == r else ''}."
        )
    truth = np.asarray(truth)
    n_items = truth.shape[0]
    if item.min() < 0 or item.max() >= n_items:
        raise ValueError(f"item indexes must lie in [0, {n_items}) (one truth entry per item).")
    if not np.isin(truth, (-1, 0, 1)).all():
        raise ValueError("truth must hold -1 (unlabelled), 0 or 1.")
    group = np.zeros(n_items, dtype=np.int64) if group is None else np.asarray(group)
    if group.shape != (n_items,) or group.min() < 0:
        raise ValueError(f"group must hold one non-negative index per item ({n_items}).")
    n_judges = int(judge.max()) + 1 if n_judges is None else n_judges
    graded = np.bincount(judge, minlength=n_judges)
    if (graded == 0).any():
        raise ValueError(f"judge(s) {np.flatnonzero(graded == 0).tolist()} have no verdict row.")
    design = np.column_stack([np.ones(r), x])
    return _Rows(item, judge, verdict.astype(float), design, truth, group, n_judges,
                 int(group.max()) + 1)  # fmt: skip


def _eta(rows: _Rows, coef: np.ndarray) -> np.ndarray:
    """Linear predictors (R, 2) of every row under truth 0 and 1."""
    return np.einsum("rk,rtk->rt", rows.x, coef[rows.judge])


def _item_loglik(rows: _Rows, coef: np.ndarray) -> np.ndarray:
    """Log P(item's verdicts | t), shape (I, 2)."""
    eta = _eta(rows, coef)
    v = rows.verdict[:, None]
    ll = v * -np.logaddexp(0, -eta) + (1 - v) * -np.logaddexp(0, eta)
    out = np.zeros((rows.truth.shape[0], 2))
    np.add.at(out, rows.item, ll)
    return out


def _posterior(rows: _Rows, theta: np.ndarray, coef: np.ndarray, random: bool):
    """P(Z_i = 1 | data) and the marginal log-likelihood."""
    ll = _item_loglik(rows, coef)
    th = np.clip(theta[rows.group], 1e-300, 1 - 1e-16)
    joint = ll + np.column_stack([np.log1p(-th), np.log(th)])
    known = rows.truth >= 0
    post = np.where(known, rows.truth, np.exp(joint[:, 1] - np.logaddexp(joint[:, 0], joint[:, 1])))
    total = np.logaddexp(joint[:, 0], joint[:, 1])[~known].sum()
    t = rows.truth[known]
    lab = (joint if random else ll)[known]
    total += lab[np.arange(t.size), t].sum()
    return post, total


def _theta(rows: _Rows, post: np.ndarray, random: bool) -> np.ndarray:
    use = (rows.truth < 0) | random
    num = np.bincount(rows.group[use], post[use], minlength=rows.n_groups)
    den = np.bincount(rows.group[use], minlength=rows.n_groups).astype(float)
    return np.where(den > 0, num / np.where(den > 0, den, 1), 0.5)


def _newton(x, y, w, beta, ridge: float, steps: int = 25) -> np.ndarray:
    """Weighted logistic regression (ridge on every coefficient) by Newton's method."""
    for _ in range(steps):
        mu = special.expit(x @ beta)
        grad = x.T @ (w * (y - mu)) - ridge * beta
        hess = (x * (w * mu * (1 - mu))[:, None]).T @ x + ridge * np.eye(len(beta))
        step = np.linalg.solve(hess, grad)
        beta = beta + step
        if np.abs(step).max() < 1e-10:
            break
    return beta


def _m_step(rows: _Rows, post: np.ndarray, coef: np.ndarray, ridge: float) -> np.ndarray:
    w1 = post[rows.item]
    new = coef.copy()
    for j in range(rows.n_judges):
        mine = rows.judge == j
        for t, w in ((0, 1 - w1[mine]), (1, w1[mine])):
            if w.sum() > 0:
                new[j, t] = _newton(rows.x[mine], rows.verdict[mine], w, coef[j, t], ridge)
    return new


def _start(rows: _Rows) -> tuple[np.ndarray, np.ndarray]:
    """Majority-vote posteriors (labelled items: their truth) and intercept-only q = 0.75."""
    votes = np.bincount(rows.item, rows.verdict, minlength=rows.truth.shape[0])
    size = np.bincount(rows.item, minlength=rows.truth.shape[0])
    share = np.where(size > 0, votes / np.maximum(size, 1), 0.5)
    post = np.where(rows.truth >= 0, rows.truth, share)
    coef = np.zeros((rows.n_judges, 2, rows.x.shape[1]))
    coef[:, 0, 0], coef[:, 1, 0] = -np.log(3), np.log(3)
    return post, coef


def _gradient(rows: _Rows, params: np.ndarray, random: bool, ridge: float) -> np.ndarray:
    """Gradient of the penalised marginal log-likelihood in (logit θ, coef) (Fisher identity)."""
    g = rows.n_groups
    theta = special.expit(params[:g])
    coef = params[g:].reshape(rows.n_judges, 2, -1)
    post, _ = _posterior(rows, theta, coef, random)
    use = (rows.truth < 0) | random
    d_theta = np.bincount(rows.group[use], post[use] - theta[rows.group[use]], minlength=g)
    mu = special.expit(_eta(rows, coef))
    w = np.column_stack([1 - post[rows.item], post[rows.item]])
    resid = w * (rows.verdict[:, None] - mu)  # (R, 2)
    d_coef = np.zeros_like(coef)
    for t in (0, 1):
        np.add.at(d_coef[:, t], rows.judge, resid[:, t, None] * rows.x)
    return np.concatenate([d_theta, (d_coef - ridge * coef).ravel()])


def _information(rows: _Rows, theta, coef, random: bool, ridge: float) -> np.ndarray:
    """Observed information: minus the numerical derivative of the analytic gradient."""
    point = np.concatenate([special.logit(np.clip(theta, 1e-9, 1 - 1e-9)), coef.ravel()])
    size = point.size
    hess = np.zeros((size, size))
    for k in range(size):
        h = 1e-5 * max(1.0, abs(point[k]))
        up, down = point.copy(), point.copy()
        up[k] += h
        down[k] -= h
        hess[:, k] = (_gradient(rows, up, random, ridge) - _gradient(rows, down, random, ridge)) / (
            2 * h
        )
    return -(hess + hess.T) / 2


def covariate_log_likelihood(
    item, judge, verdict, covariates, truth, theta, coef, *, group=None, design="stratified"
) -> float:
    """Marginal log-likelihood of the covariate model (no multinomial constants).

    Parameters
    ----------
    item, judge, verdict : array_like of int, shape (R,)
        One entry per verdict row: the item's index (into ``truth``), the judge's index, the
        verdict (1 correct, 0 incorrect).
    covariates : array_like, shape (R, p) or None
        The row's covariates.
    truth : array_like of int, shape (I,)
        -1 for an unlabelled item, else its human label 0 or 1.
    theta : array_like, shape (G,)
        θ per group.
    coef : array_like, shape (J, 2, 1 + p)
        Logistic coefficients of P(says correct | t), truth 0 then 1, intercept first.
    group : array_like of int, shape (I,), optional
        The item's group (default: one group).
    design : {"stratified", "random"}
        ``"random"``: labelled items' truths count toward θ.

    Returns
    -------
    float

    Examples
    --------
    >>> round(covariate_log_likelihood([0, 0], [0, 1], [1, 1], None, [-1], [0.5],
    ...                                np.zeros((2, 2, 1))), 4)  # each verdict 1/2
    -1.3863
    """
    rows = _check(item, judge, verdict, covariates, truth, group, np.shape(coef)[0])
    random = check_design(design, "design") == "random"
    return float(_posterior(rows, np.asarray(theta, float), np.asarray(coef, float), random)[1])


def covariate_dawid_skene(
    item,
    judge,
    verdict,
    covariates,
    truth,
    *,
    group=None,
    design="stratified",
    alpha=0.05,
    ridge=1e-3,
    max_iter=2_000,
    tol=1e-8,
) -> CovariateFit:
    """ML estimate of θ per group and of each judge's covariate-dependent q0, q1, by EM.

    Parameters
    ----------
    item, judge, verdict, covariates, truth, group, design
        As in :func:`covariate_log_likelihood`. Centre and scale the covariates first (the
        coefficients are then per standard deviation and the intercepts are the judge's
        logit q at the mean item).
    alpha : float, default 0.05
        One minus the coverage of the Wald intervals of θ.
    ridge : float, default 1e-3
        L2 penalty on every coefficient (a N(0, 1/ridge) prior): keeps a perfect judge's
        intercept finite; at 1e-3 it moves an estimate by far less than its standard error.
    max_iter, tol : int, float
        EM iterations and the stopping rule (largest change of θ and the coefficients).

    Returns
    -------
    CovariateFit

    Notes
    -----
    With no covariate the model is Dawid–Skene (:func:`bayesjudge.core.jury.dawid_skene`),
    which the tests check to 1e-6. The interval is the Wald interval of logit θ_g with the
    inverse observed information of all parameters (θ's and every coefficient); its coverage
    is checked by simulation in ``tests/core/test_jury_covariates.py``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> truth = (rng.random(300) < 0.6).astype(int)
    >>> items = np.repeat(np.arange(300), 3)
    >>> judges = np.tile(np.arange(3), 300)
    >>> x = rng.normal(size=900)
    >>> p = np.where(truth[items] == 1, 0.9, 0.2)  # q1 = 0.9, q0 = 0.8, no covariate effect
    >>> verdict = (rng.random(900) < p).astype(int)
    >>> fit = covariate_dawid_skene(items, judges, verdict, x, np.where(np.arange(300) < 60,
    ...                             truth, -1))
    >>> round(float(fit.theta[0]), 2), round(float(truth.mean()), 2), fit.coef.shape
    (0.52, 0.55, (3, 2, 2))
    """
    rows = _check(item, judge, verdict, covariates, truth, group)
    random = check_design(design, "design") == "random"
    alpha = check_alpha(alpha)
    post, coef = _start(rows)
    theta = _theta(rows, post, random)
    converged, it = False, 0
    for it in range(1, max_iter + 1):  # noqa: B007
        coef_new = _m_step(rows, post, coef, ridge)
        theta_new = _theta(rows, post, random)
        post, _ = _posterior(rows, theta_new, coef_new, random)
        change = max(np.abs(theta_new - theta).max(), np.abs(coef_new - coef).max())
        theta, coef = theta_new, coef_new
        if change < tol:
            converged = True
            break
    post, loglik = _posterior(rows, theta, coef, random)
    info = _information(rows, theta, coef, random, ridge)
    cov = np.linalg.pinv(info)
    g = rows.n_groups
    se = np.sqrt(np.clip(np.diag(cov)[:g], 0, None))
    z = stats.norm.ppf(1 - alpha / 2)
    logit = special.logit(np.clip(theta, 1e-12, 1 - 1e-12))
    return CovariateFit(
        theta,
        special.expit(logit - z * se),
        special.expit(logit + z * se),
        coef,
        cov[g:, g:],
        post,
        float(loglik),
        it,
        converged,
    )


def covariate_q(coef, covariates, coef_cov=None, *, alpha=0.05) -> dict[str, np.ndarray]:
    """Each judge's q0 and q1 at given covariate values, with delta-method Wald intervals.

    Parameters
    ----------
    coef : array_like, shape (J, 2, 1 + p)
    covariates : array_like, shape (K, p)
        The covariate values to evaluate at (one row per point).
    coef_cov : array_like, optional
        The coefficients' covariance (``CovariateFit.coef_cov``); without it no interval.
    alpha : float, default 0.05

    Returns
    -------
    dict
        ``q0``, ``q1`` of shape (J, K) and, with ``coef_cov``, ``q0_ci``, ``q1_ci`` of shape
        (J, K, 2).

    Examples
    --------
    >>> coef = np.array([[[-1.0, 0.5], [2.0, 0.0]]])
    >>> out = covariate_q(coef, [[0.0], [1.0]])
    >>> np.round(out["q0"], 3).tolist(), np.round(out["q1"], 3).tolist()
    ([[0.731, 0.622]], [[0.881, 0.881]])
    """
    coef = np.asarray(coef, dtype=float)
    x = np.column_stack([np.ones(len(covariates)), np.asarray(covariates, float).reshape(
        len(covariates), -1)])  # fmt: skip
    eta = np.einsum("kp,jtp->jtk", x, coef)
    out = {"q0": special.expit(-eta[:, 0]), "q1": special.expit(eta[:, 1])}
    if coef_cov is None:
        return out
    z = stats.norm.ppf(1 - check_alpha(alpha) / 2)
    cov = np.asarray(coef_cov).reshape(*coef.shape, *coef.shape)
    for name, t, sign in (("q0", 0, -1), ("q1", 1, 1)):
        var = np.einsum("kp,jpq,kq->jk", x, cov[:, t, :, :, t, :].diagonal(axis1=0, axis2=2)
                        .transpose(2, 0, 1), x)  # fmt: skip
        se = np.sqrt(np.clip(var, 0, None))
        out[f"{name}_ci"] = np.stack(
            [special.expit(sign * eta[:, t] - z * se), special.expit(sign * eta[:, t] + z * se)],
            axis=-1,
        )
    return out


def covariate_levels(covariates) -> tuple[np.ndarray, np.ndarray]:
    """Low and high value of each covariate, where the reports show each judge's q0 and q1.

    A covariate with at most two distinct values (a position flag) gives those two; any other
    its 10th and 90th percentiles.

    Parameters
    ----------
    covariates : array_like, shape (R, p)

    Returns
    -------
    low, high : numpy.ndarray, shape (p,)

    Examples
    --------
    >>> low, high = covariate_levels(np.column_stack([[0, 1, 1, 0], [1.0, 2.0, 3.0, 4.0]]))
    >>> low.tolist(), high.tolist()
    ([0.0, 1.3], [1.0, 3.7])
    """
    x = np.asarray(covariates, dtype=float)
    x = x.reshape(len(x), -1)
    low, high = np.empty(x.shape[1]), np.empty(x.shape[1])
    for c in range(x.shape[1]):
        values = np.unique(x[:, c])
        if values.size <= 2:
            low[c], high[c] = values[0], values[-1]
        else:
            low[c], high[c] = np.percentile(x[:, c], [10, 90])
    return low, high
