"""Bias, coverage and length of six estimators over θ (Lee et al. Fig. 5).

Reproduces Lee et al., Sec. 7 / Fig. 5 (and their Appendix grid) with the five estimators of
the issue side by side on the *same* simulated data in every replication, plus PPI++ with a
calibration set of its own drawn the way PPI++ needs (``ppi-random``):

``naive``
    p̂ = k / n with its Wilson interval (:func:`bayesjudge.core.naive.naive`); it estimates
    p = θ q1 + (1 - θ)(1 - q0), not θ.
``lang-reiczigel``
    Rogan–Gladen point estimate clipped to [0, 1] (eq. 5) with the Lang–Reiczigel interval of
    eqs. (6)-(8), truncated to [0, 1] as in the paper's code.
``bootstrap``
    Rogan–Gladen point estimate with the percentile-bootstrap interval of
    :func:`bayesjudge.core.bootstrap.bootstrap_rogan_gladen` (stratified calibration design),
    computed by :func:`bootstrap_rogan_gladen_many`, a compiled resampler that draws from the
    same distributions (see its Notes).
``ppi``
    PPI++ (:func:`bayesjudge.core.ppi.ppi_mean`, λ tuned) on the stratified calibration set, as
    the package implements it. **Caveat**: PPI needs the labelled set to be a random sample of
    the test distribution; here m0 = m1 are fixed by design, so the labelled mean of the human
    label is m1 / m = ½ whatever θ is, and the estimate is pulled towards ½ (for λ = 1 its
    expectation is ½ + J (θ - ½)). Its bias and under-coverage away from θ = ½ show what
    happens when PPI is fed a stratified calibration set, not a flaw of PPI with a random one
    (Fiedler, Sec. 3.3; Lee et al., Sec. 8). Its Wald interval is intersected with [0, 1]
    before its length is taken (that does not change coverage).
``ppi-random``
    PPI++ as it is meant to be used: it gets its own calibration set of m items drawn at random
    from the test distribution (M1 ~ Bin(m, θ) truly correct; the same judge), from a separate
    stream, while the test verdicts k are the same as for the other estimators. Replications
    whose labelled set is all one label (a PPI++ standard error of 0, a zero-width interval)
    are counted in ``undefined_share``, not hidden.
``bayes``
    The exact posterior of the ``"separate"`` model with flat priors θ, q0, q1 ~ Beta(1, 1):
    point estimate the posterior median, interval the equal-tailed interval with probability
    1 - alpha (computed without MCMC by :mod:`bayesjudge.core.exact`).

Design (Lee et al., Sec. 7): (q0, q1) = (0.7, 0.9), n = 1000, calibration m = 200 split
equally, m0 = m1 = 100 ("equal allocation m0 = m1", as stated for Fig. 5a/5b), θ ∈ {0, 0.05,
..., 1}, 10,000 replications; each replication draws k ~ Bin(n, p), tn ~ Bin(m0, q0),
tp ~ Bin(m1, q1). ``grid="appendix"`` runs the grid of the earlier version's Appendix C:
n ∈ {200, 1000}, m = m0 + m1 ∈ {200, 500} (m0 = m1 = m / 2), (q0, q1) ∈ {0.7, 0.9}².

Seeding: every design point (n, m, q0, q1, θ) has its own random stream derived from
``random_seed`` and the point's values (not its position in the grid), so a point gives the
same numbers whichever other points run; within a point one stream draws the data and an
independent one the bootstrap resamples, so the data do not depend on the estimators chosen.
"""

from __future__ import annotations

import itertools
import json
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numba
import numpy as np
import xarray as xr
from scipy.stats import binom

from bayesjudge.core.correction import lang_reiczigel_interval
from bayesjudge.core.exact import exact_theta_interval
from bayesjudge.core.kernels import rogan_gladen_counts, youden_is_zero
from bayesjudge.core.naive import naive
from bayesjudge.core.ppi import ppi_mean
from bayesjudge.studies._framework import (
    StudyResult,
    check_calibration_grid,
    check_grid,
    check_names,
    check_number,
    check_reps,
    check_seed,
    chunks,
    mcse_mean,
    mcse_proportion,
    point_rngs,
    progress_bar,
    study_attrs,
)
from bayesjudge.warnings import SmallSampleWarning

