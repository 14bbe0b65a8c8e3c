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
several judges (the same :class:`~bayesjudge.models.categorical.CategoricalPriors`), with the
binary jury's options: ``pool_judges=True`` and ``calibration="hierarchical"`` put each
confusion row on the log-ratio scale log C[t, v] − log C[t, t] (minus logit q at K = 2) drawn
from a common population (non-centred), and ``dependence="item"`` adds a shared item effect
on each judge's chance of the right verdict (the binary model's probit item effect at K = 2). The
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
(tested equal; every variant: Dirichlet rows, the log-ratio models, the item effect), through
:func:`nutpie.compiled_pyfunc.from_pyfunc`: PyTensor's numba compile of the model's graph
takes one to two minutes, the kernels seconds once (kept on disk).
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
from scipy.special import gammaln, log_ndtr, logsumexp, ndtri, softmax

from bayesjudge._io import atomic_path, check_output_file
from bayesjudge._progress import show_progress
from bayesjudge._text import pair_label
from bayesjudge._version import __version__
from bayesjudge.categorical_estimate import score_vector
from bayesjudge.core._validation import check_open_unit
from bayesjudge.data import DIMS
from bayesjudge.data.categorical_jury import CategoricalJuryCounts
from bayesjudge.models.categorical import CategoricalPriors, error_cells
from bayesjudge.models.jury import ITEM_EFFECT_SCALE, QUADRATURE_STEP, quadrature_rule
from bayesjudge.models.sampling import (
    check_int,
    check_seed,
    config_hash,
    eti,
    read_fit_tree,
    sample_nutpie,
    sampling_diagnostics,
    summary_names,
    warn_sampling,
)
from bayesjudge.models.storage import DIGEST_ATTR, content_digest
from bayesjudge.warnings import BayesJudgeWarning

__all__ = [
    "CATEGORICAL_JURY_CALIBRATIONS",
    "CATEGORICAL_JURY_DEPENDENCES",
    "CATEGORICAL_JURY_FORMAT",
    "INITIAL_DIAGONAL",
    "CategoricalJuryFit",
    "CategoricalJuryLayout",
    "CategoricalJuryPosteriorPredictiveCheck",
    "ItemEffectLayout",
    "RatioJuryLayout",
    "build_categorical_jury_from_config",
    "build_categorical_jury_model",
    "categorical_jury_model_config",
    "fit_categorical_jury",
    "kernel_layout",
    "load_categorical_jury",
    "log_density",
    "pattern_log_probabilities",
    "uses_log_ratios",
    "warn_unlabelled",
]

CATEGORICAL_JURY_CALIBRATIONS = ("shared", "separate", "hierarchical")
CATEGORICAL_JURY_DEPENDENCES = (None, "item")
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
REPORTED = ("theta", "score", "confusion", "item_effect")
_MODEL_KEYS = ("kind", "calibration", "priors", "scores", "design", "categories")
#: Keys added with pool_judges and dependence, and their values in fits saved before them.
_OPTION_DEFAULTS = {"pool_judges": False, "dependence": None, "quadrature_step": None,
                    "item_effect_scale": None}  # fmt: skip
ERROR = "error"


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
    pool_judges: bool = False,
    dependence: str | None = None,
) -> dict:
    """Check the model's options against the counts; return its JSON-ready configuration.

    Parameters
    ----------
    counts : CategoricalJuryCounts
    calibration : {"shared", "separate", "hierarchical"}, default "shared"
        ``"shared"``: one confusion matrix per judge and stratum for every system (one judge
        prompt grading every system's answers); ``"separate"``: per judge, system and stratum;
        ``"hierarchical"``: per judge, system and stratum, its off-diagonal log-ratios
        log C[t, v] − log C[t, t] drawn around a per judge-and-stratum mean (non-centred).
    priors : CategoricalPriors, optional
        Dirichlet concentrations of θ (default 1, flat) and of every confusion row (default
        Perks's 1/K per cell; ``"shared"``/``"separate"`` without pooling); the
        ``error_logit_*`` fields are the Normal prior of the log-ratios' means and the
        HalfNormal prior of their scales (``"hierarchical"``, ``pool_judges=True``).
    scores : mapping, optional
        ``{category: value}``: adds ``score`` = Σ_c θ_c · value_c per group.
    pool_judges : bool, default False
        Draw the judges' log-ratios around a common mean per error cell (scale per truth row,
        non-centred) instead of independent Dirichlet rows (or per-judge means).
    dependence : {None, "item"}, default None
        ``"item"``: a shared item effect u ~ N(0, 1) on every judge's chance of the right
        verdict, P(v_j = t | t, u) = Φ(Φ⁻¹(C_j[t, t]) √(1 + b_t²) + b_t u), errors spread as
        the confusion row's off-diagonal (the binary model's item effect at K = 2).

    Returns
    -------
    dict
        ``kind``, ``calibration``, ``priors``, ``scores`` (values in category order, or
        None), ``design``, ``categories``, ``pool_judges``, ``dependence``,
        ``quadrature_step`` and ``item_effect_scale`` (None without the item effect).

    Raises
    ------
    ValueError
        For a bad option (named, with the allowed values), fewer than 2 judges, no test items,
        fewer than 3 judges without labelled items (not identified), or the item effect with
        fewer than 4 judges and no labelled items.

    Examples
    --------
    >>> counts = CategoricalJuryCounts.from_counts(
    ...     ["00", "11", "22", "01"], [30, 20, 25, 5], judges=["a", "b"],
    ...     labelled=[[4, 0, 0, 1], [0, 5, 0, 0], [0, 0, 5, 0]], categories=["A", "tie", "B"])
    >>> categorical_jury_model_config(counts, scores={"A": 1, "tie": 0.5, "B": 0})["scores"]
    [1.0, 0.5, 0.0]
    >>> categorical_jury_model_config(counts, calibration="pooled")
    Traceback (most recent call last):
    ValueError: calibration must be one of ['shared', 'separate', 'hierarchical']; got 'pooled'.
    """
    counts = _check_counts(counts)
    if not isinstance(calibration, str) or calibration not in CATEGORICAL_JURY_CALIBRATIONS:
        raise ValueError(
            f"calibration must be one of {list(CATEGORICAL_JURY_CALIBRATIONS)}; got "
            f"{calibration!r}."
        )
    if not isinstance(pool_judges, bool | np.bool_):
        raise ValueError(f"pool_judges must be True or False; got {pool_judges!r}.")
    if not (dependence is None or (isinstance(dependence, str)
                                   and dependence in CATEGORICAL_JURY_DEPENDENCES)):  # fmt: skip
        raise ValueError(
            f"dependence must be one of {list(CATEGORICAL_JURY_DEPENDENCES)}; got {dependence!r}."
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
    if dependence == "item" and int(counts.labelled.sum()) == 0 and n_judges < 4:
        raise ValueError(
            f"dependence='item' with {n_judges} judges and no labelled items is not "
            f"identified (as for the binary jury: the item effect's b_t trade off against the "
            f"confusion matrices). Add labelled items, or a fourth judge."
        )
    values = None if scores is None else score_vector(scores, counts.categories)
    item = dependence == "item"
    return {
        "kind": "categorical-jury",
        "calibration": calibration,
        "priors": priors.to_dict(),
        "scores": None if values is None else [float(v) for v in values],
        "design": counts.design,
        "categories": [str(c) for c in counts.categories],
        "pool_judges": bool(pool_judges),
        "dependence": dependence,
        "quadrature_step": QUADRATURE_STEP if item else None,
        "item_effect_scale": ITEM_EFFECT_SCALE if item else None,
    }


def _options(config: dict) -> dict:
    """Return the configuration with the keys that fits saved before these options lack."""
    return {**_OPTION_DEFAULTS, **config}


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
        ERROR: error_cells(categories)[0],
    }


