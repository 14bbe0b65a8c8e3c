"""Several judges giving K-category verdicts on the same items: the joint model (PyMC).

Each item of a group g = (system, stratum) has a true category drawn from θ_g (on the
simplex); given it, judge j says category v with probability C_j[t, v] (its confusion matrix,
rows = truth), independently of the other judges (Dawid & Skene 1979). The truth is summed
out, so the verdict-pattern counts of
:class:`~bayesjudge.data.categorical_jury.CategoricalJuryCounts` are the data::

    θ_g           ~ Dirichlet(α_θ)
    C_j[t, :]     ~ Dirichlet(α_C[t, :])          per judge and stratum ("shared") or
                                                    per judge, system and stratum ("separate")
    P(v | t)      = Π_{j graded} C_j[t, v_j]
    test_g,v      : Σ_v n_gv log Σ_t θ_gt P(v | t)
    labelled_g,t,v: Σ m_gtv log P(v | t)       (+ Σ m_gtv log θ_gt, random design)

It is :mod:`bayesjudge.models.jury` with K categories (at K = 2 its likelihood is the binary
model's, q0 = C[0, 0], q1 = C[1, 1], θ = θ[1]) and :mod:`bayesjudge.models.categorical` with
several judges (the same :class:`~bayesjudge.models.categorical.CategoricalPriors`). The
model card is ``models/categorical-jury.md``; :func:`fit_categorical_jury` fits it with nutpie
and returns a :class:`CategoricalJuryFit`.

Label switching: the likelihood is unchanged when the latent categories are permuted (θ's
entries and every judge's confusion rows permuted alike). Labelled items tie each latent
category to its human label; without them the model is identified (Kruskal 1977; Allman,
Matias & Rhodes 2009: three judges with full-rank confusion matrices) only up to such a
permutation, and needs at least three judges. Every chain therefore starts with every judge
mostly right (a diagonal-heavy confusion), the mode where the latent category t is the one
the judges mostly call t.

The PyMC model (:func:`build_categorical_jury_model`) is the definition; nutpie samples
:func:`log_density`, the same log density and its gradient written as ``numba.njit`` kernels
(tested equal), through :func:`nutpie.compiled_pyfunc.from_pyfunc`: PyTensor's numba compile
of the model's graph takes one to two minutes, the kernels seconds once (kept on disk).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations, product
from pathlib import Path

import arviz as az
import numba
import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy.special import gammaln, softmax

from bayesjudge._io import atomic_path, check_output_file
from bayesjudge._progress import show_progress
from bayesjudge._text import pair_label
from bayesjudge._version import __version__
from bayesjudge.categorical_estimate import score_vector
from bayesjudge.core._validation import check_open_unit
from bayesjudge.data import DIMS
from bayesjudge.data.categorical_jury import CategoricalJuryCounts
from bayesjudge.models.categorical import CategoricalPriors
from bayesjudge.models.sampling import (
    check_int,
    check_seed,
    config_hash,
    eti,
    read_fit_tree,
    sample_nutpie,
    sampling_diagnostics,
    warn_sampling,
)
from bayesjudge.models.storage import DIGEST_ATTR, content_digest
from bayesjudge.warnings import BayesJudgeWarning

__all__ = [
    "CATEGORICAL_JURY_CALIBRATIONS",
    "CATEGORICAL_JURY_FORMAT",
    "INITIAL_DIAGONAL",
    "CategoricalJuryFit",
    "CategoricalJuryLayout",
    "CategoricalJuryPosteriorPredictiveCheck",
    "build_categorical_jury_from_config",
    "build_categorical_jury_model",
    "categorical_jury_model_config",
    "fit_categorical_jury",
    "kernel_layout",
    "load_categorical_jury",
    "log_density",
    "pattern_log_probabilities",
    "warn_unlabelled",
]

CATEGORICAL_JURY_CALIBRATIONS = ("shared", "separate")
#: The ``format`` attr of a saved fit (:func:`bayesjudge.load` dispatches on it).
CATEGORICAL_JURY_FORMAT = "bayesjudge-categorical-jury-fit-1"
#: Every chain's start: each confusion row puts this share on its diagonal, the rest evenly.
INITIAL_DIAGONAL = 0.85
#: Family-wise level of the agreement check's flag (Bonferroni over its checks).
PPC_ALPHA = 0.05
#: Most (draw × group × pattern) cells the agreement check holds at once (thins draws beyond).
PPC_CELLS = 20_000_000
JUDGE, PATTERN, TRUTH, VERDICT, CATEGORY = "judge", "pattern", "truth", "verdict", "category"
TEST_DIMS = (*DIMS, PATTERN)
LABELLED_DIMS = (*DIMS, TRUTH, PATTERN)
THETA_DIMS = (*DIMS, CATEGORY)
# Variables summarised and checked for convergence, when present.
REPORTED = ("theta", "score", "confusion")
_MODEL_KEYS = ("kind", "calibration", "priors", "scores", "design", "categories")


# ----------------------------------------------------------------------------- configuration


def _check_counts(counts) -> CategoricalJuryCounts:
    if not isinstance(counts, CategoricalJuryCounts):
        raise ValueError(
            f"counts must be a CategoricalJuryCounts (several judges' K-category verdicts on "
            f"the same items); got {type(counts).__name__}. Build one with "
            f"CategoricalJuryCounts.from_counts(...) or .from_frames(...)."
        )
    return counts


def _check_priors(priors) -> CategoricalPriors:
    if priors is None:
        return CategoricalPriors()
    if isinstance(priors, Mapping):
        return CategoricalPriors.from_dict(priors)
    if not isinstance(priors, CategoricalPriors):
        raise ValueError(
            f"priors must be a bayesjudge.models.categorical.CategoricalPriors (or its "
            f"to_dict()); got {type(priors).__name__}."
        )
    return priors


def categorical_jury_model_config(
    counts: CategoricalJuryCounts,
    calibration: str = "shared",
    priors: CategoricalPriors | None = None,
    scores=None,
) -> dict:
    """Check the model's options against the counts; return its JSON-ready configuration.

    Parameters
    ----------
    counts : CategoricalJuryCounts
    calibration : {"shared", "separate"}, default "shared"
        ``"shared"``: one confusion matrix per judge and stratum for every system (one judge
        prompt grading every system's answers); ``"separate"``: per judge, system and stratum.
    priors : CategoricalPriors, optional
        Dirichlet concentrations of θ (default 1, flat) and of every confusion row (default
        Perks's 1/K per cell); the ``error_logit_*`` fields are not used here.
    scores : mapping, optional
        ``{category: value}``: adds ``score`` = Σ_c θ_c · value_c per group.

    Returns
    -------
    dict
        ``kind``, ``calibration``, ``priors``, ``scores`` (values in category order, or
        None), ``design``, ``categories``.

    Raises
    ------
    ValueError
        For a bad option (named, with the allowed values), fewer than 2 judges, no test items,
        or fewer than 3 judges without labelled items (not identified).

    Examples
    --------
    >>> counts = CategoricalJuryCounts.from_counts(
    ...     ["00", "11", "22", "01"], [30, 20, 25, 5], judges=["a", "b"],
    ...     labelled=[[4, 0, 0, 1], [0, 5, 0, 0], [0, 0, 5, 0]], categories=["A", "tie", "B"])
    >>> categorical_jury_model_config(counts, scores={"A": 1, "tie": 0.5, "B": 0})["scores"]
    [1.0, 0.5, 0.0]
    >>> categorical_jury_model_config(counts, calibration="pooled")
    Traceback (most recent call last):
    ValueError: calibration must be one of ['shared', 'separate']; got 'pooled'.
    """
    counts = _check_counts(counts)
    if not isinstance(calibration, str) or calibration not in CATEGORICAL_JURY_CALIBRATIONS:
        raise ValueError(
            f"calibration must be one of {list(CATEGORICAL_JURY_CALIBRATIONS)}; got "
            f"{calibration!r}."
        )
    priors = _check_priors(priors)
    k = len(counts.categories)
    priors.theta_alpha(k)  # shape checks against K, before anything is built
    priors.confusion_alpha(k)
    n_judges = len(counts.judges)
    if n_judges < 2:
        raise ValueError(
            f"counts holds {n_judges} judge(s); the jury model needs at least 2. For one judge "
            f"use fit_categorical(counts.for_judge(judge)) (the single-judge K-category model)."
        )
    if int(counts.test.sum()) == 0:
        raise ValueError("counts holds no test items: θ is the category share of the test items.")
    if int(counts.labelled.sum()) == 0 and n_judges < 3:
        raise ValueError(
            f"With {n_judges} judges and no labelled items the model is not identified. Add "
            f"labelled items, or at least 3 conditionally independent judges (Kruskal 1977)."
        )
    values = None if scores is None else score_vector(scores, counts.categories)
    return {
        "kind": "categorical-jury",
        "calibration": calibration,
        "priors": priors.to_dict(),
        "scores": None if values is None else [float(v) for v in values],
        "design": counts.design,
        "categories": [str(c) for c in counts.categories],
    }


# ------------------------------------------------------------------------------- the model


def _coords(counts: CategoricalJuryCounts) -> dict:
    categories = list(counts.categories)
    return {
        "system": list(counts.systems),
        "stratum": list(counts.strata),
        CATEGORY: categories,
        JUDGE: list(counts.judges),
        TRUTH: categories,
        VERDICT: categories,
        PATTERN: list(counts.patterns),
    }


def _confusion_dims(config: dict) -> tuple[str, ...]:
    """Dims of ``confusion``: (judge, stratum, ...) shared, (judge, system, stratum, ...)."""
    group = (JUDGE, "stratum") if config["calibration"] == "shared" else (JUDGE, *DIMS)
    return (*group, TRUTH, VERDICT)


def _one_hot(verdicts: np.ndarray, k: int) -> np.ndarray:
    """Return (P, J, K) indicators of each judge's verdict; a missing verdict (-1) is all 0."""
    return (np.asarray(verdicts)[:, :, None] == np.arange(k)).astype(float)


def _count_logp(value, log_prob):
    """Σ count · log P with 0 · (−inf) = 0; the multinomial coefficients are constants."""
    return pt.switch(pt.gt(value, 0), value * log_prob, np.float64(0.0))


def build_categorical_jury_from_config(counts: CategoricalJuryCounts, config: dict) -> pm.Model:
    """Build the PyMC model from a :func:`categorical_jury_model_config` configuration.

    Raises
    ------
    ValueError
        If the configuration's design or categories are not the counts'.

    Examples
    --------
    >>> counts = CategoricalJuryCounts.from_counts(
    ...     ["000", "111", "222"], [30, 20, 25], judges=["a", "b", "c"],
    ...     categories=["A", "tie", "B"])
    >>> model = build_categorical_jury_from_config(
    ...     counts, categorical_jury_model_config(counts, "separate"))
    >>> model.named_vars_to_dims["confusion"]
    ('judge', 'system', 'stratum', 'truth', 'verdict')
    """
    counts = _check_counts(counts)
    if config["design"] != counts.design or config["categories"] != [
        str(c) for c in counts.categories
    ]:
        raise ValueError(
            f"The model configuration (design {config['design']!r}, categories "
            f"{config['categories']}) does not match the counts (design {counts.design!r}, "
            f"categories {list(counts.categories)}); build the configuration from these counts."
        )
    priors = CategoricalPriors.from_dict(config["priors"])
    k = len(counts.categories)
    coords = _coords(counts)
    conf_dims = _confusion_dims(config)
    with pm.Model(coords=coords) as model:
        said = pm.Data("said", _one_hot(counts.verdicts, k), dims=(PATTERN, JUDGE, VERDICT))
        test = pm.Data("test_observed", counts.test.transpose(*TEST_DIMS).values, dims=TEST_DIMS)
        labelled = pm.Data(
            "labelled_observed",
            counts.labelled.transpose(*LABELLED_DIMS).values,
            dims=LABELLED_DIMS,
        )
        shape = tuple(len(coords[d]) for d in THETA_DIMS)
        theta = pm.Dirichlet(
            "theta", a=np.broadcast_to(priors.theta_alpha(k), shape).copy(), dims=THETA_DIMS
        )
        shape = tuple(len(coords[d]) for d in conf_dims)
        alpha = np.broadcast_to(priors.confusion_alpha(k), shape).copy()
        confusion = pm.Dirichlet("confusion", a=alpha, dims=conf_dims)
        log_c = pt.log(confusion)  # (J, [S,] R, K, V) -> (S, R, J, K, V)
        if config["calibration"] == "shared":
            log_c = log_c.dimshuffle("x", 1, 0, 2, 3)
        else:
            log_c = log_c.dimshuffle(1, 2, 0, 3, 4)
        # log P(v | t) (S, R, truth, pattern): contract the judge and verdict axes.
        log_pv = pt.tensordot(log_c, said, axes=[[2, 4], [1, 2]])
        log_theta = pt.log(theta)[..., None]  # (S, R, K, 1)
        mixture = pm.math.logsumexp(log_pv + log_theta, axis=2, keepdims=False)
        pm.CustomDist("test", mixture, logp=_count_logp, observed=test, dims=TEST_DIMS)
        # Random design: a labelled item's truth was drawn from θ too.
        joint = log_pv + log_theta if config["design"] == "random" else log_pv
        pm.CustomDist("labelled", joint, logp=_count_logp, observed=labelled, dims=LABELLED_DIMS)
        if config["scores"] is not None:
            values = np.asarray(config["scores"], dtype=np.float64)
            pm.Deterministic("score", pt.dot(theta, values), dims=DIMS)
    return model


def build_categorical_jury_model(
    counts: CategoricalJuryCounts,
    *,
    calibration: str = "shared",
    priors: CategoricalPriors | None = None,
    scores=None,
) -> pm.Model:
    """Build the PyMC model of several judges' K-category verdicts (``models/categorical-jury.md``).

    Parameters are those of :func:`categorical_jury_model_config`.

    Returns
    -------
    pymc.Model
        Coords ``system``, ``stratum``, ``category``, ``judge``, ``truth``, ``verdict``,
        ``pattern``; free ``theta`` (system, stratum, category) and ``confusion`` (judge,
        [system,] stratum, truth, verdict); data ``said`` (pattern, judge, verdict),
        ``test_observed``, ``labelled_observed``; observed ``test`` (system, stratum,
        pattern) and ``labelled`` (system, stratum, truth, pattern); with scores the
        deterministic ``score`` (system, stratum).

    Examples
    --------
    >>> counts = CategoricalJuryCounts.from_counts(
    ...     ["000", "111", "222", "01-"], [30, 20, 25, 4], judges=["a", "b", "c"],
    ...     categories=["A", "tie", "B"])
    >>> model = build_categorical_jury_model(counts, scores={"A": 1, "tie": 0.5, "B": 0})
    >>> sorted(v.name for v in model.free_RVs), model.named_vars_to_dims["score"]
    (['confusion', 'theta'], ('system', 'stratum'))
    """
    config = categorical_jury_model_config(counts, calibration, priors, scores)
    return build_categorical_jury_from_config(counts, config)


# --------------------------------------------------------------------- pattern probabilities


def pattern_log_probabilities(verdicts, confusion) -> np.ndarray:
    """Return log P(v | t) of each verdict pattern for conditionally independent judges (numpy).

    Parameters
    ----------
    verdicts : array_like of int, shape (P, J)
        Category index 0 … K−1 of each judge's verdict, -1 for none (contributes nothing).
    confusion : array_like, shape (..., J, K, K)
        Each judge's confusion matrix, rows = truth; batched over leading dims.

    Returns
    -------
    numpy.ndarray, shape (..., K, P)
        Row t holds log P(v | t).

    Examples
    --------
    >>> c = np.array([[[0.8, 0.2], [0.3, 0.7]], [[0.9, 0.1], [0.4, 0.6]]])
    >>> np.exp(pattern_log_probabilities([[1, 1], [0, -1]], c)).round(3).tolist()
    [[0.02, 0.8], [0.42, 0.3]]
    """
    conf = np.asarray(confusion, dtype=float)
    with np.errstate(divide="ignore"):
        log_c = np.log(conf)
    onehot = _one_hot(np.asarray(verdicts), conf.shape[-1])
    # 0 · log 0 = 0: a cell never said contributes nothing even where C = 0.
    log_c = np.where(np.isfinite(log_c), log_c, -1e300)
    out = np.einsum("...jkv,pjv->...kp", log_c, onehot)
    return np.where(out < -1e299, -np.inf, out)


# ------------------------------------------------------------------------------- fitting


def _jit(func):
    """``numba.njit`` kept on disk (``cache=True``), in memory where no cache is writable."""
    try:
        return numba.njit(cache=True, nogil=True)(func)
    except RuntimeError:
        return numba.njit(cache=False, nogil=True)(func)


@_jit
def _simplex(y, log_x, x):
    """Fill log x and x = softmax(y_1 … y_(K−1), −Σ y) (PyMC's simplex transform)."""
    k = log_x.shape[0]
    last = 0.0
    for i in range(k - 1):
        last -= y[i]
    top = last
    for i in range(k - 1):
        top = max(top, y[i])
    total = 0.0
    for i in range(k):
        total += math.exp((y[i] if i < k - 1 else last) - top)
    lse = top + math.log(total)
    for i in range(k):
        log_x[i] = (y[i] if i < k - 1 else last) - lse
        x[i] = math.exp(log_x[i])


@_jit
def _simplex_grad(h, x, out):
    """∂L/∂y from h = ∂L/∂log x: through the softmax, ∂L/∂z = h − x Σh; z_K = −Σ y."""
    k = h.shape[0]
    h_sum = 0.0
    for i in range(k):
        h_sum += h[i]
    last = h[k - 1] - x[k - 1] * h_sum
    for i in range(k - 1):
        out[i] = h[i] - x[i] * h_sum - last


@_jit
def _pattern_terms(verdicts, test, labelled, random, shared, log_th, log_c, h_th, h_c):
    """Return the data's log-likelihood; add its gradient in log θ and log C into h_th, h_c."""
    n_sys, n_str, n_pat = test.shape
    k = log_th.shape[1]
    n_judges = verdicts.shape[1]
    log_l = np.empty(k)
    d = np.empty(k)
    total = 0.0
    for s in range(n_sys):
        for r in range(n_str):
            g = s * n_str + r
            for p in range(n_pat):
                for t in range(k):
                    acc = 0.0
                    for j in range(n_judges):
                        v = verdicts[p, j]
                        if v >= 0:
                            c = j * n_str + r if shared else (j * n_sys + s) * n_str + r
                            acc += log_c[c, t, v]
                    log_l[t] = acc
                    d[t] = 0.0
                n = test[s, r, p]
                if n > 0:
                    top = -math.inf
                    for t in range(k):
                        top = max(top, log_th[g, t] + log_l[t])
                    acc = 0.0
                    for t in range(k):
                        acc += math.exp(log_th[g, t] + log_l[t] - top)
                    lse = top + math.log(acc)
                    total += n * lse
                    for t in range(k):
                        d[t] = n * math.exp(log_th[g, t] + log_l[t] - lse)
                        h_th[g, t] += d[t]
                for t in range(k):
                    m = labelled[s, r, t, p]
                    if m > 0:
                        total += m * log_l[t]
                        d[t] += m
                        if random:
                            total += m * log_th[g, t]
                            h_th[g, t] += m
                for j in range(n_judges):
                    v = verdicts[p, j]
                    if v >= 0:
                        c = j * n_str + r if shared else (j * n_sys + s) * n_str + r
                        for t in range(k):
                            h_c[c, t, v] += d[t]
    return total


@_jit
def _logp_grad(x, verdicts, test, labelled, random, shared, n_conf, alpha_theta, alpha_conf,
               grad):  # fmt: skip
    """Return the log density (up to a constant) at the unconstrained x; its gradient in grad.

    x holds θ's simplex coordinates per group, then each confusion row's (PyMC's order of
    ``theta_simplex__``, ``confusion_simplex__``); the Dirichlet priors with their simplex
    Jacobians are Σ α log x.
    """
    n_sys, n_str = test.shape[0], test.shape[1]
    k = alpha_theta.shape[0]
    n_groups = n_sys * n_str
    offset = n_groups * (k - 1)
    log_th, th = np.empty((n_groups, k)), np.empty((n_groups, k))
    log_c, c = np.empty((n_conf, k, k)), np.empty((n_conf, k, k))
    h_th, h_c = np.zeros((n_groups, k)), np.zeros((n_conf, k, k))
    total = 0.0
    for g in range(n_groups):
        _simplex(x[g * (k - 1) : (g + 1) * (k - 1)], log_th[g], th[g])
        for t in range(k):
            total += alpha_theta[t] * log_th[g, t]
            h_th[g, t] = alpha_theta[t]
    for i in range(n_conf):
        for t in range(k):
            start = offset + (i * k + t) * (k - 1)
            _simplex(x[start : start + k - 1], log_c[i, t], c[i, t])
            for v in range(k):
                total += alpha_conf[t, v] * log_c[i, t, v]
                h_c[i, t, v] = alpha_conf[t, v]
    total += _pattern_terms(verdicts, test, labelled, random, shared, log_th, log_c, h_th, h_c)
    for g in range(n_groups):
        _simplex_grad(h_th[g], th[g], grad[g * (k - 1) : (g + 1) * (k - 1)])
    for i in range(n_conf):
        for t in range(k):
            start = offset + (i * k + t) * (k - 1)
            _simplex_grad(h_c[i, t], c[i, t], grad[start : start + k - 1])
    return total


def _dirichlet_constant(alpha: np.ndarray) -> float:
    """Σ over rows of log Γ(Σα) − Σ log Γ(α) + log K (the normaliser and the simplex Jacobian)."""
    k = alpha.shape[-1]
    return float(np.sum(gammaln(alpha.sum(-1)) - gammaln(alpha).sum(-1) + math.log(k)))


@dataclass(frozen=True)
class CategoricalJuryLayout:
    """The arrays and sizes of the log density (:func:`_logp_grad`) of one model."""

    verdicts: np.ndarray  # (P, J) int64
    test: np.ndarray  # (S, R, P) float
    labelled: np.ndarray  # (S, R, K, P) float
    random: bool
    shared: bool
    alpha_theta: np.ndarray  # (K,)
    alpha_conf: np.ndarray  # (K, K)
    conf_shape: tuple[int, ...]  # (J, [S,] R, K, K)
    scores: np.ndarray | None

    @property
    def k(self) -> int:
        """The number of categories K."""
        return self.alpha_theta.shape[0]

    @property
    def n_conf(self) -> int:
        """The number of confusion matrices (judges × [systems ×] strata)."""
        return math.prod(self.conf_shape[:-2])

    @property
    def n_dim(self) -> int:
        """The length of the unconstrained point."""
        n_groups = self.test.shape[0] * self.test.shape[1]
        return (n_groups + self.n_conf * self.k) * (self.k - 1)

    @property
    def constant(self) -> float:
        """The Dirichlet normalisers and simplex Jacobians' log K (constants of the density)."""
        n_groups = self.test.shape[0] * self.test.shape[1]
        return n_groups * _dirichlet_constant(self.alpha_theta) + self.n_conf * (
            _dirichlet_constant(self.alpha_conf)
        )


def kernel_layout(counts: CategoricalJuryCounts, config: dict) -> CategoricalJuryLayout:
    """Return the arrays :func:`log_density` reads for the counts and a model configuration."""
    priors = CategoricalPriors.from_dict(config["priors"])
    k = len(counts.categories)
    coords = _coords(counts)
    return CategoricalJuryLayout(
        verdicts=np.asarray(counts.verdicts, dtype=np.int64),
        test=counts.test.transpose(*TEST_DIMS).values.astype(float),
        labelled=counts.labelled.transpose(*LABELLED_DIMS).values.astype(float),
        random=config["design"] == "random",
        shared=config["calibration"] == "shared",
        alpha_theta=priors.theta_alpha(k),
        alpha_conf=priors.confusion_alpha(k),
        conf_shape=tuple(len(coords[d]) for d in _confusion_dims(config)),
        scores=None if config["scores"] is None else np.asarray(config["scores"], dtype=float),
    )


def log_density(layout: CategoricalJuryLayout, x: np.ndarray) -> tuple[float, np.ndarray]:
    """Return the model's log density and its gradient at the unconstrained point ``x``.

    The hand-written equivalent of PyMC's ``model.compile_logp()`` and ``compile_dlogp()``
    of :func:`build_categorical_jury_from_config` (constants included), which nutpie
    samples: PyTensor's numba compile of this model takes a minute or two, these kernels
    seconds (and are kept on disk by numba).
    """
    grad = np.zeros(layout.n_dim)
    value = _logp_grad(
        np.ascontiguousarray(x, dtype=float), layout.verdicts, layout.test, layout.labelled,
        layout.random, layout.shared, layout.n_conf, layout.alpha_theta, layout.alpha_conf,
        grad,
    )  # fmt: skip
    return float(value) + layout.constant, grad


def _simplex_np(y: np.ndarray) -> np.ndarray:
    """PyMC's simplex backward over the last axis: softmax(y_1 … y_(K−1), −Σ y)."""
    z = np.concatenate([y, -y.sum(-1, keepdims=True)], axis=-1)
    return softmax(z, axis=-1)


def _expand(layout: CategoricalJuryLayout, x: np.ndarray) -> dict[str, np.ndarray]:
    """Return the posterior variables at the unconstrained point x: θ, the confusion[, score]."""
    k, (n_sys, n_str) = layout.k, layout.test.shape[:2]
    split = n_sys * n_str * (k - 1)
    theta = _simplex_np(x[:split].reshape(n_sys, n_str, k - 1))
    out = {"theta": theta, "confusion": _simplex_np(x[split:].reshape(*layout.conf_shape[:-1],
                                                                       k - 1))}  # fmt: skip
    if layout.scores is not None:
        out["score"] = theta @ layout.scores
    return out


def _start(layout: CategoricalJuryLayout, seed) -> np.ndarray:
    """Return a chain's start: every judge mostly right.

    θ at its prior mean + U(−1, 1) jitter in the simplex coordinates; every confusion row
    with :data:`INITIAL_DIAGONAL` on its diagonal, not jittered (a jitter of the simplex
    coordinates could move the last row's diagonal by K − 1). The mirror modes (latent
    categories permuted) have the same likelihood without labels and can hold chains started
    at random even with labels (models/jury.md, "Label switching", at K = 2).
    """
    k = layout.k
    n_groups = layout.test.shape[0] * layout.test.shape[1]
    log_a = np.log(layout.alpha_theta / layout.alpha_theta.sum())
    rng = np.random.default_rng(seed)
    theta = np.tile(log_a[:-1] - log_a.mean(), n_groups) + rng.uniform(-1, 1, n_groups * (k - 1))
    log_c = np.log(np.where(np.eye(k, dtype=bool), INITIAL_DIAGONAL,
                            (1 - INITIAL_DIAGONAL) / (k - 1)))  # fmt: skip
    rows = np.tile((log_c - log_c.mean(-1, keepdims=True))[:, :-1].ravel(), layout.n_conf)
    return np.concatenate([theta, rows])


def _compile(counts: CategoricalJuryCounts, config: dict):
    """Return the nutpie model of :func:`log_density` (a Python callback of numba kernels)."""
    from nutpie.compiled_pyfunc import from_pyfunc

    layout = kernel_layout(counts, config)

    def make_logp():
        return lambda x, **_: log_density(layout, x)

    def make_expand(*_seeds):
        return lambda x, **_: _expand(layout, x)

    coords = {name: pd.Index(list(values)) for name, values in _coords(counts).items()}
    dims = {"theta": THETA_DIMS, "confusion": _confusion_dims(config), "score": DIMS}
    names = ["theta", "confusion", *(["score"] if layout.scores is not None else [])]
    shapes = {
        "theta": (*layout.test.shape[:2], layout.k),
        "confusion": layout.conf_shape,
        "score": layout.test.shape[:2],
    }
    return from_pyfunc(
        layout.n_dim,
        make_logp,
        make_expand,
        [np.dtype("float64")] * len(names),
        [shapes[n] for n in names],
        names,
        coords=coords,
        dims={n: dims[n] for n in names},
        make_initial_point_fn=lambda seed: _start(layout, seed),
    )


def _observed(counts: CategoricalJuryCounts) -> xr.Dataset:
    return xr.Dataset({"test": counts.test, "labelled": counts.labelled}).drop_vars(
        "verdict", errors="ignore"
    )


def warn_unlabelled(counts: CategoricalJuryCounts, stacklevel: int = 2) -> None:
    """Warn (:class:`BayesJudgeWarning`) that a jury without labelled items rests on its start.

    Examples
    --------
    >>> counts = CategoricalJuryCounts.from_counts(
    ...     ["000", "111"], [30, 20], judges=["a", "b", "c"], categories=["x", "y"])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_unlabelled(counts)
    >>> caught[0].category.__name__
    'BayesJudgeWarning'
    """
    if int(counts.labelled.sum()) > 0:
        return
    warnings.warn(
        f"No labelled items: the {len(counts.judges)} judges identify the model only up to a "
        f"relabelling of the categories (label switching). Every chain starts with every "
        f"judge mostly right, so θ is anchored only by that start; label some items of each "
        f"category to check it.",
        BayesJudgeWarning,
        stacklevel=stacklevel + 1,
    )


def fit_categorical_jury(
    counts: CategoricalJuryCounts,
    *,
    calibration: str = "shared",
    priors: CategoricalPriors | None = None,
    scores=None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    random_seed: int | None = None,
    target_accept: float | None = None,
    progressbar: bool | None = None,
) -> CategoricalJuryFit:
    """Fit the joint model of several judges' K-category verdicts by NUTS (nutpie).

    Parameters
    ----------
    counts : CategoricalJuryCounts
        Verdict patterns of the test and labelled items per (system, stratum).
    calibration, priors, scores
        The model, as in :func:`categorical_jury_model_config` (default: one confusion
        matrix per judge and stratum shared by all systems). ``scores`` also adds the score
        to :meth:`CategoricalJuryFit.summary` and :meth:`CategoricalJuryFit.compare`.
    draws, tune, chains : int, default 1000, 1000, 4
        Draws kept per chain, tuning steps per chain, chains.
    random_seed : int, optional
        Seed of the sampler (drawn and stored when None).
    target_accept : float, optional
        NUTS target acceptance; default 0.9.
    progressbar : bool, optional
        Show nutpie's progress bar (default: in a terminal or notebook, not under pytest/CI).

    Returns
    -------
    CategoricalJuryFit

    Raises
    ------
    ValueError
        For a bad option or counts the model cannot identify, before anything is compiled.

    Warns
    -----
    BayesJudgeWarning
        Without labelled items: the latent categories are then anchored only by the chains'
        start (every judge mostly right).
    ConvergenceWarning
        On divergences, r_hat > 1.01 or bulk/tail ESS < 400 (with the numbers and advice).

    Examples
    --------
    >>> counts = CategoricalJuryCounts.from_counts(
    ...     ["000", "111", "222"], [30, 20, 25], judges=["a", "b", "c"],
    ...     categories=["A", "tie", "B"])
    >>> fit_categorical_jury(counts, draws=0)
    Traceback (most recent call last):
    ValueError: draws must be an integer >= 1; got 0.

    A fit (``fit_categorical_jury(counts, scores={"A": 1, "tie": 0.5, "B": 0},
    random_seed=1)``) gives ``result.summary()["score_ci"]``, each judge's ``confusion`` and
    ``result.ppc().message``.
    """
    config = categorical_jury_model_config(counts, calibration, priors, scores)
    settings = {
        "draws": check_int("draws", draws, 1),
        "tune": check_int("tune", tune, 0),
        "chains": check_int("chains", chains, 1),
        "random_seed": check_seed(random_seed),
        "target_accept": check_open_unit(
            "target_accept", 0.9 if target_accept is None else target_accept, "e.g. 0.9"
        ),
    }
    progress = show_progress(progressbar, name="progressbar")
    warn_unlabelled(counts, stacklevel=2)
    model = build_categorical_jury_from_config(counts, config)
    tree = sample_nutpie(_compile(counts, config), settings, progress)
    tree["observed_data"] = xr.DataTree(_observed(counts))
    tree["counts"] = xr.DataTree(counts.dataset)
    result = CategoricalJuryFit(tree, {**config, **settings}, model)
    result.check_sampling(stacklevel=3)
    return result


# --------------------------------------------------------------------- the agreement check


def _masks(verdicts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every complete pattern of each observed missingness mask.

    Returns the enumerated patterns (Q, J), the mask of each of them (Q,) and the mask of each
    observed pattern (P,): the replicates keep each item's set of judges.
    """
    seen = verdicts >= 0
    masks, observed_mask = np.unique(seen, axis=0, return_inverse=True)
    rows, which = [], []
    for m, mask in enumerate(masks):
        judges = np.flatnonzero(mask)
        grid = np.array(list(product(range(k), repeat=judges.size)), dtype=int)
        block = np.full((len(grid), verdicts.shape[1]), -1)
        block[:, judges] = grid.reshape(len(grid), judges.size)
        rows.append(block)
        which.extend([m] * len(grid))
    return np.concatenate(rows), np.asarray(which), np.asarray(observed_mask).ravel()


def _pair_matrix(verdicts: np.ndarray, a: int, b: int, k: int) -> np.ndarray:
    """Return (P, K·K) indicators: pattern p falls in cell (v_a, v_b) of the pair's table."""
    out = np.zeros((len(verdicts), k * k))
    both = (verdicts[:, a] >= 0) & (verdicts[:, b] >= 0)
    rows = np.flatnonzero(both)
    out[rows, verdicts[rows, a] * k + verdicts[rows, b]] = 1.0
    return out


def _g2(y: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """G² = 2 Σ y log(y / E) over the last axis (cells with y = 0 add 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cells = np.where(y > 0, y * np.log(y / expected), 0.0)
    return 2 * cells.sum(-1)


def _by_mask(prob, counts, enum_mask, observed_mask) -> tuple[np.ndarray, np.ndarray]:
    """Per-mask probabilities (..., Q) normalised within each mask, and each mask's item total."""
    share = np.zeros(prob.shape)
    total = np.zeros(prob.shape)
    for m in range(int(enum_mask.max()) + 1):
        cols = np.flatnonzero(enum_mask == m)
        share[..., cols] = prob[..., cols] / prob[..., cols].sum(-1, keepdims=True)
        total[..., cols] = counts[..., observed_mask == m].sum(-1)[..., None]
    return share, total


def _replicate(rng, share, total, enum_mask) -> np.ndarray:
    """Pattern counts drawn per missingness mask with the observed totals."""
    rep = np.zeros(share.shape, dtype=np.int64)
    for m in range(int(enum_mask.max()) + 1):
        cols = np.flatnonzero(enum_mask == m)
        n = total[..., cols[0]].astype(np.int64)
        rep[..., cols] = rng.multinomial(n, share[..., cols])
    return rep


def _posterior_arrays(posterior: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """θ (chain, draw, S, R, K) and the confusion (chain, draw, S, R, J, K, V)."""
    theta = posterior["theta"].transpose("chain", "draw", *THETA_DIMS)
    conf = posterior["confusion"].broadcast_like(theta.isel({CATEGORY: 0}, drop=True))
    conf = conf.transpose("chain", "draw", *DIMS, JUDGE, TRUTH, VERDICT)
    return theta.values, conf.values


def _on_enumerated(observed: np.ndarray, verdicts: np.ndarray, enumerated: np.ndarray):
    """Observed pattern counts (..., P) moved onto the enumerated patterns (..., Q)."""
    index = {tuple(row): q for q, row in enumerate(enumerated.tolist())}
    out = np.zeros((*observed.shape[:-1], len(enumerated)))
    for p, row in enumerate(verdicts.tolist()):
        out[..., index[tuple(row)]] += observed[..., p]
    return out


def _item_sets(counts: CategoricalJuryCounts, theta, log_pv):
    """(name, probabilities (..., Q), observed counts (S, R, P)) of the test and labelled items."""
    labelled = counts.labelled.transpose(*LABELLED_DIMS).values
    log_mix = np.logaddexp.reduce(log_pv + np.log(theta)[..., None], axis=-2)
    sets = [("test", np.exp(log_mix), counts.test.transpose(*TEST_DIMS).values)]
    for t, category in enumerate(counts.categories):
        sets.append((f"labelled_{category}", np.exp(log_pv[..., t, :]), labelled[..., t, :]))
    return sets


def _agreement(tables: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Items and share of equal verdicts of pair tables (..., K·K); NaN share without items."""
    n = tables.sum(-1)
    diagonal = tables[..., np.arange(k) * (k + 1)].sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return n, np.where(n > 0, diagonal / n, np.nan)


def _agreement_check(
    posterior: xr.Dataset, counts: CategoricalJuryCounts, *, random_seed: int
) -> CategoricalJuryPosteriorPredictiveCheck:
    """Run the posterior predictive check (see :meth:`CategoricalJuryFit.ppc`)."""
    rng = np.random.default_rng(np.random.SeedSequence(random_seed, spawn_key=(3,)))
    theta, conf = _posterior_arrays(posterior)
    k, verdicts = len(counts.categories), counts.verdicts
    enumerated, enum_mask, observed_mask = _masks(verdicts, k)
    log_pv = pattern_log_probabilities(enumerated, conf)  # (C, D, S, R, K, Q)
    pairs = list(combinations(range(len(counts.judges)), 2))
    cells = np.stack([_pair_matrix(enumerated, a, b, k) for a, b in pairs])  # (pair, Q, K·K)
    obs_cells = np.stack([_pair_matrix(verdicts, a, b, k) for a, b in pairs])
    names, observed_tables, agree_obs, agree_rep = [], [], [], []
    g2 = {"test_pairs": [], "labelled_pairs": [], "patterns": []}
    for name, prob, observed in _item_sets(counts, theta, log_pv):
        share, total = _by_mask(prob, observed, enum_mask, observed_mask)
        expected = share * total
        rep = _replicate(rng, share, total, enum_mask)
        obs_enum = np.broadcast_to(_on_enumerated(observed, verdicts, enumerated), rep.shape)
        # Pair tables (pair, ..., K·K) of the observed, replicated and expected counts.
        obs_t = np.einsum("...p,apc->a...c", observed.astype(float), obs_cells)
        rep_t, exp_t = (np.einsum("...q,aqc->a...c", x, cells) for x in (rep, expected))
        stat_obs = _g2(np.broadcast_to(obs_t[:, None, None], exp_t.shape), exp_t)
        stat_rep = _g2(rep_t.astype(float), exp_t)
        key = "test_pairs" if name == "test" else "labelled_pairs"
        g2[key].append((stat_obs, stat_rep, observed.sum(-1)))
        if name == "test":
            g2["patterns"].append(
                (_g2(obs_enum, expected)[None], _g2(rep.astype(float), expected)[None])
            )
        names.append(name)
        observed_tables.append(obs_t)
        agree_obs.append(_agreement(obs_t, k))
        agree_rep.append(_agreement(rep_t, k)[1])
    return _assemble(
        counts, posterior, pairs, names, observed_tables, agree_obs, agree_rep, g2, random_seed
    )


def _pooled_check(parts, with_items: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Combine G² parts (pair, chain, draw, S, R); return observed mean, replicated mean, p.

    The p-value is the one-sided P(G²_rep ≥ G²_obs) over the draws: a misfit makes the
    observed counts fit worse than the replicates. NaN where no item of the set exists.
    """
    # Summed over the item sets (the truths of the labelled items), the largest over the pairs
    # (the patterns check has one "pair"): one dependent pair stands out of the others' noise
    # (measured: 19 of 20 copying data sets flagged by the largest, 17 of 20 by the sum).
    obs = sum(p[0] for p in parts).max(axis=0)
    rep = sum(p[1] for p in parts).max(axis=0)
    p = (rep >= obs).mean((0, 1))
    if with_items:
        items = sum(part[2] for part in parts)
        p = np.where(items > 0, p, np.nan)
    return obs.mean((0, 1)), rep.mean((0, 1)), p


def _assemble(counts, posterior, pairs, names, tables, agree_obs, agree_rep, g2, seed):
    judges, cats = list(counts.judges), list(counts.categories)
    group = {"system": list(counts.systems), "stratum": list(counts.strata)}
    coords = {
        "items": names,
        "pair": [pair_label(judges[a], judges[b]) for a, b in pairs],
        "judge_a": ("pair", [judges[a] for a, _ in pairs]),
        "judge_b": ("pair", [judges[b] for _, b in pairs]),
        **group,
    }
    dims = ("items", "pair", *DIMS)
    observed = xr.Dataset(
        {
            "items_graded": (dims, np.stack([a[0] for a in agree_obs])),
            "agreement": (dims, np.stack([a[1] for a in agree_obs])),
        },
        coords=coords,
    )
    shape = (len(names), len(pairs), *observed["agreement"].shape[2:], len(cats), len(cats))
    tables = xr.DataArray(
        np.stack(tables).reshape(shape),
        dims=(*dims, "verdict_a", "verdict_b"),
        coords={**coords, "verdict_a": cats, "verdict_b": cats},
    )
    sample = {"chain": posterior["chain"].values, "draw": posterior["draw"].values}
    rep = np.moveaxis(np.stack(agree_rep), (2, 3), (0, 1))  # (chain, draw, items, pair, S, R)
    replicated = xr.Dataset(
        {"agreement": (("chain", "draw", *dims), rep)}, coords={**coords, **sample}
    )
    upper = (replicated["agreement"] > observed["agreement"]).mean(("chain", "draw")) + 0.5 * (
        replicated["agreement"] == observed["agreement"]
    ).mean(("chain", "draw"))
    p_value = np.minimum(1.0, 2 * np.minimum(upper, 1 - upper)).where(
        observed["agreement"].notnull()
    )
    rows = [_pooled_check(g2[c], c != "patterns") for c in ("test_pairs", "labelled_pairs")]
    rows.append(_pooled_check(g2["patterns"], False))
    pooled = xr.Dataset(
        {
            name: (("check", *DIMS), np.stack([r[i] for r in rows]))
            for i, name in enumerate(("observed", "replicated_mean", "p_value"))
        },
        coords={"check": ["test_pairs", "labelled_pairs", "patterns"], **group},
    )
    flagged = (pooled["p_value"] < PPC_ALPHA / pooled.sizes["check"]).any("check")
    return CategoricalJuryPosteriorPredictiveCheck(
        observed, tables, replicated, p_value.rename("agreement"), pooled, flagged, PPC_ALPHA,
        int(seed),
    )  # fmt: skip


@dataclass(frozen=True)
class CategoricalJuryPosteriorPredictiveCheck:
    """The judges' pairwise K × K tables and the test patterns, observed and replicated.

    Conditionally independent judges agree, given θ and their confusion matrices, as much as
    the model implies: on labelled items of truth t the pair's table is the outer product of
    their rows C_a[t, :] and C_b[t, :]; on the test items the mixture of those over θ. Judges
    that share an item's difficulty, or copy each other, agree more.

    Attributes
    ----------
    observed : xarray.Dataset
        ``items_graded`` (items both judges graded) and ``agreement`` (share of them with
        equal verdicts); dims ``items`` (``"test"``, then ``"labelled_<category>"`` for each
        truth), ``pair`` (``"a - b"``, coords ``judge_a``, ``judge_b``), ``system``,
        ``stratum``. NaN where a pair graded no item of the set.
    tables : xarray.DataArray
        The observed K × K tables (``verdict_a``, ``verdict_b``) of every pair and item set.
    replicated : xarray.Dataset
        ``agreement`` of one replicate per posterior draw (dims ``chain``, ``draw`` added):
        each group's items redrawn per missingness mask (the same number of items per set
        of judges), test items from P(v) = Σ_t θ_t P(v | t), labelled items of truth t from
        P(v | t).
    p_value : xarray.DataArray
        Per pair and item set: two-sided mid-p of the agreement share, 2 min(u, 1 − u) with
        u = P(rep > obs) + P(rep = obs) / 2.
    pooled : xarray.Dataset
        The flag's statistics, dim ``check``: ``"test_pairs"`` (the largest over the judge
        pairs of the G² of the pair's K × K table of the test items against the draw's
        expected table), ``"labelled_pairs"`` (the largest over the pairs of the G² of the
        pair's tables of the labelled items, summed over the truths) and ``"patterns"``
        (G² of the test items' pattern counts against the draw's expected counts);
        ``observed`` and ``replicated_mean`` (means over the draws) and ``p_value`` =
        P(G²_rep ≥ G²_obs) (one-sided; NaN without items).
    flagged : xarray.DataArray
        Per (system, stratum): some check's p-value < ``alpha`` / 3 (Bonferroni).
    alpha : float
    random_seed : int
    """

    observed: xr.Dataset
    tables: xr.DataArray
    replicated: xr.Dataset
    p_value: xr.DataArray
    pooled: xr.Dataset
    flagged: xr.DataArray
    alpha: float
    random_seed: int

    @property
    def message(self) -> str:
        """What the check found and what to do."""
        groups = [
            f"{s}/{r}"
            for s in self.flagged["system"].values
            for r in self.flagged["stratum"].values
            if bool(self.flagged.sel(system=s, stratum=r))
        ]
        if not groups:
            return (
                "The judges' agreement is what conditionally independent judges would show (no "
                f"check's p-value below {self.alpha:g} / {self.pooled.sizes['check']}: the pair "
                "tables of the test and of the labelled items, the fit of the test patterns)."
            )
        return (
            f"The judges' verdicts depart from conditional independence in {len(groups)} "
            f"group(s) ({', '.join(groups[:5])}): they share item difficulty or copy each other, "
            f"so the model overstates how much they confirm each other and its interval of θ "
            f"is too narrow. Look at check.table() for the pairs that agree too much; drop "
            f"one judge of such a pair, or label more items and compare with the single-judge "
            f"fits."
        )

    def table(self) -> pd.DataFrame:
        """One row per item set, pair and group: observed and replicated agreement, p-value."""
        frame = xr.Dataset(
            {
                "items_graded": self.observed["items_graded"],
                "agreement": self.observed["agreement"],
                "agreement_replicated": self.replicated["agreement"].mean(("chain", "draw")),
                "agreement_p": self.p_value,
            }
        )
        frame["flagged"] = self.flagged.broadcast_like(frame["agreement"])
        return frame.to_dataframe().reset_index()


# ------------------------------------------------------------------------------ the result


class CategoricalJuryFit:
    """A fitted K-category jury model: the posterior as an :class:`xarray.DataTree`, settings.

    Attributes
    ----------
    tree : xarray.DataTree
        Groups ``posterior``, ``sample_stats``, ``observed_data`` (``test``, ``labelled``)
        and ``counts`` (the :class:`CategoricalJuryCounts` dataset); root attrs
        ``bayesjudge_config`` (JSON) and ``bayesjudge_config_hash``.
    config : dict
        :func:`categorical_jury_model_config` plus draws, tune, chains, random_seed,
        target_accept.
    """

    def __init__(self, tree: xr.DataTree, config: dict, model: pm.Model | None = None) -> None:
        self.tree = tree
        self.config = dict(config)
        self._model = model
        seed = self.config["random_seed"]
        self.tree.attrs.update(
            {
                "bayesjudge_version": __version__,
                "bayesjudge_config": json.dumps(self.config, sort_keys=True),
                "bayesjudge_config_hash": config_hash(self.config),
                "random_seed": seed if seed < 2**63 else str(seed),
                "calibration": self.config["calibration"],
                "design": self.config["design"],
            }
        )

    @property
    def posterior(self) -> xr.Dataset:
        """The posterior draws (dims chain, draw, system, stratum, category, judge, ...)."""
        return self.tree["posterior"].dataset

    @property
    def categories(self) -> list[str]:
        """The category labels, in the counts' order."""
        return list(self.config["categories"])

    @property
    def counts(self) -> CategoricalJuryCounts:
        """The fitted counts."""
        return CategoricalJuryCounts(self.tree["counts"].dataset)

    @property
    def model(self) -> pm.Model:
        """The PyMC model (rebuilt from the stored counts after :func:`load_categorical_jury`)."""
        if self._model is None:
            config = {k: self.config[k] for k in _MODEL_KEYS}
            self._model = build_categorical_jury_from_config(self.counts, config)
        return self._model

    def __repr__(self) -> str:
        c, post = self.config, self.posterior
        return (
            f"<bayesjudge.CategoricalJuryFit calibration={c['calibration']!r} "
            f"K={len(c['categories'])} judges={post.sizes[JUDGE]} "
            f"systems={post.sizes['system']} strata={post.sizes['stratum']} "
            f"design={c['design']!r} draws={c['chains']}×{c['draws']} seed={c['random_seed']}>"
        )

    # ------------------------------------------------------------ diagnostics

    def _reported(self) -> list[str]:
        return [v for v in REPORTED if v in self.posterior.data_vars]

    def diagnostics(self) -> dict:
        """Divergences, the largest r_hat and the smallest bulk/tail ESS of the parameters."""
        return sampling_diagnostics(
            self.posterior[self._reported()], self.tree["sample_stats"].dataset
        )

    def check_sampling(self, stacklevel: int = 2) -> dict:
        """Warn (:class:`ConvergenceWarning`) with numbers and advice on bad diagnostics."""
        advice = (
            "chains in different latent classes mean label switching: label items of every category"
        )
        return warn_sampling(self.diagnostics(), self.config, advice, stacklevel + 1)

    # ------------------------------------------------------------ summaries

    def score_draws(self) -> xr.DataArray | None:
        """Posterior draws of the score Σ_c θ_c · scores[c] per group (None without scores)."""
        return self.posterior["score"] if "score" in self.posterior else None

    def summary(self, ci_prob: float = 0.95) -> xr.Dataset:
        """Posterior mean, sd, median, equal-tailed interval, r_hat and bulk ESS.

        Parameters
        ----------
        ci_prob : float, default 0.95
            Probability of the equal-tailed intervals.

        Returns
        -------
        xarray.Dataset
            ``theta`` (posterior mean; dims system, stratum, category), ``theta_sd``,
            ``theta_median``, ``theta_ci`` (+ ``ci_bound`` = lower, upper), ``theta_r_hat``,
            ``theta_ess_bulk``; the same for ``confusion`` (judge, [system,] stratum, truth,
            verdict) and, with scores, ``score`` (system, stratum). Attrs ``ci_kind="eti"``,
            ``ci_prob``, ``calibration``, ``design``, ``scores`` (JSON).
        """
        ci_prob = check_open_unit("ci_prob", ci_prob, "e.g. 0.95 for a 95 % interval")
        out = {}
        sample = ("chain", "draw")
        for name in self._reported():
            draws = self.posterior[name]
            single = draws.to_dataset(name=name)
            out[name] = draws.mean(sample)
            out[f"{name}_sd"] = draws.std(sample, ddof=1)
            out[f"{name}_median"] = draws.median(sample)
            out[f"{name}_ci"] = eti(draws, ci_prob)
            out[f"{name}_r_hat"] = az.rhat(single)[name]
            out[f"{name}_ess_bulk"] = az.ess(single, method="bulk")[name]
        attrs = {
            "ci_kind": "eti",
            "ci_prob": ci_prob,
            "calibration": self.config["calibration"],
            "design": self.config["design"],
            "scores": json.dumps(self._scores()),
        }
        return xr.Dataset(out, attrs=attrs)

    def _scores(self) -> dict | None:
        values = self.config.get("scores")
        if values is None:
            return None
        return dict(zip(self.categories, values, strict=True))

    def compare(self, dim: str = "system", ci_prob: float = 0.95) -> xr.Dataset:
        """Posterior of every pairwise difference of θ_k (and of the score) along ``dim``.

        Returns
        -------
        xarray.Dataset
            Dim ``pair`` (labels ``"a - b"``, coords ``first``/``second``), the other group
            dim and ``category``: ``theta_difference`` (draws), ``theta_mean``,
            ``theta_median``, ``theta_sd``, ``theta_ci`` (along ``ci_bound``) and
            ``theta_prob_greater`` = P(θ_a,k > θ_b,k); with scores the same ``score_*``
            without ``category``. Attrs ``ci_kind="eti"``, ``ci_prob``, ``dim``, ``scores``.
        """
        ci_prob = check_open_unit("ci_prob", ci_prob, "e.g. 0.95 for a 95 % interval")
        if dim not in DIMS:
            raise ValueError(f"dim must be one of {list(DIMS)}; got {dim!r}.")
        labels = self.posterior[dim].values.tolist()
        if len(labels) < 2:
            raise ValueError(f"compare needs at least 2 {dim} labels; got {labels}.")
        pairs = list(combinations(range(len(labels)), 2))
        sample = ("chain", "draw")
        out = {}
        for name in ("theta", "score"):
            if name not in self.posterior:
                continue
            draws = self.posterior[name]
            diff = xr.concat(
                [draws.isel({dim: i}, drop=True) - draws.isel({dim: j}, drop=True)
                 for i, j in pairs],
                dim="pair",
            ).assign_coords(
                pair=[pair_label(labels[i], labels[j]) for i, j in pairs],
                first=("pair", [labels[i] for i, _ in pairs]),
                second=("pair", [labels[j] for _, j in pairs]),
            )  # fmt: skip
            out[f"{name}_difference"] = diff
            out[f"{name}_mean"] = diff.mean(sample)
            out[f"{name}_median"] = diff.median(sample)
            out[f"{name}_sd"] = diff.std(sample, ddof=1)
            out[f"{name}_ci"] = eti(diff, ci_prob)
            out[f"{name}_prob_greater"] = (diff > 0).mean(sample)
        attrs = {"ci_kind": "eti", "ci_prob": ci_prob, "dim": dim,
                 "scores": json.dumps(self._scores())}  # fmt: skip
        return xr.Dataset(out, attrs=attrs)

    def ppc(self, random_seed: int | None = None) -> CategoricalJuryPosteriorPredictiveCheck:
        """Posterior predictive check of the judges' pairwise tables and the test patterns.

        One replicate per posterior draw: each group's test items are redrawn per
        missingness mask (the same number of items graded by each set of judges) from the
        draw's pattern probabilities P(v) = Σ_t θ_t P(v | t), the labelled items of truth t
        from P(v | t). Three discrepancies, each against the draw's expected counts: the
        largest over the judge pairs of the G² of the pair's K × K table of the test items,
        the same of the labelled items (a pair's G² summed over the truths), and the G² of
        the test items' pattern counts. A group is flagged when one of the three one-sided p-values
        P(G²_rep ≥ G²_obs) is below 0.05 / 3. Where the draws times the groups times the
        possible patterns exceed :data:`PPC_CELLS` (many judges and categories), every
        n-th draw is used, so that the arrays stay in memory.

        Returns
        -------
        CategoricalJuryPosteriorPredictiveCheck
        """
        seed = check_seed(random_seed)
        counts, posterior = self.counts, self.posterior
        # Every pattern of every observed missingness mask: Σ over masks of K^(judges graded).
        graded = np.unique(counts.verdicts >= 0, axis=0).sum(-1)
        cells = int((len(counts.categories) ** graded).sum()) * len(counts.systems)
        cells *= len(counts.strata) * posterior.sizes["chain"] * posterior.sizes["draw"]
        step = -(-cells // PPC_CELLS)
        if step > 1:
            posterior = posterior.isel(draw=slice(None, None, step))
        return _agreement_check(posterior, counts, random_seed=seed)

    # ------------------------------------------------------------ persistence

    def save(self, path) -> Path:
        """Write the fit to a netCDF file, atomically (:func:`load_categorical_jury` reads it).

        A SHA-256 digest of the content is stored; loading refuses a file changed since.
        """
        path = check_output_file(path, what="fit file")
        tree = self.tree.copy()
        stats = tree["sample_stats"].dataset
        # netCDF cannot store object arrays (nutpie's divergence messages) nor bool attrs.
        drop = [v for v in stats.data_vars if stats[v].dtype == object]
        tree["sample_stats"] = xr.DataTree(stats.drop_vars(drop))
        counts = tree["counts"].dataset
        counts.attrs = {
            k: int(v) if isinstance(v, bool | np.bool_) else v for k, v in counts.attrs.items()
        }
        tree["counts"] = xr.DataTree(counts)
        tree.attrs["format"] = CATEGORICAL_JURY_FORMAT
        tree.attrs.pop(DIGEST_ATTR, None)
        tree.attrs[DIGEST_ATTR] = content_digest(tree)
        with atomic_path(path) as tmp:
            tree.to_netcdf(tmp, engine="h5netcdf")
        return path


def load_categorical_jury(path) -> CategoricalJuryFit:
    """Read a fit written by :meth:`CategoricalJuryFit.save`; configuration and content checked.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    ValueError
        Naming the path and what is wrong: unreadable, not a K-category jury fit, a
        configuration that does not match its hash, or content that does not match the
        digest stored at save.

    Examples
    --------
    >>> load_categorical_jury("no-such-fit.nc")
    Traceback (most recent call last):
    ...
    FileNotFoundError: No K-category jury fit file at 'no-such-fit.nc'.
    """
    tree, config = read_fit_tree(
        path,
        fmt=CATEGORICAL_JURY_FORMAT,
        what="K-category jury fit",
        saver="CategoricalJuryFit.save",
    )
    return CategoricalJuryFit(tree, config)