__all__ = [
    "DEFAULT_SEED",
    "ESTIMATORS",
    "GRIDS",
    "THETAS",
    "bootstrap_rogan_gladen_many",
    "plot",
    "run",
    "simulate_design",
]

NAME = "coverage"
DEFAULT_SEED = 20_240_607
ESTIMATORS = ("naive", "lang-reiczigel", "bootstrap", "ppi", "ppi-random", "bayes")
THETAS = tuple(np.round(np.linspace(0.0, 1.0, 21), 2).tolist())
GRIDS = {
    "fig5": {"n": (1000,), "m": (200,), "q0": (0.7,), "q1": (0.9,)},
    "appendix": {"n": (200, 1000), "m": (200, 500), "q0": (0.7, 0.9), "q1": (0.7, 0.9)},
}
_LABELS = {
    "naive": "naive p̂ (Wilson)",
    "lang-reiczigel": "Rogan–Gladen + Lang–Reiczigel",
    "bootstrap": "Rogan–Gladen + bootstrap",
    "ppi": "PPI++ (stratified calibration)",
    "ppi-random": "PPI++ (own random calibration)",
    "bayes": "exact Bayes (flat priors)",
}


# --- data ------------------------------------------------------------------------------------


def _point_streams(random_seed: int, n: int, m: int, q0: float, q1: float, theta: float):
    """Return the generators (data, bootstrap, PPI++ labels) of one point, keyed by its values."""
    return point_rngs(random_seed, n, m, q0, q1, theta, count=3)


def simulate_design(rng, theta, q0, q1, n, m0, m1, reps):
    """Draw ``reps`` independent data sets (k, tn, tp) of the misclassification model.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness; draws k, then tn, then tp (``reps`` each).
    theta, q0, q1 : float
        True accuracy, judge specificity and sensitivity.
    n, m0, m1 : int
        Test-set size and the calibration sizes (truly incorrect / truly correct items).
    reps : int
        Number of data sets.

    Returns
    -------
    tuple of numpy.ndarray
        ``(k, tn, tp)``, int64 arrays of length ``reps``: k ~ Bin(n, p) with
        p = θ q1 + (1 - θ)(1 - q0), tn ~ Bin(m0, q0), tp ~ Bin(m1, q1).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesjudge.studies.coverage import simulate_design
    >>> k, tn, tp = simulate_design(np.random.default_rng(0), 0.5, 0.7, 0.9, 1000, 100, 100, 3)
    >>> k.shape, bool((tn <= 100).all())
    ((3,), True)
    """
    p = theta * q1 + (1 - theta) * (1 - q0)
    k = rng.binomial(n, p, size=reps)
    tn = rng.binomial(m0, q0, size=reps)
    tp = rng.binomial(m1, q1, size=reps)
    return k.astype(np.int64), tn.astype(np.int64), tp.astype(np.int64)


# --- the bootstrap, compiled -----------------------------------------------------------------


_BLOCK = 256  # data sets per block of uniforms (each block has its own stream)
_GUIDE_CELLS = 2048  # cells of the inversion guide table per CDF row (a power of two)


@lru_cache(maxsize=16)
def _binomial_tables(size: int) -> tuple[np.ndarray, np.ndarray]:
    """CDF and guide tables for inverting Binomial(size, j / size), j = 0..size.

    ``cdf[j, x]`` is the CDF of Binomial(size, j / size) at x (the last entry exactly 1);
    ``guide[j, c]`` is the smallest x with ``cdf[j, x] >= c / _GUIDE_CELLS``, the start of the
    search for any u in [c / G, (c + 1) / G) (a guide table, Devroye 1986, Sec. III.2.4).
    """
    x = np.arange(size + 1)
    cdf = binom.cdf(x[None, :], size, x[:, None] / size)
    cdf = np.maximum.accumulate(cdf, axis=1)  # guard against rounding non-monotonicity
    cdf[:, -1] = 1.0
    cells = np.arange(_GUIDE_CELLS) / _GUIDE_CELLS
    guide = np.stack([np.searchsorted(row, cells, side="left") for row in cdf]).astype(np.int32)
    cdf.setflags(write=False)
    guide.setflags(write=False)
    return cdf, guide