def _confusion_dims(config: dict) -> tuple[str, ...]:
    """Dims of ``confusion``: (judge, stratum, ...) shared, (judge, system, stratum, ...)."""
    group = (JUDGE, "stratum") if config["calibration"] == "shared" else (JUDGE, *DIMS)
    return (*group, TRUTH, VERDICT)


def _level_dims(config: dict) -> tuple[str, ...]:
    """Return the judge-level dims: the confusion's (shared, separate) or its mean's."""
    return (JUDGE, *DIMS) if config["calibration"] == "separate" else (JUDGE, "stratum")


def uses_log_ratios(config: dict) -> bool:
    """Whether the confusion rows are softmax of log-ratios (pooled or hierarchical).

    Examples
    --------
    >>> uses_log_ratios({"calibration": "shared", "pool_judges": True})
    True
    """
    return config["calibration"] == "hierarchical" or bool(config.get("pool_judges", False))


def _log_ratio_confusion(config: dict, priors: CategoricalPriors, k: int):
    """Off-diagonal log-ratios η = log C[t, v] − log C[t, t], pooled and/or hierarchical.

    As the binary jury's logit q (at K = 2, η = −logit q): ``pool_judges`` draws each judge's
    η from a common mean per error cell with a scale per truth row (non-centred);
    ``"hierarchical"`` draws η per (judge, system, stratum) around the judge's mean.
    """
    _, rows, _ = error_cells(range(k))
    level = _level_dims(config)
    mean, sd = (np.float64(v) for v in priors.error_logit_mean)
    tau = np.float64(priors.error_logit_scale)
    zero, one = np.float64(0.0), np.float64(1.0)
    if config["pool_judges"]:
        rest = level[1:]
        mu = pm.Normal("error_judges_mean", mean, sd, dims=(*rest, ERROR))
        sigma = pm.HalfNormal("error_judges_scale", tau, dims=(*rest, TRUTH))
        z = pm.Normal("error_judges_z", zero, one, dims=(*level, ERROR))
        eta = mu + sigma[..., rows] * z  # rest are the trailing dims of level: broadcasting
        if config["calibration"] != "hierarchical":
            return eta
        mu = pm.Deterministic("error_logit_mean", eta, dims=(*level, ERROR))
    else:
        mu = pm.Normal("error_logit_mean", mean, sd, dims=(*level, ERROR))
    sigma = pm.HalfNormal("error_logit_scale", tau, dims=(*level, TRUTH))
    z = pm.Normal("error_z", zero, one, dims=(JUDGE, *DIMS, ERROR))
    return mu[:, None] + sigma[:, None][..., rows] * z


def _confusion(config: dict, priors: CategoricalPriors, coords: dict):
    """Return the ``confusion`` variable: Dirichlet rows, or softmax of the log-ratios."""
    k = len(coords[CATEGORY])
    conf_dims = _confusion_dims(config)
    if not uses_log_ratios(config):
        shape = tuple(len(coords[d]) for d in conf_dims)
        alpha = np.broadcast_to(priors.confusion_alpha(k), shape).copy()
        return pm.Dirichlet("confusion", a=alpha, dims=conf_dims)
    eta_off = _log_ratio_confusion(config, priors, k)
    _, rows, cols = error_cells(range(k))
    scatter = np.zeros((len(rows), k, k))
    scatter[np.arange(len(rows)), rows, cols] = 1.0  # the diagonal stays 0: each row's reference
    eta = pt.tensordot(eta_off, scatter, axes=[[-1], [0]])
    return pm.Deterministic("confusion", pt.special.softmax(eta, axis=-1), dims=conf_dims)


_SQRT2 = np.float64(math.sqrt(2.0))  # float64: pytensor would make sqrt(2.0) float32


def _log_ndtr(z):
    """Log Φ(z), stable in both tails (as models.jury's, with a float64 √2)."""
    return pt.switch(
        pt.lt(z, -1),
        pt.log(pt.erfcx(-z / _SQRT2) / 2) - pt.sqr(z) / 2,
        pt.log1p(-pt.erfc(z / _SQRT2) / 2),
    )


def _log_patterns_item(log_c, conf, said, b, step: float, k: int):
    """Return log P(v | t) (S, R, truth, pattern), the item effect summed out (trapezoid).

    P(v_j = t | t, u) = Φ(a_jt + b_t u), a_jt = Φ⁻¹(C_j[t, t]) √(1 + b_t²) (its marginal over
    u is C_j[t, t]); a wrong verdict v ≠ t has (1 − Φ(a_jt + b_t u)) C_j[t, v] / (1 − C_j[t, t]).
    """
    eye = np.eye(k)
    x, logw = quadrature_rule(step)
    diag = (conf * eye).sum(-1)  # (S, R, J, K)
    a = -_SQRT2 * pt.erfcinv(2 * diag) * pt.sqrt(1 + b**2)
    eta = a[..., None] + b[:, None] * x  # (S, R, J, K, N)
    up, down = _log_ndtr(eta), _log_ndtr(-eta)
    right = said.dimshuffle(2, 0, 1)  # (K, P, J): judge j said the truth t
    wrong = said.sum(-1).dimshuffle("x", 0, 1) - right  # graded, not t
    # (S, R, K, 1, J, N) against (K, P, J, 1): sum over the judges.
    lp = (up.dimshuffle(0, 1, 3, "x", 2, 4) * right[..., None]).sum(4)
    lp = lp + (down.dimshuffle(0, 1, 3, "x", 2, 4) * wrong[..., None]).sum(4)
    mixed = pm.math.logsumexp(lp + logw, axis=-1, keepdims=False)  # (S, R, K, P)
    # Which wrong category: log C[t, v] − log(1 − C[t, t]), free of u.
    log_err = pt.switch(eye > 0, np.float64(0.0), log_c - pt.log1p(-diag)[..., None])
    return mixed + pt.tensordot(log_err, said, axes=[[2, 4], [1, 2]])


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
    config = _options(config)
    priors = CategoricalPriors.from_dict(config["priors"])
    k = len(counts.categories)
    coords = _coords(counts)
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
        confusion = _confusion(config, priors, coords)
        # (J, [S,] R, K, V) -> (S, R, J, K, V)
        order = ("x", 1, 0, 2, 3) if config["calibration"] == "shared" else (1, 2, 0, 3, 4)
        conf = confusion.dimshuffle(*order)
        log_c = pt.log(conf)
        if config["dependence"] == "item":
            scale = np.float64(config["item_effect_scale"])
            b = pm.HalfNormal("item_effect", scale, dims=TRUTH)
            log_pv = _log_patterns_item(log_c, conf, said, b, config["quadrature_step"], k)
        else:
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
    pool_judges: bool = False,
    dependence: str | None = None,
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
    config = categorical_jury_model_config(
        counts, calibration, priors, scores, pool_judges, dependence
    )
    return build_categorical_jury_from_config(counts, config)


