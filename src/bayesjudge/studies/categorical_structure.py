"""Structured confusions for small calibration sets: what they buy when they hold, cost when not.

Issue 16's study of :mod:`bayesjudge.models.confusion_structures`. In every replication a
judge with a known confusion matrix C grades ``n`` test items of true category shares θ and
``m`` labelled items per truth category (the stratified design); the posterior of θ and of a
score estimand is computed twice on the same data, with the free confusion and with the
structure, each with the priors :func:`bayesjudge.models.categorical.fit_categorical` gives it
by default (θ ~ Dirichlet(1); free rows ~ Dirichlet(1/K), Perks's prior; the symmetric
structure's free rows the same; the ordinal judge ``ORDINAL_PRIOR``), and the study records
coverage of the 95 % equal-tailed interval, its mean width and the bias of the posterior mean,
each with its Monte Carlo SE.

``structure="symmetric"``
    Pairwise preferences ``[A, tie, B]``, θ = (0.45, 0.20, 0.35), score = win rate of A with
    ties counted half (1, ½, 0). The judge (:func:`bayesjudge.simulate.preference_confusion`,
    accuracy 0.75, tie rate 0.10, tie accuracy 0.60) is mirror-symmetric (``"holds"``) or has a
    position bias of 0.10 towards A (``"violated"``: 0.10 of every row's probability moved from
    verdict B to verdict A).
``structure="ordinal"``
    A 1–5 rubric, θ = (0.10, 0.20, 0.30, 0.25, 0.15), score = mean grade. The judge is the
    cumulative-logit judge :func:`bayesjudge.simulate.rubric_confusion` (spread 0.35: 61 % right
    on a middle grade, 19 % one grade off either way, 1 % two off; ``"holds"``) or that judge
    jumping two grades down (up from the two lowest grades) on 20 % of the items
    (``"violated"``).

The posteriors come from a sampler written here in numpy (:func:`posterior_draws`): data
augmentation (the true categories of the test items given θ and C, then θ) alternates with
Metropolis–Hastings moves of the confusion that keep the test verdict shares fixed — exact
draws from the calibration posterior for the free and symmetric rows (Dirichlet, conjugate), an
adaptive random walk for the ordinal judge's 2K − 2 parameters. It targets the posterior of
:func:`~bayesjudge.models.categorical.fit_categorical` with ``calibration="separate"`` and the
default priors, read from their definitions
(:data:`~bayesjudge.core.categorical_posterior.THETA_PRIOR`,
:func:`~bayesjudge.core.categorical_posterior.default_confusion_prior`,
``ORDINAL_PRIOR`` of :mod:`bayesjudge.models.confusion_structures`), and runs all replications
of a design point at once: the full run takes about 40 s of CPU, where NUTS would need hours.
``run(confusion_prior=1)`` gives both models flat Dirichlet(1) rows, the default when the
study was first recorded. ``tests/studies/test_categorical_structure.py`` checks the sampler
against the exact binary posterior (:mod:`bayesjudge.core.exact`) at K = 2 and grid quadratures
of the structured K = 2 models; ``tests/models/test_confusion_structures.py`` (slow) against
``fit_categorical`` itself.

Measured with the defaults (100 data sets per point, n = 500; models/categorical-symmetric.md
and models/categorical-ordinal.md hold the tables,
``benchmarks/studies/results/categorical-structure/`` the recording): where the structure
holds it narrows the score interval by 45–52 % (symmetric: 0.479 → 0.265 at m = 10,
0.304 → 0.147 at m = 40) and by 20 % and 6 % (ordinal: 0.630 → 0.507, 0.360 → 0.338) at
nominal coverage; a position bias of 0.10 makes the symmetric score interval miss almost always
(coverage 0.00–0.01, bias +0.17 to +0.18), while two-grade jumps on 20 % of items cost the
ordinal model little at these sizes (coverage 0.91–0.93, bias up to −0.06). With flat free rows
the free model was wider, most of all at K = 5, and the gains read 46–54 % (symmetric) and
20–44 % (ordinal).

Seeding: each design point (structure, scenario, m) has its own stream derived from
``random_seed`` and the point (:func:`~bayesjudge.studies._framework.point_rngs`); the free
and structured posteriors see the same data sets.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import special

from bayesjudge._lazy import bayesian
from bayesjudge.core.categorical_posterior import THETA_PRIOR, default_confusion_prior
from bayesjudge.simulate import preference_confusion, rubric_confusion
from bayesjudge.studies._framework import (
    StudyResult,
    check_grid,
    check_number,
    check_reps,
    check_seed,
    mcse_mean,
    mcse_proportion,
    point_rngs,
    progress_bar,
    study_attrs,
)

__all__ = [
    "DEFAULT_SEED",
    "ESTIMANDS",
    "MODELS",
    "QUICK_OPTIONS",
    "QUICK_REPS",
    "SCENARIOS",
    "SETTINGS",
    "STRUCTURES",
    "plot",
    "posterior_draws",
    "run",
    "scenario_confusion",
]

NAME = "categorical-structure"
DEFAULT_SEED = 20_261_127
STRUCTURES = ("symmetric", "ordinal")
SCENARIOS = ("holds", "violated")
MODELS = ("free", "structured")
#: theta[i] is θ of the structure's i-th category (NaN where the structure has fewer).
ESTIMANDS = ("score", "theta[0]", "theta[1]", "theta[2]", "theta[3]", "theta[4]")
SETTINGS = {
    "symmetric": {
        "categories": ["A", "tie", "B"],
        "theta": [0.45, 0.20, 0.35],
        "scores": [1.0, 0.5, 0.0],
        "judge": {"accuracy": 0.75, "tie_rate": 0.10, "tie_accuracy": 0.60, "bias": 0.10},
    },
    "ordinal": {
        "categories": [1, 2, 3, 4, 5],
        "theta": [0.10, 0.20, 0.30, 0.25, 0.15],
        "scores": [1.0, 2.0, 3.0, 4.0, 5.0],
        "judge": {"spread": 0.35, "jump_rate": 0.20},
    },
}
#: ``bayesjudge study categorical-structure --quick``.
QUICK_REPS = 50
QUICK_OPTIONS = {"m": [10], "iterations": 600}


# ----------------------------------------------------------------------------- the judges


def scenario_confusion(structure: str, scenario: str) -> np.ndarray:
    """Return the judge's confusion matrix (truth × verdict) of a design point of the study.

    Examples
    --------
    >>> scenario_confusion("symmetric", "violated").round(2).tolist()
    [[0.85, 0.1, 0.05], [0.3, 0.6, 0.1], [0.25, 0.1, 0.65]]
    >>> c = scenario_confusion("ordinal", "violated")
    >>> c.shape, round(float(c[4, 2] - 0.8 * scenario_confusion("ordinal", "holds")[4, 2]), 12)
    ((5, 5), 0.2)
    """
    judge = SETTINGS[structure]["judge"]
    bias = judge.get("bias", 0.0) if scenario == "violated" else 0.0
    if structure == "symmetric":
        return preference_confusion(
            judge["accuracy"], judge["tie_rate"], tie_accuracy=judge["tie_accuracy"], bias=bias
        )
    base = rubric_confusion(len(SETTINGS[structure]["categories"]), judge["spread"])
    if scenario == "holds":
        return base
    k = base.shape[0]
    # A judge that sometimes skips a grade: two down, or two up from the two lowest grades.
    jump = np.zeros((k, k))
    for t in range(k):
        jump[t, t - 2 if t >= 2 else t + 2] = 1.0
    return (1 - judge["jump_rate"]) * base + judge["jump_rate"] * jump


# ----------------------------------------------------------------------------- the sampler


def _dirichlet(rng, alpha):
    g = rng.standard_gamma(alpha)
    return g / g.sum(axis=-1, keepdims=True)


def _confusion_free(rng, table, alpha):
    return _dirichlet(rng, alpha + table)


def _confusion_symmetric(rng, table, alpha):
    """Conjugate update of the mirror-symmetric rows (tie row symmetric, as the default).

    ``alpha`` is the Dirichlet concentration of every cell; a tie-row pair of mirror cells
    gets 2 ``alpha`` (the models' ``_tie_dirichlet``: the pair total's law under a free row).
    """
    k = table.shape[-1]
    half = k // 2
    out = np.empty_like(table, dtype=float)
    side = table[:, :half, :] + table[:, ::-1, ::-1][:, :half, :]
    rows = _dirichlet(rng, alpha + side)
    out[:, :half] = rows
    out[:, k - half :] = rows[:, ::-1, ::-1]
    if k % 2:
        h = half
        pairs = table[:, h, :h] + table[:, h, ::-1][:, :h]
        counts = np.concatenate([pairs, table[:, h, h : h + 1]], axis=-1)
        w = _dirichlet(rng, np.append(np.full(h, 2 * alpha), alpha) + counts)
        out[:, h] = np.concatenate([w[:, :h] / 2, w[:, h:], w[:, :h][:, ::-1] / 2], axis=-1)
    return out


def _ordinal_prior_arrays(prior: dict, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-parameter Normal means and sds of the ordinal judge (models' ORDINAL_PRIOR)."""
    kinds = ["cutpoint"] + ["log_gap"] * (k - 2) + ["log_step"] * (k - 1)
    return (np.array([prior[kind][0] for kind in kinds]),
            np.array([prior[kind][1] for kind in kinds]))  # fmt: skip


