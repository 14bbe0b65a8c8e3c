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
per judge and truth, solved by Newton's method) from several starts, keeping the highest
maximum (with few labels the likelihood can have more than one), and the Wald interval of
each θ_g comes from the observed information of the marginal likelihood (Louis 1982: the
gradient is the posterior mean of the complete-data gradient; the Hessian is its numerical
derivative).

The truth itself may depend on item covariates w_i (``theta_covariates``; the length
difference of a pair, say): P(Z_i = 1 | w_i) = expit(α_g + δᵀ w_i), δ shared by all groups.
Without it a truth–covariate association is read as a judge's covariate effect (a spurious
"length bias"). The reported θ_g is then the mean of expit(α_g + δᵀ w_i) over the group's test
items (unlabelled items; under the random design every item of the group, since the labelled
ones are drawn from the same items), with a delta-method Wald interval on its logit scale.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import special, stats

from bayesjudge.core._validation import check_alpha, check_design, check_seed

__all__ = [
    "N_STARTS",
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
    # the truth model: α per group then δ per theta covariate (without theta covariates:
    # logit θ per group), and its block of the inverse observed information
    theta_coef: np.ndarray | None = None
    theta_coef_cov: np.ndarray | None = None
    # EM starts run, and how many of them reached the best penalised likelihood (within
    # _SAME_OPTIMUM)
    n_starts: int = 1
    n_best: int = 1


class _Rows(NamedTuple):
    item: np.ndarray
    judge: np.ndarray
    verdict: np.ndarray
    x: np.ndarray  # (R, 1 + p) with the intercept column
    truth: np.ndarray  # (I,) -1 unknown
    group: np.ndarray  # (I,)
    n_judges: int
    n_groups: int
    tx: np.ndarray | None = None  # (I, G + p_t): group one-hot then the theta covariates


def _check(item, judge, verdict, covariates, truth, group, n_judges=None, tcov=None) -> _Rows:
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
    n_groups = int(group.max()) + 1
    tx = None if tcov is None else _truth_design(tcov, group, n_groups)
    return _Rows(item, judge, verdict.astype(float), design, truth, group, n_judges, n_groups,
                 tx)  # fmt: skip


def _truth_design(tcov, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Return the truth model's design (I, G + p_t): one-hot group, then the theta covariates."""
    w = np.asarray(tcov, dtype=float)
    n_items = group.shape[0]
    w = w.reshape(n_items, -1) if w.ndim == 1 and w.shape[0] == n_items else w
    if w.ndim != 2 or w.shape[0] != n_items or not np.isfinite(w).all():
        raise ValueError(
            f"theta_covariates must be a finite array of shape ({n_items}, p_t), one row per "
            f"item (the truth's covariates); got shape {w.shape}"
            f"{' with NaN/inf' if w.shape[:1] == (n_items,) else ''}."
        )
    return np.column_stack([np.eye(n_groups)[group], w])


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


def _posterior(rows: _Rows, prior: np.ndarray, coef: np.ndarray, random: bool):
    """P(Z_i = 1 | data) and the marginal log-likelihood; ``prior``: P(Z_i = 1), (I,)."""
    ll = _item_loglik(rows, coef)
    th = np.clip(prior, 1e-300, 1 - 1e-16)
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


def _n_truth(rows: _Rows) -> int:
    """Count the truth model's parameters: logit θ per group, or α per group and δ."""
    return rows.n_groups if rows.tx is None else rows.tx.shape[1]


def _prior(rows: _Rows, truth_params: np.ndarray) -> np.ndarray:
    """P(Z_i = 1) of every item from logit θ (G,) or from (α, δ) with theta covariates."""
    if rows.tx is None:
        return special.expit(truth_params)[rows.group]
    return special.expit(rows.tx @ truth_params)


def _gradient(rows: _Rows, params: np.ndarray, random: bool, ridge: float) -> np.ndarray:
    """Gradient of the penalised marginal log-likelihood in (truth model, coef) (Fisher).

    The truth model is logit θ per group (unpenalised), or (α, δ) with theta covariates
    (penalised like the coefficients, which keeps α finite in a group whose posteriors are
    all 0 or 1).
    """
    g = _n_truth(rows)
    coef = params[g:].reshape(rows.n_judges, 2, -1)
    prior = _prior(rows, params[:g])
    post, _ = _posterior(rows, prior, coef, random)
    use = (rows.truth < 0) | random
    if rows.tx is None:
        d_truth = np.bincount(rows.group[use], post[use] - prior[use], minlength=g)
    else:
        d_truth = rows.tx[use].T @ (post[use] - prior[use]) - ridge * params[:g]
    mu = special.expit(_eta(rows, coef))
    w = np.column_stack([1 - post[rows.item], post[rows.item]])
    resid = w * (rows.verdict[:, None] - mu)  # (R, 2)
    d_coef = np.zeros_like(coef)
    for t in (0, 1):
        np.add.at(d_coef[:, t], rows.judge, resid[:, t, None] * rows.x)
    return np.concatenate([d_truth, (d_coef - ridge * coef).ravel()])


def _information(rows: _Rows, point: np.ndarray, random: bool, ridge: float) -> np.ndarray:
    """Observed information: minus the numerical derivative of the analytic gradient."""
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


def _aggregate(rows: _Rows, tcoef: np.ndarray, cov: np.ndarray, random: bool, z: float):
    """θ_g: the mean of P(Z_i = 1 | w_i) over the group's test items, with its Wald interval.

    Under the stratified design the test (unlabelled) items; under the random design every
    item of the group (the labelled ones are a random part of the same items). A group with
    no such item averages over all its items. The interval is the delta method on logit θ_g,
    given these items' covariates.
    """
    prob = special.expit(rows.tx @ tcoef)
    theta, lower, upper = (np.empty(rows.n_groups) for _ in range(3))
    for g in range(rows.n_groups):
        mine = rows.group == g
        sel = mine & ((rows.truth < 0) | random)
        sel = sel if sel.any() else mine
        if not sel.any():  # an index no item carries: nothing to average
            theta[g] = lower[g] = upper[g] = np.nan
            continue
        p = prob[sel]
        theta[g] = p.mean()
        grad = (rows.tx[sel] * (p * (1 - p))[:, None]).mean(axis=0)
        t = np.clip(theta[g], 1e-12, 1 - 1e-12)
        se = np.sqrt(max(float(grad @ cov @ grad), 0.0)) / (t * (1 - t))
        lower[g], upper[g] = special.expit(special.logit(t) + np.array([-z, z]) * se)
    return theta, lower, upper


def covariate_log_likelihood(
    item,
    judge,
    verdict,
    covariates,
    truth,
    theta,
    coef,
    *,
    group=None,
    design="stratified",
    theta_covariates=None,
    theta_coef=None,
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
    theta : array_like, shape (G,), or None
        θ per group (None with ``theta_covariates``).
    coef : array_like, shape (J, 2, 1 + p)
        Logistic coefficients of P(says correct | t), truth 0 then 1, intercept first.
    group : array_like of int, shape (I,), optional
        The item's group (default: one group).
    design : {"stratified", "random"}
        ``"random"``: labelled items' truths count toward θ.
    theta_covariates : array_like, shape (I, p_t), optional
        Item covariates of the truth: P(Z_i = 1) = expit(α_g + δᵀ w_i).
    theta_coef : array_like, shape (G + p_t,), optional
        With ``theta_covariates``: α per group, then δ.

    Returns
    -------
    float

    Examples
    --------
    >>> round(covariate_log_likelihood([0, 0], [0, 1], [1, 1], None, [-1], [0.5],
    ...                                np.zeros((2, 2, 1))), 4)  # each verdict 1/2
    -1.3863
    >>> round(covariate_log_likelihood([0, 0], [0, 1], [1, 1], None, [-1], None,
    ...                                np.zeros((2, 2, 1)), theta_covariates=[[2.0]],
    ...                                theta_coef=[0.0, 1.0]), 4)  # the truth no longer matters
    -1.3863
    """
    rows = _check(item, judge, verdict, covariates, truth, group, np.shape(coef)[0],
                  theta_covariates)  # fmt: skip
    random = check_design(design, "design") == "random"
    if rows.tx is None:
        prior = np.asarray(theta, float)[rows.group]
    else:
        tcoef = np.asarray(theta_coef if theta_coef is not None else [], dtype=float)
        if tcoef.shape != (rows.tx.shape[1],):
            raise ValueError(
                f"With theta_covariates, theta_coef must hold α per group then δ per theta "
                f"covariate: {rows.tx.shape[1]} values; got shape {tcoef.shape}."
            )
        prior = special.expit(rows.tx @ tcoef)
    return float(_posterior(rows, prior, np.asarray(coef, float), random)[1])


def _em(rows: _Rows, random: bool, ridge: float, max_iter: int, tol: float, post=None):
    """EM from posteriors ``post`` (default: the majority vote's).

    Returns (truth parameters, coef, iterations, converged). The truth parameters are θ per
    group, or (α, δ) with theta covariates (their M-step: a ridge logistic regression of the
    posteriors on the truth design over the items that inform the truth model).
    """
    vote, coef = _start(rows)
    post = vote if post is None else post
    use = (rows.truth < 0) | random
    theta = _theta(rows, post, random)
    if rows.tx is not None:
        tpar = np.zeros(rows.tx.shape[1])
        tpar[: rows.n_groups] = special.logit(np.clip(theta, 0.01, 0.99))
    converged, it = False, 0
    for it in range(1, max_iter + 1):  # noqa: B007
        coef_new = _m_step(rows, post, coef, ridge)
        if rows.tx is None:
            new = _theta(rows, post, random)
            prior = new[rows.group]
        else:
            new = _newton(rows.tx[use], post[use], np.ones(use.sum()), tpar, ridge)
            prior = special.expit(rows.tx @ new)
        post, _ = _posterior(rows, prior, coef_new, random)
        old = theta if rows.tx is None else tpar
        change = max(np.abs(new - old).max(), np.abs(coef_new - coef).max())
        coef = coef_new
        if rows.tx is None:
            theta = new
        else:
            tpar = new
        if change < tol:
            converged = True
            break
    return (theta if rows.tx is None else tpar), coef, it, converged


#: Two EM runs whose penalised log-likelihoods differ by less than this reached one optimum;
#: another start replaces the majority vote's only when it is better by more.
_SAME_OPTIMUM = 1e-6
#: Default EM starts of :func:`covariate_dawid_skene`: the vote, the labels-only fit, 3 random.
N_STARTS = 5


def _labels_only_start(rows: _Rows, ridge: float):
    """Posteriors under each judge's coefficients fitted on the labelled items alone.

    None where some judge lacks labelled items of either truth (its coefficients for that
    truth would rest on the ridge alone). The prior is the labelled share of truth 1.
    """
    known = rows.truth >= 0
    mine = known[rows.item]
    sub = rows._replace(item=rows.item[mine], judge=rows.judge[mine],
                        verdict=rows.verdict[mine], x=rows.x[mine])  # fmt: skip
    for t in (0, 1):
        has = np.bincount(sub.judge[rows.truth[sub.item] == t], minlength=rows.n_judges)
        if (has == 0).any():
            return None
    _, coef = _start(rows)
    coef = _m_step(sub, rows.truth.astype(float), coef, ridge)
    prior = np.full(rows.truth.shape, rows.truth[known].mean())
    return _posterior(rows, prior, coef, False)[0]


def _random_start(rows: _Rows, rng: np.random.Generator):
    """Return posteriors at random parameters.

    Every judge better than chance (q in 0.55-0.95), covariate slopes N(0, 0.5²), and a truth
    model of N(0, 1) log-odds (α and δ with theta covariates).
    """
    coef = np.zeros((rows.n_judges, 2, rows.x.shape[1]))
    q = rng.uniform(0.55, 0.95, size=(rows.n_judges, 2))
    coef[:, 0, 0], coef[:, 1, 0] = -special.logit(q[:, 0]), special.logit(q[:, 1])
    coef[:, :, 1:] = rng.normal(0.0, 0.5, size=coef[:, :, 1:].shape)
    logit = rng.normal(0.0, 1.0, size=_n_truth(rows))
    return _posterior(rows, _prior(rows, logit), coef, False)[0]


def _penalised(rows: _Rows, tpar, coef, random: bool, ridge: float) -> float:
    """Return the objective EM climbs: the log-likelihood minus the ridge penalty."""
    prior = tpar[rows.group] if rows.tx is None else _prior(rows, tpar)
    penalty = (coef**2).sum() + (0.0 if rows.tx is None else (tpar**2).sum())
    return _posterior(rows, prior, coef, random)[1] - ridge / 2 * penalty


def _multi_em(rows: _Rows, random, ridge, max_iter, tol, n_starts: int, rng):
    """EM from the vote, the labels-only fit and random starts; the best, and how many got it.

    Returns (truth parameters, coef, iterations, converged, n_starts run, n at the best).
    """
    starts = [None]
    if n_starts > 1:
        labels = _labels_only_start(rows, ridge)
        starts += [] if labels is None else [labels]
    while len(starts) < n_starts:
        starts.append(_random_start(rows, rng))
    runs = [_em(rows, random, ridge, max_iter, tol, post) for post in starts]
    value = np.array([_penalised(rows, r[0], r[1], random, ridge) for r in runs])
    value = np.where(np.isfinite(value), value, -np.inf)
    best = 0 if value[0] >= value.max() - _SAME_OPTIMUM else int(np.argmax(value))
    n_best = int((value >= value.max() - _SAME_OPTIMUM).sum())
    return (*runs[best], len(runs), n_best)


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
    theta_covariates=None,
    n_starts=N_STARTS,
    random_seed=0,
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
        With ``theta_covariates`` it also applies to α and δ.
    max_iter, tol : int, float
        EM iterations and the stopping rule (largest change of θ and the coefficients).
    theta_covariates : array_like, shape (I, p_t), optional
        Item covariates of the truth (one row per item, centred and scaled like
        ``covariates``): P(Z_i = 1 | w_i) = expit(α_g + δᵀ w_i) with δ shared by all groups.
        None (default): θ constant within a group, as before.
    n_starts : int, default 5
        EM runs: from the majority vote, from the judges' coefficients fitted on the labelled
        items alone (where every judge has labelled items of both truths), and from random
        parameters (every judge better than chance, random slopes and δ) for the rest. The
        fit with the highest penalised log-likelihood is kept; the vote's unless another is
        better by more than 1e-6. 1: the vote's alone.
    random_seed : int, numpy.random.Generator or None, default 0
        Seed of the random starts (a fixed default, so that a fit is reproducible).

    Returns
    -------
    CovariateFit
        With ``theta_covariates``, ``theta`` is θ_g aggregated over the group's test items
        (every item of the group under the random design) and ``theta_coef`` holds α_g then
        δ; without, ``theta_coef`` is logit θ_g. ``theta_coef_cov`` is their covariance.
        ``n_starts`` EM runs were made and ``n_best`` of them reached the best optimum (within
        1e-6 of its penalised log-likelihood): fewer than all say the likelihood has several
        maxima.

    Notes
    -----
    With no covariate the model is Dawid–Skene (:func:`bayesjudge.core.jury.dawid_skene`),
    which the tests check to 1e-6. The interval is the Wald interval of logit θ_g with the
    inverse observed information of all parameters (θ's and every coefficient); its coverage
    is checked by simulation in ``tests/core/test_jury_covariates.py``. Under the stratified
    design the labelled items' truths were fixed by the design and do not inform the truth
    model (θ or α, δ); under the random design they do.

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

    A truth that depends on an item covariate w (δ = 1):

    >>> w = rng.normal(size=300)
    >>> truth = (rng.random(300) < 1 / (1 + np.exp(-w))).astype(int)
    >>> verdict = (rng.random(900) < np.where(truth[items] == 1, 0.9, 0.2)).astype(int)
    >>> fit = covariate_dawid_skene(items, judges, verdict, x, np.where(np.arange(300) < 60,
    ...                             truth, -1), theta_covariates=w)
    >>> fit.theta_coef.shape, bool(fit.theta_coef[1] > 0)  # α, then δ
    ((2,), True)
    """
    rows = _check(item, judge, verdict, covariates, truth, group, tcov=theta_covariates)
    random = check_design(design, "design") == "random"
    alpha = check_alpha(alpha)
    ok = isinstance(n_starts, int | np.integer) and not isinstance(n_starts, bool)
    if not ok or n_starts < 1:
        raise ValueError(
            f"n_starts must be a whole number of EM starts, at least 1; got {n_starts!r}. "
            f"Use 1 for the majority vote's start alone."
        )
    rng = np.random.default_rng(check_seed(random_seed))
    tpar, coef, it, converged, n_run, n_best = _multi_em(
        rows, random, ridge, max_iter, tol, int(n_starts), rng
    )
    z = stats.norm.ppf(1 - alpha / 2)
    g = _n_truth(rows)
    if rows.tx is None:
        theta, prior = tpar, tpar[rows.group]
        point = special.logit(np.clip(theta, 1e-9, 1 - 1e-9))
    else:
        point, prior = tpar, _prior(rows, tpar)
    post, loglik = _posterior(rows, prior, coef, random)
    info = _information(rows, np.concatenate([point, coef.ravel()]), random, ridge)
    cov = np.linalg.pinv(info)
    if rows.tx is None:
        se = np.sqrt(np.clip(np.diag(cov)[:g], 0, None))
        logit = special.logit(np.clip(theta, 1e-12, 1 - 1e-12))
        lower, upper = special.expit(logit - z * se), special.expit(logit + z * se)
    else:
        theta, lower, upper = _aggregate(rows, tpar, cov[:g, :g], random, z)
    return CovariateFit(
        theta,
        lower,
        upper,
        coef,
        cov[g:, g:],
        post,
        float(loglik),
        it,
        converged,
        point,
        cov[:g, :g],
        n_run,
        n_best,
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