# --------------------------------------------------------------------- pattern probabilities


def pattern_log_probabilities(
    verdicts, confusion, item_effect=None, *, step: float = QUADRATURE_STEP
) -> np.ndarray:
    """Return log P(v | t) of each verdict pattern under the model (numpy; batched).

    Parameters
    ----------
    verdicts : array_like of int, shape (P, J)
        Category index 0 … K−1 of each judge's verdict, -1 for none (contributes nothing).
    confusion : array_like, shape (..., J, K, K)
        Each judge's confusion matrix, rows = truth; batched over leading dims (with the item
        effect: the marginal over u).
    item_effect : array_like, shape (..., K), optional
        b_t of ``dependence="item"``; None: conditionally independent judges.
    step : float, default QUADRATURE_STEP
        Step of the trapezoid grid over u (:func:`bayesjudge.models.jury.quadrature_rule`).

    Returns
    -------
    numpy.ndarray, shape (..., K, P)
        Row t holds log P(v | t).

    Examples
    --------
    >>> c = np.array([[[0.8, 0.2], [0.3, 0.7]], [[0.9, 0.1], [0.4, 0.6]]])
    >>> np.exp(pattern_log_probabilities([[1, 1], [0, -1]], c)).round(3).tolist()
    [[0.02, 0.8], [0.42, 0.3]]
    >>> lp = pattern_log_probabilities([[1, -1], [0, -1]], c, item_effect=[1.0, 1.0])
    >>> np.exp(lp).round(3).tolist()  # one judge: the marginal rates are kept
    [[0.2, 0.8], [0.7, 0.3]]
    """
    conf = np.asarray(confusion, dtype=float)
    with np.errstate(divide="ignore"):
        log_c = np.log(conf)
    k = conf.shape[-1]
    onehot = _one_hot(np.asarray(verdicts), k)
    if item_effect is not None:
        diag = np.diagonal(conf, axis1=-2, axis2=-1)  # (..., J, K)
        with np.errstate(divide="ignore"):
            log_c = np.where(np.eye(k, dtype=bool), 0.0, log_c - np.log1p(-diag)[..., None])
    # 0 · log 0 = 0: a cell never said contributes nothing even where C = 0.
    log_c = np.where(np.isfinite(log_c), log_c, -1e300)
    out = np.einsum("...jkv,pjv->...kp", log_c, onehot)
    out = np.where(out < -1e299, -np.inf, out)
    if item_effect is None:
        return out
    b = np.asarray(item_effect, dtype=float)
    x, logw = quadrature_rule(step)
    a = ndtri(diag) * np.sqrt(1 + b**2)[..., None, :]
    eta = a[..., None] + b[..., None, :, None] * x  # (..., J, K, N)
    wrong = onehot.sum(-1, keepdims=True) - onehot
    lp = np.einsum("...jkn,pjk->...kpn", log_ndtr(eta), onehot)
    lp = lp + np.einsum("...jkn,pjk->...kpn", log_ndtr(-eta), wrong)
    return out + logsumexp(lp + logw, axis=-1)


# ------------------------------------------------------------------------------- fitting


def _jit(func):
    """``numba.njit`` kept on disk (``cache=True``), in memory where no cache is writable.

    ``error_model="numpy"``: a division by zero at an extreme point of the warm-up (a
    confusion cell rounded to exactly 1) gives inf or NaN, which nutpie rejects as a
    divergent step, instead of raising ZeroDivisionError inside the sampler.
    """
    options = {"nogil": True, "error_model": "numpy"}
    try:
        return numba.njit(cache=True, **options)(func)
    except RuntimeError:
        return numba.njit(cache=False, **options)(func)


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
               n_item, tau, nodes, logw, grad):  # fmt: skip
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
    b, h_b = np.empty(n_item), np.zeros(n_item)
    total += _item_effect(x, b, tau)
    total += _likelihood(verdicts, test, labelled, random, shared, log_th, log_c, c, b, nodes,
                         logw, h_th, h_c, h_b)  # fmt: skip
    _item_effect_grad(x, b, tau, h_b, grad)
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
class ItemEffectLayout:
    """The item effect's part of a kernel layout: b's HalfNormal scale and the u grid.

    ``n_item`` is 0 without the item effect (b empty), K with it (log b last in x).
    """

    n_item: int
    tau: float
    nodes: np.ndarray
    logw: np.ndarray

    @classmethod
    def from_config(cls, config: dict, k: int) -> ItemEffectLayout:
        """Return the layout of ``config`` (an empty one without the item effect)."""
        if _options(config)["dependence"] != "item":
            return cls(0, 1.0, np.zeros(1), np.zeros(1))
        nodes, logw = quadrature_rule(config["quadrature_step"])
        return cls(k, float(config["item_effect_scale"]), nodes, logw)

    def args(self) -> tuple:
        """Return the kernels' arguments: n_item, tau, nodes, logw."""
        return self.n_item, self.tau, self.nodes, self.logw


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
    item: ItemEffectLayout = None  # dependence="item": its prior and grid

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
        return (n_groups + self.n_conf * self.k) * (self.k - 1) + self.item.n_item

    @property
    def constant(self) -> float:
        """The Dirichlet normalisers and simplex Jacobians' log K (constants of the density)."""
        n_groups = self.test.shape[0] * self.test.shape[1]
        return n_groups * _dirichlet_constant(self.alpha_theta) + self.n_conf * (
            _dirichlet_constant(self.alpha_conf)
        )


def kernel_layout(counts: CategoricalJuryCounts, config: dict):
    """Return the arrays :func:`log_density` reads for the counts and a model configuration.

    A :class:`CategoricalJuryLayout` (Dirichlet rows) or a :class:`RatioJuryLayout` (the
    pooled and hierarchical models, :func:`uses_log_ratios`).
    """
    config = _options(config)
    if uses_log_ratios(config):
        return _ratio_layout(counts, config)
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
        item=ItemEffectLayout.from_config(config, k),
    )