def _ordinal_log_rows(u, k):
    """Return log C of the cumulative-logit judge from its raw parameters u (…, 2K − 2)."""
    kappa = u[..., :1] + np.concatenate(
        [np.zeros((*u.shape[:-1], 1)), np.cumsum(np.exp(u[..., 1 : k - 1]), axis=-1)], axis=-1
    )
    eta = np.concatenate(
        [np.zeros((*u.shape[:-1], 1)), np.cumsum(np.exp(u[..., k - 1 :]), axis=-1)], axis=-1
    )
    upper = kappa[..., None, :] - eta[..., :, None]  # (…, K, K − 1)
    a, b = upper[..., :-1], upper[..., 1:]
    with np.errstate(divide="ignore"):
        middle = special.log_expit(b) + special.log_expit(-a) + np.log(-np.expm1(a - b))
    log_c = np.concatenate(
        [special.log_expit(upper[..., :1]), middle, special.log_expit(-upper[..., -1:])], axis=-1
    )
    return log_c - special.logsumexp(log_c, axis=-1, keepdims=True)


def _ordinal_target(u, table, k, mean, sd):
    log_c = _ordinal_log_rows(u, k)
    loglik = np.where(table > 0, table * log_c, 0.0).sum(axis=(-1, -2))
    return loglik - 0.5 * (((u - mean) / sd) ** 2).sum(axis=-1)