@numba.njit(cache=True, inline="always")
def _invert(cdf_row, guide_row, u):  # pragma: no cover - compiled
    # Smallest x with cdf_row[x] >= u, for u in (0, 1]: start at the guide entry of u's cell
    # (never past the answer) and step up; cdf_row[-1] == 1 ends the loop.
    cells = guide_row.size
    x = guide_row[min(int(u * cells), cells - 1)]
    while cdf_row[x] < u:
        x += 1
    return x


@numba.njit(cache=True, inline="always")
def _lerp(a, b, t):  # pragma: no cover - compiled
    # numpy.quantile's "linear" interpolation, same branches (numpy/lib/_function_base_impl).
    diff = b - a
    if t >= 0.5:
        return b - diff * (1.0 - t)
    return a + diff * t


@numba.njit(cache=True, inline="always")
def _at(values, virtual_index):  # pragma: no cover - compiled
    # numpy.quantile's "linear" method on values partitioned around the two indices used.
    below = int(np.floor(virtual_index))
    above = min(below + 1, values.size - 1)
    return _lerp(values[below], values[above], virtual_index - below)


@numba.njit(cache=True)
def _kth(virtual_index, size):  # pragma: no cover - compiled
    below = int(np.floor(virtual_index))
    return below, min(below + 1, size - 1)


@numba.njit(cache=True)
def _quantiles(values, index_lo, index_hi):  # pragma: no cover - compiled
    # Both percentile limits from one partition (the four order statistics they use).
    a, b = _kth(index_lo, values.size)
    c, d = _kth(index_hi, values.size)
    part = np.partition(values, np.array([a, b, c, d]))
    return _at(part, index_lo), _at(part, index_hi)


# The numba twin of core.kernels.rogan_gladen_counts(..., clip=True), for speed only (it runs
# once per bootstrap replicate inside the compiled resampler). tests/core/test_kernels.py checks
# that it equals the numpy kernel on a grid of counts that includes J = 0.
@numba.njit(cache=True, inline="always")
def _rg_replicate(k, n, tn, m0, tp, m1, mm):  # pragma: no cover - compiled
    """Clipped Rogan–Gladen θ of one replicate; NaN where tn·m1 + tp·m0 == m0·m1 (J = 0)."""
    den = tn * m1 + tp * m0 - m0 * m1
    if den == 0:
        return np.nan
    theta = ((k / n) * mm + tn * m1 - mm) / den
    return min(max(theta, 0.0), 1.0)


@numba.njit(nogil=True, cache=True)
def _bootstrap_kernel(
    k, tn, tp, n, m0, m1, cdf_n, guide_n, cdf_m0, guide_m0, cdf_m1, guide_m1, u,
    index_lo, index_hi, lower, upper,
):  # fmt: skip  # pragma: no cover - compiled
    reps, n_resamples = u.shape[0], u.shape[1]
    mm = float(m0 * m1)
    for r in range(reps):
        cdf_k, guide_k = cdf_n[k[r]], guide_n[k[r]]
        cdf_0, guide_0 = cdf_m0[tn[r]], guide_m0[tn[r]]
        cdf_1, guide_1 = cdf_m1[tp[r]], guide_m1[tp[r]]
        replicates = np.empty(n_resamples)
        undefined = 0
        for b in range(n_resamples):
            # Inverse-CDF draws: k* ~ Bin(n, k/n), tn* ~ Bin(m0, tn/m0), tp* ~ Bin(m1, tp/m1).
            k_s = _invert(cdf_k, guide_k, u[r, b, 0])
            tn_s = _invert(cdf_0, guide_0, u[r, b, 1])
            tp_s = _invert(cdf_1, guide_1, u[r, b, 2])
            theta = _rg_replicate(k_s, n, tn_s, m0, tp_s, m1, mm)
            replicates[b] = theta
            if np.isnan(theta):  # q0* + q1* == 1: θ* not identified
                undefined += 1
        if undefined == 0:
            lower[r], upper[r] = _quantiles(replicates, index_lo, index_hi)
        else:  # counted at 0 for the lower limit and at 1 for the upper, as in the core
            missing = np.isnan(replicates)
            lower[r] = _quantiles(np.where(missing, 0.0, replicates), index_lo, index_hi)[0]
            upper[r] = _quantiles(np.where(missing, 1.0, replicates), index_lo, index_hi)[1]