def log_density(layout, x: np.ndarray) -> tuple[float, np.ndarray]:
    """Return the model's log density and its gradient at the unconstrained point ``x``.

    The hand-written equivalent of PyMC's ``model.compile_logp()`` and ``compile_dlogp()``
    of :func:`build_categorical_jury_from_config` (constants included), which nutpie
    samples: PyTensor's numba compile of this model takes a minute or two, these kernels
    seconds (and are kept on disk by numba).
    """
    grad = np.zeros(layout.n_dim)
    if isinstance(layout, RatioJuryLayout):
        value = _ratio_logp_grad(
            np.ascontiguousarray(x, dtype=float), layout.verdicts, layout.test,
            layout.labelled, layout.random, layout.shared, layout.alpha_theta, layout.pooled,
            layout.hier, layout.n_pop, layout.pop, layout.level, layout.pop.size, layout.sizes,
            layout.prior, *layout.item.args(), grad,
        )  # fmt: skip
        return float(value) + layout.constant, grad
    value = _logp_grad(
        np.ascontiguousarray(x, dtype=float), layout.verdicts, layout.test, layout.labelled,
        layout.random, layout.shared, layout.n_conf, layout.alpha_theta, layout.alpha_conf,
        *layout.item.args(), grad,
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
    n_item = layout.item.n_item
    rows = x[split : x.size - n_item].reshape(*layout.conf_shape[:-1], k - 1)
    out = {"theta": theta, "confusion": _simplex_np(rows)}
    if n_item:
        out["item_effect"] = np.exp(x[-n_item:])
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
    return np.concatenate([theta, rows, _item_start(layout.item, rng)])


def _item_start(item: ItemEffectLayout, rng) -> np.ndarray:
    """Return log b's start: b = ½ (a moderate effect), jittered by ±½ on the log scale."""
    return math.log(0.5) + rng.uniform(-0.5, 0.5, item.n_item)


# ------------------------------------------------------------ the log-ratio models' kernels
#
# The pooled and hierarchical models (uses_log_ratios) have each confusion row as the softmax
# of its log-ratios η (0 on the diagonal), built in one or two non-centred stages:
#   pooled:        η1[l, e] = μ0[p(l), e] + σ0[p(l), t(e)] z0[l, e]    (l: judge × rest)
#   not pooled:    η1[l, e] = μ[l, e]
#   hierarchical:  η[i, e]  = η1[l(i), e] + σ[l(i), t(e)] z[i, e]   (i: judge × system × stratum)
#   otherwise:     η[i, e]  = η1[i, e]
# μ ~ Normal, σ ~ HalfNormal (sampled as log σ), z ~ Normal(0, 1); x holds them in PyMC's
# order of the free variables (tested against the model's value variables).

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


@_jit
def _ratio_priors(x, off, sizes, prior, grad):
    """Return the log priors of the hierarchy's blocks; add their gradient into grad.

    ``sizes`` holds (length, kind) per block: kind 0 Normal(prior[0], prior[1]), 1 log σ of
    HalfNormal(prior[2]) with the log transform's Jacobian, 2 Normal(0, 1).
    """
    total = 0.0
    start = off
    for block in range(sizes.shape[0]):
        n, kind = sizes[block, 0], sizes[block, 1]
        for i in range(start, start + n):
            if kind == 0:
                d = (x[i] - prior[0]) / prior[1]
                total += -0.5 * d * d - math.log(prior[1]) - _HALF_LOG_2PI
                grad[i] += -d / prior[1]
            elif kind == 1:
                s = math.exp(x[i]) / prior[2]
                total += math.log(2.0) - _HALF_LOG_2PI - math.log(prior[2]) - 0.5 * s * s + x[i]
                grad[i] += 1.0 - s * s
            else:
                total += -0.5 * x[i] * x[i] - _HALF_LOG_2PI
                grad[i] += -x[i]
        start += n
    return total


@_jit
def _ratio_forward(x, off, k, pooled, hier, n_pop, pop, level, eta1, eta):
    """Fill η1 (level cells, E) and η (confusion cells, E) from the hierarchy's blocks."""
    n_err, n_level, n_conf = k * (k - 1), eta1.shape[0], eta.shape[0]
    if pooled:
        mu0, ls0 = off, off + n_pop * n_err
        z0 = ls0 + n_pop * k
        for lv in range(n_level):
            p = pop[lv]
            for e in range(n_err):
                sigma = math.exp(x[ls0 + p * k + e // (k - 1)])
                eta1[lv, e] = x[mu0 + p * n_err + e] + sigma * x[z0 + lv * n_err + e]
        off = z0 + n_level * n_err
    else:
        for lv in range(n_level):
            for e in range(n_err):
                eta1[lv, e] = x[off + lv * n_err + e]
        off += n_level * n_err
    for i in range(n_conf):
        lv = level[i]
        for e in range(n_err):
            eta[i, e] = eta1[lv, e]
            if hier:
                sigma = math.exp(x[off + lv * k + e // (k - 1)])
                eta[i, e] += sigma * x[off + n_level * k + i * n_err + e]


@_jit
def _ratio_backward(x, off, k, pooled, hier, n_pop, pop, level, g_eta, g1, grad):
    """Add ∂L/∂x of the hierarchy's blocks from g_eta = ∂L/∂η (chain rule through η = μ + σz)."""
    n_err, n_level, n_conf = k * (k - 1), g1.shape[0], g_eta.shape[0]
    top = off + (n_pop * (n_err + k) if pooled else 0) + n_level * n_err
    g1[:, :] = 0.0
    for i in range(n_conf):
        lv = level[i]
        for e in range(n_err):
            g = g_eta[i, e]
            g1[lv, e] += g
            if hier:
                ls = top + lv * k + e // (k - 1)
                z = top + n_level * k + i * n_err + e
                sigma = math.exp(x[ls])
                grad[z] += g * sigma
                grad[ls] += g * sigma * x[z]
    if not pooled:
        for lv in range(n_level):
            for e in range(n_err):
                grad[off + lv * n_err + e] += g1[lv, e]
        return
    mu0, ls0 = off, off + n_pop * n_err
    z0 = ls0 + n_pop * k
    for lv in range(n_level):
        p = pop[lv]
        for e in range(n_err):
            g = g1[lv, e]
            ls = ls0 + p * k + e // (k - 1)
            sigma = math.exp(x[ls])
            grad[mu0 + p * n_err + e] += g
            grad[z0 + lv * n_err + e] += g * sigma
            grad[ls] += g * sigma * x[z0 + lv * n_err + e]


@_jit
def _ratio_rows(eta, k, log_c, c):
    """Fill log C and C: each row t the log-softmax of (η of its off-diagonal cells, 0 at t)."""
    row = np.empty(k)
    for i in range(eta.shape[0]):
        for t in range(k):
            top = 0.0
            for v in range(k):
                row[v] = 0.0 if v == t else eta[i, t * (k - 1) + (v if v < t else v - 1)]
                top = max(top, row[v])
            total = 0.0
            for v in range(k):
                total += math.exp(row[v] - top)
            lse = top + math.log(total)
            for v in range(k):
                log_c[i, t, v] = row[v] - lse
                c[i, t, v] = math.exp(log_c[i, t, v])


@_jit
def _ratio_logp_grad(x, verdicts, test, labelled, random, shared, alpha_theta, pooled, hier,
                     n_pop, pop, level, n_level, sizes, prior, n_item, tau, nodes, logw,
                     grad):  # fmt: skip
    """Return the log density of a log-ratio model at x (θ's Dirichlet constant aside)."""
    n_sys, n_str = test.shape[0], test.shape[1]
    k = alpha_theta.shape[0]
    n_groups, n_err, n_conf = n_sys * n_str, k * (k - 1), level.shape[0]
    log_th, th = np.empty((n_groups, k)), np.empty((n_groups, k))
    h_th = np.zeros((n_groups, k))
    total = 0.0
    for g in range(n_groups):
        _simplex(x[g * (k - 1) : (g + 1) * (k - 1)], log_th[g], th[g])
        for t in range(k):
            total += alpha_theta[t] * log_th[g, t]
            h_th[g, t] = alpha_theta[t]
    off = n_groups * (k - 1)
    eta1, eta = np.empty((n_level, n_err)), np.empty((n_conf, n_err))
    _ratio_forward(x, off, k, pooled, hier, n_pop, pop, level, eta1, eta)
    total += _ratio_priors(x, off, sizes, prior, grad)
    log_c, c = np.empty((n_conf, k, k)), np.empty((n_conf, k, k))
    _ratio_rows(eta, k, log_c, c)
    h_c = np.zeros((n_conf, k, k))
    b, h_b = np.empty(n_item), np.zeros(n_item)
    total += _item_effect(x, b, tau)
    total += _likelihood(verdicts, test, labelled, random, shared, log_th, log_c, c, b, nodes,
                         logw, h_th, h_c, h_b)  # fmt: skip
    _item_effect_grad(x, b, tau, h_b, grad)
    for g in range(n_groups):
        _simplex_grad(h_th[g], th[g], grad[g * (k - 1) : (g + 1) * (k - 1)])
    g_eta = np.empty((n_conf, n_err))
    for i in range(n_conf):
        for t in range(k):
            h_sum = 0.0
            for v in range(k):
                h_sum += h_c[i, t, v]
            for v in range(k):
                if v != t:
                    g_eta[i, t * (k - 1) + (v if v < t else v - 1)] = (
                        h_c[i, t, v] - c[i, t, v] * h_sum
                    )
    _ratio_backward(x, off, k, pooled, hier, n_pop, pop, level, g_eta, eta1, grad)
    return total


@dataclass(frozen=True)
class RatioJuryLayout:
    """The arrays and sizes of the log density (:func:`_ratio_logp_grad`) of a log-ratio model."""

    verdicts: np.ndarray  # (P, J) int64
    test: np.ndarray  # (S, R, P) float
    labelled: np.ndarray  # (S, R, K, P) float
    random: bool
    shared: bool
    alpha_theta: np.ndarray  # (K,)
    pooled: bool
    hier: bool
    pop: np.ndarray  # (level cells,) int64: each level cell's population cell
    level: np.ndarray  # (confusion cells,) int64: each confusion cell's level cell
    sizes: np.ndarray  # (blocks, 2) int64: (length, kind) of the hierarchy's blocks
    prior: np.ndarray  # (mean, sd, scale) of error_logit_mean and error_logit_scale
    shapes: dict  # name -> shape of the hierarchy's variables, in x's order
    conf_shape: tuple[int, ...]  # (J, [S,] R, K, K)
    scores: np.ndarray | None
    item: ItemEffectLayout = None  # dependence="item": its prior and grid

    @property
    def k(self) -> int:
        """The number of categories K."""
        return self.alpha_theta.shape[0]

    @property
    def n_pop(self) -> int:
        """The number of population cells (the level's dims without the judge)."""
        return int(self.pop.max()) + 1

    @property
    def n_dim(self) -> int:
        """The length of the unconstrained point."""
        n_theta = self.test.shape[0] * self.test.shape[1] * (self.k - 1)
        return n_theta + int(self.sizes[:, 0].sum()) + self.item.n_item

    @property
    def constant(self) -> float:
        """θ's Dirichlet normalisers and simplex Jacobians' log K."""
        return self.test.shape[0] * self.test.shape[1] * _dirichlet_constant(self.alpha_theta)


def _ratio_dims(config: dict) -> dict[str, tuple[str, ...]]:
    """Dims of the hierarchy's variables, in PyMC's order of the free variables."""
    level = _level_dims(config)
    out = {}
    if config["pool_judges"]:
        out |= {
            "error_judges_mean": (*level[1:], ERROR),
            "error_judges_scale": (*level[1:], TRUTH),
            "error_judges_z": (*level, ERROR),
        }
    if not config["pool_judges"] or config["calibration"] == "hierarchical":
        out["error_logit_mean"] = (*level, ERROR)  # free, or η1 of the pooled hierarchy
    if config["calibration"] == "hierarchical":
        out |= {"error_logit_scale": (*level, TRUTH), "error_z": (JUDGE, *DIMS, ERROR)}
    return out  # fmt: skip


def _ratio_layout(counts: CategoricalJuryCounts, config: dict) -> RatioJuryLayout:
    priors = CategoricalPriors.from_dict(config["priors"])
    k = len(counts.categories)
    coords = _coords(counts)
    sizes = {d: len(v) for d, v in coords.items()}
    dims = _ratio_dims(config)
    shapes = {n: tuple(sizes[d] for d in ds) for n, ds in dims.items()}
    pooled, hier = bool(config["pool_judges"]), config["calibration"] == "hierarchical"
    level_shape = tuple(sizes[d] for d in _level_dims(config))
    n_level = math.prod(level_shape)
    n_pop = n_level // level_shape[0]
    conf_shape = tuple(sizes[d] for d in _confusion_dims(config))
    if hier:  # confusion (J, S, R) -> level (J, R)
        j, _, r = np.meshgrid(*[np.arange(n) for n in conf_shape[:3]], indexing="ij")
        level = (j * conf_shape[2] + r).ravel()
    else:
        level = np.arange(n_level)
    kinds = {"mean": 0, "scale": 1, "z": 2}
    free = [n for n in dims if not (pooled and hier and n == "error_logit_mean")]
    blocks = [(math.prod(shapes[n]), kinds[n.rsplit("_", 1)[1]]) for n in free]
    return RatioJuryLayout(
        verdicts=np.asarray(counts.verdicts, dtype=np.int64),
        test=counts.test.transpose(*TEST_DIMS).values.astype(float),
        labelled=counts.labelled.transpose(*LABELLED_DIMS).values.astype(float),
        random=config["design"] == "random",
        shared=config["calibration"] == "shared",
        alpha_theta=priors.theta_alpha(k),
        pooled=pooled,
        hier=hier,
        pop=np.arange(n_level, dtype=np.int64) % n_pop,
        level=level.astype(np.int64),
        sizes=np.asarray(blocks, dtype=np.int64),
        prior=np.array([*priors.error_logit_mean, priors.error_logit_scale], dtype=float),
        shapes=shapes,
        conf_shape=conf_shape,
        scores=None if config["scores"] is None else np.asarray(config["scores"], dtype=float),
        item=ItemEffectLayout.from_config(config, k),
    )


def _ratio_expand(layout: RatioJuryLayout, x: np.ndarray) -> dict[str, np.ndarray]:
    """Return θ, the confusion, the hierarchy's variables (σ's, not log σ's)[, score] at x."""
    k, (n_sys, n_str) = layout.k, layout.test.shape[:2]
    split = n_sys * n_str * (k - 1)
    theta = _simplex_np(x[:split].reshape(n_sys, n_str, k - 1))
    n_err, n_level = k * (k - 1), layout.pop.size
    eta1, eta = np.empty((n_level, n_err)), np.empty((layout.level.size, n_err))
    x = np.ascontiguousarray(x, dtype=float)
    _ratio_forward(x, split, k, layout.pooled, layout.hier, layout.n_pop, layout.pop,
                   layout.level, eta1, eta)  # fmt: skip
    log_c, c = np.empty((eta.shape[0], k, k)), np.empty((eta.shape[0], k, k))
    _ratio_rows(eta, k, log_c, c)
    out = {"theta": theta, "confusion": c.reshape(layout.conf_shape)}
    start = split
    for name, shape in layout.shapes.items():
        if name == "error_logit_mean" and layout.pooled:
            out[name] = eta1.reshape(shape)
            continue
        size = math.prod(shape)
        value = x[start : start + size].reshape(shape)
        out[name] = np.exp(value) if name.endswith("_scale") else value
        start += size
    if layout.item.n_item:
        out["item_effect"] = np.exp(x[-layout.item.n_item :])
    if layout.scores is not None:
        out["score"] = theta @ layout.scores
    return out


def _ratio_start(layout: RatioJuryLayout, seed) -> np.ndarray:
    """Return a chain's start: every judge mostly right, as :func:`_start`.

    Every mean at the log-ratio of :data:`INITIAL_DIAGONAL`, θ jittered as in
    :func:`_start`, z = 0, log σ = −1 ± ½.
    """
    k = layout.k
    rng = np.random.default_rng(seed)
    n_groups = layout.test.shape[0] * layout.test.shape[1]
    log_a = np.log(layout.alpha_theta / layout.alpha_theta.sum())
    parts = [np.tile(log_a[:-1] - log_a.mean(), n_groups) + rng.uniform(-1, 1, n_groups * (k - 1))]
    ratio = math.log((1 - INITIAL_DIAGONAL) / (k - 1) / INITIAL_DIAGONAL)
    for size, kind in layout.sizes:
        if kind == 0:
            parts.append(np.full(size, ratio))
        elif kind == 1:
            parts.append(-1.0 + rng.uniform(-0.5, 0.5, size))
        else:
            parts.append(np.zeros(size))
    parts.append(_item_start(layout.item, rng))
    return np.concatenate(parts)


# ------------------------------------------------------------ the item effect's kernels
#
# dependence="item": P(v_j = t | t, u) = Φ(a_jt + b_t u), a_jt = Φ⁻¹(C_j[t, t]) √(1 + b_t²);
# a wrong verdict v has (1 − Φ(a_jt + b_t u)) C_j[t, v] / (1 − C_j[t, t]); u is summed out on
# the binary model's trapezoid grid. The kernels return the gradient in log C (as
# _pattern_terms) and in b, so that every confusion parameterisation reuses its backward pass.

_SQRT_2PI = math.sqrt(2 * math.pi)


@_jit
def _nb_log_ndtr(z):
    """Return log Φ(z) (erfc-based; the asymptotic series below −37, where erfc underflows)."""
    if z < -37.0:
        w = 1.0 / (z * z)
        series = 1.0 - w + 3.0 * w * w - 15.0 * w**3 + 105.0 * w**4
        return -0.5 * z * z - math.log(-z) - 0.5 * math.log(2 * math.pi) + math.log(series)
    if z < 0.0:
        return math.log(0.5 * math.erfc(-z / math.sqrt(2.0)))
    return math.log1p(-0.5 * math.erfc(z / math.sqrt(2.0)))


@_jit
def _nb_ndtri(p):
    """Return Φ⁻¹(p): Acklam's rational approximation, then two Halley steps on erfc."""
    a = (
        -3.969683028665376e01,
        2.209460984245205e02,
        -2.759285104469687e02,
        1.383577518672690e02,
        -3.066479806614716e01,
        2.506628277459239e00,
    )
    b = (
        -5.447609879822406e01,
        1.615858368580409e02,
        -1.556989798598866e02,
        6.680131188771972e01,
        -1.328068155288572e01,
    )
    c = (
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e00,
        -2.549732539343734e00,
        4.374664141464968e00,
        2.938163982698783e00,
    )
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
         3.754408661907416e00)  # fmt: skip
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
    elif p > 1 - 0.02425:
        q = math.sqrt(-2 * math.log1p(-p))
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
    else:
        q = p - 0.5
        r = q * q
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / (
            ((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)  # fmt: skip
    for _ in range(2):
        # Halley on the side of p whose tail erfc resolves (p above ½: the upper tail).
        if p > 0.5:
            e = (1.0 - p) - 0.5 * math.erfc(x / math.sqrt(2.0))
        else:
            e = 0.5 * math.erfc(-x / math.sqrt(2.0)) - p
        u = e * _SQRT_2PI * math.exp(0.5 * x * x)
        x = x - u / (1 + 0.5 * x * u)
    return x


@_jit
def _item_nodes(log_c, c, b, nodes, up, down, r_up, r_down, q, log1m):
    """Fill, per confusion cell i, truth t and node n: log Φ(±η), φ(η)/Φ(±η), Φ⁻¹(C[t, t])."""
    n_conf, k = log_c.shape[0], log_c.shape[1]
    for i in range(n_conf):
        for t in range(k):
            q[i, t] = _nb_ndtri(c[i, t, t])
            log1m[i, t] = math.log1p(-c[i, t, t])
            a = q[i, t] * math.sqrt(1 + b[t] * b[t])
            for n in range(nodes.shape[0]):
                eta = a + b[t] * nodes[n]
                up[i, t, n], down[i, t, n] = _nb_log_ndtr(eta), _nb_log_ndtr(-eta)
                log_phi = -0.5 * eta * eta - 0.5 * math.log(2 * math.pi)
                r_up[i, t, n] = math.exp(log_phi - up[i, t, n])
                r_down[i, t, n] = math.exp(log_phi - down[i, t, n])


@_jit
def _item_terms(verdicts, test, labelled, random, shared, log_th, log_c, c, b, nodes, logw,
                h_th, h_c, h_b):  # fmt: skip
    """Return the data's log-likelihood with the item effect.

    Its gradient in log θ, log C and b is added into h_th, h_c, h_b (as
    :func:`_pattern_terms` without the item effect).
    """
    n_sys, n_str, n_pat = test.shape
    k, n_judges, n_nodes, n_conf = log_th.shape[1], verdicts.shape[1], nodes.shape[0], c.shape[0]
    up, down = np.empty((n_conf, k, n_nodes)), np.empty((n_conf, k, n_nodes))
    r_up, r_down = np.empty((n_conf, k, n_nodes)), np.empty((n_conf, k, n_nodes))
    q, log1m = np.empty((n_conf, k)), np.empty((n_conf, k))
    _item_nodes(log_c, c, b, nodes, up, down, r_up, r_down, q, log1m)
    log_l, d = np.empty(k), np.empty(k)
    acc, w = np.empty(n_nodes), np.empty((k, n_nodes))
    total = 0.0
    for s in range(n_sys):
        for r in range(n_str):
            g = s * n_str + r
            for p in range(n_pat):
                for t in range(k):
                    fixed = 0.0
                    for n in range(n_nodes):
                        acc[n] = logw[n]
                    for j in range(n_judges):
                        v = verdicts[p, j]
                        if v < 0:
                            continue
                        i = j * n_str + r if shared else (j * n_sys + s) * n_str + r
                        if v == t:
                            for n in range(n_nodes):
                                acc[n] += up[i, t, n]
                        else:
                            fixed += log_c[i, t, v] - log1m[i, t]
                            for n in range(n_nodes):
                                acc[n] += down[i, t, n]
                    top = acc.max()
                    total_w = 0.0
                    for n in range(n_nodes):
                        w[t, n] = math.exp(acc[n] - top)
                        total_w += w[t, n]
                    for n in range(n_nodes):
                        w[t, n] /= total_w
                    log_l[t] = fixed + top + math.log(total_w)
                    d[t] = 0.0
                total += _mixture_terms(test[s, r, p], labelled[s, r, :, p], random, log_th[g],
                                        log_l, d, h_th[g])  # fmt: skip
                for t in range(k):
                    if d[t] == 0.0:
                        continue
                    scale = math.sqrt(1 + b[t] * b[t])
                    for j in range(n_judges):
                        v = verdicts[p, j]
                        if v < 0:
                            continue
                        i = j * n_str + r if shared else (j * n_sys + s) * n_str + r
                        s_a, s_b = 0.0, 0.0
                        for n in range(n_nodes):
                            ge = r_up[i, t, n] if v == t else -r_down[i, t, n]
                            s_a += w[t, n] * ge
                            s_b += w[t, n] * ge * nodes[n]
                        ctt = c[i, t, t]
                        if v != t:
                            h_c[i, t, v] += d[t]
                            h_c[i, t, t] += d[t] * ctt / (1.0 - ctt)
                        # a = Φ⁻¹(C_tt) √(1 + b²): ∂a/∂log C_tt = C_tt √(1 + b²) / φ(Φ⁻¹(C_tt)).
                        dens = math.exp(-0.5 * q[i, t] * q[i, t]) / _SQRT_2PI
                        h_c[i, t, t] += d[t] * s_a * scale * ctt / dens
                        h_b[t] += d[t] * (s_a * q[i, t] * b[t] / scale + s_b)
    return total


@_jit
def _mixture_terms(n, m, random, log_th, log_l, d, h_th):
    """Return one pattern's test and labelled terms given log P(v | t); set d = ∂/∂log P."""
    k = log_l.shape[0]
    total = 0.0
    if n > 0:
        top = -math.inf
        for t in range(k):
            top = max(top, log_th[t] + log_l[t])
        acc = 0.0
        for t in range(k):
            acc += math.exp(log_th[t] + log_l[t] - top)
        lse = top + math.log(acc)
        total += n * lse
        for t in range(k):
            d[t] = n * math.exp(log_th[t] + log_l[t] - lse)
            h_th[t] += d[t]
    for t in range(k):
        if m[t] > 0:
            total += m[t] * log_l[t]
            d[t] += m[t]
            if random:
                total += m[t] * log_th[t]
                h_th[t] += m[t]
    return total


@_jit
def _likelihood(verdicts, test, labelled, random, shared, log_th, log_c, c, b, nodes, logw,
                h_th, h_c, h_b):  # fmt: skip
    """Return the data's log-likelihood: independent judges (b empty) or the item effect.

    The gradients go into h_th, h_c (in log C) and h_b.
    """
    if b.shape[0] == 0:
        return _pattern_terms(verdicts, test, labelled, random, shared, log_th, log_c, h_th,
                              h_c)  # fmt: skip
    return _item_terms(verdicts, test, labelled, random, shared, log_th, log_c, c, b, nodes,
                       logw, h_th, h_c, h_b)  # fmt: skip


@_jit
def _item_effect(x, b, tau):
    """Fill b = exp(y) from the tail of x (empty without the item effect); return its prior.

    HalfNormal(τ), with the log transform's Jacobian.
    """
    total = 0.0
    start = x.shape[0] - b.shape[0]
    for t in range(b.shape[0]):
        b[t] = math.exp(x[start + t])
        s = b[t] / tau
        total += math.log(2.0) - _HALF_LOG_2PI - math.log(tau) - 0.5 * s * s + x[start + t]
    return total


@_jit
def _item_effect_grad(x, b, tau, h_b, grad):
    """Add ∂/∂y of the likelihood (h_b = ∂L/∂b) and of the prior to the tail of grad."""
    start = x.shape[0] - b.shape[0]
    for t in range(b.shape[0]):
        grad[start + t] += h_b[t] * b[t] + 1.0 - (b[t] / tau) ** 2


def _compile(counts: CategoricalJuryCounts, config: dict):
    """Return the nutpie model of :func:`log_density` (a Python callback of numba kernels)."""
    from nutpie.compiled_pyfunc import from_pyfunc

    layout = kernel_layout(counts, config)
    ratios = isinstance(layout, RatioJuryLayout)
    expand, start = (_ratio_expand, _ratio_start) if ratios else (_expand, _start)

    def make_logp():
        return lambda x, **_: log_density(layout, x)

    def make_expand(*_seeds):
        return lambda x, **_: expand(layout, x)

    coords = {name: pd.Index(list(values)) for name, values in _coords(counts).items()}
    dims = {"theta": THETA_DIMS, "confusion": _confusion_dims(config), "score": DIMS}
    names = ["theta", "confusion", *(["score"] if layout.scores is not None else [])]
    shapes = {
        "theta": (*layout.test.shape[:2], layout.k),
        "confusion": layout.conf_shape,
        "score": layout.test.shape[:2],
    }
    if layout.item.n_item:
        dims["item_effect"], shapes["item_effect"] = (TRUTH,), (layout.k,)
        names.insert(2, "item_effect")
    if ratios:  # in the order of _ratio_expand's dict, which nutpie requires
        dims |= _ratio_dims(_options(config))
        shapes |= layout.shapes
        names[2:2] = list(layout.shapes)
    return from_pyfunc(
        layout.n_dim,
        make_logp,
        make_expand,
        [np.dtype("float64")] * len(names),
        [shapes[n] for n in names],
        names,
        coords=coords,
        dims={n: dims[n] for n in names},
        make_initial_point_fn=lambda seed: start(layout, seed),
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
    pool_judges: bool = False,
    dependence: str | None = None,
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
    calibration, priors, scores, pool_judges, dependence
        The model, as in :func:`categorical_jury_model_config` (default: one confusion
        matrix per judge and stratum shared by all systems, conditionally independent
        judges). ``scores`` also adds the score to :meth:`CategoricalJuryFit.summary` and
        :meth:`CategoricalJuryFit.compare`. Every variant is sampled through hand-written
        numba kernels of the PyMC model's log density (:func:`log_density`; seconds to
        compile, kept on disk by numba).
    draws, tune, chains : int, default 1000, 1000, 4
        Draws kept per chain, tuning steps per chain, chains.
    random_seed : int, optional
        Seed of the sampler (drawn and stored when None).
    target_accept : float, optional
        NUTS target acceptance; default 0.9 (0.99 with ``calibration="hierarchical"`` or
        ``pool_judges=True``, whose log-ratio scales make a funnel).
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
    config = categorical_jury_model_config(
        counts, calibration, priors, scores, pool_judges, dependence
    )
    default_accept = 0.99 if uses_log_ratios(config) else 0.9
    settings = {
        "draws": check_int("draws", draws, 1),
        "tune": check_int("tune", tune, 0),
        "chains": check_int("chains", chains, 1),
        "random_seed": check_seed(random_seed),
        "target_accept": check_open_unit(
            "target_accept", default_accept if target_accept is None else target_accept,
            "e.g. 0.9",
        ),
    }  # fmt: skip
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


def _posterior_arrays(posterior: xr.Dataset):
    """θ (chain, draw, S, R, K), the confusion (chain, draw, S, R, J, K, V), b or None."""
    theta = posterior["theta"].transpose("chain", "draw", *THETA_DIMS)
    conf = posterior["confusion"].broadcast_like(theta.isel({CATEGORY: 0}, drop=True))
    conf = conf.transpose("chain", "draw", *DIMS, JUDGE, TRUTH, VERDICT)
    b = None
    if "item_effect" in posterior:
        b = posterior["item_effect"].transpose("chain", "draw", TRUTH).values[:, :, None, None]
    return theta.values, conf.values, b


def _chunked_log_pv(enumerated, conf, b, step: float) -> np.ndarray:
    """Return :func:`pattern_log_probabilities` computed over chunks of the draws.

    The item effect's grid of nodes multiplies the temporary arrays by its size, so only a
    few draws are held at once.
    """
    if b is None:
        return pattern_log_probabilities(enumerated, conf)
    n_nodes = quadrature_rule(step)[0].size
    per_draw = math.prod(conf.shape[2:4]) * conf.shape[-1] * len(enumerated) * n_nodes
    chunk = max(1, PPC_CELLS // 4 // per_draw)
    parts = [
        pattern_log_probabilities(enumerated, conf[:, i : i + chunk], b[:, i : i + chunk],
                                  step=step)
        for i in range(0, conf.shape[1], chunk)
    ]  # fmt: skip
    return np.concatenate(parts, axis=1)


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
    posterior: xr.Dataset,
    counts: CategoricalJuryCounts,
    *,
    random_seed: int,
    step: float = QUADRATURE_STEP,
) -> CategoricalJuryPosteriorPredictiveCheck:
    """Run the posterior predictive check (see :meth:`CategoricalJuryFit.ppc`)."""
    rng = np.random.default_rng(np.random.SeedSequence(random_seed, spawn_key=(3,)))
    theta, conf, b = _posterior_arrays(posterior)
    k, verdicts = len(counts.categories), counts.verdicts
    enumerated, enum_mask, observed_mask = _masks(verdicts, k)
    log_pv = _chunked_log_pv(enumerated, conf, b, step)  # (C, D, S, R, K, Q)
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
            f"is too narrow. Refit with dependence='item' (a shared item effect); look at "
            f"check.table() for the pairs that agree too much (a judge copying another: drop "
            f"one of the pair)."
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
                "dependence": str(_options(self.config)["dependence"]),
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
            config = {k: _options(self.config)[k] for k in (*_MODEL_KEYS, *_OPTION_DEFAULTS)}
            self._model = build_categorical_jury_from_config(self.counts, config)
        return self._model

    def __repr__(self) -> str:
        c, post = self.config, self.posterior
        return (
            f"<bayesjudge.CategoricalJuryFit calibration={c['calibration']!r} "
            f"K={len(c['categories'])} judges={post.sizes[JUDGE]} "
            f"dependence={_options(c)['dependence']!r} pool_judges={_options(c)['pool_judges']} "
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

    def summary(self, ci_prob: float = 0.95, var_names=None) -> xr.Dataset:
        """Posterior mean, sd, median, equal-tailed interval, r_hat and bulk ESS.

        Parameters
        ----------
        ci_prob : float, default 0.95
            Probability of the equal-tailed intervals.
        var_names : str or sequence of str, optional
            Posterior variables to summarise (as ``Fit.summary(var_names=...)``); default the
            reported ones listed below, those the model has.

        Returns
        -------
        xarray.Dataset
            ``theta`` (posterior mean; dims system, stratum, category), ``theta_sd``,
            ``theta_median``, ``theta_ci`` (+ ``ci_bound`` = lower, upper), ``theta_r_hat``,
            ``theta_ess_bulk``; the same for ``confusion`` (judge, [system,] stratum, truth,
            verdict), with ``dependence="item"`` ``item_effect`` (truth) and, with scores,
            ``score`` (system, stratum). Attrs ``ci_kind="eti"``, ``ci_prob``,
            ``calibration``, ``dependence``, ``pool_judges`` (0/1), ``design``, ``scores``
            (JSON).
        """
        ci_prob = check_open_unit("ci_prob", ci_prob, "e.g. 0.95 for a 95 % interval")
        names = summary_names(var_names, list(self.posterior.data_vars), self._reported())
        out = {}
        sample = ("chain", "draw")
        for name in names:
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
            "dependence": str(_options(self.config)["dependence"]),
            "pool_judges": int(_options(self.config)["pool_judges"]),
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
        step = _options(self.config)["quadrature_step"] or QUADRATURE_STEP
        return _agreement_check(posterior, counts, random_seed=seed, step=step)

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