def _remap(rng, theta, conf, proposal, log_ratio, theta_alpha):
    """Accept or reject a new confusion with θ moved so that the verdict shares stay fixed.

    With p = Cᵀθ held fixed, θ* = (C*ᵀ)⁻¹ p; the test likelihood cancels, θ's Dirichlet
    (``theta_alpha``) prior contributes (α − 1) Σ log(θ*/θ) (0 for the flat default), and the
    map's Jacobian on the simplex is |det C| / |det C*| (C 1 = 1, so the map fixes the
    hyperplane Σθ = 1). ``log_ratio`` holds the rest of the Metropolis–Hastings ratio of the
    confusion move. Returns (accepted mask, θ, C).
    """
    det_old = np.abs(np.linalg.det(conf))
    det_new = np.abs(np.linalg.det(proposal))
    ok = det_new > 1e-12
    safe = np.where(ok[:, None, None], proposal, np.eye(conf.shape[-1]))
    shares = np.einsum("rt,rtv->rv", theta, conf)
    moved = np.linalg.solve(np.swapaxes(safe, 1, 2), shares[..., None])[..., 0]
    ok &= (moved >= 0).all(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = log_ratio + np.log(det_old) - np.log(np.where(ok, det_new, 1.0))
        if theta_alpha != 1.0:
            log_ratio = log_ratio + (theta_alpha - 1.0) * (
                np.log(np.where(ok[:, None], moved, 1.0)) - np.log(theta)
            ).sum(-1)
    accept = ok & (np.log(rng.random(len(theta))) < np.nan_to_num(log_ratio, nan=-np.inf))
    theta = np.where(accept[:, None], moved / moved.sum(-1, keepdims=True), theta)
    return accept, theta, np.where(accept[:, None, None], proposal, conf)


class _OrdinalMove:
    """Adaptive random-walk proposals of the ordinal judge's parameters, all reps at once.

    The target of the walk is the calibration posterior (prior × calibration likelihood);
    :func:`_remap` adds the test data. During warm-up each replication's step scale follows
    Robbins–Monro towards an acceptance of 0.25, and halfway through warm-up the proposal
    takes the covariance of the draws so far (Haario et al. 2001). After warm-up the kernel is
    fixed, so the chain is a valid Metropolis–Hastings chain.
    """

    def __init__(self, reps, k, prior, warmup, cal, theta_alpha):
        self.k, self.warmup, self.cal, self.theta_alpha = k, warmup, cal, theta_alpha
        self.mean, self.sd = _ordinal_prior_arrays(prior, k)
        d = len(self.mean)
        self.u = np.broadcast_to(self.mean, (reps, d)).copy()
        self.log_scale = np.full(reps, np.log(0.3))
        self.chol = np.broadcast_to(np.eye(d), (reps, d, d)).copy()
        self.target = _ordinal_target(self.u, cal, k, self.mean, self.sd)
        self.history, self.accepted, self.proposed = [], 0, 0

    def confusion(self):
        return np.exp(_ordinal_log_rows(self.u, self.k))

    def __call__(self, rng, theta, conf, iteration):
        step = np.einsum("rij,rj->ri", self.chol, rng.standard_normal(self.u.shape))
        proposal = self.u + np.exp(self.log_scale)[:, None] * step
        target = _ordinal_target(proposal, self.cal, self.k, self.mean, self.sd)
        new_conf = np.exp(_ordinal_log_rows(proposal, self.k))
        accept, theta, conf = _remap(
            rng, theta, conf, new_conf, target - self.target, self.theta_alpha
        )
        self.u[accept], self.target[accept] = proposal[accept], target[accept]
        if iteration < self.warmup:
            self.log_scale += (accept - 0.25) / np.sqrt(iteration + 1)
            self.history.append(self.u.copy())
            d = self.u.shape[-1]
            if iteration == self.warmup // 2 and len(self.history) > 4 * d:
                draws = np.stack(self.history[len(self.history) // 2 :], axis=1)
                centred = draws - draws.mean(1, keepdims=True)
                cov = np.einsum("rsi,rsj->rij", centred, centred) / (draws.shape[1] - 1)
                self.chol = np.linalg.cholesky(cov + 1e-6 * np.eye(d))
                self.log_scale[:] = np.log(2.38 / np.sqrt(d))
        else:
            self.accepted += int(accept.sum())
            self.proposed += accept.size
        return theta, conf


def posterior_draws(
    test,
    calibration,
    *,
    confusion: str,
    iterations: int = 2000,
    rng,
    ordinal_prior=None,
    confusion_prior: float | None = None,
    theta_prior: float | None = None,
) -> tuple[np.ndarray, dict]:
    """Posterior draws of θ for many independent data sets at once (MCMC in numpy).

    Each iteration (a) draws the true categories of the test items given θ and C, then θ
    given them (data augmentation: θ | C mixes fast), and (b) proposes a new confusion C*
    — for ``"free"`` and ``"symmetric"`` an exact draw from its calibration-only posterior
    (Dirichlet, conjugate), for ``"ordinal"`` a random-walk step of its parameters — moving θ
    to θ* = (C*ᵀ)⁻¹ Cᵀθ so that the test verdict shares stay put, and accepts it by
    Metropolis–Hastings (:func:`_remap`). Step (b) moves along the ridge of the posterior that
    data augmentation alone crosses slowly when the calibration sets are small.

    The priors are those of :func:`bayesjudge.models.categorical.fit_categorical` with
    ``calibration="separate"`` and default ``CategoricalPriors()``, read from the same
    definitions: θ ~ Dirichlet(:data:`~bayesjudge.core.categorical_posterior.THETA_PRIOR`),
    every free row (and the symmetric structure's free rows) ~ Dirichlet(1/K, …, 1/K)
    (:func:`~bayesjudge.core.categorical_posterior.default_confusion_prior`), a symmetric
    tie row's half-cells ~ Dirichlet(2/K, …, 2/K, 1/K), the ordinal judge's parameters
    ~ ``ORDINAL_PRIOR``.

    Parameters
    ----------
    test : array_like of int, shape (R, K)
        Test verdict counts of R independent data sets (one group each).
    calibration : array_like of int, shape (R, K, K)
        Calibration counts, rows = truth, columns = verdict (stratified design).
    confusion : {"free", "symmetric", "ordinal"}
        The confusion model.
    iterations : int, default 2000
        Iterations; the first quarter is warm-up and is dropped.
    rng : numpy.random.Generator
        The random stream.
    ordinal_prior : dict, optional
        ``ORDINAL_PRIOR`` of :mod:`bayesjudge.models.confusion_structures` (needed for
        ``"ordinal"``).
    confusion_prior : float, optional
        Dirichlet concentration of every confusion cell (``"free"``, ``"symmetric"``), as
        ``CategoricalPriors(confusion=...)``; default the models' Perks 1/K. ``1`` gives the
        flat rows this study was first recorded with.
    theta_prior : float, optional
        Dirichlet concentration of θ, as ``CategoricalPriors(theta=...)``; default
        ``THETA_PRIOR`` (1, flat).

    Returns
    -------
    theta : numpy.ndarray, shape (iterations − warm-up, R, K)
    info : dict
        ``"acceptance"``: the acceptance rate of the confusion moves after warm-up;
        ``"confusion_prior"``, ``"theta_prior"``: the concentrations used.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> theta, info = posterior_draws([[50, 30, 20]], [[[18, 1, 1], [2, 16, 2], [0, 2, 18]]],
    ...                               confusion="symmetric", iterations=400, rng=rng)
    >>> theta.shape, round(info["confusion_prior"], 4)
    ((300, 1, 3), 0.3333)
    """
    if confusion not in ("free", *STRUCTURES):
        raise ValueError(f"confusion must be 'free', 'symmetric' or 'ordinal'; got {confusion!r}.")
    if confusion == "ordinal" and ordinal_prior is None:
        raise ValueError("confusion='ordinal' needs ordinal_prior (ORDINAL_PRIOR of "
                         "bayesjudge.models.confusion_structures).")  # fmt: skip
    test = np.asarray(test, dtype=np.int64)
    cal = np.asarray(calibration, dtype=np.int64)
    reps, k = test.shape
    alpha, theta_alpha = (
        check_number(name, value, low=0, low_open=True, allow_none=True) or default
        for name, value, default in (
            ("confusion_prior", confusion_prior, default_confusion_prior(k)),
            ("theta_prior", theta_prior, THETA_PRIOR),
        )
    )
    warmup = iterations // 4
    theta = np.full((reps, k), 1.0 / k)
    move = (
        _OrdinalMove(reps, k, ordinal_prior, warmup, cal, theta_alpha)
        if confusion == "ordinal"
        else None
    )
    exact = {"free": _confusion_free, "symmetric": _confusion_symmetric}.get(confusion)
    conf = move.confusion() if move is not None else exact(rng, cal, alpha)
    out = np.empty((iterations - warmup, reps, k))
    accepted = proposed = 0
    for it in range(iterations):
        # Truth of the test items given their verdicts: P(t | v) ∝ θ_t C[t, v].
        joint = theta[:, :, None] * conf  # (R, truth, verdict)
        given_verdict = np.swapaxes(joint / joint.sum(axis=1, keepdims=True), 1, 2)
        given_verdict /= given_verdict.sum(-1, keepdims=True)
        latent = rng.multinomial(test, given_verdict)  # (R, verdict, truth)
        theta = _dirichlet(rng, theta_alpha + latent.sum(axis=1))
        if move is not None:
            theta, conf = move(rng, theta, conf, it)
        else:
            accept, theta, conf = _remap(rng, theta, conf, exact(rng, cal, alpha), 0.0, theta_alpha)
            if it >= warmup:
                accepted, proposed = accepted + int(accept.sum()), proposed + reps
        if it >= warmup:
            out[it - warmup] = theta
    if move is not None:
        accepted, proposed = move.accepted, move.proposed
    info = {"acceptance": accepted / max(proposed, 1), "confusion_prior": alpha,
            "theta_prior": theta_alpha}  # fmt: skip
    return out, info


# ----------------------------------------------------------------------------- the study


def _simulate(rng, structure, scenario, n, m, reps):
    settings = SETTINGS[structure]
    theta = np.asarray(settings["theta"])
    conf = scenario_confusion(structure, scenario)
    test = rng.multinomial(n, theta @ conf, size=reps)
    cal = np.stack([rng.multinomial(m, conf[t], size=reps) for t in range(len(theta))], axis=1)
    return test, cal


def _summaries(draws, truth, scores, alpha):
    """(estimand, rep) posterior mean, lower and upper of the score and every θ_i."""
    values = [draws @ np.asarray(scores)] + [draws[..., i] for i in range(draws.shape[-1])]
    truths = [float(np.dot(truth, scores)), *truth]
    out = []
    for value, true in zip(values, truths, strict=True):
        lower, upper = np.quantile(value, [alpha / 2, 1 - alpha / 2], axis=0)
        out.append((value.mean(axis=0), lower, upper, true))
    return out


def _point(structure, scenario, m, *, n, reps, iterations, alpha, seed, prior, confusion_prior):
    rng_data, rng_free, rng_structured = point_rngs(
        seed, STRUCTURES.index(structure), SCENARIOS.index(scenario), m, count=3
    )
    test, cal = _simulate(rng_data, structure, scenario, n, m, reps)
    settings = SETTINGS[structure]
    result = {}
    for model, rng in (("free", rng_free), ("structured", rng_structured)):
        kind = "free" if model == "free" else structure
        draws, info = posterior_draws(
            test, cal, confusion=kind, iterations=iterations, rng=rng, ordinal_prior=prior,
            confusion_prior=confusion_prior,
        )  # fmt: skip
        rows = _summaries(draws, np.asarray(settings["theta"]), settings["scores"], alpha)
        metrics = np.full((len(ESTIMANDS), 6), np.nan)
        for e, (mean, lower, upper, true) in enumerate(rows):
            covered = (lower <= true) & (true <= upper)
            error = mean - true
            metrics[e] = [covered.mean(), mcse_proportion(covered.mean(), reps),
                          (upper - lower).mean(), mcse_mean(upper - lower),
                          error.mean(), mcse_mean(error)]  # fmt: skip
        result[model] = (metrics, info["acceptance"])
    return result


def run(
    *,
    reps: int = 100,
    random_seed: int = DEFAULT_SEED,
    progress: bool = False,
    structure=STRUCTURES,
    m=(10, 40),
    n: int = 500,
    iterations: int = 2000,
    alpha: float = 0.05,
    confusion_prior: float | None = None,
) -> StudyResult:
    """Run the study: free against structured confusion posteriors on small calibration sets.

    Parameters
    ----------
    reps : int, default 100
        Simulated data sets per design point (structure, scenario, m).
    random_seed : int
        Seed of the data and of the samplers.
    progress : bool, default False
        Show a progress bar over the design points.
    structure : str or sequence of {"symmetric", "ordinal"}, default both
        The structures studied.
    m : int or sequence of int, default (10, 40)
        Labelled items per truth category.
    n : int, default 500
        Test items per data set.
    iterations : int, default 2000
        Sampler iterations per data set (a quarter warm-up).
    alpha : float, default 0.05
        1 − the interval's probability.
    confusion_prior : float, optional
        Dirichlet concentration of every cell of the free rows (and the symmetric structure's
        rows), as ``CategoricalPriors(confusion=...)``; default the models' Perks 1/K
        (:func:`~bayesjudge.core.categorical_posterior.default_confusion_prior`). ``1``
        reproduces the first recording, with flat rows.

    Returns
    -------
    StudyResult
        Table over (structure, scenario, m, model, estimand): ``coverage``, ``width``,
        ``bias``, each with ``<name>_mcse``; ``acceptance`` of the ordinal Metropolis step.

    Examples
    --------
    >>> res = run(reps=2, structure="symmetric", m=10, n=50, iterations=40, random_seed=1)
    >>> dict(res.table["coverage"].sizes)
    {'structure': 1, 'scenario': 2, 'm': 1, 'model': 2, 'estimand': 6}
    """
    reps = check_reps(reps)
    seed = check_seed(random_seed)
    structures = (structure,) if isinstance(structure, str) else tuple(structure)
    bad = [s for s in structures if s not in STRUCTURES]
    if bad or not structures:
        raise ValueError(f"structure must be among {list(STRUCTURES)}; got {structure!r}.")
    m_grid = check_grid("m", m, low=1, integer=True)
    n = check_number("n", n, low=1, integer=True)
    iterations = check_number("iterations", iterations, low=8, integer=True)
    alpha = check_number("alpha", alpha, low=0, high=1, low_open=True, high_open=True)
    confusion_prior = check_number(
        "confusion_prior", confusion_prior, low=0, low_open=True, allow_none=True
    )
    row_prior = {
        s: confusion_prior or default_confusion_prior(len(SETTINGS[s]["categories"]))
        for s in structures
    }
    prior = _ordinal_prior_from_models() if "ordinal" in structures else None
    shape = (len(structures), len(SCENARIOS), len(m_grid), len(MODELS), len(ESTIMANDS))
    names = ("coverage", "coverage_mcse", "width", "width_mcse", "bias", "bias_mcse")
    table = {name: np.full(shape, np.nan) for name in names}
    acceptance = np.full(shape[:4], np.nan)
    points = [
        (i, j, k) for i in range(len(structures)) for j in range(2) for k in range(len(m_grid))
    ]
    bar = progress_bar(len(points), f"study {NAME}", progress)
    for i, j, k in points:
        res = _point(structures[i], SCENARIOS[j], m_grid[k], n=n, reps=reps,
                     iterations=iterations, alpha=alpha, seed=seed, prior=prior,
                     confusion_prior=confusion_prior)  # fmt: skip
        for mi, model in enumerate(MODELS):
            metrics, acc = res[model]
            for c, name in enumerate(names):
                table[name][i, j, k, mi] = metrics[:, c]
            acceptance[i, j, k, mi] = acc
        bar.update()
    dims = ("structure", "scenario", "m", "model", "estimand")
    ds = xr.Dataset(
        {name: (dims, values) for name, values in table.items()}
        | {"acceptance": (dims[:4], acceptance)},
        coords={
            "structure": list(structures),
            "scenario": list(SCENARIOS),
            "m": list(m_grid),
            "model": list(MODELS),
            "estimand": list(ESTIMANDS),
        },
    )
    ds.attrs = study_attrs(
        NAME, reps=reps, random_seed=seed, n=n, m=list(m_grid), iterations=iterations,
        alpha=alpha, ci_kind="eti", ci_prob=1 - alpha, engine="numpy-mcmc",
        settings_by_structure={s: SETTINGS[s] for s in structures},
        theta_prior=THETA_PRIOR, confusion_prior_by_structure=row_prior,
        confusions={f"{s}/{c}": scenario_confusion(s, c).round(6).tolist()
                    for s in structures for c in SCENARIOS},
    )  # fmt: skip
    return StudyResult(NAME, ds, plot)


def _ordinal_prior_from_models() -> dict:
    # The ordinal prior is defined beside the PyMC structure (one definition); loading it
    # imports PyMC, so only when the ordinal structure is studied (bayesjudge._lazy).
    return bayesian("confusion_structures").ORDINAL_PRIOR


def plot(table: xr.Dataset):
    """Coverage and width of the score interval, free against structured, per scenario."""
    import matplotlib.pyplot as plt

    structures = table["structure"].values.tolist()
    fig, axes = plt.subplots(2, len(structures), figsize=(5 * len(structures), 7), squeeze=False)
    level = 1 - float(table.attrs["alpha"])
    for col, structure in enumerate(structures):
        score = table.sel(structure=structure, estimand="score")
        for scenario, style in zip(SCENARIOS, ("-", "--"), strict=True):
            for model, marker in zip(MODELS, ("o", "s"), strict=True):
                point = score.sel(scenario=scenario, model=model)
                label = f"{model}, structure {scenario}"
                axes[0, col].errorbar(point["m"], point["coverage"], 2 * point["coverage_mcse"],
                                      ls=style, marker=marker, label=label, capsize=3)  # fmt: skip
                axes[1, col].plot(point["m"], point["width"], ls=style, marker=marker, label=label)
        axes[0, col].axhline(level, color="grey", lw=0.8)
        axes[0, col].set(title=f"{structure}: score", ylabel="coverage (± 2 MC-SE)",
                         xlabel="labelled items per truth category (m)")  # fmt: skip
        axes[1, col].set(xlabel="labelled items per truth category (m)", ylabel="mean width")
        axes[0, col].legend(fontsize=7)
    fig.tight_layout()
    return fig