def bootstrap_rogan_gladen_many(
    k,
    n,
    tn,
    m0,
    tp,
    m1,
    *,
    alpha=0.05,
    n_resamples=1000,
    random_seed=None,
    threads=2,
):
    """Percentile-bootstrap intervals of Rogan–Gladen for many data sets with one design.

    Statistically the same procedure as
    :func:`bayesjudge.core.bootstrap.bootstrap_rogan_gladen` with
    ``calibration_design="stratified"``, compiled for the Monte Carlo study: per data set,
    ``n_resamples`` replicates k* ~ Bin(n, k/n), tn* ~ Bin(m0, tn/m0), tp* ~ Bin(m1, tp/m1),
    each turned into the clipped Rogan–Gladen estimate, and the ``alpha/2``, ``1 - alpha/2``
    quantiles (numpy's default linear interpolation) of the replicates.

    Parameters
    ----------
    k, tn, tp : array_like of int
        One entry per data set: judged-correct test items, true negatives, true positives.
    n, m0, m1 : int
        Test-set and calibration sizes, shared by all data sets (each at least 1).
    alpha : float, default 0.05
        One minus the nominal coverage.
    n_resamples : int, default 1000
        Bootstrap replicates per data set.
    random_seed : int, numpy.random.Generator or None
        Seed of the uniforms behind the replicates.
    threads : int, default 2
        Threads sharing the work (blocks of 256 data sets, each with its own random stream
        spawned from ``random_seed``); the result does not depend on it. Memory: about
        6 MB of uniforms per thread.

    Returns
    -------
    tuple of numpy.ndarray
        ``(lower, upper)``, one entry per data set.

    Notes
    -----
    The replicates are drawn by inversion, ``k* = min{x : F(x) >= u}`` with u uniform on
    (0, 1] and F the binomial CDF of the observed proportion (tabulated once per size: the
    observed proportion can only be j / n), which has exactly the binomial distribution that
    ``numpy.random.Generator.binomial`` draws from in the core function, but costs a table
    look-up instead of a rejection sampler. Replicates with q0* + q1* == 1 are counted at 0 for
    the lower and 1 for the upper limit, as in the core function. Different random numbers,
    same distribution: the intervals agree with the core function's in distribution (tested),
    not draw for draw.

    Examples
    --------
    >>> from bayesjudge.studies.coverage import bootstrap_rogan_gladen_many
    >>> lo, hi = bootstrap_rogan_gladen_many([400, 600], 1000, [70, 70], 100, [90, 90], 100,
    ...                                      random_seed=0)
    >>> bool((lo < [0.1667, 0.5]).all() and (hi > [0.1667, 0.5]).all())
    True
    """
    k, tn, tp = (np.asarray(a, dtype=np.int64).ravel() for a in (k, tn, tp))
    n, m0, m1 = int(n), int(m0), int(m1)
    if min(n, m0, m1) < 1:
        raise ValueError(f"n, m0 and m1 must each be at least 1; got {n}, {m0}, {m1}.")
    if not (k.size == tn.size == tp.size):
        raise ValueError("k, tn and tp must have one entry per data set (equal lengths).")
    for name, part, total in (("k", k, n), ("tn", tn, m0), ("tp", tp, m1)):
        if ((part < 0) | (part > total)).any():
            raise ValueError(f"{name} must lie in [0, {total}].")
    rng = np.random.default_rng(random_seed)
    index_lo = (n_resamples - 1) * (alpha / 2.0)
    index_hi = (n_resamples - 1) * (1.0 - alpha / 2.0)
    tables = [table for size in (n, m0, m1) for table in _binomial_tables(size)]
    lower, upper = np.empty(k.size), np.empty(k.size)
    blocks = list(chunks(k.size, _BLOCK))
    # One child stream per block of data sets: the result depends on the seed only, not on
    # the number of threads or the order in which they finish.
    streams = rng.spawn(len(blocks))

    def block(part, stream):
        u = stream.random((part.stop - part.start, n_resamples, 3))
        np.subtract(1.0, u, out=u)  # uniform on (0, 1], as the inversion needs
        _bootstrap_kernel(
            k[part], tn[part], tp[part], n, m0, m1, *tables, u, index_lo, index_hi,
            lower[part], upper[part],
        )  # fmt: skip

    # numpy's generators and the compiled kernel release the GIL, so threads run in parallel.
    with ThreadPoolExecutor(max(1, int(threads))) as pool:
        jobs = [pool.submit(block, *job) for job in zip(blocks, streams, strict=True)]
        for job in jobs:
            job.result()
    return lower, upper


# --- estimators ------------------------------------------------------------------------------


def _rogan_gladen_point(k, n, tn, m0, tp, m1):
    """Clipped eq. (5); ½ where q̂0 + q̂1 == 1 exactly (θ not identified)."""
    theta, identified = rogan_gladen_counts(k, n, tn, m0, tp, m1, clip=True)
    return np.where(identified, theta, 0.5)  # J = 0 policy: ½


def _naive(data, alpha, rng, options):
    return naive(data["k"], data["n"], alpha=alpha)


def _lang_reiczigel(data, alpha, rng, options):
    k, n, tn, m0, tp, m1 = (data[key] for key in ("k", "n", "tn", "m0", "tp", "m1"))
    lower, upper = lang_reiczigel_interval(k / n, tn / m0, tp / m1, n, m0, m1, alpha)
    return _rogan_gladen_point(k, n, tn, m0, tp, m1), lower, upper


def _bootstrap(data, alpha, rng, options):
    k, n, tn, m0, tp, m1 = (data[key] for key in ("k", "n", "tn", "m0", "tp", "m1"))
    lower, upper = bootstrap_rogan_gladen_many(
        k, n, tn, m0, tp, m1, alpha=alpha, n_resamples=options["n_resamples"], random_seed=rng
    )
    return _rogan_gladen_point(k, n, tn, m0, tp, m1), lower, upper


def _ppi(data, alpha, rng, options):
    k, n, tn, m0, tp, m1 = (data[key] for key in ("k", "n", "tn", "m0", "tp", "m1"))
    estimate, lower, upper, _ = ppi_mean(k, n, tn, m0, tp, m1, alpha=alpha)
    return estimate, np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)


def _ppi_random(data, alpha, rng, options):
    k, n, m, theta, q0, q1 = (data[key] for key in ("k", "n", "m", "theta", "q0", "q1"))
    m1 = rng.binomial(m, theta, k.size)
    tp = rng.binomial(m1, q1)
    tn = rng.binomial(m - m1, q0)
    with warnings.catch_warnings():
        # A labelled set of one label has no PPI++ answer (NaN, see ppi_mean); like an
        # unidentified Rogan–Gladen estimate it is reported as ½ with the interval [0, 1] and
        # counted in ``undefined_share``, so bias, coverage and length stay defined.
        warnings.simplefilter("ignore", SmallSampleWarning)
        estimate, lower, upper, _ = ppi_mean(k, n, tn, m - m1, tp, m1, alpha=alpha)
    one_label = (m1 == 0) | (m1 == m)
    data["ppi_one_label"] = one_label
    estimate = np.where(one_label, 0.5, estimate)
    lower, upper = np.where(one_label, 0.0, lower), np.where(one_label, 1.0, upper)
    return estimate, np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)


def _exact_bayes_theta(k, n, tn, m0, tp, m1, ci_prob):
    """Adapter to the exact posterior: (median, lower, upper) of θ with flat priors."""
    res = exact_theta_interval(k, n, tn, m0, tp, m1, ci_prob=ci_prob)
    return res.median, res.lower, res.upper


def _bayes_many(points, alpha, threads=2):
    """Exact posteriors for the data of several design points sharing (n, m0, m1).

    The posterior depends on the data only through (k, tn, tp), so each distinct triple is
    computed once (neighbouring θ share many) and the work is split over ``threads``
    threads (numpy releases the GIL in the large array operations).
    """
    n, m0, m1 = points[0]["n"], points[0]["m0"], points[0]["m1"]
    triples = np.concatenate([np.stack([d["k"], d["tn"], d["tp"]], axis=1) for d in points])
    unique, inverse = np.unique(triples, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    parts = [part for part in np.array_split(np.arange(len(unique)), threads) if part.size]

    def work(part):
        k, tn, tp = unique[part].T
        return _exact_bayes_theta(k, n, tn, m0, tp, m1, 1.0 - alpha)

    if len(parts) > 1:
        with ThreadPoolExecutor(len(parts)) as pool:
            results = list(pool.map(work, parts))
    else:
        results = [work(part) for part in parts]
    median, lower, upper = (np.concatenate([r[i] for r in results])[inverse] for i in range(3))
    bounds = np.cumsum([0] + [d["k"].size for d in points])
    return [(median[a:b], lower[a:b], upper[a:b]) for a, b in itertools.pairwise(bounds)]


def _bayes(data, alpha, rng, options):
    return data["bayes"]


def _not_identified(data):
    """Replications with q̂0 + q̂1 == 1 exactly, where the Rogan–Gladen estimate is undefined."""
    return youden_is_zero(data["tn"], data["m0"], data["tp"], data["m1"])


# Estimators whose point estimate is Rogan–Gladen, so undefined where q̂0 + q̂1 == 1.
_RG_BASED = ("lang-reiczigel", "bootstrap")

_ESTIMATOR_FUNCTIONS = {
    "naive": _naive,
    "lang-reiczigel": _lang_reiczigel,
    "bootstrap": _bootstrap,
    "ppi": _ppi,
    "ppi-random": _ppi_random,
    "bayes": _bayes,
}


# --- the study -------------------------------------------------------------------------------


def _check_options(grid, theta, estimators, alpha, n_resamples):
    design = check_calibration_grid(grid, GRIDS)
    thetas = THETAS if theta is None else check_grid("theta", theta, low=0, high=1)
    estimators = check_names("estimators", estimators, ESTIMATORS)
    alpha = check_number("alpha", alpha, low=0, high=1, low_open=True, high_open=True)
    n_resamples = check_number("n_resamples", n_resamples, low=2, integer=True)
    return design, thetas, estimators, alpha, n_resamples


def run(
    *,
    reps: int = 10_000,
    random_seed: int = DEFAULT_SEED,
    progress: bool = False,
    grid: str | dict = "fig5",
    theta: Sequence[float] | None = None,
    estimators: Sequence[str] = ESTIMATORS,
    alpha: float = 0.05,
    n_resamples: int = 1000,
) -> StudyResult:
    """Run the coverage study (Lee et al., Fig. 5 and the Appendix grid).

    Parameters
    ----------
    reps : int, default 10_000
        Replications per design point (the paper's 10,000).
    random_seed : int, default DEFAULT_SEED
        Seed; each design point derives its own streams from it and its values.
    progress : bool, default False
        Show a progress bar on stderr (one step per design point).
    grid : {"fig5", "appendix"} or dict, default "fig5"
        ``"fig5"``: n = 1000, m = 200, (q0, q1) = (0.7, 0.9). ``"appendix"``: n ∈ {200, 1000},
        m ∈ {200, 500}, q0, q1 ∈ {0.7, 0.9}. A dict with keys ``n``, ``m``, ``q0``, ``q1``
        (sequences) gives any other full grid; m is always split m0 = m1 = m / 2.
    theta : sequence of float, optional
        True accuracies; default the 21 points 0, 0.05, ..., 1.
    estimators : sequence of str, default all six
        Any of ``"naive"``, ``"lang-reiczigel"``, ``"bootstrap"``, ``"ppi"``, ``"ppi-random"``,
        ``"bayes"``.
        All run on the same simulated data; leaving some out does not change the others.
    alpha : float, default 0.05
        Intervals have nominal coverage 1 - alpha (the Bayesian one is the equal-tailed
        posterior interval with probability 1 - alpha).
    n_resamples : int, default 1000
        Bootstrap replicates per data set.

    Returns
    -------
    StudyResult
        Table with dims ``(n, m, q0, q1, theta, estimator)`` and variables ``bias``
        (mean of estimate - θ), ``coverage`` (share of intervals containing θ), ``length``
        (mean interval length, intervals within [0, 1]) and ``undefined_share`` (share of
        replications with q̂0 + q̂1 = 1 exactly, where the Rogan–Gladen point estimate of
        ``lang-reiczigel`` and ``bootstrap`` is not identified: those replications are kept,
        with point ½ and the interval of the method, Lang–Reiczigel's [0, 1]; always 0 for
        the other estimators), each with ``<name>_mcse``;
        ``attrs`` hold the settings, plus ``seconds`` (JSON: wall time per estimator and
        for the simulation, not part of the settings).

    Notes
    -----
    At θ = 0 and θ = 1 the interval estimators that truncate to [0, 1] behave differently
    (the truth sits on the boundary the intervals are clipped to), so their coverage there
    is not the nominal-coverage question; the paper plots them anyway and so do we. (The
    ETI of a posterior with a density never contains 0 or 1, so its coverage there is 0.)

    Exact coverage on the Fig. 5 design (enumeration, benchmarks/studies/exact_coverage.py):
    Lang–Reiczigel 0.9524-0.9566 at every 0 < θ < 1 (slightly conservative); the flat-prior
    ETI 0.9507-0.9551 for θ in [0.25, 0.75] but conservative towards the boundaries (0.978
    at θ = 0.1, 0.981 at θ = 0.95), where the flat prior's truncation at 0 and 1 widens the
    posterior; neither falls below 0.95.

    Examples
    --------
    >>> from bayesjudge.studies import coverage
    >>> res = coverage.run(reps=200, theta=[0.5], estimators=["naive", "lang-reiczigel"])
    >>> res.table["coverage"].squeeze().to_series().to_dict()  # naive covers p = 0.6, not θ
    {'naive': 0.0, 'lang-reiczigel': 0.95}
    """
    reps = check_reps(reps)
    random_seed = check_seed(random_seed)
    design, thetas, estimators, alpha, n_resamples = _check_options(
        grid, theta, estimators, alpha, n_resamples
    )
    options = {"n_resamples": int(n_resamples)}
    dims = ("n", "m", "q0", "q1", "theta", "estimator")
    coords = {**{key: list(design[key]) for key in ("n", "m", "q0", "q1")}, "theta": list(thetas)}
    coords["estimator"] = list(estimators)
    shape = tuple(len(coords[d]) for d in dims)
    values = {
        name: np.full(shape, np.nan) for name in ("bias", "coverage", "length", "undefined_share")
    }
    mcse = {name: np.full(shape, np.nan) for name in values}
    seconds = dict.fromkeys(("simulate", *estimators), 0.0)

    designs = [
        (i_n, i_m, i_0, i_1)
        for i_n in range(shape[0])
        for i_m in range(shape[1])
        for i_0 in range(shape[2])
        for i_1 in range(shape[3])
    ]
    bar = progress_bar(len(designs) * shape[4], f"study {NAME}", progress)
    for design_index in designs:
        n, m, q0, q1 = (coords[d][i] for d, i in zip(dims, design_index, strict=False))
        points, boot_rngs = [], []
        start = time.perf_counter()
        for th in thetas:
            rng_data, rng_boot, rng_ppi = _point_streams(random_seed, n, m, q0, q1, th)
            k, tn, tp = simulate_design(rng_data, th, q0, q1, n, m // 2, m // 2, reps)
            points.append(
                {"k": k, "n": n, "tn": tn, "m0": m // 2, "tp": tp, "m1": m // 2, "m": m}
                | {"theta": th, "q0": q0, "q1": q1, "rng_ppi": rng_ppi}
            )
            boot_rngs.append(rng_boot)
        seconds["simulate"] += time.perf_counter() - start
        if "bayes" in estimators:  # one batch per design: shared triples are computed once
            start = time.perf_counter()
            for data, result in zip(points, _bayes_many(points, alpha), strict=True):
                data["bayes"] = result
            seconds["bayes"] += time.perf_counter() - start
        for i_t, (th, data, rng_boot) in enumerate(zip(thetas, points, boot_rngs, strict=True)):
            for i_e, name in enumerate(estimators):
                start = time.perf_counter()
                rng = data["rng_ppi"] if name == "ppi-random" else rng_boot
                estimate, lower, upper = _ESTIMATOR_FUNCTIONS[name](data, alpha, rng, options)
                seconds[name] += time.perf_counter() - start
                error = np.asarray(estimate, dtype=float) - th
                covered = (lower <= th) & (th <= upper)
                length = np.asarray(upper, dtype=float) - lower
                cell = (*design_index, i_t, i_e)
                values["bias"][cell], mcse["bias"][cell] = error.mean(), mcse_mean(error)
                values["coverage"][cell] = covered.mean()
                mcse["coverage"][cell] = mcse_proportion(covered.mean(), reps)
                values["length"][cell], mcse["length"][cell] = length.mean(), mcse_mean(length)
                if name in _RG_BASED:
                    undefined = _not_identified(data).mean()
                elif name == "ppi-random":
                    undefined = data["ppi_one_label"].mean()
                else:
                    undefined = 0.0
                values["undefined_share"][cell] = undefined
                mcse["undefined_share"][cell] = mcse_proportion(undefined, reps)
            bar.update()

    data_vars = {}
    for name in values:
        data_vars[name] = (dims, values[name])
        data_vars[f"{name}_mcse"] = (dims, mcse[name])
    table = xr.Dataset(data_vars, coords=coords)
    table.attrs = study_attrs(
        NAME,
        reps=reps,
        random_seed=random_seed,
        grid=grid if isinstance(grid, str) else "custom",
        design={key: list(v) for key, v in design.items()},
        theta=list(thetas),
        estimators=list(estimators),
        alpha=float(alpha),
        ci_prob=1.0 - float(alpha),
        n_resamples=int(n_resamples),
        calibration_split="m0 = m1 = m / 2",
        bayes_point="posterior median",
        bayes_priors="theta, q0, q1 ~ Beta(1, 1)",
    )
    table.attrs["seconds"] = json.dumps({key: round(v, 3) for key, v in seconds.items()})
    return StudyResult(NAME, table, plot)


# --- the figure ------------------------------------------------------------------------------


def plot(table: xr.Dataset):
    """Draw Fig. 5-style panels: bias, coverage (with the nominal band) and mean length vs θ.

    One row per design (n, m, q0, q1); every estimator is one line with ±1 MC-SE error bars.
    The coverage panel shows the nominal level 1 - alpha with a band of ±3 nominal Monte Carlo
    standard errors, and an inset zooming in on [nominal - 0.05, nominal + 0.03].

    Parameters
    ----------
    table : xarray.Dataset
        The table of :func:`run`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (close it with ``matplotlib.pyplot.close``).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from bayesjudge.studies import coverage
    >>> res = coverage.run(reps=50, theta=[0.3, 0.6], estimators=["naive", "lang-reiczigel"])
    >>> fig = coverage.plot(res.table)
    >>> len(fig.axes) >= 3
    True
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    stacked = table.stack(design=("n", "m", "q0", "q1"))
    n_designs = stacked.sizes["design"]
    nominal = float(table.attrs.get("ci_prob", 0.95))
    reps = int(table.attrs.get("reps", 1))
    band = 3 * np.sqrt(nominal * (1 - nominal) / reps)
    fig, axes = plt.subplots(
        n_designs, 3, figsize=(13, 3.4 * n_designs), squeeze=False, constrained_layout=True
    )
    theta = table["theta"].to_numpy()
    for row, design in enumerate(stacked["design"].to_numpy()):
        cell = stacked.isel(design=row)
        n, m, q0, q1 = design
        ax_bias, ax_cov, ax_len = axes[row]
        inset = ax_cov.inset_axes([0.38, 0.1, 0.58, 0.5])
        for estimator in table["estimator"].to_numpy():
            est = cell.sel(estimator=estimator)
            label = _LABELS.get(str(estimator), str(estimator))
            for ax, var in ((ax_bias, "bias"), (ax_cov, "coverage"), (ax_len, "length")):
                ax.errorbar(theta, est[var], yerr=est[f"{var}_mcse"], marker="o", ms=3,
                            lw=1, capsize=2, label=label)  # fmt: skip
            inset.plot(theta, est["coverage"], marker="o", ms=2, lw=0.8)
        for ax in (ax_cov, inset):
            ax.axhline(nominal, color="k", lw=0.8, ls="--")
            ax.axhspan(nominal - band, nominal + band, color="0.85", zorder=0)
        inset.set_ylim(nominal - 0.05, nominal + 0.03)
        inset.tick_params(labelsize=7)
        ax_bias.axhline(0.0, color="k", lw=0.8, ls="--")
        ax_cov.set_ylim(-0.02, 1.02)
        title = f"n = {n}, m0 = m1 = {int(m) // 2}, (q0, q1) = ({q0}, {q1})"
        ax_bias.set_title(f"bias  [{title}]", fontsize=9)
        ax_cov.set_title(f"coverage (band: ±3 MC-SE at {reps} reps)", fontsize=9)
        ax_len.set_title("mean interval length", fontsize=9)
        ax_bias.set_ylabel("bias (mean estimate − θ)")
        ax_cov.set_ylabel(f"coverage of the {nominal:.0%} interval")
        ax_len.set_ylabel("mean interval length")
        for ax in axes[row]:
            ax.set_xlabel("true accuracy θ")
    axes[0, 0].legend(fontsize=7)
    return fig
